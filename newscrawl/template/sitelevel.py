"""SiteLevel: label a site's template nodes from the pages of the site alone.

The labelling rule of Chakrabarti, Kumar and Punera (WWW 2007).

Training data without humans. Hash every node of every page (`records.node_hashes`: a content
hash of the whole subtree); a node whose hash occurs in at least p = 10% of the site's pages is
template; a node not so marked whose content is at least 85% made of template nodes is template
too; everything else is not. The labels and the node features go to the `nodes` dataset that
`newscrawl train` learns from.

Readings taken:
- the 85% rule measures a node's *visible text* by default (`share_of="text"`), not its HTML
  characters (`share_of="html"`, the literal reading of "85% of its HTML content"). Template
  markup is heavy (link lists full of long hrefs and classes) and article markup is light, so
  by HTML characters the wrapper that holds an article is often 85% "template" and gets
  labelled template with the article inside it (the two readings measured:
  docs/experiments.md);
- a hash must occur on at least 2 distinct pages whatever p says: with 10 pages, "10%" would be
  one page, and every node occurs on its own page;
- pages with the same root hash (the same page fetched twice) count once, else a duplicate
  would turn its whole content into "template";
- a page counts a hash once however often it repeats inside the page;
- the 85% share is computed bottom-up, so a node whose children became template by the share
  rule counts their HTML as template too.

Use: `run_sitelevel(site, raw_pages)` is the one SiteLevel stage - the crawl's site pass,
`newscrawl sitelevel` and the Dask stage all call it: each page is parsed once into its node
records (`PageNodes`: content hashes, counts, boxes), a `visit` callback sees each parsed page
(the site pass extracts it there), the site is labelled, and `SiteLevelRun.write(writer, ...)`
writes its rows to the `nodes` dataset (`newscrawl.template.node_table.nodes_writer(root)`), or
nothing when the site has too few pages.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError
from newscrawl.html.urls import site_of
from newscrawl.template.node_records import PageNodes
from newscrawl.template.node_table import nodes_table

if TYPE_CHECKING:
    import pyarrow as pa

    from newscrawl.storage import ParquetDatasetWriter

__all__ = [
    "KeptDoms",
    "RawPage",
    "SiteLevel",
    "SiteLevelConfig",
    "SiteLevelRun",
    "distinct_pages",
    "frequent_hashes",
    "label_page",
    "label_site",
    "page_records",
    "parsed_pages",
    "raw_page",
    "run_sitelevel",
    "site_order",
    "split_runs",
    "template_hashes",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SiteLevelConfig:
    """The study's parameters. `html_share` is the 85% of the share rule, measured on what
    `share_of` says ("text" or "html", see the module docstring). `min_pages`: sites with fewer
    pages are skipped (and counted)."""

    p: float = 0.10
    html_share: float = 0.85
    share_of: str = "text"
    min_pages: int = 5
    min_occurrences: int = 2


def template_hashes(pages: Sequence[PageNodes], config: SiteLevelConfig) -> np.ndarray:
    """Sorted uint64 hashes that occur on at least p of the site's distinct pages."""
    return frequent_hashes(distinct_pages(page.hash for page in pages), config)


def distinct_pages(page_hashes: Iterable[np.ndarray]) -> list[np.ndarray]:
    """Each page's distinct node hashes, pages with an already seen root hash (the same page
    fetched twice) and empty pages left out."""
    seen_roots: set[int] = set()
    per_page: list[np.ndarray] = []
    for hashes in page_hashes:
        if len(hashes) and int(hashes[0]) not in seen_roots:
            seen_roots.add(int(hashes[0]))
            per_page.append(np.unique(hashes))
    return per_page


def frequent_hashes(per_page: Sequence[np.ndarray], config: SiteLevelConfig) -> np.ndarray:
    """Hashes on at least p of the pages (and on `min_occurrences` pages), from each page's
    distinct hashes."""
    if not per_page:
        return np.zeros(0, dtype=np.uint64)
    values, counts = np.unique(np.concatenate(per_page), return_counts=True)
    needed = max(config.min_occurrences, math.ceil(config.p * len(per_page) - 1e-9))
    return values[counts >= needed]


