"""Redirects that report loops and stay on the site.

Scrapy's RedirectMiddleware follows a loop (``/a`` -> ``/b`` -> ``/a``) until its duplicate filter
silently drops the repeat, or gives up after REDIRECT_MAX_TIMES with a debug line; neither shows
in a crawl report. This subclass refuses a redirect back to a URL of the same chain, and a
chain that is too long, as `redirect_loop`, a redirect to a URL that is not http(s) (``file:``,
``data:``, ``ftp:``...; Scrapy passes the 3xx response on, which would read as an HTTP error) as
`redirect_scheme`, and a redirect that leaves the site as `offsite`
(a site's page must come from the site) - except the start page's: a site whose home page
redirects to another host has moved, and the crawl follows it (the spider then scopes the site
to the new host). Redirects to private addresses are refused by
PrivateAddressMiddleware when the new request comes back through the chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import MetaRefreshMiddleware, RedirectMiddleware
from scrapy.exceptions import IgnoreRequest

from newscrawl.crawl.errors import CrawlRefusal, refuse
from newscrawl.crawl.middlewares.private import AddressPolicy, literal_address, parse_allow_private
from newscrawl.html.urls import SiteScope, canonical_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["SafeMetaRefreshMiddleware", "SiteRedirectMiddleware"]

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


class SiteRedirectMiddleware(RedirectMiddleware):
    """RedirectMiddleware with loop, length and site-scope checks that are reported."""

    policy = AddressPolicy()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteRedirectMiddleware:
        middleware = super().from_crawler(crawler)
        allow = parse_allow_private(crawler.settings.get("NEWSCRAWL_ALLOW_PRIVATE", False))
        middleware.policy = AddressPolicy(allow)
        return middleware

    # Scrapy >= 2.13 calls it without the (deprecated) spider argument its stub still declares
    def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response:
        try:
            result = super().process_response(request, response)
        except CrawlRefusal:
            raise
        except IgnoreRequest as err:
            hops = len(request.meta.get("redirect_urls", [])) + 1
            raise self._refuse("redirect_loop", request, f"{err} after {hops} hops") from None
        except ValueError as err:  # a Location urllib cannot parse (`http://[::1`, a bad port)
            raise self._refuse("redirect_bad_url", request, f"redirect: {err}") from None
        if isinstance(result, Request):
            self._check(request, result)
        elif result is response:
            self._check_scheme(request, response)
        return result

    def _check_scheme(self, request: Request, response: Response) -> None:
        """Refuse a redirect that RedirectMiddleware left alone because its target is not an
        http(s) URL."""
        location = response.headers.get("Location")
        if response.status not in REDIRECT_STATUSES or not location:
            return
        if request.meta.get("dont_redirect") or request.meta.get("handle_httpstatus_all"):
            return
        try:
            target = urljoin(request.url, location.decode("latin-1").strip())
            scheme = urlsplit(target).scheme.lower()
        except ValueError as err:
            raise self._refuse("redirect_bad_url", request, f"redirect: {err}") from None
        if scheme not in ("http", "https"):
            detail = f"redirect to a {scheme or 'scheme-less'}: URL ({target[:80]})"
            raise self._refuse("redirect_scheme", request, detail)

    def _check(self, request: Request, redirect: Request) -> None:
        """Refuse a redirect that loops, goes to a non-public address or leaves the site; the
        start page's redirect off the site is a move, and the site's scope follows it."""
        target = canonical_url(redirect.url)
        if target in {canonical_url(u) for u in redirect.meta.get("redirect_urls", [])}:
            raise self._refuse("redirect_loop", request, f"redirect loop back to {redirect.url}")
        address = literal_address(redirect.url)
        if address is not None and self.policy.refuses(address):
            detail = f"redirect to non-public address {redirect.url}"
            raise self._refuse("private_address", request, detail)
        scope = request.meta.get("site_scope")
        if scope is None or SiteScope(*scope).contains(redirect.url):
            return
        if not request.meta.get("newscrawl_seed"):
            raise self._refuse("offsite", request, f"redirect off the site to {redirect.url}")
        moved = SiteScope.of(redirect.url)
        redirect.meta["site_scope"] = (moved.host, moved.port)

    def _refuse(self, kind: str, request: Request, detail: str) -> CrawlRefusal:
        return refuse(self.crawler, kind, request.url, request.meta.get("site", ""), detail)


class SafeMetaRefreshMiddleware(MetaRefreshMiddleware):
    """MetaRefreshMiddleware that passes on a page whose `<base href>` or refresh URL cannot
    be parsed (`<base href="http://[::1">`): Scrapy's reading of them raises ValueError, which
    would lose the page and every link on it for one bad attribute. Such a page is read as it
    came, without a refresh; the spider ignores the bad `<base>` as browsers do."""

    def process_response(  # type: ignore[override]
        self, request: Request, response: Response
    ) -> Request | Response:
        try:
            return super().process_response(request, response)
        except ValueError:
            return response
