"""Product code's prose says what the code promises: no lab notes in comments or docstrings.

Measured figures, the history of experiments and the papers' working names ("seed 004") live in
docs/experiments.md; issue numbers live in the tracker. This test reads every comment and
docstring of the product packages (newscrawl/, pipelines/, models/) and fails on the notes it
can recognise reliably: a "seed 00x" reference, an issue number, or a timing.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("newscrawl", "pipelines", "models")

LAB_NOTES = {
    "a seed reference": re.compile(r"\bseed[\s-]*00\d", re.IGNORECASE),
    "an issue number": re.compile(
        r"\bissues? ?#?\d+|\bPR ?#\d+|(?<![\w&])#\d{1,4}\b", re.IGNORECASE
    ),
    "a timing": re.compile(
        r"\d(?:[\d.,]*\d)?\s?(?:ms|µs)\b"  # 12 ms
        r"|\d(?:[\d.,]*\d)?\s?s (?:a|per|each|of CPU)\b"  # 0.3 s a page, 36-55 s per site
        r"|\d(?:[\d.,]*\d)?\s?pages/s\b"  # 133.9 pages/s
        r"|\d(?:\.\d+)?x (?:faster|slower)|times (?:faster|slower)",
        re.IGNORECASE,
    ),
}


def product_files() -> list[Path]:
    """Every Python source file of the product packages."""
    return sorted(path for package in PRODUCT for path in (ROOT / package).rglob("*.py"))


def docstrings(source: str) -> list[tuple[int, str]]:
    """(line, text) of every module, class and function docstring in `source`."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = []
    for node in ast.walk(ast.parse(source)):
        text = ast.get_docstring(node, clean=False) if isinstance(node, kinds) else None
        if text is not None:
            found.append((node.body[0].lineno, text))
    return found


def comments(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment in `source`."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]


def lab_notes(source: str) -> list[str]:
    """Every lab note in the comments and docstrings of `source`, as "line: kind: text"."""
    notes = []
    for line, text in docstrings(source) + comments(source):
        for kind, pattern in LAB_NOTES.items():
            for match in pattern.finditer(text):
                notes.append(f"{line}: {kind}: {match.group(0)!r}")
    return notes


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ('"""SiteLevel (seed 004): labels."""', "a seed reference"),
        ("# the seed-004 date pattern", "a seed reference"),
        ("# runs after the first, issue 13", "an issue number"),
        ("# see issue #41", "an issue number"),
        ('"""Reads the model once (12 ms)."""', "a timing"),
        ("# pandas costs some 0.3 s a process", "a timing"),
        ("# 36-55 s per site", "a timing"),
        ('"""133.9 against 118.5 pages/s."""', "a timing"),
        ("# copying is 5x faster than comparing", "a timing"),
    ],
)
def test_each_kind_of_lab_note_is_found(text: str, kind: str) -> None:
    notes = lab_notes(f"x = 1\n{text}\n" if text.startswith("#") else f"{text}\n")
    assert notes and all(kind in note for note in notes), notes


@pytest.mark.parametrize(
    "text",
    [
        '"""A timeout in milliseconds (`timeout_ms`); sleeps `slow_seconds` (5 s)."""',
        "# the paper's algorithm is O(n^2 log n); a 10 MB download limit",
        '"""Color #fff and an entity &#39; are not issues."""',
        "# seeded by the site; the seed's rule: the longest candidate",
    ],
)
def test_plain_prose_is_not_a_lab_note(text: str) -> None:
    assert lab_notes(f"x = 1\n{text}\n" if text.startswith("#") else f"{text}\n") == []


def test_product_code_holds_no_lab_notes() -> None:
    """Figures and history go to docs/experiments.md, not into the code."""
    found = []
    for path in product_files():
        for note in lab_notes(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(ROOT)}:{note}")
    assert found == [], "\n".join(found)
