"""A Parquet dataset writer that a crash or a kill can never leave with a torn file.

Layout (Hive partitioning, which pyarrow, pandas, polars and DuckDB all read)::

    root/crawl=<id>/site=<name>/part-<run>-<seq>.parquet

Each partition has at most one open file. Rows are buffered and written as a row group when the
buffer reaches `row_group_rows` rows or `row_group_bytes` bytes, so memory stays bounded however
long the crawl runs. An open file is written under a hidden temporary name in its final folder
(``.part-....parquet.tmp``: every reader skips names starting with a dot and not ending in
``.parquet``) and is renamed with `os.replace` only once its footer is written and synced. A
rename within one folder is atomic, so a reader sees a complete file or no file; a kill loses at
most the rows of the files still open, which a resumed crawl fetches again.

Files rotate after `file_rows` rows or `file_seconds` seconds, which bounds what a kill can lose:
a partition's rows reach a complete file at most `file_seconds` after the first of them arrived,
whether they were still in the buffer or in an open file, as long as something calls `write` or
`rotate_old` (a crawl's pipelines call it every second).
`sync_folders=False` leaves the folder's sync after a rename to whoever moves the file on (an
ingest's staging folder, whose files are moved into OUT and synced there).
Partition columns are not stored inside the files (readers rebuild them from the folder names;
pyarrow refuses a dataset that has them both ways).
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = [
    "ParquetDatasetWriter",
    "closed_files",
    "closed_partitions",
    "fsync_path",
    "new_run_id",
    "partition_dir",
    "read_column",
    "read_columns",
    "remove_torn_files",
    "warm_conversions",
]

Partition = tuple[tuple[str, str], ...]
TMP_SUFFIX = ".tmp"
_SCALARS = (int, float, datetime)  # a row's values that count 8 bytes each in `_value_size`
logger = logging.getLogger(__name__)

_WARMING: list[threading.Thread] = []


def warm_conversions() -> None:
    """Start, once per process, a thread that makes pyarrow's first conversion of Python
    values now: pyarrow imports pandas for it (when installed), which would otherwise stall a
    crawl's reactor at its first row group. Started when a crawl opens, the
    import runs while the first requests are on the wire."""
    if _WARMING:
        return
    thread = threading.Thread(target=pa.array, args=([0],), name="pyarrow-warm-up", daemon=True)
    _WARMING.append(thread)
    thread.start()


def new_run_id() -> str:
    """A name part unique to this writer run: UTC time, then random hex (sorts by time)."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(3)}"


def partition_dir(root: Path, partition: Mapping[str, Any]) -> Path:
    """The folder of one partition: ``root/col=value/...``, values percent-encoded as Hive
    expects (pyarrow decodes them; plain host names and ids come out unchanged)."""
    path = root
    for name, value in partition.items():
        path = path / f"{name}={quote(str(value), safe='')}"
    return path


def _value_size(value: Any) -> int:
    """Rough bytes a value adds to a row group (strings and blobs dominate)."""
    if isinstance(value, str | bytes):
        return len(value)
    if value is None or isinstance(value, _SCALARS):  # most values: no ABC look-up
        return 8
    if isinstance(value, Mapping):
        return sum(len(str(k)) + _value_size(v) for k, v in value.items())
    return 8


@dataclass(slots=True)
class _OpenFile:
    """One partition's file being written."""

    final: Path
    tmp: Path
    writer: pq.ParquetWriter
    opened: float  # when its oldest row arrived (in the buffer, before the file was opened)
    rows: int = 0


@dataclass(slots=True)
class _Buffer:
    rows: list[Mapping[str, Any]] = field(default_factory=list)
    tables: list[pa.Table] = field(default_factory=list)
    count: int = 0
    nbytes: int = 0
    since: float = field(default_factory=time.monotonic)  # when its first row arrived


