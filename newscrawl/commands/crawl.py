"""Crawl the sites of a site list and write a Parquet corpus.

SITES is a text file of start URLs (one a line), a CSV file with a url column (and optional name
and max_pages columns), or URLs separated by commas. Up to --max-pages HTML pages are fetched
from each site (robots.txt obeyed, politely); every page is extracted inline and written to
DIR/articles (text, article flag, metadata) and DIR/pages (raw HTML), partitioned by crawl and
site; DIR/nodes gets the SiteLevel template labels. Interrupted crawls resume with --resume
(after Ctrl-C or even a kill) without duplicate rows.

Run it again into the same DIR (a scheduled crawl) and it is incremental: stored articles are
not fetched again unless a sitemap or feed says they changed, listing pages are revalidated
with conditional requests, each article stays once in DIR/articles (changed versions go to
DIR/versions, duplicates to DIR/duplicates) and each site's template is learnt from its stored
pages too; --full fetches everything again. Two runs into one DIR never overlap (a lock).

Exit status: 0 the crawl finished and every site gave pages; 3 it finished but some sites
failed (not one page of theirs could be fetched: the start page missing or refused, robots.txt
disallowing it...; the summary says why); 1 it failed (did not finish, or every site failed);
2 bad arguments; 75 another run holds DIR's lock (nothing was done).

Open the result with pandas.read_parquet("DIR/articles"), polars.scan_parquet(
"DIR/articles/**/*.parquet", hive_partitioning=True) or DuckDB's read_parquet(
'DIR/articles/**/*.parquet').
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from newscrawl.commands.cli_options import (
    add_allow_private_argument,
    add_max_pages_argument,
    add_settings_arguments,
    add_warc_argument,
    option_settings,
)

__all__ = [
    "EXIT_STATUS",
    "HELP",
    "add_arguments",
    "run",
]

HELP = "crawl sites and write a Parquet article corpus"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sites", metavar="SITES", help="site list file (txt or csv) or URLs")
    parser.add_argument(
        "--out",
        "-o",
        type=Path,
        default=Path("out"),
        metavar="DIR",
        help="output folder (default: ./out)",
    )
    add_max_pages_argument(parser)
    parser.add_argument(
        "--crawl-id",
        default=None,
        metavar="ID",
        help="name of this crawl (default: the UTC time); reuse it to resume",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="resume the last unfinished crawl in DIR (or --crawl-id)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="fetch every page again, stored or not (default: incremental when DIR holds "
        "earlier crawls)",
    )
    parser.add_argument(
        "--extractors",
        default=None,
        metavar="A,B",
        help="extractors, in order of preference (default: learned,cetd-tpc)",
    )
    parser.add_argument(
        "--primary",
        default=None,
        metavar="NAME",
        help="extractor whose text fills the text column (default: learned)",
    )
    parser.add_argument(
        "--all-texts", action="store_true", help="also keep every extractor's text (texts column)"
    )
    add_allow_private_argument(parser)
    add_warc_argument(parser)
    parser.add_argument(
        "--fast-local",
        action="store_true",
        help="for servers on this machine: no delays, loopback allowed",
    )
    add_settings_arguments(parser, None, "Scrapy log level (default: INFO)")


# -- options shared with `newscrawl demo` and `newscrawl worker` --------------------------------


def _overrides(args: argparse.Namespace) -> dict[str, object]:
    from newscrawl.crawl.crawl_process import FAST_LOCAL

    values: dict[str, object] = dict(FAST_LOCAL) if args.fast_local else {}
    if args.extractors:
        names = (name.strip() for name in args.extractors.split(","))
        values["NEWSCRAWL_EXTRACTORS"] = [name for name in names if name]
    if args.primary:
        values["NEWSCRAWL_PRIMARY_EXTRACTOR"] = args.primary
    if args.all_texts:
        values["NEWSCRAWL_KEEP_ALL_TEXTS"] = True
    if args.full:
        values["NEWSCRAWL_INCREMENTAL"] = False
    return {**values, **option_settings(args)}


# Exit statuses by the summary's status (see the module docstring).
EXIT_STATUS = {"ok": 0, "partial": 3, "failed": 1}


def run(args: argparse.Namespace) -> int:
    from newscrawl.crawl.lock import take_run_lock

    if args.out.exists() and not args.out.is_dir():
        print(f"newscrawl crawl: {args.out} exists and is not a folder", file=sys.stderr)
        return 2
    lock = take_run_lock(args.out, "newscrawl crawl")
    if isinstance(lock, int):
        return lock
    with lock:
        return _run_locked(args)


def _run_locked(args: argparse.Namespace) -> int:
    from newscrawl.crawl.checks import check_crawl_id, check_settings
    from newscrawl.crawl.crawl_process import crawl_settings, latest_unfinished, run_crawl
    from newscrawl.crawl.discovery.site_lists import SiteListError, read_sites
    from newscrawl.crawl.extensions.summary import crawl_status, format_summary
    from newscrawl.template.geometry import GeometryError, check_geometry

    try:
        read_sites(args.sites)
        overrides = _overrides(args)
        check_settings(overrides)
        if args.crawl_id:
            check_crawl_id(args.crawl_id)
    except (SiteListError, ValueError) as err:
        print(f"newscrawl crawl: {err}", file=sys.stderr)
        return 2
    crawl_id = args.crawl_id
    if args.resume and not crawl_id:
        crawl_id = latest_unfinished(args.out)
        if crawl_id is None:
            print(
                f"newscrawl crawl: nothing to resume in {args.out} (no crawl stopped after the "
                "last one that finished); run without --resume",
                file=sys.stderr,
            )
            return 2
    elif args.resume and (problem := _not_resumable(args.out, crawl_id)):
        print(f"newscrawl crawl: {problem}", file=sys.stderr)
        return 2
    settings = crawl_settings(args.out, crawl_id, overrides)
    try:  # before any fetch, not in the first site pass
        check_geometry(settings.get("NEWSCRAWL_GEOMETRY"))
    except (ValueError, GeometryError) as err:
        print(f"newscrawl crawl: {err}", file=sys.stderr)
        return 2
    crawl_id = settings["NEWSCRAWL_CRAWL_ID"]
    print(
        f"crawl {crawl_id} -> {args.out}  (resume after a stop with: newscrawl crawl "
        f"{args.sites} --out {args.out} --resume)",
        file=sys.stderr,
    )
    summary = run_crawl(args.sites, settings)
    if summary is None:
        print("newscrawl crawl: the crawl ended without a summary (see the log)", file=sys.stderr)
        return 1
    print(format_summary(summary))
    if summary.get("disk_full"):
        print(
            f"newscrawl crawl: disk full ({summary['disk_full']}); free some space, then "
            "resume with --resume",
            file=sys.stderr,
        )
        return 1
    status = summary.get("status") or crawl_status(summary.get("reason", ""), summary["sites"])
    if status != "ok":
        failed = ", ".join(summary.get("failed_sites") or []) or "-"
        reason = summary.get("reason", "")
        if status == "failed" and reason != "finished" and failed == "-":
            # a stop (Ctrl-C, SIGTERM, a shutdown): nothing failed, the crawl did not finish
            detail = f"stopped ({reason or 'no reason given'}); resume with --resume"
            print(f"newscrawl crawl: {detail}", file=sys.stderr)
        else:
            print(f"newscrawl crawl: {status} (failed sites: {failed})", file=sys.stderr)
        if (summary.get("errors") or {}).get("private_address"):
            print(
                "newscrawl crawl: requests to non-public addresses were refused; for servers "
                "on this machine or network pass --allow-private loopback (or CIDRs), or "
                "--fast-local",
                file=sys.stderr,
            )
    return EXIT_STATUS.get(status, 1)


def _not_resumable(out: Path, crawl_id: str) -> str | None:
    """Why `--resume --crawl-id ID` cannot resume (a mistyped or finished crawl), or None."""
    from newscrawl.crawl.extensions.state import STATE_DIR, crawl_statuses

    if not (out / STATE_DIR / crawl_id).is_dir():  # a crawl's folder, from its first moment
        known = sorted(p.name for p in (out / STATE_DIR).glob("*") if p.is_dir())
        latest = ", ".join(known[-3:]) or "none"
        return f"no crawl {crawl_id!r} in {out} to resume (latest there: {latest})"
    if crawl_statuses(out).get(crawl_id, {}).get("status") == "finished":
        return f"crawl {crawl_id!r} in {out} finished; nothing to resume (run without --resume)"
    return None
