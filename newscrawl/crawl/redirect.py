"""Redirects that report loops and stay on the site.

Scrapy's RedirectMiddleware follows a loop (``/a`` -> ``/b`` -> ``/a``) until its duplicate filter
silently drops the repeat, or gives up after REDIRECT_MAX_TIMES with a debug line; neither shows
in a crawl report. This subclass refuses a redirect back to a URL of the same chain, and a
chain that is too long, as `redirect_loop`, and a redirect that leaves the site as `offsite`
(a site's page must come from the site) - except the start page's: a site whose home page
redirects to another host has moved, and the crawl follows it (the spider then scopes the site
to the new host). Redirects to private addresses are refused by
PrivateAddressMiddleware when the new request comes back through the chain.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware
from scrapy.exceptions import IgnoreRequest

from newscrawl.crawl.errors import CrawlRefusal, refuse
from newscrawl.crawl.private import AddressPolicy, literal_address, parse_allow_private
from newscrawl.crawl.urls import SiteScope, canonical_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["SiteRedirectMiddleware"]


class SiteRedirectMiddleware(RedirectMiddleware):
    """RedirectMiddleware with loop, length and site-scope checks that are reported."""

    policy = AddressPolicy()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SiteRedirectMiddleware:
        middleware = super().from_crawler(crawler)
        allow = parse_allow_private(crawler.settings.get("NEWSCRAWL_ALLOW_PRIVATE", False))
        middleware.policy = AddressPolicy(allow)
        return middleware

    def process_response(self, request: Request, response: Response) -> Request | Response:
        site = request.meta.get("site", "")
        try:
            result = super().process_response(request, response)
        except CrawlRefusal:
            raise
        except IgnoreRequest as err:
            raise refuse(
                self.crawler,
                "redirect_loop",
                request.url,
                site,
                f"{err} after {len(request.meta.get('redirect_urls', [])) + 1} hops",
            ) from None
        if not isinstance(result, Request):
            return result
        target = canonical_url(result.url)
        chain = {canonical_url(u) for u in result.meta.get("redirect_urls", [])}
        if target in chain:
            raise refuse(
                self.crawler,
                "redirect_loop",
                request.url,
                site,
                f"redirect loop back to {result.url}",
            )
        address = literal_address(result.url)
        if address is not None and self.policy.refuses(address):
            raise refuse(
                self.crawler,
                "private_address",
                request.url,
                site,
                f"redirect to non-public address {result.url}",
            )
        scope = request.meta.get("site_scope")
        if scope is not None and not SiteScope(*scope).contains(result.url):
            if not request.meta.get("newscrawl_seed"):
                raise refuse(
                    self.crawler,
                    "offsite",
                    request.url,
                    site,
                    f"redirect off the site to {result.url}",
                )
            # A start page that redirects elsewhere: the site moved; follow it there.
            moved = SiteScope.of(result.url)
            result.meta["site_scope"] = (moved.host, moved.port)
        return result
