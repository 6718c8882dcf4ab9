"""A test-only crawl extension that kills site pass workers, as the OOM killer would.

Named in a test crawl's EXTENSIONS (the crawl runs in a child process with tests/ on its
path), it reads TEST_KILL_SITEPASS: "NAME" kills the worker given the site pass of site NAME
(or the page-level extraction of page URL NAME) on the job's first attempt; "NAME:always" on
every attempt; "NAME:split-error" makes the parts of the site's split pass fail instead, as a
bug would. The worker gets a SIGKILL in place of its job, so the pool breaks as it does when a
worker dies."""

from __future__ import annotations

import signal
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured

from newscrawl.site.site_job import PageJob
from newscrawl.site.site_pool import Job, SitePassPool
from newscrawl.site.site_split import PassShard

SETTING = "TEST_KILL_SITEPASS"


class SitePassKiller:
    """Sends a SIGKILL to the site pass worker that would run the named job."""

    def __init__(self, wanted: str) -> None:
        marked = wanted.endswith((":always", ":split-error"))
        self.name, _, self.when = wanted.rpartition(":") if marked else (wanted, "", "")
        submit = SitePassPool.submit
        killer = self

        def submit_or_kill(pool: SitePassPool, executor: ProcessPoolExecutor, job: Job) -> Any:
            return killer.instead(executor, job) or submit(pool, executor, job)

        SitePassPool.submit = submit_or_kill  # type: ignore[method-assign]

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SitePassKiller:
        wanted = crawler.settings.get(SETTING, "")
        if not wanted:
            raise NotConfigured(f"{SETTING} is not set")
        return cls(wanted)

    def instead(self, executor: ProcessPoolExecutor, job: Job) -> Future[Any] | None:
        """What the worker gets in place of `job` (None: the job itself)."""
        target = job.page.final_url if isinstance(job, PageJob) else job.site
        if target != self.name:
            return None
        if self.when == "split-error":
            if not isinstance(job, PassShard):
                return None
            failed: Future[Any] = Future()
            failed.set_exception(RuntimeError("a part of the split pass failed (test hook)"))
            return failed
        if self.when == "always" or job.attempt == 1:
            return executor.submit(signal.raise_signal, signal.SIGKILL)
        return None
