"""Ingest web archives: WARC and ARC files (gzip or plain) through the crawl's own pipelines.

WARC_OR_DIR are files or folders (searched for *.warc, *.warc.gz, *.arc, *.arc.gz). Response
records with status 200 and an HTML payload are decoded (chunked, gzip, deflate, br) and go
through the same item pipelines as a crawl - one parse, the default extractor, the article
flag, metadata, SiteLevel - grouped by host into sites (at most --max-pages a site in each
file) and written to OUT/articles, OUT/pages and OUT/nodes, partitioned by crawl (the run,
--crawl-id) and site, each row naming its WARC file, record offset, record id and capture date.
Other records are counted by type; damaged input (truncated files, corrupt gzip members, lying
lengths, files that are not WARC) is skipped, counted and shown with examples.

A file ingested once in a run is skipped when the run is repeated. With --cluster, each WARC
file is one Dask task (the output is the same as without).

One run at a time per OUT: the ingest holds OUT's run lock (the one `newscrawl crawl` takes)
for its whole run; a second run into the same OUT exits 75 at once, having done nothing. A run
stopped by SIGTERM or Ctrl-C says so; running it again continues with the files not done.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from newscrawl.commands.cli_options import (
    add_max_pages_argument,
    add_settings_arguments,
    option_settings,
)

if TYPE_CHECKING:
    from newscrawl.scale.ingest_run import IngestResult

HELP = "read WARC/ARC archives through the crawl's pipelines into a Parquet corpus"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.scale.dask_stages import add_cluster_arguments

    parser.add_argument("paths", nargs="+", metavar="WARC_OR_DIR", help="archives or folders")
    parser.add_argument("--out", "-o", type=Path, required=True, metavar="DIR", help="output")
    parser.add_argument(
        "--crawl-id",
        default=None,
        metavar="RUN",
        help="name of the run (the crawl= partition; default: ingest); files already "
        "ingested in it are skipped",
    )
    add_max_pages_argument(parser)
    add_cluster_arguments(parser)
    parser.add_argument("--quiet", "-q", action="store_true", help="print no summary")
    parser.add_argument("--json", type=Path, default=None, metavar="FILE", help="summary as JSON")
    add_settings_arguments(parser, None, "Scrapy log level (default: WARNING)")
    # a Dask task of a run that holds OUT's lock (see `newscrawl.scale.ingest_run.ingest_task`)
    parser.add_argument("--dask-task", action="store_true", help=argparse.SUPPRESS)


def _task_argv(args: argparse.Namespace) -> list[str]:
    """The options a Dask task's child process repeats."""
    argv: list[str] = []
    if args.max_pages is not None:
        argv += ["--max-pages", str(args.max_pages)]
    for pair in args.set:
        argv += ["--set", pair]
    if args.log_level:
        argv += ["--log-level", args.log_level]
    return argv


def run(args: argparse.Namespace) -> int:
    from newscrawl.crawl.checks import check_crawl_id, check_settings
    from newscrawl.crawl.lock import take_run_lock
    from newscrawl.storage.warc_reader import archive_files, unreadable_archive

    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        print(f"ingest: no such file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        overrides = option_settings(args)
        check_settings(overrides)
        if args.crawl_id:
            check_crawl_id(args.crawl_id)
    except ValueError as err:
        print(f"ingest: {err}", file=sys.stderr)
        return 2
    odd = [f"{p} ({why})" for p in args.paths if (why := unreadable_archive(Path(p)))]
    if odd:
        print(f"ingest: cannot read {', '.join(odd)}", file=sys.stderr)
        return 2
    files = archive_files(args.paths)
    if not files:
        print("ingest: no WARC or ARC files found", file=sys.stderr)
        return 2
    if args.dask_task:  # the run that started this task holds the lock
        return _run_locked(args, files, overrides)
    lock = take_run_lock(args.out, "ingest")
    if isinstance(lock, int):
        return lock
    with lock:
        return _run_locked(args, files, overrides)


def _run_locked(args: argparse.Namespace, files: list[Path], overrides: dict[str, Any]) -> int:
    """The ingest itself, once OUT is this run's."""
    import json

    from newscrawl.scale.ingest_run import DEFAULT_RUN, format_result, ingest

    result = ingest(
        files,
        args.out,
        args.crawl_id or DEFAULT_RUN,
        overrides,
        cluster=args.cluster,
        dask_workers=args.dask_workers,
        argv=_task_argv(args),
    )
    if args.json:
        args.json.write_text(json.dumps(result.to_json(), indent=1, default=str))
    if not args.quiet:
        print(format_result(result))
    if result.stopped:  # said even with --quiet: the exit status alone reads as a failure
        print(f"ingest: {_stopped_line(result)}", file=sys.stderr)
    return 1 if result.failed else 0


def _stopped_line(result: IngestResult) -> str:
    done = len(result.reports)
    return (
        f"stopped (SIGTERM or Ctrl-C) with {done} of {done + len(result.failed)} files "
        "ingested; run the same command again to continue - ingested files are not read again"
    )
