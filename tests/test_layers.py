"""The package layout holds (docs/architecture.md): the import contracts of pyproject.toml
(layers, no cycles between packages, the product never importing the lab), no module over
`MAX_LINES` lines, and no two modules with the same file name."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("newscrawl", "pipelines", "models")
MAX_LINES = 600


def _modules() -> list[Path]:
    return sorted(p for tree in SOURCES for p in (ROOT / tree).rglob("*.py"))


def _lint_imports() -> str:
    beside = Path(sys.executable).with_name("lint-imports")
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "lint-imports is missing: pip install -e '.[test]' (import-linter)"
    return found


def test_import_contracts_are_kept() -> None:
    done = subprocess.run(
        [_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_module_is_over_the_line_limit() -> None:
    long = {}
    for path in _modules():
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            long[path.relative_to(ROOT).as_posix()] = lines
    assert not long, f"modules over {MAX_LINES} lines (split them): {long}"


def test_module_file_names_are_unique() -> None:
    homes: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        if path.name != "__init__.py":
            homes[path.name].append(path.relative_to(ROOT).as_posix())
    shared = {name: paths for name, paths in homes.items() if len(paths) > 1}
    assert not shared, f"module names used more than once: {shared}"


def _imported(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_pipelines_and_models_import_no_lab_module() -> None:
    """The two folders installed into newscrawl from outside it, which the import graph of
    `lint-imports` does not hold."""
    for tree in ("pipelines", "models"):
        for path in sorted((ROOT / tree).rglob("*.py")):
            lab = {m for m in _imported(path) if m.split(".")[:2] == ["newscrawl", "lab"]}
            assert not lab, f"{path.relative_to(ROOT)} imports the lab: {sorted(lab)}"
