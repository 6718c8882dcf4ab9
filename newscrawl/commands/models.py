"""Build the shipped models from real pages, and measure the learned extractor honestly.

``newscrawl models build [DATA]`` rebuilds every model shipped in models/ from the datasets in
DATA (default ../shared/data: every folder holding html/ and gold/): the learned extractor's
model (models/extractor_model.json), the page type model (models/page_type_model.json, from
the pages whose meta gives a page_type) and the default template model. It is deterministic
(fixed seeds, fixed page order): a second run writes the same bytes. The extractor's decision
threshold is chosen in the same run by site-grouped 5-fold cross-validation, and the recall
guard's settings on the datasets and page types held out whole; it prints the tables (as
`crossval` does); the model file records the datasets, page and site counts, features,
library versions, the cross-validated figures and this command. Peer figures in the file
(trafilatura's) depend on whether trafilatura is installed; the trees do not.

``newscrawl models crossval DATASET...`` prints the learned extractor's cross-validated shingle
F1 beside NCE, MSS, CETD-TPC and trafilatura (when installed: pip install 'newscrawl[bench]')
run on the same pages in the same run: per dataset under site-grouped folds (no page is ever
scored by a model that saw its site), then per unit held out whole - each dataset in turn, each
meta page_type in turn - without and with the recall guard, with the best seed and the margin
over it. This is the quality table of docs/extraction.md.

``newscrawl models compare NEW OLD NODES... [--last N]`` scores two template models (`newscrawl
train` files) on the same held-back sites - by default those NEW was trained without
(``newscrawl train --hold-back``) - on the SiteLevel labels of NODES, before NEW replaces OLD.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newscrawl.commands.models_options import TREE_OPTIONS, add_arguments
from newscrawl.models.template_model import bundled_model_path

__all__ = ["HELP", "add_arguments", "run"]

HELP = "rebuild the shipped models; cross-validate the learned extractor"


def run(args: argparse.Namespace) -> int:
    if args.action == "build":
        return _build(args)
    if args.action == "compare":
        return _compare(args)
    return _crossval(args)


def _compare(args: argparse.Namespace) -> int:
    """Print both models' figures on the held-back sites (exit 0), or why it cannot (2)."""
    from dataclasses import asdict

    from newscrawl.models.template_model import TemplateModel
    from newscrawl.training.template_compare import compare_models, last_crawls, report_lines

    try:
        new, old = TemplateModel.load(args.new), TemplateModel.load(args.old)
        nodes = args.nodes
        if args.last is not None:
            nodes = [str(p) for n in nodes for p in last_crawls(Path(n), args.last)]
        sites = [s.strip() for s in args.sites.split(",") if s.strip()] if args.sites else None
        names = (f"NEW {args.new}", f"OLD {args.old}")  # which model a refusal is about
        held, count, scores = compare_models(new, old, nodes, sites, names)
    except (OSError, ValueError) as err:  # TrainError is a ValueError; so are bad model files
        print(f"newscrawl models compare: {err}", file=sys.stderr)
        return 2
    for line in report_lines(held, count, scores, [str(args.new), str(args.old)]):
        print(line)
    if args.json:
        report = {"sites": held, "nodes": count, "models": [asdict(s) for s in scores]}
        args.json.write_text(json.dumps(report, indent=1))
    return 0


def find_datasets(root: Path) -> list[Path]:
    """Dataset folders directly under `root` (holding html/ and gold/), sorted by name."""
    return sorted(p for p in root.iterdir() if _is_dataset(p))


def _is_dataset(path: Path) -> bool:
    return (path / "html").is_dir() and (path / "gold").is_dir()


