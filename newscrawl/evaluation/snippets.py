"""Snippet checks: phrases a dataset says must appear in the main text, and phrases that must not.

Some datasets (WCXB) list, per page, a few `with_snippets` (sentences of the main text) and
`without_snippets` (menu entries, buttons, footer lines) in meta.jsonl. They test what the
shingle metric averages away: whether a short but telling piece of the page was kept or
dropped. A snippet counts as present when its tokens (the `\\w+` runs of the shingle metric,
case kept) occur in the output's tokens as one unbroken run: punctuation, spacing and line
breaks, which extractors render differently, do not decide it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from newscrawl.gold.metric import tokens

__all__ = ["SnippetCounts", "has_snippets", "snippet_counts", "total_counts"]

WITH = "with_snippets"
WITHOUT = "without_snippets"


@dataclass(frozen=True, slots=True)
class SnippetCounts:
    """How many must-have snippets a text kept, and how many must-not snippets it left out."""

    kept: int = 0
    wanted: int = 0  # must-have snippets of the page
    left_out: int = 0
    unwanted: int = 0  # must-not snippets of the page

    def __add__(self, other: SnippetCounts) -> SnippetCounts:
        return SnippetCounts(
            self.kept + other.kept,
            self.wanted + other.wanted,
            self.left_out + other.left_out,
            self.unwanted + other.unwanted,
        )

    @property
    def kept_share(self) -> float | None:
        """Share of must-have snippets found (None: there were none)."""
        return self.kept / self.wanted if self.wanted else None

    @property
    def left_out_share(self) -> float | None:
        """Share of must-not snippets absent (None: there were none)."""
        return self.left_out / self.unwanted if self.unwanted else None


def _normal(text: str) -> str:
    """The text's tokens, space-separated and space-framed (so a match is whole tokens)."""
    return f" {' '.join(tokens(text))} "


def _phrases(value: Any) -> list[str]:
    """The non-blank strings of a meta field: a list of strings, or one string as one phrase
    (non-strings in the list, and any other value, are none)."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return []
    return [p for p in (_normal(v) for v in value if isinstance(v, str)) if p.strip()]


def snippet_counts(text: str, meta: Mapping[str, Any]) -> SnippetCounts:
    """The snippet checks of one page's output `text` against its meta line."""
    wanted, unwanted = _phrases(meta.get(WITH)), _phrases(meta.get(WITHOUT))
    if not wanted and not unwanted:
        return SnippetCounts()
    output = _normal(text)
    kept = sum(phrase in output for phrase in wanted)
    left_out = sum(phrase not in output for phrase in unwanted)
    return SnippetCounts(kept, len(wanted), left_out, len(unwanted))


def total_counts(counts: Iterable[SnippetCounts]) -> SnippetCounts:
    """The counts of many pages added up (each snippet weighs the same)."""
    total = SnippetCounts()
    for one in counts:
        total = total + one
    return total


def has_snippets(counts: Sequence[SnippetCounts]) -> bool:
    """Whether any of the pages had snippets to check."""
    return any(c.wanted or c.unwanted for c in counts)
