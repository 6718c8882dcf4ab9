"""The site pass: each site's articles are written once the site is complete, its template cut out.

The first pipeline. It marks each page `deferred` and keeps its raw bytes in its site's buffer
(the next pipelines skip extraction and the article row of a deferred page, and store its raw
page as it arrives). When the site is complete - it reached its page cap, the spider found its
frontier exhausted (`site_drained`, once every page it yielded has arrived here), `close_site`
says it is finished (a crawl worker, an ingest's file), or the crawl ends - the site pass
(`newscrawl.site.slot_cut.site_pass`, as the job of `newscrawl.site.site_job`) runs
over the site's pages in a worker process (`newscrawl.site.site_pool`; in a thread with
NEWSCRAWL_SITEPASS_WORKERS=0, and before the crawl's first pages have started the workers):
one parse per page, the SiteLevel stage (node records and labels, written to `nodes`), the
page-level extraction, metadata and article flag, and the site's template out of each
page's text. Then the site's `articles` rows are written together in this process, each with
the `stage` that produced its text ("site", or "page" when the site had too few pages for
SiteLevel). A worker that dies on a site (SIGKILL, out of memory) costs no page: the site is
tried once more in a new worker, then extracted page by page (in a thread), and the summary
counts it (`sitepass_worker_lost`).

Templates carry across crawls (NEWSCRAWL_INCREMENTAL): a site pass also reads the site's pages
stored by earlier crawls of the output folder (`CrawlHistory.context_pages`, the latest version
of each URL up to the site's page budget), so a few new pages are cleaned with the site's full
template; those pages shape the template and are never written again. When most template
hashes of the new pages were never seen on the stored ones (`newscrawl.site.carry`), the
site was redesigned: the summary flags it and the site pass runs on the new pages alone.

A killed crawl loses no page: pages are stored as they arrive, and a resumed crawl rebuilds
each pending site (stored pages, no articles yet) from its stored pages plus what it fetches
anew. A crawl stopped by Ctrl-C or SIGTERM writes its incomplete sites from the pages they
have and marks them partial (`CrawlState.mark_partial`): the resumed crawl deletes their rows
and writes them again from all their pages. Once a drained site is written, what is kept for
it is let go (`site_complete` with final=True), and the spider starts the next site.

A site whose articles are written is done: its pages replayed on resume are skipped; if its
nodes were not written (a stop between the two), SiteLevel alone runs on its stored pages
(`LabelJob`, in a worker as a site pass does).

What a site holds here does not grow with its pages' bytes: a page the `pages` dataset stored (its
pipeline runs before this one) is kept without its bytes, and the site pass reads them from the
site's stored files (closed first, `site_complete`) a row group at a time, in the worker. The site
pass of SiteLevel without context pages streams (`newscrawl.site.stream_pass`), its first pass
reading the node hashes the crawl's parse stored beside each page
(`newscrawl.template.node_summary`) instead of parsing it: one page's tree and node records at a
time, its `nodes` rows written to a staging file as they are made and copied into the dataset here
a row group at a time. Each page's result (its final text and the other fields of its row) goes the
same way: the pass writes it to a file this process names (`SitePassJob.results`) as it is made,
and the rows are written from it one page at a time (`site_rows`), so neither process holds the
site's texts at once; the file is removed once the site is written, or the pass failed or its
worker died. Only a crawl that does not store its raw pages keeps their bytes here: a page that
would take its site's buffer past NEWSCRAWL_SITELEVEL_MAX_BYTES is then extracted page by page
instead (and, not stored, never in the site pass too), as is every page with NEWSCRAWL_SITELEVEL
off (then this pipeline is not used). A site of more than 64 MB of pages is never split over the
workers (a split pass holds every page's node records in this process).

Settings: NEWSCRAWL_SITELEVEL (on/off), NEWSCRAWL_SITELEVEL_MAX_BYTES, NEWSCRAWL_GEOMETRY,
NEWSCRAWL_SITE_METHOD (what labels the site's template nodes: sitelevel, sst, pagelets, entropy),
NEWSCRAWL_SITEPASS_WORKERS (worker processes; -1: one per core, 0: a thread),
NEWSCRAWL_SITEPASS_SPLIT_PAGES (a site of at least this many pages whose pass would run alone,
no other site being crawled, is split over the workers, same rows; 0: never).
"""

