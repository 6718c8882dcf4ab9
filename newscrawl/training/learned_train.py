"""Fitting the learned extractor: boosted trees on block features, in stages, grouped by site.

Labels: a block is main text when at least half of its 4-token shingles occur in the gold
(`labels.py`). Weights: each block weighs its share of its page's tokens, so every page counts
the same, as in the metric (per-page means), however many blocks it has; then a page of a
dataset of n pages weighs n^-p (`dataset_power` p, 0.5 by default; 0: every page the same,
1: every dataset the same), so the largest datasets' gold conventions do not drown the others'.

Stage 1 scores blocks from their own features. Stage 2 sees stage 1's scores around each block
(`stacking.py`); to learn from scores like those it will meet on unseen pages, it trains on
*out-of-fold* stage-1 scores: each page scored by a stage-1 model that never saw its site.

Cross-validation (`crossval`) is site-grouped and nested: for held-out fold k, the stage-1 scores
stage 2 trains on come from models that saw neither fold k nor the page's own fold. A model
trained without folds {j, k} serves both (k held out, j inner) and (j held out, k inner), so
5 folds need 10 such models, not 20.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from newscrawl.extractors.blockmodel.block_features import FEATURES
from newscrawl.extractors.blockmodel.block_scoring import stage_inputs
from newscrawl.extractors.blockmodel.model import ExtractorModel, TreeEnsemble
from newscrawl.extractors.blockmodel.stacking import CONTEXT_FEATURES
from newscrawl.gold.folds import group_folds
from newscrawl.training.learned_trainset import TrainingSet

__all__ = [
    "TrainParams",
    "assign_folds",
    "check_folds",
    "crossval_scores",
    "dataset_weights",
    "fit_model",
    "hold_out_folds",
    "page_starts",
]

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class TrainParams:
    """Settings of the classifier; the defaults are the ones the shipped model was built with."""

    # fewer, bigger steps: 100 trees walk a page in half the time of 200 at a rate of 0.1
    iterations: int = 100
    learning_rate: float = 0.2
    max_leaf_nodes: int = 31
    max_depth: int = 8
    min_samples_leaf: int = 100
    l2_regularization: float = 1.0
    label_share: float = 0.5  # a block is main text when this share of it is in the gold
    # a page of a dataset of n pages weighs n^-power (mean 1), so no dataset drowns the others
    dataset_power: float = 0.5
    stages: int = 2
    folds: int = 5
    seed: int = 0

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


def page_starts(page: np.ndarray, pages: int) -> np.ndarray:
    """Index of each page's first block (and the end), for blocks sorted by page."""
    return np.searchsorted(page, np.arange(pages + 1))


def assign_folds(sites: Sequence[str], folds: int) -> np.ndarray:
    """Fold of each page; no site is ever split (`gold.folds.group_folds`)."""
    return group_folds(sites, folds)


HOLD_OUTS = ("site", "dataset", "page_type")


def hold_out_folds(data: TrainingSet, folds: int, hold_out: str) -> tuple[np.ndarray, int]:
    """The fold of each page and the number of folds (`crossval_scores`): sites dealt to
    `folds` folds; or one fold per dataset; or one fold per page type (meta ``page_type``),
    pages without a type in no fold (-1: always trained on, never held out)."""
    if hold_out in ("dataset", "page_type"):
        labels = data.page_dataset if hold_out == "dataset" else data.page_type
        names = [name for name in dict.fromkeys(labels) if name]
        if len(names) < 2:
            what = "datasets" if hold_out == "dataset" else "page types"
            raise ValueError(f"holding out {what} needs at least two {what}")
        index = {name: k for k, name in enumerate(names)}
        return np.array([index.get(v, -1) for v in labels], dtype=np.int32), len(names)
    if hold_out != "site":
        raise ValueError(f"hold_out must be one of {', '.join(HOLD_OUTS)}, not {hold_out!r}")
    page_folds = assign_folds(data.page_site, folds)
    return page_folds, int(page_folds.max()) + 1 if len(page_folds) else folds


