"""Template detection quality on multi-page sites of gold-text datasets.

Each DATASET is a dataset folder (html/, gold/, meta.jsonl) or a folder of them. Sites come from
--groups (a site_groups.tsv: dataset, site columns), from a site_groups.tsv found beside the
datasets, or else from meta.jsonl's "site"; sites with fewer than --min-pages pages are left out.

With --methods (e.g. ``--methods all``): the site-level template methods side by side -
SiteLevel, Site Style Tree, pagelets, entropy and deboiler (PyPI, fitted per site) - each as a
filter alone and with the default extractor (--after) on what it keeps: shingle F1 pooled over
pages and averaged over sites, and the time each takes a site (`newscrawl.template.methods_eval`).

Without it, seed 004's evaluation: the sites are split into --folds folds; each fold's sites are
tested with classifiers trained on the SiteLevel labels of the other folds' sites (never on
their own). Printed: precision, recall and F of the template class against labels derived from
the gold text, without smoothing and smoothed with c = 0.01, 0.1 and 1, for "specific" (same
kind of site: news or blog) and "total" training, beside the study's figures; and the shingle
F1 of each page-level extractor alone and combined with the template filter, per dataset. Same
as ``python -m newscrawl.template.evaluation``.
"""

from __future__ import annotations

import argparse

__all__ = ["HELP", "add_arguments", "run"]

HELP = "template detection: site-level methods compared (--methods), or seed 004's P/R/F"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.template.evaluation import add_arguments as evaluation_arguments

    evaluation_arguments(parser)
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
    if args.methods:
        from newscrawl.template.methods_eval import run as compare

        return compare(args)
    from newscrawl.template.evaluation import run as evaluate

    return evaluate(args)