def in_sorted(values: np.ndarray, members: np.ndarray) -> np.ndarray:
    """bool per value: it is one of `members`, a sorted array of unique values (as
    `frequent_hashes` gives). `np.isin` sorts both arrays on every call; a binary search of the
    few template hashes for each node hash gives the same answer for less."""
    if not len(members) or not len(values):
        return np.zeros(len(values), dtype=bool)
    if len(members) > 1 and not (members[1:] > members[:-1]).all():  # not as promised
        return np.isin(values, members)
    at = np.searchsorted(members, values)
    return members[np.minimum(at, len(members) - 1)] == values


def label_page(
    page: PageNodes, templates: np.ndarray, html_share: float = 0.85, share_of: str = "text"
) -> np.ndarray:
    """bool per node: its hash is a template hash, or its text (or HTML, `share_of`) is at
    least `html_share` template.

    Bottom-up by depth levels (vectorised): `covered[v]` is the amount of v's subtree that lies
    in template nodes - all of it when v is template, else the sum over its children.
    """
    count = len(page)
    label = in_sorted(page.hash, templates)
    if not count:
        return label
    if share_of not in ("html", "text"):
        raise ValueError(f"share_of must be 'html' or 'text', not {share_of!r}")
    size = (page.html_len if share_of == "html" else page.text_len).astype(np.int64)
    covered = np.zeros(count, dtype=np.int64)
    from_children = np.zeros(count, dtype=np.int64)
    depth = page.depth.astype(np.int64)
    order = np.argsort(depth, kind="stable")
    levels = np.split(order, np.flatnonzero(np.diff(depth[order])) + 1)
    for level in reversed(levels):
        share_ok = (~label[level]) & (from_children[level] >= html_share * size[level])
        label[level[share_ok & (size[level] > 0)]] = True
        covered[level] = np.where(label[level], size[level], from_children[level])
        parents = page.parent[level]
        has_parent = parents >= 0
        np.add.at(from_children, parents[has_parent], covered[level][has_parent])
    return label


def label_site(
    pages: Sequence[PageNodes], config: SiteLevelConfig | None = None
) -> list[np.ndarray]:
    """SiteLevel labels (bool per node) for every page of one site."""
    config = config or SiteLevelConfig()
    templates = template_hashes(pages, config)
    return [label_page(page, templates, config.html_share, config.share_of) for page in pages]


class SiteLevel:
    """Labels one site's buffered pages and turns them into `nodes` dataset rows."""

    Config = SiteLevelConfig

    def __init__(self, config: SiteLevelConfig | None = None) -> None:
        self.config = config or SiteLevelConfig()

    def label(self, pages: Sequence[PageNodes]) -> list[np.ndarray]:
        return label_site(pages, self.config)

    def table(
        self,
        pages: Sequence[PageNodes],
        crawl: str = "",
        site: str | None = None,
        labels: Sequence[np.ndarray] | None = None,
        kind: str | None = None,
    ) -> pa.Table | None:
        """The site's `nodes` rows (nodes with a box of positive area), or None when the site
        has fewer than `min_pages` pages."""
        if len(pages) < self.config.min_pages:
            return None
        labels = labels if labels is not None else self.label(pages)
        return nodes_table(pages, labels, crawl=crawl, site=site, kind=kind)


@dataclass(frozen=True, slots=True)
class RawPage:
    """One stored page as the SiteLevel stage reads it: its (final) URL and raw bytes."""

    url: str
    html: bytes | str
    content_type: str | None = None


