"""The crawl worker's spider: newscrawl's site spider, fed one site at a time from Redis.

`RedisSiteSpider` is scrapy-redis's `RedisSpider` (Redis connection from REDIS_URL, the start key
``redis_key``) combined with `newscrawl.spiders.site.SiteSpider` (discovery, scope, page caps,
link following, the PageItems the pipelines turn into Parquet rows). What changes:

- scrapy-redis 0.9.1 only defines the old ``start_requests()``, which pops a batch of URLs; on
  Scrapy >= 2.13 the engine reads ``async def start()``, so this spider defines one. It leases a
  site (`SiteQueue.lease`: atomic pop + lease), yields the site's start requests, waits until the
  site's last page has gone through the pipelines, publishes the site's Parquet partitions and
  records the site as done - then leases the next. One site at a time per process keeps a
  domain's pages, politeness slot and SiteLevel buffer in one place; run several workers per
  machine for more parallelism.
- scrapy-redis's ``spider_idle`` handler (pop more start URLs, never close) is replaced: while
  ``start()`` is running the engine is never idle, and once the run is drained ``start()``
  returns and the spider closes normally.
- while a site is crawled, a `LeaseKeeper` thread renews its lease, so a long site is not given to
  another worker; a killed worker stops renewing and its site is leased again after the deadline.
- a worker that learns its lease is gone (it was out of touch longer than the lease and another
  worker has the site, or another worker finished it) stops crawling the site at once: its
  scheduled and queued requests are dropped, responses still on the wire are ignored, its
  staged rows are discarded, and it leases the next site.
- SIGTERM or Ctrl-C: the site is handed back to the queue in the signal handler itself, before
  Scrapy's graceful stop (which waits for downloads in flight and the pipelines), so another
  worker can take it at once instead of after the lease runs out.
- Redis outages: every Redis call is retried with backoff and a clear warning, off the reactor
  thread; the crawl itself goes on, and pages already written stay on disk. A Redis that
  answers but refuses the login (its password changed mid-run) is no outage: waiting cannot
  fix it, so the worker stops taking sites, says so, and exits 2 (`REDIS_REFUSED_STAT`); the
  site it held goes back to the queue when its lease runs out.

Output: the worker's pipelines write under ``NEWSCRAWL_OUT`` = ``OUT/_staging/WORKER`` (the usual
``DATASET/crawl=RUN/site=NAME/`` layout); a finished site's partition folders are moved with one
rename each to ``OUT/DATASET/crawl=RUN/site=NAME/``, so OUT reads like a single-machine crawl
(see `newscrawl.scale.shards`).
"""

from __future__ import annotations

import inspect
import json
import logging
import signal
import threading
import time
from collections.abc import AsyncIterator, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import redis
from scrapy import signals
from scrapy_redis.spiders import RedisSpider

from newscrawl.crawl.discovery.site_lists import SiteSpec
from newscrawl.crawl.middlewares.sitecap import pages_stat
from newscrawl.scale import shards
from newscrawl.scale.dropping import drop_queued_downloads, drop_scheduled
from newscrawl.scale.heartbeat import LeaseKeeper
from newscrawl.scale.redis_queue import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    DEFAULT_RUN,
    UNAVAILABLE_ERRORS,
    Lease,
    SiteQueue,
    connect,
    run_missing_message,
    safe_url,
)
from newscrawl.scale.worker_identity import SiteDupeFilter, worker_id
from newscrawl.spiders.site import SiteRun, SiteSpider
from newscrawl.storage.writer import partition_dir

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "REDIS_REFUSED_STAT",
    "RUN_MISSING_STAT",
    "RedisSiteSpider",
]

logger = logging.getLogger(__name__)
# The stat set when the run disappears from Redis mid-crawl (`newscrawl worker` exits 1).
RUN_MISSING_STAT = "newscrawl/worker/run_missing"
# Set (to the refusal) when Redis refused this worker's login mid-run.
REDIS_REFUSED_STAT = "newscrawl/worker/redis_refused"


