"""The item a crawl yields: one fetched HTML page, filled in by the item pipelines.

A dataclass (Scrapy handles those through itemadapter). The spider sets what the response says
and the parsed `dom`; the pipelines add the extraction, the article flag and the metadata, then
write rows. `dom` and `html` are the heavy parts: they are left out of repr (Scrapy logs items)
and the last pipeline drops them so a finished item holds only text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from newscrawl.html.dom import Dom

__all__ = ["PageItem", "WarcOrigin"]


@dataclass(frozen=True, slots=True)
class WarcOrigin:
    """The WARC record a page came from (`newscrawl ingest`) or was written to (`--warc`)."""

    file: str  # the WARC file's name (as given to ingest; the final name when written)
    offset: int  # where the record (its gzip member) starts in the file
    record_id: str | None  # WARC-Record-ID (ARC records have none)
    date: datetime | None  # WARC-Date: when the page was captured

    def columns(self) -> dict[str, Any]:
        return {
            "warc_file": self.file,
            "warc_offset": self.offset,
            "warc_record_id": self.record_id,
            "warc_date": self.date,
        }


@dataclass(slots=True, eq=False)
class PageItem:
    url: str  # canonical URL requested (before redirects)
    final_url: str  # canonical URL of the response
    site: str
    crawl: str
    fetched_at: datetime
    status: int
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    html: bytes = field(default=b"", repr=False)
    dom: Dom | None = field(default=None, repr=False)
    # the page's node hashes as the site pass counts them, from the crawl's parse
    # (`newscrawl.template.node_summary`); stored beside `html`, b"" when none
    node_hashes: bytes = field(default=b"", repr=False)
    replayed: bool = False  # served from a resumed crawl's own `pages` files, not fetched
    stored: bool = False  # and its `articles` row is stored too: nothing to extract or write
    max_pages: int = 0  # the site's page cap (0: none)
    deferred: bool = False  # extracted and written by the site pass (pipelines.sitepass)
    context: bool = False  # an earlier crawl's page: its site's template, never written again
    warc: WarcOrigin | None = None  # provenance in a web archive, when there is one
    # filled in by the pipelines
    title: str = ""
    text: str = field(default="", repr=False)
    markdown: str | None = field(default=None, repr=False)  # NEWSCRAWL_MARKDOWN
    comments: str | None = field(default=None, repr=False)  # NEWSCRAWL_COMMENTS
    extractor: str = ""
    stage: str = ""  # what produced `text`: "site" (the site pass) or "page" (page-level)
    texts: dict[str, str] = field(default_factory=dict, repr=False)
    node_ids: tuple[int, ...] = field(default=(), repr=False)
    is_article: bool = False
    article_reason: str = ""
    page_type: str = ""  # the extractor's kind of page (`Extraction.page_type`), "" unknown
    language: str | None = None
    encoding: str = ""  # charset the body was decoded with (Dom.encoding)
    encoding_source: str = ""  # what decided it: bom, declared, detected, default
    published: datetime | None = None
    author: str | None = None
    content_hash: str = ""
    error: str | None = None
    extras: dict[str, Any] = field(default_factory=dict, repr=False)

    def release(self) -> None:
        """Drop the page bytes and the parsed tree once every pipeline has used them."""
        self.dom = None
        self.html = b""
        self.node_hashes = b""
        self.node_ids = ()
