"""The site pass of one site as a pure job: raw pages and settings in, per-page results out.

`SitePasser.run(job)` is what the crawl's site pass computes for a complete site: one parse per
page, the SiteLevel stage (or another site method), the learned extractor with the site's
template (and the extractors after it), the page metadata and article flag, then the site's
template out of each page's text; with the site's pages stored by earlier crawls as context,
and without them when the site was redesigned (`newscrawl.template.carry`). It touches no
crawler, file or signal: the job (`SitePassJob`) and its result (`SitePassResult`) are plain,
picklable data, so the same code runs in a thread of the crawl or in a worker process
(`newscrawl.pipelines.sitepool`), and the crawl process writes the rows from the result,
exactly as it would have from the thread. A job that names a results file gets the pages'
results there instead (`ResultRecords`), each written as soon as it is made, to be read back
one page at a time.

What the crawl records beside the rows comes back in the result too: the errors extraction
met (`extract_budget`, `extract_error`, recorded in the crawl summary), the redesign figures
(stats), and, from a worker process, the log records it emitted.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import pickle
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

import numpy as np
from newscrawl.pipelines.classify import ArticleClassifierPipeline
from newscrawl.pipelines.extraction import ExtractionPipeline, ExtractionSettings, content_hash

from newscrawl.crawl.items import PageItem
from newscrawl.dom import Dom, PageError
from newscrawl.extractors.base import Extraction
from newscrawl.extractors.context import SiteContext, learn_site, site_methods
from newscrawl.learned.sitetemplate import MAX_TEMPLATE_PAGES, hashes_template, page_hashes
from newscrawl.storage.nodes import nodes_schema, nodes_table
from newscrawl.template.carry import is_redesign
from newscrawl.template.node_summary import SUMMARY_COLUMN, PageHashes, read_summary
from newscrawl.template.records import PageNodes
from newscrawl.template.sitelevel import (
    KeptDoms,
    RawPage,
    SiteLevelRun,
    page_records,
    parse_raw,
    run_sitelevel,
    site_order,
    split_runs,
)
from newscrawl.template.sitepass import (
    PageChoice,
    PageOutcome,
    SitePassRun,
    SiteSlots,
    finish_site_pass,
    page_choice,
    site_pass,
)
from newscrawl.template.streampass import count_site_hashes, streamed_site_pass

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "HashShard",
    "LabelJob",
    "PageJob",
    "PageResult",
    "PassPage",
    "PassSettings",
    "PassShard",
    "ResultRecords",
    "ShardPage",
    "ShardResult",
    "SitePassJob",
    "SitePassResult",
    "SitePasser",
    "finish_shards",
    "hash_shards",
    "let_go",
    "log_level",
    "own_pages",
    "pass_order",
    "pass_page",
    "pass_shards",
    "run_labels",
    "shard_context",
]

logger = logging.getLogger(__name__)
NODE_ROWS_AT_ONCE = 65_536  # node rows the streamed pass holds before it writes them
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # a job's pages need no fetch time


@dataclass(frozen=True, slots=True)
class PassPage:
    """What the site pass reads of one page: its bytes (or where they are stored: row `row`
    of the `pages` file `stored`, `size` bytes, read by the pass when it needs them), where
    they came from, and whether it is an earlier crawl's page (`context`: it shapes the
    template, gets no result)."""

    final_url: str
    html: bytes
    content_type: str = ""
    content_language: str | None = None  # the Content-Language header (page metadata)
    context: bool = False
    stored: str = ""
    row: int = -1
    size: int = 0

    @property
    def nbytes(self) -> int:
        """The page's bytes, held or stored."""
        return self.size if self.stored else len(self.html)


def pass_page(item: PageItem, stored: StoredRef | None = None) -> PassPage:
    """The job's view of a buffered or stored page; with `stored`, its bytes are read from
    there by the pass (the item holds none)."""
    language = item.headers.get("content-language")
    if stored is None:
        return PassPage(item.final_url, item.html, item.content_type, language, item.context)
    path, row, size = stored
    return PassPage(item.final_url, b"", item.content_type, language, item.context, path, row, size)