def build_datasets(folders: list[Path]) -> list[Path]:
    """The datasets of `folders` (each a dataset folder or a folder of them), sorted by name;
    ValueError when two share a name (a page's dataset is its folder's name)."""
    found = [f for folder in folders for f in ([folder] if _is_dataset(folder)
             else find_datasets(folder))]  # fmt: skip
    names = [f.resolve().name for f in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two datasets called {', '.join(twice)}")
    return sorted(found, key=lambda f: f.resolve().name)


def _unknown_labelled(args: argparse.Namespace, datasets: list[Path]) -> str | None:
    """Why --page-type names a dataset that is not among `datasets`, or None."""
    names = {d.resolve().name for d in datasets}
    unknown = sorted(set(args.page_type) - names)
    if not unknown:
        return None
    return (
        f"--page-type names no dataset given: {', '.join(unknown)} (datasets: "
        f"{', '.join(sorted(names))})"
    )


def _progress(args: argparse.Namespace):
    start = time.monotonic()

    def say(message: str) -> None:
        if not args.quiet:
            print(f"[{time.monotonic() - start:7.1f}s] {message}", file=sys.stderr, flush=True)

    return say


def _crossval(args: argparse.Namespace) -> int:
    missing = [str(p) for p in args.datasets if not (p / "html").is_dir()]
    if missing:
        print(f"error: not a dataset folder (no html/): {', '.join(missing)}", file=sys.stderr)
        return 2
    params = _params(args)  # before minutes of parsing
    if args.hold_out and "dataset" in args.hold_out and len(args.datasets) < 2:
        print("error: --hold-out dataset needs at least 2 datasets", file=sys.stderr)
        return 2
    if problem := _unknown_labelled(args, args.datasets):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    _warn_without_sites(args.datasets)
    say = _progress(args)
    try:
        data = _pages(args.datasets, args, True, say)
    except ValueError as err:  # a features cache of other pages
        print(f"error: {err}", file=sys.stderr)
        return 2
    try:
        outcome = _cross_validate(data, params, args, say)
    except ValueError as err:  # too few sites or datasets to fold
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.json:
        report = _report(outcome.result, outcome.groups, outcome)
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return 0


@dataclass(slots=True)
class _Outcome:
    """What one cross-validation of the learned extractor measured and chose."""

    result: Any  # crossval.CrossvalResult of the first site or dataset run
    site_stage1: Any  # stage-1 out-of-fold scores of the site-grouped run (None without one)
    guard: Any  # guard.GuardParams chosen
    objective: float  # its mean F1 over the units held out whole
    rows: list[Any]  # crossval.GeneralisationRow
    groups: dict[str, Any] | None
    runs: list[Any]  # crossval.HeldOutRun: the out-of-fold block scores of each hold-out


def _modes(args: argparse.Namespace, data: Any, say: Any) -> list[str]:
    """The hold-outs asked for (--hold-out), or by default all that the pages allow."""
    if args.hold_out:
        return list(args.hold_out)
    modes = ["site"]
    if len(set(data.page_dataset)) >= 2:
        modes.append("dataset")
    if len(set(data.page_type) - {""}) >= 2:
        modes.append("page_type")
    left = sorted({"dataset", "page_type"} - set(modes))
    if left:
        say(f"no {' or '.join(left)} hold-out: the pages have fewer than two of them")
    return modes


def _cross_validate(data: Any, params: Any, args: argparse.Namespace, say: Any) -> _Outcome:
    """Run every hold-out, print the tables, choose the threshold and the guard."""
    import numpy as np

    from newscrawl.training.learned_crossval import (
        HeldOutRun,
        choose_guard,
        format_generalisation,
        format_table,
        generalisation_rows,
        held_out_kinds,
        score_thresholds,
    )
    from newscrawl.training.learned_train import crossval_scores
    from newscrawl.training.learned_trainset import page_type_labels

    runs, site_stage1 = [], None
    for mode in _modes(args, data, say):
        scores, stage1 = crossval_scores(data, params, say, hold_out=mode)
        runs.append(HeldOutRun(mode, scores))
        if mode == "site":
            site_stage1 = stage1
    main = next((r for r in runs if r.mode != "page_type"), None)
    if main is None:  # page types alone: the shipped model's threshold
        from newscrawl.extractors.blockmodel.model import (
            bundled_extractor_model,
            load_extractor_model,
        )

        threshold = load_extractor_model(bundled_extractor_model()).threshold
        result = score_thresholds(data, np.nan_to_num(runs[0].scores), (threshold,), "page_type")
    else:
        result = score_thresholds(data, main.scores, hold_out=main.mode)
        threshold = result.best_threshold
        print("\n".join(format_table(result)), flush=True)
    groups = _print_groups(args, data, result)
    labels = page_type_labels(data, args.page_type)
    kinds = held_out_kinds(data, [run.mode for run in runs], labels)
    objective: dict[Any, float] = {}
    if args.guard == "shipped":
        guard = _shipped_guard()
    else:
        guard, objective = choose_guard(data, runs, threshold, kinds=kinds)
    rows = generalisation_rows(data, runs, threshold, guard, kinds)
    print(f"\nheld out whole (threshold {threshold:g}; guard {_guard_text(guard)}):")
    print("\n".join(format_generalisation(rows)), flush=True)
    return _Outcome(result, site_stage1, guard, objective.get(guard, 0.0), rows, groups, runs)


def _shipped_guard() -> Any:
    """The recall guard the shipped extractor model applies (its file's, else the defaults)."""
    from newscrawl.extractors.blockmodel.model import bundled_extractor_model, load_extractor_model
    from newscrawl.extractors.blockmodel.recall_guard import GuardParams

    return GuardParams.from_json(load_extractor_model(bundled_extractor_model()).guard)


def _guard_text(guard: Any) -> str:
    if guard.agree > 1:
        return "off"
    return f"agree {guard.agree:g}, kept {guard.kept:g}, floor {guard.floor:g}"


def _params(args: argparse.Namespace) -> Any:
    """The training parameters of the options; SystemExit(2), after a line naming the option
    that is out of range."""
    from newscrawl.training.learned_train import TrainParams

    a = args
    checks = [
        (a.folds >= 2, f"--folds must be 2 or more, not {a.folds}"),
        (1 <= a.stages <= 2, f"--stages must be 1 or 2, not {a.stages}"),
        (0 < a.learning_rate <= 1, f"--learning-rate must be in (0, 1], not {a.learning_rate}"),
        (0 <= a.dataset_power <= 1, f"--dataset-power must be in [0, 1], not {a.dataset_power}"),
        (a.l2_regularization >= 0, "--l2-regularization must be 0 or more"),
        (a.max_leaf_nodes >= 2, f"--max-leaf-nodes must be 2 or more, not {a.max_leaf_nodes}"),
    ] + [
        (getattr(args, name) >= 1, f"--{name.replace('_', '-')} must be 1 or more, "
         f"not {getattr(args, name)}")
        for name in ("iterations", "max_depth", "min_samples_leaf")
    ]  # fmt: skip
    for ok, message in checks:
        if not ok:
            print(f"error: {message}", file=sys.stderr)
            raise SystemExit(2)
    tree = {name: getattr(args, name) for name, _, _ in TREE_OPTIONS}
    return TrainParams(folds=args.folds, **tree)


def _warn_without_sites(folders: list[Path]) -> None:
    """Say so when a dataset has no meta.jsonl: its pages cannot be grouped by site, so each
    page is a site of its own and pages of one site can fall on both sides of a fold (the
    figures flatter the model)."""
    bare = [str(folder) for folder in folders if not (folder / "meta.jsonl").is_file()]
    if bare:
        print(
            f"warning: no meta.jsonl in {', '.join(bare)}: without a url or site per page, "
            "each page is a site of its own and a site's pages may be in training and test "
            "folds alike",
            file=sys.stderr,
        )


def _has_trafilatura() -> bool:
    try:
        import trafilatura  # noqa: F401
    except ImportError:
        print("trafilatura is not installed: its column is left out", file=sys.stderr)
        return False
    return True


def _page_groups(data: Any, folders: list[Path], field_name: str) -> list[str]:
    """Each page's value of meta.jsonl field `field_name` ("-" when it has none)."""
    from newscrawl.evaluation.evaluator import group_value
    from newscrawl.gold.dataset import read_meta

    meta: dict[str, dict[str, Any]] = {}
    for folder in folders:
        lines, _ = read_meta(folder / "meta.jsonl")
        meta.update({f"{folder.name}/{page}": line for page, line in lines.items()})
    return [group_value(meta.get(page, {}), field_name) for page in data.page_ids]


def _print_groups(args: argparse.Namespace, data: Any, result: Any) -> dict[str, Any] | None:
    """The table by meta field (--by), printed; its figures for the JSON report."""
    from newscrawl.training.learned_crossval import format_groups, group_f1

    if not args.by:
        return None
    folders = args.datasets if args.action == "crossval" else build_datasets(args.data)
    groups = _page_groups(data, folders, args.by)
    print(f"\nby {args.by} (every dataset pooled):")
    print("\n".join(format_groups(result, groups, args.by)))
    table = group_f1(result, groups)
    figures = {v: {n: round(f, 4) for n, (_, f) in cells.items()} for v, cells in table.items()}
    return {"field": args.by, "f1": figures}


def _report(
    result: Any, groups: dict[str, Any] | None = None, outcome: _Outcome | None = None
) -> dict[str, Any]:
    """Per dataset and pooled: F1 of the learned extractor (best threshold) and of every peer;
    by meta field too when asked (`groups`); the held-out-whole table and the guard chosen."""
    datasets = [*dict.fromkeys(result.datasets), "all"]
    best = result.best_threshold
    rows = {"learned": result.learned[best], **result.peers}
    held: dict[str, Any] = {}
    if outcome is not None:
        held = {
            "guard": outcome.guard.to_json(),
            "guard_objective": round(outcome.objective, 4),
            "held_out": [
                {
                    "mode": r.mode,
                    "unit": r.unit,
                    "pages": r.pages,
                    "f1": {n: round(f, 4) for n, f in r.f1.items()},
                }
                for r in outcome.rows
            ],
        }
    return {
        **held,
        **({"by": groups} if groups else {}),
        "hold_out": result.hold_out,
        "threshold": best,
        "f1_by_threshold": {f"{t:g}": round(result.f1(s), 4) for t, s in result.learned.items()},
        "f1": {
            name: {d: round(result.f1(scores, d), 4) for d in datasets}
            for name, scores in rows.items()
        },
    }


def _build(args: argparse.Namespace) -> int:
    missing = [str(folder) for folder in args.data if not folder.is_dir()]
    if missing:
        print(f"error: no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    try:
        datasets = build_datasets(args.data)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if not datasets:
        print(f"error: no dataset folders (html/ and gold/) in {_data_text(args)}", file=sys.stderr)
        return 2
    params = _params(args) if args.only in (None, "extractor") else None
    problem = _unknown_labelled(args, datasets)
    if problem is None and args.only in (None, "template"):
        problem = _template_datasets_missing(args.data[0])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    _warn_without_sites(datasets)
    out = args.out or bundled_model_path().parent
    command = _command(args)
    built: list[tuple[Path, Any]] = []  # written once every model is built: none half-way
    try:
        data = None
        if args.only in (None, "extractor", "page-type"):
            typed = _typed(datasets, set(args.page_type))
            data = _training_set(datasets if args.only != "page-type" else typed, args)
        if params is not None:
            model = _build_extractor(data, args, params, command)
            built.append((out / "extractor_model.json", model))
        if args.only in (None, "extractor", "page-type"):
            model = _build_page_types(data, command, args.page_type)
            built.append((out / "page_type_model.json", model))
        if args.only in (None, "template"):
            from newscrawl.training.template_default import default_template_model

            template = default_template_model(args.data[0])
            built.append((out / "default_template_model.json", template))
    except ValueError as err:  # too few sites to fold, no pages to train on
        print(f"error: {err}; nothing written", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    for path, model in built:
        model.save(path)
        print(f"wrote {path}")
    return 0


def _template_datasets_missing(data: Path) -> str | None:
    """Why the template model cannot be built from `data` (it trains on the six datasets it
    names in its provenance), or None."""
    from newscrawl.training.template_default import DATASETS

    missing = [name for name in DATASETS if not (data / name / "html").is_dir()]
    if not missing:
        return None
    return (
        f"the default template model trains on {', '.join(DATASETS)}; {data} has no "
        f"{', '.join(missing)} (--only extractor builds the extractor model from the datasets "
        "there)"
    )


def _command(args: argparse.Namespace) -> str:
    from newscrawl.training.learned_train import TrainParams

    parts = ["newscrawl", "models", "build", _data_text(args)]
    if args.limit is not None:
        parts += ["--limit", str(args.limit)]
    if args.only:
        parts += ["--only", args.only]
    if args.by:
        parts += ["--by", args.by]
    if args.page_type:
        parts += ["--page-type", ",".join(f"{k}={v}" for k, v in sorted(args.page_type.items()))]
    if args.hold_out:
        parts += ["--hold-out", ",".join(args.hold_out)]
    if args.guard != "choose":
        parts += ["--guard", args.guard]
    defaults = TrainParams()
    for option in ("folds", *(name for name, _, _ in TREE_OPTIONS)):
        value = getattr(args, option)
        if value != getattr(defaults, option):
            parts += [f"--{option.replace('_', '-')}", str(value)]
    return " ".join(parts)


def _data_text(args: argparse.Namespace) -> str:
    return " ".join(str(folder) for folder in args.data)


def _typed(datasets: list[Path], labelled: set[str]) -> list[Path]:
    """The datasets whose meta.jsonl gives some page a page_type, or named in `labelled`."""
    from newscrawl.gold.dataset import read_meta
    from newscrawl.training.learned_trainset import page_type_of

    def typed(d: Path) -> bool:
        return any(page_type_of(m) for m in read_meta(d / "meta.jsonl")[0].values())

    return [d for d in datasets if d.resolve().name in labelled or typed(d)]


def _training_set(datasets: list[Path], args: argparse.Namespace) -> Any:
    return _pages(datasets, args, args.only != "page-type", _progress(args))


def _pages(datasets: list[Path], args: argparse.Namespace, peer: bool, say: Any) -> Any:
    """The training set of `datasets` (trafilatura's texts too when `peer` and installed),
    parsed, or read from --features-cache when that was made from the same datasets;
    ValueError when the cache is of other pages or not a cache."""
    from newscrawl.training.learned_trainset import (
        build_training_set,
        load_training_set,
        save_training_set,
    )

    with_peer = peer and _has_trafilatura()
    source = {
        "datasets": [str(d.resolve()) for d in datasets],
        "limit": args.limit,
        "trafilatura": with_peer,
    }
    cache = args.features_cache
    if cache is not None and cache.exists():
        data = load_training_set(cache, source)
        say(f"read {cache}: {len(data.page_ids)} pages, {len(data.page)} blocks")
        return data
    say("parsing pages, running the seed extractors (and trafilatura, for the table)")
    data = build_training_set(datasets, args.limit, args.jobs, trafilatura=with_peer)
    say(f"{len(data.page_ids)} pages, {data.sites} sites, {len(data.page)} blocks")
    if cache is not None:
        save_training_set(data, cache, source)
        say(f"wrote {cache}")
    return data


def _build_page_types(data: Any, command: str, by_dataset: dict[str, str]) -> Any:
    """The page type model of the typed pages of `data` (meta page_type, else `by_dataset`'s
    type of the page's dataset), its site-grouped CV printed, by dataset too."""
    import numpy as np

    from newscrawl.extractors.blockmodel.pagetype import (
        DATASET_POWER,
        crossval_page_types,
        fit_page_types,
        format_page_types,
        page_vector,
    )
    from newscrawl.training.learned_crossval import page_blocks
    from newscrawl.training.learned_trainset import page_type_labels

    every = page_type_labels(data, by_dataset)
    typed = [i for i, kind in enumerate(every) if kind]
    labels = [every[i] for i in typed]
    if len(set(labels)) < 2:
        raise ValueError("the page type model needs pages of two page types at least (meta "
                         "page_type), as wcxb_dev's")  # fmt: skip
    ranges = page_blocks(data)
    vectors = np.vstack([page_vector(data.features[slice(*ranges[i])]) for i in typed])
    sites = [data.page_site[i] for i in typed]
    names = [data.page_dataset[i] for i in typed]
    _, figures = crossval_page_types(vectors, labels, sites, datasets=names)
    print("\n".join(format_page_types(figures)), flush=True)
    provenance = {
        "trained_on": {"pages": len(typed), "sites": len(set(sites))},
        "dataset_power": DATASET_POWER,
        "crossval": figures,
        "libraries": _versions(),
        "command": command,
    }
    return fit_page_types(vectors, labels, provenance, datasets=names)


def _build_extractor(data: Any, args: argparse.Namespace, params: Any, command: str) -> Any:
    from newscrawl.training.learned_train import fit_model

    say = _progress(args)
    if args.hold_out and "site" not in args.hold_out:
        raise ValueError("models build chooses its threshold by site-grouped folds: --hold-out "
                         "must name site")  # fmt: skip
    outcome = _cross_validate(data, params, args, say)
    result, stage1_oof = outcome.result, outcome.site_stage1
    threshold = result.best_threshold
    provenance = {
        "trained_on": _dataset_counts(data),
        "blocks": len(data.page),
        "params": params.to_json(),
        "threshold_by": f"site-grouped {params.folds}-fold cross-validation, best pooled F1",
        "guard_by": "the best mean F1 over the datasets and page types held out whole, at "
        "most 0.002 of site-grouped pooled F1 lost",
        "crossval": _report(result, outcome.groups, outcome),
        "libraries": _versions(),
        "command": command,
    }
    guard = outcome.guard.to_json()
    return fit_model(data, params, threshold, provenance, say, stage1_oof, guard)


def _dataset_counts(data: Any) -> dict[str, dict[str, int]]:
    pages: dict[str, int] = {}
    sites: dict[str, set[str]] = {}
    for dataset, site in zip(data.page_dataset, data.page_site, strict=True):
        pages[dataset] = pages.get(dataset, 0) + 1
        sites.setdefault(dataset, set()).add(site)
    return {d: {"pages": pages[d], "sites": len(sites[d])} for d in pages}


def _versions() -> dict[str, str]:
    import platform

    import lxml.etree
    import numpy
    import sklearn

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scikit-learn": sklearn.__version__,
        "lxml": ".".join(map(str, lxml.etree.LXML_VERSION)),
    }
