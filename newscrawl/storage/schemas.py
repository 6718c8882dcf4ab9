"""The explicit schemas of the crawl's two datasets.

`articles`: one row per HTML page fetched (article or not - `is_article` and `article_reason`
say which and why), with the extracted text. `pages`: the same pages' raw bytes and the headers
that matter, so templates can be retrained and extractors rerun without crawling again.

Both are partitioned by `crawl` then `site` (the partition columns live in the folder names),
and so is the crawl's third dataset, `nodes` (schema: newscrawl.template.node_table.nodes_schema).
"""

from __future__ import annotations

import pyarrow as pa

__all__ = ["ARTICLES_SCHEMA", "KEPT_HEADERS", "PAGES_SCHEMA", "PARTITION_BY", "REPEATS_SCHEMA"]

PARTITION_BY = ("crawl", "site")
_TIME = pa.timestamp("ms", tz="UTC")
# Response headers kept in `pages.headers`: what a later re-parse or re-crawl needs.
KEPT_HEADERS = (
    "content-type",
    "content-language",
    "content-length",
    "last-modified",
    "etag",
    "date",
    "expires",
    "cache-control",
    "x-robots-tag",
    "link",
)


def _field(name: str, type_: pa.DataType, doc: str, nullable: bool = True) -> pa.Field:
    return pa.field(name, type_, nullable=nullable, metadata={"doc": doc})


def _common() -> list[pa.Field]:
    return [
        _field("url", pa.string(), "URL requested, canonical form", nullable=False),
        _field("final_url", pa.string(), "URL of the response after redirects", nullable=False),
        _field("site", pa.string(), "site name from the site list", nullable=False),
        _field("crawl", pa.string(), "crawl id", nullable=False),
        _field("fetched_at", _TIME, "when the response arrived (UTC)", nullable=False),
        _field("status", pa.int16(), "HTTP status", nullable=False),
    ]


def _provenance() -> list[pa.Field]:
    """Where the page is in a web archive: the WARC it was ingested from (`newscrawl ingest`)
    or written to (`newscrawl crawl --warc`); null otherwise."""
    return [
        _field("warc_file", pa.string(), "WARC file holding the response record"),
        _field("warc_offset", pa.int64(), "offset of the record (its gzip member) in the file"),
        _field("warc_record_id", pa.string(), "WARC-Record-ID of the response record"),
        _field("warc_date", _TIME, "WARC-Date: when the response was captured (UTC)"),
    ]


ARTICLES_SCHEMA = pa.schema(
    [
        *_common(),
        _field(
            "is_article",
            pa.bool_(),
            "an article page (not an index, tag or home page)",
            nullable=False,
        ),
        _field("article_reason", pa.string(), "the evidence behind is_article"),
        _field(
            "page_type",
            pa.string(),
            "kind of page: article, listing, forum, product, collection, service or "
            "documentation (null when the extractor does not tell)",
        ),
        _field("title", pa.string(), "article title"),
        _field("text", pa.string(), "main text, one paragraph a line"),
        _field(
            "markdown",
            pa.string(),
            "the same text as Markdown: headings, lists, tables, code blocks, quotes, emphasis "
            "(NEWSCRAWL_MARKDOWN; null when off)",
        ),
        _field(
            "comments",
            pa.string(),
            "the page's comment thread, one block a line, never part of `text`; empty when the "
            "page has none (NEWSCRAWL_COMMENTS; null when off)",
        ),
        _field(
            "extractor",
            pa.string(),
            "extractor that produced `text` (learned+guard: the learned one, its recall guard "
            "added text; its key in `texts` is learned)",
        ),
        _field(
            "stage",
            pa.string(),
            "site: text cut by the site pass (the site's template removed); page: page-level "
            "text (the site had too few pages, or the site pass was off)",
        ),
        _field(
            "texts",
            pa.map_(pa.string(), pa.string()),
            "text of every configured extractor (NEWSCRAWL_KEEP_ALL_TEXTS)",
        ),
        _field("language", pa.string(), "primary language subtag (html lang, headers, meta)"),
        _field("encoding", pa.string(), "charset the body was decoded with (Python codec name)"),
        _field(
            "encoding_source",
            pa.string(),
            "what decided `encoding`: bom, declared (header or meta), detected, default",
        ),
        _field("published", _TIME, "publication time (meta, JSON-LD, <time>, URL date)"),
        _field("author", pa.string(), "author from meta or JSON-LD"),
        _field("content_hash", pa.string(), "blake2b-128 hex of `text`"),
        _field("error", pa.string(), "why extraction failed, when it did"),
        *_provenance(),
    ],
    metadata={"dataset": "newscrawl articles", "version": "1"},
)

PAGES_SCHEMA = pa.schema(
    [
        *_common(),
        _field("content_type", pa.string(), "Content-Type header"),
        _field("headers", pa.map_(pa.string(), pa.string()), "response headers that matter"),
        _field("html", pa.binary(), "raw response body, bytes as served", nullable=False),
        _field(
            "node_hashes",
            pa.binary(),
            "the page's node hashes as the site pass counts them (null: not stored)",
        ),
        *_provenance(),
    ],
    metadata={"dataset": "newscrawl pages", "version": "1"},
)

# `versions` and `duplicates`: rows of pages already in `articles` (from an earlier crawl of the
# same folder) - a changed version of a stored page, or the same article under another URL -
# so `articles` holds each article once; the three columns name the stored row.
REPEATS_SCHEMA = pa.schema(
    [
        *ARTICLES_SCHEMA,
        _field("repeat_of", pa.string(), "final_url of the stored row this page repeats"),
        _field("repeat_crawl", pa.string(), "crawl that wrote the stored row"),
        _field(
            "repeat_reason",
            pa.string(),
            "changed (a new version of the page), canonical (its canonical link names a stored "
            "article), content_hash (the same text as a stored article)",
        ),
    ],
    metadata={"dataset": "newscrawl article versions and duplicates", "version": "1"},
)
