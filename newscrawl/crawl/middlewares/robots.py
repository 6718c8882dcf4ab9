"""robots.txt obeyed for every request, including those that arrive while it is being fetched.

Scrapy's RobotsTxtMiddleware (2.19) keeps one Deferred per host while the host's robots.txt is
downloading, and every request for that host awaits it. Under the asyncio reactor each await
goes through ``Deferred.asFuture``, which hands the result to the first awaiter and turns the
Deferred's result into None for the rest - so every request but the first that waited for
robots.txt was let through unchecked. That happens whenever several requests for a host are
ready before its robots.txt is (a resumed crawl's queue, a site list with several start pages
on one host). This subclass looks the parser up again once the wait is over: by then the
middleware has stored it (or None, when robots.txt could not be had).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware as ScrapyRobotsTxt
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.robotstxt import RobotParser

__all__ = ["RobotsTxtMiddleware"]


class RobotsTxtMiddleware(ScrapyRobotsTxt):
    """Scrapy's robots.txt middleware with the parser looked up after waiting for it."""

    async def robot_parser(self, request: Request) -> RobotParser | None:
        parser = await super().robot_parser(request)
        stored = self._parsers.get(urlparse_cached(request).netloc)
        return parser if stored is None or isinstance(stored, Deferred) else stored
