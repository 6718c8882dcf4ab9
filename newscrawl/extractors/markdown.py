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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from urllib.parse import urljoin

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.markdown_render import Box, Mark, Span, render_marks
from newscrawl.extractors.selection import chosen_pieces
from newscrawl.html.dom import Dom
from newscrawl.html.gcpause import paused_gc
from newscrawl.html.tags import BLOCK_TAGS

__all__ = [
    "MAX_BOXES",
    "MarkdownOptions",
    "absolute",
    "markdown_of",
    "page_markdown",
    "piece_marks",
    "selection_pieces",
    "with_markdown",
]

# Containers a piece's chain keeps (outermost first): deeper ones add no structure.
MAX_BOXES = 24
# Inline ancestors read above a piece's owner, up to its block element.
_MAX_SPANS = 12


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


@dataclass(frozen=True, slots=True)
class MarkdownOptions:
    """What a Markdown rendering writes beside the text's structure: links (``[text](href)``)
    and images (``![alt](src)``)."""

    links: bool = False
    images: bool = False


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
