"""Batch stages over stored Parquet datasets, one Dask task per site (dask.distributed).

The template stage works site by site (SiteLevel compares a site's pages with each other; a model
re-extracts pages independently, but a site's pages sit in the same shards), so the unit of batch
work is the site, as it is for crawling. A stage is a picklable callable
``stage(site, table) -> pyarrow.Table | None`` applied to all rows of one site; `run_stage`

1. scans only the site column of every file to learn which files hold which sites,
2. submits one task per site that reads just those files (filtered to the site), runs the stage and
   writes ``OUT/part-<site>.parquet`` itself (atomically: temporary name, then rename), so results
   never travel through the scheduler,
3. returns a `StageReport` (rows and seconds per site, failures by site).

Without a client the same code runs in this process, which is the single-process reference the
distributed run must match row for row. With ``--cluster tcp://host:8786`` the tasks go to an
existing Dask scheduler (its workers must see the same dataset and output paths, e.g. over NFS or
a shared disk); otherwise a LocalCluster of N single-threaded worker processes is started.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from newscrawl.extractors import DEFAULT_EXTRACTOR
from newscrawl.storage.slugs import slug

if TYPE_CHECKING:
    import pyarrow as pa
    from distributed import Client

__all__ = [
    "SiteResult",
    "StageReport",
    "add_cluster_arguments",
    "dask_client",
    "load_site",
    "plan_sites",
    "read_output",
    "run_stage",
    "site_slug",
    "warm_up",
]

# Output partition columns when a stage does not name its own (the crawl datasets' layout).
DEFAULT_PARTITION_BY = ("crawl", "site")

SiteStage = Callable[[str, "pa.Table"], "pa.Table | None"]


@dataclass(frozen=True, slots=True)
class SiteResult:
    site: str
    rows: int
    seconds: float
    path: str | None = None
    error: str | None = None


@dataclass(slots=True)
class StageReport:
    """What a stage did: per-site results, in site order."""

    results: list[SiteResult] = field(default_factory=list)
    seconds: float = 0.0
    workers: int = 1

    @property
    def rows(self) -> int:
        return sum(r.rows for r in self.results)

    @property
    def failed(self) -> dict[str, str]:
        return {r.site: r.error for r in self.results if r.error}

    def summary(self) -> str:
        rate = self.rows / self.seconds if self.seconds > 0 else 0.0
        text = (
            f"{len(self.results)} sites, {self.rows} rows in {self.seconds:.1f}s "
            f"({rate:.1f} rows/s, {self.workers} worker(s))"
        )
        if self.failed:
            text += f"; {len(self.failed)} site(s) failed: " + "; ".join(
                f"{site}: {error}" for site, error in sorted(self.failed.items())
            )
        return text


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """--cluster and --dask-workers, for every batch command that can run on Dask."""
    parser.add_argument(
        "--cluster",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run on Dask, one task per site: on the scheduler at ADDRESS (tcp://host:8786), or "
        "on a LocalCluster when no ADDRESS is given; without --cluster: in this process",
    )
    parser.add_argument(
        "--dask-workers",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="worker processes of the LocalCluster (default: one per core)",
    )


@contextmanager
def dask_client(cluster: str | None, n_workers: int = 2) -> Iterator[Client | None]:
    """A Dask client: None (in-process) when `cluster` is None, a LocalCluster of `n_workers`
    single-threaded processes for "local", else a connection to the scheduler at `cluster`.

    Single-threaded worker processes, because the stages are pure-Python CPU work the GIL would
    serialise.
    """
    if cluster is None:
        yield None
        return
    from distributed import Client, LocalCluster

    if cluster == "local":
        if n_workers < 1:
            raise ValueError("--dask-workers must be at least 1")
        with (
            LocalCluster(
                n_workers=n_workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=40,
            ) as local,
            Client(local) as client,
        ):
            yield client
        return
    with Client(cluster, timeout="20s") as client:
        yield client


def site_slug(site: str) -> str:
    """A file-name-safe, collision-free name for a site."""
    return slug(site, site, unsafe=r"[^A-Za-z0-9.-]+", limit=60, fallback="site")


def plan_sites(dataset: str | Path, site_column: str = "site") -> dict[str, list[str]]:
    """site -> the Parquet files of `dataset` holding its rows. Site partition folders are read
    from their names; files without one have just their site column read."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    from newscrawl.storage.datasets import open_parquet

    data = open_parquet(dataset)
    if site_column not in data.schema.names:
        raise ValueError(f"{dataset}: no {site_column!r} column (columns: {data.schema.names})")
    files: dict[str, list[str]] = {}
    for fragment in data.get_fragments():
        keys = ds.get_partition_keys(fragment.partition_expression)
        if site_column in keys:
            sites = [keys[site_column]]
        else:
            column = fragment.to_table(columns=[site_column]).column(site_column)
            sites = pc.unique(column).to_pylist()
        for site in sites:
            if site is not None:
                files.setdefault(str(site), []).append(fragment.path)
    return dict(sorted(files.items()))


