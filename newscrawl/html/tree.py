"""A page's lxml tree, built as a browser builds it where libxml2 does not, and the page errors.

`page_tree` parses a page's text: markup nested past the parser's depth limit is re-rooted
(`newscrawl.html.nesting`), end tags of ``<body>`` and ``<html>`` do not end the body, markup
HTML does not allow in ``<head>`` ends the head, ``<noframes>`` content is read, and
`shown_noscripts` finds the ``<noscript>`` elements that hold a page's content. `PageError` is
what a page that cannot be turned into a tree raises (`size_error`: too many bytes;
`PageTooLargeError`: too many elements).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import lxml.etree
import lxml.html

from newscrawl.html.nesting import flatten_nesting

__all__ = [
    "PageError",
    "PageTooLargeError",
    "drop_tree",
    "element_estimate",
    "mib",
    "page_tree",
    "scripts_and_noscripts",
    "size_error",
]

MIB = 1024 * 1024

# A <noscript> of at least this many words may be the page's content (see shown_noscripts).
NOSCRIPT_MIN_WORDS = 150

# libxml2's element depth limit in huge-tree mode; deeper markup is re-rooted (see nesting).
PARSER_MAX_DEPTH = 2048

# End tags of <body> and <html>: a browser ignores them (what follows is still the body's),
# libxml2 2.14 drops everything after them.
# Spelt in character classes rather than under re.IGNORECASE (no other character folds to
# these letters): the faster scan, and every page pays it.
_DOCUMENT_END = re.compile(r"</(?:[bB][oO][dD][yY]|[hH][tT][mM][lL])\s*>")
# The same end tags in a page's UTF-8 bytes: `\s` spelt out as the UTF-8 of every character a
# str pattern's `\s` takes (`str.isspace`), so both patterns cut the same markup.
_SPACES = (chr(code) for code in range(0x3001) if chr(code).isspace())
_DOCUMENT_END_BYTES = re.compile(
    b"</(?:[bB][oO][dD][yY]|[hH][tT][mM][lL])(?:"
    + b"|".join(re.escape(space.encode()) for space in _SPACES)
    + b")*>"
)

# Characters lxml refuses in text it is given (the parser keeps them in text it reads).
_XML_UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


class PageError(ValueError):
    """A page that cannot be turned into a DOM: binary, empty of markup, or too large."""


class PageTooLargeError(PageError):
    """A page with more elements than the node budget (refused before its tree is built)."""


def scripts_and_noscripts(
    root: lxml.html.HtmlElement,
) -> tuple[list[lxml.html.HtmlElement], list[lxml.html.HtmlElement]]:
    """The ``<script>`` and the ``<noscript>`` elements of `root`'s tree (root included), each
    in document order: `root.iter("script")` and `root.iter("noscript")` in one pass."""
    scripts: list[lxml.html.HtmlElement] = []
    noscripts: list[lxml.html.HtmlElement] = []
    for el in root.iter("script", "noscript"):
        (noscripts if el.tag.rpartition("}")[2] == "noscript" else scripts).append(el)
    return scripts, noscripts


def shown_noscripts(
    root: lxml.html.HtmlElement, noscripts: Iterable[lxml.html.HtmlElement] | None = None
) -> set[lxml.html.HtmlElement]:
    """The ``<noscript>`` elements of the page that hold its content, to be read as text;
    `noscripts`: those of `root`'s tree in document order, where the caller found them.

    Forum engines such as Discourse and Flarum serve an empty script application and put the
    posts, server-rendered for clients without scripts, inside ``<noscript>``: that is the page's
    text. A noscript counts as content when it holds at least `NOSCRIPT_MIN_WORDS` words and
    more words than the rest of the page's body; tracking pixels and "enable JavaScript"
    notices stay hidden. The rest of the body is counted once, and only when a noscript is
    long enough to need it.
    """
    candidates = []
    for el in root.iter("noscript") if noscripts is None else noscripts:
        if len(el):
            words = len("".join(el.itertext()).split())
            if words >= NOSCRIPT_MIN_WORDS:
                candidates.append((el, words))
    if not candidates:
        return set()
    rest = _visible_body_words(root)
    return {el for el, words in candidates if words > rest}


def _visible_body_words(root: lxml.html.HtmlElement) -> int:
    """Words of the page's body outside scripts, styles and noscripts."""
    texts = root.xpath(
        "//body//text()[not(ancestor::script or ancestor::style or ancestor::noscript)]"
    )
    return sum(len(t.split()) for t in texts)


def size_error(limit: int, size: int | None = None) -> PageError:
    """The error for a page over `limit` bytes (`size`: its size, when known)."""
    found = f"page is {mib(size)}, over" if size is not None else "page is over"
    return PageError(f"{found} the {mib(limit)} limit")


def mib(size: int) -> str:
    """`size` bytes as "1.5 MiB" (whole numbers without ".0"), for messages."""
    return f"{size / MIB:.1f}".removesuffix(".0") + " MiB"


def page_tree(text: str, body: bytes | None = None) -> lxml.html.HtmlElement:
    """The lxml tree `parse_html` walks (markup past the parser's depth limit re-rooted);
    `body`: `text` in UTF-8 when the caller has it (`PageText.body`), parsed as it is."""
    if body is not None:
        try:
            return _parse_tree(_DOCUMENT_END_BYTES.sub(b"", body))
        except _TooDeep:
            pass
    return _build_tree(text)


