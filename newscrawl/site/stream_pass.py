"""The site pass in two streaming passes: what it holds does not grow with the site's elements.

`site_pass` keeps every page's node records (`PageNodes`, some 70 bytes a node) until SiteLevel
has labelled the whole site, then builds the site's `nodes` rows at once: a site of 200 pages
of 95,000 elements held 19 million node records and a table of as many rows. The same rows and
texts come from two passes over the pages, each holding one page's tree and records at a time
(and what `KeptDoms` keeps within its budget, parsed once for both):

1. `count_site_hashes` reads each page's node hashes and counts, per hash, the distinct pages
   it occurs on (`HashCounts`): SiteLevel's template hashes for the whole site, and the learned
   extractor's site template from the first `MAX_TEMPLATE_PAGES` pages, as `learn_site` learns
   it; and the site's kind (blog or news) from every page's;
2. `streamed_site_pass` takes the pages in SiteLevel's order: node records, SiteLevel's labels
   from the counted template, the page's `nodes` rows handed to `sink` at once, its extraction
   and what the slot decisions read (`PageChoice`: counted, and its chosen pieces - as many as
   the page's text blocks - kept in a temporary file); the slot decisions follow, then each
   page's final text from its pieces read back.

The first pass need not parse a page whose node hashes were stored beside its raw bytes where
it was parsed already (the crawl's parse, an ingest's; `newscrawl.template.node_summary`):
it reads them instead (`count_site_hashes`'s `stored`), and parses the pages without them.

It covers SiteLevel as the site method, without an earlier crawl's pages as context (the
redesign test reads every page's records) and without `SitePassConfig.cut_sitelevel`; the
caller passes other sites whole (`site_pass`).
"""

from __future__ import annotations

import math
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO

import numpy as np

from newscrawl.extractors.markdown import MarkdownOptions
from newscrawl.html.tree import PageError
from newscrawl.site.page_choice import SiteSlots, page_choice
from newscrawl.site.site_template import MAX_TEMPLATE_PAGES, TemplateHashes
from newscrawl.site.slot_cut import (
    PAGE_STAGE,
    SITE_STAGE,
    PageExtract,
    PageOutcome,
    SitePassConfig,
    SitePassRun,
    SlotCounts,
    final_extraction,
)
from newscrawl.template.node_records import PageNodes, node_hashes, page_kind
from newscrawl.template.node_summary import PageHashes
from newscrawl.template.sitelevel import (
    PageParser,
    RawPage,
    SiteLevelConfig,
    SiteLevelRun,
    label_page,
    page_records,
    site_order,
)

__all__ = ["HashCounts", "NodeSink", "SiteHashes", "count_site_hashes", "streamed_site_pass"]

# A page's `nodes` rows as they are made: (first page number, its records, its labels).
NodeSink = Callable[[int, PageNodes, np.ndarray], None]
# The hash counts' temporary files: one per value of a hash's top bits.
_BUCKET_BITS = 6
_BUCKETS = 1 << _BUCKET_BITS
# The most bytes of hashes counted at once: a larger bucket is split by its hashes' next bits.
BUCKET_BYTES = 4 << 20


# A page's stored hashes, when it has them (`read_summary` of what is beside its raw page).
StoredHashes = Callable[[RawPage], PageHashes | None]


