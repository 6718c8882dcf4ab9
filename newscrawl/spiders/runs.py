"""What the site spider keeps per site (`SiteRun`), the signal it sends when a site is drained,
and the small helpers its callbacks share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import scrapy
from scrapy.utils.defer import maybe_deferred_to_future

from newscrawl.crawl.discovery.links import LinkResolver
from newscrawl.crawl.discovery.site_lists import SiteSpec
from newscrawl.crawl.discovery.traps import ShapeBudget
from newscrawl.crawl.parsepool import PageLinks
from newscrawl.html.dom import Dom
from newscrawl.html.tree import PageError
from newscrawl.html.urls import SiteScope

if TYPE_CHECKING:
    from twisted.python.failure import Failure

__all__ = ["Parsed", "SiteRun", "request_of", "site_drained", "sleep"]


def sleep(seconds: float) -> Any:
    """A future that resolves after `seconds` on the reactor (awaitable in a callback)."""
    from twisted.internet import reactor
    from twisted.internet.task import deferLater

    return maybe_deferred_to_future(deferLater(reactor, seconds, lambda: None))


# what the parse of a page gave: its links and (parsed inline) DOM, the error that refused it,
# or None for a response that is not parsed (not HTML, not modified)
Parsed = tuple[PageLinks, Dom | None] | PageError | None
# Sent (site=NAME, pages=N) when nothing of a site is left to fetch or parse: its frontier is
# exhausted and N pages went to the item pipelines (the site pass writes the site then).
site_drained = object()


def request_of(failure: Failure) -> scrapy.Request:
    """The request an errback's `failure` is about (Scrapy sets it on the failure)."""
    request: scrapy.Request = failure.request  # type: ignore[attr-defined]
    return request


@dataclass(slots=True)
class SiteRun:
    """One site's crawl: its spec, scope, cap and what was already queued."""

    spec: SiteSpec
    scope: SiteScope
    cap: int
    queued: set[str] = field(default_factory=set)
    discovery: set[str] = field(default_factory=set)
    links: LinkResolver = field(default_factory=LinkResolver)  # hrefs its pages share, resolved
    feeds: int = 0
    sitemaps: int = 0
    skipped: set[str] = field(default_factory=set)  # stored articles left alone, unchanged
    refetches: int = 0  # stored pages requested again (bounded by the cap, as new pages are)
    outstanding: int = 0  # requests yielded and not yet answered (callback or errback)
    pages: int = 0  # PageItems yielded
    drained: bool = False
    started: bool = False  # its first requests were made
    shapes: ShapeBudget = field(default_factory=ShapeBudget)  # pages per URL shape (traps)
    released: bool = False  # the site pass wrote it and let go of it