def check_folds(data: TrainingSet, params: TrainParams, hold_out: str = "site") -> None:
    """Raise ValueError, saying what is missing, unless the pages split into enough folds: two
    at least, three for two stages (the second stage learns from first-stage scores made
    without the held-out fold and without the fold scored)."""
    need = 2 if hold_out != "site" else 3 if params.stages > 1 else 2
    what = {"dataset": "datasets", "page_type": "page types"}.get(hold_out, "sites")
    labels = {"dataset": data.page_dataset, "page_type": data.page_type}.get(hold_out)
    groups = len(set(labels or data.page_site) - {""})
    if groups < need:
        stages = f"{params.stages} stage{'s' if params.stages > 1 else ''}"
        raise ValueError(
            f"cross-validation with {stages} needs pages of at least {need} {what}; these "
            f"{len(data.page_ids)} pages have {groups}"
            + (
                " (--stages 1 needs two)"
                if hold_out == "site" and params.stages > 1 and groups == 2
                else ""
            )
        )


def _labels_weights(data: TrainingSet, params: TrainParams) -> tuple[np.ndarray, np.ndarray]:
    pages = len(data.page_ids)
    page_tokens = np.bincount(data.page, weights=data.tokens, minlength=pages)
    weight = data.tokens / np.maximum(page_tokens[data.page], 1.0)
    if params.dataset_power:
        weight = weight * dataset_weights(data.page_dataset, params.dataset_power)[data.page]
    return (data.share >= params.label_share).astype(np.int8), weight


def dataset_weights(page_dataset: Sequence[str], power: float) -> np.ndarray:
    """Weight of each page: n^-power for a dataset of n pages, scaled to a mean of 1."""
    _, inverse, counts = np.unique(
        np.asarray(page_dataset), return_inverse=True, return_counts=True
    )
    weight = counts[inverse].astype(np.float64) ** -power
    return weight / weight.mean() if len(weight) else weight


def _fit(rows: np.ndarray, y: np.ndarray, w: np.ndarray, params: TrainParams) -> TreeEnsemble:
    from sklearn.ensemble import HistGradientBoostingClassifier

    model = HistGradientBoostingClassifier(
        max_iter=params.iterations,
        learning_rate=params.learning_rate,
        max_leaf_nodes=params.max_leaf_nodes,
        max_depth=params.max_depth,
        min_samples_leaf=params.min_samples_leaf,
        l2_regularization=params.l2_regularization,
        early_stopping=False,
        random_state=params.seed,
    )
    model.fit(rows, y, sample_weight=w)
    return TreeEnsemble.from_sklearn(model)


class _Stages:
    """Per-page stage inputs, built page by page exactly as `score_blocks` builds them."""

    def __init__(self, data: TrainingSet) -> None:
        self.data = data
        self.starts = page_starts(data.page, len(data.page_ids))

    def inputs(self, previous: np.ndarray | None) -> np.ndarray:
        if previous is None:
            return self.data.features
        parts = [
            stage_inputs(self.data.features[a:b], previous[a:b], self.data.groups[a:b])
            for a, b in itertools.pairwise(self.starts)
        ]
        return np.vstack(parts)


def _fit_stage(
    rows: np.ndarray, data: TrainingSet, mask: np.ndarray, params: TrainParams
) -> TreeEnsemble:
    y, w = _labels_weights(data, params)
    train = mask & (data.tokens > 0)  # blocks without tokens never change a score
    return _fit(rows[train], y[train], w[train], params)


def fit_model(
    data: TrainingSet,
    params: TrainParams,
    threshold: float,
    provenance: dict,
    progress: Progress | None = None,
    stage1_oof: np.ndarray | None = None,
    guard: dict[str, float] | None = None,
) -> ExtractorModel:
    """Train the model on every block of `data` (later stages on out-of-fold scores).

    `stage1_oof`: stage 1's out-of-fold scores when already known (`crossval_scores` computes
    exactly them), which saves refitting the per-fold models. `guard`: the recall guard's
    settings to record (`guard.GuardParams.to_json`).
    """
    say = progress or (lambda _: None)
    stages = _Stages(data)
    folds = assign_folds(data.page_site, params.folds)[data.page]
    everything = np.ones(len(data.page), dtype=bool)
    fitted: list[TreeEnsemble] = []
    previous: np.ndarray | None = None
    for stage in range(params.stages):
        rows = stages.inputs(previous)
        say(f"stage {stage + 1}: fitting on all pages")
        fitted.append(_fit_stage(rows, data, everything, params))
        if stage == 0 and stage1_oof is not None and params.stages > 1:
            previous = stage1_oof
        elif stage + 1 < params.stages:
            previous = np.zeros(len(data.page))
            for k in range(params.folds):
                say(f"stage {stage + 1}: out-of-fold scores, fold {k + 1}/{params.folds}")
                model = _fit_stage(rows, data, folds != k, params)
                previous[folds == k] = model.predict(rows[folds == k])
    return ExtractorModel(
        features=tuple(FEATURES),
        context=tuple(CONTEXT_FEATURES) if params.stages > 1 else (),
        stages=tuple(fitted),
        threshold=threshold,
        provenance=provenance,
        guard=dict(guard or {}),
    )


