"""The learned extractor's honest quality: site-grouped cross-validated figures beside its peers.

Every page is scored by a model that never saw its site (`train.crossval_scores`); its text is
the blocks scoring at or above the threshold. The peers (NCE, MSS, CETD-TPC, and trafilatura
when installed) ran on the same pages in the same run. The threshold itself is chosen here, as
the one with the best pooled cross-validated F1, and is what the shipped model uses.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from newscrawl.extractors.blockmodel.recall_guard import (
    DOCUMENTATION,
    GUARD_GRID,
    OFF,
    GuardParams,
    grid_outcomes,
    routed_guard,
)
from newscrawl.gold.metric import f1, score_page
from newscrawl.training.learned_trainset import TrainingSet

__all__ = [
    "THRESHOLDS",
    "CrossvalResult",
    "format_groups",
    "format_table",
    "group_f1",
    "score_thresholds",
]

THRESHOLDS = (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
_POOLED = "all"


@dataclass(slots=True)
class CrossvalResult:
    """Per-page (precision, recall) of the learned extractor at each threshold and of peers."""

    datasets: list[str]  # dataset of each page
    hold_out: str = "site"  # what the folds kept apart: "site" or "dataset"
    learned: dict[float, list[tuple[float, float]]] = field(default_factory=dict)
    peers: dict[str, list[tuple[float, float]]] = field(default_factory=dict)

    def f1(self, scores: Sequence[tuple[float, float]], dataset: str = _POOLED) -> float:
        """F1 of the mean precision and mean recall over the dataset's pages (or all)."""
        chosen = [s for s, d in zip(scores, self.datasets, strict=True) if dataset in (_POOLED, d)]
        if not chosen:
            return 0.0
        return f1(float(np.mean([p for p, _ in chosen])), float(np.mean([r for _, r in chosen])))

    @property
    def best_threshold(self) -> float:
        """The threshold with the best pooled F1 (the lower one on a tie)."""
        return max(sorted(self.learned), key=lambda t: self.f1(self.learned[t]))


def score_thresholds(
    data: TrainingSet,
    scores: np.ndarray,
    thresholds: Sequence[float] = THRESHOLDS,
    hold_out: str = "site",
) -> CrossvalResult:
    """Score the learned selections at each threshold, and the peers' texts, against the gold
    (`hold_out`: what the folds that gave `scores` kept apart, for the table's label)."""
    result = CrossvalResult(datasets=list(data.page_dataset), hold_out=hold_out)
    starts = np.searchsorted(data.page, np.arange(len(data.page_ids) + 1))
    for threshold in thresholds:
        result.learned[threshold] = []
    for page, (a, b) in enumerate(itertools.pairwise(starts)):
        gold = data.gold[page]
        for threshold in thresholds:
            kept = [data.texts[j] for j in range(a, b) if scores[j] >= threshold]
            result.learned[threshold].append(_pr(gold, "\n".join(kept)))
    for peer, texts in data.peers.items():
        result.peers[peer] = [_pr(g, t) for g, t in zip(data.gold, texts, strict=True)]
    return result


def _pr(gold: str, text: str) -> tuple[float, float]:
    score = score_page(gold, text)
    return score.precision, score.recall


def format_table(result: CrossvalResult) -> list[str]:
    """Rows: extractors; columns: datasets then the pooled figure (shingle F1)."""
    datasets = list(dict.fromkeys(result.datasets))
    best = result.best_threshold
    folds = "CV" if result.hold_out == "site" else f"CV by {result.hold_out}"
    rows = {f"learned ({folds}, threshold {best:g})": result.learned[best], **result.peers}
    width = max(len(r) for r in rows)
    names = [*datasets, _POOLED]
    counts = [result.datasets.count(d) for d in datasets] + [len(result.datasets)]
    head = "  ".join(f"{n[:15]:>15}" for n in names)
    lines = [f"{'shingle F1'.ljust(width)}  {head}"]
    lines.append(f"{'pages'.ljust(width)}  " + "  ".join(f"{c:>15}" for c in counts))
    for name, scores in rows.items():
        cells = "  ".join(f"{result.f1(scores, d):>15.3f}" for d in names)
        lines.append(f"{name.ljust(width)}  {cells}")
    curve = ", ".join(f"{t:g}: {result.f1(s):.3f}" for t, s in sorted(result.learned.items()))
    lines.append(f"learned, pooled F1 by threshold: {curve}")
    return lines