class ParquetDatasetWriter:
    """Append rows or tables to a Hive-partitioned Parquet dataset under `root`.

    `schema` is the full row schema, partition columns included or not; the files hold the
    other columns. Partition values come from the `partition` argument of `write`, or else from
    the row's own columns named in `partition_by`.

    Use as a context manager, or call `close()`: a writer that is garbage-collected without
    being closed leaves only hidden temporary files, which `remove_torn_files` clears.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        schema: pa.Schema,
        partition_by: Sequence[str] = (),
        *,
        run_id: str | None = None,
        row_group_rows: int = 1024,
        row_group_bytes: int = 32 * 1024 * 1024,
        file_rows: int = 100_000,
        file_seconds: float | None = None,
        compression: str = "zstd",
        sync_folders: bool = True,
    ) -> None:
        if row_group_rows < 1 or file_rows < 1:
            raise ValueError("row_group_rows and file_rows must be at least 1")
        self.root = Path(root)
        self.partition_by = tuple(partition_by)
        self.schema = schema
        keep = [f for f in schema if f.name not in self.partition_by]
        self.file_schema = pa.schema(keep, metadata=schema.metadata)
        self.run_id = run_id or new_run_id()
        self.row_group_rows = row_group_rows
        self.row_group_bytes = row_group_bytes
        self.file_rows = file_rows
        self.file_seconds = file_seconds
        self.compression = compression
        self.sync_folders = sync_folders
        self.closed: list[Path] = []  # files closed since the start or `forget_closed`
        self.files_closed = 0
        self.rows_written = 0
        self._buffers: dict[Partition, _Buffer] = {}
        self._open: dict[Partition, _OpenFile] = {}
        self._seq = 0

    # -- writing -------------------------------------------------------------------------------

    def write(self, row: Mapping[str, Any], partition: Mapping[str, Any] | None = None) -> None:
        """Buffer one row (a mapping of column name to value); missing columns are null."""
        key = self._key(row, partition)
        buffer = self._buffers.setdefault(key, _Buffer())
        buffer.rows.append(row)
        buffer.count += 1
        buffer.nbytes += sum(map(_value_size, row.values()))
        self._after_append(key, buffer)

    def write_rows(
        self, rows: Iterable[Mapping[str, Any]], partition: Mapping[str, Any] | None = None
    ) -> None:
        for row in rows:
            self.write(row, partition)

    def write_table(self, table: pa.Table, partition: Mapping[str, Any]) -> None:
        """Buffer a whole table for one partition (columns missing from it are null)."""
        key = self._key({}, partition)
        buffer = self._buffers.setdefault(key, _Buffer())
        buffer.tables.append(self._conform(table))
        buffer.count += table.num_rows
        buffer.nbytes += table.nbytes
        self._after_append(key, buffer)

    def flush(self, partition: Mapping[str, Any] | None = None) -> None:
        """Write buffered rows (of one partition, or of all) to their files as row groups."""
        keys = [self._key({}, partition)] if partition is not None else list(self._buffers)
        for key in keys:
            self._flush(key)

    def close_partition(self, partition: Mapping[str, Any]) -> Path | None:
        """Flush and close one partition's open file; returns the closed file, if any."""
        key = self._key({}, partition)
        self._flush(key)
        return self._close_file(key)

    def close(self) -> list[Path]:
        """Flush everything and close every open file. Returns the files this writer closed
        (since `forget_closed`, if called)."""
        for key in list(self._buffers):
            self._flush(key)
        for key in list(self._open):
            self._close_file(key)
        return list(self.closed)

    def rotate_old(self) -> int:
        """Close every partition whose oldest unsaved row is `file_seconds` old (buffered or in
        an open file); returns how many files were closed."""
        return self._close_old_files()

    def forget_closed(self) -> None:
        """Let go of the list of files closed so far (a long-lived writer whose files are moved
        on as they close - an ingest's - would otherwise keep a path per file forever)."""
        self.closed.clear()

    def abort(self) -> None:
        """Drop buffered rows and delete the open temporary files (nothing half-written stays)."""
        self._buffers.clear()
        for key in list(self._open):
            handle = self._open.pop(key)
            try:
                handle.writer.close()
            finally:
                handle.tmp.unlink(missing_ok=True)

    def __enter__(self) -> ParquetDatasetWriter:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    # -- internals -----------------------------------------------------------------------------

    def _key(self, row: Mapping[str, Any], partition: Mapping[str, Any] | None) -> Partition:
        source = partition if partition is not None else row
        try:
            return tuple((name, str(source[name])) for name in self.partition_by)
        except KeyError as err:
            raise ValueError(f"no value for partition column {err.args[0]!r}") from None

    def _conform(self, table: pa.Table) -> pa.Table:
        """`table` with exactly the file schema's columns, in order, cast to their types."""
        columns = []
        for f in self.file_schema:
            if f.name in table.column_names:
                columns.append(table.column(f.name).cast(f.type))
            else:
                columns.append(pa.nulls(table.num_rows, f.type))
        return pa.Table.from_arrays(columns, schema=self.file_schema)

    def _after_append(self, key: Partition, buffer: _Buffer) -> None:
        handle = self._open.get(key)
        in_file = handle.rows if handle is not None else 0
        if (
            buffer.count >= self.row_group_rows
            or buffer.nbytes >= self.row_group_bytes
            or buffer.count + in_file >= self.file_rows
        ):
            self._flush(key)
        self._close_old_files()

    def _flush(self, key: Partition) -> None:
        buffer = self._buffers.pop(key, None)
        if buffer is None or buffer.count == 0:
            return
        parts = list(buffer.tables)
        if buffer.rows:
            parts.append(pa.Table.from_pylist(buffer.rows, schema=self.file_schema))
        table = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        handle = self._open.get(key) or self._open_file(key, buffer.since)
        try:
            handle.writer.write_table(table, row_group_size=max(table.num_rows, 1))
        except BaseException:
            # a failed write (a full disk) leaves a file pyarrow would still close "fine",
            # torn: it is dropped, never published
            self._drop_file(key)
            raise
        handle.rows += table.num_rows
        self.rows_written += table.num_rows
        if handle.rows >= self.file_rows:
            self._close_file(key)

    def _open_file(self, key: Partition, since: float) -> _OpenFile:
        folder = partition_dir(self.root, dict(key))
        folder.mkdir(parents=True, exist_ok=True)
        self._seq += 1
        name = f"part-{self.run_id}-{self._seq:05d}.parquet"
        tmp = folder / f".{name}{TMP_SUFFIX}"
        writer = pq.ParquetWriter(tmp, self.file_schema, compression=self.compression)
        handle = _OpenFile(final=folder / name, tmp=tmp, writer=writer, opened=since)
        self._open[key] = handle
        return handle

    def _drop_file(self, key: Partition) -> None:
        """Forget partition `key`'s open file and delete it (its rows are lost)."""
        handle = self._open.pop(key)
        try:
            handle.writer.close()
        except OSError:
            pass  # the file goes anyway
        finally:
            handle.tmp.unlink(missing_ok=True)

    def _close_file(self, key: Partition) -> Path | None:
        handle = self._open.get(key)
        if handle is None:
            return None
        try:
            handle.writer.close()
            _check_footer(handle.tmp)
            fsync_path(handle.tmp)
        except BaseException:
            self._drop_file(key)
            raise
        del self._open[key]
        os.replace(handle.tmp, handle.final)
        if self.sync_folders:
            fsync_path(handle.final.parent)
        self.closed.append(handle.final)
        self.files_closed += 1
        return handle.final

    def _close_old_files(self) -> int:
        """Close the partitions whose oldest unsaved row is older than `file_seconds`, so a
        kill loses little."""
        if self.file_seconds is None:
            return 0
        oldest = time.monotonic() - self.file_seconds
        old = {key for key, handle in self._open.items() if handle.opened <= oldest}
        old.update(key for key, buffer in self._buffers.items() if buffer.since <= oldest)
        for key in old:
            self._flush(key)
        return sum(self._close_file(key) is not None for key in old)


