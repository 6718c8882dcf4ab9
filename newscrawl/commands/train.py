"""Train the area-bucketed template classifiers on one or more `nodes` datasets.

NODES are folders (or Parquet files) written by `newscrawl sitelevel` or by a crawl. The area
buckets are fitted from the nodes (quartiles of node area per site, averaged over sites), one
logistic regression is trained per bucket on the SiteLevel labels, and the model is written to
MODEL as one file that `--model MODEL` of `newscrawl extract` and `newscrawl evaluate` takes as
is. The report gives each bucket's size, template share and accuracy, and the score on sites
held out of training (then the model is refitted on every site).

The training set is first assembled site by site (`TrainingSet`, the one builder: the nodes of
the requested kind and area, at most --max-site-nodes per site, sampled with a seed of the site)
into a temporary folder beside MODEL - as Dask tasks with --cluster, else in this process; the
fit then runs in this process.

Retraining on fresh crawls: ``--last N`` takes, of each NODES that is a crawl's nodes dataset
(``DIR/nodes``), only its N most recent crawls, and the model records them
(``provenance.crawls``); ``--hold-back`` keeps the held-out sites out of the final fit too, so
``newscrawl models compare NEW OLD NODES...`` can score the new model against the one in use on
sites neither saw.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "train area-bucketed template classifiers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.scale.dask_stages import add_cluster_arguments

    parser.add_argument("nodes", nargs="+", metavar="NODES", help="nodes dataset (folder or file)")
    parser.add_argument("--out", "-o", required=True, metavar="MODEL", help="model file to write")
    parser.add_argument(
        "--kind",
        default="all",
        choices=("all", "news", "blog", "blogs"),
        help="train on news sites only, blogs only, or all sites (default: all); the kinds "
        "`newscrawl sitelevel --kind` marks (blogs: the same as blog)",
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
        "--last",
        type=int,
        default=None,
        metavar="N",
        help="of a crawl's nodes dataset (DIR/nodes), train on its N most recent crawls only",
    )
    parser.add_argument(
        "--hold-back",
        action="store_true",
        help="leave the held-out sites out of the final fit too (for newscrawl models compare)",
    )
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
    parser.add_argument(
        "--max-site-nodes",
        type=int,
        default=None,
        metavar="N",
        help="train on at most N nodes of each site, sampled (default: all)",
    )
    parser.add_argument(
        "--geometry",
        default=None,
        choices=("static", "chromium", "flow"),
        help="the geometry provider the nodes' boxes came from, recorded in the model; "
        "extraction refuses another (default: what the nodes record; static for nodes written "
        "before they recorded it; a different one is an error)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_cluster_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from newscrawl.training.template_train import TrainError

    if not 0 <= args.holdout < 1 or args.C <= 0:
        print("newscrawl train: --holdout must be in [0, 1) and --C positive", file=sys.stderr)
        return 2
    if args.max_site_nodes is not None and args.max_site_nodes < 1:
        print("newscrawl train: --max-site-nodes must be at least 1", file=sys.stderr)
        return 2
    try:
        args.nodes, args.crawls = _crawl_selection(args.nodes, args.last)
    except (OSError, ValueError) as err:
        print(f"newscrawl train: {err}", file=sys.stderr)
        return 2
    # beside the model file: Dask workers elsewhere must see it, as they see NODES and --out
    beside = Path(args.out).resolve().parent
    beside.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".newscrawl-train-", dir=beside) as folder:
        try:
            parts = _training_set(args, Path(folder))
        except TrainError as err:  # says what is wrong with which NODES already
            print(f"newscrawl train: {err}", file=sys.stderr)
            return 2
        except (OSError, ValueError) as err:  # not a nodes dataset, no scheduler at the address
            print(f"newscrawl train: {_short(err)}", file=sys.stderr)
            return 2
        return _fit(args, parts)


def _short(err: BaseException) -> str:
    """pyarrow's message for a folder that holds no Parquet says so at length: one line."""
    text = str(err)
    if "Parquet magic bytes not found" in text or "Could not read schema" in text:
        return (
            "NODES must be `nodes` datasets written by a crawl or `newscrawl sitelevel` "
            "(Parquet); found another kind of file in it"
        )
    return text


