"""The site-level template methods side by side: one name, one call, one form of answer.

Every method takes the pages of one site, parsed into the one DOM model (`Dom`), and returns,
per page, a float array indexed by the page's node ids: the node's *template score*. A node is
template when its score is at least the method's threshold (`threshold_of`), and every method
keeps the rule SiteLevel's labels follow - a node is never more template than the text below
it - so cutting the template nodes out of a page (`newscrawl.template.extractor.pruned_dom`)
never takes content along with a template parent:

- ``sitelevel`` (seed 004, `newscrawl.template.sitelevel`): the SiteLevel labels as 0 / 1;
- ``sst`` (Yi, Liu & Li 2003, `newscrawl.template.sst`): 1 - the largest composite importance
  in the node's subtree of the site style tree;
- ``pagelets`` (Bar-Yossef & Rajagopalan 2002, `newscrawl.template.pagelets`): 1 when all the
  node's text lies in pagelets repeated on other pages of the site, else 0;
- ``entropy`` (Lin & Ho 2002, `newscrawl.template.entropy`): the lowest entropy of the blocks
  holding the node's text.

`site_scores(method, doms)` gives the scores, `site_masks(method, doms)` the template nodes
(never <html>, <head> or anything before <body>).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from hashlib import blake2b

import numpy as np

from newscrawl.dom import Dom

__all__ = [
    "DEFAULT_SITE_METHOD",
    "SITE_METHODS",
    "check_site_method",
    "page_key",
    "pieces_min",
    "range_min",
    "site_masks",
    "site_scores",
    "sitelevel_scores",
    "threshold_of",
]

SITE_METHODS: tuple[str, ...] = ("sitelevel", "sst", "pagelets", "entropy")
DEFAULT_SITE_METHOD = "sitelevel"

SiteScorer = Callable[[Sequence[Dom]], list[np.ndarray]]


def check_site_method(name: str) -> str:
    """The method's canonical name; a ValueError naming the choices for an unknown one."""
    key = (name or "").strip().lower()
    if key not in SITE_METHODS:
        raise ValueError(f"unknown site method {name!r}: choose one of {', '.join(SITE_METHODS)}")
    return key


def sitelevel_scores(doms: Sequence[Dom]) -> list[np.ndarray]:
    """SiteLevel's labels (seed 004: hash repeated on p = 10% of the pages, or 85% of the text
    template) as 0 / 1 scores. Boxes are not needed for labels, so none are computed."""
    from newscrawl.template.records import PageNodes
    from newscrawl.template.sitelevel import label_site

    pages = [
        PageNodes.from_dom(dom, dom.url or "", boxes=np.zeros((len(dom), 4), np.float32))
        for dom in doms
    ]
    return [labels.astype(np.float64) for labels in label_site(pages)]


def _scorer(name: str) -> tuple[SiteScorer, float]:
    """The scoring function of a method and its threshold (imports kept lazy: the crawl loads
    only the method it runs)."""
    if name == "sst":
        from newscrawl.template import sst

        return sst.site_scores, sst.SSTConfig().threshold
    if name == "pagelets":
        from newscrawl.template import pagelets

        return pagelets.site_scores, pagelets.PageletConfig().threshold
    if name == "entropy":
        from newscrawl.template import entropy

        return entropy.site_scores, entropy.EntropyConfig().threshold
    return sitelevel_scores, 0.5


def threshold_of(method: str) -> float:
    """Score at or above which a node is template, for the method's default configuration."""
    return _scorer(check_site_method(method))[1]


def site_scores(method: str, doms: Sequence[Dom]) -> list[np.ndarray]:
    """Template score per node of every page of one site, by `method` (defaults)."""
    scorer, _ = _scorer(check_site_method(method))
    return scorer(doms) if doms else []


def site_masks(method: str, doms: Sequence[Dom]) -> list[np.ndarray]:
    """Template nodes (bool per node) of every page of one site; nothing before <body> is."""
    scorer, threshold = _scorer(check_site_method(method))
    masks = []
    for dom, scores in zip(doms, scorer(doms) if doms else [], strict=True):
        mask = scores >= threshold
        mask[: dom.body] = False
        masks.append(mask)
    return masks


# -- helpers the methods share --------------------------------------------------------------


def page_key(dom: Dom) -> bytes:
    """A digest of the page's tags and visible text: equal for the same page fetched twice.

    Every method counts a page once however often the site serves it, else a duplicate would
    make its own article look repeated, that is template (SiteLevel does the same with its
    root hash)."""
    digest = blake2b(digest_size=16)
    digest.update("\x00".join(dom.tag).encode("utf-8", "surrogatepass"))
    digest.update("\x01".join(dom.piece_text).encode("utf-8", "surrogatepass"))
    return digest.digest()


def pieces_min(dom: Dom, piece_score: np.ndarray, unit_of_node: np.ndarray) -> np.ndarray:
    """Per node: the lowest score of the text pieces in its subtree; a node without text takes
    `unit_of_node` (the score of the unit - block, pagelet - it sits in).

    So a node is template (high score) only when all of its text is: the rule that lets the
    mask cut a node's whole subtree.
    """
    out = np.asarray(unit_of_node, dtype=np.float64).copy()
    start = np.asarray(dom.piece_start, dtype=np.int64)
    stop = np.asarray(dom.piece_end, dtype=np.int64)
    has = stop > start
    if has.any():
        out[has] = range_min(np.asarray(piece_score, np.float64), start[has], stop[has])
    return out


def range_min(values: np.ndarray, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """min(values[start[i]:stop[i]]) for every i (ranges must be non-empty).

    A subtree's pieces (and, in preorder, its nodes) are one contiguous range, but the ranges
    of a page nest, so `np.minimum.reduceat` does not apply: a sparse table does, O(n log n) to
    build and O(1) a range.
    """
    table = [values]
    span = 1
    while span * 2 <= len(values):
        last = table[-1]
        table.append(np.minimum(last[: len(last) - span], last[span:]))
        span *= 2
    level = np.floor(np.log2(stop - start)).astype(np.int64)
    out = np.empty(len(start), dtype=np.float64)
    for k in np.unique(level):
        rows = level == k
        width = 1 << int(k)
        out[rows] = np.minimum(table[k][start[rows]], table[k][stop[rows] - width])
    return out
