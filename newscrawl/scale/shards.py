"""Where crawl workers put their Parquet shards, and how the shards read as one dataset.

Under the shared output root OUT (a local disk, or one disk shared by the workers' machines)::

    OUT/_staging/WORKER/DATASET/crawl=RUN/site=NAME/part-*.parquet   a site being crawled
    OUT/DATASET/crawl=RUN/site=NAME/part-*.parquet                   a site crawled to the end

The published layout is the single-machine crawl's (`newscrawl.storage`), so every reader of a
crawl reads OUT as it is. A worker writes a site into its own staging folder and, once the site is
finished, moves each of the site's partition folders into place with one rename, before it tells
Redis the site is done. So:

- a worker killed mid-site leaves only staging files, which no reader looks at (pyarrow skips
  names starting with ``_``); the site is leased again and crawled whole by another worker;
- a rename onto a partition folder that already has files fails, so if two attempts of one site
  both finish (a lease expired while a slow worker was still alive) the first one published stays
  and the second is dropped: every page and article is in OUT exactly once.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from newscrawl.crawl.extensions.state import DATASETS, STATE_DIR
from newscrawl.storage.writer import fsync_path, partition_dir

__all__ = [
    "DATASETS",
    "STAGING_DIR",
    "abandoned_partitions",
    "check_merge",
    "dataset_names",
    "discard_attempt",
    "merge",
    "publish_partition",
    "staging_root",
]

STAGING_DIR = "_staging"


def staging_root(out: str | Path, worker: str) -> Path:
    """The NEWSCRAWL_OUT of one worker process."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in worker) or "_"
    return Path(out) / STAGING_DIR / safe


def publish_partition(
    folder: str | Path, out: str | Path, dataset: str, crawl: str, site: str
) -> bool:
    """Move a finished site's staged partition folder to OUT/DATASET/crawl=/site=; False (and the
    staged copy deleted) when that site is already published there by another attempt."""
    target = partition_dir(Path(out) / dataset, {"crawl": crawl, "site": site})
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(folder, target)
    except OSError as exc:
        if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
            raise
        discard_attempt(folder)
        return False
    fsync_path(target.parent)  # a site reported done must survive a power loss
    return True


def discard_attempt(path: str | Path) -> None:
    """Remove a staged attempt (leftovers of a retried site, or a duplicate)."""
    shutil.rmtree(path, ignore_errors=True)


def dataset_names(out: str | Path) -> list[str]:
    """The datasets published under OUT (folders that are not staging or crawl state)."""
    root = Path(out)
    if not root.is_dir():
        return []
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir()
        and not p.name.startswith(("_", "."))
        and p.name != STATE_DIR
        and next(p.rglob("*.parquet"), None) is not None  # a folder of other files is no dataset
    )


def abandoned_partitions(out: str | Path) -> list[Path]:
    """Staged site partitions still holding complete files: sites of workers that died (their
    sites were crawled again elsewhere) or of workers still running."""
    staging = Path(out) / STAGING_DIR
    if not staging.is_dir():
        return []
    return sorted(
        p for p in staging.glob("*/*/crawl=*/site=*") if p.is_dir() and any(p.glob("*.parquet"))
    )


def merge(
    out: str | Path,
    into: str | Path,
    datasets: Iterable[str] | None = None,
    *,
    rows_per_file: int = 250_000,
) -> dict[str, int]:
    """Copy the published datasets of OUT to INTO, compacted to few large files per site
    partition, streaming (never a whole dataset in memory); returns rows per dataset."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    from newscrawl.storage.datasets import open_parquet

    names = list(datasets if datasets is not None else dataset_names(out))
    check_merge(Path(out), Path(into), names, rows_per_file)
    counts: dict[str, int] = {}
    written: list[Path] = []
    try:
        for name in names:
            target = Path(into) / name
            if not target.exists():
                written.append(target)
            data = open_parquet(Path(out) / name)
            partitioned = {"crawl", "site"} <= set(data.schema.names)
            ds.write_dataset(
                data,
                target,
                format="parquet",
                partitioning=ds.partitioning(
                    pa.schema([data.schema.field("crawl"), data.schema.field("site")]),
                    flavor="hive",
                )
                if partitioned
                else None,
                basename_template="part-merged-{i}.parquet",
                max_rows_per_file=rows_per_file,
                max_rows_per_group=min(rows_per_file, 64 * 1024),
                existing_data_behavior="overwrite_or_ignore",
            )
            counts[name] = data.count_rows()
    except (pa.ArrowException, OSError) as exc:
        for target in written:  # a failed merge leaves INTO as it found it, ready for a retry
            shutil.rmtree(target, ignore_errors=True)
        raise ValueError(f"{name}: {exc} (nothing of this merge is left in {into})") from exc
    return counts


def check_merge(out: Path, into: Path, names: list[str], rows_per_file: int) -> None:
    """Refuse a merge that cannot work before anything is written."""
    if rows_per_file < 1:
        raise ValueError(f"--rows-per-file must be at least 1, not {rows_per_file}")
    if into.resolve() == out.resolve() or out.resolve() in into.resolve().parents:
        raise ValueError(f"{into} is inside {out}: merge into a folder outside it")
    for name in names:
        if not (out / name).is_dir():
            raise FileNotFoundError(f"{out / name}: no such dataset")
        target = into / name
        if target.exists() and any(target.rglob("*.parquet")):
            raise FileExistsError(f"{target} already has files; merge into an empty directory")
