"""The ingest spider: WARC records in, the crawl's PageItems out, through the crawl's pipelines.

A real Scrapy spider run by a real crawler, so ITEM_PIPELINES is built from the settings exactly
as for a crawl: whatever a crawl does per page and per site happens to archived pages too. It
makes no request. `start()` reads the archives one after the other and hands each HTML response
to the pipelines itself, waiting until the pipelines are done with it before reading on, so
pages go through in archive order and at most one page is in flight.

Per WARC file:
- records are counted by type; only response records of http(s) URLs with status 200 and an HTML
  (or undeclared) Content-Type have their payload read; the rest are counted as skipped, by
  reason, with examples; damage the reader reports is counted the same way;
- a URL met again in the same file is a duplicate (the first capture wins);
- pages are grouped by host into sites, as a crawl names them (host without "www.", a port when
  not the default), at most MAX_PAGES_PER_SITE pages a site; a body that is not a page after
  all is skipped as in a crawl. Each page is parsed once: here when its DOM goes down the
  pipelines (SiteLevel off), else by its site's site pass, and here it is only checked the way
  the crawl's parse pool checks a fetched page (decoded, within the budgets, an lxml tree built
  and dropped), so the pages refused are the crawl's;
- a site is closed (its rows written out, its SiteLevel buffer labelled) when it has its page
  cap, when too much is open at once (more than NEWSCRAWL_INGEST_OPEN_PAGES pages,
  NEWSCRAWL_INGEST_OPEN_BYTES bytes or NEWSCRAWL_INGEST_OPEN_SITES sites: the site with the most
  open pages is closed first; its later pages start a new group), and at the end of the file;
- then the file's rows are published and the file is marked ingested
(`newscrawl.scale.ingest_outputs`).

Every file is thus processed on its own: the output of a file does not depend on the files
before it, which is what lets the files run as separate Dask tasks with identical results.
"""

from __future__ import annotations

import gc
import hashlib
import inspect
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy import signals
from scrapy.exceptions import DropItem
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.defer import Deferred

from newscrawl.crawl.errors import error_report
from newscrawl.crawl.extensions.content import is_html_type
from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.crawl.items import PageItem, WarcOrigin
from newscrawl.crawl.middlewares.sitecap import page_count, pages_stat
from newscrawl.html.parse import page_text, parse_html
from newscrawl.html.tree import PageError, page_tree
from newscrawl.html.urls import SiteScope, canonical_url, usable_host
from newscrawl.scale.ingest_outputs import (
    FileReport,
    clear_partial,
    file_slug,
    publish,
    sync_folders,
    write_marker,
)
from newscrawl.storage.schemas import KEPT_HEADERS
from newscrawl.storage.warc_reader import read_archive
from newscrawl.storage.warc_records import Problem, Record, RecordHead

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["IngestSpider"]

logger = logging.getLogger(__name__)
_UNKNOWN_DATE = datetime.fromtimestamp(0, UTC)
_SITE_STATS = ("pages", "rows", "articles")
_KEPT_HEADERS = frozenset(KEPT_HEADERS)
_YIELD_EVERY = 0.05  # seconds of pipeline work between turns of the event loop


def _http_url(url: str) -> bool:
    return url.lower().startswith(("http://", "https://"))


