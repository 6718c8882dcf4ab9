"""Context of a block's first-stage score: what the next stage of the classifier adds.

A block scored on its own features cannot tell "a short paragraph inside the article" from
"a short teaser in a sidebar"; its neighbours' scores can. The later stage gets, per block, the
earlier stage's score of the blocks around it, token-weighted means over windows, and where it
sits against the page's best-scored block, and the scores of the blocks it shares a structure
with: the same parent element, the same grandparent, the same tag path. The posts of a forum
thread or the items of a listing repeat one structure, so where some of them score high the rest
should too. This is stacked generalisation (Wolpert 1992); the tree smoothing of the template
stage does the same job with less freedom.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONTEXT_FEATURES", "GROUPS", "context_features"]

_OFFSETS = (-3, -2, -1, 1, 2, 3)
_WINDOWS = (5, 15)
# Structures blocks share (columns of the group ids `features.block_groups` gives).
GROUPS = ("parent", "grand", "path")
CONTEXT_FEATURES: list[str] = [
    *(f"score{o:+d}" for o in _OFFSETS),
    *(f"score_window{w}" for w in _WINDOWS),
    "score_page_max",
    "score_over_max",
    "page_kept_share",
    "distance_to_best",
    "score",
    *(f"{group}_{what}" for group in GROUPS for what in ("mean", "max", "blocks_log")),
]


def context_features(score: np.ndarray, tokens: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Context columns (`CONTEXT_FEATURES`) of one page's blocks, from their scores, sizes and
    structure groups (`groups`: one column of ids per name in `GROUPS`)."""
    n = len(score)
    out = np.zeros((n, len(CONTEXT_FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    score = np.asarray(score, dtype=np.float64)
    column = 0
    index = np.arange(n)
    # the neighbours' scores, -1 past either end: slices of the scores padded with -1
    reach = max(map(abs, _OFFSETS))
    padded = np.full(n + 2 * reach, -1.0)
    padded[reach : reach + n] = score
    for offset in _OFFSETS:
        out[:, column] = padded[reach + offset : reach + offset + n]
        column += 1
    weight = np.maximum(np.asarray(tokens, dtype=np.float64), 1.0)
    weighted = np.concatenate([[0.0], np.cumsum(score * weight)])
    total = np.concatenate([[0.0], np.cumsum(weight)])
    for window in _WINDOWS:
        low = np.maximum(index - window, 0)
        high = np.minimum(index + window + 1, n)
        out[:, column] = (weighted[high] - weighted[low]) / (total[high] - total[low])
        column += 1
    best = float(score.max())
    out[:, column] = best
    out[:, column + 1] = score / max(best, 1e-6)
    out[:, column + 2] = float((weight * (score > 0.5)).sum() / weight.sum())
    out[:, column + 3] = np.abs(index - int(score.argmax())) / n
    out[:, column + 4] = score
    column += 5
    for g in range(len(GROUPS)):
        out[:, column : column + 3] = _group_columns(score, weight, groups[:, g])
        column += 3
    return out


def _group_columns(score: np.ndarray, weight: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Token-weighted mean and max score of each block's group, and the group's block count."""
    # Group ids are small integers (-1 for none): bins of their own, no np.unique (a sort).
    # bincount adds a bin's values in block order, as it did over np.unique's inverse.
    ids = np.asarray(group, dtype=np.int64) + 1
    if not len(ids):
        return np.zeros((0, 3))
    mean = np.bincount(ids, weights=score * weight)[ids] / np.bincount(ids, weights=weight)[ids]
    best = np.full(int(ids.max()) + 1, -1.0)
    np.maximum.at(best, ids, score)
    counts = np.bincount(ids)
    return np.column_stack([mean, best[ids], np.log1p(counts[ids])])
