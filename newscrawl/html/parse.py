"""One page's bytes (or text) to its `Dom`, within the byte and element budgets.

`parse_html` decodes the page (`newscrawl.html.decoding`), checks it is one and within budget
(`page_text`), builds its tree (`newscrawl.html.tree.page_tree`) and walks it into a `Dom`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from newscrawl.html.decoding import Decoded, NotHtmlError, decode_page
from newscrawl.html.dom import Dom
from newscrawl.html.gcpause import paused_gc
from newscrawl.html.tree import (
    MIB,
    PageError,
    PageTooLargeError,
    element_estimate,
    page_tree,
    size_error,
)

__all__ = [
    "MAX_PAGE_NODES",
    "PageText",
    "page_text",
    "parse_html",
]

MAX_PAGE_BYTES = 16 * MIB

# Elements a page may have (estimated from its markup before any tree is built): a tree costs
# about 1 KB a node, so 9.9 MB of "<p>a" (2.5 million elements) would take gigabytes.
MAX_PAGE_NODES = 100_000

_TITLE_OPEN = re.compile(r"<title\b", re.IGNORECASE)


def parse_html(
    data: bytes | str,
    url: str | None = None,
    content_type: str | None = None,
    max_bytes: int = MAX_PAGE_BYTES,
    site: str | None = None,
    max_nodes: int = MAX_PAGE_NODES,
) -> Dom:
    """Parse a page (bytes in any charset, or text) into a `Dom`; `site` becomes `Dom.site`.

    The charset decision is kept as `Dom.encoding` and `Dom.encoding_source` (see
    `newscrawl.html.decoding.decode_page`). Markup nested deeper than the parser's limit is
    re-rooted (`newscrawl.html.nesting`) so the text below the limit is kept.

    Raises `PageError` with a plain message for input that is not a page: binary data, a body
    larger than `max_bytes`, or nothing lxml can build a tree from (e.g. an empty file); and
    `PageTooLargeError` for markup of more than `max_nodes` elements (0: no budget), before
    any tree is built.
    """
    text = page_text(data, content_type, max_bytes, max_nodes, url=url)
    decoded = text.decoded
    with paused_gc():  # a list or two and a proxy per element, no cycles among them
        dom = Dom(page_tree(text.text, text.body), url=url, site=site)
        if not dom.piece_text and "<" in dom.title:
            # A mangled </title> made the parser read the whole page as the title. Parse
            # again with that <title> opened as an ordinary element so the body comes back.
            retitled = _TITLE_OPEN.sub("<span", text.text, count=1)
            dom = Dom(page_tree(retitled), url=url, site=site)
    dom.encoding, dom.encoding_source = decoded.encoding, decoded.source
    return dom


@dataclass(frozen=True, slots=True)
class PageText:
    """A page's text as `parse_html` builds its tree from, and the charset decision; `body`:
    the page's bytes where they are exactly `text` in UTF-8 (`Decoded.utf8`), else None."""

    text: str
    decoded: Decoded
    body: bytes | None = None


def page_text(
    data: bytes | str,
    content_type: str | None = None,
    max_bytes: int = MAX_PAGE_BYTES,
    max_nodes: int = MAX_PAGE_NODES,
    url: str | None = None,
) -> PageText:
    """Decode a page and check it is one, within the byte and node budgets (the errors of
    `parse_html`); `page_tree` builds its lxml tree. `url`: where the page came from, which
    tells the language of an undeclared page without a lang attribute (`decode_page`)."""
    size = len(data)
    if size > max_bytes:
        raise size_error(max_bytes, size)
    try:
        decoded = decode_page(data, content_type, url)
    except NotHtmlError as err:
        raise PageError(str(err)) from None
    if not decoded.text.strip():
        raise PageError("page is empty")
    body = data if isinstance(data, bytes) and decoded.utf8 else None
    # a page has fewer elements than "<"s: one count settles it for all but huge pages
    if max_nodes and _angle_brackets(decoded.text, body) > max_nodes:
        elements = element_estimate(decoded.text)
        if elements > max_nodes:
            raise PageTooLargeError(
                f"page has about {elements:,} elements, over the budget of {max_nodes:,}"
            )
    return PageText(decoded.text, decoded, body)


def _angle_brackets(text: str, body: bytes | None) -> int:
    """`text.count("<")`, counted in `body` where it is `text` in UTF-8 (whose one "<" byte is
    the "<" character: a count of bytes, not of wider characters)."""
    return body.count(b"<") if body is not None else text.count("<")
