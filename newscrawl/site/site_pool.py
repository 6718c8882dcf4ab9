"""The site pass in worker processes, off Scrapy's reactor thread and out of its GIL.

A complete site's pass (`newscrawl.site.site_job`: parse, SiteLevel, extraction, metadata,
article flag, the template cut) is CPU work of a second or more; in a thread of the crawl it
held the GIL against the reactor, so the other sites' requests and the spider's callbacks
waited for it. `SitePassPool` sends each job to a pool of worker processes instead, one pool
per crawl. Each worker builds the crawl's extractor chain once (its initializer: the learned
model is read once per process, not once per site) and keeps its log records, which go back
with the result for the crawl to log.

Workers are not forked from the crawl process: a fork of a process that runs a reactor and
threads may copy a lock held by another thread (the parse pool's workers are spawned for that
reason, `newscrawl.crawl.parsepool`). They are forked by a `forkserver` instead, a clean
process started once that imports the site pass and the extractors' modules (about a second
of CPU) before it forks any worker, so a worker starts in a tenth of a second where a spawned
one imports everything again. The site pass starts its workers once the crawl's first
`SITEPASS_WORKERS_AFTER_PAGES` pages have arrived (`page_arrived`), while it fetches the next
ones, not when the first site is complete; a crawl of fewer pages starts none, and passes its
sites in a thread (`started` is False): a one-page crawl does not wait for the forkserver's
imports and a worker's start. (Page-level extraction, without the site pass, starts them when
the crawl opens.)

A worker that dies (SIGKILL, the kernel's OOM killer) breaks the pool: every job in it fails
with `BrokenProcessPool` (the dead worker's and the others in flight alike), and the next job
starts a new pool. `run_twice` tries each failed job once more alone, in a worker of its own
(one such job at a time), so a second death is that job's own (a site's pages are then
extracted page by page, a page is written without text) and a job that only shared the pool
with it runs as usual.

Without the site pass (NEWSCRAWL_SITELEVEL off) the same workers extract and flag each page
on its own (`PageJob`), for the extraction pipeline.

`newscrawl extract` runs its work in the same workers, built from `SavedSettings` (its extractor)
instead of the crawl's chain: whole sites' records and the parts of one large site's split pass
(`newscrawl.site.saved_jobs`). It has no reactor: `each` and `all_of` wait in the calling
thread, and end the workers at once when the caller fails, stops early or is interrupted; a
worker's death fails the run there (`BrokenProcessPool`: no job is tried again).

Settings: NEWSCRAWL_SITEPASS_WORKERS (-1: one per core; 0: the pass runs in a thread of the
crawl process, and pages are extracted on the reactor thread, as before).
"""

from __future__ import annotations

import dataclasses
import gc
import importlib.util
import logging
import multiprocessing
import os
import resource
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from typing import TYPE_CHECKING, Any

from newscrawl.crawl.parsepool import end_with, future_deferred, return_freed_memory
from newscrawl.extractors import EXTRACTORS
from newscrawl.html.gcpause import paused_gc
from newscrawl.site.saved_jobs import SAVED_JOBS, SavedJob, SavedPasser, SavedResult, SavedSettings
from newscrawl.site.site_job import (
    LabelJob,
    PageJob,
    PassSettings,
    SitePasser,
    SitePassJob,
    SitePassResult,
    run_labels,
)
from newscrawl.site.site_split import (
    HashShard,
    PassShard,
    ShardResult,
    finish_shards,
    hash_shard,
    hash_shards,
    pass_shard,
    pass_shards,
    shard_context,
)

if TYPE_CHECKING:
    from twisted.internet import defer
    from twisted.python.failure import Failure

__all__ = ["BrokenProcessPool", "Job", "SitePassPool", "pool_size"]

logger = logging.getLogger(__name__)


# What the workers run: a site's pass, one page's extraction, a site's labels alone, a part
# of a large site's pass, or saved pages' work (`newscrawl extract`).
CrawlJob = SitePassJob | PageJob | LabelJob | HashShard | PassShard
Job = CrawlJob | SavedJob
# What the workers are built from: the crawl's extractor chain, or `newscrawl extract`'s.
WorkerSettings = PassSettings | SavedSettings
Result = SitePassResult | ShardResult | SavedResult