def crossval_scores(
    data: TrainingSet,
    params: TrainParams,
    progress: Progress | None = None,
    hold_out: str = "site",
) -> tuple[np.ndarray, np.ndarray]:
    """Each block's score from models that never saw its site (nested for later stages), and
    its stage-1 out-of-fold score (what `fit_model` trains stage 2 on).

    `hold_out`: "site" deals whole sites to `params.folds` folds; "dataset" makes each dataset
    a fold of its own, so every page is scored by models that never saw its dataset - the
    nearest figure to a new dataset's, with gold conventions the training never met;
    "page_type" makes each page type a fold (pages without a type are always trained on and
    get no score: NaN).
    """
    check_folds(data, params, hold_out)
    if hold_out != "site":
        return _group_scores(data, params, hold_out, progress or (lambda _: None))
    say = progress or (lambda _: None)
    stages = _Stages(data)
    page_folds, n = hold_out_folds(data, params.folds, hold_out)
    folds = page_folds[data.page]
    rows = stages.inputs(None)
    # stage-1 scores: held[k] scores fold k; inner[(j, k)] scores fold j without folds j and k
    held = np.zeros(len(data.page))
    inner: dict[tuple[int, int], np.ndarray] = {}
    for k in range(n):
        say(f"stage 1: fold {k + 1}/{n}")
        model = _fit_stage(rows, data, folds != k, params)
        held[folds == k] = model.predict(rows[folds == k])
    if params.stages == 1:
        return held, held
    for j, k in itertools.combinations(range(n), 2):
        say(f"stage 1: without folds {j + 1} and {k + 1}")
        model = _fit_stage(rows, data, (folds != j) & (folds != k), params)
        inner[(j, k)] = inner[(k, j)] = model.predict(rows)
    if params.stages > 2:
        raise ValueError("cross-validation supports one or two stages")
    final = np.zeros(len(data.page))
    for k in range(n):
        say(f"stage 2: fold {k + 1}/{n}")
        previous = held.copy()  # fold k keeps its honest held-out scores
        for j in range(n):
            if j != k:
                previous[folds == j] = inner[(j, k)][folds == j]
        rows2 = stages.inputs(previous)
        model = _fit_stage(rows2, data, folds != k, params)
        final[folds == k] = model.predict(rows2[folds == k])
    return final, held


# Site-grouped folds of the training pages whose stage-1 scores a held-out group's stage 2
# learns from (`_group_scores`).
INNER_FOLDS = 2


def _group_scores(
    data: TrainingSet, params: TrainParams, hold_out: str, say: Progress
) -> tuple[np.ndarray, np.ndarray]:
    """`crossval_scores` holding out one group (dataset, page type) at a time.

    For held-out group k, stage 2 learns from stage-1 scores of the other groups' pages made
    by models that saw neither group k nor the page's own site (`INNER_FOLDS` site-grouped
    folds of those pages): 2 + `INNER_FOLDS` fits per group, however many groups there are.
    """
    stages = _Stages(data)
    page_folds, n = hold_out_folds(data, params.folds, hold_out)
    folds = page_folds[data.page]
    inner = assign_folds(data.page_site, INNER_FOLDS)[data.page]
    rows = stages.inputs(None)
    held = np.full(len(data.page), np.nan)
    final = np.full(len(data.page), np.nan)
    for k in range(n):
        test, train = folds == k, folds != k
        say(f"{hold_out} {k + 1}/{n}: stage 1")
        held[test] = _fit_stage(rows, data, train, params).predict(rows[test])
        if params.stages == 1:
            continue
        previous = held.copy()
        for i in range(INNER_FOLDS):
            say(f"{hold_out} {k + 1}/{n}: stage 1, inner fold {i + 1}/{INNER_FOLDS}")
            scored = train & (inner == i)
            model = _fit_stage(rows, data, train & (inner != i), params)
            previous[scored] = model.predict(rows[scored])
        say(f"{hold_out} {k + 1}/{n}: stage 2")
        rows2 = stages.inputs(np.nan_to_num(previous))
        final[test] = _fit_stage(rows2, data, train, params).predict(rows2[test])
    return (held if params.stages == 1 else final), held