class HashCounts:
    """Per node hash, the number of distinct pages it occurs on (SiteLevel's counting): a page
    whose root hash was seen already (the same page twice) and an empty page count for
    nothing, and a page counts a hash once.

    Each page's distinct hashes go to one of `_BUCKETS` temporary files by their top bits (in
    `spill`, default the system's temporary folder), and each file is counted on its own; a
    file of more than `budget` bytes is first split the same way by the hashes' next bits,
    and so on, so what is held at once is at most `budget` bytes of hashes however large the
    site (`largest`: the most bytes counted at once so far)."""

    def __init__(self, spill: str = "", budget: int = BUCKET_BYTES) -> None:
        self.pages = 0
        self.budget = max(8, budget - budget % 8)  # whole hashes
        self.largest = 0
        self._roots: set[int] = set()
        self._spill = spill
        self._files: list[IO[bytes]] = []
        self._bounds = np.arange(1, _BUCKETS, dtype=np.uint64) << np.uint64(64 - _BUCKET_BITS)

    def add(self, hashes: np.ndarray) -> None:
        if not len(hashes) or int(hashes[0]) in self._roots:
            return
        self._roots.add(int(hashes[0]))
        self.pages += 1
        if not self._files:
            self._files = self._temporary(_BUCKETS)
        distinct = np.unique(hashes).astype(np.uint64, copy=False)  # sorted
        cuts = np.searchsorted(distinct, self._bounds)
        for bucket, part in enumerate(np.split(distinct, cuts)):
            if len(part):
                self._files[bucket].write(part.tobytes())

    def frequent(self, config: SiteLevelConfig) -> np.ndarray:
        """The hashes on at least p of the distinct pages (and on `min_occurrences`), sorted:
        what `frequent_hashes` gives for the same pages."""
        if not self.pages:
            return np.zeros(0, dtype=np.uint64)
        needed = max(config.min_occurrences, math.ceil(config.p * self.pages - 1e-9))
        found: list[np.ndarray] = []
        for kept in self._files:  # bucket by bucket: in order of their top bits
            found.extend(self._frequent_in(kept, 64 - _BUCKET_BITS, needed))
        return np.concatenate(found) if found else np.zeros(0, dtype=np.uint64)

    def _frequent_in(self, kept: IO[bytes], shift: int, needed: int) -> list[np.ndarray]:
        """The hashes of file `kept` on at least `needed` pages, in order; its hashes share
        every bit from bit `shift` up. A file over the budget is split by the bits below."""
        size = kept.seek(0, os.SEEK_END)
        kept.seek(0)
        if size <= self.budget or shift == 0:  # at shift 0 it holds one hash, once a page
            self.largest = max(self.largest, size)
            values, counts = np.unique(
                np.frombuffer(kept.read(), dtype=np.uint64), return_counts=True
            )
            return [values[counts >= needed]]
        low = max(0, shift - _BUCKET_BITS)
        parts = self._temporary(1 << (shift - low))
        try:
            self._split(kept, low, parts)
            found: list[np.ndarray] = []
            for part in parts:  # in order of the bits from `low` up
                found.extend(self._frequent_in(part, low, needed))
            return found
        finally:
            for part in parts:
                part.close()

    def _split(self, kept: IO[bytes], low: int, parts: list[IO[bytes]]) -> None:
        """The hashes of `kept` into `parts` by their bits from `low` up (to the file's shared
        bits), `budget` bytes of them read at a time."""
        mask = np.uint64(len(parts) - 1)
        while chunk := kept.read(self.budget):
            values = np.frombuffer(chunk, dtype=np.uint64)
            keys = (values >> np.uint64(low)) & mask
            order = np.argsort(keys, kind="stable")
            cuts = np.searchsorted(keys[order], np.arange(1, len(parts)))
            for part, piece in zip(parts, np.split(values[order], cuts), strict=True):
                if len(piece):
                    part.write(piece.tobytes())
            del chunk, values, keys, order

    def _temporary(self, count: int) -> list[IO[bytes]]:
        """`count` new temporary files in the spill folder (closed by `close`, or by the
        caller once counted)."""
        if self._spill:
            os.makedirs(self._spill, exist_ok=True)
        return [tempfile.TemporaryFile(dir=self._spill or None) for _ in range(count)]

    def close(self) -> None:
        for kept in self._files:
            kept.close()
        self._files = []


@dataclass(slots=True)
class SiteHashes:
    """What the first pass learns of a site: SiteLevel's template hashes (None: fewer parsed
    pages than SiteLevel needs), the learned extractor's site template (None: not asked for,
    or too few pages), the site's kind, and how many pages parsed."""

    sitelevel: np.ndarray | None
    learned: TemplateHashes | None
    kind: str
    parsed: int


def count_site_hashes(
    raws: Sequence[RawPage],
    parse: PageParser,
    learned: bool,
    config: SiteLevelConfig | None = None,
    spill: str = "",
    stored: StoredHashes | None = None,
) -> SiteHashes:
    """The first pass over a site's pages (`raws` in the job's order, each parsed by `parse`):
    see the module docstring. `learned`: also the learned extractor's template. `spill`:
    where the counts' temporary files go (default the system's temporary folder). `stored`:
    a page's stored hashes, read instead of parsing it when it has them."""
    config = config or SiteLevelConfig()
    site = HashCounts(spill)
    # the learned template counts the first MAX_TEMPLATE_PAGES pages: all of a smaller site's
    first = site if len(raws) <= MAX_TEMPLATE_PAGES else HashCounts(spill)
    parsed = blogs = 0
    try:
        for index, raw in enumerate(raws):
            found = stored(raw) if stored is not None else None
            if found is None:
                found = _parsed_hashes(raw, parse)
            if found is None:
                continue
            parsed += 1
            blogs += found.blog_generator or page_kind(raw.url) == "blog"
            site.add(found.hashes)
            if learned and first is not site and index < MAX_TEMPLATE_PAGES:
                first.add(found.hashes)
            del found
        template = site.frequent(config) if parsed >= config.min_pages else None
        learnt = None
        # as `pages_template`: enough pages in the job, enough distinct ones among those parsed
        if learned and len(raws) >= config.min_pages and first.pages >= config.min_pages:
            learnt = TemplateHashes(first.frequent(config), first.pages)
    finally:
        site.close()
        first.close()
    kind = "blog" if blogs * 2 > parsed else "news"
    return SiteHashes(template, learnt, kind, parsed)


