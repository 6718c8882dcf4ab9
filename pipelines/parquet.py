"""Write pages to Parquet as they arrive: the `articles` dataset (and the base of `pages`).

Each pipeline owns one `ParquetDatasetWriter` (newscrawl.storage), partitioned by crawl and
site, flushed in row groups, files closed atomically. A page whose `final_url` is already in
this crawl's complete files - a resumed crawl meeting what it stored before a stop - is not
written again, so the union of a crawl's files has each page once however often it was
stopped. A site's files are closed as soon as the site has its page cap, or when
`close_site` says the site is finished (what a crawl worker does before publishing it), and
in between at least every NEWSCRAWL_FLUSH_SECONDS (30 s) or NEWSCRAWL_FLUSH_ROWS rows of the
site (a timer checks every second), so a SIGKILL loses at most the pages of that window.

Settings: NEWSCRAWL_OUT, NEWSCRAWL_FLUSH_SECONDS, NEWSCRAWL_FLUSH_ROWS (0: off),
NEWSCRAWL_PARQUET_ROW_GROUP_ROWS, NEWSCRAWL_PARQUET_ROW_GROUP_BYTES,
NEWSCRAWL_PARQUET_FILE_ROWS, NEWSCRAWL_PARQUET_FILE_SECONDS, NEWSCRAWL_PARQUET_COMPRESSION,
NEWSCRAWL_PARQUET_SYNC_FOLDERS (sync a folder after each file renamed into it; an ingest turns it
off for its staging folder, whose files it moves on and syncs in OUT).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa
from newscrawl.pipelines.repeats import RepeatRouter
from twisted.internet.task import LoopingCall

from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.crawl.items import PageItem
from newscrawl.crawl.middlewares.sitecap import page_count
from newscrawl.storage.schemas import ARTICLES_SCHEMA, PARTITION_BY
from newscrawl.storage.writer import ParquetDatasetWriter, warm_conversions

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["DatasetPipeline", "ParquetWriterPipeline", "site_complete", "writer_options"]

logger = logging.getLogger(__name__)
# Sent (site=NAME, final=False) by the site pass before it writes a complete site's rows: each
# dataset closes the site's open file first, so its pages are on disk before its articles and
# nodes; sent again with final=True once nothing of the site can arrive any more (its frontier
# is exhausted): the datasets let go of the site's URLs then.
site_complete = object()


def _smallest(*limits: float) -> float:
    """The smallest of the limits that are set (0 when none is)."""
    return min((limit for limit in limits if limit > 0), default=0)


def writer_options(
    settings: Any, prefix: str = "NEWSCRAWL_PARQUET_", *, flush: bool = False
) -> dict[str, Any]:
    """ParquetDatasetWriter keyword arguments from the NEWSCRAWL_PARQUET_* settings; with
    `flush`, files also close at NEWSCRAWL_FLUSH_SECONDS / NEWSCRAWL_FLUSH_ROWS (what a crawl's
    datasets written as pages arrive use, so a kill loses little)."""
    seconds = settings.getfloat(f"{prefix}FILE_SECONDS", 0.0)
    rows = settings.getint(f"{prefix}FILE_ROWS", 10_000)
    if flush:
        seconds = _smallest(seconds, settings.getfloat("NEWSCRAWL_FLUSH_SECONDS", 30.0))
        rows = int(_smallest(rows, settings.getint("NEWSCRAWL_FLUSH_ROWS", 50)))
    return {
        "row_group_rows": settings.getint(f"{prefix}ROW_GROUP_ROWS", 256),
        "row_group_bytes": settings.getint(f"{prefix}ROW_GROUP_BYTES", 32 * 1024 * 1024),
        "file_rows": rows or 10_000,
        "file_seconds": seconds or None,
        "compression": settings.get(f"{prefix}COMPRESSION", "zstd"),
        "sync_folders": settings.getbool(f"{prefix}SYNC_FOLDERS", True),
    }


class DatasetPipeline:
    """One dataset's writer: skip pages already stored, write the rest, count them."""

    dataset: ClassVar[str] = ""
    schema: ClassVar[pa.Schema]
    # close a site's file as soon as the site has its cap (rows that arrive page by page); the
    # site pass closes a site's rows together instead, so a kill never leaves half a site
    close_at_cap: bool = True

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.state = crawl_state(crawler)
        self.options = writer_options(crawler.settings, flush=True)
        self.writer: ParquetDatasetWriter | None = None
        self.timer: LoopingCall | None = None
        self.written: set[str] = set()  # final_url of every page stored or written: never twice
        self.site_written: defaultdict[str, list[str]] = defaultdict(list)  # written by this run
        crawler.signals.connect(self._site_complete, signal=site_complete)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DatasetPipeline:
        return cls(crawler)

    def stored_keys(self) -> set[str]:
        raise NotImplementedError

    def row(self, item: PageItem) -> dict[str, Any]:
        """The dataset's row for the page: `base_row` plus the dataset's own columns."""
        raise NotImplementedError

    @staticmethod
    def base_row(item: PageItem) -> dict[str, Any]:
        """The columns every dataset has (site and crawl are partition folders)."""
        return {
            "url": item.url,
            "final_url": item.final_url,
            "fetched_at": item.fetched_at,
            "status": item.status,
            **(item.warc.columns() if item.warc is not None else {}),
        }

    def open_spider(self) -> None:
        warm_conversions()
        self.written = set(self.stored_keys())
        self.writer = ParquetDatasetWriter(
            self.state.dataset_root(self.dataset), self.schema, PARTITION_BY, **self.options
        )
        if self.options["file_seconds"]:  # a quiet site's rows reach a file in time too
            self.timer = LoopingCall(self.writer.rotate_old)
            self.timer.start(min(1.0, self.options["file_seconds"] / 10), now=False)

    def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem) or self.writer is None:
            return item
        stats = self.crawler.stats
        if item.final_url in self.written:
            stats.inc_value("newscrawl/written/skipped")
            return item
        self.writer.write(self.row(item), self.state.partition(item.site))
        self.written.add(item.final_url)
        self.site_written[item.site].append(item.final_url)
        stats.inc_value(f"newscrawl/written/{self.dataset}")
        self.count(item)
        capped = item.max_pages and page_count(self.crawler, item.site) >= item.max_pages
        if capped and self.close_at_cap:
            self.writer.close_partition(self.state.partition(item.site))
        return item

    def count(self, item: PageItem) -> None:
        """Dataset-specific counters (for the summary)."""

    def _site_complete(self, site: str, final: bool) -> None:
        """`site_complete`: the site's rows so far go to a closed file now; `final`: no page of
        it can come again, so its URLs need not be kept (memory stays flat over many sites)."""
        if self.writer is not None:
            self.writer.close_partition(self.state.partition(site))
        if final:
            self.written.difference_update(self.site_written.pop(site, ()))

    def close_site(self, site: str) -> None:
        """The site is finished: write out its rows and close its file, then forget its pages,
        so the same site given to this process again (a crawl worker's next lease of it) is
        written whole again."""
        if self.writer is not None:
            self.writer.close_partition(self.state.partition(site))
        self.written.difference_update(self.site_written.pop(site, ()))

    def forget_files(self) -> None:
        """Forget the files closed so far (an ingest, which moves them on file by file)."""
        if self.writer is not None:
            self.writer.forget_closed()

    def close_spider(self) -> None:
        if self.timer is not None and self.timer.running:
            self.timer.stop()
        if self.writer is not None:
            self.writer.close()
            logger.info(
                "%s: %d rows in %d files",
                self.dataset,
                self.writer.rows_written,
                self.writer.files_closed,
            )