# The crawl's pages that arrive before its site pass workers start (`page_arrived`).
SITEPASS_WORKERS_AFTER_PAGES = 5


def pool_size(workers: int) -> int:
    """Worker processes for a NEWSCRAWL_SITEPASS_WORKERS value (-1: one per core)."""
    return workers if workers >= 0 else (os.cpu_count() or 1)


class SitePassPool:
    """The crawl's site pass workers (started on the first job, one more per job in flight
    up to `workers`)."""

    def __init__(self, workers: int, settings: WorkerSettings) -> None:
        self.workers = max(1, workers)
        self.settings = settings
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()  # the workers' start may run in a thread (`page_arrived`)
        self.arrived = 0  # the crawl's pages counted by `page_arrived`
        self.started = False  # asked to start its workers, or given a job
        # Jobs tried again alone run one at a time: a death breaks every job in flight, and a
        # process each at once (one per page without the site pass) would be a burst of them.
        self._alone: defer.DeferredSemaphore | None = None

    def run(self, job: Job, alone: bool = False) -> defer.Deferred[Any]:
        """The job's result (a Deferred fired in the reactor thread): a site's pass, or one
        page's page-level extraction (`PageJob`). It fails with `BrokenProcessPool` when a
        worker died (this job's or another's). `alone`: in a new worker process of its own,
        ended once the job is done; such jobs run one at a time."""
        if alone:
            if self._alone is None:
                from twisted.internet import defer

                self._alone = defer.DeferredSemaphore(1)
            return self._alone.run(self._run_alone, job)
        executor = self._executor()
        try:
            future = self.submit(executor, job)
        except BrokenProcessPool:
            self._reset(executor)  # broken before the job went in: a new pool takes it
            executor = self._executor()
            future = self.submit(executor, job)
        return future_deferred(future).addErrback(self._broken, executor)

    def submit(self, executor: ProcessPoolExecutor, job: Job) -> Future[Any]:
        """The job sent to one of `executor`'s workers."""
        return executor.submit(_run, job)

    async def run_twice(
        self, job: CrawlJob, died: Callable[[int], None], parts: int = 1, template: bool = False
    ) -> SitePassResult | None:
        """The job, and once more alone when the pool broke on it (`died(1)`); None when its
        own worker died too (`died(2)`). A death fails every job in flight, so the first
        failure need not be this job's; the second, alone, is. `parts` > 1: the first try
        splits a site's pass over that many workers (`run_split`; `template`: the chain
        reads the site's SiteLevel template)."""
        from scrapy.utils.defer import maybe_deferred_to_future

        for attempt in (1, 2):
            try:
                tried = dataclasses.replace(job, attempt=attempt)
                if attempt == 1 and parts > 1 and isinstance(tried, SitePassJob):
                    split = await self._split_or_none(tried, parts, template)
                    if split is not None:
                        return split
                return await maybe_deferred_to_future(self.run(tried, alone=attempt > 1))
            except BrokenProcessPool:
                died(attempt)
        return None

    async def _split_or_none(
        self, job: SitePassJob, parts: int, template: bool
    ) -> SitePassResult | None:
        """`run_split`; None when it failed otherwise than by a worker's death (a bug in a
        part or in the join: the site is then passed whole, as if it had not been split)."""
        try:
            return await self.run_split(job, parts, template)
        except BrokenProcessPool:
            raise
        except Exception as err:
            logger.warning(
                "split site pass of %s failed (%s: %s); passing it whole",
                job.site,
                type(err).__name__,
                err,
            )
            return None

    async def run_split(self, job: SitePassJob, parts: int, template: bool) -> SitePassResult:
        """A site's pass split over `parts` workers, with the same result as `run(job)`: the
        site's template from node hashes computed in parts (when the chain reads it), then
        the pages in parts (parse, node records, extraction, flag), then in a thread here
        what needs every page (SiteLevel's labels, the slot decisions, the final texts)."""
        from scrapy.utils.defer import maybe_deferred_to_future
        from twisted.internet import threads

        context, hashed = None, []
        if template:
            hashed = await self._all(hash_shards(job, parts))
            context = shard_context(hashed)
        passed = await self._all(pass_shards(job, parts, context))
        result = await maybe_deferred_to_future(threads.deferToThread(finish_shards, job, passed))
        result.logs[:0] = [line for shard in hashed for line in shard.logs]
        return result

    async def _all(self, jobs: list[HashShard] | list[PassShard]) -> list[ShardResult]:
        """The jobs' results, all sent to the pool at once. When any failed, one failure is
        raised once all are done: a worker's death rather than another error, as a death fails
        every job in flight and decides the retry."""
        from scrapy.utils.defer import maybe_deferred_to_future

        pending: list[defer.Deferred[Any]] = []
        try:
            for job in jobs:
                pending.append(self.run(job))
        except BaseException:
            for done in pending:
                done.addErrback(lambda failure: None)  # failed with it, or let go
            raise
        results: list[ShardResult] = []
        failures: list[BaseException] = []
        for done in pending:  # every part to its end: none left running behind the join
            try:
                results.append(await maybe_deferred_to_future(done))
            except Exception as err:
                failures.append(err)
        if failures:  # a worker's death first: it is what decides the retry
            died = [err for err in failures if isinstance(err, BrokenProcessPool)]
            raise (died or failures)[0]
        return results

    def _run_alone(self, job: Job) -> defer.Deferred[SitePassResult]:
        executor = self._new(1)
        done = future_deferred(self.submit(executor, job))
        return done.addBoth(_after, lambda: executor.shutdown(wait=False))

    def _broken(self, failure: Failure, executor: ProcessPoolExecutor) -> Failure:
        if failure.check(BrokenProcessPool):
            self._reset(executor)
        return failure

    def _reset(self, broken: ProcessPoolExecutor) -> None:
        """Let go of a broken pool if it is still the current one; the next job starts a new
        one."""
        if broken is self._pool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None

    def _executor(self) -> ProcessPoolExecutor:
        self.started = True
        with self._lock:
            if self._pool is None:
                self._pool = self._new(self.workers)
            return self._pool

    def _new(self, workers: int) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_preloaded(self.settings))  # once the server runs: no-op
        return ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start, initargs=(os.getpid(), self.settings)
        )

    def page_arrived(self) -> None:
        """Count one of the crawl's pages (in the reactor thread); at the
        `SITEPASS_WORKERS_AFTER_PAGES`th, `start_soon`."""
        self.arrived += 1
        if self.arrived == SITEPASS_WORKERS_AFTER_PAGES:
            self.start_soon()

    def start_soon(self) -> None:
        """Start the workers in a thread (the first waits for the forkserver's imports),
        unless they are started already."""
        if self.started:
            return
        from twisted.internet import threads

        self.started = True
        started = threads.deferToThread(self.start)
        started.addErrback(lambda f: logger.warning("site pass workers: %s", f.value))

    def start(self) -> None:
        """Start the workers now, not with the first job (each one's start is enough to
        start one more worker while none is idle)."""
        executor = self._executor()
        for _ in range(self.workers):
            executor.submit(_ready)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)  # idle by now: quick
            self._pool = None

    def stop(self) -> None:
        """End the workers now (the jobs they run are lost) and let go of the pool."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        for process in list((getattr(pool, "_processes", None) or {}).values()):
            process.terminate()
        pool.shutdown(wait=True, cancel_futures=True)  # its workers are gone: quick

    def each(self, jobs: Iterable[Job]) -> Iterator[Any]:
        """Each job's result as it is done, waited for in the calling thread (no reactor):
        the jobs all sent at once, taken by the workers in the order given, the log records
        of each logged here. A job's error is raised here (`BrokenProcessPool` when a worker
        died); then, and when the caller stops early or is interrupted, the workers are ended
        at once (`stop`)."""
        return self._waited(jobs, in_turn=False)

    def all_of(self, jobs: Iterable[Job]) -> list[Any]:
        """The jobs' results in the order given, run as `each` runs them."""
        return list(self._waited(jobs, in_turn=True))

    def _waited(self, jobs: Iterable[Job], in_turn: bool) -> Iterator[Any]:
        executor = self._executor()
        finished = False
        try:
            futures = [self.submit(executor, job) for job in jobs]
            for future in futures if in_turn else as_completed(futures):
                yield _relayed(future.result())
            finished = True
        finally:
            if not finished:
                self.stop()


