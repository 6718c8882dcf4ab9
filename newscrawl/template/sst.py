"""Site Style Tree (Yi, Liu & Li, KDD 2003): a site's pages merged into one tree of styles.

As a PUC-Rio thesis surveys it: merge the DOMs of a site into a style tree and score nodes by
presentation and content entropy. The paper's definitions, as implemented here:

- an *element node* E is a tag with its display attributes and the *style nodes* seen under it;
  a *style node* S is the sequence of E's children (their tags and attributes) on one page, with
  S.n the number of pages showing that sequence. Merging a page into the site style tree (SST)
  walks it from the root: a child sequence already known under the matching element adds one to
  its count and the walk goes on below it, a new one is added as a new style node;
- presentation importance of an internal E found on m pages, with style nodes S_1..S_l:
  NodeImp(E) = -sum p_i log_m p_i with p_i = S_i.n / m (1 when m = 1): an element whose
  children look the same on every page (a menu, a footer) scores 0;
- content importance of a leaf E, whose features are the words a_1..a_N of its text:
  NodeImp(E) = 1 - sum H(a_i) / N with H(a_i) = -sum_j p_ij log_m p_ij, p_ij the share of a_i's
  occurrences in E that fall on page j (1 when m = 1): text repeated on every page scores 0;
- composite importance: a leaf's is its NodeImp; an internal node's is
  (1 - γ^l) NodeImp(E) + γ^l sum p_i CompImp(S_i), with l the level of E (the root at 1),
  γ = 0.9 (the paper's attenuating factor) and CompImp(S) the mean over the elements of S;
- an element is *noisy* when it and all of its descendants have a composite importance below
  a threshold t.

The template score of a page node is therefore 1 - (the largest composite importance in its
subtree): noisy, i.e. template, when at least 1 - t.

Readings taken where the paper leaves a choice to the implementer:
- text nodes are the leaves. The DOM the paper draws keeps text as leaf children, so an
  element's own text runs (its text and its children's tails, as `Dom` owns them) are `#text`
  children in its style sequence, in document order, and an element without children or text
  (an image, a line break) has no content: it is left out of the means and the maxima and takes
  its parent's score, so it neither props up nor drags down the block around it;
- display attributes are the presentational HTML attributes (align, bgcolor, border, color,
  face, height, size, valign, width), the ones the 2003 pages styled with. `class` and `id` are
  left out: templates mark the current page in them (class="active", per-article ids), which
  splits the same menu into a different style on every page, so nothing would repeat (the
  project's SiteLevel hashes leave attributes out for the same reason);
- the paper gives no value for t: 0.2 here, i.e. a subtree is noise when nothing in it is more
  than a fifth informative. The score keeps the full range, so other cuts need no new run;
- features are the lower-cased ``\\w+`` words of the text;
- a page served twice (same tags and text) is merged once: a duplicate would make its own
  article look repeated.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.template import sitemethods
from newscrawl.template.sitemethods import PageShape, SiteMethod, range_min

__all__ = ["NAME", "SSTConfig", "SiteStyleTree", "site_scores"]

NAME = "sst"
_ATTRIBUTES = ("align", "bgcolor", "border", "color", "face", "height", "size", "valign")
DISPLAY_ATTRIBUTES: tuple[str, ...] = (*_ATTRIBUTES, "width")
_TEXT = "#text"
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class SSTConfig:
    """`gamma`: attenuating factor (the paper's 0.9). `noise`: the t under which a subtree's
    composite importances make it noisy (a reading: 0.2). `attributes`: the attributes that
    belong to an element's style. `threshold` (derived): template score at which a node is
    template, 1 - t."""

    gamma: float = 0.9
    noise: float = 0.2
    attributes: tuple[str, ...] = DISPLAY_ATTRIBUTES

    @property
    def threshold(self) -> float:
        return 1.0 - self.noise


class _Node:
    """An element (or text) node of the site style tree."""

    __slots__ = ("comp", "has_text", "key", "level", "pages", "styles", "words")

    def __init__(self, key: object, level: int) -> None:
        self.key = key
        self.level = level
        self.pages = 0
        self.styles: dict[tuple, _Style] = {}
        self.words: list[Counter[str]] = []  # text nodes: the words of each page
        self.comp = 0.0
        self.has_text = False


class _Style:
    __slots__ = ("children", "n")

    def __init__(self, children: list[_Node]) -> None:
        self.children = children
        self.n = 0


# A page node's items: a child element id, or the ids of a run of the node's own text pieces.
Item = int | list[int]


def _items(dom: Dom, node: int) -> list[Item]:
    """The node's children and own text runs in document order (a subtree's pieces are one
    range, so the node's own pieces are the gaps between its children's ranges)."""
    items: list[Item] = []
    at = dom.piece_start[node]
    for child in dom.children[node]:
        if dom.piece_start[child] > at:
            items.append(list(range(at, dom.piece_start[child])))
        items.append(child)
        at = dom.piece_end[child]
    if dom.piece_end[node] > at:
        items.append(list(range(at, dom.piece_end[node])))
    return items


class SiteStyleTree(SiteMethod):
    """The SST of one site: `add` merges a page into the tree (keeping only which tree node
    each of its nodes and text pieces maps to); `page_scores` computes the composite
    importances once per new page and maps the page onto them."""

    name = NAME

    def __init__(self, config: SSTConfig | None = None) -> None:
        super().__init__()
        self.config = config or SSTConfig()
        self.threshold = self.config.threshold
        self._roots: dict[object, _Node] = {}
        self._nodes: list[_Node] = []  # creation order: a parent before its children
        self._maps: list[tuple[list[_Node | None], list[_Node | None]]] = []
        self._first: dict[bytes, int] = {}  # page key -> the page merged for it
        self._fresh = False  # importances up to date

    def _key(self, dom: Dom, node: int) -> object:
        element = dom.elements[node]
        values = ((name, (element.get(name) or "").strip().lower()) for name in self._attrs)
        return (dom.tag[node], tuple(a for a in values if a[1]))

    @property
    def _attrs(self) -> tuple[str, ...]:
        return self.config.attributes

    def _new(self, key: object, level: int) -> _Node:
        made = _Node(key, level)
        self._nodes.append(made)
        return made

    def _add(self, dom: Dom, shape: PageShape) -> None:
        """Merge the page (a page served twice is merged once: its copy maps like the first)."""
        first = self._first.get(shape.key)
        if first is not None:
            self._maps.append(self._maps[first])
            return
        self._first[shape.key] = len(self._maps)
        self._maps.append(self._merge(dom))
        self._fresh = False

    def _merge(self, dom: Dom) -> tuple[list[_Node | None], list[_Node | None]]:
        """The tree node of each of the page's nodes and of each of its text pieces."""
        node_of: list[_Node | None] = [None] * len(dom)
        piece_of: list[_Node | None] = [None] * len(dom.piece_text)
        if not len(dom):
            return node_of, piece_of
        key = self._key(dom, 0)
        root = self._roots.get(key) or self._roots.setdefault(key, self._new(key, 1))
        stack = [(0, root)]
        while stack:
            node, tree = stack.pop()
            tree.pages += 1
            node_of[node] = tree
            items = _items(dom, node)
            keys = tuple(_TEXT if isinstance(i, list) else self._key(dom, i) for i in items)
            style = tree.styles.get(keys)
            if style is None:
                style = tree.styles[keys] = _Style([self._new(k, tree.level + 1) for k in keys])
            style.n += 1
            for item, child in zip(items, style.children, strict=True):
                if isinstance(item, list):
                    _add_text(dom, item, child, piece_of)
                else:
                    stack.append((item, child))
        return node_of, piece_of

    def importance(self) -> None:
        """Composite importance of every node, children before parents."""
        gamma = self.config.gamma
        for node in reversed(self._nodes):
            if node.key == _TEXT:
                node.comp = _content_importance(node)
                node.has_text = any(node.words)
                continue
            texty = [s for s in node.styles.values() if any(c.has_text for c in s.children)]
            node.has_text = bool(texty)
            if not texty:
                continue
            weight = gamma**node.level
            below = sum(s.n / node.pages * _style_importance(s) for s in texty)
            node.comp = (1 - weight) * _presentation_importance(node) + weight * below
        self._fresh = True

    def _map(self, dom: Dom) -> tuple[list[_Node | None], list[_Node | None]]:
        """Like `_merge` without learning: the tree nodes the page's nodes match; None below a
        child sequence the tree has never seen."""
        node_of: list[_Node | None] = [None] * len(dom)
        piece_of: list[_Node | None] = [None] * len(dom.piece_text)
        root = self._roots.get(self._key(dom, 0)) if len(dom) else None
        stack = [(0, root)] if root is not None else []
        while stack:
            node, tree = stack.pop()
            node_of[node] = tree
            items = _items(dom, node)
            keys = tuple(_TEXT if isinstance(i, list) else self._key(dom, i) for i in items)
            style = tree.styles.get(keys)
            if style is None:
                continue
            for item, child in zip(items, style.children, strict=True):
                if isinstance(item, list):
                    for k in item:
                        piece_of[k] = child
                else:
                    stack.append((item, child))
        return node_of, piece_of

    def peek(self, dom: Dom) -> np.ndarray:
        """A page scored on the tree as learnt: a part whose style the tree has never seen is
        new to the site, so its text counts as fully important (a style node of one page)."""
        if not self._fresh:
            self.importance()
        node_of, piece_of = self._map(dom)
        shape = PageShape.of(dom)
        unseen = np.array([t is None for t in piece_of], dtype=bool)
        pieces = _values(piece_of)
        pieces[unseen] = 1.0
        return self._scores(shape, _values(node_of), pieces)

    def node(self, index: int, node: int) -> _Node | None:
        """The tree node page `index`'s node maps to."""
        return self._maps[index][0][node]

    def page_scores(self, index: int) -> np.ndarray:
        """Template score per node: 1 - the largest composite importance in its subtree, over
        its elements and text; text-less nodes take their parent's score."""
        if not self._fresh:
            self.importance()
        node_of, piece_of = self._maps[index]
        return self._scores(self.shapes[index], _values(node_of), _values(piece_of))

    @staticmethod
    def _scores(shape: PageShape, node_val: np.ndarray, piece_val: np.ndarray) -> np.ndarray:
        """1 - the largest importance in each node's subtree; text-less: the parent's score."""
        if not len(shape):
            return np.zeros(0, dtype=np.float64)
        # max over a subtree = -min of the negated values over its node and piece ranges
        most = -range_min(-node_val, np.arange(len(shape)), shape.end)
        has = shape.piece_end > shape.piece_start
        if has.any():
            pieces = -range_min(-piece_val, shape.piece_start[has], shape.piece_end[has])
            most[has] = np.maximum(most[has], pieces)
        score = 1.0 - most
        for node in np.flatnonzero(~np.isfinite(score)):  # preorder: parents come first
            parent = shape.parent[node]
            score[node] = score[parent] if parent >= 0 else 0.0
        return np.clip(score, 0.0, 1.0)