from __future__ import annotations

import dataclasses
import logging
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from twisted.internet import defer, threads

from newscrawl.crawl.errors import record
from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.crawl.history import crawl_history
from newscrawl.crawl.items import PageItem
from newscrawl.crawl.middlewares.sitecap import page_count
from newscrawl.pipelines.classify import ArticleClassifierPipeline
from newscrawl.pipelines.extraction import ExtractionPipeline
from newscrawl.pipelines.parquet import (
    DatasetPipeline,
    ParquetWriterPipeline,
    site_complete,
    writer_options,
)
from newscrawl.site.site_context import site_methods
from newscrawl.site.site_job import (
    LabelJob,
    PassSettings,
    SitePasser,
    SitePassJob,
    SitePassResult,
    log_level,
    run_labels,
)
from newscrawl.site.site_pool import SitePassPool, pool_size
from newscrawl.site.site_store import (
    StoredBytes,
    StoredRef,
    context_item,
    give_back_memory,
    pass_page,
    site_rows,
    stored_items,
)
from newscrawl.site.slot_cut import PAGE_STAGE
from newscrawl.spiders.site import site_drained
from newscrawl.storage.writer import closed_partitions
from newscrawl.template.node_table import nodes_writer
from newscrawl.template.sitemethods import check_site_method

if TYPE_CHECKING:
    import pyarrow as pa
    from scrapy.crawler import Crawler

__all__ = ["SitePassPipeline"]

# The most bytes of a site's articles rows held before they are written as a row group.
ARTICLE_GROUP_BYTES = 8 << 20

logger = logging.getLogger(__name__)
# A site of more raw bytes than this is never split: the split pass holds every page's node
# records in the crawl process, the whole pass in a worker streams them.
SPLIT_MAX_BYTES = 64 << 20


