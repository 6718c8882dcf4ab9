"""Measuring extractors against gold text: the metric, the dataset reader, the scoring run."""

from __future__ import annotations

from newscrawl.evaluation.dataset import Dataset, DatasetError, Page, read_dataset
from newscrawl.evaluation.metric import PageScore, Scores, aggregate, score_page, score_tokens

__all__ = [
    "Dataset",
    "DatasetError",
    "Page",
    "PageScore",
    "Scores",
    "aggregate",
    "read_dataset",
    "score_page",
    "score_tokens",
]