def _preloaded(settings: WorkerSettings) -> list[str]:
    """The modules the forkserver imports once for all workers: the site pass, the
    extractors of the chain, and for the crawl's chain pandas where it is installed (pyarrow
    imports it on the first array a process builds: otherwise every worker would pay that
    import during the crawl; saved pages' jobs build no arrays)."""
    modules = [__name__]
    for name in _extractor_names(settings):
        target = EXTRACTORS.get(name)
        if target is not None:
            modules.append(target.partition(":")[0])
    crawl = isinstance(settings, PassSettings)
    if crawl and importlib.util.find_spec("pandas") is not None:
        modules.append("pandas")
    return modules


def _extractor_names(settings: WorkerSettings) -> list[str]:
    if isinstance(settings, PassSettings):
        return list(settings.extraction.names)
    return [settings.extractor]


def _relayed(result: Result) -> Result:
    """The result, its worker's log records logged in this process."""
    for name, level, message in result.logs:
        logging.getLogger(name).log(level, "%s", message)
    return result


def _after(result: Any, then: Callable[[], object]) -> Any:
    """A Deferred callback: `then()`, and the result (or failure) passed on."""
    then()
    return result


# -- in the worker process ---------------------------------------------------------------------

_PASSER: SitePasser | None = None
_SAVED: SavedPasser | None = None
_LOGS: _KeptLogs | None = None


