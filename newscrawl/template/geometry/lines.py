"""The static model's line layout of one block: child blocks stacked, text and inline
elements in lines."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from newscrawl.template.geometry.stylesheet import (
    ATOM,
    BLOCK,
    BREAK,
    CELL_SPACING,
    HIDDEN,
    INLINE,
)

if TYPE_CHECKING:
    from newscrawl.template.geometry.layout import StaticLayout


class BlockFlow:
    """Lays out one block's content: child blocks stacked, text and inline elements in lines.

    Children are already laid out (bottom-up pass), so their heights are known; this sets
    their y offsets (and x offsets of menu items), and the boxes of the inline elements whose
    lines belong to this block, relative to it.
    """

    def __init__(self, layout: StaticLayout, node: int) -> None:
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
