"""Buffer each site's pages as compact node records and label them with SiteLevel.

SiteLevel (seed 004) needs all of a site's pages at once: a node is template when its hash
recurs on enough of them. Keeping 200 lxml trees per site would cost gigabytes over a crawl of
many sites, so each page is reduced at once to `PageNodes` (numpy arrays per node, no lxml;
newscrawl.template.records) and the tree is let go. A site's buffer is labelled and written to
the `nodes` dataset when the site reaches its page cap, or when the crawl closes. The buffer is
bounded: at most the site's cap in pages and NEWSCRAWL_SITELEVEL_MAX_BYTES in bytes (further
pages are counted and left out). Labelling runs in a worker thread, so the crawl goes on.

A resumed crawl does not label a site whose nodes it already wrote.
Settings: NEWSCRAWL_SITELEVEL (on/off), NEWSCRAWL_SITELEVEL_MAX_BYTES, NEWSCRAWL_GEOMETRY.
"""

from __future__ import annotations

import inspect
import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

from newscrawl.crawl.items import PageItem
from newscrawl.crawl.state import crawl_state
from newscrawl.crawl.urls import SiteScope
from newscrawl.storage.writer import ParquetDatasetWriter, closed_files, read_column
from pipelines.parquet import writer_options

if TYPE_CHECKING:
    import pyarrow as pa
    from scrapy.crawler import Crawler

__all__ = ["SiteLevelPipeline"]

logger = logging.getLogger(__name__)
UNAVAILABLE = "template stage unavailable (newscrawl.template): SiteLevel labels not written"


class SiteLevelPipeline:
    """Per-site PageNodes buffers, labelled into the `nodes` dataset."""

    def __init__(self, crawler: Crawler, max_bytes: int, geometry: str) -> None:
        from newscrawl.template import sitelevel
        from newscrawl.template.records import PageNodes

        self.crawler = crawler
        self.state = crawl_state(crawler)
        self.max_bytes = max_bytes
        self.geometry = geometry
        self.page_nodes = PageNodes
        self.sitelevel = sitelevel.SiteLevel()
        table_args = inspect.signature(self.sitelevel.table).parameters
        self.crawl_arg = "crawl" if "crawl" in table_args else "crawl_id"
        self.buffers: defaultdict[str, list[Any]] = defaultdict(list)
        self.sizes: defaultdict[str, int] = defaultdict(int)
        self.done: set[str] = set()
        self.available = True
        options = {
            **writer_options(crawler.settings),
            "row_group_rows": 65_536,
            "file_rows": 10_000_000,
        }
        root = self.state.dataset_root("nodes")
        make_writer = getattr(sitelevel, "nodes_writer", None)  # the template stage's layout
        self.writer: ParquetDatasetWriter = (
            make_writer(root, **options)
            if make_writer is not None
            else ParquetDatasetWriter(root, sitelevel.nodes_schema(), ("crawl", "site"), **options)
        )

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteLevelPipeline:
        settings = crawler.settings
        if not settings.getbool("NEWSCRAWL_SITELEVEL", True):
            raise NotConfigured("NEWSCRAWL_SITELEVEL is off")
        try:
            return cls(
                crawler,
                settings.getint("NEWSCRAWL_SITELEVEL_MAX_BYTES", 256 << 20),
                settings.get("NEWSCRAWL_GEOMETRY", "static"),
            )
        except ImportError as err:
            logger.warning("%s: %s", UNAVAILABLE, err)
            raise NotConfigured(UNAVAILABLE) from None

    async def process_item(self, item: Any) -> Any:
        if (
            not self.available
            or not isinstance(item, PageItem)
            or item.dom is None
            or item.site in self.done
        ):
            return item
        if self._already_written(item.site):
            self.done.add(item.site)
            return item
        if not self._buffer(item):
            return item
        if item.max_pages and len(self.buffers[item.site]) >= item.max_pages:
            await self._label(item.site)
        return item

    def _partition(self, site: str) -> dict[str, str]:
        values = self.state.partition(site)
        return {name: values[name] for name in self.writer.partition_by if name in values}

    def _already_written(self, site: str) -> bool:
        """Whether this crawl's nodes of `site` are in a complete file (a resumed crawl)."""
        root = self.state.dataset_root("nodes")
        partition = self._partition(site)
        if "crawl" in partition:
            return bool(closed_files(root, partition))
        return any(
            self.state.crawl_id in values for _, _, values in read_column(root, "crawl", partition)
        )

    def _buffer(self, item: PageItem) -> bool:
        """Add the page's node records to its site's buffer; False if it was not added."""
        if self.sizes[item.site] >= self.max_bytes:
            self.crawler.stats.inc_value("newscrawl/sitelevel/over_budget")
            return False
        site_host = SiteScope.of(item.final_url).host
        try:
            nodes = self.page_nodes.from_dom(
                item.dom, item.final_url, site=site_host, geometry=self.geometry
            )
        except ImportError as err:
            logger.warning("%s: %s", UNAVAILABLE, err)
            self.available = False
            return False
        except Exception as err:  # a page the template stage cannot read is left out
            logger.warning("node records of %s failed: %s", item.final_url, err)
            self.crawler.stats.inc_value("newscrawl/sitelevel/page_errors")
            return False
        self.buffers[item.site].append(nodes)
        self.sizes[item.site] += nodes.nbytes
        return True

    async def _label(self, site: str) -> None:
        pages = self.buffers.pop(site, [])
        self.sizes.pop(site, None)
        self.done.add(site)
        if not pages:
            return
        crawl = self.state.crawl_id
        try:
            table = await maybe_deferred_to_future(
                threads.deferToThread(
                    self.sitelevel.table, pages, site=site, **{self.crawl_arg: crawl}
                )
            )
        except Exception as err:
            logger.warning("SiteLevel labelling of %s failed: %s", site, err)
            self.crawler.stats.inc_value("newscrawl/sitelevel/site_errors")
            return
        if table is None:
            self.crawler.stats.inc_value("newscrawl/sitelevel/too_few_pages")
            logger.info("SiteLevel: %s has too few pages (%d) to label", site, len(pages))
            return
        self._write(table, site)

    def _write(self, table: pa.Table, site: str) -> None:
        partition = self._partition(site)
        self.writer.write_table(table, partition)
        self.writer.close_partition(partition)
        self.crawler.stats.inc_value("newscrawl/written/nodes", table.num_rows)
        logger.info("SiteLevel: %s labelled, %d node rows", site, table.num_rows)

    async def close_spider(self) -> None:
        for site in list(self.buffers):
            await self._label(site)
        self.writer.close()
