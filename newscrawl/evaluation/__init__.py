"""Measuring extractors against gold text (`newscrawl evaluate`): the scoring run (`evaluator`),
its report, snippet checks, site groups, and the site methods' scores; the dataset reader and
the metric (re-exported here) live in `newscrawl.gold`."""

from __future__ import annotations

from newscrawl.gold.dataset import Dataset, DatasetError, Page, read_dataset
from newscrawl.gold.metric import PageScore, Scores, aggregate, score_page, score_tokens

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