def load_site(
    dataset: str | Path,
    files: Sequence[str],
    site: str,
    columns: Sequence[str] | None = None,
    site_column: str = "site",
) -> pa.Table:
    """All rows of `site` in `files` of `dataset` (a file may hold other sites too)."""
    import pyarrow.dataset as ds

    from newscrawl.storage.datasets import open_parquet

    data = open_parquet(list(files), base_dir=dataset)
    wanted = None if columns is None else [c for c in columns if c in data.schema.names]
    return data.to_table(columns=wanted, filter=ds.field(site_column) == site)


def run_site(
    stage: SiteStage,
    dataset: str,
    site: str,
    files: Sequence[str],
    out: str,
    columns: Sequence[str] | None = None,
    partition_by: Sequence[str] = DEFAULT_PARTITION_BY,
) -> SiteResult:
    """One task: read a site, run the stage, write its part file(s). Errors are returned, not
    raised, so one broken site is reported instead of failing the whole stage."""
    started = time.perf_counter()
    try:
        table = stage(site, load_site(dataset, files, site, columns))
        if table is None or table.num_rows == 0:
            return SiteResult(site, 0, time.perf_counter() - started)
        paths = write_partitioned(table, Path(out), partition_by, f"part-{site_slug(site)}")
        return SiteResult(site, table.num_rows, time.perf_counter() - started, paths[0])
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        return SiteResult(site, 0, time.perf_counter() - started, error=error)


def write_partitioned(
    table: pa.Table, out: Path, partition_by: Sequence[str], name: str
) -> list[str]:
    """Write `table` as OUT/col=value/.../NAME.parquet, one file per partition present (the
    partition columns live in the folder names, as `newscrawl.storage` writes them), each
    file written under a hidden name and renamed once complete."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from newscrawl.storage.writer import partition_dir

    # a column with nulls cannot name a folder: it stays inside the files
    keys = [c for c in partition_by if c in table.column_names and table.column(c).null_count == 0]
    groups: list[tuple[dict[str, str], pa.Table]] = [({}, table)]
    for key in keys:
        split = []
        for values, part in groups:
            for value in pc.unique(part.column(key)).to_pylist():
                mask = pc.equal(part.column(key), value)
                split.append(({**values, key: str(value)}, part.filter(mask)))
        groups = split
    paths = []
    for values, part in groups:
        folder = partition_dir(out, values)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.parquet"
        tmp = folder / f".{name}.{os.getpid()}.tmp"
        pq.write_table(part.drop_columns(keys), tmp)
        tmp.replace(path)
        paths.append(str(path))
    return paths


def warm_up(client: Client, stage: SiteStage) -> None:
    """Import and build what `stage` needs on every worker once, before timing anything."""
    prepare = getattr(stage, "prepare", None)
    if prepare is not None:
        client.run(prepare)


def run_stage(
    stage: SiteStage,
    dataset: str | Path,
    out: str | Path,
    *,
    client: Client | None = None,
    columns: Sequence[str] | None = None,
    sites: Sequence[str] | None = None,
    progress: Callable[[SiteResult], Any] | None = None,
) -> StageReport:
    """Apply `stage` to every site of `dataset` (or just `sites`), writing OUT/part-*.parquet."""
    started = time.perf_counter()
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    if columns is None:
        columns = getattr(stage, "columns", None)
    partition_by = tuple(getattr(stage, "partition_by", DEFAULT_PARTITION_BY))
    plan = plan_sites(dataset)
    if sites is not None:
        plan = {site: plan[site] for site in sites if site in plan}
    report = StageReport(workers=_worker_count(client))
    tasks = [
        (stage, str(dataset), site, files, str(out_dir), columns, partition_by)
        for site, files in plan.items()
    ]
    results = _run_here(tasks) if client is None else _run_on(client, tasks)
    for result in results:
        report.results.append(result)
        if progress:
            progress(result)
    report.results.sort(key=lambda r: r.site)
    report.seconds = time.perf_counter() - started
    return report


def _run_here(tasks: list[tuple[Any, ...]]) -> Iterator[SiteResult]:
    """The tasks one after another in this process (the reference run)."""
    for task in tasks:
        yield run_site(*task)


def _run_on(client: Client, tasks: list[tuple[Any, ...]]) -> Iterator[SiteResult]:
    """The tasks on Dask, one per site; results as they complete."""
    from distributed import as_completed

    futures = [
        client.submit(
            run_site, *task, key=f"site-{site_slug(task[2])}-{time.monotonic_ns()}", pure=False
        )
        for task in tasks
    ]
    for future in as_completed(futures):
        yield future.result()


def read_output(out: str | Path, sort_by: Sequence[str] = ("site", "url")) -> pa.Table:
    """A stage's output as one table, sorted so runs can be compared row for row."""
    from newscrawl.storage.datasets import open_parquet

    table = open_parquet(out).to_table()
    keys = [(name, "ascending") for name in sort_by if name in table.schema.names]
    return table.sort_by(keys) if keys else table


