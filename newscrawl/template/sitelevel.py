"""SiteLevel (seed 004): label a site's template nodes from the pages of the site alone.

Training data without humans. Hash every node of every page (`records.node_hashes`: a content
hash of the whole subtree); a node whose hash occurs in at least p = 10% of the site's pages is
template; a node not so marked whose HTML is at least 85% made of template nodes is template
too; everything else is not. The labels and the node features go to the `nodes` dataset that
`newscrawl train` learns from.

Readings taken:
- a hash must occur on at least 2 distinct pages whatever p says: with 10 pages, "10%" would be
  one page, and every node occurs on its own page;
- pages with the same root hash (the same page fetched twice) count once, else a duplicate
  would turn its whole content into "template";
- a page counts a hash once however often it repeats inside the page;
- the 85% share is computed bottom-up, so a node whose children became template by the share
  rule counts their HTML as template too.

Use: the crawl's per-domain buffer keeps `PageNodes` records and, when the domain is done,
calls `SiteLevel().table(pages, crawl=...)`, which returns the rows for the `nodes` dataset
(or None when the site has too few pages), and writes them with `nodes_writer(root)`:
``writer.write_table(table, {"site": site})``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from newscrawl.template.buckets import DEFAULT_BOUNDARIES, bucket_of
from newscrawl.template.features import FEATURES, node_features
from newscrawl.template.records import TAGS, PageNodes

if TYPE_CHECKING:
    import pyarrow as pa

    from newscrawl.storage import ParquetDatasetWriter

__all__ = [
    "NODES_PARTITION_BY",
    "NODE_COLUMNS",
    "SiteLevel",
    "SiteLevelConfig",
    "label_page",
    "label_site",
    "nodes_schema",
    "nodes_table",
    "nodes_writer",
]

# Columns of the `nodes` dataset, in order (features are float32, one column each).
NODE_COLUMNS: tuple[str, ...] = (
    *("site", "kind", "url", "page", "node", "parent", "depth", "tag", "area", "bucket"),
    *FEATURES,
    *("label", "crawl"),
)
# The nodes dataset is Hive-partitioned by site: NODES/site=<site>/part-*.parquet.
NODES_PARTITION_BY = ("site",)

_STRING_COLUMNS = frozenset({"site", "kind", "url", "tag", "crawl"})


def site_kind(pages: Sequence[PageNodes]) -> str:
    """The kind most of the site's pages have ("blog" or "news"; ties go to "news")."""
    blogs = sum(page.kind == "blog" for page in pages)
    return "blog" if blogs * 2 > len(pages) else "news"


@dataclass(frozen=True, slots=True)
class SiteLevelConfig:
    """The seed's parameters. `min_pages`: sites with fewer pages are skipped (and counted)."""

    p: float = 0.10
    html_share: float = 0.85
    share_of: str = "html"  # what the share rule measures: "html" characters or visible "text"
    min_pages: int = 5
    min_occurrences: int = 2


def template_hashes(pages: Sequence[PageNodes], config: SiteLevelConfig) -> np.ndarray:
    """Sorted uint64 hashes that occur on at least p of the site's distinct pages."""
    seen_roots: set[int] = set()
    per_page: list[np.ndarray] = []
    for page in pages:
        if not len(page):
            continue
        root = int(page.hash[0])
        if root in seen_roots:
            continue
        seen_roots.add(root)
        per_page.append(np.unique(page.hash))
    if not per_page:
        return np.zeros(0, dtype=np.uint64)
    values, counts = np.unique(np.concatenate(per_page), return_counts=True)
    needed = max(config.min_occurrences, math.ceil(config.p * len(per_page) - 1e-9))
    return values[counts >= needed]


