"""Node-area buckets: one classifier per range of node area (Chakrabarti, Kumar and Punera).

Nodes of very different sizes behave differently (a 3,000 px² menu item and a 300,000 px²
sidebar), so the study trained one logistic regression per area range. Its procedure: per site,
the three quartiles of the areas of its nodes (nodes under 2,000 px² are not used); average
each quartile over the sites; the ranges are [min, q1), [q1, q2), [q2, q3), [q3, max].
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

import numpy as np

__all__ = ["DEFAULT_BOUNDARIES", "MIN_AREA", "bucket_of", "fit_boundaries"]

MIN_AREA = 2000.0
# The study's values (mean quartiles over its 40 sites): the fallback without training data.
DEFAULT_BOUNDARIES: tuple[float, ...] = (MIN_AREA, 5182.0, 12504.0, 42663.0)


def bucket_of(area: np.ndarray, boundaries: tuple[float, ...] = DEFAULT_BOUNDARIES) -> np.ndarray:
    """Bucket index per node (int8): 0 .. len(boundaries)-1, or -1 below the first boundary."""
    area = np.asarray(area, dtype=np.float64)
    return (np.searchsorted(np.asarray(boundaries), area, side="right") - 1).astype(np.int8)


def fit_boundaries(
    areas_by_site: Iterable[np.ndarray], min_area: float = MIN_AREA
) -> tuple[float, ...]:
    """Boundaries (min_area, mean q1, mean q2, mean q3) from each site's node areas.

    Sites without a node of at least `min_area` do not vote; with no votes at all, or when the
    averages do not increase, the study's `DEFAULT_BOUNDARIES` are returned.
    """
    quartiles = [
        np.quantile(areas[areas >= min_area], (0.25, 0.5, 0.75))
        for areas in (np.asarray(a, dtype=np.float64) for a in areas_by_site)
        if np.any(areas >= min_area)
    ]
    if not quartiles:
        return DEFAULT_BOUNDARIES
    q1, q2, q3 = np.mean(quartiles, axis=0)
    bounds = (float(min_area), round(float(q1)), round(float(q2)), round(float(q3)))
    if not all(a < b for a, b in pairwise(bounds)):
        return DEFAULT_BOUNDARIES
    return tuple(float(b) for b in bounds)
