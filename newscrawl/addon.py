"""newscrawl in a Scrapy project of your own: a Scrapy add-on (docs/scrapy.md).

    # settings.py of your project
    ADDONS = {"newscrawl.addon.NewscrawlAddon": 0}
    NEWSCRAWL_OUT = "corpus"

Your spider yields the responses of the pages it wants kept (or items with `url` and `body` -
or `html` - fields, and optionally `site`, `status`, `headers`). `PagePipeline` turns each into
the crawl's page item; then newscrawl's own pipelines run as in `newscrawl crawl`: every page's
raw bytes go to OUT/pages, each site's pages go through the site pass once the spider closes,
and the articles (text, article flag, metadata) go to OUT/articles, partitioned by crawl and
site. A site is the page's host without "www." (an item's `site` field names it instead). Other
items and requests are left alone; a response that is not HTML is passed on untouched.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

    from newscrawl.crawl.items import PageItem

__all__ = ["NewscrawlAddon", "PagePipeline"]

logger = logging.getLogger(__name__)

# newscrawl's pipelines in a crawl's order, after the page adapter
_PIPELINES = {
    "newscrawl.addon.PagePipeline": 30,
    "newscrawl.pipelines.rawpages.RawPagePipeline": 40,
    "newscrawl.pipelines.sitepass.SitePassPipeline": 50,
    "newscrawl.pipelines.extraction.ExtractionPipeline": 100,
    "newscrawl.pipelines.classify.ArticleClassifierPipeline": 200,
    "newscrawl.pipelines.parquet.ParquetWriterPipeline": 500,
}
# the crawl id and output folder, and the summary written beside the output
_EXTENSIONS = {
    "newscrawl.crawl.extensions.state.CrawlStateExtension": 0,
    "newscrawl.crawl.extensions.summary.CrawlSummary": 900,
}


class NewscrawlAddon:
    """Scrapy add-on: newscrawl's pipelines and its NEWSCRAWL_* settings' defaults.

    Settings of your project win over the defaults it adds (they are set at the "addon"
    priority); the pipelines and extensions are added beside yours."""

    def update_settings(self, settings: BaseSettings) -> None:
        from newscrawl import settings as defaults

        for name in dir(defaults):
            if name.startswith("NEWSCRAWL_"):
                settings.set(name, getattr(defaults, name), priority="addon")
        settings.set("MAX_PAGES_PER_SITE", 0, priority="addon")  # your spider decides
        for setting, components in (("ITEM_PIPELINES", _PIPELINES), ("EXTENSIONS", _EXTENSIONS)):
            current = settings.getdict(setting)
            for path, order in components.items():
                current.setdefault(path, order)
            settings.set(setting, current, priority=max(settings.getpriority(setting) or 0, 15))


class PagePipeline:
    """A response (or an item with url and body) in, the crawl's page item out."""

    def __init__(self, crawler: Crawler) -> None:
        from newscrawl.crawl.extensions.state import crawl_state

        self.crawler = crawler
        self.crawl_id = crawl_state(crawler).crawl_id
        self.seen: set[str] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PagePipeline:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        page = self.page_item(item)
        return item if page is None else page

    def page_item(self, item: Any) -> PageItem | None:
        """The page item of a response or a mapping with url and body; None for other items,
        and for a response that is not HTML (counted in the stats)."""
        from newscrawl.crawl.extensions.content import is_html_type
        from newscrawl.html.urls import SiteScope, canonical_url

        fields = _fields(item)
        if fields is None:
            return None
        url, body, site, status, headers = fields
        content_type = headers.get("content-type", "")
        if content_type and not is_html_type(content_type):
            self.crawler.stats.inc_value("newscrawl/addon/not_html")
            return None
        try:
            url = canonical_url(url)
        except ValueError:
            self.crawler.stats.inc_value("newscrawl/addon/bad_url")
            logger.warning("not kept: %r is not a page's URL", url)
            return None
        if url in self.seen:  # the same page yielded twice: one row
            self.crawler.stats.inc_value("newscrawl/addon/duplicate")
            return None
        self.seen.add(url)
        from newscrawl.crawl.items import PageItem

        return PageItem(
            url=url,
            final_url=url,
            site=_site_name(site) or SiteScope.of(url).name,
            crawl=self.crawl_id,
            fetched_at=datetime.now(UTC),
            status=status,
            content_type=content_type,
            headers=headers,
            html=body,
        )


def _fields(item: Any) -> tuple[str, bytes, str, int, dict[str, str]] | None:
    """(url, body, site, status, kept headers) of a response or a url-and-body mapping."""
    from scrapy.http import Response

    from newscrawl.storage.schemas import KEPT_HEADERS

    if isinstance(item, Response):
        raw = {
            k.decode("latin-1").lower(): b", ".join(v).decode("latin-1")
            for k, v in item.headers.items()
        }
        headers = {k: v for k, v in raw.items() if k in KEPT_HEADERS}
        return item.url, item.body, "", item.status, headers
    from itemadapter import ItemAdapter, is_item

    if not is_item(item) or isinstance(item, _page_item_class()):
        return None
    adapter = ItemAdapter(item)
    url, body = adapter.get("url"), adapter.get("body", adapter.get("html"))
    if not isinstance(url, str) or not isinstance(body, str | bytes):
        return None
    data = body.encode("utf-8") if isinstance(body, str) else body
    given = adapter.get("headers") or {}
    headers = {str(k).lower(): str(v) for k, v in dict(given).items()}
    headers = {k: v for k, v in headers.items() if k in KEPT_HEADERS}
    if isinstance(body, str):  # text: its bytes are UTF-8, whatever the page declares
        headers["content-type"] = "text/html; charset=utf-8"
    site = adapter.get("site")
    status = adapter.get("status")
    return (
        url,
        data,
        site if isinstance(site, str) else "",
        status if isinstance(status, int) else 200,
        headers,
    )


def _site_name(given: str) -> str:
    """An item's site as a folder name ("" when it has none that can be one)."""
    from newscrawl.crawl.discovery.site_lists import SiteListError, _safe_name

    try:
        return _safe_name(given, "item") if given else ""
    except SiteListError:
        return ""


def _page_item_class() -> type:
    from newscrawl.crawl.items import PageItem

    return PageItem
