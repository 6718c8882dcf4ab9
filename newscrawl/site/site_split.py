"""One site's pass split over worker processes, with the rows of the whole pass.

Used by the crawl's site pass workers (`newscrawl.site.site_pool.SitePassPool.run_split`,
for the crawl and an ingest) and by `newscrawl extract` (one large site over --jobs of the same
workers).
Three steps, each over runs of consecutive pages of about equal bytes (`page_runs`):

1. the site's template, when the extractors read one: the node hashes of its first
   `MAX_TEMPLATE_PAGES` pages computed in parts (`part_hashes`; read where they were stored
   beside the page, `HashShard`), joined in order (`parts_context`);
2. the pages in SiteLevel's order, in parts: each parsed once and handed to the caller's work
   (`part_pages`: extraction with the template, what the slot decisions read, node records);
3. in the calling process, once every part is back: SiteLevel's labels, the slot decisions and
   each page's final text (`finish_site_pass`), from the parts' results in order (`joined`).

The crawl's jobs (`HashShard`, `PassShard`, `finish_shards`) and `newscrawl extract`'s
(`newscrawl.site.saved_jobs`: `SavedHashPart`, `SavedPassPart`) are these steps over their own
pages and extractors.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.html.tree import PageError
from newscrawl.site.page_choice import PageChoice, SiteSlots, page_choice
from newscrawl.site.site_context import SiteContext
from newscrawl.site.site_job import SitePasser, SitePassJob, SitePassResult, apply_outcomes
from newscrawl.site.site_store import (
    PageResult,
    PassPage,
    StoredBytes,
    raw_of,
    work_item,
)
from newscrawl.site.site_template import MAX_TEMPLATE_PAGES, hashes_template, page_hashes
from newscrawl.site.slot_cut import finish_site_pass
from newscrawl.template.node_records import PageNodes
from newscrawl.template.sitelevel import (
    RawPage,
    SiteLevelRun,
    page_records,
    parse_raw,
    site_order,
    split_runs,
)

__all__ = [
    "HashShard",
    "PassShard",
    "ShardPage",
    "ShardResult",
    "finish_shards",
    "hash_shard",
    "hash_shards",
    "joined",
    "page_runs",
    "part_hashes",
    "part_pages",
    "parts_context",
    "pass_order",
    "pass_shard",
    "pass_shards",
    "shard_context",
    "template_pages",
]

Page = TypeVar("Page")
Found = TypeVar("Found")


# -- the steps, whatever the pages and the extractors ---------------------------------------------


def page_runs(
    pages: Sequence[Page], parts: int, size: Callable[[Page], int]
) -> list[tuple[Page, ...]]:
    """`pages` in `parts` runs of consecutive pages of about equal `size` (none empty)."""
    return [tuple(run) for run in split_runs(list(pages), parts, size)]


def template_pages(pages: Sequence[Page]) -> list[Page]:
    """The pages the site's template is learnt from (`learn_site` reads these)."""
    return list(pages[:MAX_TEMPLATE_PAGES])


def part_hashes(raws: Iterable[RawPage], site: str) -> list[np.ndarray | None]:
    """The node hashes of a part's pages (None for a page that does not parse)."""
    parse = functools.partial(parse_raw, site=site)
    return [page_hashes(raw, parse) for raw in raws]


def parts_context(parts: Iterable[Sequence[np.ndarray | None]]) -> SiteContext | None:
    """The site's template from its parts' hashes (in the parts' order): what `learn_site`
    learns for the learned extractor, from hashes computed apart."""
    template = hashes_template([found for part in parts for found in part])
    return SiteContext({"sitelevel": template}) if template is not None else None


def part_pages(
    raws: Sequence[RawPage], site: str, work: Callable[[int, RawPage, Dom], Found]
) -> list[Found | None]:
    """`work(index in the part, page, its tree)` of each of a part's pages, each parsed once
    (None for a page that does not parse)."""
    found: list[Found | None] = []
    for index, raw in enumerate(raws):
        try:
            dom = parse_raw(raw, site)
        except PageError:
            found.append(None)
            continue
        found.append(work(index, raw, dom))
        del dom
    return found