class _KeptLogs(logging.Handler):
    """The worker's log records, kept for the job's result (the crawl process logs them)."""

    def __init__(self, level: int) -> None:
        super().__init__(level)
        self.kept: list[tuple[str, int, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.kept.append((record.name, record.levelno, record.getMessage()))
        except Exception:  # a record that cannot be formatted is not worth a site
            self.handleError(record)

    def take(self) -> list[tuple[str, int, str]]:
        kept, self.kept = self.kept, []
        return kept


def _start(crawl_pid: int, settings: WorkerSettings) -> None:
    """A worker's start: end with the crawl, keep log records, build the extractor chain."""
    global _PASSER, _SAVED, _LOGS
    end_with(crawl_pid)
    _LOGS = _KeptLogs(settings.log_level)
    root = logging.getLogger()
    root.handlers[:] = [_LOGS]
    root.setLevel(settings.log_level)
    if isinstance(settings, SavedSettings):
        _SAVED = SavedPasser(settings)
    else:
        _PASSER = SitePasser.from_settings(settings)
    _LOGS.take()  # what loading said was said by the crawl's own chain already
    gc.collect()
    gc.freeze()  # the modules and the models live as long as the worker: out of GC's sight


def _ready() -> None:
    """A job that only starts a worker (`SitePassPool.start`)."""


def _run(job: Job) -> Result:
    assert _LOGS is not None, "the pool's initializer did not run"
    _LOGS.take()
    result: Result
    with paused_gc():
        result = _job_result(job)
    result.logs = _LOGS.take()
    if not isinstance(job, PageJob):  # a site's trees and records are let go of by now
        return_freed_memory()
    return result


def _job_result(job: Job) -> Result:
    if isinstance(job, SAVED_JOBS):
        assert _SAVED is not None, "a saved-page job in a crawl's worker"
        return _SAVED.run(job)
    assert _PASSER is not None, "a crawl's job in a saved-page worker"
    result: SitePassResult | ShardResult
    if isinstance(job, PageJob):
        result = _PASSER.run_page(job)
    elif isinstance(job, LabelJob):
        result = run_labels(job)
    elif isinstance(job, HashShard):
        result = hash_shard(job)
    elif isinstance(job, PassShard):
        result = pass_shard(_PASSER, job)
        result.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    else:
        result = _PASSER.run(job)
        result.peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result
