"""The options of `newscrawl models` (build, crossval, compare): `add_arguments`, and the tree
options `TREE_OPTIONS` both actions take."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from newscrawl.commands.cli_options import positive_int

__all__ = ["DEFAULT_DATA", "TREE_OPTIONS", "add_arguments"]

DEFAULT_DATA = Path("../shared/data")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.training.learned_train import TrainParams

    defaults = TrainParams()
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    build = sub.add_parser("build", help="rebuild every shipped model from real pages")
    build.add_argument(
        "data",
        nargs="*",
        type=Path,
        default=[DEFAULT_DATA],
        metavar="DATA",
        help="folder of datasets, or a dataset folder; several may be given, the template "
        "model is built from the first (default: ../shared/data)",
    )
    build.add_argument(
        "--out", type=Path, default=None, metavar="DIR", help="where to write (default: models/)"
    )
    build.add_argument(
        "--only",
        choices=("extractor", "template", "page-type"),
        default=None,
        help="rebuild one model only",
    )
    cross = sub.add_parser(
        "crossval", help="cross-validated quality table of the learned extractor"
    )
    cross.add_argument("datasets", nargs="+", type=Path, metavar="DATASET", help="dataset folder")
    cross.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write JSON")
    _add_compare(sub)
    for command in (build, cross):
        command.add_argument(
            "--hold-out",
            type=_hold_outs,
            default=None,
            metavar="WHAT",
            help="what the cross-validation runs keep apart, comma-separated: site (--folds "
            "folds of whole sites), dataset (each dataset held out in turn: every page scored "
            "by models that never saw its dataset's gold conventions), page_type (each meta "
            "page_type held out in turn); default: all three, those the datasets allow",
        )
        command.add_argument(
            "--page-type",
            type=_dataset_types,
            default={},
            metavar="NAME=TYPE",
            help="train the page type models on every page of dataset NAME (its folder name) "
            "as TYPE where its meta gives no page_type, comma-separated (news datasets: "
            "daniel=article,l3s_gn1=article)",
        )
        command.add_argument(
            "--by",
            default=None,
            metavar="FIELD",
            help="also the cross-validated F1 by this meta.jsonl field (e.g. page_type), the "
            "pages of every dataset pooled",
        )
        command.add_argument(
            "-j",
            "--jobs",
            type=positive_int,
            default=1,
            metavar="N",
            help="pages parsed in N processes",
        )
        command.add_argument(
            "-n", "--limit", type=int, default=None, metavar="N", help="first N pages per dataset"
        )
        command.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
        command.add_argument(
            "--guard",
            choices=("choose", "shipped"),
            default="choose",
            help="the recall guard of the held-out tables: the setting of the grid with the "
            "best held-out F1 (choose, the default), or the shipped model's (the default "
            "extractor as it ships)",
        )
        command.add_argument(
            "--features-cache",
            type=Path,
            default=None,
            metavar="FILE",
            help="keep the parsed pages (features, texts, the peers' texts) in FILE: read it "
            "when it was made from the same datasets, else parse and write it",
        )
        for name, kind, what in TREE_OPTIONS:
            default = getattr(defaults, name)
            command.add_argument(
                f"--{name.replace('_', '-')}",
                type=kind,
                default=default,
                metavar="N",
                help=f"{what} (default: {default})",
            )
        command.add_argument(
            "--folds",
            type=int,
            default=defaults.folds,
            metavar="K",
            help=f"cross-validation folds, sites kept whole (default: {defaults.folds})",
        )


# Classifier settings a user can change to try another model (`TrainParams` fields).
TREE_OPTIONS: tuple[tuple[str, type, str], ...] = (
    ("iterations", int, "boosting iterations per stage"),
    ("learning_rate", float, "boosting learning rate"),
    ("max_leaf_nodes", int, "leaves per tree"),
    ("max_depth", int, "depth per tree"),
    ("min_samples_leaf", int, "blocks per leaf at least"),
    ("l2_regularization", float, "L2 penalty on the leaf values"),
    ("stages", int, "stages (1: no context of neighbouring scores; 2 at most)"),
    ("dataset_power", float, "a page of a dataset of n pages weighs n^-X (0: pages equal)"),
)


def _add_compare(sub: Any) -> None:
    compare = sub.add_parser(
        "compare", help="a new template model against the one in use, on held-back sites"
    )
    compare.add_argument("new", type=Path, metavar="NEW", help="the new model (newscrawl train)")
    compare.add_argument("old", type=Path, metavar="OLD", help="the model in use")
    compare.add_argument("nodes", nargs="+", metavar="NODES", help="nodes dataset(s) to score on")
    compare.add_argument(
        "--last", type=int, default=None, metavar="N", help="only the N most recent crawls"
    )
    compare.add_argument(
        "--sites",
        default=None,
        metavar="A,B",
        help="score on these sites (default: the sites NEW was trained without)",
    )
    compare.add_argument("--json", type=Path, default=None, metavar="FILE", help="also write JSON")


def _hold_outs(value: str) -> list[str]:
    from newscrawl.training.learned_train import HOLD_OUTS

    modes = list(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    wrong = [m for m in modes if m not in HOLD_OUTS]
    if wrong or not modes:
        raise argparse.ArgumentTypeError(
            f"{', '.join(wrong) or 'nothing'}: choose from {', '.join(HOLD_OUTS)}"
        )
    return modes


def _dataset_types(value: str) -> dict[str, str]:
    from newscrawl.extractors.blockmodel.pagetype import PAGE_TYPES

    pairs: dict[str, str] = {}
    for item in (v.strip() for v in value.split(",")):
        name, _, kind = item.partition("=")
        if not name.strip() or kind.strip() not in PAGE_TYPES:
            raise argparse.ArgumentTypeError(
                f"{item or 'nothing'}: NAME=TYPE expected, TYPE one of {', '.join(PAGE_TYPES)}"
            )
        pairs[name.strip()] = kind.strip()
    return pairs
