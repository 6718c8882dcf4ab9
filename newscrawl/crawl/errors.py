"""What went wrong with a request, in the few kinds a crawl summary reports.

Every refusal or failure is recorded once, by the component that decides it: newscrawl's own
middlewares record their refusals as they raise them (and mark the exception `recorded`), the
spider's errback records every other failure of the requests it made. The counts go to Scrapy's
stats as ``newscrawl/errors/<kind>`` (and per site), with a few example URLs per kind kept for
the summary.
"""

from __future__ import annotations

import weakref
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    ResponseDataLossError,
    StopDownload,
)
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet import error as tx_error
from twisted.web.client import ResponseFailed

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.python.failure import Failure

__all__ = [
    "KINDS",
    "CrawlRefusal",
    "ErrorReport",
    "classify",
    "error_report",
    "record",
    "record_failure",
    "refuse",
    "start_failure",
]

# kind -> what the summary calls it
KINDS: dict[str, str] = {
    "http_5xx": "HTTP 5xx",
    "http_4xx": "HTTP 4xx",
    "http_other": "other HTTP status",
    "timeout": "timeout",
    "connection_reset": "connection reset or lost",
    "connection_refused": "connection refused",
    "dns": "DNS lookup failed",
    "redirect_loop": "redirect loop / too many redirects",
    "redirect_scheme": "redirect to a non-web URL (file:, data:...) refused",
    "redirect_bad_url": "redirect to a URL that cannot be parsed",
    "too_large": "response too large",
    "not_html": "not HTML",
    "too_many_nodes": "page over the node budget (NEWSCRAWL_MAX_PAGE_NODES) refused",
    "extract_budget": "page over an extractor's node budget: the next extractor used",
    "private_address": "refused private address",
    "robots_disallowed": "disallowed by robots.txt",
    "offsite": "offsite",
    "cap_reached": "page cap reached",
    "after_cap": "failed after its site had its pages (not retried)",
    "trap": "crawler trap",
    "unsafe_xml": "unsafe XML (entities) refused",
    "decompression_bomb": "decompression bomb (inflates past the size limit) refused",
    "broken_compression": "broken compressed body",
    "retry_after_too_long": "Retry-After too long",
    "extract_error": "extraction error",
    "sitepass_worker_lost": "site pass worker process died (killed, out of memory?)",
    "extract_worker_lost": "page whose extraction worker died twice: written without text",
    "spider_exception": "exception in a spider callback",
    "log_error": "errors logged",
    "other": "other error",
}
SAMPLES_PER_KIND = 5


class CrawlRefusal(IgnoreRequest):
    """A request newscrawl itself refused; `kind` is one of KINDS."""

    kind = "other"

    def __init__(self, message: str, kind: str | None = None) -> None:
        super().__init__(message)
        if kind:
            self.kind = kind
        self.recorded = False


@dataclass(slots=True)
class ErrorReport:
    """Per-crawl error counts by kind and by site, with a few example URLs of each kind."""

    counts: Counter[str] = field(default_factory=Counter)
    by_site: defaultdict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    samples: defaultdict[str, list[str]] = field(default_factory=lambda: defaultdict(list))


_REPORTS: weakref.WeakKeyDictionary[Any, ErrorReport] = weakref.WeakKeyDictionary()


def error_report(crawler: Crawler) -> ErrorReport:
    """The crawl's one ErrorReport (created on first use)."""
    report = _REPORTS.get(crawler)
    if report is None:
        report = _REPORTS[crawler] = ErrorReport()
    return report


def record(crawler: Crawler, kind: str, url: str, site: str = "", detail: str = "") -> None:
    """Count one error of `kind` for `url` (and its site) in the stats and the report."""
    report = error_report(crawler)
    report.counts[kind] += 1
    if site:
        report.by_site[site][kind] += 1
    samples = report.samples[kind]
    if len(samples) < SAMPLES_PER_KIND:
        samples.append(f"{url} ({detail})" if detail else url)
    if crawler.stats is not None:
        crawler.stats.inc_value(f"newscrawl/errors/{kind}")


def _http_kind(status: int) -> str:
    if 500 <= status < 600:
        return "http_5xx"
    if 400 <= status < 500:
        return "http_4xx"
    return "http_other"


def classify(exc: BaseException) -> tuple[str, str]:
    """(kind, short detail) of an exception that ended a request."""
    if isinstance(exc, CrawlRefusal):
        return exc.kind, str(exc)
    if isinstance(exc, HttpError):
        return _http_kind(exc.response.status), f"status {exc.response.status}"
    if isinstance(exc, StopDownload):
        return "not_html", "download stopped: not an HTML page"
    if isinstance(exc, IgnoreRequest) and _decompression_bomb(exc):
        return "decompression_bomb", str(exc)
    if isinstance(exc, IgnoreRequest):
        message = str(exc)
        if "robots.txt" in message:
            return "robots_disallowed", message
        if "redirect" in message:
            return "redirect_loop", message
        if "offsite" in message.lower():
            return "offsite", message
        return "other", message or "ignored"
    if isinstance(exc, DownloadTimeoutError | tx_error.TimeoutError):
        return "timeout", str(exc)
    if isinstance(exc, DownloadCancelledError):
        message = str(exc)
        return ("too_large", message) if "max size" in message else ("other", message)
    if isinstance(exc, DownloadConnectionRefusedError | tx_error.ConnectionRefusedError):
        return "connection_refused", str(exc)
    if isinstance(exc, CannotResolveHostError | tx_error.DNSLookupError):
        return "dns", str(exc)
    if isinstance(
        exc,
        DownloadFailedError
        | ResponseDataLossError
        | ResponseFailed
        | tx_error.ConnectionLost
        | tx_error.ConnectionDone
        | tx_error.ConnectError
        | ConnectionError,
    ):
        return "connection_reset", type(exc).__name__
    return "other", f"{type(exc).__name__}: {exc}"


def _decompression_bomb(exc: IgnoreRequest) -> bool:
    """Scrapy's HttpCompressionMiddleware refused a body that inflates past DOWNLOAD_MAXSIZE."""
    cause = exc.__cause__
    if cause is not None and type(cause).__name__ == "_DecompressionMaxSizeExceeded":
        return True
    return "during decompression" in str(exc)


def record_failure(crawler: Crawler, failure: Failure, site: str = "") -> str:
    """Record the failure of a request (unless its refusal was recorded already); its kind."""
    exc = failure.value
    request = getattr(failure, "request", None)
    url = request.url if request is not None else ""
    kind, detail = classify(exc)
    if getattr(exc, "recorded", False):
        return kind
    record(crawler, kind, url, site, detail)
    if isinstance(exc, CrawlRefusal):
        exc.recorded = True
    return kind


def refuse(crawler: Crawler, kind: str, url: str, site: str, message: str) -> CrawlRefusal:
    """Record a refusal now and return the exception to raise for it."""
    record(crawler, kind, url, site, message)
    exc = CrawlRefusal(message, kind)
    exc.recorded = True
    return exc


def start_failure(exc: BaseException) -> str:
    """Why a site's start page gave nothing, in words for the summary."""
    if isinstance(exc, HttpError):
        return f"start page answered HTTP {exc.response.status}"
    kind, detail = classify(exc)
    if kind == "robots_disallowed":
        return "robots.txt disallows the start page"
    name = KINDS.get(kind, kind)
    detail = detail if len(detail) <= 160 else detail[:157] + "..."
    return f"start page: {name} ({detail})" if detail and detail != name else f"start page: {name}"