def raw_page(row: Mapping[str, object]) -> RawPage | None:
    """The `RawPage` of a `pages` dataset row (final_url, else url; html; content_type), or
    None for a row the stage does not read (no HTML, or a status other than 200)."""
    html = row.get("html")
    status = row.get("status")
    if not isinstance(html, bytes | str) or (status is not None and status != 200):
        return None
    url = str(row.get("final_url") or row.get("url") or "")
    content_type = row.get("content_type")
    return RawPage(url, html, content_type if isinstance(content_type, str) else None)


PageVisitor = Callable[[int, RawPage, Dom, PageNodes], None]
PageParser = Callable[[RawPage], Dom]  # a raw page's Dom; raises PageError as parse_html does


def parse_raw(raw: RawPage, site: str | None = None) -> Dom:
    """The Dom of a raw page, as every site-level stage parses it (`site` becomes `Dom.site`)."""
    return parse_html(raw.html, raw.url or None, raw.content_type, site=site or None)


# What the Doms `KeptDoms` holds may add up to: elements (about 1.2 KB each: some 50 MB) and
# bytes of the pages' markup (a Dom of few elements and much text costs a few times its bytes).
KEPT_DOM_NODES = 40_000
KEPT_DOM_BYTES = 8 << 20


class KeptDoms:
    """Each raw page parsed once for two passes over a site (its template, then the site pass):
    `parse` keeps the Dom it builds while the kept Doms stay within `max_nodes` elements and
    `max_bytes` bytes of markup, and `take` hands a kept Dom over (and lets it go) or parses
    the page again. A page that does not parse raises its PageError from both."""

    def __init__(
        self,
        site: str | None = None,
        max_nodes: int = KEPT_DOM_NODES,
        max_bytes: int = KEPT_DOM_BYTES,
        parser: PageParser | None = None,
        size: Callable[[RawPage], int] | None = None,
    ) -> None:
        """`parser`: how a page is parsed (default `parse_raw` with `site`); `size`: a page's
        bytes (default its `html`'s length), for pages whose bytes the parser reads."""
        self.site = site
        self.max_nodes = max_nodes
        self.max_bytes = max_bytes
        self.nodes = 0
        self.bytes = 0
        self._parser = parser
        self._size = size
        self._kept: dict[int, tuple[RawPage, Dom]] = {}

    def _parse(self, raw: RawPage) -> Dom:
        return self._parser(raw) if self._parser is not None else parse_raw(raw, self.site)

    def _bytes(self, raw: RawPage) -> int:
        return self._size(raw) if self._size is not None else len(raw.html)

    def parse(self, raw: RawPage) -> Dom:
        kept = self._kept.get(id(raw))
        if kept is not None:
            return kept[1]
        dom = self._parse(raw)
        nodes, size = self.nodes + len(dom), self.bytes + self._bytes(raw)
        if nodes <= self.max_nodes and size <= self.max_bytes:
            self._kept[id(raw)] = (raw, dom)  # the page too: its id stays its own meanwhile
            self.nodes, self.bytes = nodes, size
        return dom

    def take(self, raw: RawPage) -> Dom:
        kept = self._kept.pop(id(raw), None)
        if kept is None:
            return self._parse(raw)
        self.nodes -= len(kept[1])
        self.bytes -= self._bytes(raw)
        return kept[1]


@dataclass(slots=True)
class SiteLevelRun:
    """One site through the SiteLevel stage: its pages' node records (in URL order), their
    labels (None when the site has fewer than `min_pages` pages) and pages that did not parse."""

    site: str
    pages: list[PageNodes] = field(default_factory=list)
    labels: list[np.ndarray] | None = None
    errors: int = 0

    def label(self, config: SiteLevelConfig | None = None) -> None:
        """SiteLevel's labels of the pages, when there are enough of them."""
        config = config or SiteLevelConfig()
        if len(self.pages) >= config.min_pages:
            self.labels = label_site(self.pages, config)

    def table(self, crawl: str = "", kind: str | None = None) -> pa.Table | None:
        """The site's `nodes` rows, or None when it was not labelled."""
        if self.labels is None:
            return None
        return nodes_table(self.pages, self.labels, crawl=crawl, site=self.site, kind=kind)

    def write(self, writer: ParquetDatasetWriter, crawl: str, kind: str | None = None) -> int:
        """Write the site's rows to NODES/crawl=<crawl>/site=<site>/; the rows written."""
        table = self.table(crawl, kind)
        if table is None:
            return 0
        partition = {"crawl": crawl, "site": self.site}
        writer.write_table(table, partition)
        writer.close_partition(partition)
        return table.num_rows


