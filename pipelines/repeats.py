"""Each article once across runs: what is not new goes to `versions` or `duplicates`.

A scheduled crawl meets pages an earlier crawl of the same folder stored. Before a row goes to
`articles`, the articles writer asks `RepeatRouter.divert`:

- the URL (final or requested) has a stored row: same text (`content_hash`) - unchanged,
  written nowhere (counted); other text - a new version, written to `versions`
  (``repeat_reason`` "changed");
- its ``<link rel="canonical">`` names a stored article (AMP and print views, tracking
  variants the canonical form does not catch): `duplicates`, "canonical";
- an article with the text of a stored article (of an earlier crawl, or written earlier in this
  one) under another URL: `duplicates`, "content_hash".

Everything else is new and goes to `articles`. So ``read_parquet("DIR/articles")`` gives each
article once; `versions` and `duplicates` (same columns plus ``repeat_of``, ``repeat_crawl``,
``repeat_reason``) hold the rest.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.crawl.history import crawl_history
from newscrawl.crawl.items import PageItem
from newscrawl.storage.schemas import PARTITION_BY, REPEATS_SCHEMA
from newscrawl.storage.writer import ParquetDatasetWriter

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["Repeat", "RepeatRouter"]

logger = logging.getLogger(__name__)
_EMPTY_HASH = ""


@dataclass(frozen=True, slots=True)
class Repeat:
    """Where a page that is not new goes: `dataset` ("versions", "duplicates" or "" for
    nowhere), the stored row it repeats and why."""

    dataset: str
    of: str
    crawl: str
    reason: str


class RepeatRouter:
    """Decides new / changed / unchanged / duplicate per page and writes the repeats."""

    def __init__(self, crawler: Crawler, options: dict[str, Any]) -> None:
        self.crawler = crawler
        self.state = crawl_state(crawler)
        self.history = crawl_history(crawler)
        self.options = options
        self.writers: dict[str, ParquetDatasetWriter] = {}
        self.seen: dict[tuple[str, str], str] = {}  # (site, content_hash) -> url, this crawl

    def _writer(self, dataset: str) -> ParquetDatasetWriter:
        writer = self.writers.get(dataset)
        if writer is None:
            root = self.state.dataset_root(dataset)
            writer = ParquetDatasetWriter(root, REPEATS_SCHEMA, PARTITION_BY, **self.options)
            self.writers[dataset] = writer
        return writer

    def classify(self, item: PageItem) -> Repeat | None:
        """The page's `Repeat`, or None when it is new."""
        site = self.history.site(item.site)
        stored = site.article(item.final_url) or site.article(item.url)
        if stored is not None:
            if stored.content_hash == item.content_hash:
                return Repeat("", stored.url, stored.crawl, "unchanged")
            return Repeat("versions", stored.url, stored.crawl, "changed")
        canonical = item.extras.get("canonical")
        target = site.article(canonical) if canonical and canonical != item.final_url else None
        if target is not None and target.is_article:
            return Repeat("duplicates", target.url, target.crawl, "canonical")
        if not item.is_article or not item.text.strip():
            return None
        same = site.by_hash(item.content_hash)
        if same is not None:
            return Repeat("duplicates", same.url, same.crawl, "content_hash")
        earlier = self.seen.get((item.site, item.content_hash))
        if earlier is not None and earlier != item.final_url:
            return Repeat("duplicates", earlier, self.state.crawl_id, "content_hash")
        return None

    def divert(self, item: PageItem, row: Callable[[PageItem], dict[str, Any]]) -> bool:
        """True when the page's row (`row(item)`, its `articles` row) went to `versions` or
        `duplicates`, or nowhere; False when it is new (the caller writes it to `articles`)."""
        repeat = self.classify(item)
        if repeat is None:
            if item.is_article and item.text.strip():
                self.seen.setdefault((item.site, item.content_hash), item.final_url)
            return False
        self._count(item, repeat)
        if repeat.dataset:
            extra = {"repeat_of": repeat.of, "repeat_crawl": repeat.crawl}
            writer = self._writer(repeat.dataset)
            values = {**row(item), **extra, "repeat_reason": repeat.reason}
            writer.write(values, self.state.partition(item.site))
        return True

    def _count(self, item: PageItem, repeat: Repeat) -> None:
        stats = self.crawler.stats
        if repeat.dataset == "duplicates":
            stats.inc_value(f"newscrawl/site/{item.site}/duplicates")
        elif item.is_article:  # a listing page that changed is expected: not counted
            # (fetched with the same text: counted apart from the spider's unfetched ones)
            name = "unchanged_fetched" if repeat.reason == "unchanged" else repeat.reason
            stats.inc_value(f"newscrawl/site/{item.site}/{name}")
        if repeat.dataset:
            stats.inc_value(f"newscrawl/written/{repeat.dataset}")

    def close_site(self, site: str) -> None:
        for writer in self.writers.values():
            writer.close_partition(self.state.partition(site))

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()