def group_f1(
    result: CrossvalResult, groups: Sequence[str]
) -> dict[str, dict[str, tuple[int, float]]]:
    """Per group value (one per page, in order of first appearance) and per extractor (the
    learned one at its best threshold, then the peers): pages and F1 of the group's pages."""
    rows = {"learned": result.learned[result.best_threshold], **result.peers}
    out: dict[str, dict[str, tuple[int, float]]] = {}
    for value in dict.fromkeys(groups):
        chosen = [i for i, g in enumerate(groups) if g == value]
        out[value] = {}
        for name, scores in rows.items():
            picked = [scores[i] for i in chosen]
            precision = float(np.mean([p for p, _ in picked]))
            recall = float(np.mean([r for _, r in picked]))
            out[value][name] = (len(chosen), f1(precision, recall))
    return out


def format_groups(result: CrossvalResult, groups: Sequence[str], field_name: str) -> list[str]:
    """Rows: values of a meta field (page_type...); columns: the learned extractor (its best
    threshold, the same cross-validated scores as `format_table`) and each peer."""
    table = group_f1(result, groups)
    names = ["learned", *result.peers]
    width = max([len(field_name), *(len(v) for v in table)])
    lines = [f"{field_name.ljust(width)}  {'pages':>6}  " + "  ".join(f"{n:>12}" for n in names)]
    for value, cells in table.items():
        pages = next(iter(cells.values()))[0]
        figures = "  ".join(f"{cells[n][1]:>12.3f}" for n in names)
        lines.append(f"{value.ljust(width)}  {pages:>6}  {figures}")
    return lines


# -- generalisation: datasets and page types held out whole, the guard chosen on them --------

LEARNED = "learned"  # the trees' selection alone
DEFAULT = "default"  # the trees and the recall guard routed by page type, as extraction runs


@dataclass(slots=True)
class HeldOutRun:
    """Block scores of one cross-validation run: `mode` says what its folds kept apart
    ("site", "dataset", "page_type"); NaN marks blocks of pages it never held out."""

    mode: str
    scores: np.ndarray


def page_blocks(data: TrainingSet) -> list[tuple[int, int]]:
    """Each page's block range [a, b) in `data`."""
    starts = np.searchsorted(data.page, np.arange(len(data.page_ids) + 1))
    return list(itertools.pairwise(starts.tolist()))


def _selection_scorer(data: TrainingSet, ranges: list[tuple[int, int]]):
    def score(page: int, kept: np.ndarray) -> tuple[float, float]:
        a, _ = ranges[page]
        text = "\n".join(data.texts[a + j] for j in np.flatnonzero(kept))
        return _pr(data.gold[page], text)

    return score


def guard_outcomes(
    data: TrainingSet,
    run: HeldOutRun,
    threshold: float,
    grid: Sequence[GuardParams],
    kinds: Sequence[str] | None = None,
) -> tuple[list[int], dict[GuardParams, list[tuple[float, float]]]]:
    """The pages `run` held out, and per guard setting their (precision, recall). With `kinds`
    (each page's predicted page type) a setting is routed as extraction routes it
    (`guard.routed_guard`: the documentation guard on documentation, none on an empty
    selection); OFF always means the trees' selection alone."""
    ranges = page_blocks(data)
    pages = [i for i in range(len(ranges)) if run.mode != "page_type" or data.page_type[i]]
    scorer = _selection_scorer(data, ranges)
    chosen = (
        (data.features[ranges[i][0] : ranges[i][1]], run.scores[ranges[i][0] : ranges[i][1]])
        for i in pages
    )
    route = None
    if kinds is not None:

        def route(page: int, scores: np.ndarray, params: GuardParams) -> GuardParams:
            if params == OFF:
                return OFF
            return routed_guard(kinds[pages[page]], scores, threshold, params)

    outcomes = grid_outcomes(
        chosen, threshold, tuple(grid), lambda k, kept: scorer(pages[k], kept), route
    )
    return pages, outcomes


