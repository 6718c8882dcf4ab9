"""Scoring one page's blocks with an `ExtractorModel`: stage after stage."""

from __future__ import annotations

import numpy as np

from newscrawl.extractors.blockmodel.model import ExtractorModel
from newscrawl.extractors.blockmodel.stacking import context_features

__all__ = ["score_blocks", "stage_inputs"]


def stage_inputs(rows: np.ndarray, previous: np.ndarray | None, groups: np.ndarray) -> np.ndarray:
    """The input of a stage: block features, plus the previous stage's context when there is one.

    `rows` holds one page's blocks and `groups` their structure groups
    (`features.block_groups`); block token counts are read from the ``tokens_log`` column, so
    training and extraction compute the context the same way.
    """
    if previous is None:
        return rows
    return np.hstack([rows, context_features(previous, block_tokens(rows), groups)])


def block_tokens(rows: np.ndarray) -> np.ndarray:
    from newscrawl.extractors.blockmodel.block_features import FEATURES

    return np.expm1(rows[:, FEATURES.index("tokens_log")].astype(np.float64))


def score_blocks(model: ExtractorModel, rows: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Probability that each block (row of `rows`, one page; `groups` its structure groups) is
    main text: the last stage's."""
    score: np.ndarray | None = None
    for stage in model.stages:
        score = stage.predict(stage_inputs(rows, score, groups))
    return score if score is not None else np.zeros(len(rows))
