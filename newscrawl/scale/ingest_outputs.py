"""Where an ingest writes, and how a WARC file's rows become part of the run all at once.

The pipelines write into a staging folder of their own (``OUT/_staging/ingest-HOST-PID``, which
no reader looks into) with the crawl's usual layout. When a WARC file is done, every file it
produced is moved into ``OUT/DATASET/crawl=RUN/site=HOST/`` under a name that starts with the
WARC file's slug (``part-SLUG-00001.parquet``), then a marker,
``OUT/.newscrawl/RUN/ingested/SLUG.json``, records the file as ingested with its report. A re-run
of the same run skips marked files; a file without a marker (the run was killed while it was
published) first has any part files of its slug removed, so no row is ever there twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from newscrawl.crawl.extensions.state import DATASETS, STATE_DIR
from newscrawl.storage.slugs import slug
from newscrawl.storage.writer import closed_files, fsync_path, partition_dir

__all__ = [
    "FileReport",
    "clear_partial",
    "file_slug",
    "marker_path",
    "publish",
    "read_marker",
    "remove_staging_root",
    "staging_dir",
    "sync_folders",
    "write_marker",
    "write_whole",
]

EXAMPLES_PER_KIND = 3
_STAGING = "_staging"


def file_slug(path: str | os.PathLike[str]) -> str:
    """A file-name-safe name for a WARC file, unique to its absolute path."""
    resolved = str(Path(path).resolve())
    name = Path(path).name
    for suffix in (".gz", ".warc", ".arc"):
        name = name.removesuffix(suffix)
    return slug(name, resolved, unsafe=r"[^A-Za-z0-9.]+", limit=80, fallback="warc")


@dataclass(slots=True)
class FileReport:
    """What one WARC file gave: records by type, pages and articles written, what was skipped
    and why, damage found, with a few examples of each."""

    file: str
    slug: str
    size: int = 0
    records: Counter[str] = field(default_factory=Counter)
    pages: int = 0
    articles: int = 0
    sites: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    problems: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    # of `seconds`, in parsing pages and in the extractors, when both ran in this process (the
    # site pass off): the rest is what the ingest adds around them
    extract_seconds: float = 0.0
    payload_bytes: int = 0

    def note(self, group: Counter[str], kind: str, example: str) -> None:
        group[kind] += 1
        examples = self.examples.setdefault(kind, [])
        if len(examples) < EXAMPLES_PER_KIND:
            examples.append(example)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("records", "skipped", "problems"):
            data[name] = dict(getattr(self, name))
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileReport:
        report = cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})
        for name in ("records", "skipped", "problems"):
            setattr(report, name, Counter(data.get(name) or {}))
        return report


def staging_dir(out: Path) -> Path:
    """This process's own staging folder under OUT."""
    return out / _STAGING / f"ingest-{socket.gethostname()}-{os.getpid()}"


def remove_staging_root(out: Path) -> None:
    """Remove OUT's staging folder once no process has its own folder in it."""
    with contextlib.suppress(OSError):  # another process is staging there, or it is gone
        (out / _STAGING).rmdir()


def marker_path(out: Path, run: str, slug: str) -> Path:
    return out / STATE_DIR / run / "ingested" / f"{slug}.json"


def read_marker(out: Path, run: str, slug: str) -> FileReport | None:
    try:
        return FileReport.from_json(json.loads(marker_path(out, run, slug).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def write_marker(out: Path, run: str, report: FileReport) -> Path:
    path = marker_path(out, run, report.slug)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_whole(path, json.dumps(report.to_json(), indent=1, sort_keys=True))
    fsync_path(path.parent)
    return path


def write_whole(path: Path, text: str) -> None:
    """`text` at `path`, whole or not at all. The temporary name is this process's own: the
    Dask tasks of a run write into the same folders at once."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    fsync_path(tmp)
    os.replace(tmp, path)


def _published(out: Path, run: str, slug: str) -> list[Path]:
    found: list[Path] = []
    for dataset in DATASETS:
        base = out / dataset / f"crawl={run}"
        if base.is_dir():
            found += base.glob(f"*/part-{slug}-*.parquet")
    return found


def clear_partial(out: Path, run: str, slug: str) -> int:
    """Remove what an interrupted ingest of this file published; how many files."""
    paths = _published(out, run, slug)
    for path in paths:
        path.unlink(missing_ok=True)
    return len(paths)


def publish(
    staging: Path,
    out: Path,
    slug: str,
    first: int = 1,
    partitions: Iterable[Mapping[str, Any]] | None = None,
    unsynced: set[Path] | None = None,
) -> int:
    """Move every complete file the pipelines wrote to `staging` into OUT's datasets, named
    after the WARC file and numbered from `first`; returns the next number. Files still being
    written stay where they are.

    `partitions` (``{"crawl": RUN, "site": HOST}`` each) limits the move to those partitions'
    folders, so an archive of thousands of hosts does not walk every host's staging folder each
    time one host is closed (emptied folders stay until the staging folder is removed at the
    end of the run: removing a folder costs a metadata write). The OUT folders that received
    files are synced to disk here, or added to `unsynced` for the caller to sync once (before
    it writes the file's marker)."""
    seq = first
    folders: set[Path] = set()
    chosen = None if partitions is None else [dict(p) for p in partitions]
    for dataset in DATASETS:
        root = staging / dataset
        bases = [root] if chosen is None else sorted({partition_dir(root, p) for p in chosen})
        for path in [path for base in bases for path in closed_files(base)]:
            target_dir = out / dataset / path.parent.relative_to(root)
            target_dir.mkdir(parents=True, exist_ok=True)
            os.replace(path, target_dir / f"part-{slug}-{seq:05d}.parquet")
            folders.add(target_dir)
            seq += 1
    if unsynced is not None:
        unsynced.update(folders)
    else:
        for folder in folders:
            fsync_path(folder)
    return seq


def sync_folders(folders: set[Path]) -> None:
    """Sync the OUT folders `publish` left to the caller, and forget them."""
    for folder in sorted(folders):
        fsync_path(folder)
    folders.clear()