class _Refused(Exception):
    """Redis refused the login mid-run: the site loop stops (`RedisSiteSpider._redis`)."""


T = TypeVar("T")
# How long a signal handler waits for Redis to take the site back before Scrapy's stop begins
# (the hand-back goes on in its thread; the spider's close tries again).
HAND_BACK_WAIT = 3.0


def _sleep(seconds: float) -> Any:
    # the reactor is imported here, not at module level: Scrapy installs its own first
    from scrapy.utils.defer import maybe_deferred_to_future
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    return maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))


class RedisSiteSpider(RedisSpider, SiteSpider):
    """Crawl sites leased from a Redis queue, one at a time, until the run is drained.

    Settings: REDIS_URL, NEWSCRAWL_RUN (queue namespace, also the crawl id), NEWSCRAWL_OUT_ROOT
    (the shared output root), NEWSCRAWL_LEASE_SECONDS, NEWSCRAWL_MAX_ATTEMPTS,
    NEWSCRAWL_WORKER_ID, NEWSCRAWL_POLL_SECONDS (wait between empty polls),
    NEWSCRAWL_WORKER_FOREVER (keep waiting for sites after the run is drained),
    NEWSCRAWL_REDIS_MAX_BACKOFF (longest wait between retries while Redis is away).
    """

    name = "redis-site"
    sites_required = False  # sites come from Redis, one lease at a time

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> RedisSiteSpider:
        # RedisSpider.from_crawler -> SiteSpider.from_crawler (site set-up) -> setup_redis
        spider = cast(RedisSiteSpider, super().from_crawler(crawler, *args, **kwargs))
        spider._setup_worker(crawler)
        return spider

    def setup_redis(self, crawler: Crawler | None = None) -> None:
        """scrapy-redis's set-up (REDIS_URL, redis_key), with the queue list as the start key."""
        crawler = crawler or self.crawler
        settings = crawler.settings
        self.run_id = settings.get("NEWSCRAWL_RUN") or DEFAULT_RUN
        self.queue = self._site_queue(settings)
        # its own connection: a signal handler must not wait on a connection the code it
        # interrupted holds
        self.signal_queue = self._site_queue(settings)
        self.redis_key = self.queue.keys["queue"]
        super().setup_redis(crawler)
        self.server = self.queue.client

    def _site_queue(self, settings: Any) -> SiteQueue:
        return SiteQueue(
            connect(settings.get("REDIS_URL")),
            self.run_id,
            lease_seconds=settings.getfloat("NEWSCRAWL_LEASE_SECONDS", DEFAULT_LEASE_SECONDS),
            max_attempts=settings.getint("NEWSCRAWL_MAX_ATTEMPTS", DEFAULT_MAX_ATTEMPTS),
        )

    def _setup_worker(self, crawler: Crawler) -> None:
        settings = crawler.settings
        self.worker = settings.get("NEWSCRAWL_WORKER_ID") or worker_id()
        self.out_root = settings.get("NEWSCRAWL_OUT_ROOT") or settings.get("NEWSCRAWL_OUT")
        self.poll_seconds = settings.getfloat("NEWSCRAWL_POLL_SECONDS", 1.0)
        self.forever = settings.getbool("NEWSCRAWL_WORKER_FOREVER")
        self.max_backoff = settings.getfloat("NEWSCRAWL_REDIS_MAX_BACKOFF", 30.0)
        self.staging = Path(settings.get("NEWSCRAWL_OUT"))
        self.keeper = LeaseKeeper(
            self.queue, self.worker, on_lost=self._lease_lost, on_run_gone=self._run_gone
        )
        self.sites_done = 0
        self._closing = False
        # the run's keys are gone from Redis (it lost its data): nothing to lease or hand back
        self._run_missing = False
        self._lost: set[str] = set()  # sites whose lease the keeper found gone
        self._finishing: str | None = None  # the site being published and recorded
        # A worker never resumes: what an earlier process of this id staged belongs to sites
        # that went back to the queue, and the pipelines (opened after this) must not take its
        # rows for pages already written.
        for dataset in shards.DATASETS:
            shards.discard_attempt(self.staging / dataset)
        crawler.signals.connect(self._spider_closed, signal=signals.spider_closed)

    # -- scrapy-redis behaviour this spider replaces ------------------------------------------

    def start_requests(self) -> Any:
        """Not used: `start()` reads the queue (kept so nothing calls scrapy-redis's batch pop)."""
        return iter(())

    def spider_idle(self) -> None:
        """Let the spider close once `start()` has returned (the run is drained)."""

    # -- the site loop ------------------------------------------------------------------------

    async def start(self) -> AsyncIterator[Any]:
        self.keeper.start()
        self._install_signal_hand_back()
        logger.info("worker %s on run %r, writing to %s", self.worker, self.run_id, self.out_root)
        try:
            async for request in self._site_loop():
                yield request
        except _Refused as refused:
            self.crawler.stats.set_value(REDIS_REFUSED_STAT, str(refused))
            logger.error("worker %s: %s; stopping", self.worker, refused)
            return
        if self._run_missing:
            self.crawler.stats.set_value(RUN_MISSING_STAT, 1)
            logger.error(
                "worker %s: %s; stopping", self.worker, run_missing_message(self.run_id, self._url)
            )
            return
        logger.info(
            "worker %s: run %r drained, %d site(s) crawled here",
            self.worker,
            self.run_id,
            self.sites_done,
        )

    async def _site_loop(self) -> AsyncIterator[Any]:
        """Lease a site, crawl it, publish and record it; again until the run is over."""
        while not self._closing:
            lease = await self._next_lease()
            if lease is None:
                break
            run = self._open_site(lease)
            if run is None:
                continue
            async for request in SiteSpider.start(self):
                yield request
            await self._site_drained(lease.site)
            if self._closing:
                break
            if lease.site in self._lost:
                await self._abandon_site(lease, run)
            else:
                await self._finish_site(lease, run)

    async def _next_lease(self) -> Lease | None:
        """Lease a site; wait while other workers still hold some; None once the run is over,
        or gone from Redis."""
        while not self._closing and not self._run_missing:
            lease = await self._redis(lambda: self.queue.lease(self.worker), "lease a site")
            if lease is not None:
                return lease
            # An emptied Redis (restarted without persistence) has no queue and no leases, but
            # is not a drained run: is_drained() needs the run's sites, so it would poll forever.
            if not await self._redis(self.queue.exists, "check the run"):
                self._run_gone()
                return None
            if not self.forever and await self._redis(self.queue.is_drained, "check the queue"):
                return None
            await _sleep(self.poll_seconds)
        return None

    @property
    def _url(self) -> str:
        return str(self.crawler.settings.get("REDIS_URL"))

    def _run_gone(self) -> None:
        """The run is no longer in Redis (LeaseKeeper.on_run_gone, or the lease loop): stop the
        site being crawled as if its lease were lost, and lease nothing more."""
        self._run_missing = True
        for site in self.keeper.sites:
            self._lost.add(site)

    def _open_site(self, lease: Lease) -> SiteRun | None:
        try:
            spec = _spec_of(lease)
        except (ValueError, KeyError, TypeError) as exc:
            reason = f"bad queue entry: {exc}"
            logger.error("site %s has a %s; marked failed", lease.site, reason)
            self._call_blocking(lambda: self.queue.fail(self.worker, lease.site, reason))
            return None
        self.keeper.hold(lease.site)
        self._lost.discard(lease.site)
        self.sites.clear()  # one site at a time: callbacks look sites up by name
        run = self.add_site(spec)
        self.crawler.stats.set_value(pages_stat(spec.name), 0)
        dupefilter = getattr(self.crawler.engine.scheduler, "df", None)
        if isinstance(dupefilter, SiteDupeFilter):
            dupefilter.reset()  # a site leased here again is a new, whole crawl of it
        logger.info(
            "worker %s: crawling %s (%s), attempt %d",
            self.worker,
            spec.name,
            spec.url,
            lease.attempt,
        )
        return run

    async def _site_drained(self, site: str) -> None:
        """Wait until the site has nothing scheduled, downloading or in the pipelines, or its
        lease is found gone.

        The engine's own idle test cannot be used: it also waits for `start()` to end, and
        `start()` is suspended right here.
        """
        while not self._closing and site not in self._lost and not self._engine_idle():
            await _sleep(0.1)

    def _engine_idle(self) -> bool:
        engine = self.crawler.engine
        scheduler = engine.scheduler  # set once the engine has opened the spider
        scraper_idle = engine.scraper.slot is None or engine.scraper.slot.is_idle()
        return (
            scraper_idle
            and not engine.downloader.active
            and not (scheduler is not None and scheduler.has_pending_requests())
        )

    # -- a lease found gone: stop the site, keep nothing of it ---------------------------------

    def _lease_lost(self, site: str) -> None:
        """LeaseKeeper.on_lost (its thread): the crawl loop notices within 0.1 s."""
        self._lost.add(site)

    async def _abandon_site(self, lease: Lease, run: SiteRun) -> None:
        """Stop crawling a site whose lease is gone: drop its requests, ignore its responses
        still on the wire, discard what the pipelines staged of it, then move on."""
        name = run.spec.name
        self.keeper.release(lease.site)
        self.sites = {}  # callbacks of its responses find no site: nothing more comes of them
        engine = self.crawler.engine
        dropped = drop_scheduled(engine.scheduler, name)
        dropped += drop_queued_downloads(engine.downloader, name)
        while not self._closing and not self._engine_idle():
            await _sleep(0.1)
        await self._close_site_outputs(name, discard=True)
        for _, folder in self._staged_partitions(name):
            shards.discard_attempt(folder)
        self._lost.discard(lease.site)
        self.crawler.stats.inc_value("newscrawl/worker/lease_lost")
        logger.warning(
            "worker %s: %s; stopped crawling it (%d requests dropped, staged rows discarded)",
            self.worker,
            f"run {self.run_id} is gone from Redis while crawling {name}"
            if self._run_missing
            else f"lease of {name} lost",
            dropped,
        )

    def _live(self, response: Any) -> bool:
        return response.meta.get("site") in self.sites

    def parse_page(self, response: Any) -> Any:
        return super().parse_page(response) if self._live(response) else ()

    def parse_robots(self, response: Any) -> Any:
        return super().parse_robots(response) if self._live(response) else ()

    def parse_sitemap(self, response: Any) -> Any:
        return super().parse_sitemap(response) if self._live(response) else ()

    def parse_feed(self, response: Any) -> Any:
        return super().parse_feed(response) if self._live(response) else ()

    # Returns None, as before: the base class's answer (a generator that counts the failed page
    # off its site's frontier) is dropped here.
    def page_failed(self, failure: Any) -> None:  # type: ignore[override]
        if failure.request.meta.get("site") in self.sites:
            super().page_failed(failure)

    def discovery_failed(self, failure: Any) -> Any:
        live = failure.request.meta.get("site") in self.sites
        return super().discovery_failed(failure) if live else ()

    async def _finish_site(self, lease: Lease, run: SiteRun) -> None:
        """Flush the site's rows, publish its partitions, then record it in Redis: done, or
        failed when not one HTML page could be fetched (the reasons are in the log)."""
        name = run.spec.name
        self._finishing = lease.site
        await self._close_site_outputs(name)
        pages = int(self.crawler.stats.get_value(pages_stat(name), 0))
        published = self._publish(name)
        recorded = await self._record(lease, run, pages)
        self.keeper.release(lease.site)
        self._finishing = None
        self.sites = {}
        if not recorded:
            logger.warning("site %s was also finished by another worker; one copy is kept", name)
        self.sites_done += 1
        logger.info(
            "worker %s: site %s %s (%d pages; %s)",
            self.worker,
            name,
            "done" if pages else "FAILED",
            pages,
            ", ".join(published) or "nothing written",
        )

    async def _record(self, lease: Lease, run: SiteRun, pages: int) -> bool:
        """Tell Redis the site is done, or failed when it gave no page; False when another
        worker had recorded it first."""
        if pages:
            record = {"pages": pages, "attempt": lease.attempt}
            return await self._redis(
                lambda: self.queue.complete(self.worker, lease.site, **record), "record a site"
            )
        why = self.crawler.stats.get_value(f"newscrawl/site/{run.spec.name}/start_failure")
        reason = f"no HTML page fetched from {run.spec.url} (worker {self.worker})"
        reason += f": {why}" if why else ""
        return await self._redis(
            lambda: self.queue.fail(self.worker, lease.site, reason), "record a site"
        )

    async def _close_site_outputs(self, name: str, *, discard: bool = False) -> None:
        """Have the item pipelines write out everything of `name`, close its files and forget
        it (their `close_site` hook, a plain method or a coroutine). With `discard`, a
        pipeline's `discard_site` hook is preferred: the rows are not wanted (the caller
        deletes what was staged)."""
        for pipe in _item_pipelines(self.crawler):
            close = getattr(pipe, "discard_site", None) if discard else None
            close = close or getattr(pipe, "close_site", None)
            if close is not None:
                result = close(name)
                if inspect.isawaitable(result):
                    await result

    def _staged_partitions(self, name: str) -> list[tuple[str, Path]]:
        """(dataset, folder) of each partition the pipelines staged for site `name`."""
        partition = self.crawl_info.partition(name)
        folders = [(d, partition_dir(self.staging / d, partition)) for d in shards.DATASETS]
        return [(dataset, folder) for dataset, folder in folders if folder.is_dir()]

    def _publish(self, name: str) -> list[str]:
        """Move the site's staged partitions into the shared output root."""
        done = []
        for dataset, folder in self._staged_partitions(name):
            moved = shards.publish_partition(folder, self.out_root, dataset, self.run_id, name)
            done.append(f"{dataset} {'published' if moved else 'already there, copy dropped'}")
        return done

    # -- Redis calls off the reactor, retried while Redis is away ------------------------------

    async def _redis(self, call: Callable[[], T], what: str) -> T:
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import threads

        delay = 0.5
        down_since: float | None = None
        while True:
            try:
                result = await maybe_deferred_to_future(threads.deferToThread(call))
            except redis.exceptions.AuthenticationError as exc:  # a ConnectionError, not away
                self._closing = True
                where = safe_url(self._url)
                raise _Refused(
                    f"Redis at {where} refused the login while trying to {what} ({exc}): its "
                    "password changed mid-run? Start the worker again with the new one; the "
                    "site held here goes back to the queue when its lease runs out"
                ) from exc
            except UNAVAILABLE_ERRORS as exc:
                if down_since is None:
                    down_since = time.monotonic()
                logger.warning(
                    "worker %s: Redis unavailable (%s) while trying to %s; retrying in %.1fs "
                    "(crawled pages are kept on disk)",
                    self.worker,
                    exc,
                    what,
                    delay,
                )
                await _sleep(delay)
                delay = min(delay * 2, self.max_backoff)
                continue
            if down_since is not None:
                logger.warning(
                    "worker %s: Redis is back after %.1fs; %s done",
                    self.worker,
                    time.monotonic() - down_since,
                    what,
                )
            return result

    def _call_blocking(self, call: Callable[[], Any]) -> None:
        try:
            call()
        except UNAVAILABLE_ERRORS as exc:
            logger.warning("worker %s: Redis unavailable (%s)", self.worker, exc)

    # -- stopping: the site goes back to the queue first ----------------------------------------

    def _install_signal_hand_back(self, tries: int = 100) -> None:
        """Run `_on_signal` before Scrapy's own SIGTERM/SIGINT handlers, once Scrapy has put
        them in place (after the reactor's start-up)."""
        if threading.current_thread() is not threading.main_thread():
            return
        if not callable(signal.getsignal(signal.SIGTERM)):
            if tries:
                from twisted.internet import reactor

                # twisted's interface stub has no `self`: mypy reads the delay as the callable
                reactor.callLater(0.1, self._install_signal_hand_back, tries - 1)  # type: ignore[arg-type]
            return
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(signum)
            if callable(previous):
                signal.signal(signum, partial(self._on_signal, previous))

    def _on_signal(self, previous: Callable[[int, Any], Any], signum: int, frame: Any) -> None:
        """Stop taking sites and hand the one being crawled back now, then let Scrapy stop.
        No logging here (the interrupted code may hold the log stream): the hand-back thread
        logs through the reactor."""
        self._closing = True
        hand_back = threading.Thread(
            target=self._hand_back, args=(self.signal_queue, "signal", _in_reactor), daemon=True
        )
        hand_back.start()
        hand_back.join(HAND_BACK_WAIT)
        previous(signum, frame)

    def _hand_back(self, queue: SiteQueue, reason: str, call: Callable[..., Any]) -> None:
        """Give every held site back to the queue (not one being recorded as finished); `call`
        runs the log calls (in the reactor, from a thread)."""
        for site in self.keeper.sites:
            if site == self._finishing:
                continue
            try:
                queue.give_back(self.worker, site)
            except UNAVAILABLE_ERRORS as exc:
                call(_log_hand_back_failed, self.worker, site, exc)
                continue
            self.keeper.release(site)
            call(_log_handed_back, self.worker, reason, site)

    def _spider_closed(self, spider: Any, reason: str) -> None:
        """On a clean stop hand back what the signal handler did not (the site's staged files
        are left for nobody) and leave the list of workers."""
        self._closing = True
        self.keeper.stop()
        self._hand_back(self.queue, reason, _now)
        self._call_blocking(lambda: self.queue.retire(self.worker))


