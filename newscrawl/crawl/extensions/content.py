"""Stop downloading a page as soon as its headers say it is not HTML.

A link to a 200 MB video or a PDF looks like any other link. This extension watches Scrapy's
``headers_received`` signal and, for page requests whose Content-Type is declared and is not
HTML, stops the download before the body comes (the request's errback reports it as
`not_html`). Bodies without a Content-Type are downloaded and sniffed by the parser, which
refuses binary data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import StopDownload

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["HtmlOnlyExtension", "is_html_type"]

_HTML_TYPES = frozenset({"", "text/html", "application/xhtml+xml", "application/html"})


def is_html_type(content_type: str) -> bool:
    """HTML, or not declared (the parser sniffs undeclared bodies and refuses binary ones)."""
    return content_type.split(";", 1)[0].strip().lower() in _HTML_TYPES


class HtmlOnlyExtension:
    """Cancel page downloads whose declared Content-Type is not HTML."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        crawler.signals.connect(self.headers_received, signal=signals.headers_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HtmlOnlyExtension:
        return cls(crawler)

    def headers_received(
        self, headers: Any, body_length: int, request: Request, spider: Any
    ) -> None:
        if request.meta.get("newscrawl_kind") != "page" or headers.get(b"Location"):
            return  # a redirect's own body does not matter
        raw = headers.get(b"Content-Type") or b""
        content_type = raw.decode("latin-1") if isinstance(raw, bytes) else str(raw)
        if not is_html_type(content_type):
            raise StopDownload(fail=True)