def element_estimate(text: str) -> int:
    """About the number of elements `text` gives a tree: its tags less its closing tags, an
    upper bound but for the few elements the parser adds (two C-speed counts, no allocation,
    whatever the page's size)."""
    return text.count("<") - text.count("</")


class _TooDeep(Exception):
    """libxml2 stopped at its depth limit: the rest of the page is missing from the tree."""


def _build_tree(text: str) -> lxml.html.HtmlElement:
    """The page's tree; markup nested past the parser's limit is flattened and parsed again.
    Text and links after `</body>` or `</html>` stay in the body, as a browser shows them."""
    text = _DOCUMENT_END.sub("", text)
    try:
        return _parse_tree(_utf8(text))
    except _TooDeep:
        pass
    try:
        return _parse_tree(_utf8(flatten_nesting(text)))
    except _TooDeep:
        raise PageError(
            f"page nests elements deeper than the parser's limit ({PARSER_MAX_DEPTH} levels)"
        ) from None


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _parse_tree(data: bytes) -> lxml.html.HtmlElement:
    # Hand lxml UTF-8 bytes with the encoding stated, so a wrong <meta charset> cannot mislead it.
    parser = _parser()
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (lxml.etree.ParserError, ValueError) as err:
        raise PageError(f"no HTML tree could be built: {err}") from None
    if any("depth" in error.message.lower() for error in parser.error_log.filter_from_fatals()):
        raise _TooDeep
    _expand_noframes(root)
    _close_head(root)
    return root


def _parser() -> lxml.etree.HTMLParser:
    # lxml.etree's parser, not lxml.html's: its elements are plain `_Element`s made in C, while
    # lxml.html looks up a Python class for every element proxy, a cost on every parse.
    # Nothing reads lxml.html's extra methods; `drop_tree` below stands in for the one used.
    return lxml.etree.HTMLParser(
        encoding="utf-8",
        remove_comments=True,
        remove_pis=True,
        huge_tree=True,
        default_doctype=False,
    )


def drop_tree(el: lxml.etree._Element) -> None:
    """Remove `el` and everything in it from its tree, keeping its tail text (which belongs to
    the parent), as lxml.html's ``drop_tree`` does for its own elements."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        previous = el.getprevious()
        if previous is None:
            parent.text = (parent.text or "") + el.tail
        else:
            previous.tail = (previous.tail or "") + el.tail
    parent.remove(el)


# What HTML lets stand in <head> ("in head" insertion mode): a browser ends the head at the first
# other element, or at text, and reads the rest as the body. libxml2 keeps reading such markup
# into the head (an unknown <mbox> before <body> put a whole article there), and head text is
# never page text.
_HEAD_TAGS = frozenset(
    {
        "base", "basefont", "bgsound", "link", "meta", "noframes", "noscript", "script",
        "style", "template", "title",
    }
)  # fmt: skip


def _close_head(root: lxml.etree._Element) -> None:
    """Move what a browser would not read as part of <head> (the first element HTML does not
    allow there, or text, and all after it) to the start of <body>, as browsers parse it."""
    head = root.find("head")
    if head is None:
        return
    lead, cut = _head_end(head)
    if cut is None:
        return
    moved = list(head)[cut:]
    body = root.find("body")
    if body is None:
        body = lxml.etree.SubElement(root, "body")
        head.addnext(body)
    rest, body.text = body.text, lead
    for k, el in enumerate(moved):
        body.insert(k, el)
    if rest and moved:
        moved[-1].tail = (moved[-1].tail or "") + rest
    elif rest:
        body.text = (lead or "") + rest


def _head_end(head: lxml.etree._Element) -> tuple[str | None, int | None]:
    """Where the head ends: (text that starts the body, or None; index of the first child
    that moves to the body), or (None, None) when the head is all head."""
    if head.text and head.text.strip():
        lead, head.text = head.text, None
        return lead, 0
    for i, child in enumerate(head):
        if isinstance(child.tag, str) and child.tag.lower() not in _HEAD_TAGS:
            return None, i
        if child.tail and child.tail.strip():
            lead, child.tail = child.tail, None
            return lead, i + 1
    return None, None


def _expand_noframes(root: lxml.html.HtmlElement) -> None:
    """Parse the markup a <noframes> holds as raw text into elements, so it reads as text.

    The parser keeps a <noframes> body as one raw string (like <script>); parsed, its markup
    becomes structure and its text visible text. Nested <noframes> are expanded in turn.
    """
    pending = list(root.iter("noframes"))
    while pending:
        el = pending.pop()
        raw = el.text or ""
        if "<" not in raw:
            continue  # plain text already
        el.text = None
        try:
            inner = lxml.html.document_fromstring(raw.encode("utf-8", "surrogatepass"), _parser())
        except (lxml.etree.ParserError, ValueError):
            continue  # nothing but comments or processing instructions: no text
        body = inner.find("body")
        container = body if body is not None else inner
        el.text = _XML_UNSAFE.sub("", container.text or "")
        for child in list(container):
            el.append(child)
            pending.extend(child.iter("noframes"))