# Where a stored page's bytes are: (pages file, row, bytes).
StoredRef = tuple[str, int, int]
# The bytes of stored pages a pass keeps read at once (row groups of `pages` files); the row
# group read last is kept whatever its size.
READ_BYTES = 16 << 20


class StoredBytes:
    """The bytes of stored pages (`PassPage.stored`), and the node hashes stored beside them,
    read a row group at a time; the row groups read last are kept while they hold at most
    `budget` bytes (the one read last whatever its size)."""

    def __init__(self, budget: int = READ_BYTES) -> None:
        self.budget = budget
        self._starts: dict[str, list[int]] = {}
        self._columns: dict[str, set[str]] = {}
        self._groups: dict[tuple[str, int, str], list[Any]] = {}
        self._sizes: dict[tuple[str, int, str], int] = {}

    def html(self, page: PassPage) -> bytes:
        """The page's bytes (held, or read from its file)."""
        if not page.stored:
            return page.html
        found = self._value(page, "html")
        return found if isinstance(found, bytes) else b""

    def summary(self, page: PassPage) -> PageHashes | None:
        """The node hashes stored beside the page's bytes; None when there are none (a page
        held, not stored; a file written before they were stored; a page over their bound)."""
        if not page.stored:
            return None
        if SUMMARY_COLUMN not in self._names(page.stored):
            return None
        return read_summary(self._value(page, SUMMARY_COLUMN))

    def _value(self, page: PassPage, column: str) -> Any:
        group, offset = self._locate(page.stored, page.row)
        rows = self._groups.get((page.stored, group, column))
        if rows is None:
            rows = self._read(page.stored, group, column)
        return rows[offset]

    def _names(self, path: str) -> set[str]:
        names = self._columns.get(path)
        if names is None:
            import pyarrow.parquet as pq

            names = set(pq.read_schema(path).names)
            self._columns[path] = names
        return names

    def _locate(self, path: str, row: int) -> tuple[int, int]:
        starts = self._starts.get(path)
        if starts is None:
            import pyarrow.parquet as pq

            meta = pq.read_metadata(path)
            starts, total = [], 0
            for group in range(meta.num_row_groups):
                starts.append(total)
                total += meta.row_group(group).num_rows
            starts.append(total)
            self._starts[path] = starts
        if not 0 <= row < starts[-1]:
            raise PageError(f"row {row} not in {path}")
        import bisect

        group = bisect.bisect_right(starts, row) - 1
        return group, row - starts[group]

    def _read(self, path: str, group: int, column: str) -> list[Any]:
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as source:
            rows = source.read_row_group(group, columns=[column]).column(0).to_pylist()
        size = sum(len(found) for found in rows if found)
        while self._groups and sum(self._sizes.values()) + size > self.budget:
            oldest = next(iter(self._groups))
            del self._groups[oldest], self._sizes[oldest]
        self._groups[(path, group, column)] = rows
        self._sizes[(path, group, column)] = size
        return rows

    def resolved(self, pages: tuple[PassPage, ...]) -> tuple[PassPage, ...]:
        """The pages with their bytes held (what the passes that hold every page read)."""
        return tuple(
            dataclasses.replace(page, html=self.html(page), stored="", row=-1, size=0)
            if page.stored
            else page
            for page in pages
        )


@dataclass(frozen=True, slots=True)
class _SiteJob:
    """What a job over a whole site carries: its pages, the crawl whose `nodes` rows it makes,
    the node boxes' provider and the site method. `attempt` counts the tries of the same job
    (a worker that died is tried once more)."""

    site: str
    crawl: str
    pages: tuple[PassPage, ...]
    geometry: str = "flow"
    method: str = "sitelevel"
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class SitePassJob(_SiteJob):
    """One site's pass (its pages: the crawl's own, then earlier crawls' as context).
    `staging`: a folder where the pass writes the site's `nodes` rows as it makes them (a
    file the result names, `nodes_file`); empty: they come back in the result (`nodes`).
    `results`: a file the pass writes each page's result to (`SitePassResult.results_file`,
    read back one page at a time); empty: they come back in the result (`pages`). The
    caller names it, so it can remove it whatever becomes of the pass."""

    staging: str = ""
    results: str = ""


