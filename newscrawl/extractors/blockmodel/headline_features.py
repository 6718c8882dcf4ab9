"""Columns of the learned extractor's block features that read the page around a block: its
title (`title_columns`), its headline (`headline_columns`: the <h1> the page's title names, or
its first <h1>) and its own summary (`summary_columns`: og:description or the meta
description)."""

from __future__ import annotations

import numpy as np
from rapidfuzz import fuzz

from newscrawl.extractors.blockmodel.blocks import Blocks
from newscrawl.extractors.blockmodel.textstats import lower_words
from newscrawl.extractors.title import h1_texts
from newscrawl.html.dom import Dom

__all__ = [
    "HEADLINE_COLUMNS",
    "SUMMARY_COLUMNS",
    "TITLE_COLUMNS",
    "headline_columns",
    "summary_columns",
    "title_columns",
]

TITLE_COLUMNS = ["title_ratio", "in_title"]

# Where the block sits against the page's headline: the <h1> the page's title names (or, when
# none does, its first <h1>). An article's text follows its headline; breadcrumbs, menus and
# teasers above it seldom belong to it.
HEADLINE_COLUMNS = ["headline_found", "headline_side", "headline_offset", "headline_position"]

# How much of the block the page's own summary (og:description or the meta description)
# holds: the article's lead, not a teaser of another article.
SUMMARY_COLUMNS = ["description_share"]


def title_columns(dom: Dom, texts: list[str]) -> np.ndarray:
    """Similarity of the block's start to the page <title>, and whether the title contains it."""
    title = dom.title.casefold()
    out = np.zeros((len(texts), 2))
    if not title:
        return out
    shorts = [text[:300].casefold() for text in texts]
    out[:, 0] = [fuzz.ratio(short, title) / 100.0 if short else 0.0 for short in shorts]
    out[:, 1] = [bool(short) and short in title for short in shorts]
    return out


def headline_columns(dom: Dom, blocks: Blocks) -> np.ndarray:
    """`HEADLINE_COLUMNS`: whether a headline was found (1: the longest <h1> the title names, 0.5:
    the first <h1>), the block before it (-1), at it (0) or after it (1), its distance from it
    in blocks and where the headline sits, both as shares of the page's blocks; zeros without
    one."""
    n = len(blocks)
    out = np.zeros((n, len(HEADLINE_COLUMNS)))
    found = _headline(dom)
    if found is None or not n:
        return out
    node, kind = found
    at = int(np.searchsorted(blocks.start, dom.piece_start[node], side="right")) - 1
    index = np.arange(n)
    out[:, 0] = kind
    out[:, 1] = np.sign(index - at)
    out[:, 2] = (index - at) / n
    out[:, 3] = at / n
    return out


def _headline(dom: Dom) -> tuple[int, float] | None:
    """The headline element and how it was found (see `headline_columns`)."""
    meta = dom.meta
    title = " ".join((meta.get("og:title") or meta.get("twitter:title") or dom.title).split())
    title = title.casefold()
    headings = [(node, text.casefold()) for node, text in h1_texts(dom)]
    # a site's name in an <h1> is in the title too: the longest <h1> named is the headline
    named = [(len(text), -node) for node, text in headings if title and _names(title, text)]
    if named:
        return -max(named)[1], 1.0
    return (headings[0][0], 0.5) if headings else None


def _names(title: str, heading: str) -> bool:
    """Whether a (case-folded) title names a heading: one holds the other."""
    return heading in title or title in heading


def summary_columns(dom: Dom, tokens: list[list[str]]) -> np.ndarray:
    """`SUMMARY_COLUMNS`: the share of the block's word trigrams found in the page's summary (0
    without a summary of at least 4 words, and for blocks under 3 words)."""
    out = np.zeros((len(tokens), 1))
    meta = dom.meta
    summary = (
        meta.get("og:description") or meta.get("description") or meta.get("twitter:description")
    ) or ""
    words = lower_words(summary)
    if len(words) < 4:
        return out
    trigrams = set(zip(words, words[1:], words[2:], strict=False))
    known = frozenset(words)
    for k, block in enumerate(tokens):
        # a block without a word of the summary has none of its trigrams (its share stays 0)
        if len(block) >= 3 and not known.isdisjoint(block):
            grams = zip(block, block[1:], block[2:], strict=False)
            out[k, 0] = sum(map(trigrams.__contains__, grams)) / (len(block) - 2)
    return out
