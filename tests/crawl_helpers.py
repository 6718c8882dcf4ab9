"""Settings the crawl tests share: a crawl of the loopback demo web without politeness delays."""

from __future__ import annotations

__all__ = ["FAST_CRAWL"]

# Loopback is private, so it must be allowed; delays, throttling and retries only slow a test.
FAST_CRAWL = (
    "NEWSCRAWL_ALLOW_PRIVATE=loopback",
    "AUTOTHROTTLE_ENABLED=False",
    "DOWNLOAD_DELAY=0",
    "CONCURRENT_REQUESTS_PER_DOMAIN=8",
    "RETRY_TIMES=1",
)
