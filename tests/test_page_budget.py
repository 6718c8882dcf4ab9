"""A page's node budget: a huge page is refused before any tree is built (bounded memory, a
clear reason), an extractor over its own budget gives way to the next one, and the spider's
links come out of the parse pool's function the same as from the DOM."""

from __future__ import annotations

import tracemalloc

import pytest

from newscrawl.crawl.parsepool import ParsePool, links_of, page_links
from newscrawl.demo.faults import many_nodes_page
from newscrawl.html.parse import MAX_PAGE_NODES, parse_html
from newscrawl.html.tree import PageError, PageTooLargeError


def test_a_page_of_millions_of_elements_is_refused_before_its_tree_is_built() -> None:
    page = many_nodes_page()  # 9.9 MB of <p>a: a tree of it took 4.6 GB
    assert len(page) < 10 * 1024 * 1024  # under the download limit: only the budget stops it
    tracemalloc.start()
    try:
        with pytest.raises(PageTooLargeError, match="over the budget of 100,000"):
            parse_html(page, "http://example.org/", "text/html; charset=utf-8")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024  # the text and two counts, no tree
    assert issubclass(PageTooLargeError, PageError)  # callers that refuse pages catch it too


def test_the_budget_is_a_parameter_and_zero_turns_it_off() -> None:
    page = b"<html><body>" + b"<p>a" * 500 + b"</body></html>"
    with pytest.raises(PageTooLargeError):
        parse_html(page, max_nodes=400)
    assert len(parse_html(page, max_nodes=0).tag) > 500
    assert len(parse_html(page).tag) < MAX_PAGE_NODES


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "windows-1252", "text"])
def test_the_budget_counts_the_same_markup_whatever_the_pages_encoding(encoding: str) -> None:
    """UTF-8 bytes are counted as bytes, other pages as text: the same count either way (the
    "<" of a wider character, U+3C3C, is no tag)."""
    html = "<html><body>" + "<p>\u3c3c \u00e9\u00e9" * 300 + "</body></html>"
    page = html if encoding == "text" else html.encode(encoding, "replace")
    assert len(parse_html(page, max_nodes=303).tag) > 300
    with pytest.raises(PageTooLargeError):
        parse_html(page, max_nodes=301)


def test_the_pool_function_gives_the_links_the_dom_gives() -> None:
    page = (
        b'<html><head><base href="/news/"><link rel="alternate" type="application/rss+xml"'
        b' href=" /feed.xml "></head><body><a href="a.html">A</a><script>'
        b'<a href="not-a-link">x</a></script><a href=" /b ">B</a><a>none</a></body></html>'
    )
    links = page_links(page, "http://example.org/x", "text/html", MAX_PAGE_NODES)
    assert links == links_of(parse_html(page, "http://example.org/x", "text/html"))
    assert links.base == "/news/"
    assert links.link_elements == (("alternate", "application/rss+xml", "/feed.xml"),)
    assert links.hrefs == ("a.html", " /b ", "")


def test_an_inline_parse_pool_refuses_with_the_page_error() -> None:
    pool = ParsePool(workers=0, max_nodes=10)
    results: list[object] = []
    pool.links(b"<p>a" * 50, "http://example.org/", "text/html").addBoth(results.append)
    assert isinstance(getattr(results[0], "value", None), PageTooLargeError)


def _pipeline(**settings: object):  # type: ignore[no-untyped-def]
    from newscrawl.pipelines.extraction import ExtractionPipeline
    from scrapy.utils.test import get_crawler

    chain = {"NEWSCRAWL_EXTRACTORS": ["learned", "cetd-tpc"]}
    crawler = get_crawler(settings_dict={**chain, **settings})
    crawler.stats.open_spider()
    return ExtractionPipeline.from_crawler(crawler), crawler


def _item(html: str):  # type: ignore[no-untyped-def]
    from datetime import UTC, datetime

    from newscrawl.crawl.items import PageItem

    return PageItem(
        url="http://example.org/a",
        final_url="http://example.org/a",
        site="example.org",
        crawl="t",
        fetched_at=datetime.now(UTC),
        status=200,
        html=html.encode(),
    )


def test_a_page_over_an_extractors_budget_goes_to_the_next_extractor() -> None:
    pipeline, crawler = _pipeline(NEWSCRAWL_EXTRACTOR_MAX_NODES={"learned": 50})
    body = "".join(f"<p>Paragraph {i} of a long page, with words enough.</p>" for i in range(80))
    item = _item(f"<html><body><article>{body}</article></body></html>")
    pipeline.fill(item)
    assert item.extractor == "cetd-tpc" and "Paragraph 79" in item.text
    assert crawler.stats.get_value("newscrawl/errors/extract_budget") == 1


@pytest.mark.parametrize("keep_all", [False, True])
def test_the_learned_extractors_empty_text_is_its_answer(keep_all: bool) -> None:
    """A page whose blocks the model scores as no main text (a grid of links) stays empty in
    the crawl, as `newscrawl extract` leaves it: CETD-TPC, which has text for it, is not
    asked (or, keeping every text, not chosen)."""
    from newscrawl.extractors import get_extractor
    from newscrawl.html.parse import parse_html

    links = "".join(f'<li><a href="/p/{i}">Section {i}</a></li>' for i in range(60))
    html = f"<html><head><title>Index</title></head><body><ul>{links}</ul></body></html>"
    dom = parse_html(html.encode())
    assert not get_extractor("learned").extract(dom).text  # the model's answer: nothing
    assert get_extractor("cetd-tpc").extract(dom).text  # what the old fallback wrote
    pipeline, _ = _pipeline(NEWSCRAWL_KEEP_ALL_TEXTS=keep_all)
    item = _item(html)
    pipeline.fill(item)
    assert item.text == "" and item.extractor == "learned"
    assert bool(item.texts.get("cetd-tpc")) == keep_all  # run only when every text is kept


@pytest.mark.parametrize(
    "page",
    [
        b"<title>Broken<a href='/x'>x</a><p>all of the page read as title",  # mangled </title>
        b"<body><noscript><a href='/pixel'>img</a></noscript><a href='/kept'>k</a></body>",
        b"<body><noscript>" + b"<p><a href='/post'>post</a> " + b"words " * 300 + b"</p>"
        b"</noscript><div id=app></div></body>",  # a forum's noscript content: read as text
        b"<body><template><a href='/t'>t</a></template><style>a{}</style><a href=/s>s</a>",
    ],
)
def test_the_pool_links_match_the_dom_on_odd_pages(page: bytes) -> None:
    url = "http://example.org/"
    assert page_links(page, url, "text/html", 0) == links_of(parse_html(page, url, "text/html"))
