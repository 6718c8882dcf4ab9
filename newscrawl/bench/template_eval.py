"""Template detection quality on multi-page sites of gold-text datasets (seed 004's evaluation).

Each DATASET is a dataset folder (html/, gold/, meta.jsonl) or a folder of them. Sites come from
--groups (a site_groups.tsv: dataset, site columns), from a site_groups.tsv found beside the
datasets, or else from meta.jsonl's "site"; sites with fewer than --min-pages pages are left out.
The sites are split into --folds folds: each fold's sites are tested with classifiers trained on
the SiteLevel labels of the other folds' sites (never on their own). Printed: precision, recall
and F of the template class against labels derived from the gold text, without smoothing and
smoothed with c = 0.01, 0.1 and 1, for "specific" (same kind of site: news or blog) and "total"
training, beside the study's figures; and the shingle F1 of each page-level extractor alone and
combined with the template filter, per dataset. Same as
``python -m newscrawl.template.evaluation``.
"""

from __future__ import annotations

import argparse

__all__ = ["HELP", "add_arguments", "run"]

HELP = "template detection P/R/F and shingle F1 with and without the template stage"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.template.evaluation import add_arguments as evaluation_arguments

    evaluation_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from newscrawl.template.evaluation import run as evaluate

    return evaluate(args)
