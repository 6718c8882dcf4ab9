"""Training labels: which blocks of a page the gold main text holds.

A block is content when most of its 4-token shingles (the evaluation metric's unit) occur in the
gold text. Tokens are the metric's: Unicode ``\\w+`` runs, case kept. The share is returned, not
just the decision, so training can weigh blocks by how sure the alignment is.

A block of at most four tokens has no shingle of its own, and words like "Home", "Reply" or a
site's name occur somewhere in most golds. Such a block is content only when its tokens occur in
the gold *and* one shingle that straddles it and a neighbouring block (the metric reads the page
as one token stream, so those shingles are what the block adds) occurs there too: "Emoji!" right
after "the first beta:" in a release note is content, "Categories" in a menu is not.
"""

from __future__ import annotations

from newscrawl.gold.metric import SHINGLE_SIZE, tokens

__all__ = ["GoldIndex", "block_gold_share"]


class GoldIndex:
    """The gold text's n-grams of 1 to `SHINGLE_SIZE` tokens, for fast membership tests."""

    def __init__(self, gold: str) -> None:
        words = tokens(gold)
        self.grams: set[tuple[str, ...]] = set()
        for size in range(1, SHINGLE_SIZE + 1):
            self.grams.update(tuple(words[i : i + size]) for i in range(len(words) - size + 1))
        self.empty = not words

    def share(self, words: list[str]) -> float:
        """Share of the shingles of `words` found in the gold (0.0 for no words); a text of
        at most `SHINGLE_SIZE` tokens is one shingle."""
        if not words:
            return 0.0
        if len(words) <= SHINGLE_SIZE:
            return float(tuple(words) in self.grams)
        total = len(words) - SHINGLE_SIZE + 1
        found = sum(tuple(words[i : i + SHINGLE_SIZE]) in self.grams for i in range(total))
        return found / total

    def joins(self, stream: list[str], start: int, stop: int) -> bool:
        """Whether a shingle of `stream` holding tokens of ``[start, stop)`` and of a
        neighbour occurs in the gold (True when the stream is too short to have one)."""
        if len(stream) <= SHINGLE_SIZE:
            return True
        first = max(0, start - SHINGLE_SIZE + 1)
        last = min(stop - 1, len(stream) - SHINGLE_SIZE)
        return any(
            tuple(stream[i : i + SHINGLE_SIZE]) in self.grams
            for i in range(first, last + 1)
            if i < start or i + SHINGLE_SIZE > stop
        )


def block_gold_share(gold: str, texts: list[str]) -> list[float]:
    """For each block text (in page order), the share of its shingles found in `gold`."""
    index = GoldIndex(gold)
    words = [tokens(t) for t in texts]
    stream: list[str] = []
    starts = []
    for block in words:
        starts.append(len(stream))
        stream.extend(block)
    shares = []
    for block, start in zip(words, starts, strict=True):
        share = index.share(block)
        if share and len(block) <= SHINGLE_SIZE:
            share = float(index.joins(stream, start, start + len(block)))
        shares.append(share)
    return shares
