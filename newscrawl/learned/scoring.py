"""Scoring one page's blocks with an `ExtractorModel`: stage after stage."""

from __future__ import annotations

import numpy as np

from newscrawl.learned.model import ExtractorModel
from newscrawl.learned.stacking import context_features

__all__ = ["score_blocks", "stage_inputs"]


def stage_inputs(rows: np.ndarray, previous: np.ndarray | None) -> np.ndarray:
    """The input of a stage: block features, plus the previous stage's context when there is one.

    `rows` holds one page's blocks; block token counts are read from its ``tokens_log`` column,
    so training and extraction compute the context the same way.
    """
    if previous is None:
        return rows
    return np.hstack([rows, context_features(previous, block_tokens(rows))])


def block_tokens(rows: np.ndarray) -> np.ndarray:
    from newscrawl.learned.features import FEATURES

    return np.expm1(rows[:, FEATURES.index("tokens_log")].astype(np.float64))


def score_blocks(model: ExtractorModel, rows: np.ndarray) -> np.ndarray:
    """Probability that each block (row of `rows`, one page) is main text: the last stage's."""
    score: np.ndarray | None = None
    for stage in model.stages:
        score = stage.predict(stage_inputs(rows, score))
    return score if score is not None else np.zeros(len(rows))
