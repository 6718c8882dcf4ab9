"""Retries that honour Retry-After.

Scrapy's RetryMiddleware retries 503 and 429 at once; a server that says ``Retry-After: 5`` is
asking to be left alone for five seconds, and a polite crawler waits. This subclass waits that
long (in seconds or as an HTTP date) before handing back the retry, holding the request's
download slot so the same site gets nothing else meanwhile. A wait longer than
``NEWSCRAWL_RETRY_AFTER_MAX`` seconds is not worth it: the request is given up and reported.

A page request that fails (a timeout, a 5xx...) once its site already has its cap of pages is
not retried: the page would not be kept. It is reported as ``after_cap`` with what went wrong,
so the failure stays in the summary.
"""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.retry import RetryMiddleware
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.response import response_status_message
from twisted.internet import task

from newscrawl.crawl.errors import classify, refuse
from newscrawl.crawl.middlewares.sitecap import site_has_its_pages

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["RetryAfterMiddleware", "parse_retry_after"]

_HONOURED = {429, 503}


def parse_retry_after(value: bytes | str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or HTTP date); None if unusable."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    text = text.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class RetryAfterMiddleware(RetryMiddleware):
    """RetryMiddleware that waits as long as Retry-After says (up to a limit) before a retry."""

    max_wait: float = 120.0
    default_cap: int = 200

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RetryAfterMiddleware:
        middleware = super().from_crawler(crawler)
        middleware.max_wait = crawler.settings.getfloat("NEWSCRAWL_RETRY_AFTER_MAX", 120.0)
        middleware.default_cap = crawler.settings.getint("MAX_PAGES_PER_SITE", 200)
        return middleware

    def process_exception(  # type: ignore[override]
        self, request: Request, exception: Exception
    ) -> Request | Response | None:
        if isinstance(exception, self.exceptions_to_retry) and self._not_needed(request):
            kind, detail = classify(exception)
            raise self._after_cap(request, f"{kind}: {detail}")
        return super().process_exception(request, exception)

    def _not_needed(self, request: Request) -> bool:
        """A page whose site has its pages (a retry would be refused, the page not kept)."""
        return not request.meta.get("dont_retry", False) and site_has_its_pages(
            self.crawler, request, self.default_cap
        )

    def _after_cap(self, request: Request, what: str) -> Exception:
        site = request.meta.get("site", "")
        return refuse(self.crawler, "after_cap", request.url, site, what)

    # Scrapy >= 2.13 calls it without the (deprecated) spider argument its stub still declares
    async def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response:
        if response.status in self.retry_http_codes and self._not_needed(request):
            raise self._after_cap(request, f"status {response.status}")
        wait = parse_retry_after(response.headers.get("Retry-After"))
        if (
            wait is None
            or response.status not in _HONOURED
            or response.status not in self.retry_http_codes
            or request.meta.get("dont_retry", False)
        ):
            return super().process_response(request, response)
        if wait > self.max_wait:
            raise refuse(
                self.crawler,
                "retry_after_too_long",
                request.url,
                request.meta.get("site", ""),
                f"status {response.status} asks to wait {wait:.0f} s (limit {self.max_wait:.0f} s)",
            )
        retry = self._retry(
            request, f"{response_status_message(response.status)} (Retry-After {wait:g} s)"
        )
        if retry is None:
            return response
        if wait > 0:
            from twisted.internet import reactor  # the running one; importing early installs one

            await maybe_deferred_to_future(task.deferLater(reactor, wait, lambda: None))
        return retry
