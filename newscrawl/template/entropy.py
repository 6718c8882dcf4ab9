"""Informative content blocks by term entropy (Lin & Ho, KDD 2002: InfoDiscoverer).

As a PUC-Rio thesis surveys it: split pages into blocks by ``<table>``, and measure the
entropy of each block's terms across the site's pages. As implemented:

- a page is cut into *content blocks*: every block element starts one, and a block's features
  are the terms of the text it holds outside its nested blocks (the page root is the block of
  text outside every other);
- the entropy of a term t over the site's n pages is H(t) = -sum_j w_tj log_n w_tj, with w_tj
  the share of t's occurrences that fall on page j: 0 for a term of one page, 1 for a term
  spread evenly over all of them;
- a block's entropy is the mean entropy of its distinct terms; a block is *informative* when
  its entropy is at most a threshold H0 and *redundant* (template) above it;
- H0 is chosen per site, as the paper proposes, from the blocks themselves (`choose_h0`).

The template score of a block maps its entropy onto [0, 1] so that the site's H0 falls just
below 0.5 (entropies up to H0 below it, those above H0 from 0.5 up, order kept); a node's score
is the lowest score of the blocks holding its text, so a node is template only when all of its
text is redundant.

Readings taken where the survey gives no value:
- block elements: the paper's pages were laid out with tables, so ``<table>`` was the block.
  Pages now lay out with ``div``, ``section`` and the HTML5 landmarks, so the default block
  elements are those containers (`LAYOUT_BLOCKS`); ``block_tags=("table",)`` is the literal
  reading;
- terms are the lower-cased ``\\w+`` words, less the function words of the languages
  `newscrawl.html.stopwords` lists (an IR system's stop list: "the" is on every page and
  says nothing about a block);
- H0: for H0 = 0.1, 0.2, ..., 0.9 count the distinct terms of the informative blocks; as H0
  grows the count climbs through the article blocks, stays flat across the gap between
  articles and template, then climbs again through the template. H0 is the first value after
  which the count grows least (the start of the flattest step);
- a page served twice (same tags and text) counts once.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.template import sitemethods
from newscrawl.template.sitemethods import PageShape, SiteMethod, pieces_min

__all__ = [
    "LAYOUT_BLOCKS",
    "NAME",
    "BlockEntropy",
    "EntropyConfig",
    "choose_h0",
    "site_scores",
    "term_entropy",
]

NAME = "entropy"
LAYOUT_BLOCKS = (
    *("table", "div", "section", "article", "aside", "nav", "header", "footer", "main"),
    *("form", "ul", "ol", "dl"),
)
_WORD = re.compile(r"\w+")
# The score H0 maps to: just below 0.5, so "at most H0" is informative and `threshold` 0.5 cuts.
_BELOW_HALF = 0.5 - 1e-9


@dataclass(frozen=True, slots=True)
class EntropyConfig:
    """`block_tags`: elements that start a content block. `h0`: the entropy threshold (None:
    chosen per site, `choose_h0`). `steps`: the H0 values tried. `stopwords`: drop function
    words from the terms. `threshold`: score at which a node is template."""

    block_tags: tuple[str, ...] = LAYOUT_BLOCKS
    h0: float | None = None
    steps: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    stopwords: bool = True
    threshold: float = 0.5


@cache
def _stop_list() -> frozenset[str]:
    from newscrawl.html.stopwords import STOPWORDS

    return frozenset().union(*STOPWORDS.values())


def _blocks(dom: Dom, block_tags: frozenset[str]) -> np.ndarray:
    """The block each node belongs to: itself when it is a block element, else its parent's
    (the root is a block)."""
    block = np.zeros(len(dom), dtype=np.int64)
    for node in range(len(dom)):  # preorder: parents first
        parent = dom.parent[node]
        block[node] = node if parent < 0 or dom.tag[node] in block_tags else block[parent]
    return block


def _block_terms(dom: Dom, block: np.ndarray, stop: frozenset[str]) -> dict[int, Counter[str]]:
    """The terms of each block's own text."""
    terms: dict[int, Counter[str]] = {}
    for owner, text in zip(dom.piece_owner, dom.piece_text, strict=True):
        words = [w for w in _WORD.findall(text.lower()) if w not in stop]
        if words:
            terms.setdefault(int(block[owner]), Counter()).update(words)
    return terms


def term_entropy(pages: Sequence[Counter[str]]) -> dict[str, float]:
    """H(t) of every term over the pages (term frequencies per page), log base n: in [0, 1]."""
    n = len(pages)
    totals: Counter[str] = Counter()
    for page in pages:
        totals.update(page)
    if n < 2:
        return dict.fromkeys(totals, 0.0)
    spread: dict[str, float] = dict.fromkeys(totals, 0.0)
    for page in pages:
        for term, count in page.items():
            share = count / totals[term]
            spread[term] -= share * math.log(share)
    scale = math.log(n)
    return {term: value / scale for term, value in spread.items()}


