"""What robots.txt, sitemaps and feeds list for the sites of a `SiteSpider`: the sitemaps
robots.txt names (else /sitemap.xml), a sitemap's nested sitemaps and pages, a feed's entries,
newest first (the scheduler keeps the order of equal priorities, so a site's page cap takes
the latest pages). A sitemap or feed unchanged since the last run (304) lists nothing new."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

import scrapy
from scrapy.http import Response

from newscrawl.crawl.discovery.feeds import (
    UnsafeXmlError,
    newest_first,
    parse_sitemap,
    robots_sitemaps,
)
from newscrawl.crawl.errors import record
from newscrawl.crawl.history import response_validators
from newscrawl.html.urls import absolute_url, canonical_url
from newscrawl.spiders.runs import SiteRun

if TYPE_CHECKING:
    from newscrawl.spiders.site import SiteSpider

__all__ = ["MAX_SITEMAPS_PER_SITE", "NOT_MODIFIED", "SiteListings"]

T = TypeVar("T")
MAX_SITEMAPS_PER_SITE = 50
NOT_MODIFIED = 304


class SiteListings:
    """The requests robots.txt, sitemaps and feeds list, for the sites of one spider."""

    def __init__(self, spider: SiteSpider) -> None:
        self.spider = spider

    def robots(self, run: SiteRun, response: Response) -> Iterator[scrapy.Request]:
        text = response.body[:512_000].decode("utf-8", "replace")
        listed = (absolute_url(response.url, u) for u in robots_sitemaps(text))
        sitemaps: list[str | None] = [
            url for url in listed if url is not None and run.scope.contains(url)
        ]
        if not sitemaps:
            sitemaps = [absolute_url(run.spec.url, "/sitemap.xml")]
        for url in sitemaps[:MAX_SITEMAPS_PER_SITE]:
            yield from self.sitemap_request(run, url)

    def sitemap_request(self, run: SiteRun, url: str | None) -> Iterator[scrapy.Request]:
        """`url`: canonical (`absolute_url`), or None for one that could not be parsed."""
        if url is None or url in run.discovery or run.sitemaps >= MAX_SITEMAPS_PER_SITE:
            return
        if not run.scope.contains(url):
            self.spider._offsite_link(run, url)
            return
        run.sitemaps += 1
        yield self.spider._discovery(run, url, "sitemap", priority=5)

    def sitemap(self, run: SiteRun, response: Response) -> Iterator[scrapy.Request]:
        if self.not_modified(run, response):
            return
        links = self.read_xml(parse_sitemap, response, run)
        if links is None:
            return
        for url in links.sitemaps:
            yield from self.sitemap_request(run, absolute_url(response.url, url))
        entries = [(url, links.lastmod.get(url)) for url in links.pages]
        yield from self.listed_pages(run, response.url, entries)

    def not_modified(self, run: SiteRun, response: Response) -> bool:
        """A sitemap or feed unchanged since the last run (304): nothing new is listed there.
        Otherwise its validators are kept for the next run."""
        if response.status == NOT_MODIFIED:
            self.spider._site_stat(run, "not_modified")
            return True
        found = response_validators(response.headers)
        if found:
            kind = response.meta.get("newscrawl_kind", "")
            self.spider.validators[canonical_url(response.url)] = {**found, "kind": kind}
        return False

    def read_xml(self, parse: Callable[[bytes], T], response: Response, run: SiteRun) -> T | None:
        """A sitemap or feed parsed, or None (recorded) when it is unsafe XML."""
        try:
            return parse(response.body)
        except UnsafeXmlError as err:
            record(self.spider.crawler, err.kind, response.url, run.spec.name, str(err))
            return None

    def listed_pages(
        self, run: SiteRun, base: str, entries: Iterable[tuple[str, datetime | None]]
    ) -> Iterator[scrapy.Request]:
        """Requests for the pages a sitemap or a feed lists (url, date), newest first: the
        scheduler keeps the order of equal priorities, so the cap takes the latest pages."""
        for url, modified in newest_first(entries):
            page = absolute_url(base, url)
            if page is None:  # a URL that cannot be parsed, or not http(s)
                continue
            request = self.spider._page_request(run, page, None, 0, 1, modified, canonical=True)
            if request is not None:
                yield request
