"""Reading newscrawl's Parquet datasets back: one `open_parquet` for every reader (Dask stages,
shards, training, template sources), Hive partition columns read as strings."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pyarrow.dataset as ds

__all__ = ["hive_keys", "open_parquet"]


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith((".", "_")) for part in path.relative_to(root).parts)


def hive_keys(root: str | Path, first_file: str | Path | None = None) -> list[str]:
    """The ``key=value`` folder names between `root` and its first Parquet file (the crawl's
    datasets have crawl= and site=, the offline `newscrawl sitelevel` output site=; a flat
    dataset none)."""
    root = Path(root)
    if first_file is None:
        first_file = next(
            (p for p in sorted(root.rglob("*.parquet")) if not _hidden(p, root)), None
        )
        if first_file is None:
            return []
    parts = Path(first_file).relative_to(root).parts[:-1]
    return [part.split("=", 1)[0] for part in parts if "=" in part]


def open_parquet(
    dataset: str | Path | Sequence[str],
    partitions: Sequence[str] | None = None,
    base_dir: str | Path | None = None,
    exclude_invalid_files: bool = False,
) -> ds.Dataset:
    """A Parquet dataset (a folder, or files under `base_dir`) with its Hive partition columns,
    read as strings (pyarrow would turn a numeric-looking crawl id or site into an integer).

    The partition columns are `partitions` when given, else the ``key=`` folder names found
    (`hive_keys`). `exclude_invalid_files` skips files that are not Parquet (pyarrow reads every
    file's footer to know)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    source: str | list[str]
    if isinstance(dataset, list | tuple):
        source = [str(p) for p in dataset]
        found = hive_keys(base_dir, source[0]) if base_dir is not None and source else []
    else:
        source = str(dataset)
        found = hive_keys(source) if partitions is None and Path(source).is_dir() else []
    keys = list(partitions) if partitions is not None else found
    if not keys:
        return ds.dataset(source, format="parquet", exclude_invalid_files=exclude_invalid_files)
    partitioning = ds.partitioning(pa.schema([(k, pa.string()) for k in keys]), flavor="hive")
    return ds.dataset(
        source,
        format="parquet",
        partitioning=partitioning,
        partition_base_dir=str(base_dir) if base_dir is not None else None,
        exclude_invalid_files=exclude_invalid_files,
    )
