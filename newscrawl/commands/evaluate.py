"""Score extractors against gold text on datasets, and time them.

Each DATASET is a folder holding html/ID.html pages, gold/ID.txt gold texts and optionally
meta.jsonl (pages without gold are skipped and counted). For every dataset and extractor the table
gives: pages scored; errors (pages that could not be parsed or on which the extractor raised,
scored as empty output); shingle precision P, recall R and F1 (4-token shingles of \\w+ tokens;
P and R are means over pages, F1 is taken of the means); token F1 (the same on single tokens);
word F1 (WCXB's own figure: per page the F1 of the lower-cased word bags, averaged over pages);
and pages/s: speed in this one process with parsing INCLUDED (each page is parsed once, the parse
is timed apart and added to each extractor's own time); the "(parse only)" row gives parsing
alone. With several datasets, "all" rows pool every page.

Pages are grouped into sites (--site-from; default meta when a dataset has meta.jsonl, else url)
and the site reaches the extractors, so the template filter (--model) learns each site's own
template. Every dataset is scored with freshly built extractors (no state carries over from
another dataset). With -j N whole sites go to N worker processes; every figure but pages/s is the
same for every N, and pages/s stays per-process speed (the workers' seconds are added up).

Snippets: where meta.jsonl lists `with_snippets` (phrases the main text must hold) and
`without_snippets` (phrases it must not: menus, buttons, footers), as WCXB does, a second table
gives the share of each an extractor got right. --by FIELD adds a table of the pages grouped by
a meta.jsonl field (WCXB's page_type, a language, ...), every dataset pooled.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from newscrawl.commands.cli_options import (
    add_extractor_model_argument,
    extractor_model_error,
    positive_int,
)
from newscrawl.evaluation.site_groups import SITE_FROM
from newscrawl.extractors import build_extractors, extractor_names
from newscrawl.template.sitemethods import DEFAULT_SITE_METHOD, SITE_METHODS

if TYPE_CHECKING:
    pass

__all__ = ["HELP", "add_arguments", "run"]

HELP = "score extractors against gold text on datasets"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.extractors import EXTRACTORS

    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("datasets", nargs="+", metavar="DATASET", help="dataset folder")
    parser.add_argument(
        "-e",
        "--extractor",
        default=None,
        metavar="A,B,...",
        help=f"comma-separated extractors (default: all: {','.join(EXTRACTORS)})",
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="template model file (from `newscrawl train`): each extractor runs on what the "
        "template filter keeps; the name template is the filter alone",
    )
    add_extractor_model_argument(parser)
    parser.add_argument(
        "--site-method",
        default=DEFAULT_SITE_METHOD,
        choices=SITE_METHODS,
        help="how the template filter (--model) learns each site's own template: SiteLevel "
        "hashes, Site Style Tree, pagelets or block entropy (default: %(default)s)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the figures as a JSON report to FILE",
    )
    parser.add_argument(
        "--per-page", action="store_true", help="include every page's scores in the JSON report"
    )
    parser.add_argument(
        "-n",
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="score only the first N pages of each dataset (in id order)",
    )
    parser.add_argument(
        "--site-from",
        default=None,
        choices=SITE_FROM,
        help="how pages group into sites (the template filter learns each site's template): "
        "meta: meta.jsonl 'site' (falls back to url); url: host of the meta.jsonl url, else of "
        "the page's og:url or canonical link; dir: each dataset is one site; none: no sites "
        "(default: meta when the dataset has meta.jsonl, else url)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=1,
        metavar="N",
        help="worker processes; all pages of a site go to one worker, every figure but pages/s "
        "is the same for every N (default: 1)",
    )
    parser.add_argument(
        "--fail-under",
        type=_share,
        default=None,
        metavar="F1",
        help="exit with status 3 when an extractor's pooled shingle F1 (over every page of every "
        "DATASET) is below F1: a quality gate for CI",
    )
    parser.add_argument(
        "--by",
        default=None,
        metavar="FIELD",
        help="also a table by this meta.jsonl field (e.g. page_type): shingle P/R/F1 and snippet "
        "checks of the pages sharing each value, over every DATASET",
    )
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bar (it is shown on stderr when that is a terminal)",
    )


def _share(value: str) -> float:
    """An argparse type: a number from 0 to 1 (an F1 floor)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0.0 <= number <= 1.0:  # NaN fails too
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, not {value}")
    return number


def _unwritable(path: Path) -> str | None:
    """Why a report cannot be written to `path` (checked before the run, not after it)."""
    if path.is_dir():
        return "is a folder"
    folder = path.parent
    if not folder.is_dir():
        return f"no folder {folder}"
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return "not writable"
    return None


