"""A generated site of element-heavy pages, for `newscrawl bench crawl --variants heavy-site`.

Each page holds about `HEAVY_ELEMENTS` elements (just under the crawl's per-page element budget,
NEWSCRAWL_MAX_PAGE_NODES) in about 1.9 MB: a header menu and a footer the same on every page,
a short article of its own, and a long data table whose first half is the same on every page
(template) and whose second half is the page's own. The home page links to every page, each
page to its two neighbours, so a crawl finds them all. A site of many such pages is what makes
the site pass's memory grow with the site when it holds every page's nodes at once. Pages are
generated from their number on each request (deterministic, nothing kept) and served from
loopback (`serve_pages`).
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager

from newscrawl.demo.server import serve_pages

__all__ = ["HEAVY_ELEMENTS", "HEAVY_SITE_NAME", "heavy_page", "heavy_site"]

HEAVY_SITE_NAME = "heavy-site"
HEAVY_ELEMENTS = 95_000
_WORDS = [
    "harbor",
    "council",
    "budget",
    "river",
    "bridge",
    "school",
    "market",
    "festival",
    "station",
    "library",
    "museum",
    "weather",
    "transit",
    "housing",
    "park",
    "election",
    "court",
    "hospital",
    "college",
    "theatre",
    "stadium",
]
_PAGE = re.compile(r"^/page-(\d+)\.html$")
_ROW_ELEMENTS = 3  # <tr><td></td><td></td></tr>


def _header(pages: int) -> str:
    menu = "".join(
        f'<li><a href="/page-{n}.html">{_WORDS[n % len(_WORDS)]}</a></li>' for n in range(8)
    )
    return f'<header class="top"><nav class="menu"><ul>{menu}</ul></nav></header>'


def _article(number: int) -> str:
    paragraphs = "".join(
        f"<p>Report {number}, part {k}: the {_WORDS[(number + k) % len(_WORDS)]} "
        f"committee met on day {number * 7 + k} and agreed on item {number * 13 + k}.</p>"
        for k in range(12)
    )
    return f'<article class="story"><h1>Report number {number}</h1>{paragraphs}</article>'


def _table(number: int, rows: int) -> str:
    shared = rows // 2
    cells = [
        f"<tr><td>{k}</td><td>{_WORDS[k % len(_WORDS)]} listing {k}</td></tr>"
        for k in range(shared)
    ]
    cells += [
        f"<tr><td>{number}.{k}</td>"
        f"<td>{_WORDS[(k + number) % len(_WORDS)]} entry {number * k}</td></tr>"
        for k in range(rows - shared)
    ]
    return f'<table class="data"><tbody>{"".join(cells)}</tbody></table>'


def heavy_page(number: int, pages: int, elements: int = HEAVY_ELEMENTS) -> bytes:
    """Page `number` (0 <= number < pages) of the heavy site: about `elements` elements."""
    neighbours = "".join(
        f'<a href="/page-{n}.html">page {n}</a> '
        for n in (number - 1, number + 1)
        if 0 <= n < pages
    )
    head = f"<html><head><title>Report number {number}</title></head><body>{_header(pages)}"
    body = f'{_article(number)}<div class="pager">{neighbours}</div>'
    fixed = 60  # html, head, title, body, header, the article, the pager, the footer
    table = _table(number, max(1, (elements - fixed) // _ROW_ELEMENTS))
    footer = '<footer class="bottom"><p>Heavy Site, a generated site.</p></footer></body></html>'
    return (head + body + table + footer).encode()


def _home(pages: int) -> bytes:
    links = "".join(f'<li><a href="/page-{n}.html">page {n}</a></li>' for n in range(pages))
    return f"<html><body><h1>Heavy Site</h1><ul>{links}</ul></body></html>".encode()


def heavy_site(
    host: str, pages: int, elements: int = HEAVY_ELEMENTS
) -> AbstractContextManager[str]:
    """Serve a heavy site of `pages` pages (plus its home page) on `host`; yields the start URL."""

    def body(path: str) -> bytes | None:
        if path == "/":
            return _home(pages)
        found = _PAGE.match(path)
        if found is None or int(found.group(1)) >= pages:
            return None
        return heavy_page(int(found.group(1)), pages, elements)

    return serve_pages(host, body)
