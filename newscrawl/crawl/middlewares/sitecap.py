"""A per-site page cap, which Scrapy does not have (CLOSESPIDER_PAGECOUNT is per crawl).

The count of HTML pages a site has yielded lives in the crawl stats
(``newscrawl/site/<name>/pages``; the spider adds one per page and, on resume, starts from the
pages already stored). This downloader middleware refuses page requests of a site whose count
has reached its cap (``max_pages`` in the request meta, else MAX_PAGES_PER_SITE), so a full
site costs no more fetches; the requests that wait in a download slot when the cap is reached
are refused there (`newscrawl.crawl.downloader`), and the few already on the wire are dropped by
the spider, so the output never holds more than the cap.

`SiteCapScheduler` (the SCHEDULER setting) refuses them earlier and cheaper: the requests of a
site that has its pages are taken out of the queue, recorded and dropped as the scheduler meets
them, without going through the downloader, its middlewares and the spider's errback one by one
(a documentation site's pages queue a few hundred links each, most of them left when the cap is
reached). The refusals are the middleware's, and the spider counts each dropped request as
answered (Scrapy's `request_dropped` signal).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.core.scheduler import Scheduler

from newscrawl.crawl.errors import CrawlRefusal, refuse
from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.html.urls import canonical_url

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = [
    "SiteCapMiddleware",
    "SiteCapScheduler",
    "cap_refusal",
    "page_count",
    "pages_stat",
    "site_has_its_pages",
]


def pages_stat(site: str) -> str:
    return f"newscrawl/site/{site}/pages"


def page_count(crawler: Crawler, site: str) -> int:
    """HTML pages `site` has yielded so far in this crawl (stored ones included)."""
    return int(crawler.stats.get_value(pages_stat(site), 0)) if crawler.stats else 0


def site_has_its_pages(crawler: Crawler, request: Request, default_cap: int) -> bool:
    """Whether `request` is a new page request of a site that already has its cap of pages
    (a page stored before a stop is replayed, not fetched: never refused)."""
    if request.meta.get("newscrawl_kind") != "page" or request.meta.get("newscrawl_replayed"):
        return False
    site = request.meta.get("site", "")
    cap = request.meta.get("max_pages", default_cap)
    if not cap or page_count(crawler, site) < cap:
        return False
    return canonical_url(request.url) not in crawl_state(crawler).stored_pages


def cap_refusal(crawler: Crawler, request: Request, default_cap: int) -> CrawlRefusal | None:
    """For a new page request of a site that has its pages, the refusal (recorded) to fail it
    with; None for any other request."""
    if not site_has_its_pages(crawler, request, default_cap):
        return None
    site = request.meta.get("site", "")
    cap = request.meta.get("max_pages", default_cap)
    return refuse(crawler, "cap_reached", request.url, site, f"{site} has its {cap} pages")


class SiteCapMiddleware:
    """Downloader middleware: no page request once a site has its MAX_PAGES_PER_SITE pages."""

    def __init__(self, crawler: Crawler, default_cap: int) -> None:
        self.crawler = crawler
        self.default_cap = default_cap

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteCapMiddleware:
        return cls(crawler, crawler.settings.getint("MAX_PAGES_PER_SITE", 200))

    def process_request(self, request: Request) -> None:
        refusal = cap_refusal(self.crawler, request, self.default_cap)
        if refusal is not None:
            raise refusal


class SiteCapScheduler(Scheduler):
    """Scrapy's scheduler that drops, as it dequeues them, the page requests of sites that
    have their pages (recorded as the middleware records them)."""

    def next_request(self) -> Request | None:
        crawler = self.crawler
        while True:
            request = super().next_request()
            if request is None or crawler is None:
                return request
            cap = crawler.settings.getint("MAX_PAGES_PER_SITE", 200)
            if cap_refusal(crawler, request, cap) is None:
                return request
            crawler.signals.send_catch_log(
                signals.request_dropped, request=request, spider=crawler.spider
            )
