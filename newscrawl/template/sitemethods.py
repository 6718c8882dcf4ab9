"""The site-level template methods side by side: one name, one call, one form of answer.

Every method takes the pages of one site, parsed into the one DOM model (`Dom`), and returns,
per page, a float array indexed by the page's node ids: the node's *template score*. A node is
template when its score is at least the method's threshold (`threshold_of`), and every method
keeps the rule SiteLevel's labels follow - a node is never more template than the text below
it - so cutting the template nodes out of a page (`newscrawl.extractors.template_filter.pruned_dom`)
never takes content along with a template parent:

- ``sitelevel`` (Chakrabarti, Kumar and Punera 2007, `newscrawl.template.sitelevel`): the
  SiteLevel labels as 0 / 1;
- ``sst`` (Yi, Liu & Li 2003, `newscrawl.template.sst`): 1 - the largest composite importance
  in the node's subtree of the site style tree;
- ``pagelets`` (Bar-Yossef & Rajagopalan 2002, `newscrawl.template.pagelets`): 1 when all the
  node's text lies in pagelets repeated on other pages of the site, else 0;
- ``entropy`` (Lin & Ho 2002, `newscrawl.template.entropy`): the lowest entropy of the blocks
  holding the node's text, scaled so that the site's threshold H0 falls just below 0.5.

`new_site_method(name)` is one site's state: `add(dom)` each page as it comes (what the method
needs is read while the tree is at hand; no tree is kept, so a crawl's 200-page buffer stays
small), `page_scores(i)` / `page_mask(i)` for page i given every page added so far, and
`peek(dom)` for a page scored by what the others taught, without learning from it, and
`mask_of(dom)` for any page once the site is learnt (extraction's site context).
`site_scores(method, doms)` and `site_masks(method, doms)` do a whole site at once. Nothing
before <body> is ever template in a mask.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from newscrawl.html.dom import Dom

if TYPE_CHECKING:
    from newscrawl.template.node_records import PageNodes
    from newscrawl.template.sitelevel import SiteLevelConfig

__all__ = [
    "DEFAULT_SITE_METHOD",
    "SITE_METHODS",
    "PageShape",
    "SiteLevelMethod",
    "SiteMethod",
    "check_site_method",
    "new_site_method",
    "page_key",
    "pieces_min",
    "range_min",
    "site_masks",
    "site_scores",
    "threshold_of",
]

SITE_METHODS: tuple[str, ...] = ("sitelevel", "sst", "pagelets", "entropy")
DEFAULT_SITE_METHOD = "sitelevel"


def check_site_method(name: str) -> str:
    """The method's canonical name; a ValueError naming the choices for an unknown one."""
    key = (name or "").strip().lower()
    if key not in SITE_METHODS:
        raise ValueError(f"unknown site method {name!r}: choose one of {', '.join(SITE_METHODS)}")
    return key


@dataclass(frozen=True, slots=True)
class PageShape:
    """What scoring needs of a page once its tree is gone: the node tree (parent, subtree
    end), each node's range of text pieces, each piece's owner, <body>, and `page_key`."""

    parent: np.ndarray
    end: np.ndarray
    piece_start: np.ndarray
    piece_end: np.ndarray
    piece_owner: np.ndarray
    body: int
    key: bytes

    @classmethod
    def of(cls, dom: Dom) -> PageShape:
        def ints(values: Sequence[int]) -> np.ndarray:
            return np.asarray(values, dtype=np.int32)  # 20 bytes a node for the five arrays

        return cls(
            ints(dom.parent),
            ints(dom.end),
            ints(dom.piece_start),
            ints(dom.piece_end),
            ints(dom.piece_owner),
            dom.body if len(dom) else 0,
            page_key(dom),
        )

    def __len__(self) -> int:
        return len(self.parent)


