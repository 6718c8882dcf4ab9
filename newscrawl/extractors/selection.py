"""The text pieces an extraction chose: those of its chosen text blocks, else of its chosen
subtrees, whichever joins to exactly its text (what Markdown and the site pass's slots read)."""

from __future__ import annotations

import numpy as np

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.html.dom import Dom

__all__ = ["chosen_pieces"]


def _block_pieces(dom: Dom, extraction: Extraction) -> list[tuple[int, int]]:
    """(piece, chosen node) for the pieces of the text blocks
    (`newscrawl.extractors.blockmodel.blocks`) of chosen nodes that the extraction's text holds,
    matched in document order: what a block extractor such as the learned one chose (several
    blocks may share a node, e.g. the runs of text around a nested block, and not all of them
    need be chosen)."""
    from newscrawl.extractors.blockmodel.blocks import split_blocks

    blocks, chosen, text = split_blocks(dom), set(extraction.node_ids), extraction.text
    first = dom.piece_start[dom.body]
    found: list[tuple[int, int]] = []
    cursor = 0
    for k, node in enumerate(blocks.node):
        if node not in chosen or blocks.start[k] < first:
            continue
        part = blocks.text(dom, k)
        at = cursor + 1 if cursor and text[cursor : cursor + 1] in ("\n", " ") else cursor
        for start in (at, cursor):
            if part and text.startswith(part, start):
                found.extend((p, node) for p in range(blocks.start[k], blocks.stop[k]))
                cursor = start + len(part)
                break
    return found


def _subtree_pieces(dom: Dom, extraction: Extraction) -> list[tuple[int, int]]:
    """(piece, chosen node) for the body's pieces inside a chosen node's subtree (the innermost
    chosen node when they nest)."""
    cover = np.full(len(dom), -1, dtype=np.int64)
    for node in sorted(
        set(extraction.node_ids)
    ):  # preorder: an inner node comes later and overrides
        cover[node : dom.end[node]] = node
    body = dom.body
    pieces = range(dom.piece_start[body], dom.piece_end[body])
    return [(k, int(cover[dom.piece_owner[k]])) for k in pieces if cover[dom.piece_owner[k]] >= 0]


def chosen_pieces(dom: Dom, extraction: Extraction) -> tuple[list[tuple[int, int]], bool]:
    """The text pieces an extraction chose, as (piece, chosen node) in document order, and
    whether they join to exactly its text: those of the chosen blocks, else those of the
    chosen subtrees, whichever joins to the text; else the chosen subtrees' (not exact)."""
    pairs: list[tuple[int, int]] = []
    for rule in (_block_pieces, _subtree_pieces):
        pairs = rule(dom, extraction)
        if dom.pieces_text([k for k, _ in pairs]) == extraction.text:
            return pairs, True
    return pairs, False