def label_page(
    page: PageNodes, templates: np.ndarray, html_share: float = 0.85, share_of: str = "html"
) -> np.ndarray:
    """bool per node: its hash is a template hash, or its HTML is >= `html_share` template.

    Bottom-up by depth levels (vectorised): `covered[v]` is the HTML of v's subtree that lies
    in template nodes - all of it when v is template, else the sum over its children.
    """
    count = len(page)
    label = np.isin(page.hash, templates)
    if not count:
        return label
    if share_of not in ("html", "text"):
        raise ValueError(f"share_of must be 'html' or 'text', not {share_of!r}")
    html = (page.html_len if share_of == "html" else page.text_len).astype(np.int64)
    covered = np.zeros(count, dtype=np.int64)
    from_children = np.zeros(count, dtype=np.int64)
    depth = page.depth.astype(np.int64)
    order = np.argsort(depth, kind="stable")
    levels = np.split(order, np.flatnonzero(np.diff(depth[order])) + 1)
    for level in reversed(levels):
        share_ok = (~label[level]) & (from_children[level] >= html_share * html[level])
        label[level[share_ok & (html[level] > 0)]] = True
        covered[level] = np.where(label[level], html[level], from_children[level])
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


def nodes_columns(
    pages: Sequence[PageNodes],
    labels: Sequence[np.ndarray],
    crawl: str = "",
    site: str | None = None,
    kind: str | None = None,
) -> dict[str, np.ndarray | list]:
    """Column arrays of the `nodes` dataset for these pages (see NODE_COLUMNS)."""
    parts: dict[str, list] = {name: [] for name in NODE_COLUMNS}
    kind = kind or site_kind(pages)
    for index, (page, label) in enumerate(zip(pages, labels, strict=True)):
        area = page.area
        keep = np.flatnonzero(area > 0)
        features = node_features(page)[keep]
        n = len(keep)
        parts["site"].append([site or page.site] * n)
        parts["kind"].append([kind] * n)
        parts["url"].append([page.url] * n)
        parts["page"].append(np.full(n, index, dtype=np.int32))
        parts["node"].append(keep.astype(np.int32))
        parts["parent"].append(page.parent[keep])
        parts["depth"].append(page.depth[keep])
        parts["tag"].append([TAGS[t] or "other" for t in page.tag[keep]])
        parts["area"].append(area[keep].astype(np.float32))
        parts["bucket"].append(bucket_of(area[keep], DEFAULT_BOUNDARIES))
        for column, name in enumerate(FEATURES):
            parts[name].append(features[:, column])
        parts["label"].append(label[keep])
        parts["crawl"].append([crawl] * n)
    return {
        name: (
            [v for chunk in chunks for v in chunk]
            if name in _STRING_COLUMNS
            else np.concatenate(chunks)
            if chunks
            else np.zeros(0)
        )
        for name, chunks in parts.items()
    }


def nodes_table(
    pages: Sequence[PageNodes],
    labels: Sequence[np.ndarray],
    crawl: str = "",
    site: str | None = None,
    kind: str | None = None,
) -> pa.Table:
    """The `nodes` dataset rows as a pyarrow Table."""
    import pyarrow as pa

    columns = nodes_columns(pages, labels, crawl=crawl, site=site, kind=kind)
    schema = nodes_schema()
    return pa.table({f.name: pa.array(columns[f.name], type=f.type) for f in schema}, schema=schema)


def nodes_schema() -> pa.Schema:
    """The explicit schema of the `nodes` dataset."""
    import pyarrow as pa

    types = {
        "site": pa.string(),
        "kind": pa.string(),
        "url": pa.string(),
        "page": pa.int32(),
        "node": pa.int32(),
        "parent": pa.int32(),
        "depth": pa.int16(),
        "tag": pa.string(),
        "area": pa.float32(),
        "bucket": pa.int8(),
        "label": pa.bool_(),
        "crawl": pa.string(),
    }
    return pa.schema(
        [pa.field(name, types.get(name, pa.float32())) for name in NODE_COLUMNS],
        metadata={"dataset": "newscrawl nodes", "version": "1"},
    )


def nodes_writer(root: str | Path, **options: Any) -> ParquetDatasetWriter:
    """A dataset writer for `nodes` rows; write each site's table with
    ``writer.write_table(table, {"site": site})``."""
    from newscrawl.storage import ParquetDatasetWriter

    options.setdefault("row_group_rows", 65_536)
    options.setdefault("file_rows", 1_000_000)
    return ParquetDatasetWriter(root, nodes_schema(), NODES_PARTITION_BY, **options)