def _printable(text: str) -> str:
    """`text` with its control characters written as escapes (an example in a report)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def wanted(head: RecordHead) -> bool:
    """A record whose payload the ingest reads: an HTML response of status 200."""
    return (
        head.type == "response"
        and head.status == 200
        and _http_url(head.url)
        and is_html_type(head.header("content-type"))
    )


class IngestSpider(scrapy.Spider):
    """Feed the HTML responses of WARC/ARC files to the item pipelines, file by file."""

    name = "ingest"

    def __init__(self, files: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.files = [Path(f) for f in files]
        self.reports: list[FileReport] = []
        self._closing = False
        self._yielded = 0.0  # time.monotonic() when the event loop last had a turn
        self.parse_here = True  # False: pages are parsed by the site pass, not on arrival
        self._chain: list[Callable[[Any], Any]] | None = None  # see _own_chain

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> IngestSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._setup(crawler)
        return spider

    def _setup(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.cap = settings.getint("MAX_PAGES_PER_SITE", 200)
        self.max_payload = settings.getint("DOWNLOAD_MAXSIZE", 10 << 20) or (10 << 20)
        self.max_open_pages = settings.getint("NEWSCRAWL_INGEST_OPEN_PAGES", 2000)
        self.max_open_bytes = settings.getint("NEWSCRAWL_INGEST_OPEN_BYTES", 256 << 20)
        self.max_open_sites = settings.getint("NEWSCRAWL_INGEST_OPEN_SITES", 500)
        self.state = crawl_state(crawler)
        self.staging = Path(settings.get("NEWSCRAWL_OUT"))
        self.out = Path(settings.get("NEWSCRAWL_INGEST_OUT") or settings.get("NEWSCRAWL_OUT"))
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    def _spider_closed(self, spider: Any, reason: str) -> None:
        self._closing = True

    async def start(self) -> AsyncIterator[Any]:
        from newscrawl.site.site_pipeline import SitePassPipeline

        _warm_up()
        self.parse_here = not any(isinstance(p, SitePassPipeline) for p in self._pipelines())
        self._chain = self._own_chain()
        for path in self.files:
            if self._closing:
                break
            await self._ingest(path)
        return
        yield  # an async generator that yields nothing: the pages go to the pipelines directly

    # -- one file ------------------------------------------------------------------------------

    async def _ingest(self, path: Path) -> None:
        started = time.perf_counter()
        slug = file_slug(path)
        removed = clear_partial(self.out, self.state.crawl_id, slug)
        if removed:
            logger.warning("%s: %d files of an interrupted ingest removed", path, removed)
        report = FileReport(file=str(path), slug=slug, size=path.stat().st_size)
        errors_before = Counter(error_report(self.crawler).counts)
        articles_before = self._stat("newscrawl/written/articles_true")
        run = _FileRun()
        extracted_before = self._extract_seconds()
        for entry in read_archive(path, wanted, self.max_payload):
            if self._closing:
                return
            if isinstance(entry, Problem):
                where = f"{path.name}@{entry.offset}: {entry.detail}"
                report.note(report.problems, entry.kind, where)
                continue
            report.records[entry.head.type] += 1
            item = self._page(entry, path, report, run)
            if item is not None:
                await self._process(item, run, slug)
        await self._close_sites(sorted(run.sites), run, slug)
        sync_folders(run.unsynced)
        self._forget(run.sites)
        report.pages = run.pages
        report.sites = len(run.sites)
        report.payload_bytes = run.bytes
        report.articles = self._stat("newscrawl/written/articles_true") - articles_before
        after = error_report(self.crawler).counts - errors_before
        report.errors = dict(after)
        report.seconds = round(time.perf_counter() - started, 3)
        extracted = run.parse_seconds + self._extract_seconds() - extracted_before
        report.extract_seconds = round(extracted, 3)
        write_marker(self.out, self.state.crawl_id, report)
        self.reports.append(report)
        logger.info("%s: %d pages, %d articles", path, report.pages, report.articles)

    def _page(
        self, record: Record, path: Path, report: FileReport, run: _FileRun
    ) -> PageItem | None:
        """The record's PageItem, or None (counted) when it is not a page to ingest."""
        head = record.head
        if head.type != "response":
            return None
        url = head.url
        shown = _printable(url)
        if not _http_url(url):
            report.note(report.skipped, "not_http", shown or f"{path.name}@{head.offset}")
            return None
        if head.status != 200:
            report.note(report.skipped, "not_200", f"{shown} (status {head.status})")
            return None
        content_type = head.header("content-type")
        if not is_html_type(content_type) or record.payload is None:
            report.note(report.skipped, "not_html", f"{shown} ({_printable(content_type)})")
            return None
        try:
            url = canonical_url(url)
            scope = SiteScope.of(url)
        except ValueError:  # `http://[::1`, a port out of range: no page's address
            report.note(report.skipped, "bad_url", shown)
            return None
        if not usable_host(scope.host):  # `http:///x`, `http://../x`: no site to name
            report.note(report.skipped, "bad_url", f"{shown} (no usable host)")
            return None
        key = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest()
        if key in run.seen:
            report.note(report.skipped, "duplicate", url)
            return None
        run.seen.add(key)
        site = scope.name
        if self.cap and page_count(self.crawler, site) >= self.cap:
            report.note(report.skipped, "cap_reached", url)
            return None
        try:
            dom = None
            if self.parse_here:
                parse_started = time.perf_counter()
                dom = parse_html(record.payload, url, content_type)
                run.parse_seconds += time.perf_counter() - parse_started
            else:  # parsed by the site pass: refused here as the crawl refuses a page
                page_tree(page_text(record.payload, content_type, url=url).text)
        except PageError as err:
            report.note(report.skipped, "not_html", f"{url} ({err})")
            return None
        self.crawler.stats.inc_value(pages_stat(site))
        headers = {name: v for k, v in head.http_headers if (name := k.lower()) in _KEPT_HEADERS}
        return PageItem(
            url=url,
            final_url=url,
            site=site,
            crawl=self.state.crawl_id,
            fetched_at=head.date or _UNKNOWN_DATE,
            status=200,
            content_type=content_type,
            headers=headers,
            html=record.payload,
            dom=dom,
            max_pages=self.cap,
            warc=WarcOrigin(path.name, head.offset, head.record_id, head.date),
        )

    # -- the pipelines -------------------------------------------------------------------------

    async def _process(self, item: PageItem, run: _FileRun, slug: str) -> None:
        """Send the page through the item pipelines and wait for them; then keep what is open
        within its bounds."""
        site, size = item.site, len(item.html)
        run.sites.add(site)
        run.pages += 1
        run.bytes += size
        dom = item.dom  # freed below, after the pipelines: part of the parse's cost
        await self._send(item)
        if dom is not None:
            freeing = time.perf_counter()
            del dom
            run.parse_seconds += time.perf_counter() - freeing
        if self.cap and page_count(self.crawler, site) >= self.cap:
            run.drop_open(site)  # the pipelines closed it at its cap
            run.capped.add(site)  # its files are published with the next sites closed
        else:
            run.add_open(site, size)
        while run.open_pages and (
            run.open_page_total > self.max_open_pages
            or run.open_byte_total > self.max_open_bytes
            or len(run.open_pages) > self.max_open_sites
        ):
            fullest = min(run.open_pages, key=lambda s: (-run.open_pages[s], s))
            run.drop_open(fullest)
            self.crawler.stats.inc_value("newscrawl/ingest/sites_closed_early")
            await self._close_sites([fullest], run, slug)

    async def _send(self, item: PageItem) -> None:
        """The item through the item pipelines, as Scrapy's scraper sends a spider's item (an
        error or a DropItem is logged and counted, never stops the ingest; `item_scraped` goes
        to its receivers), but without the per-item costs the ingest has no use for: the
        asynchronous signal dispatch, its log record and a turn of the event loop for every
        page. The loop is given a turn every `_YIELD_EVERY` seconds instead, so Ctrl-C and the
        spider's closing are still seen within a page or so."""
        stats = self.crawler.stats
        try:
            output = await self._through_pipelines(item)
        except DropItem as err:
            stats.inc_value("item_dropped_count")
            logger.debug("dropped %s: %s", item.final_url, err)
        except Exception:
            stats.inc_value("newscrawl/ingest/pipeline_errors")
            logger.exception("item pipelines failed on %s", item.final_url)
        else:  # Scrapy's CoreStats counts item_scraped_count from the signal
            self.crawler.signals.send_catch_log(
                signal=signals.item_scraped, item=output, response=None, spider=self
            )
        now = time.monotonic()
        if now - self._yielded >= _YIELD_EVERY:
            self._yielded = now
            await _reactor_turn()

    async def _through_pipelines(self, item: PageItem) -> Any:
        """Each pipeline's `process_item` in turn, as Scrapy's chain calls them (a Deferred or
        an awaitable result is waited for), called directly when they are all newscrawl's own
        (`_own_chain`); else through Scrapy's pipeline manager."""
        if self._chain is None:
            manager = self.crawler.engine.scraper.itemproc
            if hasattr(manager, "process_item_async"):
                return await manager.process_item_async(item)
            return await maybe_deferred_to_future(manager.process_item(item, self))  # < 2.14
        output: Any = item
        for method in self._chain:
            output = method(output)
            if not isinstance(output, PageItem):  # the common case needs no ABC look-up
                output = await _settled(output)
        return output

    def _own_chain(self) -> list[Callable[[Any], Any]] | None:
        """The pipelines' `process_item` methods in Scrapy's order when every one is
        newscrawl's own (one argument, the item), else None. Scrapy's chain wraps each call
        of each page in a coroutine and looks up whether the method wants the spider too:
        Python work per page and pipeline that the ingest, which sends every page of an
        archive through them, need not pay for methods it knows."""
        manager = getattr(self.crawler.engine.scraper, "itemproc", None)
        methods = list(getattr(manager, "methods", {}).get("process_item", ()))
        if all(getattr(m, "__module__", "").startswith("newscrawl.") for m in methods):
            return methods
        return None

    def _extract_seconds(self) -> float:
        """Seconds the extraction pipeline of this process has spent in its extractors."""
        return sum(getattr(p, "extract_seconds", 0.0) for p in self._pipelines())

    def _pipelines(self) -> list[Any]:
        manager = getattr(self.crawler.engine.scraper, "itemproc", None)
        return list(getattr(manager, "middlewares", ()))

    async def _close_sites(self, sites: Sequence[str], run: _FileRun, slug: str) -> None:
        """Have every pipeline write out what it holds of these sites (their `close_site`),
        then publish the files they closed: a site closed early and met again starts afresh,
        with nothing of its earlier group left in staging."""
        pipes = [p for p in self._pipelines() if hasattr(p, "close_site")]
        for site in sites:
            for pipe in pipes:
                result = pipe.close_site(site)
                if inspect.isawaitable(result):
                    await result
        done = sorted({*sites, *run.capped})
        run.capped.clear()
        partitions = [self.state.partition(site) for site in done]
        run.seq = publish(self.staging, self.out, slug, run.seq, partitions, run.unsynced)

    def _forget(self, sites: set[str]) -> None:
        """Per-site counters of a finished file: a site's cap starts again in the next file,
        and nothing per site outlives the file (memory stays flat over many files), nor do the
        writers' lists of the files they closed (all published by now)."""
        for pipe in self._pipelines():
            if hasattr(pipe, "forget_files"):
                pipe.forget_files()
        stats = self.crawler.stats.get_stats()
        report = error_report(self.crawler)
        for site in sites:
            for name in _SITE_STATS:
                stats.pop(f"newscrawl/site/{site}/{name}", None)
            report.by_site.pop(site, None)

    def _stat(self, name: str) -> int:
        return int(self.crawler.stats.get_value(name, 0) or 0)