def _in_reactor(function: Callable[..., Any], *args: Any) -> None:
    from twisted.internet import reactor

    reactor.callFromThread(function, *args)


def _now(function: Callable[..., Any], *args: Any) -> None:
    function(*args)


def _log_handed_back(worker: str, reason: str, site: str) -> None:
    logger.info("worker %s stopped (%s): %s handed back to the queue", worker, reason, site)


def _log_hand_back_failed(worker: str, site: str, exc: BaseException) -> None:
    logger.warning(
        "worker %s: could not hand %s back (Redis unavailable: %s); it returns to the queue "
        "when its lease runs out",
        worker,
        site,
        exc,
    )


def _spec_of(lease: Lease) -> SiteSpec:
    """The SiteSpec a queue entry carries (JSON from `newscrawl enqueue`, or a bare URL)."""
    payload = lease.payload.strip()
    if payload.startswith("{"):
        data = json.loads(payload)
        cap = int(data["max_pages"]) if data.get("max_pages") else None
        return SiteSpec(name=str(data["name"]), url=str(data["url"]), max_pages=cap)
    from newscrawl.crawl.discovery.site_lists import parse_sites

    specs = parse_sites(payload or lease.site, "<queue>")
    if len(specs) != 1:
        raise ValueError(f"not one site: {payload!r}")
    return SiteSpec(name=lease.site, url=specs[0].url, max_pages=specs[0].max_pages)


def _item_pipelines(crawler: Crawler) -> list[Any]:
    scraper = crawler.engine.scraper
    manager = getattr(scraper, "itemproc", None)
    return list(getattr(manager, "middlewares", ()))
