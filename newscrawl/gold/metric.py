"""Shingle and token precision/recall/F1 of extracted text against gold text.

The metric of the public article-extraction benchmarks (see the datasets' README), defined here
once so every command and test scores the same way:

* **tokens** are the Unicode ``\\w+`` runs of a text, *not* lower-cased: the dataset README asks
  for ``\\w+`` runs and nothing more, and the reference benchmark keeps case too. Punctuation and
  whitespace only separate tokens, so layout differences (line breaks, extra spaces) never count.
* **shingles** are the 4-token n-grams (windows) of the token sequence. A text of 1 to 3 tokens
  has one shorter shingle holding all of its tokens, as in the reference benchmark, so a very
  short gold text (a caption, a one-line notice) can still be matched exactly; an empty text has
  none.
* per page, **TP/FP/FN** are multiset counts: a shingle found twice in the gold and once in the
  output is one TP and one FN. The reference normalises the three to sum 1; the page's
  precision TP/(TP+FP) and recall TP/(TP+FN) are the same either way, so raw counts are kept and
  `PageScore.normalised` gives the fractions.
* empty sides: a page with empty gold and empty output scores P = R = 1 (nothing to find, nothing
  wrongly found). A page where exactly one side is empty scores P = R = 0: output on a page
  whose gold is empty is all noise, and empty output on a page with gold is a failed extraction.
  This keeps every page in both means, so P and R average over the same pages; it is stricter
  than the scrapinghub benchmark, which leaves such pages out of the precision (or recall) mean
  and so lets an extractor that returns nothing on hard pages keep a high precision.
* over a dataset, precision and recall are the **means of the per-page values** (each page weighs
  the same, however long), and F1 = 2PR/(P+R) of those means.
* **token** P/R/F1 are the same computation on single tokens (bag of words, as in CETD-TPC).
* **word F1** is WCXB's figure: per page, the F1 of the lower-cased token bags (multisets), then
  the mean of those F1s over pages (every page weighs the same; empty gold and empty output
  score 1, exactly one side empty scores 0). Unlike the shingle F1 it is a mean of per-page
  F1s, not an F1 of mean precision and recall.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "SHINGLE_SIZE",
    "PageScore",
    "Scores",
    "aggregate",
    "f1",
    "match",
    "score_page",
    "score_tokens",
    "shingles",
    "tokens",
    "word_f1",
]

SHINGLE_SIZE = 4
_TOKEN = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    """The Unicode ``\\w+`` runs of `text`, case kept."""
    return _TOKEN.findall(text or "")


def shingles(words: Sequence[str], size: int = SHINGLE_SIZE) -> Counter[tuple[str, ...]]:
    """Multiset of the `size`-token windows of `words`; a shorter non-empty text is one shingle."""
    if not words:
        return Counter()
    if len(words) <= size:
        return Counter([tuple(words)])
    return Counter(tuple(words[i : i + size]) for i in range(len(words) - size + 1))


@dataclass(frozen=True, slots=True)
class PageScore:
    """Multiset match counts of one page, and the page's precision and recall."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        if self.tp + self.fp == 0:
            return 1.0 if self.fn == 0 else 0.0
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        if self.tp + self.fn == 0:
            return 1.0 if self.fp == 0 else 0.0
        return self.tp / (self.tp + self.fn)

    @property
    def normalised(self) -> tuple[float, float, float]:
        """TP, FP, FN scaled to sum 1 (as the reference benchmark reports them)."""
        total = self.tp + self.fp + self.fn
        if total == 0:
            return (0.0, 0.0, 0.0)
        return (self.tp / total, self.fp / total, self.fn / total)


def match(gold: Counter, output: Counter) -> PageScore:
    """TP/FP/FN of two multisets (of shingles or of tokens)."""
    tp = sum((gold & output).values())
    return PageScore(tp=tp, fp=output.total() - tp, fn=gold.total() - tp)


def score_page(gold: str, output: str, size: int = SHINGLE_SIZE) -> PageScore:
    """Shingle match of one page's extracted `output` against its `gold` text."""
    return match(shingles(tokens(gold), size), shingles(tokens(output), size))


def score_tokens(gold: str, output: str) -> PageScore:
    """Bag-of-words match of one page (the token metric)."""
    return match(Counter(tokens(gold)), Counter(tokens(output)))


def word_f1(gold: str, output: str) -> float:
    """WCXB's page figure: F1 of the lower-cased word bags of `gold` and `output`."""
    score = match(Counter(tokens(gold.lower())), Counter(tokens(output.lower())))
    return f1(score.precision, score.recall)


def f1(precision: float, recall: float) -> float:
    """Their harmonic mean (0 when both are 0): every F1 in newscrawl is this one."""
    total = precision + recall
    return 2 * precision * recall / total if total else 0.0


def class_figures(truth: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Accuracy, and precision, recall and F1 of the positive class, of boolean labels (a node
    classifier's, say); 0 where a figure is undefined (no node predicted, or none to find).

    Unlike `PageScore` (a page with nothing to find and nothing found is perfect), a class with
    no examples scores 0 here, as scikit-learn's `zero_division=0` has it."""
    from sklearn.metrics import precision_recall_fscore_support

    truth, predicted = np.asarray(truth, dtype=bool), np.asarray(predicted, dtype=bool)
    if not len(truth):
        return {"accuracy": 0.0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    precision, recall, _, _ = precision_recall_fscore_support(
        truth, predicted, average="binary", zero_division=0.0
    )
    precision, recall = float(precision), float(recall)
    return {
        "accuracy": float(np.mean(truth == predicted)),
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
    }


def count_figures(tp: int, fp: int, fn: int, tn: int) -> dict[str, float]:
    """`class_figures` from confusion counts (summed over pages or folds, say), and the count."""
    total = tp + fp + fn + tn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return {
        "nodes": total,
        "accuracy": (tp + tn) / total if total else 0.0,
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
    }


@dataclass(frozen=True, slots=True)
class Scores:
    """Dataset-level figures: means of per-page precision and recall, and their F1."""

    pages: int
    precision: float
    recall: float

    @property
    def f1(self) -> float:
        return f1(self.precision, self.recall)


def aggregate(pages: Iterable[PageScore]) -> Scores:
    """Mean per-page precision and recall over `pages` (zeros for no pages)."""
    count = 0
    precision = recall = 0.0
    for score in pages:
        count += 1
        precision += score.precision
        recall += score.recall
    if not count:
        return Scores(pages=0, precision=0.0, recall=0.0)
    return Scores(pages=count, precision=precision / count, recall=recall / count)