def run_sitelevel(
    site: str,
    raws: Iterable[RawPage],
    *,
    config: SiteLevelConfig | None = None,
    geometry: str = "flow",
    max_pages: int | None = None,
    visit: PageVisitor | None = None,
    method: str = "sitelevel",
    parse: PageParser | None = None,
) -> SiteLevelRun:
    """The SiteLevel stage of one site (the only implementation: crawl, command and Dask).

    Pages are taken in URL order (the first `max_pages` of them), each parsed once into its
    node records; links count as intra-site by the host of the page's own URL (`site_of`).
    `visit(index, raw, dom, records)` sees each parsed page before its tree is let go. Pages
    that do not parse are counted and left out. Labels follow when there are enough pages:
    SiteLevel's, or those of another site-level `method` (`newscrawl.template.sitemethods`:
    sst, pagelets, entropy), which reads each page while its tree is at hand. `parse`: how a
    page becomes its Dom (default `parse_raw`; the site pass hands over Doms it already built).
    """
    from newscrawl.template.sitemethods import check_site_method, new_site_method

    config = config or SiteLevelConfig()
    method = check_site_method(method)
    state = None if method == "sitelevel" else new_site_method(method)
    run = SiteLevelRun(site)
    for raw, dom in parsed_pages(run, raws, max_pages, parse):
        page = page_records(raw, dom, geometry)
        if visit is not None:
            visit(len(run.pages), raw, dom, page)
        if state is not None:
            state.add(dom)
        run.pages.append(page)
    if state is None:
        run.label(config)
    elif len(run.pages) >= config.min_pages:
        run.labels = state.masks()
    return run


def parsed_pages(
    run: SiteLevelRun,
    raws: Iterable[RawPage],
    max_pages: int | None = None,
    parse: PageParser | None = None,
) -> Iterator[tuple[RawPage, Dom]]:
    """The site's pages in SiteLevel's order (`site_order`), each with its Dom (`parse`, default
    `parse_raw`); a page that does not parse is left out and counted in `run.errors`."""
    for raw in site_order(raws, max_pages):
        try:
            dom = parse(raw) if parse is not None else parse_raw(raw, run.site)
        except PageError:
            run.errors += 1
            continue
        yield raw, dom


def split_runs(items: Sequence[T], parts: int, size: Callable[[T], int]) -> list[list[T]]:
    """`items` in at most `parts` runs of consecutive items of about equal total `size` (none
    empty): how a large site's pages are split over workers."""
    total = sum(map(size, items)) or 1
    runs: list[list[T]] = [[]]
    done = 0
    for item in items:
        if runs[-1] and done >= total * len(runs) / parts and len(runs) < parts:
            runs.append([])
        runs[-1].append(item)
        done += size(item)
    return runs


def site_order(raws: Iterable[RawPage], max_pages: int | None = None) -> list[RawPage]:
    """The pages the SiteLevel stage reads, in its order: by URL, the first `max_pages`."""
    ordered = sorted(raws, key=lambda raw: raw.url)
    return ordered[:max_pages] if max_pages else ordered


def page_records(raw: RawPage, dom: Dom, geometry: str = "flow") -> PageNodes:
    """One parsed page's node records; links count as intra-site by the host of its own URL
    (`site_of`)."""
    return PageNodes.from_dom(dom, raw.url, site=site_of(raw.url), geometry=geometry, html=raw.html)
