"""Keep a live worker's leases alive: renew them from a thread while the sites are crawled.

A thread, not a reactor call, so a Redis call that blocks (a server that went away mid-request)
never stalls the crawl; and a crawl that keeps the reactor busy never lets a lease lapse.
Renewal runs every third of the lease, so two missed beats still leave the lease held.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from newscrawl.scale.redis_queue import UNAVAILABLE_ERRORS, SiteQueue

__all__ = ["LeaseKeeper"]

logger = logging.getLogger(__name__)


class LeaseKeeper:
    """Renews `worker`'s leases on `queue` every `interval` seconds until `stop()`."""

    def __init__(
        self,
        queue: SiteQueue,
        worker: str,
        *,
        interval: float | None = None,
        on_lost: Callable[[str], None] | None = None,
        on_run_gone: Callable[[], None] | None = None,
    ) -> None:
        self.queue = queue
        self.worker = worker
        self.interval = interval if interval is not None else max(queue.lease_seconds / 3, 0.2)
        self.on_lost = on_lost
        self.on_run_gone = on_run_gone
        self._sites: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)
        self.redis_down = False

    def start(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.queue.lease_seconds)

    def hold(self, site: str) -> None:
        with self._lock:
            self._sites.add(site)

    def release(self, site: str) -> None:
        with self._lock:
            self._sites.discard(site)

    @property
    def sites(self) -> list[str]:
        with self._lock:
            return sorted(self._sites)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.beat()

    def beat(self) -> None:
        """One renewal; warns once when Redis goes away and once when it is back."""
        sites = self.sites
        try:
            lost = self.queue.renew(self.worker, sites)
        except UNAVAILABLE_ERRORS as exc:
            if not self.redis_down:
                logger.warning(
                    "Redis unavailable (%s): cannot renew the lease of %s; crawling on and "
                    "retrying every %.1fs",
                    exc,
                    ", ".join(sites) or "no site",
                    self.interval,
                )
            self.redis_down = True
            return
        if self.redis_down:
            logger.warning("Redis is back: leases renewed for %s", ", ".join(sites) or "no site")
            self.redis_down = False
        if lost and not self._run_known():
            # Redis lost the whole run (restarted without persistence): not a lease that lapsed
            logger.warning(
                "run %s is no longer in Redis (Redis lost its data?); %s held %s",
                self.queue.run,
                self.worker,
                ", ".join(lost),
            )
            if self.on_run_gone is not None:
                self.on_run_gone()
                return
        for site in lost:
            logger.warning(
                "lease of %s is gone (this worker was out of touch longer than the lease, or "
                "another worker finished the site); %s",
                site,
                "stopping it" if self.on_lost else "another worker may crawl it too",
            )
            if self.on_lost is not None:
                self.on_lost(site)

    def _run_known(self) -> bool:
        """Whether Redis still has the run; True when it cannot tell (it went away again)."""
        try:
            return self.queue.exists()
        except UNAVAILABLE_ERRORS:
            return True