class SitePassPipeline:
    """Per-site buffers of raw pages; the site pass writes `nodes` and `articles` rows."""

    def __init__(self, crawler: Crawler, max_bytes: int, geometry: str, workers: int = 0) -> None:
        self.crawler = crawler
        self.state = crawl_state(crawler)
        self.max_bytes = max_bytes
        self.geometry = geometry
        method = crawler.settings.get("NEWSCRAWL_SITE_METHOD") or "sitelevel"
        self.method = check_site_method(method)  # a wrong name stops the crawl at its start
        self.extraction = ExtractionPipeline.from_crawler(crawler)
        self.classifier = ArticleClassifierPipeline(crawler)
        self.articles = ParquetWriterPipeline(crawler)
        # a site's rows close together in one file, even for a site at its cap; a row group of
        # them held at a time is at most ARTICLE_GROUP_BYTES of text, however large the site
        options = writer_options(crawler.settings)
        limit = min(options["row_group_bytes"], ARTICLE_GROUP_BYTES)
        self.articles.options = {**options, "row_group_bytes": limit}
        self.articles.close_at_cap = False
        options = {**writer_options(crawler.settings), "row_group_rows": 65_536}
        self.nodes = nodes_writer(self.state.dataset_root("nodes"), **options)
        self.buffers: defaultdict[str, list[PageItem]] = defaultdict(list)
        self.sizes: defaultdict[str, int] = defaultdict(int)
        self.raw_pages: DatasetPipeline | None = None  # what stores each page before us
        self.refs: dict[str, StoredRef] = {}  # final_url: where a page being passed is stored
        self.done: set[str] = set()  # sites whose articles are written
        self.labelled: set[str] = set()  # sites whose nodes are written
        self.pending: set[str] = set()  # resumed: sites with stored pages and no articles
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
        # the pass itself: in worker processes (one pool per crawl), or in a thread here with a
        # chain of its own, built when needed (the next site's pass may run while one is written)
        level = log_level(crawler.settings["LOG_LEVEL"])
        self.chain = PassSettings(self.extraction.settings(), level)
        self.pool = SitePassPool(workers, self.chain) if workers else None
        self.passer: SitePasser | None = None
        self.in_thread = defer.DeferredLock()  # one pass in a thread at a time
        # site passes computed at once (one per worker process; one in a thread), their rows
        # written one site at a time, in the order the sites finished (`_turn`)
        self.slots = defer.DeferredSemaphore(self.pool.workers if self.pool else 1)
        self.passing = 0  # site passes under way or waiting for a slot
        self.split_pages = crawler.settings.getint("NEWSCRAWL_SITEPASS_SPLIT_PAGES", 48)
        self.last_written: defer.Deferred[None] = defer.succeed(None)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SitePassPipeline:
        from newscrawl.template.geometry import check_geometry

        settings = crawler.settings
        if not settings.getbool("NEWSCRAWL_SITELEVEL", True):
            raise NotConfigured("NEWSCRAWL_SITELEVEL is off: pages are extracted one by one")
        return cls(
            crawler,
            settings.getint("NEWSCRAWL_SITELEVEL_MAX_BYTES", 256 << 20),
            check_geometry(settings.get("NEWSCRAWL_GEOMETRY", "flow")),
            pool_size(settings.getint("NEWSCRAWL_SITEPASS_WORKERS", -1)),
        )

    def open_spider(self) -> None:
        self.articles.open_spider()
        self.raw_pages = self._raw_pages()
        self.done = self._written_sites("articles")
        self.labelled = self._written_sites("nodes")
        self.pending = set(self.state.site_pages) - self.done
        if self.pool is not None and self.state.site_pages:
            self.pool.start_soon()  # resumed: sites to pass now

    def _raw_pages(self) -> DatasetPipeline | None:
        """The pipeline that stores each page's bytes (`pages`) before this one sees it, if
        the crawl has one: a page it stored is kept here without its bytes, and the site pass
        reads them from the stored files."""
        manager = getattr(getattr(self.crawler.engine, "scraper", None), "itemproc", None)
        pipelines = list(getattr(manager, "middlewares", ()))
        for pipeline in pipelines:
            if pipeline is self:
                return None  # none before this one
            if isinstance(pipeline, DatasetPipeline) and pipeline.dataset == "pages":
                return pipeline
        return None

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
        if self.pool is not None:  # its workers start after the crawl's first pages
            self.pool.page_arrived()
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
        """Keep the page for its site pass: without its bytes when they are stored (the pass
        reads them from the stored files), else with them; False when the site's buffer of
        bytes is full (the page is then extracted page by page, and not stored: never in the
        pass as well)."""
        if self.raw_pages is not None and item.final_url in self.raw_pages.written:
            held = dataclasses.replace(item, dom=None, html=b"", node_hashes=b"")
            self.buffers[item.site].append(held)
            return True
        if self.sizes[item.site] + len(item.html) > self.max_bytes:
            self.crawler.stats.inc_value("newscrawl/sitepass/over_budget")
            return False
        self.buffers[item.site].append(dataclasses.replace(item, dom=None, node_hashes=b""))
        self.sizes[item.site] += len(item.html)
        return True

    async def finish(self, site: str, partial: bool = False) -> None:
        """Run the site pass of `site` and write its nodes and articles (once per site).
        `partial`: the crawl was stopped before the site was complete; the site is marked so a
        resumed crawl writes it again from all its pages."""
        before, written = self._turn()
        results = self._results_path()
        try:
            passed = await self._passed(site, partial, results)
            await maybe_deferred_to_future(before)  # the sites that finished first are written
            if passed is not None:
                items, result = passed
                if result is not None:
                    self._apply(site, items, result)
                self._write(site, items, result)
        finally:
            Path(results).unlink(missing_ok=True)
            if site in self.expected:  # drained: every page of it has arrived
                self._release(site)
            written.callback(None)

    def _staging(self) -> Path:
        """The folder the site passes write their temporary files to."""
        return self.state.state_dir / "nodes-staging"

    def _results_path(self) -> str:
        """A new file name for a site pass's per-page results (`SitePassJob.results`)."""
        import uuid

        return str(self._staging() / f"results-{uuid.uuid4().hex}.pickle")

    def _turn(self) -> tuple[defer.Deferred[None], defer.Deferred[None]]:
        """(fires once the sites that finished before this one are written, to fire once this
        one is): each site's rows, stats and signals come in the order the sites finished,
        whichever pass is done first."""
        before, self.last_written = self.last_written, defer.Deferred()
        return before, self.last_written

    async def _passed(
        self, site: str, partial: bool, results: str
    ) -> tuple[list[PageItem], SitePassResult | None] | None:
        """The site's pages and its pass (None: the site was passed already), once one of
        the pool's workers is free for it (the thread: once the pass before it is done)."""
        self.passing += 1  # from here: counted as a pass under way or waiting for a slot
        try:
            await maybe_deferred_to_future(self.slots.acquire())
        except BaseException:
            self.passing -= 1
            raise
        try:
            if site in self.done:
                return None
            self.done.add(site)
            if partial:
                self.state.mark_partial(site)
                self.crawler.stats.inc_value("newscrawl/sitepass/partial_sites")
            buffered = self.buffers.pop(site, [])
            self.sizes.pop(site, None)
            # the site's stored pages into closed files: the pass reads them there
            self.crawler.signals.send_catch_log(site_complete, site=site, final=False)
            items = await maybe_deferred_to_future(
                threads.deferToThread(self._site_items, site, buffered)
            )
            return items, await self._site_pass(site, items, results)
        finally:
            self.passing -= 1
            self.slots.release()

    def _site_items(self, site: str, buffered: list[PageItem]) -> list[PageItem]:
        """The site's pages: stored by an earlier run of this crawl, then buffered here, then
        (`context`) stored by earlier crawls of the folder, to carry the site's template.
        Stored pages come without their bytes: where they are goes to `refs`."""
        fresh = {item.final_url for item in buffered}
        found = stored_items(self.state, site, refs=self.refs)
        stored = [item for item in found if item.final_url not in fresh]
        items = stored + buffered
        if not self.incremental or not items:
            return items
        cap = max((item.max_pages for item in items), default=0) or self.default_cap
        seen = {url for item in items for url in (item.url, item.final_url)}
        rows = self.history.context_pages(site, seen, cap - len(items))
        return items + [context_item(row, site) for row in rows]

    async def _site_pass(
        self, site: str, items: list[PageItem], results: str
    ) -> SitePassResult | None:
        """The site pass of `items` (in a worker process, or a thread), each page's result
        written to the file `results`; None when it did not run: the items are extracted
        page by page then."""
        pages = tuple(pass_page(item, self._ref(item)) for item in items)
        staging = str(self._staging())
        job = SitePassJob(
            site,
            self.state.crawl_id,
            pages,
            self.geometry,
            self.method,
            staging=staging,
            results=results,
        )
        result: SitePassResult | None
        try:
            if self.pool is None or not self.pool.started:  # a thread, one pass at a time
                passer = self.passer = self.passer or SitePasser.from_settings(self.chain)
                passed = self.in_thread.run(threads.deferToThread, passer.run, job)
                result = await maybe_deferred_to_future(passed)
            else:
                result = await self._in_worker(job)
        except Exception as err:  # a bug in the pass must not cost the site's pages
            logger.warning("site pass of %s failed: %s: %s", site, type(err).__name__, err)
            self.crawler.stats.inc_value("newscrawl/sitepass/site_errors")
            result = None
        if result is None:
            self.crawler.stats.inc_value("newscrawl/sitepass/page_level_sites")
            await maybe_deferred_to_future(threads.deferToThread(self._page_level, items))
        return result

    async def _in_worker(self, job: SitePassJob | LabelJob) -> SitePassResult | None:
        """The job in a worker process; when the pool broke (a worker died: killed, out of
        memory), once more in a worker of its own; None when that one died too."""
        assert self.pool is not None
        last = "labelled in a thread" if isinstance(job, LabelJob) else "extracted page by page"

        def died(attempt: int) -> None:
            then = "tried again alone" if attempt == 1 else last
            logger.warning("site pass of %s: its worker process died (%s)", job.site, then)
            detail = f"attempt {attempt}: its worker process died; {then}"
            record(self.crawler, "sitepass_worker_lost", job.site, job.site, detail)

        if isinstance(job, LabelJob):
            return await self.pool.run_twice(job, died)
        methods = site_methods(self.extraction.extractors.values())
        parts = self._parts(job, methods)
        result = await self.pool.run_twice(job, died, parts, "sitelevel" in methods)
        if result is not None and result.split:
            self.crawler.stats.inc_value("newscrawl/sitepass/split_sites")
            logger.info("site pass of %s split over %d workers", job.site, result.split)
        return result

    def _parts(self, job: SitePassJob, methods: set[str]) -> int:
        """How many workers the site's pass is split over: all of them for a large site whose
        pass would run alone while no other site is being crawled (the machine is idle but
        for it: a crawl of one large site, or the last site of a crawl), else one - beside
        other sites' crawling the split's second parse of each page costs more than it gains.
        The split pass gives the same rows; what it cannot split (earlier crawls' pages,
        another site method or geometry) runs whole."""
        assert self.pool is not None
        if not self.split_pages or self.pool.workers < 2 or self.passing > 1:
            return 1
        if any(pages and site != job.site for site, pages in self.buffers.items()):
            return 1
        if len(job.pages) < self.split_pages or any(page.context for page in job.pages):
            return 1
        if sum(page.nbytes for page in job.pages) > SPLIT_MAX_BYTES:
            return 1  # its parts' node records would all be held here: streamed whole instead
        if job.method != "sitelevel" or job.geometry != "flow" or methods - {"sitelevel"}:
            return 1
        return self.pool.workers

    def _page_level(self, items: list[PageItem]) -> None:
        """Page-level extraction and flag of the site's own pages (in a thread): no pass ran."""
        for item in (item for item in items if not item.context):
            self._page_by_page(item)

    def _ref(self, item: PageItem) -> StoredRef | None:
        """Where the page's bytes are stored, when the item holds none."""
        return None if item.html else self.refs.get(item.final_url)

    def _page_by_page(self, item: PageItem) -> None:
        """One page's page-level extraction and article flag, as when the site pass is off
        (its stored bytes read for it, and let go after)."""
        ref = self._ref(item)
        if ref is not None:
            item.html = StoredBytes(0).html(pass_page(item, ref))
        self.extraction.fill(item)
        if item.dom is not None:
            self.classifier.classify(item)
        item.dom = None
        item.stage = PAGE_STAGE
        if ref is not None:
            item.html = b""

    def _apply(self, site: str, items: list[PageItem], result: SitePassResult) -> None:
        """What the pass gave: log and record what it met, then set the pages' results it
        holds (those in its results file are read as each page is written)."""
        for name, level, message in result.logs:
            logging.getLogger(name).log(level, "%s", message)
        for kind, url, detail in result.recorded:
            record(self.crawler, kind, url, "", detail)
        stats = self.crawler.stats
        if result.peak_rss_mb:  # a worker's (the summary's peak_rss_sitepass_mb)
            stats.max_value("newscrawl/sitepass/peak_rss_mb", round(result.peak_rss_mb, 1))
        if result.errors:
            stats.inc_value("newscrawl/sitepass/site_errors", result.errors)
        if result.unseen_pct is not None:
            stats.set_value(f"newscrawl/site/{site}/template_unseen_pct", result.unseen_pct)
        if result.redesigned:
            stats.set_value(f"newscrawl/site/{site}/redesigned", 1)
        for index, page in result.pages.items():
            page.apply(items[index])

    def _write(self, site: str, items: list[PageItem], result: SitePassResult | None) -> None:
        """The site's articles rows (in URL order, closed together), then its nodes; its pages
        are closed into their files first (`site_complete`)."""
        self.crawler.signals.send_catch_log(site_complete, site=site, final=False)
        for item in site_rows(items, result):
            if not item.stage:  # the pass did not reach it: page by page
                self._page_by_page(item)
            self.articles.process_item(item)
        items = [item for item in items if not item.context]  # earlier crawls wrote those
        assert self.articles.writer is not None
        # versions and duplicates first: once its articles file is there, a site is written
        self.articles.repeats.close_site(site)
        self.articles.writer.close_partition(self.state.partition(site))
        logger.info("site pass: %s, %d pages written", site, len(items))
        for item in items:
            self.refs.pop(item.final_url, None)
        if result is not None and result.ran:
            stage = "site" if result.template else "page"
            self.crawler.stats.inc_value(f"newscrawl/sitepass/{stage}_sites")
            self._write_nodes(site, result.nodes, result.nodes_file)

    def _write_nodes(self, site: str, table: pa.Table | None, staged: str = "") -> None:
        """The site's `nodes` rows (None and no `staged` file: the site was too small to
        label), in a file of their own; a `staged` file is read a row group at a time and
        removed."""
        try:
            if site in self.labelled:
                return  # written before a stop that came before the articles
            self.labelled.add(site)
            rows = 0
            partition = {"crawl": self.state.crawl_id, "site": site}
            if staged:
                rows = self._copy_staged(staged, partition)
            elif table is not None:
                self.nodes.write_table(table, partition)
                rows = table.num_rows
            if rows:
                self.nodes.close_partition(partition)
            self.crawler.stats.inc_value("newscrawl/written/nodes", rows)
        finally:
            if staged:
                Path(staged).unlink(missing_ok=True)

    def _copy_staged(self, staged: str, partition: dict[str, str]) -> int:
        """The rows of a site pass's staging file into the site's `nodes` partition."""
        import pyarrow.parquet as pq

        rows = 0
        with pq.ParquetFile(staged) as source:
            for group in range(source.num_row_groups):
                table = source.read_row_group(group)
                self.nodes.write_table(table, partition)
                self.nodes.flush(partition)  # a row group held at a time
                rows += table.num_rows
                del table
                give_back_memory()  # not the high-water mark of every group copied
        return rows

    async def _label_stored(self, site: str) -> None:
        """SiteLevel alone for a site whose articles were written but whose nodes were not
        (a stop between the two): from its stored pages, none of which is fetched again."""
        refs: dict[str, StoredRef] = {}
        read = threads.deferToThread(stored_items, self.state, site, refs)
        items = await maybe_deferred_to_future(read)
        pages = tuple(pass_page(item, refs.get(item.final_url)) for item in items)
        job = LabelJob(site, self.state.crawl_id, pages, self.geometry, self.method)
        result = None
        if self.pool is not None:  # in a worker, as a site pass; in a thread when both died
            result = await self._in_worker(job)
        if result is None:
            result = await maybe_deferred_to_future(threads.deferToThread(run_labels, job))
        self._write_nodes(site, result.nodes)

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
        left = sorted(set(self.buffers) | (self.pending - self.done))
        passes = [deferred_from_coro(self.finish(site, partial=stopped)) for site in left]
        for site, finishing in zip(left, passes, strict=True):  # all at once, written in order
            try:
                await maybe_deferred_to_future(finishing)
            except Exception as err:  # the other sites are still written
                logger.error("site pass of %s: %s", site, err)
        for site in sorted(set(self.state.site_pages) - self.labelled):
            await self._label_stored(site)
        self.articles.close_spider()
        self.nodes.close()
        if self.pool is not None:
            self.pool.close()