def _values(nodes: Sequence[_Node | None]) -> np.ndarray:
    """Composite importance of each mapped tree node; -inf for nodes without text."""
    return np.array(
        [t.comp if t is not None and t.has_text else -np.inf for t in nodes], dtype=np.float64
    )


def _add_text(dom: Dom, pieces: list[int], text: _Node, piece_of: list) -> None:
    text.pages += 1
    words = Counter(w for k in pieces for w in _WORD.findall(dom.piece_text[k].lower()))
    text.words.append(words)
    for k in pieces:
        piece_of[k] = text


def _entropy(shares: Sequence[float], base: int) -> float:
    """-sum p log_base p over the non-zero shares (0 when base < 2)."""
    if base < 2:
        return 0.0
    return -sum(p * math.log(p) for p in shares if p > 0) / math.log(base)


def _presentation_importance(node: _Node) -> float:
    if node.pages <= 1:
        return 1.0
    return _entropy([s.n / node.pages for s in node.styles.values()], node.pages)


def _content_importance(node: _Node) -> float:
    """1 - mean word entropy across the pages showing this text node (1 on one page)."""
    m = len(node.words)
    if m <= 1:
        return 1.0 if any(node.words) else 0.0
    totals: Counter[str] = Counter()
    for words in node.words:
        totals.update(words)
    if not totals:
        return 0.0
    spread = 0.0
    for word, total in totals.items():
        spread += _entropy([words[word] / total for words in node.words if word in words], m)
    return 1.0 - spread / len(totals)


def _style_importance(style: _Style) -> float:
    """Mean composite importance of the style's elements that hold text."""
    values = [c.comp for c in style.children if c.has_text]
    return sum(values) / len(values) if values else 0.0


def site_scores(doms: Sequence[Dom], config: SSTConfig | None = None) -> list[np.ndarray]:
    """Template score per node of every page of one site (see the module docstring)."""
    return sitemethods.site_scores(SiteStyleTree(config), doms)