def fsync_path(path: Path) -> None:
    """Push a file's (or a folder's, to make a rename in it durable) data to disk; best effort
    where the OS does not allow it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- reading back -----------------------------------------------------------------------------


def closed_files(
    root: str | os.PathLike[str], partition: Mapping[str, Any] | None = None
) -> list[Path]:
    """Every complete Parquet file under `root` (or under one partition of it), sorted.

    `partition` may name a prefix of the partition columns (e.g. only the crawl).
    """
    base = partition_dir(Path(root), partition or {})
    if not base.is_dir():
        return []
    return sorted(p for p in base.rglob("*.parquet") if not p.name.startswith((".", "_")))


def closed_partitions(
    root: str | os.PathLike[str], partition: Mapping[str, Any] | None = None
) -> list[tuple[Path, dict[str, str]]]:
    """Every complete Parquet file under `root` (or one partition of it, as `closed_files`)
    with its Hive partition values, decoded by pyarrow.dataset."""
    files = closed_files(root, partition)
    if not files:
        return []
    import pyarrow.dataset as ds  # here: it imports pandas, which a crawl's start need not wait for

    base = Path(root)
    # Every partition column is read as a string ("007" stays "007"); the names are the
    # folders' own, the values and their percent-encoding are pyarrow's to parse.
    names = dict.fromkeys(
        part.split("=", 1)[0]
        for path in files
        for part in path.relative_to(base).parts[:-1]
        if "=" in part
    )
    schema = pa.schema([(name, pa.string()) for name in names])
    dataset = ds.dataset(
        [str(path) for path in files],
        schema=schema,  # given, so no file is opened to infer one
        format="parquet",
        partitioning=ds.HivePartitioning(schema),
        partition_base_dir=str(base),
    )
    values = {
        fragment.path: ds.get_partition_keys(fragment.partition_expression)
        for fragment in dataset.get_fragments()
    }
    return [(path, {k: str(v) for k, v in values[str(path)].items()}) for path in files]


def read_columns(
    root: str | os.PathLike[str],
    columns: Sequence[str],
    partition: Mapping[str, Any] | None = None,
) -> Iterator[tuple[Path, dict[str, str], dict[str, list[Any]]]]:
    """(file, its partition values, {column: values}) for every complete file.

    A file that cannot be read (which atomic closing should make impossible) is skipped with a
    warning in the log rather than stopping a resume.
    """
    for path, parts in closed_partitions(root, partition):
        try:
            values = pq.read_table(path, columns=list(columns)).to_pydict()
        except (OSError, pa.ArrowException, KeyError) as err:
            logger.warning("cannot read %s: %s", path, err)
            continue
        yield path, parts, values


def read_column(
    root: str | os.PathLike[str],
    column: str,
    partition: Mapping[str, Any] | None = None,
) -> Iterator[tuple[Path, dict[str, str], list[Any]]]:
    """(file, its partition values, the column's values) for every complete file."""
    for path, parts, values in read_columns(root, [column], partition):
        yield path, parts, values[column]


def _check_footer(path: Path) -> None:
    """OSError unless `path` ends as a whole Parquet file does (its magic bytes)."""
    with path.open("rb") as file:
        size = file.seek(0, os.SEEK_END)
        if size >= 12:
            file.seek(-4, os.SEEK_END)
            if file.read(4) == b"PAR1":
                return
    raise OSError(f"{path}: not written whole (no Parquet footer)")


def remove_torn_files(
    root: str | os.PathLike[str], partition: Mapping[str, Any] | None = None
) -> int:
    """Delete the temporary files a killed writer left behind; returns how many."""
    base = partition_dir(Path(root), partition or {})
    if not base.is_dir():
        return 0
    count = 0
    for path in base.rglob(f".*{TMP_SUFFIX}"):
        path.unlink(missing_ok=True)
        count += 1
    return count
