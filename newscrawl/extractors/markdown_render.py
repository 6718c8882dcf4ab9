"""Markdown from marks: `render_marks` turns the `Mark`s of selected text pieces into Markdown,
without the page's `Dom` (`newscrawl.extractors.markdown` reads the marks from it).

Headings are ``#`` lines of their level; lists nest by indentation (``-`` or the item's number);
tables are GitHub-flavoured, their first row the header when it is one, else an empty header
row; ``<pre>`` is a fenced block of its text as written; quotes are ``>`` lines; a definition
list is each term on a line and its definitions as ``: `` lines; lines broken by ``<br>`` end
in two spaces. Links and images are written only when asked for (images as ``![alt](src)``).
Page text never turns into markup: a backslash goes before its backslashes, backticks, ``*``,
``_``, ``[``, ``]``, ``<``, ``~`` and entity-like ``&`` anywhere, before a heading, quote, list
or rule marker that opens a line, and before ``|`` in a table cell; inline code is fenced with
more backticks than it holds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from newscrawl.html.gcpause import paused_gc
from newscrawl.html.text_pieces import pre_joined

__all__ = [
    "Mark",
    "render_marks",
]

# A container: (node id, kind, detail). Kinds: h (detail: level), list (ol, ul), li (marker),
# quote, pre, table, tr (detail "head" for a header row), cell, dl, dt, dd, div.
Box = tuple[int, str, str]

# An inline element: (node id, kind, detail). Kinds: em, strong, code, a (detail: href).
Span = tuple[int, str, str]

_FENCE = re.compile(r"`{3,}")

# Line numbers between two lines of one block that two <br> (a blank line) put there: a
# paragraph break (each <br> counts two, as `Dom` numbers lines).
_PARAGRAPH_GAP = 4

# Lines a table cell holds at most, and the containers it may not hold, to be data (else the
# table lays out the page, and its cells are rendered as blocks).
_CELL_LINES = 3

_LAYOUT_KINDS = frozenset({"h", "list", "li", "pre", "quote", "table", "dl"})

# What opens a line that Markdown reads as markup, when a paragraph's text opens with it.
_LINE_MARKUP = re.compile(r"([ \t]*)(#{1,6}|[>+*:=-]|-{2,}|={2,}|\d{1,9}[.)])(?=[ \t]|$)")


class Mark(NamedTuple):
    """One selected text piece as the renderer reads it: its id (a gap in ids starts a new
    line), its text (as written inside a ``<pre>``), its line number, whether it is glued to
    the piece before, its ``<pre>`` (-1: none), its containers and inline elements (outermost
    first), and the images just before it as (src, alt)."""

    piece: int
    text: str
    line: int
    glued: bool
    pre: int
    boxes: tuple[Box, ...]
    spans: tuple[Span, ...]
    images: tuple[tuple[str, str], ...] = ()


class _Node:
    """A container of the selection: its box (None: the top) and its children in order,
    each a container or a paragraph (its lines, each a list of marks)."""

    __slots__ = ("box", "children")

    def __init__(self, box: Box | None) -> None:
        self.box = box
        self.children: list[_Node | list[list[Mark]]] = []


def render_marks(marks: Sequence[Mark], links: bool = False, images: bool = False) -> str:
    """Markdown of marks in document order (see the module docstring)."""
    with paused_gc():  # many small containers, no cycles: reference counting frees them all
        tree = _tree(_lines(marks))
        blocks = _blocks(tree, links, images)
    return "\n\n".join(text for _, text in blocks if text)


def _lines(marks: Sequence[Mark]) -> list[list[Mark]]:
    """Marks grouped into rendered lines as `Dom.pieces_text` breaks them."""
    lines: list[list[Mark]] = []
    current: list[Mark] = []
    piece = number = box = -2  # the previous mark's piece, line and <pre>
    for mark in marks:  # read by index: a mark's fields are (piece, text, line, glued, pre...)
        follows = mark[0] == piece + 1
        pre = mark[4]
        if follows and (pre == box >= 0 or (mark[2] == number and pre < 0 and box < 0)):
            current.append(mark)
        else:
            current = [mark]
            lines.append(current)
        piece, number, box = mark[0], mark[2], pre
    return lines


def _tree(lines: list[list[Mark]]) -> _Node:
    """The containers of the lines as a tree; lines of one block in a row make a paragraph."""
    top = _Node(None)
    stack = [top]  # the open containers: the top, then those of `opened`
    opened: tuple[Box, ...] = ()
    for line in lines:
        boxes = line[0][5]  # its boxes
        if boxes is not opened:
            depth = 0
            for mine, theirs in zip(boxes, opened, strict=False):
                if mine[0] != theirs[0]:
                    break
                depth += 1
            del stack[depth + 1 :]
            opened = boxes
        else:
            depth = len(boxes)
        for box in boxes[depth:]:
            node = _Node(box)
            stack[-1].children.append(node)
            stack.append(node)
        children = stack[-1].children
        last = children[-1] if children else None
        if isinstance(last, list) and line[0][2] - last[-1][-1][2] < _PARAGRAPH_GAP:
            last.append(line)
        else:
            children.append([line])
    return top


def _blocks(node: _Node, links: bool, images: bool) -> list[tuple[str, str]]:
    """The Markdown blocks of a container as (kind, text), in order."""
    kind = node.box[1] if node.box is not None else "div"
    if kind == "h":
        assert node.box is not None
        text = _flat(node, links, images)
        return [("h", f"{'#' * int(node.box[2])} {text}")] if text else []
    if kind == "pre":
        return [("pre", _code(node))]
    if kind in ("list", "li"):
        return [("list", _list(node, links, images))]
    if kind == "quote":
        inner = "\n\n".join(text for _, text in _child_blocks(node, links, images))
        return [("quote", _prefixed(inner, "> ", ">"))] if inner else []
    if kind in ("table", "tr"):
        return _table(node, links, images)
    if kind == "dl":
        return [("dl", _definitions(node, links, images))]
    return _child_blocks(node, links, images)


def _child_blocks(node: _Node, links: bool, images: bool) -> list[tuple[str, str]]:
    blocks: list[tuple[str, str]] = []
    for child in node.children:
        if isinstance(child, _Node):
            blocks.extend(_blocks(child, links, images))
        else:
            text = "  \n".join(_escaped(_inline(line, links, images)) for line in child)
            if text:
                blocks.append(("p", text))
    return blocks


def _escaped(line: str) -> str:
    """A paragraph's line with a backslash before an opening that Markdown would read as
    markup (a heading, quote, list or definition marker, a rule)."""
    found = _LINE_MARKUP.match(line)
    if found is None:
        return line
    at = found.end() - 1 if found.group(2)[0].isdigit() else found.start(2)
    return line[:at] + "\\" + line[at:]


def _all_lines(node: _Node) -> list[list[Mark]]:
    """Every line in the container, in order (containers are at most `MAX_BOXES` deep)."""
    found: list[list[Mark]] = []
    for child in node.children:
        if isinstance(child, _Node):
            found.extend(_all_lines(child))
        else:
            found.extend(child)
    return found


def _flat(node: _Node, links: bool, images: bool) -> str:
    """The container's text on one line."""
    parts = (_inline(line, links, images) for line in _all_lines(node))
    return " ".join(" ".join(part.split()) for part in parts if part.strip())


