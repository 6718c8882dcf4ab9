"""newscrawl is the only import name the project installs; pipelines/ and models/ map into it."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _declared() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_subpackage_is_declared() -> None:
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "newscrawl").rglob("__init__.py")
    }
    found |= {"newscrawl.pipelines", "newscrawl.models"}
    assert set(_declared()["packages"]) == found


def test_top_level_folders_map_into_newscrawl() -> None:
    assert _declared()["package-dir"] == {
        "newscrawl.pipelines": "pipelines",
        "newscrawl.models": "models",
    }
    import newscrawl.models
    import newscrawl.pipelines.parquet

    assert Path(newscrawl.models.__file__).parent == ROOT / "models"
    assert Path(newscrawl.pipelines.parquet.__file__).parent == ROOT / "pipelines"


def test_settings_name_pipelines_under_newscrawl() -> None:
    from newscrawl import settings

    assert all(path.startswith("newscrawl.pipelines.") for path in settings.ITEM_PIPELINES)
