"""Keep every response a crawl fetches as WARC/1.1 too (``newscrawl crawl --warc DIR``).

A downloader middleware placed next to the downloader (above HttpCompressionMiddleware and the
replay of stored pages), so it sees each response as it came off the network - content encoding
still applied, redirects, errors, robots.txt, sitemaps and feeds included - and never a page a
resumed crawl replays from its own files. Each one is written as a request record and a response
record (`newscrawl.storage.warc_writer`: gzip per record, files rotated at NEWSCRAWL_WARC_MAX_BYTES,
a
warcinfo record naming newscrawl and the crawl's settings, hidden until complete). The HTTP
headers are the ones Scrapy received, minus Transfer-Encoding (Scrapy has already removed the
chunking from the body). Where the response record went is left in the response's meta
(``newscrawl_warc``), so the crawl's rows name it like the rows of an ingested archive.

Settings: NEWSCRAWL_WARC_DIR ("" = off), NEWSCRAWL_WARC_MAX_BYTES, NEWSCRAWL_WARC_PREFIX
(default ``newscrawl-<crawl id>``).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured

from newscrawl._version import __version__
from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.crawl.items import WarcOrigin

if TYPE_CHECKING:
    from scrapy import Request, Spider
    from scrapy.crawler import Crawler
    from scrapy.http import Response

    from newscrawl.storage.warc_writer import Exchange, WarcFileWriter

__all__ = ["WarcRecorderMiddleware", "warcinfo_fields"]

logger = logging.getLogger(__name__)
# settings named in the warcinfo record: what a reader of the archive needs to judge it
_INFO_SETTINGS = (
    "USER_AGENT",
    "ROBOTSTXT_OBEY",
    "MAX_PAGES_PER_SITE",
    "DOWNLOAD_MAXSIZE",
    "DOWNLOAD_TIMEOUT",
    "CONCURRENT_REQUESTS_PER_DOMAIN",
    "DOWNLOAD_DELAY",
    "AUTOTHROTTLE_ENABLED",
    "NEWSCRAWL_ALLOW_PRIVATE",
    "NEWSCRAWL_EXTRACTORS",
)
_DROPPED_HEADERS = {b"transfer-encoding"}


def warcinfo_fields(settings: Any, crawl_id: str) -> dict[str, Any]:
    """The warcinfo record's fields: software, format, the crawl and its settings."""
    values = {name: settings.get(name) for name in _INFO_SETTINGS}
    return {
        "software": f"newscrawl/{__version__} (Scrapy)",
        "format": "WARC File Format 1.1",
        "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
        "isPartOf": crawl_id,
        "http-header-user-agent": str(settings.get("USER_AGENT") or ""),
        "robots": "obey" if settings.getbool("ROBOTSTXT_OBEY") else "ignore",
        "description": "newscrawl crawl; settings: see newscrawl-settings",
        "newscrawl-settings": values,
    }


def _pairs(headers: Any, dropped: set[bytes] = frozenset()) -> list[tuple[str, str]]:  # type: ignore[assignment]
    pairs = []
    for name, values in headers.items():
        if name.lower() in dropped:
            continue
        for value in values:
            pairs.append((name.decode("latin-1"), value.decode("latin-1")))
    return pairs


class WarcRecorderMiddleware:
    """Downloader middleware: every response from the network also goes to a WARC file."""

    def __init__(self, crawler: Crawler, writer: WarcFileWriter) -> None:
        self.crawler = crawler
        self.writer = writer
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> WarcRecorderMiddleware:
        settings = crawler.settings
        folder = settings.get("NEWSCRAWL_WARC_DIR")
        if not folder:
            raise NotConfigured  # quietly: most crawls keep no WARC
        from newscrawl.storage.warc_writer import WarcFileWriter

        crawl_id = crawl_state(crawler).crawl_id
        prefix = settings.get("NEWSCRAWL_WARC_PREFIX") or f"newscrawl-{crawl_id}"
        writer = WarcFileWriter(
            folder,
            prefix,
            warcinfo_fields(settings, crawl_id),
            settings.getint("NEWSCRAWL_WARC_MAX_BYTES", 1 << 30),
        )
        for path in writer.recovered:
            logger.warning("WARC file left open by a killed crawl recovered: %s", path)
        logger.info("writing every response as WARC to %s", folder)
        return cls(crawler, writer)

    def process_response(self, request: Request, response: Response) -> Response:
        if "replayed" in response.flags or "cached" in response.flags:
            return response
        try:
            written = self.writer.write(self._exchange(request, response))
        except OSError as err:  # a full disk must not stop the crawl; it is reported
            logger.error("cannot write WARC record of %s: %s", response.url, err)
            self.crawler.stats.inc_value("newscrawl/warc/errors")
            return response
        request.meta["newscrawl_warc"] = WarcOrigin(
            written.file, written.offset, written.record_id, written.date
        )
        self.crawler.stats.inc_value("newscrawl/warc/records", 2)
        return response

    @staticmethod
    def _exchange(request: Request, response: Response) -> Exchange:
        from newscrawl.storage.warc_writer import Exchange

        ip = getattr(response, "ip_address", None)
        protocol = getattr(response, "protocol", None) or "HTTP/1.1"
        return Exchange(
            url=response.url,
            method=request.method,
            request_headers=_pairs(request.headers),
            request_body=request.body or b"",
            status=response.status,
            response_headers=_pairs(response.headers, _DROPPED_HEADERS),
            body=response.body,
            protocol=protocol if protocol.upper().startswith("HTTP/") else "HTTP/1.1",
            ip_address=str(ip) if ip is not None else None,
            date=datetime.now(UTC),
        )

    def spider_closed(self, spider: Spider) -> None:
        files = self.writer.close()
        logger.info("WARC: %d records in %d files", self.writer.records, len(files))
