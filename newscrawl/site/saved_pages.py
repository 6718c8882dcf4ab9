"""Saved pages extracted site by site, as a crawl extracts them: `newscrawl extract` and
`newscrawl reextract` share it.

A site's pages (`Item`s of one site) go through the crawl's site pass (`site_pass_records`:
the site's template learnt once from its pages, each page extracted with it, then the site's
boilerplate slots cut out, `newscrawl.site.slot_cut`), or, without the pass, are extracted
page by page with the site's template handed to extractors that read one. A page that cannot
be read or parsed gets a record that says why; nothing else about it stops the site.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from newscrawl.extractors import Extraction, Extractor
from newscrawl.extractors.extractor_base import error_text
from newscrawl.extractors.markdown import MarkdownOptions, selection_pieces, with_markdown
from newscrawl.html.dom import Dom
from newscrawl.html.gcpause import paused_gc
from newscrawl.html.parse import MAX_PAGE_BYTES
from newscrawl.html.tree import size_error
from newscrawl.site.site_context import SiteContext, extract_in_site, learn_site, site_methods
from newscrawl.site.site_template import MAX_TEMPLATE_PAGES
from newscrawl.site.slot_cut import SitePassConfig, SitePassRun, site_pass
from newscrawl.template.sitelevel import KeptDoms, RawPage

__all__ = [
    "PLAIN",
    "Item",
    "RecordFields",
    "extract_page",
    "page_fields",
    "page_metadata",
    "pass_records",
    "raw_pages",
    "read_page",
    "read_stdin",
    "site_pass_records",
    "site_records",
]


class Item(NamedTuple):
    """One input: its label (path, or "-"), its bytes when already read (stdin) else None, the
    URL a meta.jsonl gives it, its site ("" for none) and the Content-Type a meta.jsonl gives
    it (its charset decides the decoding, as the response header did in a crawl)."""

    label: str
    data: bytes | None
    url: str | None = None
    site: str = ""
    content_type: str | None = None


@dataclass(frozen=True, slots=True)
class RecordFields:
    """What a record holds beside path, title, text and extractor: `markdown` (rendered with
    these options; None: no Markdown), `metadata` (url, date, author, language, page_type and
    comments: `page_metadata`) and `comments` (the comment thread alone, without the rest of
    the metadata)."""

    markdown: MarkdownOptions | None = None
    metadata: bool = False
    comments: bool = False


PLAIN = RecordFields()


def page_metadata(dom: Dom, extraction: Extraction, url: str | None) -> dict[str, Any]:
    """The page's url, publication date (ISO 8601, or None), author, language, page type
    ("article" or "other", as the crawl's article flag decides) and comment thread
    (`newscrawl.extractors.comments`, "" for none), as the crawl reads them."""
    from newscrawl.extractors.comments import page_comments
    from newscrawl.extractors.page_metadata import (
        json_ld,
        ld_articles,
        page_author,
        page_language,
        publication_time,
    )
    from newscrawl.extractors.pagekind import classify_page, page_signals

    found: dict[str, Any] = {"url": url, "date": None, "author": None, "language": None}
    found["page_type"] = None
    found["comments"] = ""
    try:
        ld = json_ld(dom)
        when, dated = publication_time(dom, url, ld)
        found["date"] = when.isoformat() if when is not None else None
        found["author"] = page_author(dom, ld)
        found["language"] = page_language(dom)
        signals = page_signals(
            dom, url or "", extraction.text, extraction.node_ids, dated, bool(ld_articles(ld))
        )
        found["page_type"] = "article" if classify_page(signals).is_article else "other"
        found["comments"] = page_comments(dom, selection_pieces(dom, extraction)[0])
    except Exception:  # metadata is a bonus: a page keeps its text whatever it holds
        pass
    return found


def page_fields(
    dom: Dom, extraction: Extraction, url: str | None, fields: RecordFields
) -> dict[str, Any] | None:
    """What `fields` asks of the page beside its text: its `page_metadata`, or its comment
    thread alone; None when it asks for neither."""
    if fields.metadata:
        return page_metadata(dom, extraction, url)
    if not fields.comments:
        return None
    from newscrawl.extractors.comments import page_comments

    try:
        return {"comments": page_comments(dom, selection_pieces(dom, extraction)[0])}
    except Exception:  # a detection bug costs the page its comments, never its text
        return {"comments": ""}


def _fill(
    record: dict[str, Any],
    extraction: Extraction,
    fields: RecordFields,
    metadata: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`record` with the extraction's markdown and the page's metadata or comments, as
    `fields` asks; the comments the site pass settled (`Extraction.comments`) come first."""
    if fields.markdown is not None:
        record["markdown"] = extraction.markdown or ""
    if fields.metadata:
        record.update(metadata or {})
    elif fields.comments:
        record["comments"] = (metadata or {}).get("comments", "")
    if "comments" in record and extraction.comments is not None:
        record["comments"] = extraction.comments
    return record


def extract_page(
    extractor: Extractor,
    label: str,
    data: bytes | None,
    url: str | None = None,
    site: str | None = None,
    content_type: str | None = None,
    context: SiteContext | None = None,
    fields: RecordFields = PLAIN,
) -> dict[str, Any]:
    """One output record: path, title, text, extractor, page_type (None when the extractor
    does not tell), what `fields` adds, and "error" if the page failed.

    `url` and `site` are handed to the parsed page (`Dom.url`, `Dom.site`); `context`, the
    site's template (`learn_site`), to an extractor that reads one."""
    from newscrawl.html.parse import parse_html
    from newscrawl.html.tree import PageError

    record: dict[str, Any] = {"path": label, "title": "", "text": "", "extractor": extractor.name}
    try:
        if data is None:
            data = read_page(label)
        elif len(data) > MAX_PAGE_BYTES:
            raise size_error(MAX_PAGE_BYTES)  # standard input, cut at the limit when read
        dom = parse_html(data, url=url, content_type=content_type, site=site)
        extraction = with_markdown(dom, extract_in_site(extractor, dom, context), fields.markdown)
        metadata = page_fields(dom, extraction, url, fields)
    except PageError as err:
        record["error"] = str(err)
    except OSError as err:
        record["error"] = f"cannot read: {err.strerror or err}"
    except Exception as err:  # an extractor bug: report it for this page, keep going
        record["error"] = f"extractor failed: {error_text(err)}"
    else:
        record["title"] = extraction.title
        record["text"] = extraction.text
        record["extractor"] = extraction.extractor or extractor.name  # a fallback says so
        record["page_type"] = extraction.page_type or None
        _fill(record, extraction, fields, metadata)
    return record


def read_page(path: str, limit: int = MAX_PAGE_BYTES) -> bytes:
    """The bytes of a page file; `PageError` for one over `limit` bytes (nothing read)."""
    size = os.stat(path).st_size
    if size > limit:
        raise size_error(limit, size)
    with open(path, "rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:  # grew since the stat
        raise size_error(limit)
    return data


def read_stdin(limit: int = MAX_PAGE_BYTES) -> bytes:
    """Standard input, read up to one byte over `limit` so memory stays bounded; a longer input
    is refused by `extract_page` with the same size error as a file."""
    return sys.stdin.buffer.read(limit + 1)


def site_records(
    extractor: Extractor,
    items: list[tuple[int, Item]],
    with_pass: bool,
    site_method: str = "sitelevel",
    fields: RecordFields = PLAIN,
) -> list[tuple[int, dict[str, Any]]]:
    """The records of one site's pages (indexes and items, in input order): through the site
    pass when `with_pass` and the pages have a site, else page by page with the site's
    template for an extractor that reads one."""
    with paused_gc():  # one site's pages and Doms at once: no cycles among them (gcpause)
        if with_pass and items and items[0][1].site:
            return site_pass_records(extractor, items, site_method, fields)
        context = _site_context(extractor, [item for _, item in items])
        return [
            (index, extract_page(extractor, *item, context=context, fields=fields))
            for index, item in items
        ]


def _site_context(extractor: Extractor, items: list[Item]) -> SiteContext | None:
    """The template of one site's pages, for an extractor that reads one; None for pages
    without a site or a site with too few pages."""
    methods = site_methods([extractor])
    if not methods or not items or not items[0].site:
        return None
    readable = (raw for _, raw in raw_pages(enumerate(items)))
    return learn_site(list(itertools.islice(readable, MAX_TEMPLATE_PAGES)), methods)


def raw_pages(items: Iterable[tuple[int, Item]]) -> Iterator[tuple[int, RawPage]]:
    """The pages that can be read, with their indexes; the others' own records report them."""
    for index, item in items:
        try:
            data = item.data if item.data is not None else read_page(item.label)
        except (OSError, ValueError):
            continue
        yield index, RawPage(item.url or "", data, item.content_type)


def site_pass_records(
    extractor: Extractor,
    items: list[tuple[int, Item]],
    site_method: str = "sitelevel",
    fields: RecordFields = PLAIN,
) -> list[tuple[int, dict[str, Any]]]:
    """The records of one site's pages after the site pass (`newscrawl.site.slot_cut`):
    page-level for a site under its minimum of pages, and for a page that cannot be read or
    parsed (whose record says why)."""
    by_raw: dict[int, int] = {}
    raws = []
    for index, raw in raw_pages(items):  # a page that cannot be read: extract_page reports it
        by_raw[id(raw)] = index
        raws.append(raw)
    if len(raws) < SitePassConfig().min_pages:
        return [(index, extract_page(extractor, *item, fields=fields)) for index, item in items]
    site = items[0][1].site
    doms = KeptDoms(site)  # one parse a page for the template and the pass
    context = learn_site(raws, site_methods([extractor]), doms.parse)
    metadata: dict[int, dict[str, Any]] = {}

    def extract(raw: RawPage, dom: Dom) -> Extraction:
        extraction = with_markdown(dom, extract_in_site(extractor, dom, context), fields.markdown)
        found = page_fields(dom, extraction, raw.url or None, fields)
        if found is not None:
            metadata[id(raw)] = found
        return extraction

    run = site_pass(
        site,
        raws,
        extract,
        geometry="flow",
        method=site_method,
        parse=doms.take,
        nodes=False,  # no node rows offline: SiteLevel's records would be built for nothing
        markdown=fields.markdown,
    )
    return pass_records(extractor, items, run, by_raw, fields, metadata)


def pass_records(
    extractor: Extractor,
    items: list[tuple[int, Item]],
    run: SitePassRun,
    by_raw: dict[int, int],
    fields: RecordFields = PLAIN,
    metadata: dict[int, dict[str, Any]] | None = None,
) -> list[tuple[int, dict[str, Any]]]:
    """The records of a site's pages from its site pass (`by_raw`: id of each raw page -> its
    index; `metadata`: id of each raw page -> its `page_metadata`, when `fields` asks for
    it); a page the pass did not reach is extracted alone, and its record says why."""
    labels = {index: item.label for index, item in items}
    records: dict[int, dict[str, Any]] = {}
    for outcome in run.outcomes:
        index = by_raw[id(outcome.raw)]
        extraction = outcome.extraction
        record = {
            "path": labels[index],
            "title": extraction.title,
            "text": extraction.text,
            "extractor": extraction.extractor or extractor.name,
            "page_type": extraction.page_type or None,
        }
        records[index] = _fill(record, extraction, fields, (metadata or {}).get(id(outcome.raw)))
    return [
        (
            index,
            records[index] if index in records else extract_page(extractor, *item, fields=fields),
        )
        for index, item in items
    ]
