"""docs/settings.md is `newscrawl settings --markdown`: the reference stays what the code says."""

from __future__ import annotations

from pathlib import Path

import pytest

from newscrawl import settings as defaults
from newscrawl.cli import main
from newscrawl.commands.settings_command import read_settings

ROOT = Path(__file__).resolve().parents[1]


def test_docs_settings_page_is_the_generated_reference(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings", "--markdown"]) == 0
    generated = capsys.readouterr().out
    page = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert page == generated, "run: newscrawl settings --markdown > docs/settings.md"


def test_every_setting_of_the_module_is_listed_with_its_default() -> None:
    found = {setting.name: setting for setting in read_settings()}
    names = {name for name in dir(defaults) if name.isupper()}
    assert set(found) == names
    assert eval(found["MAX_PAGES_PER_SITE"].default) == defaults.MAX_PAGES_PER_SITE
    assert found["NEWSCRAWL_SITELEVEL"].section == "newscrawl"
    assert "site pass" in found["NEWSCRAWL_SITELEVEL"].doc
    undocumented = [s.name for s in found.values() if s.name.startswith("NEWSCRAWL_") and not s.doc]
    assert undocumented == []


def test_plain_listing_names_each_setting(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["settings"]) == 0
    out = capsys.readouterr().out
    assert "NEWSCRAWL_ALLOW_PRIVATE = False\n" in out
    assert "DOWNLOADER_MIDDLEWARES = ...\n" in out