def _parsed_hashes(raw: RawPage, parse: PageParser) -> PageHashes | None:
    """A page's hashes from its parse; None when it does not parse."""
    try:
        dom = parse(raw)
    except PageError:
        return None
    blog = page_kind("", dom.meta.get("generator", "")) == "blog"
    return PageHashes(node_hashes(dom), blog)


def streamed_site_pass(
    site: str,
    raws: Sequence[RawPage],
    extract: PageExtract,
    hashes: SiteHashes,
    parse: PageParser,
    sink: NodeSink | None = None,
    *,
    geometry: str = "flow",
    config: SiteLevelConfig | None = None,
    held: Callable[[int], None] | None = None,
    full: Callable[[RawPage], RawPage] | None = None,
    spill: str = "",
    markdown: MarkdownOptions | None = None,
    outcome: Callable[[PageOutcome], None] | None = None,
) -> SitePassRun:
    """The second pass (see the module docstring): each page in SiteLevel's order parsed
    (`parse`), its node records labelled with `hashes.sitelevel` and handed to `sink(page
    number, records, labels)` (not when the site has too few pages), extracted (`extract`)
    and read for the slot decisions; then the slot decisions and each page's final text. The
    run's SiteLevel part keeps no records (`pages` empty, `labels` None). `held(elements)`
    is told the elements of each page while its tree is held. `full(raw)`: the page with its
    bytes, for a geometry that renders them (the `raws` may hold none). What the slot
    decisions read of each page is counted (`SlotCounts`) and its chosen pieces kept in a
    temporary file (in `spill`, default the system's), read back one page at a time for its
    final text. `markdown`: the final texts' Markdown is rendered with these options.
    `outcome`: each page's outcome is handed to it as it is made, and the run's `outcomes`
    stay empty (no page's final text is held after its turn)."""
    config = config or SiteLevelConfig()
    run = SiteLevelRun(site)
    slots = SiteSlots()
    counts = SlotCounts()
    seen: list[RawPage] = []
    number = 0
    if spill:
        os.makedirs(spill, exist_ok=True)
    with tempfile.TemporaryFile(dir=spill or None) as kept:  # each page's PageChoice
        for raw in site_order(raws):
            try:
                dom = parse(raw)
            except PageError:
                run.errors += 1
                continue
            if held is not None:
                held(len(dom))
            records = page_records(full(raw) if full is not None else raw, dom, geometry)
            if hashes.sitelevel is not None and sink is not None:
                labels = label_page(records, hashes.sitelevel, config.html_share, config.share_of)
                sink(number, records, labels)
            number += 1
            del records
            choice = page_choice(dom, extract(raw, dom), slots, markdown)
            del dom
            counts.add(choice)
            pickle.dump(choice, kept, pickle.HIGHEST_PROTOCOL)
            seen.append(raw)
            del choice
        kept.seek(0)
        return _finished(run, seen, counts, kept, outcome)


def _finished(
    run: SiteLevelRun,
    seen: list[RawPage],
    counts: SlotCounts,
    kept: IO[bytes],
    outcome: Callable[[PageOutcome], None] | None = None,
) -> SitePassRun:
    """What `finish_site_pass` gives, from the slot counts and the pages' `PageChoice`s read
    back one at a time from `kept` (in `seen`'s order); with `outcome`, each page's outcome
    goes to it instead of into the run."""
    config = SitePassConfig()
    template = counts.template(config) if counts.pages >= config.min_pages else None
    outcomes: list[PageOutcome] = []
    for raw in seen:
        choice = pickle.load(kept)
        if template is None:
            made = PageOutcome(raw, choice.extraction, PAGE_STAGE)
        else:
            made = PageOutcome(raw, final_extraction(choice, template, None, config), SITE_STAGE)
        del choice
        if outcome is None:
            outcomes.append(made)
        else:
            outcome(made)
        del made
    return SitePassRun(run, outcomes, template)
