"""The site pass: each site's articles are written once the site is complete, its template cut out.

The first pipeline. It marks each page `deferred` and keeps its raw bytes in its site's buffer
(the next pipelines skip extraction and the article row of a deferred page, and store its raw
page as it arrives). When the site is complete - it reached its page cap, the spider found its
frontier exhausted (`site_drained`, once every page it yielded has arrived here), `close_site`
says it is finished (a crawl worker, an ingest's file), or the crawl ends - the site pass
(`newscrawl.template.sitepass.site_pass`) runs over the site's pages in a worker thread: one
parse per page, the SiteLevel stage (node records and labels, written to `nodes`), the
page-level extraction, metadata and article flag, and the site's template out of each page's
text. Then the site's `articles` rows are written together, each with the `stage` that
produced its text ("site", or "page" when the site had too few pages for SiteLevel).

Templates carry across crawls (NEWSCRAWL_INCREMENTAL): a site pass also reads the site's pages
stored by earlier crawls of the output folder (`CrawlHistory.context_pages`, the latest version
of each URL up to the site's page budget), so a few new pages are cleaned with the site's full
template; those pages shape the template and are never written again. When most template
hashes of the new pages were never seen on the stored ones (`newscrawl.template.carry`), the
site was redesigned: the summary flags it and the site pass runs on the new pages alone.

A killed crawl loses no page: pages are stored as they arrive, and a resumed crawl rebuilds
each pending site (stored pages, no articles yet) from its stored pages plus what it fetches
anew. A crawl stopped by Ctrl-C or SIGTERM writes its incomplete sites from the pages they
have and marks them partial (`CrawlState.mark_partial`): the resumed crawl deletes their rows
and writes them again from all their pages. Once a drained site is written, what is kept for
it is let go (`site_complete` with final=True), and the spider starts the next site.

A site whose articles are written is done: its pages replayed on resume are skipped. A
page that would take its site's buffer past NEWSCRAWL_SITELEVEL_MAX_BYTES is extracted page by
page instead, as is every page with NEWSCRAWL_SITELEVEL off (then this pipeline is not used).

Settings: NEWSCRAWL_SITELEVEL (on/off), NEWSCRAWL_SITELEVEL_MAX_BYTES, NEWSCRAWL_GEOMETRY,
NEWSCRAWL_SITE_METHOD (what labels the site's template nodes: sitelevel, sst, pagelets, entropy).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from newscrawl.pipelines.classify import ArticleClassifierPipeline
from newscrawl.pipelines.extraction import ExtractionPipeline, content_hash
from newscrawl.pipelines.parquet import ParquetWriterPipeline, site_complete, writer_options
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import defer, threads

from newscrawl.crawl.history import crawl_history
from newscrawl.crawl.items import PageItem, WarcOrigin
from newscrawl.crawl.sitecap import page_count
from newscrawl.crawl.state import crawl_state
from newscrawl.dom import Dom
from newscrawl.extractors.base import Extraction
from newscrawl.extractors.context import SiteContext, learn_site, site_methods
from newscrawl.spiders.site import site_drained
from newscrawl.storage.nodes import nodes_writer
from newscrawl.storage.writer import closed_files, closed_partitions
from newscrawl.template.carry import is_redesign
from newscrawl.template.sitelevel import RawPage, SiteLevelRun, run_sitelevel
from newscrawl.template.sitemethods import check_site_method
from newscrawl.template.sitepass import PAGE_STAGE, SitePassRun, site_pass

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["SitePassPipeline", "stored_items"]

logger = logging.getLogger(__name__)
_PAGE_COLUMNS = ("url", "final_url", "fetched_at", "status", "content_type", "headers", "html")
_WARC_COLUMNS = ("warc_file", "warc_offset", "warc_record_id", "warc_date")


class SitePassPipeline:
    """Per-site buffers of raw pages; the site pass writes `nodes` and `articles` rows."""

    def __init__(self, crawler: Crawler, max_bytes: int, geometry: str) -> None:
        self.crawler = crawler
        self.state = crawl_state(crawler)
        self.max_bytes = max_bytes
        self.geometry = geometry
        method = crawler.settings.get("NEWSCRAWL_SITE_METHOD") or "sitelevel"
        self.method = check_site_method(method)  # a wrong name stops the crawl at its start
        self.extraction = ExtractionPipeline.from_crawler(crawler)
        self.classifier = ArticleClassifierPipeline(crawler)
        self.articles = ParquetWriterPipeline(crawler)
        self.articles.options = writer_options(crawler.settings)  # a site's rows close together
        self.articles.close_at_cap = False  # ... in one file, even for a site at its cap
        options = {**writer_options(crawler.settings), "row_group_rows": 65_536}
        self.nodes = nodes_writer(self.state.dataset_root("nodes"), **options)
        self.buffers: defaultdict[str, list[PageItem]] = defaultdict(list)
        self.sizes: defaultdict[str, int] = defaultdict(int)
        self.done: set[str] = set()  # sites whose articles are written
        self.labelled: set[str] = set()  # sites whose nodes are written
        self.pending: set[str] = set()  # resumed: sites with stored pages and no articles
        self.lock = defer.DeferredLock()  # one site pass at a time
        self.arrived: defaultdict[str, int] = defaultdict(int)  # pages seen, per site
        self.expected: dict[str, int] = {}  # pages the spider yielded, once a site is drained
        self.started: list[defer.Deferred[None]] = []  # site passes started by a signal
        crawler.signals.connect(self._drained, signal=site_drained)
        spider = crawler.spider
        if spider is not None and hasattr(spider, "waits_for_site_pass"):
            spider.waits_for_site_pass = True  # the next site starts after ours
        self.history = crawl_history(crawler)
        self.incremental = crawler.settings.getbool("NEWSCRAWL_INCREMENTAL", True)
        self.default_cap = crawler.settings.getint("MAX_PAGES_PER_SITE", 200) or 200

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SitePassPipeline:
        from newscrawl.template.geometry import check_geometry

        settings = crawler.settings
        if not settings.getbool("NEWSCRAWL_SITELEVEL", True):
            raise NotConfigured("NEWSCRAWL_SITELEVEL is off: pages are extracted one by one")
        return cls(
            crawler,
            settings.getint("NEWSCRAWL_SITELEVEL_MAX_BYTES", 256 << 20),
            check_geometry(settings.get("NEWSCRAWL_GEOMETRY", "static")),
        )

    def open_spider(self) -> None:
        self.articles.open_spider()
        self.done = self._written_sites("articles")
        self.labelled = self._written_sites("nodes")
        self.pending = set(self.state.site_pages) - self.done

    def _written_sites(self, dataset: str) -> set[str]:
        """Sites with a complete file of `dataset` in this crawl (a resumed crawl)."""
        root = self.state.dataset_root(dataset)
        files = closed_partitions(root, {"crawl": self.state.crawl_id})
        return {values.get("site", "") for _, values in files}

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem):
            return item
        if item.site in self.done:
            return item
        self.arrived[item.site] += 1
        if item.stored:
            return item
        if not item.replayed and not self._buffer(item):
            return item  # over the byte budget: extracted page by page
        item.deferred = True
        capped = item.max_pages and page_count(self.crawler, item.site) >= item.max_pages
        if (capped and self._all_yielded_arrived(item.site)) or self._all_arrived(item.site):
            await self.finish(item.site)
        return item

    def _all_yielded_arrived(self, site: str) -> bool:
        """Every page the spider has yielded of the site is here: pages counted against the cap
        may still be on their way (parsed in the pool, in the pipelines), and the site pass
        must see them all."""
        run = getattr(self.crawler.spider, "sites", {}).get(site)
        yielded = getattr(run, "pages", None)
        return yielded is None or self.arrived[site] >= yielded

    def _all_arrived(self, site: str) -> bool:
        """The site's frontier is exhausted and every page the spider yielded is here."""
        expected = self.expected.get(site)
        return expected is not None and self.arrived[site] >= expected

    def _drained(self, site: str, pages: int) -> None:
        """`site_drained`: the site pass runs once the site's last page has arrived."""
        logger.info("site %s: frontier exhausted after %d pages", site, pages)
        if site in self.done:  # written at its cap; nothing of it can come any more
            self._release(site)
            return
        self.expected[site] = pages
        if self._all_arrived(site):
            started = deferred_from_coro(self.finish(site))  # in the reactor's event loop
            started.addErrback(lambda f: logger.error("site pass of %s: %s", site, f.value))
            started.addBoth(lambda _: self.started.remove(started))
            self.started.append(started)

    def _release(self, site: str) -> None:
        """Nothing of a written site can arrive any more: let go of what is kept for it."""
        self.arrived.pop(site, None)
        self.expected.pop(site, None)
        self.crawler.signals.send_catch_log(site_complete, site=site, final=True)

    def _buffer(self, item: PageItem) -> bool:
        """Keep the page's bytes for its site pass; False when the site's buffer is full."""
        if self.sizes[item.site] + len(item.html) > self.max_bytes:
            self.crawler.stats.inc_value("newscrawl/sitepass/over_budget")
            return False
        self.buffers[item.site].append(dataclasses.replace(item, dom=None))
        self.sizes[item.site] += len(item.html)
        return True

    async def finish(self, site: str, partial: bool = False) -> None:
        """Run the site pass of `site` and write its nodes and articles (once per site).
        `partial`: the crawl was stopped before the site was complete; the site is marked so a
        resumed crawl writes it again from all its pages."""
        await maybe_deferred_to_future(self.lock.acquire())
        try:
            if site in self.done:
                return
            self.done.add(site)
            if partial:
                self.state.mark_partial(site)
                self.crawler.stats.inc_value("newscrawl/sitepass/partial_sites")
            buffered = self.buffers.pop(site, [])
            self.sizes.pop(site, None)
            items = await maybe_deferred_to_future(
                threads.deferToThread(self._site_items, site, buffered)
            )
            run = await maybe_deferred_to_future(
                threads.deferToThread(self._carried_pass, site, items)
            )
            self._write(site, items, run)
        finally:
            if site in self.expected:  # drained: every page of it has arrived
                self._release(site)
            self.lock.release()

    def _site_items(self, site: str, buffered: list[PageItem]) -> list[PageItem]:
        """The site's pages: stored by an earlier run of this crawl, then buffered here, then
        (`context`) stored by earlier crawls of the folder, to carry the site's template."""
        fresh = {item.final_url for item in buffered}
        stored = [i for i in stored_items(self.state, site) if i.final_url not in fresh]
        items = stored + buffered
        if not self.incremental or not items:
            return items
        cap = max((item.max_pages for item in items), default=0) or self.default_cap
        seen = {url for item in items for url in (item.url, item.final_url)}
        rows = self.history.context_pages(site, seen, cap - len(items))
        return items + [_context_item(row, site) for row in rows]

    def _carried_pass(self, site: str, items: list[PageItem]) -> SitePassRun | None:
        """The site pass with the site's stored pages; without them when the site was
        redesigned (the new pages' template is not the stored pages')."""
        run = self._pass(site, items)
        context = {item.final_url for item in items if item.context}
        if run is None or not context:
            return run
        new = [page for page in run.sitelevel.pages if page.url not in context]
        old = [page for page in run.sitelevel.pages if page.url in context]
        redesigned, share = is_redesign(new, old)
        stat = f"newscrawl/site/{site}/template_unseen_pct"
        self.crawler.stats.set_value(stat, round(100 * share))
        if not redesigned:
            return run
        logger.warning(
            "site %s was redesigned: %.0f%% of its new pages' template was never seen on its "
            "%d stored pages; its site pass uses the new pages only",
            site,
            100 * share,
            len(old),
        )
        self.crawler.stats.set_value(f"newscrawl/site/{site}/redesigned", 1)
        return self._pass(site, [item for item in items if not item.context])

    def _pass(self, site: str, items: list[PageItem]) -> SitePassRun | None:
        """The site pass (in a worker thread); None when it failed (pages go page-level)."""
        by_raw: dict[int, PageItem] = {}
        raws = []
        for item in items:
            raw = RawPage(item.final_url, item.html, item.content_type or None)
            by_raw[id(raw)] = item
            raws.append(raw)
        context = self._context(raws)

        def extract(raw: RawPage, dom: Dom) -> Extraction:
            item = by_raw[id(raw)]
            item.dom = dom
            try:
                self.extraction.fill(item, context)
                self.classifier.classify(item)
            finally:
                item.dom = None
            return Extraction(item.title, item.text, item.node_ids, item.extractor)

        try:
            run = site_pass(site, raws, extract, geometry=self.geometry, method=self.method)
        except Exception as err:  # the site's pages are still written, page by page
            logger.warning("site pass of %s failed: %s", site, err)
            self.crawler.stats.inc_value("newscrawl/sitepass/site_errors")
            return None
        for outcome in run.outcomes:
            item = by_raw[id(outcome.raw)]
            item.text, item.node_ids = outcome.extraction.text, outcome.extraction.node_ids
            item.stage = outcome.stage
            item.content_hash = content_hash(item.text)
        return run

    def _context(self, raws: list[RawPage]) -> SiteContext | None:
        """The site's template for the extractors that read one (the learned one): one more
        parse of each page, before the pass that extracts them."""
        methods = site_methods(self.extraction.extractors.values())
        return learn_site(raws, methods) if methods else None

    def _write(self, site: str, items: list[PageItem], run: SitePassRun | None) -> None:
        """The site's articles rows (in URL order, closed together), then its nodes; its pages
        are closed into their files first (`site_complete`)."""
        self.crawler.signals.send_catch_log(site_complete, site=site, final=False)
        items = [item for item in items if not item.context]  # earlier crawls wrote those
        for item in sorted(items, key=lambda item: item.final_url):
            if not item.stage:  # the pass did not reach it: page by page
                self.extraction.fill(item)
                if item.dom is not None:
                    self.classifier.classify(item)
                item.stage = item.stage or PAGE_STAGE
            self.articles.process_item(item)
        assert self.articles.writer is not None
        # versions and duplicates first: once its articles file is there, a site is written
        self.articles.repeats.close_site(site)
        self.articles.writer.close_partition(self.state.partition(site))
        logger.info("site pass: %s, %d pages written", site, len(items))
        if run is not None:
            stage = "site" if run.template else "page"
            self.crawler.stats.inc_value(f"newscrawl/sitepass/{stage}_sites")
            self._write_nodes(site, _own_pages(run.sitelevel, {item.final_url for item in items}))

    def _write_nodes(self, site: str, sitelevel: SiteLevelRun) -> None:
        if site in self.labelled:
            return  # written before a stop that came before the articles
        self.labelled.add(site)
        rows = sitelevel.write(self.nodes, self.state.crawl_id)
        self.crawler.stats.inc_value("newscrawl/written/nodes", rows)

    async def _label_stored(self, site: str) -> None:
        """SiteLevel alone for a site whose articles were written but whose nodes were not
        (a stop between the two): from its stored pages, none of which is fetched again."""
        read = threads.deferToThread(stored_items, self.state, site)
        items = await maybe_deferred_to_future(read)
        raws = [RawPage(item.final_url, item.html, item.content_type or None) for item in items]
        run = await maybe_deferred_to_future(
            threads.deferToThread(
                run_sitelevel, site, raws, geometry=self.geometry, method=self.method
            )
        )
        self._write_nodes(site, run)

    async def close_site(self, site: str) -> None:
        """The site is finished (a crawl worker, an ingest's file): write it now, then forget
        it, so the same site given to this process again is written whole again."""
        await self.finish(site)
        self.done.discard(site)
        self.labelled.discard(site)
        self.arrived.pop(site, None)
        self.expected.pop(site, None)
        self.articles.close_site(site)

    def discard_site(self, site: str) -> None:
        """The site's rows are not wanted (a crawl worker lost its lease of it): forget its
        buffered pages without a site pass; the worker deletes what was staged."""
        self.buffers.pop(site, None)
        self.sizes.pop(site, None)
        self.arrived.pop(site, None)
        self.expected.pop(site, None)
        self.articles.close_site(site)

    def forget_files(self) -> None:
        """Forget the files closed so far (an ingest, which moves them on file by file)."""
        self.articles.forget_files()
        self.nodes.forget_closed()

    async def close_spider(self) -> None:
        for started in list(self.started):
            await maybe_deferred_to_future(started)
        stopped = not self.crawler.crawling  # Ctrl-C, SIGTERM: the sites left are not complete
        for site in sorted(set(self.buffers) | (self.pending - self.done)):
            await self.finish(site, partial=stopped)
        for site in sorted(set(self.state.site_pages) - self.labelled):
            await self._label_stored(site)
        self.articles.close_spider()
        self.nodes.close()