@dataclass(frozen=True, slots=True)
class PageJob:
    """One page's page-level extraction and article flag, for a crawl without the site pass
    (NEWSCRAWL_SITELEVEL off); `attempt` as in `SitePassJob`."""

    page: PassPage
    site: str
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class LabelJob(_SiteJob):
    """SiteLevel alone (node records and labels, no extraction) for a site whose articles a
    stopped crawl wrote but whose nodes it did not."""


@dataclass(frozen=True, slots=True)
class HashShard:
    """Part of a large site's pass split over the workers (`newscrawl.pipelines.sitepool`):
    the node hashes of some of its pages, for the site's template."""

    site: str
    pages: tuple[PassPage, ...]
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class PassShard:
    """Part of a large site's pass: some of its pages (a run of SiteLevel's order) parsed,
    recorded, extracted with the site's template (`context`), flagged and read for the slot
    decisions, which wait for every page (`finish_shards`)."""

    site: str
    pages: tuple[PassPage, ...]
    context: SiteContext | None
    geometry: str = "flow"
    attempt: int = 1


@dataclass(frozen=True, slots=True)
class PassSettings:
    """What every job of a crawl shares, built once per worker process: the extractor chain."""

    extraction: ExtractionSettings
    log_level: int = logging.INFO


def log_level(value: Any) -> int:
    """A LOG_LEVEL setting as a number (INFO when unset or unknown), for `PassSettings`."""
    if isinstance(value, int):
        return value
    level = logging.getLevelName(str(value or "INFO").upper())
    return level if isinstance(level, int) else logging.INFO


# the PageItem fields the pass fills, copied back onto the crawl's items
_FILLED = (
    "title",
    "text",
    "markdown",
    "comments",
    "extractor",
    "stage",
    "texts",
    "node_ids",
    "is_article",
    "article_reason",
    "page_type",
    "language",
    "encoding",
    "encoding_source",
    "published",
    "author",
    "content_hash",
    "error",
)


@dataclass(slots=True)
class PageResult:
    """One page after the pass: the article row's fields (`_FILLED`, by name) and the
    evidence the article flag read (`extras`)."""

    fields: dict[str, Any]
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, item: PageItem) -> PageResult:
        return cls({name: getattr(item, name) for name in _FILLED}, dict(item.extras))

    def apply(self, item: PageItem) -> None:
        for name, value in self.fields.items():
            setattr(item, name, value)
        item.extras.update(self.extras)


@dataclass(slots=True)
class SitePassResult:
    """A site's pass: per page of the job (by its index; a page the pass did not reach - it
    did not parse - has none), whether the pass ran (False: it failed, its pages go page by
    page) and learnt a template, the `nodes` rows of the crawl's own pages, the redesign
    figures of a site with context pages, and what to record and log in the crawl."""

    pages: dict[int, PageResult] = field(default_factory=dict)
    ran: bool = False
    template: bool = False
    nodes: pa.Table | None = None
    errors: int = 0  # passes that failed (the redesigned site's pass is a second one)
    unseen_pct: int | None = None  # share of the new pages' template never seen before
    redesigned: bool = False
    recorded: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, url, detail)
    logs: list[tuple[str, int, str]] = field(default_factory=list)  # (logger, level, message)
    peak_rss_mb: float = 0.0  # the worker process's peak memory so far (0: in a thread)
    split: int = 0  # the workers the pass was split over (0: it ran whole)
    nodes_file: str = ""  # the `nodes` rows in a staging file instead of `nodes`
    held_elements: int = 0  # the most elements of parsed pages the pass held at once
    results_file: str = ""  # the pages' results in this file instead of `pages` ...
    result_at: dict[int, int] = field(default_factory=dict)  # ... each page's at this offset


@dataclass(slots=True)
class ShardPage:
    """One page of a `PassShard`: its node records, what the slot decisions read, its row."""

    records: PageNodes
    choice: PageChoice
    result: PageResult


