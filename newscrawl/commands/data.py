"""Build evaluation and training datasets outside the project, in the layout of the dev datasets.

``newscrawl data docs SOURCE... --out DIR`` writes a dataset of documentation pages whose gold
main text is the documentation generator's own marking of the main body (Sphinx, DocBook,
GTK-Doc, Doxygen, Javadoc, MkDocs, AsciiDoc, gi-docgen, Texinfo, rustdoc, mdBook). Each SOURCE
is one site: an installed Debian package's name (its HTML pages), a folder, or NAME=FOLDER to
name the site. Up
to --per-site pages are taken from each (a fixed sample), the folder DIR is replaced by the new
dataset only once it is complete, and DIR/README.md states the packages, versions, licences and
gold conventions. `newscrawl evaluate DIR` and `newscrawl models build` take DIR as they take the
dev datasets (site = the SOURCE's name, page_type = documentation in meta.jsonl).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "build datasets of pages with gold main text (documentation sites)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    docs = sub.add_parser(
        "docs",
        help="documentation pages, gold from the generator's markup",
        description=__doc__,
    )
    docs.add_argument(
        "sources",
        nargs="*",
        metavar="SOURCE",
        help="installed Debian package name, folder of HTML pages, or NAME=FOLDER",
    )
    docs.add_argument(
        "--debian",
        action="store_true",
        help="add the project's spread of Debian 12 documentation sites (32 sites of 11 "
        "generators; says which packages to install when some are missing)",
    )
    docs.add_argument("--out", "-o", required=True, type=Path, metavar="DIR", help="dataset folder")
    docs.add_argument(
        "--per-site",
        type=int,
        default=150,
        metavar="N",
        help="pages per site at most (default: 150)",
    )
    docs.add_argument(
        "--min-words",
        type=int,
        default=30,
        metavar="N",
        help="leave out pages whose gold text has fewer words (default: 30)",
    )
    docs.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def run(args: argparse.Namespace) -> int:
    from newscrawl.gold.docsdata import (
        DocsDataError,
        build_docs_dataset,
        debian_sources,
        parse_source,
    )

    if args.per_site < 1 or args.min_words < 0:
        print("newscrawl data docs: --per-site must be ≥ 1 and --min-words ≥ 0", file=sys.stderr)
        return 2
    if not args.sources and not args.debian:
        print("newscrawl data docs: name a SOURCE, or --debian", file=sys.stderr)
        return 2
    words = [*args.sources, "--out", str(args.out), "--per-site", str(args.per_site)]
    words += ["--min-words", str(args.min_words), *(["--debian"] if args.debian else [])]
    try:
        sources = debian_sources() if args.debian else []
        sources += [parse_source(spec) for spec in args.sources]
        stats = build_docs_dataset(
            sources,
            args.out,
            per_site=args.per_site,
            min_words=args.min_words,
            command="newscrawl data docs " + shlex.join(words),
            say=None if args.quiet else lambda line: print(line, file=sys.stderr),
        )
    except DocsDataError as err:
        print(f"newscrawl data docs: {err}", file=sys.stderr)
        return 2
    print(f"{args.out}: {stats['pages']} pages from {stats['sites']} sites")
    return 0