def _given_twice(paths: list[str]) -> str | None:
    """The first dataset folder named twice (by any path to it), or None."""
    seen: set[str] = set()
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            return path
        seen.add(real)
    return None


def run(args: argparse.Namespace) -> int:
    from newscrawl.evaluation.evaluator import evaluate_dataset, site_mode
    from newscrawl.evaluation.report import (
        build_report,
        error_lines,
        format_groups,
        format_snippets,
        format_table,
    )
    from newscrawl.gold.dataset import read_dataset

    site_from = getattr(args, "site_from", None)
    jobs = max(1, getattr(args, "jobs", 1) or 1)
    if (problem := extractor_model_error(args)) is not None:
        print(f"newscrawl evaluate: {problem}", file=sys.stderr)
        return 2
    if args.json is not None and (why := _unwritable(args.json)) is not None:
        print(f"newscrawl evaluate: cannot write {args.json}: {why}", file=sys.stderr)
        return 2
    if args.per_page and args.json is None:
        print(
            "newscrawl evaluate: --per-page goes into the --json report; give --json FILE",
            file=sys.stderr,
        )
        return 2
    try:
        names = extractor_names(args.extractor)
        method = getattr(args, "site_method", DEFAULT_SITE_METHOD)
        factory = partial(build_extractors, names, getattr(args, "model", None), method)
        factory()  # a bad name or model fails here, before any page is read
        twice = _given_twice(args.datasets)
        if twice:  # its pages would count twice in the pooled figures
            raise ValueError(f"dataset given twice: {twice}")
        datasets = [read_dataset(path, args.limit) for path in args.datasets]
        for dataset in datasets:
            site_mode(site_from, dataset)
    except (ValueError, ImportError) as err:  # DatasetError and SiteError are ValueErrors
        print(f"newscrawl evaluate: {err}", file=sys.stderr)
        return 2
    for dataset in datasets:
        not_utf8 = dataset.gold_not_utf8()
        if not_utf8:
            print(
                f"WARNING: {dataset.name}: {len(not_utf8)} gold files are not UTF-8 (first: "
                f"{not_utf8[0]}); their bad bytes read as U+FFFD and lower the scores",
                file=sys.stderr,
            )
    empty = [str(d.path) for d in datasets if not len(d)]
    if empty:
        print(
            f"newscrawl evaluate: no pages with gold to score in {', '.join(empty)}",
            file=sys.stderr,
        )
        return 2
    progress = False if args.no_progress else None
    by = getattr(args, "by", None) or None  # "--by" with an empty name: no table
    results = [
        evaluate_dataset(
            d, factory(), progress, site_from=site_from, jobs=jobs, factory=factory, group_by=by
        )
        for d in datasets
    ]
    print(format_table(results))
    snippets = format_snippets(results)
    if snippets is not None:
        print(f"\nsnippets (meta.jsonl with_snippets kept, without_snippets left out):\n{snippets}")
    if by is not None:
        print(f"\nby {by} (every dataset pooled):\n{format_groups(results, by)}")
    warnings = error_lines(results)
    values = [page.get(by) for d in datasets for page in d.meta.values()] if by else []
    if by is not None and not any(value is not None for value in values):
        print(f"WARNING: no page's meta.jsonl has a {by!r} field: every page is in group '-'")
    elif any(isinstance(value, dict | list) for value in values):
        print(f"WARNING: {by!r} holds lists or objects in meta.jsonl, which group nothing: "
              "those pages are in group '-'")  # fmt: skip
    for line in warnings:
        print(f"WARNING: {line}")
    if not any("RAISED" in line for line in warnings):
        print("no extractor raised on any page")
    if args.json is not None:
        report = build_report(results, per_page=args.per_page, group_by=by)
        try:
            args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
        except OSError as err:
            print(f"newscrawl evaluate: cannot write {args.json}: {err}", file=sys.stderr)
            return 1
    if args.fail_under is not None:
        return _gate(results, args.fail_under)
    return 0


def _gate(results: list, floor: float) -> int:
    """3 when any extractor's pooled shingle F1 is below `floor` (each figure is printed)."""
    from newscrawl.gold.metric import aggregate

    failed = False
    for name in results[0].extractors:
        pages = [s for r in results for s in r.extractors[name].shingle]
        f1 = aggregate(pages).f1
        verdict = "ok" if f1 >= floor else "BELOW THE FLOOR"
        print(
            f"quality gate: {name} pooled shingle F1 {f1:.4f} over {len(pages)} pages, "
            f"floor {floor:.4f}: {verdict}"
        )
        failed |= f1 < floor
    return 3 if failed else 0
