"""The static model's layout of one page: passes over the preorder ids, no recursion."""

from __future__ import annotations

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.template.geometry.lines import BlockFlow
from newscrawl.template.geometry.stylesheet import (
    ATOM,
    ATOM_SIZES,
    BLOCK,
    BLOCK_LEVEL_TAGS,
    BREAK,
    CELL_SPACING,
    FONT_SCALE,
    HIDDEN,
    HIDDEN_TAGS,
    IN_ATOM,
    INLINE,
    LIST_TAGS,
    MARGIN_EM,
    MARGIN_SIDE_PX,
    MENU,
    PADDING_LEFT_PX,
    SIDEBAR,
    TABLE_GROUPS,
    StaticConfig,
    class_id,
    explicit_size,
    extra_size,
    is_hidden,
    is_text,
    size_number,
)


class StaticLayout:
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
            if tag in HIDDEN_TAGS or is_hidden(el, tag):
                self.kind[node] = HIDDEN
                continue
            scale = FONT_SCALE.get(tag)
            base = self.font[up] if up >= 0 else cfg.font_size
            self.font[node] = cfg.font_size * scale if scale else base
            style = explicit_size(el)
            if tag == "hr" and style[1] is None:
                style = (style[0], 2.0)  # its border
            elif tag in ("td", "th", "tr", "table") and style[1] is None:
                style = (style[0], size_number(el.get("height")))  # old layout tables
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
        width = width if width is not None else size_number(el.get("width"))
        height = height if height is not None else size_number(el.get("height"))
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
            if is_text(el.text) and taken < len(pieces):
                items.append(("piece", pieces[taken]))
                taken += 1
            for child in el:
                if child in node_of:
                    items.append(("node", node_of[child]))
                else:
                    size = extra_size(child)
                    if size is not None:
                        items.append(("extra", len(self.extras)))
                        self.extras.append(size)
                if is_text(child.tail) and taken < len(pieces):
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
        if MENU.search(class_id(dom.elements[node])):
            return True
        up = dom.parent[node]
        for _ in range(4):  # a nearby <nav> ancestor or a nav/menu container
            if up < 0:
                return False
            if dom.tag[up] == "nav" or MENU.search(class_id(dom.elements[up])):
                return True
            up = dom.parent[up]
        return False

    def _is_sidebar(self, node: int) -> bool:
        tag = self.dom.tag[node]
        return tag == "aside" or bool(SIDEBAR.search(class_id(self.dom.elements[node])))

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
            width = size_number(self.dom.elements[node].get("width"), available)
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
            given = size_number(self.dom.elements[c].get("width"), room)
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
                BlockFlow(self, node).run()

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
