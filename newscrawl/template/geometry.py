"""Page geometry: an (x, y, width, height) box in CSS pixels for every node of a `Dom`.

The template classifiers (seed 004) use where a node sits on the rendered page (distance to the
top and left margins) and pick their model by node area (width x height, px^2, buckets from
2,000 px^2 up). Three providers compute boxes, chosen by name with `get_geometry_provider`:

``static`` (default)
    No browser: a deterministic block-layout model of the DOM (`StaticGeometry`), fast enough
    to run on every crawled page. It knows the browser's default stylesheet, not the page's
    CSS, so it sees an unstyled page laid out in a 1280 px wide window.
``chromium``
    Real boxes from Debian's chromium (/usr/bin/chromium) driven through Playwright
    (`ChromiumGeometry`). The Dom is serialised with a ``data-nc-id`` attribute on every
    element, loaded with ``page.set_content`` (scripts stripped, JavaScript off, network off
    unless asked for), and every element's ``getBoundingClientRect`` is read in one call.
    Elements the browser does not render get zero boxes. One browser serves many pages; use
    the class as a context manager to control its lifetime.

``flow``
    The cheapest: no layout at all (`FlowGeometry`). A node's y is where its text starts in
    document order (lines of text before it), its x its indentation (nesting depth), its
    height the lines its text takes at the width left to it, its width that width (or its
    text's width for a short inline element). About a millisecond a page; numpy over the
    Dom's text runs.

All return a float array of shape ``(len(dom), 4)``: x, y, width, height, in page (not
viewport) coordinates; hidden nodes (``<head>`` and its content, ``hidden``, ``display:none``)
are all zeros.

At crawl time, boxes from the page as the crawler rendered it can come from scrapy-playwright:
request with ``meta={"playwright": True, "playwright_include_page": True}``, parse the response
into a Dom, then in the (async) callback ``boxes = await render_boxes(page, dom, response.url)``
and ``await page.close()``; pass the boxes on to the template stage (``PageNodes.from_dom(...,
boxes=boxes)``). `render_boxes` re-lays the parsed DOM out in the crawler's page with the
page's own stylesheets, so node ids match the Dom exactly.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import re
import threading
from collections.abc import Iterable, Iterator
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import lxml.html
import numpy as np

from newscrawl.dom import BLOCK_TAGS, Dom

__all__ = [
    "CHROMIUM_ARGS",
    "CHROMIUM_PATH",
    "DEFAULT_PROVIDER",
    "ID_ATTRIBUTE",
    "PROVIDERS",
    "ChromiumGeometry",
    "FlowConfig",
    "FlowGeometry",
    "GeometryError",
    "GeometryProvider",
    "StaticGeometry",
    "boxes_from_rects",
    "get_geometry_provider",
    "marked_html",
    "node_areas",
    "render_boxes",
]

DEFAULT_PROVIDER = "static"
CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
ID_ATTRIBUTE = "data-nc-id"


class GeometryError(RuntimeError):
    """A geometry provider that cannot work here (e.g. no chromium installed)."""


class GeometryProvider(Protocol):
    """Computes a box for every node of a Dom."""

    name: str

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray: ...


def node_areas(boxes: np.ndarray) -> np.ndarray:
    """Width x height of every box, px^2 (what the classifiers' area buckets are drawn on)."""
    boxes = np.asarray(boxes, dtype=float)
    return boxes[:, 2] * boxes[:, 3]


# -- the static layout model ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StaticConfig:
    """The numbers of the static layout model (defaults: Chrome's default stylesheet)."""

    viewport_width: float = 1280.0
    font_size: float = 16.0  # px, of body text
    line_height: float = 1.15  # x font size: Chrome's "normal" for its default font
    char_width: float = 0.42  # x font size: an average character of a proportional font
    image_size: tuple[float, float] = (300.0, 150.0)  # replaced element with no size given
    sidebar_width: float = 300.0  # px, at most 30% of the parent's width
    sidebar_gap: float = 20.0
    sidebar_min_parent: float = 640.0  # narrower parents stay one column
    menu_label_chars: int = 40  # list items this short, in a navigation list, sit in a row


# fmt: off
# Elements never rendered: zero boxes for them and their subtree.
HIDDEN_TAGS = frozenset(
    {"head", "title", "meta", "link", "base", "param", "source", "track", "area", "map",
     "script", "style", "noscript", "template", "dialog"}
)
# Replaced (atomic inline) elements and their default sizes when the markup gives none.
ATOM_SIZES = {
    "img": None,  # StaticConfig.image_size
    "video": None,
    "picture": None,
    "input": (150.0, 21.0),
    "button": None,  # sized by its label
    "audio": (300.0, 54.0),
    "progress": (160.0, 16.0),
    "meter": (80.0, 16.0),
}
# Block elements the static model lays out as blocks (a <br> is a line break in a line box).
BLOCK_LEVEL_TAGS = (BLOCK_TAGS - {"br"}) | {"html", "body"}
# Font size relative to body text (Chrome's default stylesheet, headings in em of 16 px).
FONT_SCALE = {
    "h1": 2.0, "h2": 1.5, "h3": 1.17, "h4": 1.0, "h5": 0.83, "h6": 0.67, "small": 0.83,
    "big": 1.2, "sub": 0.83, "sup": 0.83, "pre": 0.8125, "code": 0.8125, "kbd": 0.8125,
    "samp": 0.8125, "tt": 0.8125,
}
# Vertical margins in em of the element's own font; horizontal margins in px.
MARGIN_EM = {
    "p": 1.0, "h1": 0.67, "h2": 0.83, "h3": 1.0, "h4": 1.33, "h5": 1.67, "h6": 2.33,
    "blockquote": 1.0, "figure": 1.0, "ul": 1.0, "ol": 1.0, "menu": 1.0, "dir": 1.0, "dl": 1.0,
    "pre": 1.0, "hr": 0.5, "fieldset": 0.125,
}
MARGIN_SIDE_PX = {"blockquote": 40.0, "figure": 40.0, "dd": (40.0, 0.0)}
PADDING_LEFT_PX = {"ul": 40.0, "ol": 40.0, "menu": 40.0, "dir": 40.0}
LIST_TAGS = frozenset({"ul", "ol", "menu", "dir"})
TABLE_GROUPS = frozenset({"tbody", "thead", "tfoot"})
CELL_SPACING = 2.0  # border-spacing of tables
_SIDEBAR = re.compile(r"side-?bar|\brail\b|\bsecondary\b|widget-area", re.IGNORECASE)
_MENU = re.compile(r"nav|menu", re.IGNORECASE)
_STYLE_PX = re.compile(r"(?<![-\w])(width|height)\s*:\s*([\d.]+)px", re.IGNORECASE)
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
# fmt: on

# Node kinds.
HIDDEN, BLOCK, INLINE, ATOM, BREAK, IN_ATOM = range(6)


class StaticGeometry:
    """Boxes from a block-layout model of the DOM: deterministic, no browser, O(nodes).

    The model, in the order it is computed:

    * The window is 1280 px wide. ``<html>`` spans it; ``<body>`` has Chrome's 8 px margin.
    * Block elements (div, p, li, h1..., and inline elements that contain blocks) take their
      parent's content width minus their margins and stack vertically; vertical margins of
      adjacent siblings collapse to the larger one, as in CSS. Lists indent by 40 px.
    * Text and inline elements flow in lines inside their block: a character is 0.42 em wide,
      a line 1.15 em tall (16 px body text, headings larger); lines wrap at the block's width.
      An inline element's box covers its characters (its first to last line when it wraps).
      ``<br>`` ends a line. Images, inputs, buttons and video are atoms of their markup size
      (``width``/``height`` attributes or inline-style px) or a default size; an atom taller
      than the line makes the line taller.
    * Tables shrink to fit their content unless given a width; a row's cells share its width
      in proportion to their preferred (single-line) widths, and all cells of a row are as
      tall as its tallest.
    * Two typical page layouts that the default stylesheet cannot know are assumed: an
      ``<aside>`` (or an element whose class or id says sidebar/rail/secondary) sits in a
      column of at most 300 px beside its neighbouring block, and a list inside ``<nav>`` (or
      with nav/menu in its class or id) whose items are all short lays its items out in a row.
    * ``<head>`` and its content, elements with ``hidden`` or ``display:none`` in their inline
      style, and ``<input type=hidden>`` are not rendered: zero boxes.

    The page's stylesheets are ignored, so a real page's boxes differ (a styled page is usually
    narrower and uses more columns); use the ``chromium`` provider when that matters.
    """

    name = "static"
    Config: ClassVar[type[StaticConfig]] = StaticConfig

    def __init__(self, config: StaticConfig | None = None) -> None:
        self.config = config or StaticConfig()

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray:
        """Boxes of every node; `html` and `url` are not needed by this model."""
        if len(dom) == 0:
            return np.zeros((0, 4))
        return _StaticLayout(dom, self.config).run()


class _StaticLayout:
    """One page's layout. Passes over the preorder ids, no recursion:

    classify (top-down) -> each node's content in document order -> inline elements holding
    blocks become blocks, preferred widths (bottom-up) -> widths and x offsets of blocks
    (top-down) -> heights, y offsets and lines (bottom-up) -> page coordinates (top-down).
    """

    def __init__(self, dom: Dom, config: StaticConfig) -> None:
        self.dom = dom
        self.cfg = config
        n = len(dom)
        self.kind = [INLINE] * n
        self.font = [config.font_size] * n
        self.anchor = [-1] * n  # boxes are stored relative to this node's box
        self.atom_size: dict[int, tuple[float, float]] = {}
        self.explicit: dict[int, tuple[float | None, float | None]] = {}
        self.role = [""] * n  # "row", "cell", "table", "group", "menu", "side"
        self.partner: dict[int, int] = {}  # sidebar <-> the block beside it
        self.pref = [0.0] * n
        self.width = [0.0] * n
        self.height = [0.0] * n
        self.rel_x = [0.0] * n
        self.rel_y = [0.0] * n
        self.own_pieces: list[list[int]] = [[] for _ in range(n)]
        for piece, owner in enumerate(dom.piece_owner):
            self.own_pieces[owner].append(piece)
        self.extras: list[tuple[float, float]] = []  # sizes of ("extra", i) items
        self.items: list[list[tuple[str, int]]] = [[] for _ in range(n)]
        self._margins: dict[int, tuple[float, float, float, float]] = {}
        self.collapsed: dict[int, tuple[float, float]] = {}  # merged (top, bottom) margins

    def run(self) -> np.ndarray:
        self._classify()
        self._collect_items()
        self._promote_and_measure()
        self._assign_widths()
        self._lay_out()
        return self._absolute()

    # -- style of one node ------------------------------------------------------------------

    def margins(self, node: int) -> tuple[float, float, float, float]:
        """top, right, bottom, left margins (px)."""
        cached = self._margins.get(node)
        if cached is None:
            cached = self._margins[node] = self._compute_margins(node)
        return cached

    def outer_margins(self, node: int) -> tuple[float, float]:
        """Top and bottom margins once merged with those of the first and last child."""
        merged = self.collapsed.get(node)
        if merged is not None:
            return merged
        top, _, bottom, _ = self.margins(node)
        return top, bottom

    def _compute_margins(self, node: int) -> tuple[float, float, float, float]:
        tag = self.dom.tag[node]
        vertical = MARGIN_EM.get(tag, 0.0) * self.font[node]
        if tag in LIST_TAGS and self._in_list(node):
            vertical = 0.0  # nested lists have no vertical margin
        if tag == "body":
            return 8.0, 8.0, 8.0, 8.0
        side = MARGIN_SIDE_PX.get(tag, 0.0)
        left, right = side if isinstance(side, tuple) else (side, side)
        return vertical, right, vertical, left

    def _in_list(self, node: int) -> bool:
        up = self.dom.parent[node]
        return up >= 0 and (self.dom.tag[up] == "li" or self.dom.tag[up] in LIST_TAGS)

    def padding(self, node: int) -> tuple[float, float]:
        """left and right padding (px)."""
        tag = self.dom.tag[node]
        if self.role[node] == "cell":
            return 1.0, 1.0
        if self.role[node] == "menu":
            return 0.0, 0.0  # a menu row starts at its left edge
        return PADDING_LEFT_PX.get(tag, 0.0), 0.0

    def char_width(self, node: int) -> float:
        return self.font[node] * self.cfg.char_width

    def line_height(self, node: int) -> float:
        return self.font[node] * self.cfg.line_height

    # -- pass 1: kinds, fonts, anchors ---------------------------------------------------------

    def _classify(self) -> None:
        dom, cfg = self.dom, self.cfg
        for node in range(len(dom)):
            up = dom.parent[node]
            tag = dom.tag[node]
            el = dom.elements[node]
            if up >= 0 and self.kind[up] in (HIDDEN, ATOM, IN_ATOM):
                self.kind[node] = HIDDEN if self.kind[up] == HIDDEN else IN_ATOM
                self.anchor[node] = up if self.kind[up] == ATOM else self.anchor[up]
                continue
            if tag in HIDDEN_TAGS or _is_hidden(el, tag):
                self.kind[node] = HIDDEN
                continue
            scale = FONT_SCALE.get(tag)
            base = self.font[up] if up >= 0 else cfg.font_size
            self.font[node] = cfg.font_size * scale if scale else base
            style = _explicit_size(el)
            if tag == "hr" and style[1] is None:
                style = (style[0], 2.0)  # its border
            elif tag in ("td", "th", "tr", "table") and style[1] is None:
                style = (style[0], _number(el.get("height")))  # old layout tables
            if style != (None, None):
                self.explicit[node] = style
            if tag in ATOM_SIZES:
                self.kind[node] = ATOM
                self.atom_size[node] = self._atom_size(node, style)
            elif tag == "br":
                self.kind[node] = BREAK
            elif tag in BLOCK_LEVEL_TAGS:
                self.kind[node] = BLOCK
            if up >= 0:
                self.anchor[node] = up if self.kind[up] == BLOCK else self.anchor[up]

    def _atom_size(
        self, node: int, style: tuple[float | None, float | None]
    ) -> tuple[float, float]:
        dom, cfg = self.dom, self.cfg
        tag = dom.tag[node]
        el = dom.elements[node]
        width, height = style
        width = width if width is not None else _number(el.get("width"))
        height = height if height is not None else _number(el.get("height"))
        default = ATOM_SIZES[tag]
        if tag == "button":
            label = max(dom.text_len(node), 1)
            default = (label * self.char_width(node) + 16.0, self.line_height(node) + 6.0)
        elif tag == "input":
            kind = (el.get("type") or "text").lower()
            if kind in ("checkbox", "radio"):
                default = (13.0, 13.0)
            elif kind in ("submit", "button", "reset"):
                label = max(len(el.get("value") or "Submit"), 1)
                default = (label * self.char_width(node) + 16.0, 21.0)
        default = default or cfg.image_size
        if width is None and height is None:
            return default
        if width is None:  # keep the default's aspect ratio
            assert height is not None
            width = height * default[0] / default[1]
        if height is None:
            height = width * default[1] / default[0]
        return width, height

    # -- pass 1b: what each node contains, in document order ----------------------------------

    def _collect_items(self) -> None:
        """Per node: its own text pieces, child elements and rendered elements the Dom skips.

        Follows lxml's order the way `Dom` numbers pieces: the element's text, then each
        child followed by its tail. Elements the Dom has no node for but a browser draws
        (iframe, object, svg, select...) become ("extra", i) items with a size, so that the
        space they take is not lost.
        """
        dom = self.dom
        node_of = {el: node for node, el in enumerate(dom.elements)}
        for node, el in enumerate(dom.elements):
            if self.kind[node] == HIDDEN:
                continue
            pieces = self.own_pieces[node]
            items: list[tuple[str, int]] = []
            taken = 0
            if _is_text(el.text) and taken < len(pieces):
                items.append(("piece", pieces[taken]))
                taken += 1
            for child in el:
                if child in node_of:
                    items.append(("node", node_of[child]))
                else:
                    size = _extra_size(child)
                    if size is not None:
                        items.append(("extra", len(self.extras)))
                        self.extras.append(size)
                if _is_text(child.tail) and taken < len(pieces):
                    items.append(("piece", pieces[taken]))
                    taken += 1
            items.extend(("piece", piece) for piece in pieces[taken:])
            self.items[node] = items

    # -- pass 2: inline elements holding blocks become blocks; preferred widths --------------

    def _promote_and_measure(self) -> None:
        dom = self.dom
        n = len(dom)
        holds_block = [False] * n
        for node in range(n - 1, -1, -1):
            if self.kind[node] == INLINE and holds_block[node]:
                self.kind[node] = BLOCK  # e.g. <a><div>...</div></a>: a block box
            up = dom.parent[node]
            if up >= 0 and (self.kind[node] == BLOCK or holds_block[node]):
                holds_block[up] = True
        # Re-anchor below promoted elements, then mark table parts.
        for node in range(n):
            up = dom.parent[node]
            if up >= 0 and self.kind[node] in (BLOCK, INLINE, ATOM, BREAK):
                self.anchor[node] = up if self.kind[up] == BLOCK else self.anchor[up]
            self._mark_role(node)
        inline_px = [0.0] * n
        for piece, owner in enumerate(dom.piece_owner):
            if self.kind[owner] in (BLOCK, INLINE):
                box = owner if self.kind[owner] == BLOCK else self.anchor[owner]
                if box >= 0:
                    inline_px[box] += (len(dom.piece_text[piece]) + 1) * self.char_width(box)
        for node, items in enumerate(self.items):
            box = node if self.kind[node] == BLOCK else self.anchor[node]
            for item_kind, extra in items:
                if item_kind == "extra" and box >= 0:
                    inline_px[box] += self.extras[extra][0]
        for node in range(n - 1, -1, -1):
            kind = self.kind[node]
            if kind == ATOM:
                self.pref[node] = self.atom_size[node][0]
                box = self.anchor[node]
                if box >= 0:
                    inline_px[box] += self.atom_size[node][0]
            elif kind == BLOCK:
                self.pref[node] = self._preferred(node, inline_px[node])

    def _mark_role(self, node: int) -> None:
        dom = self.dom
        if self.kind[node] != BLOCK:
            return
        tag = dom.tag[node]
        up = dom.parent[node]
        up_role = self.role[up] if up >= 0 else ""
        if tag == "table":
            self.role[node] = "table"
        elif tag in TABLE_GROUPS and up_role == "table":
            self.role[node] = "group"
        elif tag == "tr" and up_role in ("table", "group"):
            self.role[node] = "row"
        elif tag in ("td", "th") and up_role == "row":
            self.role[node] = "cell"
        elif tag in LIST_TAGS and self._is_menu(node):
            self.role[node] = "menu"
        elif up >= 0 and self._is_sidebar(node):
            self.role[node] = "side"

    def _is_menu(self, node: int) -> bool:
        """A navigation list whose items are all short: laid out in a row."""
        dom = self.dom
        items = [c for c in dom.children[node] if dom.tag[c] == "li"]
        if len(items) < 2 or any(dom.text_len(c) > self.cfg.menu_label_chars for c in items):
            return False
        if _MENU.search(_class_id(dom.elements[node])):
            return True
        up = dom.parent[node]
        for _ in range(4):  # a nearby <nav> ancestor or a nav/menu container
            if up < 0:
                return False
            if dom.tag[up] == "nav" or _MENU.search(_class_id(dom.elements[up])):
                return True
            up = dom.parent[up]
        return False

    def _is_sidebar(self, node: int) -> bool:
        tag = self.dom.tag[node]
        return tag == "aside" or bool(_SIDEBAR.search(_class_id(self.dom.elements[node])))

    def _preferred(self, node: int, inline_px: float) -> float:
        """Width of the node's content set on one line, capped at the window (px)."""
        dom = self.dom
        best = inline_px
        blocks = [c for c in dom.children[node] if self.kind[c] == BLOCK]
        if self.role[node] == "row":
            best = max(best, sum(self.pref[c] + CELL_SPACING for c in blocks) - CELL_SPACING)
        else:
            for child in blocks:
                _, right, _, left = self.margins(child)
                best = max(best, self.pref[child] + left + right)
            if self.role[node] in ("table", "group"):
                best += 2 * CELL_SPACING
        left, right = self.padding(node)
        return min(best + left + right, self.cfg.viewport_width)

    # -- pass 3: widths and x offsets of blocks ------------------------------------------------

    def _assign_widths(self) -> None:
        dom = self.dom
        for node in range(len(dom)):
            if self.kind[node] != BLOCK:
                continue
            if dom.parent[node] < 0 or self.anchor[node] < 0:
                self._set_width(node, self.cfg.viewport_width, 0.0)
            blocks = [c for c in dom.children[node] if self.kind[c] == BLOCK]
            if not blocks:
                continue
            left, right = self.padding(node)
            inner = max(self.width[node] - left - right, 0.0)
            role = self.role[node]
            if role == "row":
                self._share_row(blocks, inner, left)
            elif role in ("table", "group"):
                for child in blocks:
                    self._set_width(child, max(inner - 2 * CELL_SPACING, 0.0), CELL_SPACING)
            else:
                self._stack_widths(node, blocks, inner, left)

    def _set_width(self, node: int, available: float, x: float) -> None:
        """Width of a block from its parent's available width (explicit width wins)."""
        width = self.explicit.get(node, (None, None))[0]
        if width is None:
            width = _number(self.dom.elements[node].get("width"), available)
        if width is None and self.role[node] == "table":
            width = self.pref[node]  # auto tables shrink to fit
        self.width[node] = min(width, available) if width is not None else available
        self.rel_x[node] = x

    def _stack_widths(self, node: int, blocks: list[int], inner: float, left: float) -> None:
        menu = self.role[node] == "menu"
        for child in blocks:
            _, right_margin, _, left_margin = self.margins(child)
            available = max(inner - left_margin - right_margin, 0.0)
            if menu:  # rel_x follows in _lay_out, when the items are put in rows
                self.width[child] = min(self.pref[child] + 16.0, available)
            else:
                self._set_width(child, available, left + left_margin)
        if self.width[node] >= self.cfg.sidebar_min_parent and not menu:
            self._pair_sidebars(blocks, inner, left)

    def _pair_sidebars(self, blocks: list[int], inner: float, left: float) -> None:
        """Put each sidebar in a column beside its neighbouring (preceding, else next) block."""
        cfg = self.cfg
        for at, side in enumerate(blocks):
            if self.role[side] != "side" or side in self.partner:
                continue
            near = [blocks[at - 1]] if at > 0 else []
            near += [blocks[at + 1]] if at + 1 < len(blocks) else []
            main = next((b for b in near if self.role[b] != "side" and b not in self.partner), None)
            if main is None:
                continue
            width = min(cfg.sidebar_width, 0.3 * inner)
            main_width = max(inner - width - cfg.sidebar_gap, 0.0)
            self.partner[side], self.partner[main] = main, side
            self.width[side], self.width[main] = width, min(self.width[main], main_width)
            if side < main:  # sidebar first in the markup: left column
                self.rel_x[side] = left
                self.rel_x[main] = left + width + cfg.sidebar_gap
            else:
                self.rel_x[main] = left
                self.rel_x[side] = left + inner - width

    def _share_row(self, cells: list[int], inner: float, left: float) -> None:
        """Cells share the row's width in proportion to their preferred widths."""
        room = max(inner - CELL_SPACING * (len(cells) - 1), 0.0)
        wants = [max(self.pref[c], 20.0) for c in cells]
        fixed = [self.explicit.get(c, (None, None))[0] for c in cells]
        for i, c in enumerate(cells):
            given = _number(self.dom.elements[c].get("width"), room)
            fixed[i] = fixed[i] if fixed[i] is not None else given
        taken = sum(f for f in fixed if f is not None)
        free = max(room - taken, 0.0)
        total = sum(w for w, f in zip(wants, fixed, strict=True) if f is None) or 1.0
        x = left
        for cell, want, given in zip(cells, wants, fixed, strict=True):
            width = given if given is not None else free * want / total
            self.width[cell] = min(width, room)
            self.rel_x[cell] = x
            x += self.width[cell] + CELL_SPACING

    # -- pass 4: heights, y offsets, lines ------------------------------------------------------

    def _lay_out(self) -> None:
        for node in range(len(self.dom) - 1, -1, -1):
            if self.kind[node] == BLOCK:
                _Flow(self, node).run()

    # -- pass 5: page coordinates ---------------------------------------------------------------

    def _absolute(self) -> np.ndarray:
        n = len(self.dom)
        out = np.zeros((n, 4))
        for node in range(n):
            kind = self.kind[node]
            if kind == HIDDEN:
                continue
            base = self.anchor[node]
            if kind == IN_ATOM:  # the content of a button, say: the button's box
                out[node] = out[base]
                continue
            x, y = (out[base, 0], out[base, 1]) if base >= 0 else (0.0, 0.0)
            out[node] = (
                x + self.rel_x[node],
                y + self.rel_y[node],
                self.width[node],
                self.height[node],
            )
        return out


class _Flow:
    """Lays out one block's content: child blocks stacked, text and inline elements in lines.

    Children are already laid out (bottom-up pass), so their heights are known; this sets
    their y offsets (and x offsets of menu items), and the boxes of the inline elements whose
    lines belong to this block, relative to it.
    """

    def __init__(self, layout: _StaticLayout, node: int) -> None:
        self.lay = layout
        self.node = node
        self.left, right = layout.padding(node)
        self.inner = max(layout.width[node] - self.left - right, 0.0)
        self.cw = layout.char_width(node)
        self.lh = layout.line_height(node)
        # At least a word per line, as a browser overflows a too-narrow box rather than
        # breaking every character onto a line of its own.
        self.per_line = max(8, int(self.inner // self.cw))
        self.y = 0.0
        self.margin = 0.0  # bottom margin of the block above, not yet added
        self.pending: list[tuple[str, int]] = []
        self.row = (0.0, 0.0, 0.0)  # menu layout: x, top, height of the current row
        # CSS lets a first child's top margin and a last child's bottom margin pass through a
        # parent without padding or border and merge with the parent's own margin.
        self.through = (
            layout.role[node] == "" and layout.dom.parent[node] >= 0 and node not in layout.explicit
        )
        self.top_through = 0.0
        self.last_is_block = False

    def run(self) -> None:
        lay, node = self.lay, self.node
        role = lay.role[node]
        if role in ("table", "group"):
            self.y = CELL_SPACING
        for item in self._items():
            kind, ident = item
            if kind != "node" or lay.kind[ident] in (INLINE, ATOM, BREAK):
                self.pending.append(item)
            elif lay.kind[ident] == BLOCK:
                self._flush()
                self._place(ident, role)
        self._flush()
        if role == "menu":
            _, top, height = self.row
            self.y = top + height
        elif role == "row":
            self._stretch_cells()
        bottom_through = self.margin if self.through and self.last_is_block else 0.0
        height = self.y + self.margin - bottom_through
        if self.top_through or bottom_through:
            top, _, bottom, _ = lay.margins(node)
            lay.collapsed[node] = (max(top, self.top_through), max(bottom, bottom_through))
        if height == 0 and self._shows_a_line():
            height = self.lh
        if role == "cell":
            height += 2.0  # its 1 px padding above and below
        explicit = lay.explicit.get(node, (None, None))[1]
        lay.height[node] = explicit if explicit is not None else height

    def _shows_a_line(self) -> bool:
        """A list item (its bullet) or a block holding only non-breaking spaces has a line."""
        el = self.lay.dom.elements[self.node]
        return self.lay.dom.tag[self.node] == "li" or "\xa0" in (el.text or "")

    def _items(self) -> list[tuple[str, int]]:
        return self.lay.items[self.node]

    def _place(self, child: int, role: str) -> None:
        lay = self.lay
        height = lay.height[child]
        if role == "row":  # cells side by side; x offsets set by _share_row
            lay.rel_y[child] = 0.0
            self.y = max(self.y, height)
            return
        if role in ("table", "group"):
            lay.rel_y[child] = self.y
            self.y += height + CELL_SPACING
            return
        if role == "menu":
            self._place_in_row(child)
            return
        top, bottom = lay.outer_margins(child)
        partner = lay.partner.get(child)
        self.last_is_block = partner is None
        if partner is not None and partner < child:  # beside a block already placed
            lay.rel_y[child] = lay.rel_y[partner]
            self.y = max(self.y, lay.rel_y[child] + height)
            self.margin = max(self.margin, bottom)
            return
        if self.through and partner is None and self.y == 0 and self.margin == 0:
            self.top_through = top  # the first child's margin becomes this block's
        else:
            self.y += max(self.margin, top)
        lay.rel_y[child] = self.y
        self.y += height
        self.margin = bottom

    def _place_in_row(self, child: int) -> None:
        lay = self.lay
        x, top, height = self.row
        width = lay.width[child]
        if x > self.left and x + width > self.left + self.inner:
            x, top, height = self.left, top + height, 0.0
        x = max(x, self.left)
        lay.rel_x[child], lay.rel_y[child] = x, top
        self.row = (x + width, top, max(height, lay.height[child]))

    def _stretch_cells(self) -> None:
        lay = self.lay
        tallest = self.y
        for child in lay.dom.children[self.node]:
            if lay.kind[child] == BLOCK and lay.role[child] == "cell":
                lay.height[child] = tallest

    def _flush(self) -> None:
        """Lay out the pending text and inline elements as lines below the blocks so far."""
        if not self.pending:
            return
        self.y += self.margin
        self.margin = 0.0
        starts, ends, atom_lines, length = self._positions()
        self.last_is_block = self.last_is_block and length == 0
        lines = math.ceil(length / self.per_line)
        heights = [self.lh] * lines
        for line, height in atom_lines:
            heights[line] = max(heights[line], height)
        tops = [self.y]
        for height in heights:
            tops.append(tops[-1] + height)
        for ident, start in starts.items():
            self._inline_box(ident, start, ends[ident], tops, heights)
        self.y = tops[-1]
        self.pending = []

    def _positions(self) -> tuple[dict[int, int], dict[int, int], list[tuple[int, float]], int]:
        """Character-cell start and end of every inline element of the run, in one walk.

        Returns starts, ends, (line, height) of each atom, and the run's length in cells.
        """
        lay, dom, per_line = self.lay, self.lay.dom, self.per_line
        starts: dict[int, int] = {}
        ends: dict[int, int] = {}
        atom_lines: list[tuple[int, float, int]] = []
        pos = 0
        trailing = False  # the run so far ends with a word and its separator
        stack: list[tuple[str, int]] = list(reversed(self.pending))
        while stack:
            kind, ident = stack.pop()
            if kind == "piece":
                pos += len(dom.piece_text[ident]) + 1
                trailing = True
                continue
            if kind == "end":
                ends[ident] = pos
                continue
            trailing = False
            if kind == "extra":
                pos = self._place_atom(pos, *lay.extras[ident], atom_lines)
                continue
            node_kind = lay.kind[ident]
            if node_kind == HIDDEN:
                continue
            if node_kind == BREAK:
                starts[ident] = ends[ident] = pos
                pos = (pos // per_line + 1) * per_line
                continue
            if node_kind == ATOM:
                end = self._place_atom(pos, *lay.atom_size[ident], atom_lines)
                starts[ident], ends[ident] = end - atom_lines[-1][2], end
                pos = end
                continue
            starts[ident] = pos
            stack.append(("end", ident))
            stack.extend(reversed(lay.items[ident]))
        if trailing:
            pos -= 1  # no separator after the last word
        return starts, ends, [(line, height) for line, height, _ in atom_lines], pos

    def _place_atom(
        self, pos: int, width: float, height: float, atom_lines: list[tuple[int, float, int]]
    ) -> int:
        """Put an atom at cell `pos` (or the next line if it does not fit); returns its end."""
        per_line = self.per_line
        cells = min(max(1, math.ceil(width / self.cw)), per_line)
        column = pos % per_line
        if column and column + cells > per_line:
            pos += per_line - column
        atom_lines.append((pos // per_line, height, cells))
        return pos + cells

    def _inline_box(
        self, ident: int, start: int, end: int, tops: list[float], heights: list[float]
    ) -> None:
        lay, per_line, cw = self.lay, self.per_line, self.cw
        lines = len(heights)
        first = min(start // per_line, lines - 1) if lines else 0
        last = min(max(end - 1, start) // per_line, lines - 1) if lines else 0
        x = self.left + (start % per_line) * cw
        if lay.kind[ident] == ATOM:
            width, height = lay.atom_size[ident]
            width = min(width, self.inner)
            top = tops[first] + heights[first] - height if lines else self.y
            box = (x, top, width, height)
        elif not lines:
            box = (self.left, self.y, 0.0, 0.0)
        else:
            # Text sits on the baseline at the bottom of its line: a line made taller by an
            # image does not make the words beside the image taller.
            top = tops[first] + max(heights[first] - self.lh, 0.0)
            if end <= start:
                box = (x, top, 0.0, self.lh)
            elif first == last:
                box = (x, top, (end - start) * cw, self.lh)
            else:
                box = (self.left, top, per_line * cw, tops[last + 1] - top)
        lay.rel_x[ident], lay.rel_y[ident], lay.width[ident], lay.height[ident] = box
        lay.anchor[ident] = self.node


def _is_text(text: str | None) -> bool:
    """Whether `Dom` makes a text piece of this raw text (it drops blank runs)."""
    return bool(text and text.split())


# Elements the Dom skips (no node) that a browser still draws, with their default sizes.
EXTRA_SIZES = {
    "iframe": (300.0, 150.0),
    "object": (300.0, 150.0),
    "embed": (300.0, 150.0),
    "canvas": (300.0, 150.0),
    "svg": (300.0, 150.0),
    "select": (70.0, 19.0),
    "textarea": (180.0, 36.0),
}


def _extra_size(el: lxml.html.HtmlElement) -> tuple[float, float] | None:
    """Size of a drawn element that has no Dom node, or None if it is not drawn."""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    default = EXTRA_SIZES.get(tag)
    if default is None or _is_hidden(el, tag):
        return None
    width, height = _explicit_size(el)
    width = width if width is not None else _number(el.get("width"))
    height = height if height is not None else _number(el.get("height"))
    return (
        width if width is not None else default[0],
        height if height is not None else default[1],
    )


def _is_hidden(el: lxml.html.HtmlElement, tag: str) -> bool:
    if el.get("hidden") is not None:
        return True
    if tag == "input" and (el.get("type") or "").lower() == "hidden":
        return True
    style = el.get("style")
    return bool(style and _DISPLAY_NONE.search(style))


def _explicit_size(el: lxml.html.HtmlElement) -> tuple[float | None, float | None]:
    """width and height in px from the inline style, when given."""
    style = el.get("style")
    sizes: dict[str, float] = {}
    if style:
        for name, value in _STYLE_PX.findall(style):
            sizes.setdefault(name.lower(), float(value))
    return sizes.get("width"), sizes.get("height")


def _number(value: str | None, whole: float | None = None) -> float | None:
    """A size attribute: "300", "300px", or "50%" of `whole`; None if absent or unreadable."""
    if not value:
        return None
    text = value.strip().lower().removesuffix("px")
    try:
        if text.endswith("%"):
            return float(text[:-1]) / 100 * whole if whole is not None else None
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def _class_id(el: lxml.html.HtmlElement) -> str:
    return f"{el.get('class') or ''} {el.get('id') or ''} {el.get('role') or ''}"


# -- chromium ---------------------------------------------------------------------------------

# Every marked element's box in page coordinates, in one round trip.
BOXES_JS = """() => Array.from(document.querySelectorAll('[data-nc-id]'), (el) => {
  const r = el.getBoundingClientRect();
  return [Number(el.getAttribute('data-nc-id')), r.left + window.scrollX, r.top + window.scrollY,
          r.width, r.height];
})"""
_STRIPPED = ("script", "noscript")  # the Dom has no nodes for them; a browser with JS hides both


def marked_html(dom: Dom, url: str | None = None) -> str:
    """The Dom's markup with ``data-nc-id="<node id>"`` on every element, for a browser.

    Works on a copy (the Dom's own tree is shared with other stages and must not change).
    Scripts and noscript blocks are dropped; with `url`, a ``<base href>`` makes the page's
    relative stylesheet and image links resolve.
    """
    if len(dom) == 0:
        return "<html></html>"
    root = dom.elements[0]
    copy = deepcopy(root)
    position = {el: i for i, el in enumerate(root.iter())}
    copies = list(copy.iter())
    for node, el in enumerate(dom.elements):
        copies[position[el]].set(ID_ATTRIBUTE, str(node))
    for el in [e for e in copies if isinstance(e.tag, str) and e.tag.lower() in _STRIPPED]:
        el.drop_tree()  # keeps its tail text
    if url:
        _add_base(copy, url)
    doctype = root.getroottree().docinfo.doctype or ""
    body = lxml.html.tostring(copy, encoding="unicode", method="html")
    return f"{doctype}\n{body}" if doctype else body


def _add_base(root: lxml.html.HtmlElement, url: str) -> None:
    head = root.find("head")
    if head is None:
        head = lxml.html.Element("head")
        root.insert(0, head)
    base = lxml.html.Element("base", href=url)
    head.insert(0, base)


def boxes_from_rects(count: int, rects: Iterable[Iterable[float]]) -> np.ndarray:
    """A (count, 4) box array from ``[node id, x, y, width, height]`` rows (`BOXES_JS`)."""
    out = np.zeros((count, 4))
    for node, x, y, width, height in rects:
        node = int(node)
        if 0 <= node < count and all(math.isfinite(v) for v in (x, y, width, height)):
            out[node] = (x, y, width, height)
    return out


async def render_boxes(page: Any, dom: Dom, url: str | None = None) -> np.ndarray:
    """Boxes of `dom` laid out in an open Playwright page (async API, e.g. scrapy-playwright's).

    The page's content is replaced by the marked Dom; with `url`, the page's stylesheets load.
    """
    if len(dom) == 0:
        return np.zeros((0, 4))
    await page.set_content(marked_html(dom, url), wait_until="load")
    return boxes_from_rects(len(dom), await page.evaluate(BOXES_JS))


class ChromiumGeometry:
    """Boxes from Debian's chromium through Playwright (sync API). One browser, many pages.

    ``with ChromiumGeometry() as geometry: geometry.boxes(dom)`` starts the browser once and
    closes it at the end; used without ``with``, it starts on first use and closes at exit.
    With `load_resources` (and a page `url`) the page's stylesheets and images are fetched,
    otherwise every request is refused and the page is laid out with the default stylesheet.
    Playwright's sync API is bound to one thread and cannot run inside an asyncio loop: in
    Scrapy, use `render_boxes` with scrapy-playwright's page instead.
    """

    name = "chromium"

    def __init__(
        self,
        executable_path: str = CHROMIUM_PATH,
        viewport: tuple[int, int] = (1280, 800),
        timeout_ms: float = 30_000,
        load_resources: bool = False,
    ) -> None:
        self.executable_path = executable_path
        self.viewport = viewport
        self.timeout_ms = timeout_ms
        self.load_resources = load_resources
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None

    def __enter__(self) -> ChromiumGeometry:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self._page is not None:
            return
        if not os.path.exists(self.executable_path):
            raise GeometryError(
                f"chromium not found at {self.executable_path}: install Debian's chromium "
                "(apt-get install chromium) or use the static geometry provider"
            )
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        try:
            self._browser = self._playwright.chromium.launch(
                executable_path=self.executable_path, args=list(CHROMIUM_ARGS), headless=True
            )
            width, height = self.viewport
            context = self._browser.new_context(
                viewport={"width": width, "height": height}, java_script_enabled=False
            )
            if not self.load_resources:
                context.route("**/*", lambda route: route.abort())
            context.set_default_timeout(self.timeout_ms)
            self._page = context.new_page()
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        """Close the browser (a no-op when it is not running)."""
        browser, playwright = self._browser, self._playwright
        self._page = self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray:
        """Boxes of every node of `dom`. `html` is not used: the Dom itself is rendered, so
        that node ids match; `url` resolves relative links when resources are loaded."""
        if len(dom) == 0:
            return np.zeros((0, 4))
        self.start()
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        markup = marked_html(dom, url if self.load_resources else None)
        # A resource that never finished loading does not stop us: the layout is there.
        with contextlib.suppress(PlaywrightTimeout):
            self._page.set_content(markup, wait_until="load")
        return boxes_from_rects(len(dom), self._page.evaluate(BOXES_JS))

    def boxes_many(self, pages: Iterable[tuple[Dom, str | None]]) -> Iterator[np.ndarray]:
        """Boxes of many (dom, url) pages, one after another in the same browser tab."""
        for dom, url in pages:
            yield self.boxes(dom, url=url)


# -- choosing a provider --------------------------------------------------------------------

# -- the flow model ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FlowConfig:
    """The numbers of the flow model (the static model's window, font and character width)."""

    viewport_width: float = 1280.0
    margin: float = 8.0  # <body>'s margin
    line_height: float = 18.4  # px: 16 px text x 1.15
    char_width: float = 6.72  # px: 0.42 em of 16 px text
    indent: float = 4.0  # px of x per nesting level below <body>
    max_indent_levels: int = 40


class FlowGeometry:
    """Boxes from text flow alone: no layout, O(nodes + text runs), vectorised with numpy.

    * Text runs rendered on one line (the Dom's `piece_line`: same block, no <br> between)
      form a line group; a group takes ceil(characters x char width / available width) lines,
      at least one, where the available width is the window less the margins and the
      indentation of the group's block. A run gets the share of its group's lines that its
      characters are.
    * A node's y is the lines of all runs before its first run, its height the lines of its
      own runs (x line height); its x is 8 px + 4 px per level of nesting below <body> (at
      most 40 levels); its width the width left at that x, or for an inline element the width
      of its characters when they fit on one line.
    * Nodes with no visible text (images, empty wrappers, <head>) have zero height.

    It knows no CSS and no columns: a sidebar lies below the article (where it is in the
    source). What it keeps is what the template classifiers use most: position in reading
    order, and how much text a node holds.
    """

    name = "flow"
    Config: ClassVar[type[FlowConfig]] = FlowConfig

    def __init__(self, config: FlowConfig | None = None) -> None:
        self.config = config or FlowConfig()

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray:
        """Boxes of every node; `html` and `url` are not needed by this model."""
        count = len(dom)
        out = np.zeros((count, 4))
        if count == 0:
            return out
        cfg = self.config
        body = dom.body
        depth = np.asarray(dom.depth, dtype=np.float64)
        levels = np.clip(depth - depth[body], 0, cfg.max_indent_levels)
        x = cfg.margin + cfg.indent * levels
        avail = np.maximum(cfg.viewport_width - cfg.margin - x, 10 * cfg.char_width)
        start = np.asarray(dom.piece_start, dtype=np.int64)
        stop = np.asarray(dom.piece_end, dtype=np.int64)
        pieces = len(dom.piece_text)
        if pieces:
            length = np.fromiter(map(len, dom.piece_text), np.float64, pieces)
            line = np.asarray(dom.piece_line, dtype=np.int64)
            # piece_line never decreases: groups are runs of equal values
            first = np.concatenate(([True], line[1:] != line[:-1]))
            group = np.cumsum(first) - 1
            chars = np.bincount(group, weights=length)
            block = np.asarray(dom.piece_block, dtype=np.int64)[first]
            width = avail[np.maximum(block, 0)]
            lines = np.maximum(1.0, np.ceil(chars * cfg.char_width / width))
            share = np.divide(length, chars[group], out=np.zeros(pieces), where=chars[group] > 0)
            prefix = np.concatenate(([0.0], np.cumsum(lines[group] * share)))
            run_chars = np.concatenate(([0.0], np.cumsum(length)))
            y = prefix[start] * cfg.line_height
            height = (prefix[stop] - prefix[start]) * cfg.line_height
            text_width = (run_chars[stop] - run_chars[start]) * cfg.char_width
        else:
            y = height = text_width = np.zeros(count)
        is_block = np.fromiter((t in BLOCK_LEVEL_TAGS for t in dom.tag), bool, count)
        width = np.where(is_block, avail, np.minimum(avail, text_width))
        shown = height > 0
        out[:, 0] = np.where(shown, x, 0.0)
        out[:, 1] = np.where(shown, y, 0.0)
        out[:, 2] = np.where(shown, width, 0.0)
        out[:, 3] = height
        return out


PROVIDERS: dict[str, type] = {
    "static": StaticGeometry,
    "chromium": ChromiumGeometry,
    "flow": FlowGeometry,
}
_shared = threading.local()  # per thread: Playwright's sync objects belong to one thread


def get_geometry_provider(name: str | None = None, **options: Any) -> GeometryProvider:
    """The provider called `name` ("static" when None or empty).

    Without options the instance is shared per thread, so per-page calls reuse one browser;
    with options (e.g. ``load_resources=True`` for chromium) a new instance is made.
    """
    name = (name or DEFAULT_PROVIDER).strip().lower()
    if name not in PROVIDERS:
        raise ValueError(f"unknown geometry provider {name!r}; choose from {sorted(PROVIDERS)}")
    if options:
        if name == "static":
            return StaticGeometry(StaticConfig(**options))
        if name == "flow":
            return FlowGeometry(FlowConfig(**options))
        return ChromiumGeometry(**options)
    cache = getattr(_shared, "providers", None)
    if cache is None:
        cache = _shared.providers = {}
    if name not in cache:
        cache[name] = PROVIDERS[name]()
        if name == "chromium" and threading.current_thread() is threading.main_thread():
            # Playwright's objects must be closed by their own thread; a worker thread's
            # browser goes away with the Playwright driver when the process exits.
            atexit.register(cache[name].close)
    return cache[name]
