"""Buffer each site's pages as compact node records and label them with SiteLevel.

SiteLevel (seed 004) needs all of a site's pages at once: a node is template when its hash
recurs on enough of them. Keeping 200 lxml trees per site would cost gigabytes over a crawl of
many sites, so each page is reduced at once to `PageNodes` (numpy arrays per node, no lxml;
newscrawl.template.records) and the tree is let go. A site's buffer is labelled and written to
the `nodes` dataset when the site reaches its page cap, when `close_site` says the site is
finished (a crawl worker), or when the crawl closes. The buffer is bounded: at most the site's
cap in pages and NEWSCRAWL_SITELEVEL_MAX_BYTES in bytes (further pages are counted and left
out). Labelling runs in a worker thread, so the crawl goes on.

`nodes` is partitioned like the other datasets, NODES/crawl=<id>/site=<name>/, so a resumed
crawl, a worker publishing a site and every reader treat the three alike. A resumed crawl does
not label a site whose nodes it already wrote; a site whose pages were all stored but whose
nodes were not (killed between the two) is labelled at the end from its stored pages, since
none of them is fetched or replayed again.

Settings: NEWSCRAWL_SITELEVEL (on/off), NEWSCRAWL_SITELEVEL_MAX_BYTES, NEWSCRAWL_GEOMETRY.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet import threads

from newscrawl.crawl.items import PageItem
from newscrawl.crawl.state import crawl_state
from newscrawl.crawl.urls import SiteScope
from newscrawl.dom import Dom, PageError, parse_html
from newscrawl.storage.writer import closed_files, partition_values
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
        self.buffers: defaultdict[str, list[Any]] = defaultdict(list)
        self.sizes: defaultdict[str, int] = defaultdict(int)
        self.done: set[str] = set()  # sites labelled (or found labelled) in this crawl
        self.unlabelled: set[str] = set()  # resumed: sites with stored pages and no nodes
        self.available = True
        options = {
            **writer_options(crawler.settings),
            "row_group_rows": 65_536,
            "file_rows": 10_000_000,
        }
        root = self.state.dataset_root("nodes")
        self.writer = sitelevel.nodes_writer(root, **options)

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

    def open_spider(self) -> None:
        self.done = self._labelled_sites()
        self.unlabelled = set(self.state.site_pages) - self.done

    def _labelled_sites(self) -> set[str]:
        """Sites whose nodes this crawl already has in a complete file (a resumed crawl)."""
        root = self.state.dataset_root("nodes")
        files = closed_files(root, {"crawl": self.state.crawl_id})
        return {partition_values(path, root).get("site", "") for path in files}

    async def process_item(self, item: Any) -> Any:
        if (
            not self.available
            or not isinstance(item, PageItem)
            or item.dom is None
            or item.site in self.done
        ):
            return item
        if self._buffer(item) and item.max_pages and len(self.buffers[item.site]) >= item.max_pages:
            await self._label(item.site)
        return item

    def _buffer(self, item: PageItem) -> bool:
        """Add the page's node records to its site's buffer; False if it was not added."""
        assert item.dom is not None
        if self.sizes[item.site] >= self.max_bytes:
            self.crawler.stats.inc_value("newscrawl/sitelevel/over_budget")
            return False
        nodes = self._nodes(item.dom, item.final_url)
        if nodes is None:
            return False
        self.buffers[item.site].append(nodes)
        self.sizes[item.site] += nodes.nbytes
        return True

    def _nodes(self, dom: Dom, url: str) -> Any | None:
        """The page's PageNodes, or None when the template stage cannot read it."""
        try:
            site_host = SiteScope.of(url).host
            return self.page_nodes.from_dom(dom, url, site=site_host, geometry=self.geometry)
        except ImportError as err:
            logger.warning("%s: %s", UNAVAILABLE, err)
            self.available = False
        except Exception as err:  # a page the template stage cannot read is left out
            logger.warning("node records of %s failed: %s", url, err)
            self.crawler.stats.inc_value("newscrawl/sitelevel/page_errors")
        return None

    async def _label(self, site: str) -> None:
        pages = self.buffers.pop(site, [])
        self.sizes.pop(site, None)
        self.done.add(site)
        if not pages:
            return
        try:
            table = await maybe_deferred_to_future(
                threads.deferToThread(
                    self.sitelevel.table, pages, crawl=self.state.crawl_id, site=site
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
        partition = self.state.partition(site)
        self.writer.write_table(table, partition)
        self.writer.close_partition(partition)
        self.crawler.stats.inc_value("newscrawl/written/nodes", table.num_rows)
        logger.info("SiteLevel: %s labelled, %d node rows", site, table.num_rows)

    async def close_site(self, site: str) -> None:
        """The site is finished: label what it buffered now (rather than at the end of the
        crawl), then forget it, so the same site given to this process again (a crawl worker's
        next lease of it) is labelled again."""
        await self._label(site)
        self.done.discard(site)

    async def close_spider(self) -> None:
        for site in list(self.buffers):
            await self._label(site)
        for site in sorted(self.unlabelled - self.done):
            await self._label_stored(site)
        self.writer.close()

    async def _label_stored(self, site: str) -> None:
        """Label a site from its stored pages (a resumed crawl that fetched none of them)."""
        if not self.available:
            return
        pages = await maybe_deferred_to_future(threads.deferToThread(self._stored_nodes, site))
        logger.info("SiteLevel: %s relabelled from %d stored pages", site, len(pages))
        self.buffers[site] = pages
        await self._label(site)

    def _stored_nodes(self, site: str) -> list[Any]:
        """PageNodes of the site's pages in this crawl's complete `pages` files, within the
        byte budget."""
        import pyarrow.parquet as pq

        pages: list[Any] = []
        size = 0
        for path in closed_files(self.state.dataset_root("pages"), self.state.partition(site)):
            rows = pq.read_table(path, columns=["final_url", "content_type", "html"]).to_pylist()
            for row in rows:
                if size >= self.max_bytes:
                    return pages
                try:
                    dom = parse_html(row["html"], row["final_url"], row["content_type"])
                except PageError:
                    continue
                nodes = self._nodes(dom, row["final_url"])
                if nodes is not None:
                    pages.append(nodes)
                    size += nodes.nbytes
        return pages