def _worker_count(client: Client | None) -> int:
    if client is None:
        return 1
    return len(client.scheduler_info().get("workers", {})) or 1


@dataclass(frozen=True, slots=True)
class ReExtract:
    """Stage: extract title and text again from stored pages, with another extractor or model.

    Rows of the pages dataset need `url` and the raw page in `html_column`. A site's pages go
    through the crawl's site pass (`newscrawl.site.saved_pages`), as `newscrawl extract`
    takes them, so the default extractor gives the articles the crawl wrote; `site_pass`
    False extracts page by page, with the site's template for an extractor that reads one.
    `options` are the extractor's config overrides; with `model`, the template model's filter
    runs first (`extractor` "template": the filter alone) and pages go one by one with their
    site's template, as `newscrawl extract --model` does. The extractor is built once per
    worker process, not shipped with every task. Each row has the text's `markdown` (links
    and images as `links` and `images` say) and the page's `comments`, as the crawl writes them.
    """

    extractor: str = DEFAULT_EXTRACTOR
    options: tuple[tuple[str, Any], ...] = ()
    html_column: str = "html"
    model: str | None = None  # a template model (`newscrawl train`): filter, then `extractor`
    site_pass: bool = True
    crawl: str | None = None  # the crawl of rows without one (PAGES is one crawl=ID folder)
    links: bool = False  # the Markdown writes links as [text](href)
    images: bool = False  # the Markdown writes images as ![alt](src)

    @property
    def columns(self) -> list[str]:
        return ["site", "crawl", "url", "content_type", self.html_column]

    def prepare(self) -> None:
        _cached_extractor(self.extractor, self.options, self.model)

    def __call__(self, site: str, table: pa.Table) -> pa.Table:
        import pyarrow as pa

        from newscrawl.extractors import TEMPLATE
        from newscrawl.extractors.markdown import MarkdownOptions
        from newscrawl.site.saved_pages import Item, RecordFields, site_records

        extractor = _cached_extractor(self.extractor, self.options, self.model)
        crawls = [self.crawl if c is None else c for c in _column(table, "crawl")]
        urls = table.column("url").to_pylist()
        pages = table.column(self.html_column).to_pylist()
        types = _column(table, "content_type")
        items = [
            (i, Item(url, _page_bytes(html), url, site, content_type))
            for i, (url, html, content_type) in enumerate(zip(urls, pages, types, strict=True))
        ]
        with_pass = self.site_pass and self.model is None and self.extractor != TEMPLATE
        # each crawl's pages of the site through their own pass, as each crawl passed them: a
        # folder of scheduled runs holds the site's pages of every day
        by_crawl: dict[str | None, list[tuple[int, Item]]] = {}
        for index, item in items:
            by_crawl.setdefault(crawls[index], []).append((index, item))
        records: dict[int, dict[str, Any]] = {}
        fields = RecordFields(MarkdownOptions(self.links, self.images), comments=True)
        for group in by_crawl.values():
            records.update(site_records(extractor, group, with_pass, fields=fields))
        rows = [
            {"site": site, "crawl": crawls[i], "url": urls[i], "title": records[i]["title"],
             "text": records[i]["text"], "markdown": records[i].get("markdown"),
             "comments": records[i].get("comments"), "extractor": records[i]["extractor"],
             "error": records[i].get("error")}
            for i in range(len(items))
        ]  # fmt: skip
        columns = ("site", "crawl", "url", "title", "text", "markdown", "comments")
        schema = pa.schema(
            [(name, pa.string()) for name in columns]
            + [("extractor", pa.string()), ("error", pa.string())]
        )
        return pa.Table.from_pylist(rows, schema=schema).sort_by([("url", "ascending")])


def _page_bytes(html: bytes | str | None) -> bytes:
    """A stored page as bytes (a missing one as no bytes: its record says it is empty)."""
    if isinstance(html, str):
        return html.encode("utf-8")
    return html or b""