def _crawl_selection(nodes: list[str], last: int | None) -> tuple[list[str], list[str]]:
    """NODES with --last N applied (each crawl's nodes dataset replaced by the folders of its N
    most recent crawls), and the crawls trained on ("DATASET/crawl=ID"; [] without crawls)."""
    from newscrawl.training.template_compare import crawl_folders, last_crawls

    chosen: list[str] = []
    crawls: list[str] = []
    for path in nodes:
        folder = Path(path)
        if last is not None:
            picked = last_crawls(folder, last)
        elif folder.is_dir():
            picked = crawl_folders(folder)
        else:
            picked = []
        chosen += [str(p) for p in picked] if last is not None else [path]
        crawls += [p.name.removeprefix("crawl=") for p in picked]
    if last is None and not crawls:
        crawls = [Path(path).name.removeprefix("crawl=") for path in nodes if "crawl=" in path]
    return chosen, crawls


def _training_set(args: argparse.Namespace, folder: Path) -> list[Path]:
    """Assemble the training set of each NODES dataset with TrainingSet, one task per site (on
    Dask with --cluster); the folders written. A TrainError says why there is none: a NODES
    that is empty or holds a damaged file (named), a site that failed, no node to train on."""
    from newscrawl.scale.dask_stages import TrainingSet, dask_client, run_stage, warm_up
    from newscrawl.template.buckets import MIN_AREA
    from newscrawl.training.template_train import TrainError, check_nodes

    for nodes in args.nodes:  # before starting a cluster: input errors come first
        check_nodes(Path(nodes))
    stage = TrainingSet(kind=args.kind, max_nodes=args.max_site_nodes, seed=args.seed)
    parts = []
    with dask_client(args.cluster, args.dask_workers) as client:
        if client is not None:
            warm_up(client, stage)
        for index, nodes in enumerate(args.nodes):
            report = run_stage(stage, nodes, folder / str(index), client=client)
            if report.failed:
                raise TrainError(f"{nodes}: {report.summary()}")
            if not args.quiet:
                print(f"training set of {nodes}: {report.summary()}", file=sys.stderr)
            if report.rows:  # a dataset without a node of the kind asked for adds nothing
                parts.append(folder / str(index))
    if not parts:
        raise TrainError(
            f"no nodes of at least {MIN_AREA:g} px² for kind {args.kind!r} in "
            + ", ".join(args.nodes)
        )
    return parts


def _fit(args: argparse.Namespace, nodes: Sequence[str | Path]) -> int:
    """Read the nodes, fit and save the model, print the report."""
    from newscrawl.training.template_train import (
        TrainConfig,
        TrainError,
        read_nodes,
        recorded_geometries,
        train,
    )

    config = TrainConfig(
        kind=args.kind,
        holdout=args.holdout,
        seed=args.seed,
        C=args.C,
        balanced=not args.plain,
        geometry=args.geometry,
        refit_all=not args.hold_back,
    )
    try:
        # the training set keeps the training columns; the providers come from NODES themselves
        data = replace(read_nodes(nodes), geometries=recorded_geometries(args.nodes))
        model, report = train(data, config, progress=not args.quiet)
    except TrainError as err:
        print(f"newscrawl train: {err}", file=sys.stderr)
        return 2
    provenance = {**model.provenance, "crawls": args.crawls, "nodes": list(args.nodes)}
    model = replace(model, provenance=provenance)  # which crawls the model learnt from
    try:
        path = model.save(args.out)
    except OSError as err:
        print(f"newscrawl train: cannot write {args.out}: {err}", file=sys.stderr)
        return 2
    for line in report.lines():
        print(line)
    if args.crawls:
        print(f"training crawls: {', '.join(args.crawls)}")
    print(f"model -> {path}")
    return 0