class ParquetWriterPipeline(DatasetPipeline):
    """The `articles` dataset: one row per page with its text, flag and metadata."""

    dataset = "articles"
    schema = ARTICLES_SCHEMA

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        # pages an earlier crawl of the folder stored go to `versions` / `duplicates`
        self.repeats = RepeatRouter(crawler, self.options)

    def stored_keys(self) -> set[str]:
        return self.state.stored_articles

    def row(self, item: PageItem) -> dict[str, Any]:
        return {
            **self.base_row(item),
            "is_article": item.is_article,
            "article_reason": item.article_reason,
            "page_type": item.page_type or None,
            "title": item.title,
            "text": item.text,
            "markdown": item.markdown,
            "comments": item.comments,
            "extractor": item.extractor,
            "stage": item.stage or None,
            "texts": item.texts or None,
            "language": item.language,
            "encoding": item.encoding or None,
            "encoding_source": item.encoding_source or None,
            "published": item.published,
            "author": item.author,
            "content_hash": item.content_hash,
            "error": item.error,
        }

    def count(self, item: PageItem) -> None:
        stats = self.crawler.stats
        stats.inc_value(f"newscrawl/site/{item.site}/rows")
        if item.is_article:
            stats.inc_value("newscrawl/written/articles_true")
            stats.inc_value(f"newscrawl/site/{item.site}/articles")

    def process_item(self, item: Any) -> Any:
        if isinstance(item, PageItem) and item.deferred:
            item.release()  # its row is written by the site pass, once its site is complete
            return item
        if self._diverted(item):
            item.release()
            return item
        item = super().process_item(item)
        if isinstance(item, PageItem):
            item.release()  # the last pipeline: drop the bytes and the tree
        return item

    def _diverted(self, item: Any) -> bool:
        """The page is not new (a version or duplicate of a stored row): written elsewhere."""
        if not isinstance(item, PageItem) or self.writer is None or item.context:
            return isinstance(item, PageItem) and item.context
        if item.final_url in self.written:
            return False  # the base class skips it (a resumed crawl's own row)
        return self.repeats.divert(item, self.row)

    def close_site(self, site: str) -> None:
        super().close_site(site)
        self.repeats.close_site(site)

    def close_spider(self) -> None:
        super().close_spider()
        self.repeats.close()
