"""Run an ingest: the WARC files not yet ingested in the run, in this process or one Dask task
per file, and the run's summary from the files' reports.

In this process, one Scrapy crawler reads the files one after the other. On Dask, each task runs
``newscrawl ingest FILE`` in a child process of its worker (Scrapy's reactor runs once per
process, and a worker runs many tasks); every worker must see the input files and OUT. Files are
processed independently either way (see `newscrawl.scale.ingest_spider`), so the rows are the same.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from newscrawl.crawl.extensions.state import STATE_DIR
from newscrawl.crawl.extensions.summary import kind_lines
from newscrawl.scale.ingest_outputs import (
    FileReport,
    file_slug,
    read_marker,
    remove_staging_root,
    staging_dir,
    write_whole,
)

if TYPE_CHECKING:
    from scrapy.settings import Settings

__all__ = [
    "DEFAULT_RUN",
    "TASK_OPTION",
    "IngestResult",
    "format_result",
    "ingest",
    "ingest_in_process",
    "ingest_settings",
]

DEFAULT_RUN = "ingest"
# How a Dask task's `newscrawl ingest` is told that the run which started it holds OUT's lock.
TASK_OPTION = "--dask-task"
# Scrapy's finish reason when a signal (SIGTERM, Ctrl-C) stopped the crawler.
_STOPPED = "shutdown"
# Extensions of a crawl that have nothing to do in an ingest (no requests, its own summary).
_OFF = {
    "newscrawl.crawl.extensions.summary.CrawlSummary": None,
    "newscrawl.crawl.extensions.content.HtmlOnlyExtension": None,
}


def ingest_settings(
    out: Path, staging: Path, run: str, overrides: dict[str, Any] | None = None
) -> Settings:
    """newscrawl's project settings (ITEM_PIPELINES and all) for an ingest into OUT."""
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "newscrawl.settings")
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    settings.set("LOG_LEVEL", "WARNING", priority="cmdline")
    settings.set("NEWSCRAWL_WARC_DIR", "", priority="cmdline")
    # The ingest waits for each host's site pass before it reads on, so worker processes would
    # have nothing to overlap and only add the pages' trip there and back: a thread, unless
    # the user's --set says otherwise.
    settings.set("NEWSCRAWL_SITEPASS_WORKERS", 0, priority="project")
    for name, value in (overrides or {}).items():
        settings.set(name, value, priority="cmdline")
    settings.set("NEWSCRAWL_OUT", str(staging), priority="cmdline")
    settings.set("NEWSCRAWL_INGEST_OUT", str(out), priority="cmdline")
    settings.set("NEWSCRAWL_CRAWL_ID", run, priority="cmdline")
    # staging folders are scratch (cleared at start, their files moved into OUT and synced
    # there before a file's marker): no folder sync after each file closed in them
    settings.set("NEWSCRAWL_PARQUET_SYNC_FOLDERS", False, priority="cmdline")
    # a WARC file is the unit of work, its rows published together once it is done: no
    # crawl-style flush of a host's rows part-way through a file
    settings.set("NEWSCRAWL_FLUSH_SECONDS", 0, priority="cmdline")
    settings.set("NEWSCRAWL_FLUSH_ROWS", 0, priority="cmdline")
    extensions = dict(settings.getdict("EXTENSIONS"))
    extensions.update(_OFF)
    settings.set("EXTENSIONS", extensions, priority="cmdline")
    return settings


def ingest_in_process(files: Sequence[Path], out: Path, run: str, overrides: dict[str, Any]) -> str:
    """Ingest `files` with one crawler in this process; the crawl's finish reason."""
    from scrapy.crawler import CrawlerProcess

    from newscrawl.scale.ingest_spider import IngestSpider

    staging = staging_dir(out)
    shutil.rmtree(staging, ignore_errors=True)
    settings = ingest_settings(out, staging, run, overrides)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(IngestSpider)
    process.crawl(crawler, files=[str(f) for f in files])
    process.start()
    shutil.rmtree(staging, ignore_errors=True)
    remove_staging_root(out)
    stats = crawler.stats.get_stats() if crawler.stats else {}
    return str(stats.get("finish_reason", ""))


def ingest_task(path: str, out: str, run: str, argv: Sequence[str]) -> tuple[str, str | None]:
    """One Dask task: `newscrawl ingest FILE` in a child process; (file, error or None)."""
    command = [sys.executable, "-m", "newscrawl.cli", "ingest", path, "--out", out]
    command += ["--crawl-id", run, "--quiet", TASK_OPTION, *argv]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if read_marker(Path(out), run, file_slug(path)) is None:
        tail = (done.stderr or done.stdout or "").strip().splitlines()[-3:]
        return path, f"exit {done.returncode}: {' | '.join(tail)}"
    return path, None