def joined(
    ordered: Sequence[Page], found: Iterable[Found | None]
) -> tuple[list[Page], list[Found], int]:
    """The pages in SiteLevel's order that parsed, their parts' results in the same order,
    and how many did not parse."""
    seen: list[Page] = []
    kept: list[Found] = []
    errors = 0
    for page, result in zip(ordered, found, strict=True):
        if result is None:
            errors += 1
            continue
        seen.append(page)
        kept.append(result)
    return seen, kept, errors


# -- the crawl's jobs --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HashShard:
    """Part of a large site's pass split over the workers (`newscrawl.site.site_pool`):
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


def hash_shard(shard: HashShard) -> ShardResult:
    """The node hashes of the shard's pages (None for a page that does not parse): those
    stored beside a stored page, else from its parse."""
    stored = StoredBytes()
    found: list[np.ndarray | None] = []
    for page in shard.pages:
        summary = stored.summary(page)
        if summary is not None:
            found.append(summary.hashes)
            continue
        raw = RawPage(page.final_url, stored.html(page), page.content_type or None)
        found.extend(part_hashes([raw], shard.site))
    return ShardResult(hashes=found)


def pass_shard(passer: SitePasser, shard: PassShard) -> ShardResult:
    """What the site pass computes page by page, for the shard's pages, with `passer`'s
    extractor chain."""
    pages = StoredBytes().resolved(shard.pages)
    slots = SiteSlots()
    markdown = passer.extraction.markdown

    def work(index: int, raw: RawPage, dom: Dom) -> ShardPage:
        records = page_records(raw, dom, shard.geometry)
        item = work_item(pages[index], shard.site)
        extraction = passer.extract(item, dom, shard.context)
        return ShardPage(
            records, page_choice(dom, extraction, slots, markdown), PageResult.of(item)
        )

    result = ShardResult()
    passer.extraction.recorded.clear()
    try:
        result.pages = part_pages([raw_of(page) for page in pages], shard.site, work)
    finally:
        result.recorded = list(passer.extraction.recorded)
        passer.extraction.recorded.clear()
    return result


def pass_order(job: SitePassJob) -> list[int]:
    """The indices of the job's pages in the order SiteLevel reads them (`site_order`)."""
    raws = [raw_of(page) for page in job.pages]
    position = {id(raw): index for index, raw in enumerate(raws)}
    return [position[id(raw)] for raw in site_order(raws)]


def _split(pages: list[PassPage], parts: int) -> list[tuple[PassPage, ...]]:
    """`pages` in `parts` runs of about equal bytes, in order (none empty)."""
    return page_runs(pages, parts, lambda page: page.nbytes)


def hash_shards(job: SitePassJob, parts: int) -> list[HashShard]:
    """The job's pages the site's template is learnt from (the first `MAX_TEMPLATE_PAGES`, in
    job order), as `parts` hash shards."""
    return [
        HashShard(job.site, run, job.attempt) for run in _split(template_pages(job.pages), parts)
    ]


def shard_context(shards: list[ShardResult]) -> SiteContext | None:
    """The site's template from its hash shards' results (in the shards' order): what
    `learn_site` learns for the learned extractor, from hashes computed apart."""
    return parts_context(shard.hashes for shard in shards)


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
    items = [work_item(page, job.site) for page in job.pages]
    raws = [raw_of(page) for page in job.pages]
    by_raw = {id(raw): item for raw, item in zip(raws, items, strict=True)}
    result = SitePassResult(ran=True, split=len(shards))
    found = (page for shard in shards for page in shard.pages)
    order, pages, errors = joined(pass_order(job), found)
    sitelevel = SiteLevelRun(job.site, errors=errors)
    for index, page in zip(order, pages, strict=True):
        page.result.apply(items[index])
        sitelevel.pages.append(page.records)
    sitelevel.label()
    run = finish_site_pass(sitelevel, [raws[i] for i in order], [page.choice for page in pages])
    apply_outcomes(run, by_raw)
    for shard in shards:
        result.recorded.extend(shard.recorded)
        result.logs.extend(shard.logs)
        result.peak_rss_mb = max(result.peak_rss_mb, shard.peak_rss_mb)
    result.pages = {i: PageResult.of(item) for i, item in enumerate(items) if item.stage}
    result.template = run.template is not None
    result.nodes = run.sitelevel.table(job.crawl)
    return result
