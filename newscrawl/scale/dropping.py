"""Take a site's requests out of a running Scrapy engine: what a worker does when its lease of
the site is gone (another worker crawls it now), so not one more page of it is fetched here.

Two places hold requests that were not sent yet: the scheduler's queues, and each download
slot's queue (requests the engine passed to the downloader that wait for their slot's delay or
concurrency). Requests already on the wire are left to finish; the spider ignores their
responses.
"""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import IgnoreRequest
from twisted.python.failure import Failure

__all__ = ["drop_queued_downloads", "drop_scheduled"]


def _site_of(request: Any) -> str:
    return str(request.meta.get("site", ""))


def drop_scheduled(scheduler: Any, site: str) -> int:
    """Take `site`'s requests out of the scheduler (others go back in); how many went."""
    kept: list[Any] = []
    dropped = 0
    while (request := scheduler.next_request()) is not None:
        if _site_of(request) == site:
            dropped += 1
        else:
            kept.append(request)
    for request in kept:  # already past the duplicate filter once
        scheduler.enqueue_request(request.replace(dont_filter=True))
    return dropped


def drop_queued_downloads(downloader: Any, site: str) -> int:
    """Fail the requests of `site` that wait in a download slot's queue (IgnoreRequest, which
    goes to the request's errback); how many there were."""
    dropped = 0
    for slot in list(getattr(downloader, "slots", {}).values()):
        queue = getattr(slot, "queue", None)
        if not queue:
            continue
        mine = [entry for entry in queue if _site_of(entry[0]) == site]
        for entry in mine:
            queue.remove(entry)
            entry[1].errback(Failure(IgnoreRequest(f"lease of {site} lost")))
        dropped += len(mine)
    return dropped