@dataclass(slots=True)
class IngestResult:
    """The run's outcome over the files asked for."""

    run: str
    out: str
    reports: list[FileReport] = field(default_factory=list)
    skipped_files: list[str] = field(default_factory=list)  # ingested by an earlier run
    # ingested by an earlier run at another size (a download that was not finished): read again
    changed_files: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    stopped: bool = False  # a signal stopped the run before every file was done
    seconds: float = 0.0
    peak_rss_mb: float = 0.0

    def totals(self) -> dict[str, Any]:
        records: Counter[str] = Counter()
        skipped: Counter[str] = Counter()
        problems: Counter[str] = Counter()
        errors: Counter[str] = Counter()
        examples: dict[str, list[str]] = {}
        for report in self.reports:
            records.update(report.records)
            skipped.update(report.skipped)
            problems.update(report.problems)
            errors.update(report.errors)
            for kind, found in report.examples.items():
                examples.setdefault(kind, []).extend(found[: 3 - len(examples.get(kind, []))])
        pages = sum(r.pages for r in self.reports)
        work = sum(r.seconds for r in self.reports)
        return {
            "files": len(self.reports),
            "records": dict(records),
            "pages": pages,
            "articles": sum(r.articles for r in self.reports),
            "site_groups": sum(r.sites for r in self.reports),
            "skipped": dict(skipped),
            "problems": dict(problems),
            "errors": dict(errors),
            "examples": examples,
            "bytes": sum(r.size for r in self.reports),
            "file_seconds": round(work, 2),
            "extract_seconds": round(sum(r.extract_seconds for r in self.reports), 2),
            "records_per_s": round(sum(records.values()) / work, 1) if work else 0.0,
            "pages_per_s": round(pages / work, 2) if work else 0.0,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "out": self.out,
            "seconds": round(self.seconds, 2),
            "peak_rss_mb": self.peak_rss_mb,
            "skipped_files": self.skipped_files,
            "changed_files": self.changed_files,
            "failed": self.failed,
            "stopped": self.stopped,
            **self.totals(),
            "per_file": [r.to_json() for r in self.reports],
        }


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 1024, 1)


def ingest(
    files: Sequence[Path],
    out: Path,
    run: str = DEFAULT_RUN,
    overrides: dict[str, Any] | None = None,
    *,
    cluster: str | None = None,
    dask_workers: int = 2,
    argv: Sequence[str] = (),
    progress: Callable[[str], Any] | None = None,
) -> IngestResult:
    """Ingest the files not yet marked ingested in `run`; `argv` are the command-line options a
    Dask task's child process gets (the same --set / --max-pages as this run)."""
    import time

    started = time.perf_counter()
    result = IngestResult(run=run, out=str(out))
    pending: list[Path] = []
    for path in files:
        done = read_marker(out, run, file_slug(path))
        if done is not None and done.size == _size(path):
            result.skipped_files.append(str(path))
            continue
        if done is not None:  # rows it gave then are kept, not written twice (stored keys)
            result.changed_files.append(str(path))
        pending.append(path)
    if pending and cluster is None:
        reason = ingest_in_process(pending, out, run, overrides or {})
        result.stopped = reason == _STOPPED
    elif pending and cluster is not None:
        _on_dask(pending, out, run, cluster, dask_workers, argv, result, progress)
    for path in pending:
        report = read_marker(out, run, file_slug(path))
        if report is not None:
            result.reports.append(report)
        else:
            result.failed.setdefault(str(path), "not finished (see the log)")
    result.seconds = time.perf_counter() - started
    result.peak_rss_mb = _peak_rss_mb()
    summary = out / STATE_DIR / run / "summary.json"
    summary.parent.mkdir(parents=True, exist_ok=True)
    write_whole(summary, json.dumps(result.to_json(), indent=1, default=str))
    return result


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


def _on_dask(
    files: Sequence[Path],
    out: Path,
    run: str,
    cluster: str,
    workers: int,
    argv: Sequence[str],
    result: IngestResult,
    progress: Callable[[str], Any] | None,
) -> None:
    from distributed import as_completed

    from newscrawl.scale.dask_stages import dask_client

    with dask_client(cluster, workers) as client:
        assert client is not None
        futures = [
            client.submit(
                ingest_task,
                str(path),
                str(out.resolve()),
                run,
                list(argv),
                key=f"ingest-{file_slug(path)}",
                pure=False,
            )
            for path in files
        ]
        for future in as_completed(futures):
            path, error = future.result()
            if error:
                result.failed[path] = error
            if progress:
                progress(f"{path}: {error or 'done'}")


def format_result(result: IngestResult) -> str:
    """The run's summary as a few lines of text."""
    totals = result.totals()
    records = ", ".join(f"{n} {kind}" for kind, n in sorted(totals["records"].items()))
    lines = [
        f"ingest {result.run} in {result.seconds:.1f} s: {totals['files']} files "
        f"({totals['bytes'] / 1e6:.1f} MB), {sum(totals['records'].values())} records "
        f"({records or 'none'}), {totals['pages']} pages, {totals['articles']} articles, "
        f"{totals['site_groups']} site groups; {totals['records_per_s']:.0f} records/s, "
        f"{totals['pages_per_s']:.1f} pages/s; peak memory {result.peak_rss_mb:.0f} MB",
    ]
    if result.skipped_files:
        lines.append(f"already ingested in run {result.run}: {len(result.skipped_files)} files")
    if result.changed_files:
        lines.append(
            f"read again, their size changed since run {result.run} ingested them: "
            f"{len(result.changed_files)} files"
        )
    from newscrawl.storage.warc_records import PROBLEMS

    for title, group, names in (
        ("damaged input", totals["problems"], PROBLEMS),
        ("responses skipped", totals["skipped"], _SKIPS),
        ("errors", totals["errors"], {}),
    ):  # ties by kind
        lines += kind_lines(title, dict(sorted(group.items())), totals["examples"], names, (44, 6))
    for path, error in sorted(result.failed.items()):
        lines.append(f"FAILED {path}: {error}")
    lines.append(f"output: {result.out}")
    return "\n".join(lines)


_SKIPS = {
    "not_200": "status other than 200",
    "not_html": "not HTML",
    "not_http": "not an http(s) URL",
    "bad_url": "URL that cannot be parsed or names no host",
    "duplicate": "URL captured again in the same file",
    "cap_reached": "site has its page cap in this file",
}
