"""Markdown of an extractor's selection: the text pieces it chose, with their structure.

An extraction selects text pieces of the page's `Dom` (`selection_pieces`), and `Dom.pieces_text`
joins them into the plain text. This module renders the same pieces, in the same order and
with the same line breaks, as Markdown: each piece is first described by a `Mark` (its text, its
block containers from the outermost in - headings, lists and items, tables, rows and cells,
code blocks, quotes, definition lists, plain blocks - and its inline elements: emphasis, code,
links, and the images just before it), read from the `Dom` while it is at hand; then
`render_marks` turns marks into Markdown without the `Dom` (the site pass keeps the marks of a
page's chosen pieces and renders the ones it keeps). Taking the markup away from the Markdown
leaves the plain text's words in the same order.

Headings are ``#`` lines of their level; lists nest by indentation (``-`` or the item's number);
tables are GitHub-flavoured, their first row the header when it is one (``<th>`` cells or
``<thead>``), else an empty header row; ``<pre>`` is a fenced block of its text as written;
quotes are ``>`` lines; a definition list is each term on a line and its definitions as
``: `` lines; lines broken by ``<br>`` end in two spaces. Links and images are written only
when asked for (images as ``![alt](src)``), their addresses made absolute against the page's
URL. Page text never turns into markup: a backslash goes before its backslashes, backticks,
``*``, ``_``, ``[``, ``]``, ``<``, ``~`` and entity-like ``&`` anywhere, before a heading,
quote, list or rule marker that opens a line, and before ``|`` in a table cell; inline code
is fenced with more backticks than it holds. Nesting deeper than `MAX_BOXES` containers is
rendered at that depth, so no page makes the renderer recurse deeply.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple
from urllib.parse import urljoin

from newscrawl.dom import Dom, pre_joined
from newscrawl.extractors.base import Extraction
from newscrawl.gcpause import paused_gc
from newscrawl.tags import BLOCK_TAGS

__all__ = [
    "MAX_BOXES",
    "Mark",
    "MarkdownOptions",
    "absolute",
    "markdown_of",
    "page_markdown",
    "piece_marks",
    "render_marks",
    "selection_pieces",
    "with_markdown",
]

# Containers a piece's chain keeps (outermost first): deeper ones add no structure.
MAX_BOXES = 24
# Inline ancestors read above a piece's owner, up to its block element.
_MAX_SPANS = 12

# A container: (node id, kind, detail). Kinds: h (detail: level), list (ol, ul), li (marker),
# quote, pre, table, tr (detail "head" for a header row), cell, dl, dt, dd, div.
Box = tuple[int, str, str]
# An inline element: (node id, kind, detail). Kinds: em, strong, code, a (detail: href).
Span = tuple[int, str, str]

_BOX_KIND = {
    **{f"h{n}": "h" for n in range(1, 7)},
    **dict.fromkeys(("ul", "ol", "menu", "dir"), "list"),
    "li": "li",
    "blockquote": "quote",
    "pre": "pre",
    "table": "table",
    "tr": "tr",
    "td": "cell",
    "th": "cell",
    "dl": "dl",
    "dt": "dt",
    "dd": "dd",
}
_NO_BOX = frozenset({"br", "hr", "body", "html"})
_SPAN_KIND = {
    "em": "em",
    "i": "em",
    "cite": "em",
    "strong": "strong",
    "b": "strong",
    "code": "code",
    "kbd": "code",
    "samp": "code",
    "tt": "code",
    "a": "a",
}
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


@dataclass(frozen=True, slots=True)
class MarkdownOptions:
    """What a Markdown rendering writes beside the text's structure: links (``[text](href)``)
    and images (``![alt](src)``)."""

    links: bool = False
    images: bool = False


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


# -- reading the marks from a Dom -------------------------------------------------------------


class _Reader:
    """Containers and inline elements of a page's nodes, each worked out once."""

    def __init__(self, dom: Dom, links: bool = True) -> None:
        self.dom = dom
        self.links = links  # links are written: their addresses are resolved
        self.chains: dict[int, tuple[Box, ...]] = {}
        self.spans: dict[tuple[int, int], tuple[Span, ...]] = {}
        self.ordinals: dict[int, dict[int, int]] = {}

    def boxes(self, node: int) -> tuple[Box, ...]:
        """The containers of `node` (itself included), outermost first, at most `MAX_BOXES`."""
        chains, parent, tags = self.chains, self.dom.parent, self.dom.tag
        path: list[int] = []
        at = node
        while at >= 0 and at not in chains and tags[at] not in ("body", "html"):
            path.append(at)
            at = parent[at]
        chain = chains.get(at, ()) if at >= 0 else ()
        for step in reversed(path):
            box = self._box(step)
            if box is not None:
                chain = _deeper(chain, box)
            chains[step] = chain
        return chains.get(node, chain)

    def _box(self, node: int) -> Box | None:
        tag = self.dom.tag[node]
        kind = _BOX_KIND.get(tag)
        if kind is None:
            return None if tag in _NO_BOX or tag not in BLOCK_TAGS else (node, "div", "")
        if kind == "h":
            return (node, kind, tag[1])
        if kind == "list":
            return (node, kind, "ol" if tag == "ol" else "ul")
        if kind == "li":
            return (node, kind, self._marker(node))
        if kind == "tr":
            return (node, kind, "head" if self._header_row(node) else "")
        return (node, kind, "")

    def _marker(self, item: int) -> str:
        dom = self.dom
        owner = dom.parent[item]
        if owner < 0 or dom.tag[owner] != "ol":
            return "-"
        numbers = self.ordinals.get(owner)
        if numbers is None:
            start = _start_number(dom.elements[owner].get("start"))
            items = [c for c in dom.children[owner] if dom.tag[c] == "li"]
            numbers = self.ordinals[owner] = {c: start + i for i, c in enumerate(items)}
        return f"{numbers.get(item, 1)}."

    def _header_row(self, row: int) -> bool:
        dom = self.dom
        owner = dom.parent[row]
        if owner >= 0 and dom.tag[owner] == "thead":
            return True
        cells = [dom.tag[c] for c in dom.children[row] if dom.tag[c] in ("td", "th")]
        return bool(cells) and all(tag == "th" for tag in cells)

    def address(self, href: str) -> str:
        """A link's or image's address, made absolute against the page's URL when it has one
        (a fragment or a script link stays as written)."""
        return absolute(self.dom.url, href)

    def inline(self, owner: int, block: int) -> tuple[Span, ...]:
        """The inline elements from `block` down to `owner`, outermost first."""
        key = (owner, block)
        found = self.spans.get(key)
        if found is not None:
            return found
        dom = self.dom
        spans: list[Span] = []
        at = owner
        for _ in range(_MAX_SPANS):
            if at < 0 or at == block or dom.tag[at] in BLOCK_TAGS:
                break
            kind = _SPAN_KIND.get(dom.tag[at])
            if kind is not None:
                detail = self.address(dom.href.get(at, "")) if kind == "a" and self.links else ""
                spans.append((at, kind, detail))
            at = dom.parent[at]
        found = self.spans[key] = tuple(reversed(spans))
        return found


