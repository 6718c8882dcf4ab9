"""Flag each page as an article or an index page, and keep the reason (never drop either).

Users filter on `is_article`; `article_reason` shows the evidence (see
newscrawl.extractors.pagekind).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from newscrawl.crawl.items import PageItem
from newscrawl.extractors.pagekind import classify_page, page_signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["ArticleClassifierPipeline"]


class ArticleClassifierPipeline:
    def __init__(self, crawler: Crawler | None = None) -> None:
        self.crawler = crawler  # not needed to classify: a site pass worker has none

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ArticleClassifierPipeline:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem) or item.dom is None or item.stored or item.deferred:
            return item
        return self.classify(item)

    def classify(self, item: PageItem) -> PageItem:
        """Flag `item` (which has its DOM and its page-level extraction)."""
        assert item.dom is not None
        signals = page_signals(
            item.dom,
            item.final_url,
            item.text,
            item.node_ids,
            has_date=bool(item.extras.get("dated")),
            ld_article=bool(item.extras.get("ld_article")),
        )
        kind = classify_page(signals)
        item.is_article = kind.is_article
        item.article_reason = kind.reason
        return item
