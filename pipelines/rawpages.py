"""Keep every page's raw bytes and the headers that matter: the `pages` dataset.

Templates can then be retrained, and extractors rerun, from the stored pages without crawling
again (and a resumed crawl replays them from here instead of fetching them twice).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from newscrawl.pipelines.parquet import DatasetPipeline

from newscrawl.crawl.items import PageItem
from newscrawl.storage.schemas import PAGES_SCHEMA
from newscrawl.template.node_summary import hash_summary, summaries_wanted

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["RawPagePipeline"]

# The most bytes of pages held before they are written as a row group: what the crawl holds of
# them at once, and what the site pass reads back to get one stored page's bytes.
PAGE_GROUP_BYTES = 8 << 20


class RawPagePipeline(DatasetPipeline):
    dataset = "pages"
    schema = PAGES_SCHEMA

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        limit = min(self.options["row_group_bytes"], PAGE_GROUP_BYTES)
        self.options = {**self.options, "row_group_bytes": limit}
        self.summaries = summaries_wanted(crawler.settings)  # hashes stored for the site pass

    def stored_keys(self) -> set[str]:
        return set(self.state.stored_pages)  # url and final_url of every stored page

    def row(self, item: PageItem) -> dict[str, Any]:
        return {
            **self.base_row(item),
            "content_type": item.content_type,
            "headers": item.headers or None,
            "html": item.html,
            "node_hashes": self._summary(item) or None,
        }

    def _summary(self, item: PageItem) -> bytes:
        """The page's node hashes for the site pass (`node_summary`): from the crawl's parse
        workers, or from its parsed tree when it was parsed here (inline, an ingest)."""
        if not self.summaries:
            return b""
        if item.node_hashes or item.dom is None:
            return item.node_hashes
        return hash_summary(item.dom)
