"""The `nodes` dataset: SiteLevel's node rows (features and template labels per node), its
explicit schema and its partitioned writer. `newscrawl train` learns from it; the crawl's site
pass, `newscrawl sitelevel` and the Dask stage write it (`SiteLevelRun.write`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from newscrawl.template.buckets import DEFAULT_BOUNDARIES, bucket_of
from newscrawl.template.node_features import FEATURES, node_features
from newscrawl.template.node_records import TAGS, PageNodes, site_kind

if TYPE_CHECKING:
    import pyarrow as pa

    from newscrawl.storage.writer import ParquetDatasetWriter

__all__ = [
    "NODES_PARTITION_BY",
    "NODE_COLUMNS",
    "nodes_columns",
    "nodes_schema",
    "nodes_table",
    "nodes_writer",
]

# Columns of the `nodes` dataset, in order (features are float32, one column each).
NODE_COLUMNS: tuple[str, ...] = (
    *("site", "kind", "url", "page", "node", "parent", "depth", "tag", "area", "bucket"),
    "geometry",  # the provider the boxes (area, distances) came from: static, flow, chromium
    *FEATURES,
    *("label", "crawl"),
)
# The nodes dataset is Hive-partitioned like pages and articles:
# NODES/crawl=<id>/site=<site>/part-*.parquet (crawl and site live in the folder names).
NODES_PARTITION_BY = ("crawl", "site")

_STRING_COLUMNS = frozenset({"site", "kind", "url", "tag", "geometry", "crawl"})


def nodes_columns(
    pages: Sequence[PageNodes],
    labels: Sequence[np.ndarray],
    crawl: str = "",
    site: str | None = None,
    kind: str | None = None,
    first_page: int = 0,
) -> dict[str, np.ndarray | list]:
    """Column arrays of the `nodes` dataset for these pages (see NODE_COLUMNS); the pages are
    numbered from `first_page` (a site's rows made a few pages at a time)."""
    parts: dict[str, list] = {name: [] for name in NODE_COLUMNS}
    kind = kind or site_kind(pages)
    for index, (page, label) in enumerate(zip(pages, labels, strict=True), first_page):
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
        parts["geometry"].append([page.geometry] * n)
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
    first_page: int = 0,
) -> pa.Table:
    """The `nodes` dataset rows as a pyarrow Table (pages numbered from `first_page`)."""
    import pyarrow as pa

    columns = nodes_columns(pages, labels, crawl=crawl, site=site, kind=kind, first_page=first_page)
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
        "geometry": pa.string(),
        "label": pa.bool_(),
        "crawl": pa.string(),
    }
    return pa.schema(
        [pa.field(name, types.get(name, pa.float32())) for name in NODE_COLUMNS],
        metadata={"dataset": "newscrawl nodes", "version": "2"},
    )


def nodes_writer(root: str | Path, **options: Any) -> ParquetDatasetWriter:
    """A dataset writer for `nodes` rows, partitioned by NODES_PARTITION_BY; write each site's
    table with ``writer.write_table(table, {"crawl": crawl, "site": site})``."""
    from newscrawl.storage.writer import ParquetDatasetWriter

    options.setdefault("row_group_rows", 65_536)
    options.setdefault("file_rows", 1_000_000)
    return ParquetDatasetWriter(root, nodes_schema(), NODES_PARTITION_BY, **options)
