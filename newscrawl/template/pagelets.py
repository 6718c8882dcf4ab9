"""Pagelets and local template detection (Bar-Yossef & Rajagopalan, WWW 2002).

As a PUC-Rio thesis surveys it: split a page where a node holds at least k links; local
template detection groups pagelets by text shingle (the global variant adds the link
structure between pages, which a crawl of one site does not need). As implemented:

- a *pagelet* is an element none of whose children holds at least k hyperlinks and none of
  whose ancestors is a pagelet: the page is cut top-down, and the walk stops at the first
  element whose children are all link-poor. So a menu (a list of one-link items) is one
  pagelet, and so is an article body with its few inline links, beside the link-rich blocks
  around it;
- each pagelet's text gets a *shingle*, a fingerprint of its content that near-duplicates
  share; pagelets are grouped by shingle, and a group whose pagelets lie on at least two
  pages of the site is a template (the paper's local algorithm: a pagelet seen more than once
  in the collection is template);
- a node's template score is 1 when all of its text lies in template pagelets, else 0.

Readings taken where the survey gives no value:
- k = 3, the paper's choice; a hyperlink is an ``<a>`` with an href;
- the shingle is Broder's: the lower-cased ``\\w+`` words of the pagelet in windows of 4, each
  window hashed (blake2b, 64 bits, stable across runs), and the 8 smallest hashes kept as the
  fingerprint (a pagelet of fewer than 4 words: its words are the one window). Equal
  fingerprints mean the same pagelet, so a teaser box with one changed headline out of many
  may still match;
- text outside every pagelet (owned directly by a link-rich container) is never template;
- a page served twice (same tags and text) counts once, else everything on it would repeat.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import blake2b

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.template import sitemethods
from newscrawl.template.sitemethods import PageShape, SiteMethod, pieces_min

__all__ = ["NAME", "PageletConfig", "Pagelets", "fingerprint", "pagelets", "site_scores"]

NAME = "pagelets"
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class PageletConfig:
    """`k`: links a child may hold before its parent is split (the paper's 3). `window` and
    `sketch`: shingle width in words and hashes kept in the fingerprint. `min_pages`: pages a
    pagelet must repeat on to be template (the local algorithm's 2). `threshold`: score at
    which a node is template (scores are 0 or 1)."""

    k: int = 3
    window: int = 4
    sketch: int = 8
    min_pages: int = 2
    threshold: float = 0.5


def _hyperlinks(dom: Dom) -> np.ndarray:
    """<a href> elements in each node's subtree (a prefix sum over preorder ids)."""
    marks = np.zeros(len(dom) + 1, dtype=np.int64)
    for node in dom.href:
        if dom.elements[node].get("href") is not None:
            marks[node + 1] = 1
    prefix = np.cumsum(marks)
    end = np.asarray(dom.end, dtype=np.int64)
    return prefix[end] - prefix[: len(dom)]


def pagelets(dom: Dom, k: int = 3) -> list[int]:
    """The page's pagelets, in document order: the highest elements none of whose children
    holds k hyperlinks (walked from the root, never below a pagelet)."""
    if not len(dom):
        return []
    links = _hyperlinks(dom)
    found: list[int] = []
    stack = [0]
    while stack:
        node = stack.pop()
        kids = dom.children[node]
        if all(links[c] < k for c in kids):
            found.append(node)
        else:
            stack.extend(reversed(kids))
    return sorted(found)


def fingerprint(text: str, window: int = 4, sketch: int = 8) -> tuple[int, ...]:
    """The text's shingle: the `sketch` smallest 64-bit hashes of its `window`-word windows
    (lower-cased words); () for a text without words."""
    words = _WORD.findall(text.lower())
    if not words:
        return ()
    size = min(window, len(words))
    hashes = {
        int.from_bytes(blake2b(" ".join(words[i : i + size]).encode(), digest_size=8).digest())
        for i in range(len(words) - size + 1)
    }
    return tuple(sorted(hashes)[:sketch])


class Pagelets(SiteMethod):
    """Local template detection over one site: `add` cuts a page into pagelets and keeps their
    fingerprints; a pagelet is template once its fingerprint is on `min_pages` distinct pages."""

    name = NAME

    def __init__(self, config: PageletConfig | None = None) -> None:
        super().__init__()
        self.config = config or PageletConfig()
        self.threshold = self.config.threshold
        self._found: list[list[tuple[int, tuple[int, ...]]]] = []
        self._pages_of: dict[tuple[int, ...], set[bytes]] = {}  # fingerprint -> page keys

    def _pagelets(self, dom: Dom) -> list[tuple[int, tuple[int, ...]]]:
        """(pagelet node, fingerprint) of every pagelet of the page."""
        config = self.config
        return [
            (node, fingerprint(dom.text(node), config.window, config.sketch))
            for node in pagelets(dom, config.k)
        ]

    def _add(self, dom: Dom, shape: PageShape) -> None:
        found = self._pagelets(dom)
        self._found.append(found)
        for _, shingle in found:
            if shingle:
                self._pages_of.setdefault(shingle, set()).add(shape.key)

    def is_template(self, shingle: tuple[int, ...]) -> bool:
        return len(self._pages_of.get(shingle, ())) >= self.config.min_pages

    def page_scores(self, index: int) -> np.ndarray:
        return self._scores(self.shapes[index], self._found[index])

    def peek(self, dom: Dom) -> np.ndarray:
        return self._scores(PageShape.of(dom), self._pagelets(dom))

    def _scores(self, shape: PageShape, found: list[tuple[int, tuple[int, ...]]]) -> np.ndarray:
        """Per node: 1 when all its text lies in template pagelets (see `pieces_min`)."""
        unit = np.zeros(len(shape), dtype=np.float64)  # the score of the pagelet a node is in
        for node, shingle in found:
            if shingle and self.is_template(shingle):
                unit[node : shape.end[node]] = 1.0
        return pieces_min(shape, unit[shape.piece_owner], unit)


def site_scores(doms: Sequence[Dom], config: PageletConfig | None = None) -> list[np.ndarray]:
    """Template score per node of every page of one site: local template detection."""
    return sitemethods.site_scores(Pagelets(config), doms)
