"""Training labels: which blocks of a page the gold main text holds.

A block is content when most of its 4-token shingles (the evaluation metric's unit) occur in the
gold text; a block of fewer than four tokens is content when its whole token sequence occurs in
the gold. Tokens are the metric's: Unicode ``\\w+`` runs, case kept. The share is returned, not
just the decision, so training can weigh blocks by how sure the alignment is.
"""

from __future__ import annotations

from newscrawl.evaluation.metric import SHINGLE_SIZE, tokens

__all__ = ["GoldIndex", "block_gold_share"]


class GoldIndex:
    """The gold text's n-grams of 1 to `SHINGLE_SIZE` tokens, for fast membership tests."""

    def __init__(self, gold: str) -> None:
        words = tokens(gold)
        self.grams: set[tuple[str, ...]] = set()
        for size in range(1, SHINGLE_SIZE + 1):
            self.grams.update(tuple(words[i : i + size]) for i in range(len(words) - size + 1))
        self.empty = not words

    def share(self, text: str) -> float:
        """Share of `text`'s shingles found in the gold (0.0 for a text without tokens)."""
        words = tokens(text)
        if not words:
            return 0.0
        if len(words) <= SHINGLE_SIZE:
            return float(tuple(words) in self.grams)
        total = len(words) - SHINGLE_SIZE + 1
        found = sum(tuple(words[i : i + SHINGLE_SIZE]) in self.grams for i in range(total))
        return found / total


def block_gold_share(gold: str, texts: list[str]) -> list[float]:
    """For each block text, the share of its shingles found in `gold`."""
    index = GoldIndex(gold)
    return [index.share(t) for t in texts]
