"""Scrapy's downloader with its per-site concurrency kept and the page cap checked at the wire.

With the asyncio reactor (Scrapy's default), a download slot counts a request as transferring
only once the task that downloads it has started, and it starts queued requests in a loop that
checks that count: one pass of the loop starts every request queued in the slot at that moment.
A crawl that hands the downloader many requests at once (a page's links, a sitemap) then opens
up to CONCURRENT_REQUESTS connections to one site, not CONCURRENT_REQUESTS_PER_DOMAIN; with no
download delay (a delay starts one request a pass) a small server drops the connections it
cannot queue, and each dropped one waits for the client's connection retry.
`SlotDownloader` (the DOWNLOADER setting) counts a request as transferring from the moment it
leaves the slot's queue, so a slot never has more requests on the wire than its concurrency.

A request waits in its slot's queue after the downloader middlewares have passed it, among them
the page cap's (`newscrawl.crawl.middlewares.sitecap`): up to CONCURRENT_REQUESTS of one site's
pages wait
there. Those of a site that has its pages by the time their turn comes are refused there, as
the middleware refuses them, instead of being fetched to be dropped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader import Downloader

from newscrawl.crawl.middlewares.sitecap import cap_refusal

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.core.downloader import Slot
    from scrapy.crawler import Crawler

__all__ = ["SlotDownloader", "TransferQueue"]


class TransferQueue(deque[tuple["Request", Any]]):
    """A slot's queue of (request, deferred) whose `popleft` counts the request as transferring
    at once (the download removes it when it is done, as before)."""

    def __init__(self, transferring: set[Request], queued: Iterable[tuple[Request, Any]]) -> None:
        super().__init__(queued)
        self.transferring = transferring

    def popleft(self) -> tuple[Request, Any]:
        entry = super().popleft()
        self.transferring.add(entry[0])
        return entry


class SlotDownloader(Downloader):
    """Scrapy's Downloader whose slots start no more requests than their concurrency, and
    refuse the queued pages of a site that has its pages."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        self.crawler = crawler
        self.default_cap = crawler.settings.getint("MAX_PAGES_PER_SITE", 200)

    def _process_queue(self, slot: Slot) -> None:
        if not isinstance(slot.queue, TransferQueue):
            slot.queue = TransferQueue(slot.transferring, slot.queue)
        if slot.queue and not slot.latercall:
            self._refuse_capped(slot.queue)
        super()._process_queue(slot)

    def _refuse_capped(self, queue: TransferQueue) -> None:
        """Take the requests of sites that have their pages out of `queue`, each failed with
        the page cap's refusal."""
        kept: list[tuple[Request, Any]] = []
        refused: list[tuple[Any, Exception]] = []
        for request, waiting in queue:
            refusal = cap_refusal(self.crawler, request, self.default_cap)
            if refusal is None:
                kept.append((request, waiting))
            else:
                refused.append((waiting, refusal))
        if not refused:
            return
        deque.clear(queue)
        deque.extend(queue, kept)
        for waiting, failure in refused:
            waiting.errback(failure)
