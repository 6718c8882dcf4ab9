"""Site-grouped folds: every figure the project cross-validates keeps a site's pages together.

One function for the learned extractor's training, the template model's cross-validation and
the template study's evaluation: scikit-learn's `GroupKFold` (groups dealt biggest first onto
the fold with fewest items, so no site is ever split and the folds stay balanced). It is
deterministic for a given scikit-learn version; the version is in every model's provenance.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["group_folds"]


def group_folds(groups: Sequence[str], folds: int) -> np.ndarray:
    """The fold (0 .. k-1) of each item, k = `folds` capped to the number of distinct groups
    (at least 2); items of one group always share a fold."""
    from sklearn.model_selection import GroupKFold

    labels = np.asarray(groups, dtype=object)
    k = max(2, min(folds, len(set(groups))))
    out = np.zeros(len(labels), dtype=np.int32)
    if len(set(groups)) < 2:
        return out
    for fold, (_, test) in enumerate(GroupKFold(n_splits=k).split(labels, groups=labels)):
        out[test] = fold
    return out
