"""Template detection quality on multi-page sites of gold-text datasets.

Each DATASET is a dataset folder (html/, gold/, meta.jsonl) or a folder of them. Sites come from
--groups (a site_groups.tsv: dataset, site columns), from a site_groups.tsv found beside the
datasets, or else from meta.jsonl's "site"; sites with fewer than --min-pages pages are left out.

With --methods (e.g. ``--methods all``): the site-level template methods side by side -
SiteLevel, Site Style Tree, pagelets, entropy and deboiler (PyPI, fitted per site) - each as a
filter alone and with the default extractor (--after) on what it keeps: shingle F1 pooled over
pages and averaged over sites, and the time each takes a site
(`newscrawl.evaluation.site_method_scores`).

Without it, the evaluation of Chakrabarti, Kumar and Punera (WWW 2007): the sites are split into
--folds folds; each fold's sites are tested with classifiers trained on the SiteLevel labels of
the other folds' sites (never on their own). Printed: precision, recall and F of the template
class against labels derived from the gold text, without smoothing and smoothed with c = 0.01, 0.1
and 1, for "specific" (same kind of site: news or blog) and "total" training, beside the study's
figures; and the shingle F1 of each page-level extractor alone and combined with the template
filter, per dataset. In the library: `newscrawl.training.template_scores` and
`newscrawl.evaluation.site_method_scores`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from newscrawl.extractors import DEFAULT_EXTRACTOR
from newscrawl.template.sitemethods import DEFAULT_SITE_METHOD, SITE_METHODS

# The evaluation modules (scipy, the template classifiers) are imported in `run`: every
# command line builds this parser, and `newscrawl extract PAGE` has no use for them.
_SEED_EXTRACTORS = "nce,mss,cetd-tpc"  # evaluation.template.DEFAULT_EXTRACTORS

__all__ = ["HELP", "add_arguments", "run"]

HELP = "template detection: site-level methods compared (--methods), or the study's P/R/F"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "datasets",
        nargs="+",
        metavar="DATASET",
        help="dataset folder (html/, gold/, meta.jsonl) or a folder of them",
    )
    parser.add_argument(
        "--groups",
        metavar="TSV",
        help="site groups (dataset, site columns); default: site_groups.tsv "
        "beside the datasets if there is one, else meta.jsonl sites",
    )
    parser.add_argument("--min-pages", type=int, default=5, help="smallest site (default: 5)")
    parser.add_argument("--max-pages", type=int, default=200, help="pages per site (default: 200)")
    parser.add_argument("--folds", type=int, default=5, help="site folds (default: 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the classifiers' fits")
    parser.add_argument(
        "--extractors",
        default=_SEED_EXTRACTORS,
        help="page-level extractors, comma-separated (default: %(default)s)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="train the study's unweighted regressions (default: classes weighted equally)",
    )
    parser.add_argument(
        "--no-extraction",
        action="store_true",
        help="only the template-class table (skips the slower extraction scores)",
    )
    parser.add_argument(
        "--site-method",
        default=DEFAULT_SITE_METHOD,
        choices=SITE_METHODS,
        help="what labels each site's template nodes for training (and for the site-aware "
        "filter): SiteLevel, Site Style Tree, pagelets or block entropy (default: %(default)s)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    parser.add_argument(
        "--methods",
        metavar="LIST",
        help="compare site-level methods instead: 'all' or comma-separated among "
        "sitelevel, sst, pagelets, entropy, deboiler",
    )
    parser.add_argument(
        "--after",
        metavar="NAME",
        help="with --methods: extractor run on what each filter keeps (default: the default "
        "extractor; 'none' for the filters alone)",
    )
    parser.add_argument(
        "--sites", type=int, default=0, help="with --methods: the first N sites only (a sample)"
    )


def run(args: argparse.Namespace) -> int:
    return _methods(args) if args.methods else _study(args)


def _study(args: argparse.Namespace) -> int:
    from newscrawl.gold.dataset import DatasetError
    from newscrawl.training.template_scores import (
        as_json,
        evaluate,
        gain_lines,
        shingle_table,
        template_table,
    )
    from newscrawl.training.template_sites import load_site, site_groups

    extractors = [n.strip() for n in args.extractors.split(",") if n.strip()]
    try:
        groups = site_groups(args.datasets, args.groups, max(args.min_pages, 2))
    except (DatasetError, OSError) as err:
        print(f"template evaluation: {err}", file=sys.stderr)
        return 2
    if len({site for _, site, _ in groups}) < 2:
        print("template evaluation: needs at least 2 multi-page sites", file=sys.stderr)
        return 2
    from tqdm import tqdm

    sites = [
        load_site(d, s, ids, args.max_pages, getattr(args, "site_method", DEFAULT_SITE_METHOD))
        for d, s, ids in tqdm(groups, desc="sitelevel", unit="site", disable=args.quiet)
    ]
    results = evaluate(
        sites,
        args.folds,
        args.seed,
        extractors,
        progress=not args.quiet,
        balanced=not args.plain,
        extraction=not args.no_extraction,
    )
    for (dataset, kind), n in sorted(results.sites.items()):
        print(f"{dataset}: {n} {kind} sites, {results.pages[(dataset, kind)]} pages")
    print()
    print("\n".join(template_table(results)))
    print()
    if results.shingle:
        print("\n".join(shingle_table(results, extractors)))
        print()
        print("\n".join(gain_lines(results, extractors)))
    if args.json:
        Path(args.json).write_text(json.dumps(as_json(results), indent=1) + "\n", "utf-8")
    return 0


def _methods(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from newscrawl.evaluation.site_method_scores import (
        DEBOILER,
        compare_site,
        parse_methods,
        report,
    )
    from newscrawl.evaluation.site_method_scores import as_json as methods_json
    from newscrawl.extractors import get_extractor
    from newscrawl.gold.dataset import DatasetError
    from newscrawl.training.template_sites import site_groups

    try:
        methods = parse_methods(args.methods)
        groups = site_groups(args.datasets, args.groups, max(args.min_pages, 2))
    except (ValueError, DatasetError, OSError) as err:
        print(f"template evaluation: {err}", file=sys.stderr)
        return 2
    if args.sites:
        groups = groups[: args.sites]
    if DEBOILER in methods and not _has_deboiler():
        print(
            "template evaluation: deboiler is not installed: pip install --no-deps "
            "'deboiler==2023.46.150' (its own needs come with newscrawl[bench])",
            file=sys.stderr,
        )
        return 2
    after = args.after or DEFAULT_EXTRACTOR
    extractor = get_extractor(after) if after != "none" else None
    results = [
        compare_site(dataset, site, ids, methods, extractor, args.max_pages)
        for dataset, site, ids in tqdm(groups, desc="sites", unit="site", disable=args.quiet)
    ]
    print("\n".join(report(results, methods, after)))
    if args.json:
        Path(args.json).write_text(
            json.dumps(methods_json(results, methods), indent=1) + "\n", "utf-8"
        )
    return 0


def _has_deboiler() -> bool:
    try:
        import deboiler  # noqa: F401
    except ImportError:
        return False
    return True