@dataclass(slots=True)
class ShardResult:
    """A shard's pages in its order (None: the page did not parse; a `HashShard`'s result
    has `hashes` instead), and what the crawl records and logs, as in `SitePassResult`."""

    pages: list[ShardPage | None] = field(default_factory=list)
    hashes: list[np.ndarray | None] = field(default_factory=list)
    recorded: list[tuple[str, str, str]] = field(default_factory=list)
    logs: list[tuple[str, int, str]] = field(default_factory=list)
    peak_rss_mb: float = 0.0


class SitePasser:
    """Runs site pass jobs with one extractor chain (built once: per worker process, or the
    crawl's own for the pass in a thread)."""

    def __init__(self, extraction: ExtractionPipeline) -> None:
        assert extraction.crawler is None, "records must come back in the result"
        self.extraction = extraction
        self.classifier = ArticleClassifierPipeline()

    @classmethod
    def from_settings(cls, settings: PassSettings) -> SitePasser:
        return cls(settings.extraction.build())

    def run(self, job: SitePassJob) -> SitePassResult:
        result = SitePassResult()
        streamed = self._streams(job)
        stored = StoredBytes()
        if not streamed:  # the whole pass holds every page: their bytes too
            job = dataclasses.replace(job, pages=stored.resolved(job.pages))
        items = [_work_item(page, job.site) for page in job.pages]
        self.extraction.recorded.clear()
        records = ResultRecords.to_file(job.results) if job.results else None
        try:
            if streamed:
                run = self._streamed_pass(job, items, result, stored, records)
            else:
                run = self._carried_pass(job, items, result)
            own = {i: item for i, item in enumerate(items) if not item.context}
            if records is None:
                result.pages = {i: PageResult.of(item) for i, item in own.items() if item.stage}
            elif not streamed:  # the streamed pass wrote each page's as it was made
                for index, item in own.items():
                    if item.stage:
                        records.add(index, PageResult.of(item))
        finally:
            result.recorded = list(self.extraction.recorded)
            self.extraction.recorded.clear()
            if records is not None:
                records.close()
        if records is not None:
            result.results_file, result.result_at = job.results, records.at
        if run is not None:
            result.ran, result.template = True, run.template is not None
            if not streamed:
                urls = {item.final_url for item in own.values()}
                result.nodes = own_pages(run.sitelevel, urls).table(job.crawl)
        return result

    def _streams(self, job: SitePassJob) -> bool:
        """Whether the job's pass runs in two streaming passes (`newscrawl.template.streampass`):
        SiteLevel as the site method, no earlier crawl's pages, extractors that read
        SiteLevel's template at most."""
        methods = site_methods(self.extraction.extractors.values())
        own = not any(page.context for page in job.pages)
        return job.method == "sitelevel" and own and methods <= {"sitelevel"}

    def _streamed_pass(
        self,
        job: SitePassJob,
        items: list[PageItem],
        result: SitePassResult,
        stored: StoredBytes,
        records: ResultRecords | None = None,
    ) -> SitePassRun | None:
        """The site pass in two streaming passes, its `nodes` rows written as they are made
        (to `result.nodes_file` when the job names a staging folder, else into
        `result.nodes`), stored pages' bytes read when a page is parsed; None when it failed
        (pages go page-level). With `records`, each page's result goes there (its final
        text as soon as it is made; what extraction gave, when the pass failed) and the
        items keep none of it."""
        if records is None:
            return self._streamed_run(job, items, result, stored, None)
        with ResultRecords.temporary(job.staging) as extracted:
            run = self._streamed_run(job, items, result, stored, (extracted, records))
            if run is None:  # the pages extracted so far, as the items would hold them
                records.clear()
            for index in sorted(extracted.at.keys() - records.at.keys()):
                page = extracted.get(index)
                if page.fields["stage"]:
                    records.add(index, page)
        return run

    def _streamed_run(
        self,
        job: SitePassJob,
        items: list[PageItem],
        result: SitePassResult,
        stored: StoredBytes,
        spill: tuple[ResultRecords, ResultRecords] | None,
    ) -> SitePassRun | None:
        """`_streamed_pass`; with `spill` (extracted, final), each page's result goes to
        `extracted` once it is extracted, and with its final text to `final`."""
        by_raw: dict[int, PageItem] = {}
        page_of: dict[int, PassPage] = {}
        index_of: dict[int, int] = {}
        raws = []
        for index, (item, page) in enumerate(zip(items, job.pages, strict=True)):
            raw = RawPage(item.final_url, item.html, item.content_type or None)
            by_raw[id(raw)] = item
            page_of[id(raw)] = page
            index_of[id(raw)] = index
            raws.append(raw)

        def full(raw: RawPage) -> RawPage:
            page = page_of[id(raw)]
            return RawPage(raw.url, stored.html(page), raw.content_type) if page.stored else raw

        def parse(raw: RawPage) -> Dom:
            return parse_raw(full(raw), job.site)

        doms = KeptDoms(job.site, parser=parse, size=lambda raw: page_of[id(raw)].nbytes)
        methods = site_methods(self.extraction.extractors.values())

        def held(elements: int) -> None:
            result.held_elements = max(result.held_elements, doms.nodes + elements)

        try:
            learned = "sitelevel" in methods
            hashes = count_site_hashes(
                raws,
                doms.parse,
                learned,
                spill=job.staging,
                stored=lambda raw: stored.summary(page_of[id(raw)]),
            )
            context = None
            if hashes.learned is not None:
                context = SiteContext({"sitelevel": hashes.learned})

            def extract(raw: RawPage, dom: Dom) -> Extraction:
                item = by_raw[id(raw)]
                extraction = self._extract(item, dom, context)
                if spill is not None:
                    spill[0].add(index_of[id(raw)], PageResult.of(item))
                    let_go(item)
                return extraction

            def final(outcome: PageOutcome) -> None:
                assert spill is not None
                index = index_of[id(outcome.raw)]
                page = spill[0].get(index)
                page.fields.update(_outcome_fields(outcome))
                spill[1].add(index, page)

            with NodeRows(job.crawl, job.site, hashes.kind, job.staging) as rows:
                run = streamed_site_pass(
                    job.site, raws, extract, hashes, doms.take, rows.add,
                    geometry=job.geometry, held=held, full=full, spill=job.staging,
                    markdown=self.extraction.markdown,
                    outcome=final if spill is not None else None,
                )  # fmt: skip
        except Exception as err:  # the site's pages are still written, page by page
            logger.warning("site pass of %s failed: %s", job.site, err)
            result.errors += 1
            return None
        result.nodes, result.nodes_file = rows.table, rows.path
        _apply_outcomes(run, by_raw)
        return run

    def run_page(self, job: PageJob) -> SitePassResult:
        """The page-level extraction and article flag of one page (result `pages[0]`)."""
        item = _work_item(job.page, job.site)
        self.extraction.recorded.clear()
        try:
            self.extraction.fill(item)
            if item.dom is not None:
                self.classifier.classify(item)
        finally:
            item.dom = None
            recorded = list(self.extraction.recorded)
            self.extraction.recorded.clear()
        return SitePassResult(pages={0: PageResult.of(item)}, recorded=recorded)

    def _carried_pass(
        self, job: SitePassJob, items: list[PageItem], result: SitePassResult
    ) -> SitePassRun | None:
        """The site pass with the site's stored pages; without them when the site was
        redesigned (the new pages' template is not the stored pages')."""
        run = self._pass(job, items, result)
        context = {item.final_url for item in items if item.context}
        if run is None or not context:
            return run
        new = [page for page in run.sitelevel.pages if page.url not in context]
        old = [page for page in run.sitelevel.pages if page.url in context]
        redesigned, share = is_redesign(new, old)
        result.unseen_pct = round(100 * share)
        if not redesigned:
            return run
        logger.warning(
            "site %s was redesigned: %.0f%% of its new pages' template was never seen on its "
            "%d stored pages; its site pass uses the new pages only",
            job.site,
            100 * share,
            len(old),
        )
        result.redesigned = True
        return self._pass(job, [item for item in items if not item.context], result)

    def _pass(
        self, job: SitePassJob, items: list[PageItem], result: SitePassResult
    ) -> SitePassRun | None:
        """The site pass; None when it failed (pages go page-level)."""
        by_raw: dict[int, PageItem] = {}
        raws = []
        for item in items:
            raw = RawPage(item.final_url, item.html, item.content_type or None)
            by_raw[id(raw)] = item
            raws.append(raw)
        doms = KeptDoms(job.site)  # one parse a page for the template and the pass
        context = self._context(raws, doms)

        def extract(raw: RawPage, dom: Dom) -> Extraction:
            return self._extract(by_raw[id(raw)], dom, context)

        try:
            run = site_pass(
                job.site,
                raws,
                extract,
                geometry=job.geometry,
                method=job.method,
                parse=doms.take,
                markdown=self.extraction.markdown,
            )
        except Exception as err:  # the site's pages are still written, page by page
            logger.warning("site pass of %s failed: %s", job.site, err)
            result.errors += 1
            return None
        _apply_outcomes(run, by_raw)
        return run

    def _extract(self, item: PageItem, dom: Dom, context: SiteContext | None) -> Extraction:
        """One page's extraction (with its site's template) and article flag, on `item`."""
        item.dom = dom
        try:
            self.extraction.fill(item, context)
            self.classifier.classify(item)
        finally:
            item.dom = None
        return Extraction(
            item.title,
            item.text,
            item.node_ids,
            item.extractor,
            markdown=item.markdown,
            page_type=item.page_type,
        )

    def hash_shard(self, shard: HashShard) -> ShardResult:
        """The node hashes of the shard's pages (None for a page that does not parse)."""

        def parse(raw: RawPage) -> Dom:
            return parse_raw(raw, shard.site)

        pages = StoredBytes().resolved(shard.pages)
        return ShardResult(hashes=[page_hashes(_raw(page), parse) for page in pages])

    def pass_shard(self, shard: PassShard) -> ShardResult:
        """What the site pass computes page by page, for the shard's pages."""
        result = ShardResult()
        slots = SiteSlots()
        self.extraction.recorded.clear()
        try:
            for page in StoredBytes().resolved(shard.pages):
                raw = _raw(page)
                try:
                    dom = parse_raw(raw, shard.site)
                except PageError:
                    result.pages.append(None)
                    continue
                records = page_records(raw, dom, shard.geometry)
                item = _work_item(page, shard.site)
                extraction = self._extract(item, dom, shard.context)
                choice = page_choice(dom, extraction, slots, self.extraction.markdown)
                result.pages.append(ShardPage(records, choice, PageResult.of(item)))
        finally:
            result.recorded = list(self.extraction.recorded)
            self.extraction.recorded.clear()
        return result

    def _context(self, raws: list[RawPage], doms: KeptDoms) -> SiteContext | None:
        """The site's template for the extractors that read one (the learned one), before the
        pass that extracts the pages (which takes the Doms `doms` kept)."""
        methods = site_methods(self.extraction.extractors.values())
        return learn_site(raws, methods, doms.parse) if methods else None


