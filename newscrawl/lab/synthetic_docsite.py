"""A generated documentation site of real-world page weight, for `newscrawl bench crawl`.

The demo web's pages are small (a few KB, a few dozen links). Real sites are not: a documentation
site's pages weigh tens of KB and hold hundreds of links, most of them the same table of contents
on every page. This site has that shape: 200 pages of about 86 KB and 310 links, each with a
header menu, a sidebar listing every page, a long article (headings, paragraphs with in-text
links, code blocks) and a footer, so the crawl's per-page costs that grow with page size and link
count (the parse, link handling, SiteLevel, extraction) show as they would on a real site. Pages
are generated once, deterministically, and served from memory (`serve_pages`) on a loopback
address.
"""

from __future__ import annotations

import random
from contextlib import AbstractContextManager
from functools import cache

from newscrawl.demo.server import serve_pages

__all__ = ["DOCS_PAGES", "DOCS_SITE", "docs_page", "docs_site"]

DOCS_SITE = "docs"
DOCS_PAGES = 200
_SECTIONS = 26
_VOCABULARY = (
    "the a of to and in is for with that on as by this are be from or an it can which when "
    "function value request server client option default return type object method module "
    "configuration parameter instance setting handler response query cache index build "
    "deploy process thread memory file path route model field schema record stream buffer"
)
_WORDS = _VOCABULARY.split()
_STYLE = "<style>" + "".join(
    f".c{n}{{margin:{n % 7}px;padding:{n % 5}px;color:#{n * 37 % 4096:03x}}}" for n in range(260)
)
_STYLE += "</style>"


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(10, 26))]
    return " ".join(words).capitalize() + "."


def _paragraph(rng: random.Random, page: int) -> str:
    parts = []
    for _ in range(rng.randint(4, 6)):
        sentence = _sentence(rng)
        if rng.random() < 0.22:  # an in-text link to another page, as reference docs have
            target = rng.randrange(DOCS_PAGES)
            sentence += f' See <a class="reference internal" href="/docs/page-{target}.html'
            sentence += f'#section-{rng.randrange(_SECTIONS)}">{_WORDS[target % len(_WORDS)]}</a>.'
        parts.append(sentence)
    return f'<p class="c{page % 260}">' + " ".join(parts) + "</p>"


def _code(rng: random.Random) -> str:
    lines = [
        f"    {rng.choice(_WORDS)}_{n} = {rng.choice(_WORDS)}({rng.randint(0, 99)})"
        for n in range(rng.randint(4, 9))
    ]
    return '<div class="highlight"><pre><code>' + "\n".join(lines) + "</code></pre></div>"


@cache
def _sidebar() -> str:
    """The table of contents every page shows: one link to each page, in nested lists."""
    items = []
    for start in range(0, DOCS_PAGES, 20):
        links = "".join(
            f'<li class="toctree-l2"><a class="reference internal" href="/docs/page-{n}.html">'
            f"Page {n}: {_WORDS[n % len(_WORDS)]} {_WORDS[(n * 7) % len(_WORDS)]}</a></li>"
            for n in range(start, min(start + 20, DOCS_PAGES))
        )
        items.append(f'<li class="toctree-l1"><span>Part {start // 20}</span><ul>{links}</ul></li>')
    return f'<nav class="sidebar" role="navigation"><ul>{"".join(items)}</ul></nav>'


def _menu(kind: str, count: int) -> str:
    links = "".join(
        f'<li><a href="/{kind}/{n}.html">{kind} {_WORDS[n % len(_WORDS)]}</a></li>'
        for n in range(count)
    )
    return f'<{kind} class="site-{kind}"><ul>{links}</ul></{kind}>'


@cache
def docs_page(page: int) -> bytes:
    """Page `page` (0 is the start page) of the site."""
    rng = random.Random(page)
    title = f"Page {page}: {_WORDS[page % len(_WORDS)]} reference"
    sections = []
    for n in range(_SECTIONS):
        body = "".join(_paragraph(rng, page) for _ in range(rng.randint(2, 3)))
        sections.append(
            f'<section id="section-{n}"><h2>{_sentence(rng)[:-1]}</h2>{body}{_code(rng)}</section>'
        )
    article = f'<article role="main"><h1>{title}</h1>{"".join(sections)}</article>'
    html = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f"{_STYLE}<script>window.docs = {{page: {page}}};</script></head><body>"
        f'{_menu("header", 20)}<div class="wrapper">{_sidebar()}{article}</div>'
        f"{_menu('footer', 20)}</body></html>"
    )
    return html.encode()


def _docs_body(path: str) -> bytes | None:
    page = 0 if path == "/" else _page_number(path)
    return None if page is None else docs_page(page)


def _page_number(path: str) -> int | None:
    name = path.removeprefix("/docs/page-").removesuffix(".html")
    if not name.isdigit() or not path.startswith("/docs/page-") or int(name) >= DOCS_PAGES:
        return None
    return int(name)


def docs_site(host: str) -> AbstractContextManager[str]:
    """Serve the documentation site on `host`; the context gives its start URL."""
    return serve_pages(host, _docs_body)