def _warm_up() -> None:
    """Pay the process's one-time costs before the first file's clock starts: pyarrow imports
    pandas (when installed) the first time it builds an array, which would otherwise land in
    the first site's Parquet flush. Then what the process has made so far (Scrapy, Twisted,
    the extractors and their models: objects that live as long as the process) is moved out of
    the garbage collector's sight: every full collection would walk them all again, and none is
    ever garbage."""
    import pyarrow as pa

    pa.array([""])
    gc.collect()
    gc.freeze()


async def _settled(result: Any) -> Any:
    """What a pipeline's `process_item` gave, its Deferred or awaitable waited for."""
    if isinstance(result, Deferred):
        return await maybe_deferred_to_future(result)
    if inspect.isawaitable(result):
        return await result
    return result


def _reactor_turn() -> Any:
    """An awaitable that lets the reactor run whatever is due before going on."""
    from twisted.internet import reactor  # Scrapy installs its reactor before this runs
    from twisted.internet.task import deferLater

    return maybe_deferred_to_future(deferLater(reactor, 0, lambda: None))


class _FileRun:
    """What one file's pass keeps: URLs seen (8-byte hashes), sites met, what is open."""

    __slots__ = (
        "bytes",
        "capped",
        "open_byte_total",
        "open_bytes",
        "open_page_total",
        "open_pages",
        "pages",
        "parse_seconds",
        "seen",
        "seq",
        "sites",
        "unsynced",
    )

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.sites: set[str] = set()
        self.open_pages: Counter[str] = Counter()
        self.open_bytes: Counter[str] = Counter()
        # their sums, kept as pages come and sites close: summing per page costs a look at
        # every open site (up to NEWSCRAWL_INGEST_OPEN_SITES of them) for every page
        self.open_page_total = 0
        self.open_byte_total = 0
        self.pages = 0
        self.bytes = 0
        # parsing pages on arrival and freeing their trees (pages the site pass parses: 0)
        self.parse_seconds = 0.0
        self.seq = 1  # number of the next file published
        self.capped: set[str] = set()  # sites at their cap since the last publish
        self.unsynced: set[Path] = set()  # OUT folders to sync before the file's marker

    def add_open(self, site: str, size: int) -> None:
        """One more page of `size` bytes open in `site`."""
        self.open_pages[site] += 1
        self.open_bytes[site] += size
        self.open_page_total += 1
        self.open_byte_total += size

    def drop_open(self, site: str) -> None:
        """`site` closed: none of its pages open any more."""
        self.open_page_total -= self.open_pages.pop(site, 0)
        self.open_byte_total -= self.open_bytes.pop(site, 0)
