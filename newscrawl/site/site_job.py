"""The site pass of one site as a pure job: raw pages and settings in, per-page results out.

`SitePasser.run(job)` is what the crawl's site pass computes for a complete site: one parse per
page, the SiteLevel stage (or another site method), the learned extractor with the site's
template (and the extractors after it), the page metadata and article flag, then the site's
template out of each page's text; with the site's pages stored by earlier crawls as context,
and without them when the site was redesigned (`newscrawl.site.carry`). It touches no
crawler, file or signal: the job (`SitePassJob`) and its result (`SitePassResult`) are plain,
picklable data, so the same code runs in a thread of the crawl or in a worker process
(`newscrawl.site.site_pool`), and the crawl process writes the rows from the result,
exactly as it would have from the thread. A job that names a results file gets the pages'
results there instead (`ResultRecords`), each written as soon as it is made, to be read back
one page at a time.

What the crawl records beside the rows comes back in the result too: the errors extraction
met (`extract_budget`, `extract_error`, recorded in the crawl summary), the redesign figures
(stats), and, from a worker process, the log records it emitted.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from newscrawl.crawl.items import PageItem
from newscrawl.extractors.extractor_base import Extraction
from newscrawl.html.dom import Dom
from newscrawl.pipelines.classify import ArticleClassifierPipeline
from newscrawl.pipelines.extraction import ExtractionPipeline, ExtractionSettings, content_hash
from newscrawl.site.carry import is_redesign
from newscrawl.site.site_context import SiteContext, learn_site, site_methods
from newscrawl.site.site_store import (
    NodeRows,
    PageResult,
    PassPage,
    ResultRecords,
    StoredBytes,
    let_go,
    work_item,
)
from newscrawl.site.slot_cut import PageOutcome, SitePassRun, site_pass
from newscrawl.site.stream_pass import count_site_hashes, streamed_site_pass
from newscrawl.template.sitelevel import (
    KeptDoms,
    RawPage,
    SiteLevelRun,
    parse_raw,
    run_sitelevel,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "LabelJob",
    "PageJob",
    "PassSettings",
    "SitePassJob",
    "SitePassResult",
    "SitePasser",
    "apply_outcomes",
    "log_level",
    "own_pages",
    "run_labels",
]

logger = logging.getLogger(__name__)


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
        items = [work_item(page, job.site) for page in job.pages]
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
        """Whether the job's pass runs in two streaming passes (`newscrawl.site.stream_pass`):
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
                extraction = self.extract(item, dom, context)
                if spill is not None:
                    spill[0].add(index_of[id(raw)], PageResult.of(item))
                    let_go(item)
                return extraction

            def final(outcome: PageOutcome) -> None:
                assert spill is not None
                index = index_of[id(outcome.raw)]
                page = spill[0].get(index)
                page.fields.update(_outcome_fields(outcome, page.fields.get("comments")))
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
        apply_outcomes(run, by_raw)
        return run

    def run_page(self, job: PageJob) -> SitePassResult:
        """The page-level extraction and article flag of one page (result `pages[0]`)."""
        item = work_item(job.page, job.site)
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
            return self.extract(by_raw[id(raw)], dom, context)

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
        apply_outcomes(run, by_raw)
        return run

    def extract(self, item: PageItem, dom: Dom, context: SiteContext | None) -> Extraction:
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

    def _context(self, raws: list[RawPage], doms: KeptDoms) -> SiteContext | None:
        """The site's template for the extractors that read one (the learned one), before the
        pass that extracts the pages (which takes the Doms `doms` kept)."""
        methods = site_methods(self.extraction.extractors.values())
        return learn_site(raws, methods, doms.parse) if methods else None


def apply_outcomes(run: SitePassRun, by_raw: dict[int, PageItem]) -> None:
    """The pass's final text of each page onto its item."""
    for outcome in run.outcomes:
        item = by_raw[id(outcome.raw)]
        for name, value in _outcome_fields(outcome, item.comments).items():
            setattr(item, name, value)


def _outcome_fields(outcome: PageOutcome, comments: str | None = None) -> dict[str, Any]:
    """The fields of a page's row the pass's final text sets; `comments`: the page-level
    comments (None: not asked for), which the thread the pass cut out of the text replaces."""
    text = outcome.extraction.text
    fields = {
        "text": text,
        "node_ids": outcome.extraction.node_ids,
        "markdown": outcome.extraction.markdown,
        "stage": outcome.stage,
        "content_hash": content_hash(text),
    }
    if comments is not None and outcome.extraction.comments is not None:
        fields["comments"] = outcome.extraction.comments
    return fields


def run_labels(job: LabelJob) -> SitePassResult:
    """The `nodes` rows of a `LabelJob`'s pages (result `nodes`): SiteLevel, no extraction."""
    pages = StoredBytes().resolved(job.pages)
    raws = [RawPage(page.final_url, page.html, page.content_type or None) for page in pages]
    run = run_sitelevel(job.site, raws, geometry=job.geometry, method=job.method)
    return SitePassResult(ran=True, nodes=run.table(job.crawl))


def own_pages(run: SiteLevelRun, urls: set[str]) -> SiteLevelRun:
    """The SiteLevel run of `urls` only (their node rows; the stored pages' rows are their
    own crawls')."""
    if run.labels is None:
        return run
    keep = [i for i, page in enumerate(run.pages) if page.url in urls]
    pages = [run.pages[i] for i in keep]
    labels = [run.labels[i] for i in keep]
    return SiteLevelRun(run.site, pages, labels, run.errors)