def absolute(base: str | None, href: str) -> str:
    """`href` (stripped) resolved against `base`; as written when there is no base, when it
    is a fragment or when it does not resolve."""
    href = href.strip()
    if not base or not href or href.startswith("#"):
        return href
    try:
        return urljoin(base, href)
    except ValueError:
        return href


def _deeper(chain: tuple[Box, ...], box: Box) -> tuple[Box, ...]:
    """`chain` with `box` inside it, at most `MAX_BOXES` long: past that, a plain block
    (div) gives its place to the box inside it, and a plain block inside a full chain of
    structures (lists, tables, code...) is not added, so the structures nearest the text
    stay and the last box is the innermost that counts."""
    if len(chain) < MAX_BOXES:
        return (*chain, box)
    if chain[-1][1] == "div":
        return (*chain[:-1], box)
    return chain


def _start_number(value: str | None) -> int:
    try:
        return max(0, min(int((value or "1").strip()), 10**9))
    except ValueError:
        return 1


def piece_marks(
    dom: Dom, pieces: Iterable[int], images: bool = False, links: bool = True
) -> list[Mark]:
    """The `Mark` of each piece of `pieces` (ids in document order); `images`: also the
    images that lie among the selected pieces (before a selected piece, in its block or right
    after the selected piece before it); `links` False: the links' addresses are not read
    (marks that are rendered without links)."""
    reader = _Reader(dom, links)
    pre = dom.pre_pieces
    chosen = list(pieces)
    pictures = _images(dom, chosen) if images else {}
    # the arrays and the memo bound to locals: this loop runs once per selected piece
    blocks, owners, texts = dom.piece_block, dom.piece_owner, dom.piece_text
    lines, glued, chains = dom.piece_line, dom.piece_glued, reader.chains
    marks: list[Mark] = []
    append, new = marks.append, tuple.__new__  # a Mark made in C, with no Python frame
    for k in chosen:
        block = blocks[k]
        boxes = chains.get(block)
        if boxes is None:
            boxes = reader.boxes(block) if block >= 0 else ()
        found = pre.get(k) if pre else None
        box, text = found if found is not None else (-1, texts[k])
        owner = owners[k]
        spans = reader.inline(owner, block) if box < 0 and owner != block else ()
        append(new(Mark, (k, text, lines[k], glued[k], box, boxes, spans, pictures.get(k, ()))))
    return marks


