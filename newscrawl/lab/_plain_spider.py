"""A plain Scrapy spider, the peer `newscrawl bench crawl --site` measures against: it follows
every in-site link of each HTML page (parsel) until it has `cap` pages, then stops the crawl.

Run as a script (``python _plain_spider.py URL CAP ORDER``) so that nothing of newscrawl is
imported; ORDER is `bfs` (breadth first, newscrawl's order: the same pages for the same cap) or
`dfs` (Scrapy's default order). It prints one JSON line: pages, their HTML bytes, requests and
seconds from spider open to close.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urldefrag, urlsplit

import scrapy
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import CloseSpider
from scrapy.http import Response

SETTINGS = {
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "AUTOTHROTTLE_ENABLED": False,
    "DOWNLOAD_DELAY": 0,
    "LOG_LEVEL": "WARNING",
    "TELNETCONSOLE_ENABLED": False,
}
BREADTH_FIRST = {
    "DEPTH_PRIORITY": 1,
    "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
    "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
}


class PlainSpider(scrapy.Spider):
    """Follows in-site links breadth-agnostic (Scrapy's default order) up to `cap` pages."""

    name = "plain"

    def __init__(self, url: str, cap: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.start_urls = [url]
        self.host = urlsplit(url).netloc
        self.cap = cap
        self.pages = 0
        self.bytes = 0
        self.opened = self.closed_at = 0.0

    def parse(self, response: Response) -> Iterator[scrapy.Request]:
        if not self.opened:
            self.opened = time.monotonic()
        if self.pages >= self.cap or not hasattr(response, "css"):
            return
        self.pages += 1
        self.bytes += len(response.body)
        if self.pages >= self.cap:
            raise CloseSpider("cap")
        for href in response.css("a::attr(href)").getall():
            url = urldefrag(response.urljoin(href)).url
            if urlsplit(url).netloc == self.host:
                yield scrapy.Request(url)


def main(url: str, cap: int, order: str = "bfs") -> None:
    process = CrawlerProcess({**SETTINGS, **(BREADTH_FIRST if order == "bfs" else {})})
    crawler = process.create_crawler(PlainSpider)
    started = time.monotonic()
    process.crawl(crawler, url=url, cap=cap)
    process.start()
    stats = crawler.stats.get_stats() if crawler.stats else {}
    spider = crawler.spider
    elapsed = (stats["finish_time"] - stats["start_time"]).total_seconds()
    print(
        json.dumps(
            {
                "pages": getattr(spider, "pages", 0),
                "bytes": getattr(spider, "bytes", 0),
                "requests": stats.get("downloader/request_count", 0),
                "elapsed_s": elapsed,
                "process_s": time.monotonic() - started,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *sys.argv[3:4])
