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

from newscrawl.evaluation.metric import f1, score_page
from newscrawl.learned.trainset import TrainingSet

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