def _images(dom: Dom, chosen: list[int]) -> dict[int, tuple[tuple[str, str], ...]]:
    """Per selected piece, the images just before it that belong to the selection."""
    picked = set(chosen)
    found: dict[int, list[tuple[str, str]]] = {}
    for node in dom.nodes_of("img"):
        after = dom.piece_start[node]  # the first piece after the image
        if after not in picked:
            continue
        block = _block_of(dom, node)
        if after - 1 in picked or dom.piece_block[after] == block:
            element = dom.elements[node]
            src = absolute(dom.url, element.get("src") or element.get("data-src") or "")
            alt = " ".join((element.get("alt") or "").split())
            if src:
                found.setdefault(after, []).append((src, alt))
    return {k: tuple(v) for k, v in found.items()}


def _block_of(dom: Dom, node: int) -> int:
    at = dom.parent[node]
    for _ in range(64):
        if at < 0 or dom.tag[at] in BLOCK_TAGS:
            break
        at = dom.parent[at]
    return at


# -- which pieces an extraction chose ---------------------------------------------------------


def selection_pieces(dom: Dom, extraction: Extraction) -> tuple[list[int], str]:
    """The piece ids (document order) whose joined text is the extraction's text, and a lead
    line the text has before them ("" when none: NCE puts the title first). The pieces are
    the extraction's own (`Extraction.pieces`) when it gives them; else those of the chosen
    blocks, else of the chosen subtrees, whichever joins to the text; else those of the
    chosen subtrees."""
    from newscrawl.template.sitepass import chosen_pieces

    text = extraction.text
    if not text or not len(dom):
        return [], ""
    if extraction.pieces is not None:
        return list(extraction.pieces), _lead(dom, extraction)
    pairs, exact = chosen_pieces(dom, extraction)
    if exact:
        return [k for k, _ in pairs], ""
    head, _, rest = text.partition("\n")
    if rest and head == extraction.title:
        trimmed = Extraction(extraction.title, rest, extraction.node_ids, extraction.extractor)
        pairs, exact = chosen_pieces(dom, trimmed)
        if exact:
            return [k for k, _ in pairs], head
    return [k for k, _ in pairs], ""


def _lead(dom: Dom, extraction: Extraction) -> str:
    """The title, when the extraction's text opens with it as a line of its own before the
    text of its pieces (NCE's title search adds it)."""
    title, text, pieces = extraction.title, extraction.text, extraction.pieces
    if not title or not pieces or not text.startswith(title + "\n"):
        return ""
    line, first = dom.piece_line, pieces[0]
    count = 1
    while count < min(len(pieces), 256) and line[pieces[count]] == line[first]:
        count += 1
    opening = dom.pieces_text(list(pieces[:count])).partition("\n")[0]
    return "" if opening == title else title


def page_markdown(
    dom: Dom, extraction: Extraction, links: bool = False, images: bool = False
) -> str:
    """The Markdown of what `extraction` (made from `dom`) selected; "" for no text."""
    pieces, lead = selection_pieces(dom, extraction)
    if not pieces:
        return f"# {lead}" if lead else ""
    return markdown_of(dom, pieces, links, images, lead)


def with_markdown(
    dom: Dom, extraction: Extraction, options: MarkdownOptions | None = None
) -> Extraction:
    """`extraction` with its `markdown` rendered (`page_markdown`) from `dom`, the page it was
    made from; unchanged when `options` is None (no Markdown asked for)."""
    if options is None:
        return extraction
    markdown = page_markdown(dom, extraction, options.links, options.images)
    return replace(extraction, markdown=markdown)


def markdown_of(
    dom: Dom, pieces: Sequence[int], links: bool = False, images: bool = False, lead: str = ""
) -> str:
    """The Markdown of the text pieces `pieces` (ids in document order); `lead`: a heading
    line before them."""
    with paused_gc():  # a mark per piece, and no cycle among them (see `render_marks`)
        marks = piece_marks(dom, pieces, images, links)
    body = render_marks(marks, links, images)
    if lead:
        return f"# {lead}\n\n{body}" if body else f"# {lead}"
    return body


# -- rendering ---------------------------------------------------------------------------------


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