def _units(data: TrainingSet, mode: str, pages: list[int]) -> dict[str, list[int]]:
    """Positions in `pages` by what the mode holds out: dataset, page type, or (site-grouped)
    the dataset, plus every page pooled."""
    label = data.page_type if mode == "page_type" else data.page_dataset
    units: dict[str, list[int]] = {}
    for position, page in enumerate(pages):
        units.setdefault(label[page], []).append(position)
    units[_POOLED] = list(range(len(pages)))
    return units


def _mean_f1(scores: Sequence[tuple[float, float]], chosen: Sequence[int]) -> float:
    if not chosen:
        return 0.0
    return f1(
        float(np.mean([scores[i][0] for i in chosen])),
        float(np.mean([scores[i][1] for i in chosen])),
    )


@dataclass(slots=True)
class GeneralisationRow:
    """One held-out unit: a dataset, a page type, or a site-grouped dataset (`mode`)."""

    mode: str
    unit: str
    pages: int
    f1: dict[str, float]  # learned, default, each peer

    @property
    def best_seed(self) -> float:
        return max(self.f1.get(s, 0.0) for s in ("nce", "mss", "cetd-tpc"))


def generalisation_rows(
    data: TrainingSet,
    runs: Sequence[HeldOutRun],
    threshold: float,
    guard: GuardParams,
    kinds: dict[str, list[str]] | None = None,
) -> list[GeneralisationRow]:
    """Per run and held-out unit: pages and the F1 of the trees' selection alone and of the
    default (the trees with `guard`, routed by each page's type in `kinds[run.mode]` when
    given), and of every peer on the same pages."""
    out = []
    for run in runs:
        page_kinds = (kinds or {}).get(run.mode)
        pages, outcomes = guard_outcomes(data, run, threshold, (OFF, guard), page_kinds)
        peers = {
            name: [_pr(data.gold[p], texts[p]) for p in pages] for name, texts in data.peers.items()
        }
        for unit, chosen in _units(data, run.mode, pages).items():
            figures = {LEARNED: _mean_f1(outcomes[OFF], chosen)}
            figures[DEFAULT] = _mean_f1(outcomes[guard], chosen)
            figures.update({name: _mean_f1(s, chosen) for name, s in peers.items()})
            out.append(GeneralisationRow(run.mode, unit, len(chosen), figures))
    return out


def choose_guard(
    data: TrainingSet,
    runs: Sequence[HeldOutRun],
    threshold: float,
    grid: Sequence[GuardParams] = GUARD_GRID,
    kinds: dict[str, list[str]] | None = None,
) -> tuple[GuardParams, dict[GuardParams, float]]:
    """The guard setting with the best mean F1 over the units held out whole (each dataset
    under dataset hold-out, each page type under page-type hold-out, every one weighing the
    same), among those that cost the site-grouped pooled F1 at most 0.002; OFF when no run
    held out whole units. Each setting is routed by page type as in `generalisation_rows`.
    Returns it and every setting's objective."""
    grid = tuple(dict.fromkeys([OFF, *grid]))
    objective = {g: 0.0 for g in grid}
    allowed = set(grid)
    units_seen = 0
    for run in runs:
        pages, outcomes = guard_outcomes(data, run, threshold, grid, (kinds or {}).get(run.mode))
        units = _units(data, run.mode, pages)
        if run.mode == "site":
            base = _mean_f1(outcomes[OFF], units[_POOLED])
            allowed &= {g for g in grid if _mean_f1(outcomes[g], units[_POOLED]) >= base - 0.002}
            continue
        for unit, chosen in units.items():
            if unit == _POOLED:
                continue
            units_seen += 1
            for g in grid:
                objective[g] += _mean_f1(outcomes[g], chosen)
    if not units_seen:
        return OFF, objective
    objective = {g: v / units_seen for g, v in objective.items()}
    best = max((g for g in grid if g in allowed), key=lambda g: (objective[g], g == OFF))
    return best, objective


def format_generalisation(rows: Sequence[GeneralisationRow]) -> list[str]:
    """The table: per held-out unit, the trees' selection alone and the default, each peer,
    the best seed and the default's margin over it."""
    if not rows:
        return []
    names = list(rows[0].f1)
    head = f"{'held out':<28}  {'pages':>6}  " + "  ".join(f"{n[:13]:>13}" for n in names)
    lines = [f"{head}  {'best seed':>9}  {'margin':>7}"]
    label = {"site": "sites (5-fold):", "dataset": "dataset:", "page_type": "page type:"}
    for row in rows:
        name = f"{label.get(row.mode, row.mode)} {row.unit}"
        cells = "  ".join(f"{row.f1[n]:>13.3f}" for n in names)
        margin = row.f1[DEFAULT] - row.best_seed
        lines.append(
            f"{name[:28]:<28}  {row.pages:>6}  {cells}  {row.best_seed:>9.3f}  {margin:>+7.3f}"
        )
    return lines


