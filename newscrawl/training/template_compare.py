"""Retraining on fresh crawls: the last N crawls of a folder, and a new model against the old.

A scheduled crawl writes each run's SiteLevel labels to ``DIR/nodes/crawl=ID/``. `last_crawls`
picks the N most recent of them (by when their files were written, so any crawl id works), and
`newscrawl train DIR/nodes --last N` trains on those alone and records them in the model
(``provenance.crawls``). With ``--hold-back`` the held-out sites stay out of the final fit too
(``metrics.holdout.site_names``), so `compare_models` - ``newscrawl models compare NEW OLD
NODES...`` - can score the new model and the one in use on the same sites neither was trained
on, before the new one is promoted. Node labels are SiteLevel's, as in training.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.gold.metric import class_figures
from newscrawl.models.template_model import ModelError, TemplateModel, check_features
from newscrawl.template.node_features import FEATURES
from newscrawl.training.template_train import (
    KINDS,
    TrainError,
    read_nodes,
    resolve_geometry,
    training_rows,
)

__all__ = [
    "ModelScore",
    "check_fits",
    "compare_models",
    "crawl_folders",
    "last_crawls",
    "report_lines",
]


def crawl_folders(nodes: Path) -> list[Path]:
    """The ``crawl=ID`` folders of a nodes dataset, oldest first (by their newest file)."""
    folders = [p for p in nodes.glob("crawl=*") if p.is_dir()]

    def written(folder: Path) -> float:
        times = [f.stat().st_mtime for f in folder.rglob("*.parquet")]
        return max(times, default=0.0)

    return sorted(folders, key=lambda folder: (written(folder), folder.name))


def last_crawls(nodes: Path, count: int) -> list[Path]:
    """The `count` most recent crawl folders of the nodes dataset `nodes`."""
    if count < 1:
        raise TrainError(f"--last needs a positive number of crawls, not {count}")
    folders = crawl_folders(nodes)
    if not folders:
        raise TrainError(f"{nodes}: no crawl=ID folders (not a crawl's nodes dataset)")
    return folders[-count:]


@dataclass(frozen=True, slots=True)
class ModelScore:
    """One model on the held-back sites: template-class accuracy, precision, recall and F1,
    and how many of those sites it was trained on (should be 0)."""

    name: str
    accuracy: float
    precision: float
    recall: float
    f1: float
    seen_sites: int


def compare_models(
    new: TemplateModel,
    old: TemplateModel,
    nodes: Sequence[str | Path],
    sites: Sequence[str] | None = None,
    names: tuple[str, str] = ("new model", "old model"),
) -> tuple[list[str], int, list[ModelScore]]:
    """Both models scored on the nodes of `sites` (default: the new model's held-back sites):
    (sites, nodes scored, [new, old]). The nodes are those `newscrawl train` scores its
    held-out sites on (the new model's kind and minimum area), so the figures agree with its
    report; a TrainError, naming the model by `names`, when a model is for other features or
    another geometry provider's boxes than the nodes'."""
    held = sorted(sites or (new.metrics.get("holdout") or {}).get("site_names") or [])
    if not held:
        raise TrainError(
            "the new model names no held-back sites: train it with --hold-back (or give --sites)"
        )
    data = read_nodes(nodes)
    geometry = resolve_geometry(data, None)  # as training takes it; several: an error
    for name, model in zip(names, (new, old), strict=True):
        check_fits(model, geometry, name)
    kind = new.kind if new.kind in KINDS else "all"
    wanted = np.isin(data.site, held) & training_rows(
        data.kind, data.area, data.features, kind, new.min_area
    )
    data = data.subset(np.flatnonzero(wanted))
    if not len(data):
        raise TrainError(f"no nodes of the held-back sites ({', '.join(held)}) in {list(nodes)}")
    scores = [_score(name, model, data, held) for name, model in (("new", new), ("old", old))]
    return held, len(data), scores


def check_fits(model: TemplateModel, geometry: str, name: str) -> None:
    """A TrainError unless `model` is for the nodes' features and for boxes of their geometry
    provider: `extract --model` refuses such a model, and its scores here would mean nothing
    (the area buckets and position features do not carry over to boxes of another kind)."""
    try:
        check_features(model, FEATURES)
    except ModelError as err:
        raise TrainError(f"{name}: {err}") from None
    if model.geometry != geometry:
        raise TrainError(
            f"{name}: model trained on {model.geometry!r} geometry, but the nodes' boxes came "
            f"from {geometry!r}: its area buckets and position features do not carry over"
        )


def _score(name: str, model: TemplateModel, data: Any, sites: Sequence[str]) -> ModelScore:
    # 0.5 on the raw scores, as `newscrawl train` scores its held-out sites
    predicted = np.nan_to_num(model.scores(data.features, data.area)) >= 0.5
    figures = class_figures(data.label, predicted)
    seen = len(set(sites) & set(model.training_sites))
    return ModelScore(name, seen_sites=seen, **figures)


def report_lines(
    sites: Sequence[str], nodes: int, scores: Sequence[ModelScore], paths: Sequence[str]
) -> list[str]:
    """The comparison as text: one row per model, then the difference in F1."""
    lines = [
        f"held-back sites ({len(sites)}, {nodes:,} nodes): {', '.join(sites)}",
        f"{'model':<6} {'accuracy':>8} {'precision':>9} {'recall':>7} {'F1':>6}  seen  file",
    ]
    for score, path in zip(scores, paths, strict=True):
        lines.append(
            f"{score.name:<6} {score.accuracy:>8.3f} {score.precision:>9.3f} "
            f"{score.recall:>7.3f} {score.f1:>6.3f}  {score.seen_sites:>4}  {path}"
        )
    new, old = scores
    verdict = "better" if new.f1 > old.f1 else "not better"
    lines.append(f"new vs old: template F1 {new.f1 - old.f1:+.3f} ({verdict})")
    if any(score.seen_sites for score in scores):
        lines.append("warning: a model was trained on some of these sites; the figures flatter it")
    return lines
