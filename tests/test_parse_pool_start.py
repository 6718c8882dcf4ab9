"""The parse pool starts its workers with the crawl's second page (a one-page crawl starts none),
and the pages that come back while they are still starting are parsed on the reactor thread
rather than waiting for them."""

from __future__ import annotations

from typing import Any

from newscrawl.crawl.parsepool import ParsePool, page_links

PAGE = b'<html><body><a href="/a">a</a><script><a href="/hidden">x</a></script>' \
       b'<a href="/b">b</a></body></html>'  # fmt: skip


def _result(deferred: Any) -> Any:
    found: list[Any] = []
    deferred.addCallback(found.append)
    return found[0] if found else None


def test_a_page_is_parsed_inline_while_the_workers_start_then_in_the_pool() -> None:
    pool = ParsePool(1)
    pool.start()
    try:
        first = _result(pool.links(PAGE, "http://site.test/", "text/html"))
        assert first is not None, "the first page waited for a starting worker"
        links, dom = first
        assert dom is not None  # parsed here, with the DOM model
        assert links == page_links(PAGE, "http://site.test/", "text/html", pool.max_nodes)
        assert pool._started.wait(120)  # the worker answered its start job
        later = pool.links(PAGE, "http://site.test/", "text/html")
        assert _result(later) is None  # sent to the worker: answered on the reactor later
    finally:
        pool.close()


def test_the_workers_start_with_the_second_page_not_before() -> None:
    pool = ParsePool(1)
    try:
        first = _result(pool.links(PAGE, "http://site.test/", "text/html"))
        assert first is not None, "the first page waited for a worker"
        assert first[1] is not None and pool._pool is None  # parsed here; no worker started
        second = pool.links(PAGE, "http://site.test/", "text/html")
        assert pool._pool is not None  # started with the second page
        assert pool._started.wait(120)
        found: list[Any] = []
        second.addCallback(found.append)
        later = pool.links(PAGE, "http://site.test/", "text/html")
        assert _result(later) is None  # sent to the worker: answered on the reactor later
    finally:
        pool.close()
    assert found and found[0][0] == first[0]


def test_without_workers_every_page_is_parsed_inline() -> None:
    pool = ParsePool(0)
    pool.start()
    links, dom = _result(pool.links(PAGE, "http://site.test/", "text/html"))
    assert dom is not None and links.hrefs == ("/a", "/b")
