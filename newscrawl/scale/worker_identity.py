"""What a crawl worker is known by (`worker_id`) and the duplicate filter it crawls with
(`SiteDupeFilter`: one site's seen requests at a time, forgotten when the worker moves on)."""

from __future__ import annotations

import os
import socket
import uuid
from typing import TYPE_CHECKING, Any

from scrapy.dupefilters import BaseDupeFilter

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "SiteDupeFilter",
    "worker_id",
]


def worker_id() -> str:
    """host-pid-random: unique across machines and restarts, readable in `newscrawl status`."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class SiteDupeFilter(BaseDupeFilter):
    """The seen-request filter of a worker (DUPEFILTER_CLASS): Scrapy's fingerprints, in a set
    the worker empties when it starts a site, so a site leased here again is crawled again."""

    def __init__(self, fingerprinter: Any) -> None:
        self.fingerprinter = fingerprinter
        self.seen: set[bytes] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteDupeFilter:
        return cls(crawler.request_fingerprinter)

    def request_seen(self, request: Any) -> bool:
        fingerprint = self.fingerprinter.fingerprint(request)
        if fingerprint in self.seen:
            return True
        self.seen.add(fingerprint)
        return False

    def reset(self) -> None:
        self.seen.clear()

    def log(self, request: Any, spider: Any) -> None:
        spider.crawler.stats.inc_value("dupefilter/filtered")