# -- page types for routing, predicted by page type models that never saw the page -------------


def held_out_kinds(
    data: TrainingSet, modes: Sequence[str], labels: Sequence[str] | None = None
) -> dict[str, list[str]]:
    """Per hold-out mode, each page's predicted page type, as the default's routing reads it,
    from a page type model that never saw the page's site: site-grouped cross-validation on
    the typed pages, a model of all of them for the other pages. `labels` gives each page's
    type for training ("" for none; default: its meta page_type; `page_type_labels` adds the
    types of whole datasets). Holding out datasets, a dataset's pages are typed by a model of
    the other datasets' typed pages, when those have two types at least. Without two types,
    the shipped page type model types every page (no page types when it is missing). A page
    a documentation generator marked is documentation in every mode, as extraction types it
    (`extractors.doc_generator`)."""
    kinds = _modelled_kinds(data, modes, labels)
    marked = data.generated_docs or [False] * len(data.page_ids)
    return {
        mode: [DOCUMENTATION if mark else kind for kind, mark in zip(found, marked, strict=True)]
        for mode, found in kinds.items()
    }


def _modelled_kinds(
    data: TrainingSet, modes: Sequence[str], labels: Sequence[str] | None
) -> dict[str, list[str]]:
    """`held_out_kinds` before the generators' marks: the page type models' types alone."""
    from newscrawl.extractors.blockmodel.pagetype import (
        bundled_page_type_model,
        crossval_page_types,
        fit_page_types,
        load_page_type_model,
    )

    vectors = _page_vectors(data)
    labels = list(data.page_type if labels is None else labels)
    typed = [i for i, kind in enumerate(labels) if kind]
    known = [labels[i] for i in typed]
    if len(set(known)) < 2:
        try:
            shipped = load_page_type_model(bundled_page_type_model()).predict(vectors)
        except (OSError, ValueError):
            shipped = [""] * len(data.page_ids)
        return {mode: list(shipped) for mode in modes}
    names = [data.page_dataset[i] for i in typed]
    base = fit_page_types(vectors[typed], known, datasets=names).predict(vectors)
    sites = [data.page_site[i] for i in typed]
    predicted, _ = crossval_page_types(vectors[typed], known, sites, datasets=names)
    for i, kind in zip(typed, predicted, strict=True):
        base[i] = kind
    kinds = {mode: list(base) for mode in modes}
    if "dataset" in modes:
        kinds["dataset"] = _kinds_by_dataset(data, vectors, base, labels)
    return kinds


def _page_vectors(data: TrainingSet) -> np.ndarray:
    from newscrawl.extractors.blockmodel.pagetype import page_vector

    return np.vstack([page_vector(data.features[a:b]) for a, b in page_blocks(data)])


def _kinds_by_dataset(
    data: TrainingSet, vectors: np.ndarray, base: list[str], labels: Sequence[str]
) -> list[str]:
    """Each dataset's pages typed by a model of the other datasets' typed pages (`base`'s
    type where those have fewer than two types, and for a dataset without typed pages, whose
    `base` types already come from a model of none of its pages)."""
    from newscrawl.extractors.blockmodel.pagetype import fit_page_types

    kinds = list(base)
    typed = {d for d, kind in zip(data.page_dataset, labels, strict=True) if kind}
    for dataset in sorted(typed):
        others = [i for i, kind in enumerate(labels) if kind and data.page_dataset[i] != dataset]
        if len({labels[i] for i in others}) < 2:
            continue
        names = [data.page_dataset[i] for i in others]
        model = fit_page_types(vectors[others], [labels[i] for i in others], datasets=names)
        mine = [i for i, d in enumerate(data.page_dataset) if d == dataset]
        for i, kind in zip(mine, model.predict(vectors[mine]), strict=True):
            kinds[i] = kind
    return kinds