class SiteMethod(ABC):
    """One site's pages through a site-level method, a page at a time.

    `add(dom)` reads what the method needs while the page's tree is at hand (no tree is kept,
    so a crawl can feed a 200-page site); `page_scores(i)` is page i's template score per node
    given every page added so far; `masks()` the template nodes of every page. `peek(dom)`
    scores a page by what the pages added so far taught, without learning from it (for pages
    past a cap). A node is template when its score is at least `threshold`.
    """

    name: ClassVar[str]
    threshold: float = 0.5

    def __init__(self) -> None:
        self.shapes: list[PageShape] = []

    def __len__(self) -> int:
        return len(self.shapes)

    def add(self, dom: Dom) -> int:
        """Read one page of the site; its index."""
        shape = PageShape.of(dom)
        self._add(dom, shape)
        self.shapes.append(shape)
        return len(self.shapes) - 1

    @abstractmethod
    def _add(self, dom: Dom, shape: PageShape) -> None: ...

    @abstractmethod
    def page_scores(self, index: int) -> np.ndarray: ...

    @abstractmethod
    def peek(self, dom: Dom) -> np.ndarray: ...

    def scores(self) -> list[np.ndarray]:
        return [self.page_scores(i) for i in range(len(self.shapes))]

    def peek_mask(self, dom: Dom) -> np.ndarray:
        """Template nodes of a page scored by `peek`; nothing before <body> is."""
        mask = self.peek(dom) >= self.threshold
        mask[: dom.body if len(dom) else 0] = False
        return mask

    def page_mask(self, index: int) -> np.ndarray:
        """Template nodes of page `index`; nothing before <body> is."""
        mask = self.page_scores(index) >= self.threshold
        mask[: self.shapes[index].body] = False
        return mask

    def masks(self) -> list[np.ndarray]:
        return [self.page_mask(i) for i in range(len(self.shapes))]

    def mask_of(self, dom: Dom) -> np.ndarray:
        """Template nodes of a page: its own mask when it is one of the pages added (the same
        page served twice counts once), else `peek_mask`."""
        key = page_key(dom)
        for index, shape in enumerate(self.shapes):
            if shape.key == key and len(shape) == len(dom):
                return self.page_mask(index)
        return self.peek_mask(dom)


class SiteLevelMethod(SiteMethod):
    """SiteLevel's labels (a hash repeated on p = 10% of the pages, or 85% of the
    text template) as 0 / 1 scores. Boxes are not needed for labels, so none are computed."""

    name = "sitelevel"

    def __init__(self, config: SiteLevelConfig | None = None) -> None:
        from newscrawl.template.sitelevel import SiteLevelConfig

        super().__init__()
        self.config = config or SiteLevelConfig()
        self._pages: list[PageNodes] = []
        self._hashes: np.ndarray | None = None

    def _add(self, dom: Dom, shape: PageShape) -> None:
        from newscrawl.template.node_records import PageNodes

        boxes = np.zeros((len(dom), 4), np.float32)
        self._pages.append(PageNodes.from_dom(dom, dom.url or "", boxes=boxes))
        self._hashes = None

    def page_scores(self, index: int) -> np.ndarray:
        return self._labels(self._pages[index])

    def peek(self, dom: Dom) -> np.ndarray:
        from newscrawl.template.node_records import PageNodes

        boxes = np.zeros((len(dom), 4), np.float32)
        return self._labels(PageNodes.from_dom(dom, dom.url or "", boxes=boxes))

    def _labels(self, page: PageNodes) -> np.ndarray:
        from newscrawl.template.sitelevel import label_page, template_hashes

        if self._hashes is None:
            self._hashes = template_hashes(self._pages, self.config)
        config = self.config
        return label_page(page, self._hashes, config.html_share, config.share_of).astype(float)


def new_site_method(name: str) -> SiteMethod:
    """A fresh state of the method `name` (default configuration) for one site; imports stay
    lazy, so a crawl loads only the method it runs."""
    name = check_site_method(name)
    if name == "sst":
        from newscrawl.template.sst import SiteStyleTree

        return SiteStyleTree()
    if name == "pagelets":
        from newscrawl.template.pagelets import Pagelets

        return Pagelets()
    if name == "entropy":
        from newscrawl.template.entropy import BlockEntropy

        return BlockEntropy()
    return SiteLevelMethod()


def threshold_of(method: str) -> float:
    """Score at or above which a node is template, for the method's default configuration."""
    return new_site_method(method).threshold


def site_scores(method: str | SiteMethod, doms: Sequence[Dom]) -> list[np.ndarray]:
    """Template score per node of every page of one site, by `method` (a name: defaults)."""
    return _learnt(method, doms).scores()


def site_masks(method: str | SiteMethod, doms: Sequence[Dom]) -> list[np.ndarray]:
    """Template nodes (bool per node) of every page of one site; nothing before <body> is."""
    return _learnt(method, doms).masks()


def _learnt(method: str | SiteMethod, doms: Sequence[Dom]) -> SiteMethod:
    """`method` (a name: a fresh state with defaults) with every page of `doms` added."""
    state = new_site_method(method) if isinstance(method, str) else method
    for dom in doms:
        state.add(dom)
    return state


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


def pieces_min(page: PageShape, piece_score: np.ndarray, unit_of_node: np.ndarray) -> np.ndarray:
    """Per node: the lowest score of the text pieces in its subtree; a node without text takes
    `unit_of_node` (the score of the unit - block, pagelet - it sits in).

    So a node is template (high score) only when all of its text is: the rule that lets the
    mask cut a node's whole subtree.
    """
    out = np.asarray(unit_of_node, dtype=np.float64).copy()
    start, stop = page.piece_start, page.piece_end
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
