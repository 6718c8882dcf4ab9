"""Merge the Parquet shards that `newscrawl worker` processes wrote under one output root.

Workers already publish every finished site into OUT/DATASET/crawl=RUN/site=NAME/, so OUT reads
as one dataset as it is (files of workers that died mid-site stay in OUT/_staging, which no
reader looks at). `merge` compacts those many small per-site files into few large ones under
INTO, in the same layout, and reports staged sites that were never published.
"""

from __future__ import annotations

import argparse
import sys

HELP = "merge Parquet shards written by several workers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", metavar="OUT", help="the output root the workers wrote to")
    parser.add_argument("--into", required=True, metavar="DIR", help="an empty directory")
    parser.add_argument(
        "--dataset",
        action="append",
        metavar="NAME",
        help="merge only this dataset (repeatable; default: all)",
    )
    parser.add_argument("--rows-per-file", type=int, default=250_000, metavar="N")


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from newscrawl.scale.shards import (
        abandoned_partitions,
        check_merge,
        dataset_names,
        merge,
    )

    found = dataset_names(args.out)
    if not found:
        print(f"merge: no published datasets under {args.out}", file=sys.stderr)
        return 1
    names = list(args.dataset) if args.dataset is not None else found
    # what the command line got wrong exits 2, as everywhere in newscrawl; a failed write 1
    try:
        check_merge(Path(args.out), Path(args.into), names, args.rows_per_file)
    except (FileExistsError, FileNotFoundError, ValueError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 2
    try:
        counts = merge(args.out, args.into, names, rows_per_file=args.rows_per_file)
    except (OSError, ValueError) as exc:
        print(f"merge: {exc}", file=sys.stderr)
        return 1
    rows = ", ".join(f"{name} {n} rows" for name, n in counts.items())
    print(f"merged into {args.into}: {rows}")
    abandoned = abandoned_partitions(args.out)
    if abandoned:
        print(
            f"merge: {len(abandoned)} staged site partition(s) were not published (workers that "
            f"died or still run); not merged: {', '.join(str(p) for p in abandoned[:5])}",
            file=sys.stderr,
        )
    return 0