def _context_item(row: dict[str, Any], site: str) -> PageItem:
    """A page an earlier crawl stored, for the site's template only (`context`)."""
    item = _stored_item(row, site, str(row.get("crawl") or ""))
    item.context = True
    return item


def _own_pages(run: SiteLevelRun, urls: set[str]) -> SiteLevelRun:
    """The SiteLevel run of `urls` only (their node rows; the stored pages' rows are their
    own crawls')."""
    if run.labels is None:
        return run
    keep = [i for i, page in enumerate(run.pages) if page.url in urls]
    pages = [run.pages[i] for i in keep]
    labels = [run.labels[i] for i in keep]
    return SiteLevelRun(run.site, pages, labels, run.errors)


def stored_items(state: Any, site: str) -> list[PageItem]:
    """PageItems of the site's pages in this crawl's complete `pages` files (with the WARC
    record each came from, when the files say)."""
    import pyarrow.parquet as pq

    items: list[PageItem] = []
    for path in closed_files(state.dataset_root("pages"), state.partition(site)):
        names = set(pq.read_schema(path).names)
        columns = [c for c in (*_PAGE_COLUMNS, *_WARC_COLUMNS) if c in names]
        for row in pq.read_table(path, columns=columns).to_pylist():
            if row["html"] is not None:
                items.append(_stored_item(row, site, state.crawl_id))
    return items


def _stored_item(row: dict[str, Any], site: str, crawl: str) -> PageItem:
    warc = None
    if row.get("warc_file"):
        warc = WarcOrigin(
            row["warc_file"], row["warc_offset"], row["warc_record_id"], row["warc_date"]
        )
    return PageItem(
        url=row["url"],
        final_url=row["final_url"],
        site=site,
        crawl=crawl,
        fetched_at=row["fetched_at"],
        status=row["status"],
        content_type=row["content_type"] or "",
        headers=dict(row["headers"] or ()),
        html=row["html"],
        replayed=True,
        warc=warc,
    )
