"""Keep every page's raw bytes and the headers that matter: the `pages` dataset.

Templates can then be retrained, and extractors rerun, from the stored pages without crawling
again (and a resumed crawl replays them from here instead of fetching them twice).
"""

from __future__ import annotations

from typing import Any

from newscrawl.pipelines.parquet import DatasetPipeline

from newscrawl.crawl.items import PageItem
from newscrawl.storage.schemas import PAGES_SCHEMA

__all__ = ["RawPagePipeline"]


class RawPagePipeline(DatasetPipeline):
    dataset = "pages"
    schema = PAGES_SCHEMA

    def stored_keys(self) -> set[str]:
        return set(self.state.stored_pages)  # url and final_url of every stored page

    def row(self, item: PageItem) -> dict[str, Any]:
        return {
            **self.base_row(item),
            "content_type": item.content_type,
            "headers": item.headers or None,
            "html": item.html,
        }
