"""The site spider: crawl each site of a site list, up to its page cap, for the article pipelines.

For each site it asks robots.txt for sitemaps (else /sitemap.xml), reads the feeds pages announce
with ``<link rel="alternate">``, and follows on-site links breadth first; a page's links are read
in the parse pool (`newscrawl.crawl.parsepool`), off the reactor thread.

Incremental (NEWSCRAWL_INCREMENTAL, on unless ``--full``): when the output folder holds earlier
crawls of a site (`newscrawl.crawl.history`), an article page stored before is not fetched again
unless a sitemap ``<lastmod>`` or a feed date says it changed; other stored pages (home,
sections, tags) and the sitemaps and feeds are fetched again with conditional requests, and a
304 (nothing new there) is not followed further; sitemap and feed entries go newest first; only
pages never stored count against the page cap.

Run it with ``scrapy crawl site -a sites=FILE_OR_URLS`` or ``newscrawl crawl SITES --out DIR``.
Settings: MAX_PAGES_PER_SITE (default 200), NEWSCRAWL_MAX_QUEUED_PER_SITE, NEWSCRAWL_TRAP_RUN,
NEWSCRAWL_SITES (when no -a sites= is given); see newscrawl/settings.py.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urljoin

import scrapy
from scrapy import signals
from scrapy.exceptions import IgnoreRequest
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.defer import maybe_deferred_to_future

from newscrawl.crawl.discovery.feeds import (
    feed_entries,
    feed_links,
)
from newscrawl.crawl.discovery.site_lists import SiteSpec, read_sites
from newscrawl.crawl.discovery.traps import (
    ShapeBudget,
    counts_against_budget,
    path_shape,
    shape_budget,
)
from newscrawl.crawl.errors import CrawlRefusal, record, record_failure, start_failure
from newscrawl.crawl.extensions.content import is_html_type
from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.crawl.history import (
    StoredFetch,
    conditional_headers,
    crawl_history,
    write_validators,
)
from newscrawl.crawl.items import PageItem
from newscrawl.crawl.lock import DirLock, take_run_lock
from newscrawl.crawl.middlewares.private import AddressPolicy, literal_address, parse_allow_private
from newscrawl.crawl.middlewares.sitecap import page_count, pages_stat
from newscrawl.crawl.parsepool import PageLinks, ParsePool
from newscrawl.html.dom import Dom
from newscrawl.html.tree import PageError, PageTooLargeError
from newscrawl.html.urls import (
    SiteScope,
    absolute_url,
    canonical_link,
    canonical_url,
    has_ignored_extension,
    trap_reason,
    url_shape,
)
from newscrawl.pipelines.parquet import site_complete
from newscrawl.spiders.runs import Parsed, SiteRun, request_of, site_drained, sleep
from newscrawl.spiders.site_listings import NOT_MODIFIED, SiteListings
from newscrawl.storage.schemas import KEPT_HEADERS

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from twisted.python.failure import Failure

__all__ = ["SiteRun", "SiteSpider", "site_drained"]

T = TypeVar("T")
_MAX_FEEDS_PER_SITE = 5


class SiteSpider(scrapy.Spider):
    """Crawl the sites of a site list; one PageItem per HTML page.

    A subclass that is given its sites later (`add_site`), such as the crawl worker's, sets
    `sites_required` to False.
    """

    name = "site"
    sites_required = True

    def __init__(
        self, sites: str | None = None, max_pages: str | int | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self._sites_arg = sites
        self._max_pages_arg = int(max_pages) if max_pages not in (None, "") else None
        self.sites: dict[str, SiteRun] = {}

    @cached_property
    def listings(self) -> SiteListings:
        """The requests robots.txt, sitemaps and feeds list for this spider's sites."""
        return SiteListings(self)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> SiteSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider._setup(crawler)
        return spider

    def _setup(self, crawler: Crawler) -> None:
        settings = crawler.settings
        source = self._sites_arg or settings.get("NEWSCRAWL_SITES")
        if not source and self.sites_required:
            raise ValueError("no sites: pass -a sites=FILE_OR_URLS or set NEWSCRAWL_SITES")
        cap = self._max_pages_arg
        self.default_cap: int = (
            cap if cap is not None else settings.getint("MAX_PAGES_PER_SITE", 200)
        )
        self.crawl_info = crawl_state(crawler)
        self.run_lock = _take_run_lock(self.crawl_info.out)
        crawler.signals.connect(self.run_lock.release, signal=signals.spider_closed)
        self.parser = ParsePool.from_crawler(crawler)  # pages parsed off the reactor thread
        self.max_active = settings.getint("NEWSCRAWL_MAX_ACTIVE_SITES", 0)
        self.waits_for_site_pass = False  # set by the site pass pipeline, when there is one
        crawler.signals.connect(self._site_released, signal=site_complete)
        crawler.signals.connect(self.parser.close, signal=signals.spider_closed)
        # Resumed from a paused crawl's queue (JOBDIR): requests come back from the queue and
        # the seen filter drops the start requests, so no site's frontier can be counted and a
        # site is complete only at its cap or at the crawl's end.
        jobdir = self.crawl_info.jobdir
        self.queue_resumed = jobdir is not None and (jobdir / "requests.queue").exists()
        self.history = crawl_history(crawler)
        self.incremental = settings.getbool("NEWSCRAWL_INCREMENTAL", True)
        self.validators: dict[str, dict[str, str]] = {}  # of this run's sitemaps and feeds
        self.max_queued = settings.getint("NEWSCRAWL_MAX_QUEUED_PER_SITE", 0)
        self.trap_run = settings.getint("NEWSCRAWL_TRAP_RUN", 10)
        self.trap_share = settings.getfloat("NEWSCRAWL_TRAP_SHARE", 0.1)
        self.policy = AddressPolicy(parse_allow_private(settings.get("NEWSCRAWL_ALLOW_PRIVATE")))
        for spec in read_sites(source) if source else []:
            self.add_site(spec)
        crawler.signals.connect(self._count_stored_pages, signal=signals.spider_opened)
        crawler.signals.connect(self._request_dropped, signal=signals.request_dropped)
        crawler.signals.connect(self._save_validators, signal=signals.spider_closed)

    def add_site(self, spec: SiteSpec) -> SiteRun:
        """Crawl `spec` too (its own page cap, else the spider's default)."""
        cap = spec.max_pages if spec.max_pages is not None else self.default_cap
        run = self.sites[spec.name] = SiteRun(spec, spec.scope, cap)
        run.shapes = ShapeBudget(shape_budget(cap, self.trap_share))
        return run

    def _save_validators(self) -> None:
        """Keep this run's sitemap and feed validators for the next run's conditional requests."""
        write_validators(self.history, self.validators)

    def _site_stat(self, run: SiteRun, name: str) -> None:
        self.crawler.stats.inc_value(f"newscrawl/site/{run.spec.name}/{name}")

    def _count_stored_pages(self) -> None:
        """On resume, pages stored before the stop count against each site's cap."""
        stored = self.crawl_info.site_pages
        for name in self.sites:
            if stored.get(name):
                self.crawler.stats.set_value(pages_stat(name), stored[name])

    # -- requests ------------------------------------------------------------------------------

    def _meta(self, run: SiteRun, kind: str, **extra: Any) -> dict[str, Any]:
        return {
            "site": run.spec.name,
            "site_scope": (run.scope.host, run.scope.port),
            "newscrawl_kind": kind,
            "max_pages": run.cap,
            **extra,
        }

    def _discovery(self, run: SiteRun, url: str, kind: str, priority: int = 0) -> scrapy.Request:
        run.discovery.add(canonical_url(url))
        meta = self._meta(run, kind)
        headers = {}
        if self.incremental and kind != "robots":
            headers = self.history.validators(canonical_url(url))
            if headers:  # a 304 reaches the callback: nothing new listed there
                meta["handle_httpstatus_list"] = [NOT_MODIFIED]
        callback = {
            "robots": self.parse_robots,
            "sitemap": self.parse_sitemap,
            "feed": self.parse_feed,
        }[kind]
        return scrapy.Request(
            url,
            callback=callback,
            errback=self.discovery_failed,
            meta=meta,
            headers=headers,
            priority=priority,
        )

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for run in list(self.sites.values()):
            while self._all_slots_taken():
                await sleep(0.1)
            run.started = True
            self._count_stored_articles(run)
            base = run.spec.url
            robots = self._discovery(run, urljoin(base, "/robots.txt"), "robots", priority=10)
            home = self._page_request(run, base, referer_shape=None, run_length=0, priority=10)
            if home is not None:
                home.meta["newscrawl_seed"] = True
            first = [robots] if home is None else [robots, home]
            first += self._known_feeds(run)
            run.outstanding += len(first)  # all counted before any can be answered
            for request in first:
                yield request

    def _all_slots_taken(self) -> bool:
        """NEWSCRAWL_MAX_ACTIVE_SITES sites are being crawled (or wait for their site pass):
        the next one starts when one is done, so memory does not grow with the site list.
        Resumed from a paused queue, sites' ends cannot be told, so all of them run."""
        if not self.max_active or self.queue_resumed:
            return False
        active = sum(run.started and not self._finished(run) for run in self.sites.values())
        return active >= self.max_active

    def _finished(self, run: SiteRun) -> bool:
        return run.drained and (run.released or not self.waits_for_site_pass)

    def _site_released(self, site: str, final: bool) -> None:
        """`site_complete`: the site pass wrote the site and let go of it."""
        run = self.sites.get(site)
        if run is not None and final:
            run.released = True

    def _known_feeds(self, run: SiteRun) -> list[scrapy.Request]:
        """Feeds an earlier run read (revalidated at once: they announce new articles even
        when the home page that links them is unchanged)."""
        if not self.incremental:
            return []
        feeds = []
        for url in self.history.feeds():
            if run.scope.contains(url) and run.feeds < _MAX_FEEDS_PER_SITE:
                run.feeds += 1
                feeds.append(self._discovery(run, url, "feed", priority=5))
        return feeds

    # -- the frontier of each site -------------------------------------------------------------

    def _answered(self, run: SiteRun | None, outputs: Iterable[T]) -> Iterator[T]:
        """The output of a callback or errback of one of `run`'s requests, counted: the
        requests it yields join the site's frontier, and once nothing of the site is in flight
        any more its frontier is exhausted (`site_drained`)."""
        if run is None:
            yield from outputs
            return
        run.outstanding -= 1
        try:
            for out in outputs:
                if isinstance(out, scrapy.Request):
                    run.outstanding += 1
                elif isinstance(out, PageItem):
                    run.pages += 1
                yield out
        finally:
            self._check_drained(run)

    def _request_dropped(self, request: scrapy.Request) -> None:
        """A request the scheduler refused (seen before) will never be answered."""
        run = self.sites.get(request.meta.get("site", ""))
        if run is not None:
            run.outstanding -= 1
            self._check_drained(run)

    def _check_drained(self, run: SiteRun) -> None:
        if self.queue_resumed:
            return
        if run.outstanding <= 0 and not run.drained:
            run.drained = True
            run.queued.clear()  # nothing of the site is asked for any more: memory stays flat
            run.discovery.clear()
            run.shapes.clear()
            run.links.clear()
            self.crawler.signals.send_catch_log(site_drained, site=run.spec.name, pages=run.pages)

    def _page_request(
        self,
        run: SiteRun,
        url: str,
        referer_shape: str | None,
        run_length: int,
        priority: int = 0,
        modified: datetime | None = None,
        canonical: bool = False,
        referer_path: str | None = None,
    ) -> scrapy.Request | None:
        """A request for a page of `run`'s site, or None (recorded) when it must not be made.
        `modified`: when a sitemap or feed says the page last changed; `canonical`: `url` is
        canonical already; `referer_path`: the path shape of the page it was found on."""
        url = url if canonical else canonical_url(url)
        if url in run.queued:
            return None
        if not run.scope.contains(url):
            self._offsite_link(run, url)
            return None
        if has_ignored_extension(url):
            self.crawler.stats.inc_value("newscrawl/links/not_a_page")
            return None
        shape = url_shape(url)
        length = run_length + 1 if shape == referer_shape else 0
        trap = trap_reason(url, length, self.trap_run)
        family = path_shape(url)
        budgeted = counts_against_budget(url, family, referer_path)
        if not trap and budgeted and run.shapes.spent(family):
            trap = f"over the budget of {run.shapes.limit} pages for {family}"
        if trap:
            record(self.crawler, "trap", url, run.spec.name, trap)
            run.queued.add(url)
            return None
        known = self._known(run, url)
        if known is not None and self._unchanged_article(run, url, known, modified):
            return None
        if known is not None and run.cap and run.refetches >= run.cap:
            # a site whose sitemap dates every URL today must not cost a whole re-crawl a run
            self.crawler.stats.inc_value("newscrawl/links/refetch_budget")
            return None
        if url in run.skipped:  # a sitemap or feed now says it changed
            run.skipped.discard(url)
            self._count_skipped(run)
        if run.cap and page_count(self.crawler, run.spec.name) >= run.cap:
            return None
        limit = self.max_queued or max(10 * run.cap, 1000)
        if len(run.queued) >= limit:
            self.crawler.stats.inc_value("newscrawl/links/queue_full")
            return None
        run.queued.add(url)
        if budgeted:
            run.shapes.take(family)
        meta = self._meta(run, "page", shape=shape, trap_run=length, path_shape=family)
        headers: dict[str, str] = {}
        if known is not None:
            run.refetches += 1
            meta["newscrawl_known"] = True  # not a new page: the page cap does not count it
            stored = self.history.site(run.spec.name).article(url)
            if stored is not None and not stored.is_article:
                headers = conditional_headers(known)  # a listing page: fetched if changed
                meta["handle_httpstatus_list"] = [NOT_MODIFIED]
        return scrapy.Request(
            url,
            callback=self.parse_page,
            errback=self.page_failed,
            meta=meta,
            headers=headers,
            priority=priority,
        )

    def _known(self, run: SiteRun, url: str) -> StoredFetch | None:
        """The earlier crawls' latest fetch of `url` (None: a new page, or a full crawl)."""
        if not self.incremental:
            return None
        return self.history.site(run.spec.name).known(url)

    def _unchanged_article(
        self, run: SiteRun, url: str, known: StoredFetch, modified: datetime | None
    ) -> bool:
        """True (counted) for an article stored before that nothing says has changed."""
        stored = self.history.site(run.spec.name).article(url)
        if stored is None or not stored.is_article or known.changed_by(modified):
            return False
        # not queued: a sitemap or feed met later may still say it changed
        run.skipped.add(url)
        self._count_skipped(run)
        return True

    def _count_stored_articles(self, run: SiteRun) -> None:
        """How many articles earlier crawls stored for the site: the summary's "unchanged" is
        those this run did not find changed, fetched again or not (a home page that answers
        304 hides them all from the frontier, and they are still unchanged)."""
        if self.incremental:
            stored = len(self.history.site(run.spec.name).stored_articles)
            self.crawler.stats.set_value(f"newscrawl/site/{run.spec.name}/stored_articles", stored)

    def _count_skipped(self, run: SiteRun) -> None:
        name = f"newscrawl/site/{run.spec.name}/unchanged"
        self.crawler.stats.set_value(name, len(run.skipped))

    def _offsite_link(self, run: SiteRun, url: str) -> None:
        """Offsite links are skipped quietly, except links to non-public addresses: reported."""
        address = literal_address(url)
        if address is not None and self.policy.refuses(address):
            record(self.crawler, "private_address", url, run.spec.name, "link refused")
            run.queued.add(url)
        else:
            self.crawler.stats.inc_value("newscrawl/links/offsite")

    # -- callbacks -----------------------------------------------------------------------------

    async def parse_page(self, response: Response) -> AsyncIterator[PageItem | scrapy.Request]:
        run = self.sites[response.meta["site"]]
        parsed = await self._parsed(response)
        if self.sites.get(run.spec.name) is not run:
            return  # dropped while the page was parsed (a crawl worker lost its lease)
        for out in self._answered(run, self._page(run, response, parsed)):
            yield out

    async def _parsed(self, response: Response) -> Parsed:
        """The page's links (and DOM, when parsed inline), parsed off the reactor thread by
        the parse pool; the error for a page that is refused; None when it is not parsed."""
        content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
        if response.status == NOT_MODIFIED or not is_html_type(content_type):
            return None
        parsing = self.parser.links(response.body, response.url, content_type)
        try:
            return await maybe_deferred_to_future(parsing)
        except PageError as err:
            return err
        except Exception as err:  # a parse worker died (memory?): the page is lost, not the crawl
            return PageError(f"parse failed: {type(err).__name__}: {err}")

    def _page(
        self, run: SiteRun, response: Response, parsed: Parsed
    ) -> Iterator[PageItem | scrapy.Request]:
        if response.status == NOT_MODIFIED:
            self._site_stat(run, "not_modified")  # unchanged since the last run: not followed
            return
        replayed = bool(response.meta.get("newscrawl_replayed"))
        known = bool(response.meta.get("newscrawl_known"))
        content_type = (response.headers.get("Content-Type") or b"").decode("latin-1")
        if not is_html_type(content_type):
            record(self.crawler, "not_html", response.url, run.spec.name, content_type)
            return
        if (
            not (replayed or known)
            and run.cap
            and page_count(self.crawler, run.spec.name) >= run.cap
        ):
            record(self.crawler, "cap_reached", response.url, run.spec.name, "fetched in flight")
            return
        if response.meta.get("newscrawl_seed") and not run.scope.contains(response.url):
            yield from self._moved(run, response.url)
        if not isinstance(parsed, tuple):
            kind = "too_many_nodes" if isinstance(parsed, PageTooLargeError) else "not_html"
            record(self.crawler, kind, response.url, run.spec.name, str(parsed))
            return
        links, dom = parsed
        if known:
            self._site_stat(run, "refetched")
        elif not replayed:
            self.crawler.stats.inc_value(pages_stat(run.spec.name))
        item = self._item(run, response, dom, content_type, replayed, links.node_hashes)
        base = response.url
        if links.base is not None:  # a <base href> that cannot be parsed is ignored, as browsers do
            base = absolute_url(response.url, links.base) or response.url
        if canonical := canonical_link(links.link_elements, base):
            item.extras["canonical"] = canonical  # AMP / print views: a duplicate of that URL
        yield item
        yield from self._follow(run, response, links, base)

    def _moved(self, run: SiteRun, url: str) -> Iterator[scrapy.Request]:
        """The start page redirected to another host: the site lives there now."""
        self.logger.info("site %s moved to %s", run.spec.name, url)
        run.scope = SiteScope.of(url)
        self.crawler.stats.inc_value("newscrawl/sites/moved")
        yield self._discovery(run, urljoin(url, "/robots.txt"), "robots", priority=10)

    def _item(
        self,
        run: SiteRun,
        response: Response,
        dom: Dom | None,
        content_type: str,
        replayed: bool,
        node_hashes: bytes = b"",
    ) -> PageItem:
        request = response.request
        assert request is not None  # response.meta above needs it too
        first = (response.meta.get("redirect_urls") or [request.url])[0]
        headers = {
            str(key).lower(): value
            for key, value in response.headers.to_unicode_dict().items()
            if key.lower() in KEPT_HEADERS
        }
        fetched = response.meta.get("newscrawl_fetched_at") or datetime.now(UTC)
        final_url = canonical_url(response.url)
        return PageItem(
            url=canonical_url(first),
            final_url=final_url,
            site=run.spec.name,
            crawl=self.crawl_info.crawl_id,
            fetched_at=fetched,
            status=response.status,
            content_type=content_type,
            headers=headers,
            html=response.body,
            dom=dom,
            replayed=replayed,
            stored=replayed and final_url in self.crawl_info.stored_articles,
            max_pages=run.cap,
            warc=response.meta.get("newscrawl_warc"),
            node_hashes=node_hashes,
        )

    def _follow(
        self, run: SiteRun, response: Response, links: PageLinks, base: str
    ) -> Iterator[scrapy.Request]:
        """Requests for the feeds and in-site links of a parsed page whose base URL is `base`."""
        for href in feed_links(list(links.link_elements)):
            feed = absolute_url(base, href)
            if (
                feed is not None
                and feed not in run.discovery
                and run.feeds < _MAX_FEEDS_PER_SITE
                and run.scope.contains(feed)
            ):
                run.feeds += 1
                yield self._discovery(run, feed, "feed", priority=5)
        shape = response.meta.get("shape")
        length = response.meta.get("trap_run", 0)
        family = response.meta.get("path_shape")
        for url in run.links.resolve(base, links.hrefs):
            request = self._page_request(
                run, url, shape, length, canonical=True, referer_path=family
            )
            if request is not None:
                yield request

    def parse_robots(self, response: Response) -> Iterator[scrapy.Request]:
        run = self.sites[response.meta["site"]]
        return self._answered(run, self.listings.robots(run, response))

    def parse_sitemap(self, response: Response) -> Iterator[scrapy.Request]:
        run = self.sites[response.meta["site"]]
        return self._answered(run, self.listings.sitemap(run, response))

    def parse_feed(self, response: Response) -> Iterator[scrapy.Request]:
        run = self.sites[response.meta["site"]]
        if self.listings.not_modified(run, response):
            return self._answered(run, ())
        entries = self.listings.read_xml(feed_entries, response, run)
        return self._answered(run, self.listings.listed_pages(run, response.url, entries or ()))

    # -- errbacks ------------------------------------------------------------------------------

    def page_failed(self, failure: Failure) -> Iterator[scrapy.Request]:
        request = request_of(failure)
        record_failure(self.crawler, failure, request.meta.get("site", ""))
        run = self.sites.get(request.meta.get("site", ""))
        if run is not None and request.meta.get("newscrawl_seed"):
            # the summary's reason, should the site yield no page at all
            stat = f"newscrawl/site/{run.spec.name}/start_failure"
            self.crawler.stats.set_value(stat, start_failure(failure.value))
            if _start_failed(failure):
                self._site_stat(run, "failed")
        return self._answered(run, ())

    def discovery_failed(self, failure: Failure) -> Iterator[scrapy.Request]:
        """A missing robots.txt, sitemap or feed is normal; other failures are reported."""
        run = self.sites.get(request_of(failure).meta.get("site", ""))
        return self._answered(run, self._discovery_failed(run, failure))

    def _discovery_failed(self, run: SiteRun | None, failure: Failure) -> Iterator[scrapy.Request]:
        request = request_of(failure)
        if failure.check(HttpError) and failure.value.response.status in (404, 410, 403, 401):
            self.crawler.stats.inc_value("newscrawl/discovery/missing")
        else:
            record_failure(self.crawler, failure, request.meta.get("site", ""))
        if run is not None and request.meta.get("newscrawl_kind") == "robots":
            yield from self.listings.sitemap_request(
                run, absolute_url(run.spec.url, "/sitemap.xml")
            )


def _start_failed(failure: Failure) -> bool:
    """Whether a failed start page fails its site. A refusal by policy does not (robots.txt
    disallows it: the site asked), but one of a non-public address does: the site cannot be
    crawled as configured (a server on this machine needs --allow-private)."""
    refusal = failure.value
    if isinstance(refusal, CrawlRefusal):
        return refusal.kind == "private_address"
    return not failure.check(IgnoreRequest)


def _take_run_lock(out: Path) -> DirLock:
    """The output folder's run lock: one run at a time. Under `scrapy crawl site` (which has no
    wrapper to catch it) a folder another run holds ends the process at once with one line and
    the lock-busy status, before anything is fetched or written."""
    lock = take_run_lock(out, "scrapy crawl site")
    if isinstance(lock, int):
        sys.stderr.flush()
        # Scrapy turns any exception here into a traceback and status 1; nothing is open yet
        os._exit(lock)
    return lock
