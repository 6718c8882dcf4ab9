"""The type checker on the whole package, as installed: newscrawl with pipelines/ and models/ as
newscrawl.pipelines and newscrawl.models (setuptools' package-dir mapping, which mypy cannot
follow through an editable install, so the test lays the installed tree out with symlinks).
Settings are in pyproject.toml's [tool.mypy]."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# where each installed package's source sits in the repository
MAPPED = {"pipelines": ROOT / "pipelines", "models": ROOT / "models"}


def _installed_tree(into: Path) -> Path:
    """`into/newscrawl`: the package as installed, every entry a symlink into the repo."""
    package = into / "newscrawl"
    package.mkdir()
    for entry in (ROOT / "newscrawl").iterdir():
        if entry.name != "__pycache__" and entry.name not in MAPPED:
            (package / entry.name).symlink_to(entry)
    for name, source in MAPPED.items():
        (package / name).symlink_to(source, target_is_directory=True)
    return package


def test_mypy_is_clean(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    _installed_tree(tmp_path)
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml")]
    command += ["--cache-dir", str(ROOT / ".mypy_cache"), "-p", "newscrawl"]
    env = {**os.environ, "MYPYPATH": ""}
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, check=False, env=env
    )
    report = done.stdout + done.stderr
    for name in MAPPED:  # name the repository's files, not the symlinks
        report = report.replace(f"newscrawl/{name}/", f"{name}/")
    assert done.returncode == 0, report
