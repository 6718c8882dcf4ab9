"""Keep the crawl process's long-lived objects out of the garbage collector's sight.

By the time the spider opens, the crawl process has imported Scrapy, Twisted, pyarrow and the
extractors and built every component (the extraction chain with its models, the writers):
objects that live as long as the process and are never garbage.
CPython's cyclic collector walks all of them again at each full collection, and a crawl's churn
of requests, responses and items triggers many. `gc.freeze()` moves them to a generation the
collector never scans, and the young generation is then collected every 10,000 new
containers rather than every 700 (what each was worth: docs/experiments.md).

A Scrapy extension (`EXTENSIONS` in `newscrawl.settings`): its entry set to None turns it off.
When the spider closes, the frozen objects go back to the collector and the thresholds are put
back, so a process that runs crawls one after another (a notebook, the tests) keeps nothing
frozen from one to the next.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["YOUNG_THRESHOLD", "FrozenStartupExtension"]

#: New containers between two collections of the youngest generation (CPython's default: 700).
YOUNG_THRESHOLD = 10_000


class FrozenStartupExtension:
    """At `spider_opened`: collect once, freeze everything the process has made so far, and
    collect the young generation less often; at `spider_closed`, undo both."""

    def __init__(self, crawler: Crawler) -> None:
        self.thresholds: tuple[int, ...] | None = None
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FrozenStartupExtension:
        return cls(crawler)

    def spider_opened(self, spider: Spider) -> None:
        gc.collect()
        gc.freeze()
        self.thresholds = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, 10, 10)

    def spider_closed(self, spider: Spider) -> None:
        if self.thresholds is not None:
            gc.unfreeze()
            gc.set_threshold(*self.thresholds)
            self.thresholds = None
