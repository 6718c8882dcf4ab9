"""Context of a block's first-stage score: what the next stage of the classifier adds.

A block scored on its own features cannot tell "a short paragraph inside the article" from
"a short teaser in a sidebar"; its neighbours' scores can. The later stage gets, per block, the
earlier stage's score of the blocks around it, token-weighted means over windows, and where it
sits against the page's best-scored block. This is stacked generalisation (Wolpert 1992); the
tree smoothing of the template stage does the same job with less freedom.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONTEXT_FEATURES", "context_features"]

_OFFSETS = (-3, -2, -1, 1, 2, 3)
_WINDOWS = (5, 15)
CONTEXT_FEATURES: list[str] = [
    *(f"score{o:+d}" for o in _OFFSETS),
    *(f"score_window{w}" for w in _WINDOWS),
    "score_page_max",
    "score_over_max",
    "page_kept_share",
    "distance_to_best",
    "score",
]


def context_features(score: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """Context columns (`CONTEXT_FEATURES`) of one page's blocks, from their scores and sizes."""
    n = len(score)
    out = np.zeros((n, len(CONTEXT_FEATURES)), dtype=np.float64)
    if n == 0:
        return out
    score = np.asarray(score, dtype=np.float64)
    column = 0
    index = np.arange(n)
    for offset in _OFFSETS:
        other = index + offset
        inside = (other >= 0) & (other < n)
        out[:, column] = np.where(inside, score[np.clip(other, 0, n - 1)], -1.0)
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
    return out