def _code(node: _Node) -> str:
    code = "\n".join(_code_line(line) for line in _all_lines(node))
    longest = max((len(run) for run in _FENCE.findall(code)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code}\n{fence}"


def _code_line(line: list[Mark]) -> str:
    """A code block's line as written (its pieces joined as `Dom.pieces_text` joins them)."""
    parts = [line[0].text]
    for mark in line[1:]:
        parts.append(pre_joined(parts[-1], mark.text, mark.glued))
    return "".join(parts)


def _list(node: _Node, links: bool, images: bool) -> str:
    """A list (or an item without one) as Markdown lines; nested lists are indented."""
    items = node.children if node.box is not None and node.box[1] == "list" else [node]
    out: list[str] = []
    for child in items:
        if isinstance(child, _Node) and child.box is not None and child.box[1] == "li":
            out.append(_item(child, child.box[2], links, images))
        elif isinstance(child, _Node) and child.box is not None and child.box[1] == "list":
            out.append(_prefixed(_list(child, links, images), "  ", ""))
        else:
            holder = _Node(None)
            holder.children.append(child)
            out.append(_item(holder, "-", links, images))
    return "\n".join(text for text in out if text)


def _item(node: _Node, marker: str, links: bool, images: bool) -> str:
    text = ""
    for kind, block in _child_blocks(node, links, images):
        if not block:
            continue
        if text:
            text += "\n" if kind == "list" else "\n\n"
        text += block
    if not text:
        return ""
    indent = " " * (len(marker) + 1)
    first, _, rest = text.partition("\n")
    return f"{marker} {first}" + ("\n" + _prefixed(rest, indent, "") if rest else "")


def _prefixed(text: str, prefix: str, blank: str) -> str:
    return "\n".join(prefix + line if line.strip() else blank for line in text.split("\n"))


def _definitions(node: _Node, links: bool, images: bool) -> str:
    parts: list[str] = []
    for child in node.children:
        kind = child.box[1] if isinstance(child, _Node) and child.box is not None else ""
        if kind == "dt":
            assert isinstance(child, _Node)
            text = _flat(child, links, images)
            if text:
                parts.append(("\n" if parts else "") + text)
        elif kind == "dd":
            assert isinstance(child, _Node)
            inner = "\n\n".join(block for _, block in _child_blocks(child, links, images))
            if inner:
                first, _, rest = inner.partition("\n")
                parts.append(f": {first}" + ("\n" + _prefixed(rest, "  ", "") if rest else ""))
        else:
            holder = _Node(None)
            holder.children.append(child)
            parts.extend(block for _, block in _child_blocks(holder, links, images))
    return "\n".join(parts)


def _table(node: _Node, links: bool, images: bool) -> list[tuple[str, str]]:
    """The table's rows as GitHub-flavoured tables; what lies between rows (a caption, text
    outside any cell) as blocks of its own, in place."""
    blocks: list[tuple[str, str]] = []
    rows: list[_Node] = []
    parts = _table_parts(node)
    if _is_layout(parts):
        return _layout_blocks(node, links, images)
    for part in parts:
        if isinstance(part, _Node) and part.box is not None and part.box[1] == "tr":
            rows.append(part)
            continue
        if rows:
            blocks.append(("table", _grid(rows, links, images)))
            rows = []
        holder = _Node(None)
        holder.children.append(part)
        blocks.extend(_child_blocks(holder, links, images))
    if rows:
        blocks.append(("table", _grid(rows, links, images)))
    return blocks


def _is_layout(parts: list[_Node | list[list[Mark]]]) -> bool:
    """Whether a table lays out a page rather than holding data: it has one column, or a
    cell holds a heading, list, code, quote or table, or more than `_CELL_LINES` lines."""
    widest = 0
    for part in parts:
        if _kind(part) != "tr":
            continue
        assert isinstance(part, _Node)
        widest = max(widest, len(part.children))
        for cell in part.children:
            if isinstance(cell, list):
                if len(cell) > _CELL_LINES:
                    return True
            elif len(_all_lines(cell)) > _CELL_LINES or _holds_layout(cell):
                return True
    return widest <= 1


def _holds_layout(node: _Node) -> bool:
    return any(
        isinstance(child, _Node) and (child.box[1] in _LAYOUT_KINDS or _holds_layout(child))  # type: ignore[index]
        for child in node.children
    )


def _layout_blocks(node: _Node, links: bool, images: bool) -> list[tuple[str, str]]:
    """A layout table's content as blocks: its rows and cells are plain containers."""
    blocks: list[tuple[str, str]] = []
    for child in node.children:
        if isinstance(child, _Node) and _kind(child) in ("tr", "cell", "div"):
            blocks.extend(_layout_blocks(child, links, images))
        elif isinstance(child, _Node):
            blocks.extend(_blocks(child, links, images))
        else:
            holder = _Node(None)
            holder.children.append(child)
            blocks.extend(_child_blocks(holder, links, images))
    return blocks


def _table_parts(node: _Node) -> list[_Node | list[list[Mark]]]:
    """The rows of a table (through its row groups, <thead>, <tbody>, <tfoot>), and what lies
    outside the rows, in order."""
    if node.box is not None and node.box[1] == "tr":
        return [node]
    parts: list[_Node | list[list[Mark]]] = []
    for child in node.children:
        if _kind(child) == "div" and any(_kind(c) == "tr" for c in child.children):  # type: ignore[union-attr]
            parts.extend(child.children)  # type: ignore[union-attr]
        else:
            parts.append(child)
    return parts


def _kind(child: _Node | list[list[Mark]]) -> str:
    """The kind of a container ("" for a paragraph or the top)."""
    return child.box[1] if isinstance(child, _Node) and child.box is not None else ""


def _grid(rows: list[_Node], links: bool, images: bool) -> str:
    cells = [[_cell(child, links, images) for child in row.children] for row in rows]
    width = max((len(row) for row in cells), default=0)
    if not width:
        return ""
    lines: list[str] = []
    if rows[0].box is not None and rows[0].box[2] == "head":
        lines.append(_row(cells[0], width))
        cells = cells[1:]
    else:
        lines.append(_row([], width))
    lines.append("|" + " --- |" * width)
    lines.extend(_row(row, width) for row in cells)
    return "\n".join(lines)


def _cell(child: _Node | list[list[Mark]], links: bool, images: bool) -> str:
    if isinstance(child, _Node):
        text = _flat(child, links, images)
    else:
        text = " ".join(_inline(line, links, images) for line in child)
    return " ".join(text.split()).replace("|", "\\|")


def _row(cells: list[str], width: int) -> str:
    padded = cells + [""] * (width - len(cells))
    return "|" + "".join(f" {cell} |" if cell else "  |" for cell in padded)


def _inline(line: list[Mark], links: bool, images: bool) -> str:
    """One rendered line: the pieces joined as in the text, with emphasis, code and (when
    asked for) links and images."""
    if len(line) == 1:  # most lines are one piece
        only = line[0]
        if not only.spans and not only.images and only.pre < 0:
            return _literal(only.text)
    elif not any(mark.spans or mark.images or mark.pre >= 0 for mark in line):
        return _literal(
            "".join(
                mark.text if not index or mark.glued else " " + mark.text
                for index, mark in enumerate(line)
            )
        )
    out: list[str] = []
    opened: tuple[Span, ...] = ()
    fences: dict[int, tuple[str, str]] = {}  # inline code's, worked out at its first code
    for index, mark in enumerate(line):
        if mark.pre >= 0:  # a code block's text, as written
            out.append(pre_joined(out[-1], mark.text, mark.glued) if out else mark.text)
            continue
        spans = _shown(mark.spans, links)
        in_code = bool(spans) and spans[-1][1] == "code"  # inline code is the innermost span
        if in_code and not fences:
            fences = _code_fences(line, links)
        common = 0
        while (
            common < len(opened) and common < len(spans) and opened[common][0] == spans[common][0]
        ):
            common += 1
        out.extend(_close(span, fences) for span in reversed(opened[common:]))
        if index and not mark.glued:
            out.append(" ")
        if images:
            out.extend(f"![{_literal(alt)}]({_target(src)})" for src, alt in mark.images)
        out.extend(_open(span, fences) for span in spans[common:])
        out.append(mark.text if in_code else _literal(mark.text))
        opened = spans
    out.extend(_close(span, fences) for span in reversed(opened))
    return "".join(out)


_OPEN = {"em": "*", "strong": "**", "code": "`", "a": "["}
# Characters of page text that Markdown would read as markup anywhere in a line: they are
# written after a backslash (an entity-like "&name;" too, else it would be read as its character).
_INLINE_MARKUP = re.compile(r"[\\`*_\[\]<~]|&(?=#?\w+;)")
_BACKTICKS = re.compile(r"`+")


def _literal(text: str) -> str:
    """Page text as Markdown that reads back as the same characters (see `_INLINE_MARKUP`)."""
    # most texts hold none of the characters: these scans (in C) are cheaper than the pattern's
    if (
        "\\" in text
        or "`" in text
        or "*" in text
        or "_" in text
        or "[" in text
        or "]" in text
        or "<" in text
        or "~" in text
        or "&" in text
    ):
        return _INLINE_MARKUP.sub(_backslashed, text)
    return text


def _backslashed(found: re.Match[str]) -> str:
    return "\\" + found.group()


def _target(href: str) -> str:
    """A link or image target as Markdown reads it: in angle brackets when it holds spaces or
    parentheses."""
    if not any(c in href for c in " ()<>"):
        return href
    return "<" + href.replace("<", "%3C").replace(">", "%3E") + ">"


def _code_fences(line: list[Mark], links: bool) -> dict[int, tuple[str, str]]:
    """Per inline code element of the line, what opens and closes it: one backtick more than
    the longest run of backticks in its text (so a literal one never closes it), and a space
    inside where its text starts or ends with a backtick."""
    texts: dict[int, list[str]] = {}
    for mark in line:
        for span in _shown(mark.spans, links):
            if span[1] == "code":
                texts.setdefault(span[0], []).append(mark.text)
    fences: dict[int, tuple[str, str]] = {}
    for node, parts in texts.items():
        code = "".join(parts)
        fence = "`" * (max((len(run) for run in _BACKTICKS.findall(code)), default=0) + 1)
        opening = fence + " " if code.startswith("`") else fence
        fences[node] = (opening, " " + fence if code.endswith("`") else fence)
    return fences


def _open(span: Span, fences: dict[int, tuple[str, str]]) -> str:
    if span[1] == "code":
        return fences.get(span[0], ("`", "`"))[0]
    return _OPEN[span[1]]


def _close(span: Span, fences: dict[int, tuple[str, str]]) -> str:
    if span[1] == "a":
        return f"]({_target(span[2])})"
    if span[1] == "code":
        return fences.get(span[0], ("`", "`"))[1]
    return _OPEN[span[1]]


def _shown(spans: tuple[Span, ...], links: bool) -> tuple[Span, ...]:
    """The spans written: links only when asked for, nothing inside inline code."""
    shown: list[Span] = []
    for span in spans:
        if span[1] == "a" and (not links or not span[2]):
            continue
        shown.append(span)
        if span[1] == "code":
            break
    return tuple(shown)