def choose_h0(blocks: Sequence[tuple[float, frozenset[str]]], steps: Sequence[float]) -> float:
    """The site's H0 from its blocks' (entropy, terms): the first step after which the number
    of distinct terms in informative blocks grows least."""
    counts = []
    for h0 in steps:
        terms: set[str] = set()
        for entropy, words in blocks:
            if entropy <= h0:
                terms |= words
        counts.append(len(terms))
    if len(steps) < 2:
        return steps[0] if steps else 0.5
    growth = [b - a for a, b in pairwise(counts)]
    return steps[int(np.argmin(growth))]


def _score(entropy: float, h0: float) -> float:
    """Entropy mapped onto [0, 1] with H0 just below 0.5 (order kept)."""
    if entropy <= h0:
        return _BELOW_HALF * (entropy / h0 if h0 > 0 else 0.0)
    return 0.5 + 0.5 * (entropy - h0) / (1.0 - h0) if h0 < 1 else 1.0


class BlockEntropy(SiteMethod):
    """Lin & Ho over one site: `add` cuts a page into blocks and counts their terms; the term
    entropies, block entropies and H0 follow from all the pages added so far."""

    name = NAME

    def __init__(self, config: EntropyConfig | None = None) -> None:
        super().__init__()
        self.config = config or EntropyConfig()
        self.threshold = self.config.threshold
        self._stop = _stop_list() if self.config.stopwords else frozenset()
        self._tags = frozenset(self.config.block_tags)
        self._blocks: list[np.ndarray] = []
        self._terms: list[dict[int, Counter[str]]] = []
        self._pages: dict[bytes, Counter[str]] = {}  # distinct pages' term frequencies
        self._state: tuple[list[dict[int, float]], float] | None = None  # entropies, H0
        self._entropy_of: dict[str, float] = {}

    def _add(self, dom: Dom, shape: PageShape) -> None:
        block = _blocks(dom, self._tags)
        terms = _block_terms(dom, block, self._stop)
        self._blocks.append(block)
        self._terms.append(terms)
        if shape.key not in self._pages:  # a page served twice counts once
            page: Counter[str] = Counter()
            for words in terms.values():
                page.update(words)
            self._pages[shape.key] = page
        self._state = None

    def entropies(self) -> tuple[list[dict[int, float]], float]:
        """Each page's block entropies (block node -> H) and the site's H0."""
        if self._state is None:
            entropy_of = self._entropy_of = term_entropy(list(self._pages.values()))
            blocks = [
                {node: _mean(entropy_of, words) for node, words in page.items()}
                for page in self._terms
            ]
            h0 = self.config.h0
            if h0 is None:
                found = [
                    (entropies[node], frozenset(words))
                    for entropies, page in zip(blocks, self._terms, strict=True)
                    for node, words in page.items()
                ]
                h0 = choose_h0(found, self.config.steps)
            self._state = (blocks, h0)
        return self._state

    def page_scores(self, index: int) -> np.ndarray:
        blocks, h0 = self.entropies()
        return _scores(self.shapes[index], self._blocks[index], blocks[index], h0)

    def peek(self, dom: Dom) -> np.ndarray:
        """A page scored by the learnt term entropies (a term never seen counts 0: this page's
        own) and H0."""
        _, h0 = self.entropies()
        block = _blocks(dom, self._tags)
        terms = _block_terms(dom, block, self._stop)
        known = self._entropy_of
        entropies = {
            node: sum(known.get(w, 0.0) for w in words) / len(words)
            for node, words in terms.items()
        }
        return _scores(PageShape.of(dom), block, entropies, h0)


def _scores(
    shape: PageShape, block: np.ndarray, entropies: dict[int, float], h0: float
) -> np.ndarray:
    """Per node: the lowest score of the blocks holding its text; a text-less node takes the
    score of its block (0 for a block without terms)."""
    by_block = np.zeros(len(shape), dtype=np.float64)
    for node, entropy in entropies.items():
        by_block[node] = _score(entropy, h0)
    unit = by_block[block]
    return pieces_min(shape, unit[shape.piece_owner], unit)


def site_scores(doms: Sequence[Dom], config: EntropyConfig | None = None) -> list[np.ndarray]:
    """Template score per node of every page of one site (see the module docstring)."""
    return sitemethods.site_scores(BlockEntropy(config), doms)


def _mean(entropy_of: dict[str, float], words: Counter[str]) -> float:
    """A block's entropy: the mean over its distinct terms."""
    return sum(entropy_of[w] for w in words) / len(words)
