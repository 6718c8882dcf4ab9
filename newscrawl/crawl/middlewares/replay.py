"""Serve pages a resumed crawl already stored, from its Parquet files instead of the network.

After a kill, Scrapy's queue is gone; the crawl restarts from the site list and reaches pages
it already has. Fetching them again would waste the site's time and, worse, lose nothing but
still need their links. This downloader middleware answers such a page request with the stored
response (flag ``replayed``, meta ``newscrawl_replayed``): the spider follows its links as
before, the page does not count against the cap twice, and no writer writes its rows again.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import OrderedDict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from scrapy.http import HtmlResponse, Response

from newscrawl.crawl.extensions.state import crawl_state
from newscrawl.html.urls import canonical_url

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["ReplayMiddleware"]

_CACHED_GROUPS = 4
_COLUMNS = ["final_url", "status", "headers", "html", "fetched_at"]


class _RowGroups:
    """Reads single rows of Parquet files, keeping the last few row groups decoded."""

    def __init__(self) -> None:
        self._offsets: dict[Path, list[int]] = {}
        self._groups: OrderedDict[tuple[Path, int], dict[str, list[Any]]] = OrderedDict()

    def row(self, path: Path, row: int) -> dict[str, Any]:
        offsets = self._offsets.get(path)
        if offsets is None:
            meta = pq.ParquetFile(path).metadata
            offsets = [0]
            for i in range(meta.num_row_groups):
                offsets.append(offsets[-1] + meta.row_group(i).num_rows)
            self._offsets[path] = offsets
        group = bisect_right(offsets, row) - 1
        if not 0 <= group < len(offsets) - 1:
            raise ValueError(f"{path} has no row {row}")
        key = (path, group)
        columns = self._groups.get(key)
        if columns is None:
            columns = pq.ParquetFile(path).read_row_group(group, columns=_COLUMNS).to_pydict()
            self._groups[key] = columns
            if len(self._groups) > _CACHED_GROUPS:
                self._groups.popitem(last=False)
        else:
            self._groups.move_to_end(key)
        index = row - offsets[group]
        return {name: values[index] for name, values in columns.items()}


class ReplayMiddleware:
    """Downloader middleware: stored pages of a resumed crawl come from its `pages` files."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.state = crawl_state(crawler)
        self.reader = _RowGroups()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ReplayMiddleware:
        return cls(crawler)

    def process_request(self, request: Request) -> Response | None:
        if request.meta.get("newscrawl_kind") != "page":
            return None
        stored = self.state.stored_pages.get(canonical_url(request.url))
        if stored is None:
            return None
        try:
            row = self.reader.row(stored.path, stored.row)
        except (OSError, ValueError):
            return None  # unreadable: fetch it again
        request.meta["newscrawl_replayed"] = True
        fetched: datetime | None = row["fetched_at"]
        request.meta["newscrawl_fetched_at"] = fetched or datetime.now(UTC)
        self.crawler.stats.inc_value("newscrawl/replayed")
        headers = {k: v for k, v in (row["headers"] or [])}
        return HtmlResponse(
            url=row["final_url"],
            status=row["status"],
            headers=headers,
            body=row["html"],
            request=request,
            flags=["replayed"],
        )
