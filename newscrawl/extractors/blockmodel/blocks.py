"""Text blocks: the units the learned extractor keeps or drops.

A block is a run of consecutive text pieces of the `Dom` that share their block element (the
nearest block-level ancestor, or the ``<br>`` before them): a paragraph, a list item, a heading,
a table cell, a line between two ``<br>``. Blocks cover every visible character of the page once,
in document order, so the page's text is the concatenation of its blocks and an extraction is
a subset of them. This is the granularity of Boilerpipe and Web2Text: fine enough to cut a byline
out of an article body, coarse enough that a block has text statistics worth learning from.
"""

from __future__ import annotations

from dataclasses import dataclass

from newscrawl.html.dom import Dom

__all__ = ["Blocks", "split_blocks"]


@dataclass(frozen=True, slots=True)
class Blocks:
    """The blocks of one page: block k holds pieces ``[start[k], stop[k])`` of element `node[k]`."""

    start: list[int]
    stop: list[int]
    node: list[int]

    def __len__(self) -> int:
        return len(self.node)

    def text(self, dom: Dom, k: int) -> str:
        return dom.pieces_text(range(self.start[k], self.stop[k]))

    def text_of(self, dom: Dom, kept: list[int]) -> str:
        """Text of the kept blocks (ids in document order), one line per rendered line."""
        return dom.pieces_text(self.pieces_of(kept))

    def pieces_of(self, kept: list[int]) -> list[int]:
        """The text pieces of the kept blocks (ids in document order)."""
        return [p for k in kept for p in range(self.start[k], self.stop[k])]


def split_blocks(dom: Dom) -> Blocks:
    """Group the page's text pieces into blocks (see the module docstring)."""
    start: list[int] = []
    stop: list[int] = []
    node: list[int] = []
    owner = dom.piece_block
    for k, block in enumerate(owner):
        if not node or block != node[-1] or k != stop[-1]:
            start.append(k)
            stop.append(k + 1)
            node.append(block)
        else:
            stop[-1] = k + 1
    return Blocks(start, stop, node)