class NodeRows:
    """A site's `nodes` rows as the streamed pass makes them, page by page: written to a
    staging file in `staging` (`path`) a row group at a time, or, without a folder, kept
    for one table (`table`). No file is left behind when the pass fails."""

    def __init__(self, crawl: str, site: str, kind: str, staging: str = "") -> None:
        self.crawl, self.site, self.kind, self.staging = crawl, site, kind, staging
        self.path = ""
        self.table: pa.Table | None = None
        self.rows = 0
        self._held: list[pa.Table] = []
        self._held_rows = 0
        self._writer: Any = None

    def __enter__(self) -> NodeRows:
        return self

    def add(self, page: int, records: PageNodes, labels: np.ndarray) -> None:
        """One page's rows (`page`: its number in the site)."""
        table = nodes_table([records], [labels], self.crawl, self.site, self.kind, page)
        self._held.append(table)
        self._held_rows += table.num_rows
        self.rows += table.num_rows
        if self.staging and self._held_rows >= NODE_ROWS_AT_ONCE:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._held:
            return
        if self._writer is None:
            import os
            import tempfile

            os.makedirs(self.staging, exist_ok=True)
            handle, self.path = tempfile.mkstemp(".parquet", "nodes-", self.staging)
            os.close(handle)
            self._writer = pq.ParquetWriter(self.path, nodes_schema(), compression="zstd")
        self._writer.write_table(pa.concat_tables(self._held), row_group_size=NODE_ROWS_AT_ONCE)
        self._held, self._held_rows = [], 0

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        import pyarrow as pa

        if exc_type is not None:
            if self._writer is not None:
                self._writer.close()
            if self.path:
                import os

                os.unlink(self.path)
            self.path = ""
            return
        if self.staging:
            self._flush()
            if self._writer is not None:
                self._writer.close()
        elif self._held:
            self.table = pa.concat_tables(self._held)
        self._held = []


