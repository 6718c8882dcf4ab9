"""README.md and docs/: the front page stays short and true to CI, every docs page is reached
from it, nothing links outside the repository, and the output page names every column."""

from __future__ import annotations

import re
from pathlib import Path

from newscrawl.storage.schemas import ARTICLES_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
SETUP = "pip install -e . && newscrawl demo --out out/demo"
TESTS = "bash .ci/setup && python -m pytest -q"


def test_readme_is_short_and_keeps_the_two_setup_commands() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.encode("utf-8")) <= 15 * 1024
    assert f"\n{SETUP}\n" in text and f"\n{TESTS}\n" in text
    assert TESTS in (ROOT / ".ci" / "run").read_text()  # CI runs the README's test command


def test_every_docs_page_is_linked_from_the_readme() -> None:
    links = set(re.findall(r"\]\((docs/[^)#]+)\)", README.read_text(encoding="utf-8")))
    assert {f"docs/{page.name}" for page in DOCS} <= links
    assert all((ROOT / link).is_file() for link in links)


def test_docs_links_stay_inside_the_repository() -> None:
    for page in [README, *DOCS]:
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text, page.name
        assert not re.search(r"\bissues? \d", text, flags=re.IGNORECASE), page.name
        assert not re.search(r"\bseed 00\d", text), page.name
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
            assert not target.startswith(("http:", "https:", "/")), (page.name, target)
            assert (page.parent / target).exists(), (page.name, target)


def test_output_page_names_every_articles_column() -> None:
    text = (ROOT / "docs" / "output.md").read_text(encoding="utf-8")
    missing = [field.name for field in ARTICLES_SCHEMA if f"`{field.name}`" not in text]
    assert missing == []
