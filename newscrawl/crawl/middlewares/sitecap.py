"""A per-site page cap, which Scrapy does not have (CLOSESPIDER_PAGECOUNT is per crawl).

The count of HTML pages a site has yielded lives in the crawl stats
(``newscrawl/site/<name>/pages``; the spider adds one per page and, on resume, starts from the
pages already stored). This downloader middleware refuses page requests of a site whose count
has reached its cap (``max_pages`` in the request meta, else MAX_PAGES_PER_SITE), so a full
site costs no more fetches; the few requests already in flight when the cap is reached are
dropped by the spider, so the output never holds more than the cap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from newscrawl.crawl.errors import refuse
from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.html.urls import canonical_url

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["SiteCapMiddleware", "page_count", "pages_stat", "site_has_its_pages"]


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


class SiteCapMiddleware:
    """Downloader middleware: no page request once a site has its MAX_PAGES_PER_SITE pages."""

    def __init__(self, crawler: Crawler, default_cap: int) -> None:
        self.crawler = crawler
        self.default_cap = default_cap

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteCapMiddleware:
        return cls(crawler, crawler.settings.getint("MAX_PAGES_PER_SITE", 200))

    def process_request(self, request: Request) -> None:
        if site_has_its_pages(self.crawler, request, self.default_cap):
            site = request.meta.get("site", "")
            cap = request.meta.get("max_pages", self.default_cap)
            raise refuse(
                self.crawler, "cap_reached", request.url, site, f"{site} has its {cap} pages"
            )