def _column(table: pa.Table, name: str) -> list[Any]:
    """A column as a list, or nulls when the table does not have it."""
    if name in table.column_names:
        return table.column(name).to_pylist()
    return [None] * table.num_rows


_EXTRACTORS: dict[tuple[Any, ...], Any] = {}


def _cached_extractor(
    name: str, options: tuple[tuple[str, Any], ...], model: str | None = None
) -> Any:
    key = (name, options, model)
    if key not in _EXTRACTORS:
        if model is not None:
            from newscrawl.extractors.template_filter import build_template_extractor

            _EXTRACTORS[key] = build_template_extractor(name, model)
        else:
            from newscrawl.extractors import get_extractor

            _EXTRACTORS[key] = get_extractor(name, **dict(options))
    return _EXTRACTORS[key]


@dataclass(frozen=True, slots=True)
class SiteLevelStage:
    """Stage: SiteLevel labels for one site's stored pages -> its rows of the `nodes` dataset.

    `newscrawl.template.sitelevel.run_sitelevel` - the stage `newscrawl sitelevel` and the
    crawl's site pass run - one site per task: successful pages only, at most `max_pages` of
    them (in URL order, so every run takes the same ones). Rows are written to
    NODES/crawl=<crawl>/site=<site>/ as the command and the crawl write them.
    """

    p: float = 0.10
    html_share: float = 0.85
    min_pages: int = 5
    max_pages: int | None = 200
    geometry: str = "flow"
    kind: str | None = None
    crawl: str = "offline"
    share_of: str = "text"
    method: str = "sitelevel"  # or another site-level method (newscrawl.template.sitemethods)

    columns: tuple[str, ...] = ("site", "url", "final_url", "status", "content_type", "html")

    @property
    def partition_by(self) -> tuple[str, ...]:
        from newscrawl.template.node_table import NODES_PARTITION_BY

        return tuple(NODES_PARTITION_BY)

    def prepare(self) -> None:
        import newscrawl.template.node_records
        import newscrawl.template.sitelevel  # noqa: F401

    def __call__(self, site: str, table: pa.Table) -> pa.Table | None:
        from newscrawl.template.sitelevel import SiteLevelConfig, raw_page, run_sitelevel

        raws = [raw for raw in map(raw_page, table.to_pylist()) if raw is not None]
        config = SiteLevelConfig(
            p=self.p, html_share=self.html_share, share_of=self.share_of, min_pages=self.min_pages
        )
        run = run_sitelevel(
            site,
            raws,
            config=config,
            geometry=self.geometry,
            max_pages=self.max_pages,
            method=self.method,
        )
        return run.table(crawl=self.crawl, kind=self.kind)


@dataclass(frozen=True, slots=True)
class TrainingSet:
    """Stage: one site's share of a training set, from its `nodes` rows.

    Keeps the columns `newscrawl train` reads (site, kind, area, the features, label), only
    the nodes `newscrawl.training.template_train.training_rows` keeps (the requested kind, an area
    of
    at least `min_area`, finite features), and at most `max_nodes` per site, sampled with a
    seed derived from the site, so the set does not depend on how sites were spread over
    workers.
    """

    kind: str = "all"
    min_area: float | None = None
    max_nodes: int | None = None
    seed: int = 0

    partition_by: tuple[str, ...] = ("site",)

    @property
    def columns(self) -> list[str]:
        from newscrawl.template.node_features import FEATURES

        return ["site", "kind", "area", *FEATURES, "label"]

    def __call__(self, site: str, table: pa.Table) -> pa.Table | None:
        import numpy as np

        from newscrawl.template.buckets import MIN_AREA
        from newscrawl.template.node_features import FEATURES
        from newscrawl.training.template_train import training_rows

        features = np.column_stack(
            [table.column(name).to_numpy(zero_copy_only=False) for name in FEATURES]
        ).reshape(table.num_rows, len(FEATURES))
        keep = training_rows(
            np.asarray(table.column("kind").to_pylist(), dtype=object),
            table.column("area").to_numpy(zero_copy_only=False),
            features.astype(np.float64),
            self.kind,
            self.min_area if self.min_area is not None else MIN_AREA,
        )
        table = table.take(np.flatnonzero(keep))
        if self.max_nodes is not None and table.num_rows > self.max_nodes:
            digest = hashlib.blake2b(f"{self.seed}:{site}".encode(), digest_size=8).digest()
            rng = np.random.default_rng(int.from_bytes(digest, "big"))
            rows = np.sort(rng.choice(table.num_rows, self.max_nodes, replace=False))
            table = table.take(rows)
        return table
