"""Train the area-bucketed template classifiers on one or more `nodes` datasets.

NODES are folders (or Parquet files) written by `newscrawl sitelevel` or by a crawl. The area
buckets are fitted from the nodes (quartiles of node area per site, averaged over sites), one
logistic regression is trained per bucket on the SiteLevel labels, and the model is written to
MODEL as one file that `--model MODEL` of `newscrawl extract` and `newscrawl evaluate` takes as
is. The report gives each bucket's size, template share and accuracy, and the score on sites
held out of training (then the model is refitted on every site).
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["HELP", "add_arguments", "run"]

HELP = "train area-bucketed template classifiers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("nodes", nargs="+", metavar="NODES", help="nodes dataset (folder or file)")
    parser.add_argument("--out", "-o", required=True, metavar="MODEL", help="model file to write")
    parser.add_argument(
        "--kind",
        default="all",
        choices=("all", "news", "blogs"),
        help="train on news sites only, blogs only, or all sites (default: all)",
    )
    parser.add_argument(
        "--holdout",
        type=float,
        default=0.2,
        metavar="SHARE",
        help="share of sites held out to score the model (default: 0.2)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the site split (default: 0)")
    parser.add_argument(
        "--C",
        type=float,
        default=1.0,
        dest="C",
        help="inverse regularisation of the logistic regressions (default: 1.0)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        help="fit the study's unweighted regressions (default: classes weighted equally, which "
        "keeps more content)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from newscrawl.template.train import TrainConfig, TrainError, read_nodes, train

    if not 0 <= args.holdout < 1 or args.C <= 0:
        print("newscrawl train: --holdout must be in [0, 1) and --C positive", file=sys.stderr)
        return 2
    config = TrainConfig(
        kind=args.kind, holdout=args.holdout, seed=args.seed, C=args.C, balanced=not args.plain
    )
    try:
        data = read_nodes(args.nodes)
        model, report = train(data, config, progress=not args.quiet)
    except TrainError as err:
        print(f"newscrawl train: {err}", file=sys.stderr)
        return 2
    try:
        path = model.save(args.out)
    except OSError as err:
        print(f"newscrawl train: cannot write {args.out}: {err}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    print(f"model -> {path}")
    return 0