def _raw(page: PassPage) -> RawPage:
    return RawPage(page.final_url, page.html, page.content_type or None)


def _apply_outcomes(run: SitePassRun, by_raw: dict[int, PageItem]) -> None:
    """The pass's final text of each page onto its item."""
    for outcome in run.outcomes:
        item = by_raw[id(outcome.raw)]
        for name, value in _outcome_fields(outcome).items():
            setattr(item, name, value)


def _outcome_fields(outcome: PageOutcome) -> dict[str, Any]:
    """The fields of a page's row the pass's final text sets."""
    text = outcome.extraction.text
    return {
        "text": text,
        "node_ids": outcome.extraction.node_ids,
        "markdown": outcome.extraction.markdown,
        "stage": outcome.stage,
        "content_hash": content_hash(text),
    }


_BLANK = PageItem(url="", final_url="", site="", crawl="", fetched_at=_EPOCH, status=0)


def let_go(item: PageItem) -> None:
    """The item's filled fields back to a new item's (their values are kept elsewhere)."""
    for name in _FILLED:
        setattr(item, name, copy.copy(getattr(_BLANK, name)))
    item.extras = {}


class ResultRecords:
    """Pages' results (`PageResult`) written to a file one after the other as they are made,
    by their index in the job (`at`: index -> offset), and read back one at a time."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.at: dict[int, int] = {}

    @classmethod
    def to_file(cls, path: str) -> ResultRecords:
        """Records in a new file at `path` (its folder made when missing), left in place."""
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        return cls(open(path, "w+b"))

    @classmethod
    def temporary(cls, folder: str = "") -> ResultRecords:
        """Records in an unnamed temporary file (in `folder`, default the system's), gone
        once closed."""
        if folder:
            os.makedirs(folder, exist_ok=True)
        return cls(tempfile.TemporaryFile(dir=folder or None))

    def __enter__(self) -> ResultRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, index: int, page: PageResult) -> None:
        self.file.seek(0, os.SEEK_END)
        self.at[index] = self.file.tell()
        pickle.dump(page, self.file, pickle.HIGHEST_PROTOCOL)

    def get(self, index: int) -> PageResult:
        """The result of page `index` (KeyError: none written)."""
        self.file.seek(self.at[index])
        page = pickle.load(self.file)
        if not isinstance(page, PageResult):
            raise TypeError(f"not a page's result at offset {self.at[index]}")
        return page

    def clear(self) -> None:
        """Forget every record written."""
        self.file.seek(0)
        self.file.truncate()
        self.at = {}

    def close(self) -> None:
        self.file.close()


def pass_order(job: SitePassJob) -> list[int]:
    """The indices of the job's pages in the order SiteLevel reads them (`site_order`)."""
    raws = [_raw(page) for page in job.pages]
    position = {id(raw): index for index, raw in enumerate(raws)}
    return [position[id(raw)] for raw in site_order(raws)]


def _split(pages: list[PassPage], parts: int) -> list[tuple[PassPage, ...]]:
    """`pages` in `parts` runs of about equal bytes, in order (none empty)."""
    return [tuple(run) for run in split_runs(pages, parts, lambda page: page.nbytes)]


def hash_shards(job: SitePassJob, parts: int) -> list[HashShard]:
    """The job's pages the site's template is learnt from (the first `MAX_TEMPLATE_PAGES`, in
    job order), as `parts` hash shards."""
    pages = list(job.pages[:MAX_TEMPLATE_PAGES])
    return [HashShard(job.site, run, job.attempt) for run in _split(pages, parts)]


def shard_context(shards: list[ShardResult]) -> SiteContext | None:
    """The site's template from its hash shards' results (in the shards' order): what
    `learn_site` learns for the learned extractor, from hashes computed apart."""
    template = hashes_template([found for shard in shards for found in shard.hashes])
    return SiteContext({"sitelevel": template}) if template is not None else None


def pass_shards(job: SitePassJob, parts: int, context: SiteContext | None) -> list[PassShard]:
    """The job's pages, in SiteLevel's order, as `parts` pass shards."""
    ordered = [job.pages[i] for i in pass_order(job)]
    return [
        PassShard(job.site, run, context, job.geometry, job.attempt)
        for run in _split(ordered, parts)
    ]


def finish_shards(job: SitePassJob, shards: list[ShardResult]) -> SitePassResult:
    """The site pass of a job from its pass shards' results (`pass_shards` order): SiteLevel's
    labels, the slot decisions and each page's final text, as `SitePasser.run` gives them
    from one process. Runs in the crawl process: no parsing, no extraction."""
    items = [_work_item(page, job.site) for page in job.pages]
    raws = [_raw(page) for page in job.pages]
    by_raw = {id(raw): item for raw, item in zip(raws, items, strict=True)}
    result = SitePassResult(ran=True, split=len(shards))
    sitelevel = SiteLevelRun(job.site)
    seen: list[RawPage] = []
    choices: list[PageChoice] = []
    pages = [page for shard in shards for page in shard.pages]
    for index, page in zip(pass_order(job), pages, strict=True):
        if page is None:
            sitelevel.errors += 1
            continue
        page.result.apply(items[index])
        sitelevel.pages.append(page.records)
        seen.append(raws[index])
        choices.append(page.choice)
    sitelevel.label()
    run = finish_site_pass(sitelevel, seen, choices)
    _apply_outcomes(run, by_raw)
    for shard in shards:
        result.recorded.extend(shard.recorded)
        result.logs.extend(shard.logs)
        result.peak_rss_mb = max(result.peak_rss_mb, shard.peak_rss_mb)
    result.pages = {i: PageResult.of(item) for i, item in enumerate(items) if item.stage}
    result.template = run.template is not None
    result.nodes = run.sitelevel.table(job.crawl)
    return result


def run_labels(job: LabelJob) -> SitePassResult:
    """The `nodes` rows of a `LabelJob`'s pages (result `nodes`): SiteLevel, no extraction."""
    pages = StoredBytes().resolved(job.pages)
    raws = [RawPage(page.final_url, page.html, page.content_type or None) for page in pages]
    run = run_sitelevel(job.site, raws, geometry=job.geometry, method=job.method)
    return SitePassResult(ran=True, nodes=run.table(job.crawl))


def _work_item(page: PassPage, site: str) -> PageItem:
    """A PageItem for the pass to fill (the fields extraction and the flag read)."""
    headers = {"content-language": page.content_language} if page.content_language else {}
    return PageItem(
        url=page.final_url,
        final_url=page.final_url,
        site=site,
        crawl="",
        fetched_at=_EPOCH,
        status=200,
        content_type=page.content_type,
        headers=headers,
        html=page.html,
        context=page.context,
    )


def own_pages(run: SiteLevelRun, urls: set[str]) -> SiteLevelRun:
    """The SiteLevel run of `urls` only (their node rows; the stored pages' rows are their
    own crawls')."""
    if run.labels is None:
        return run
    keep = [i for i, page in enumerate(run.pages) if page.url in urls]
    pages = [run.pages[i] for i in keep]
    labels = [run.labels[i] for i in keep]
    return SiteLevelRun(run.site, pages, labels, run.errors)
