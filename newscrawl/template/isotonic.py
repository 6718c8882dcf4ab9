"""Regularised isotonic smoothing of template scores over the DOM tree.

The smoothing of Chakrabarti, Kumar and Punera (WWW 2007).

A node is template iff all its children are, so a parent's templateness may not exceed any
child's. Given classifier scores ``s_v`` and weights ``w_v`` on a tree, `smooth_tree` finds
values ``x_v`` minimising::

    F(x) = sum_v w_v (s_v - x_v)^2  +  c * #{v not a root : x_v != x_parent(v)}
    subject to x_parent(v) <= x_v on every edge.

The penalty counts *edges* whose ends differ: a root has no parent, so it is never penalised
(one root, or several in a forest, each free). Nodes whose score is NaN (e.g. too small to be
classified) get no data term (weight 0): they take whatever value the constraint and the
penalty make cheapest, which is their parent's value unless their descendants pull them up.

Which values can the optimum take?
    The digest says "optimal values can be drawn from the observed scores". That is a property
    of an absolute-error loss (medians), not of this squared one: for a root scored 0.8 over a
    child scored 0.2, whatever ``c`` is, the best solution is flat at their mean 0.5 (cost
    0.18, against 0.36 for either observed score). What is true: in an optimum, every maximal
    connected block of equal values whose weight ``W_B`` is positive takes the weighted mean
    ``m_B`` of its scores (its neighbours differ from it strictly, so nudging the block towards
    ``m_B`` keeps every constraint and the penalty and lowers the loss). The exact candidates
    are therefore means of connected node sets, exponentially many.

What is solved exactly
    The problem restricted to a finite candidate set ``X``: by default a grid of `resolution`
    evenly spaced values spanning the observed scores, or any values passed as `candidates`
    (e.g. the observed scores, the digest's reading). The restricted optimum costs at most
    ``W * d^2`` more than the unrestricted one, ``W`` being the total weight and ``d`` the
    farthest any score-range point lies from ``X`` (for the grid: half its step). Proof: round
    every value of an unrestricted optimum to its nearest candidate. Rounding is monotone, so
    constraints still hold and equal neighbours stay equal (the penalty cannot grow), and a
    block at its mean ``m_B`` moved by at most ``d`` pays ``W_B * d^2`` more. `SmoothingResult`
    reports that bound. With the default 256-value grid on scores in [0, 1] and unit weights it
    is 3.9e-6 per node: 0.02 for a 5,000-node page, two penalty units at c = 0.01.

The dynamic program
    ``cost[v][j]`` is the least cost of the subtree of ``v`` when ``x_v = X[j]``::

        cost[v][j] = w_v (s_v - X[j])^2
                     + sum over children u of min(cost[u][j], min_{k > j} cost[u][k] + c)

    (a child either keeps its parent's value for free or moves strictly up and pays ``c``).
    The inner minimum is a suffix minimum, so a node costs O(|X|) and the tree O(n |X|). Nodes
    are processed a depth level at a time, deepest first, in numpy batches; a top-down pass
    then reads the argmins back. A leaf's row is a parabola whose suffix minima
    are known in closed form, so leaves (half of a DOM) get no stored row. There is no
    recursion: a 5,000-deep chain is fine (it is just 5,000 one-node levels).
`newscrawl bench smooth` times it against a naive O(n |X|^2) program on the same tree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

__all__ = [
    "DEFAULT_C",
    "DEFAULT_RESOLUTION",
    "SmoothingResult",
    "candidate_grid",
    "restriction_bound",
    "smooth_scores",
    "smooth_tree",
    "smoothing_cost",
    "template_mask",
]

DEFAULT_C = 0.01  # the paper's value; the reproduction also tried 0.1 and 1
DEFAULT_RESOLUTION = 256


@dataclass(frozen=True, slots=True)
class SmoothingResult:
    """Smoothed values and how good they are.

    `cost` is F(values). `bound` caps how far `cost` can lie above the optimum over all real
    values (0 means provably optimal, which happens when scores are all equal).
    """

    values: np.ndarray
    cost: float
    candidates: np.ndarray
    bound: float


def smooth_scores(
    parent: Sequence[int] | np.ndarray,
    scores: ArrayLike,
    weights: ArrayLike | None = None,
    c: float = DEFAULT_C,
    *,
    resolution: int = DEFAULT_RESOLUTION,
    candidates: ArrayLike | None = None,
) -> np.ndarray:
    """Smoothed scores, one per node (see `smooth_tree`)."""
    return smooth_tree(
        parent, scores, weights, c, resolution=resolution, candidates=candidates
    ).values


def smooth_tree(
    parent: Sequence[int] | np.ndarray,
    scores: ArrayLike,
    weights: ArrayLike | None = None,
    c: float = DEFAULT_C,
    *,
    resolution: int = DEFAULT_RESOLUTION,
    candidates: ArrayLike | None = None,
) -> SmoothingResult:
    """Minimise F over values drawn from `candidates` (default: `candidate_grid`), exactly.

    `parent[v]` is the parent id of node v, or -1 for a root, and must be smaller than v (true
    of preorder ids such as `Dom.parent`). NaN scores carry no data term. When no node has both
    a score and a positive weight there is nothing to fit: every value is NaN.

    Time and memory grow with nodes x candidates (about 9 bytes per inner node and candidate):
    the default grid keeps both small; passing every observed score of a large page as
    `candidates` is exact on that set but slow.
    """
    par = _check_parent(parent)
    score, weight = _check_data(scores, weights, len(par))
    if not np.isfinite(c) or c < 0:
        raise ValueError(f"c must be a finite number >= 0, got {c}")
    fitted = weight > 0
    if not fitted.any():
        empty = np.full(len(par), np.nan)
        return SmoothingResult(empty, 0.0, np.empty(0), 0.0)
    if candidates is None:
        grid = candidate_grid(score[fitted], resolution)
    else:
        grid = _check_candidates(candidates)
    values = grid[_solve(par, score, weight, float(c), grid)]
    cost = smoothing_cost(par, score, values, weight, c)
    bound = restriction_bound(score[fitted], weight[fitted], grid)
    return SmoothingResult(values, cost, grid, bound)


def template_mask(smoothed: ArrayLike, threshold: float = 0.5) -> np.ndarray:
    """Template nodes: smoothed score >= threshold (the study's rule). NaN counts as content."""
    values = np.asarray(smoothed, dtype=float)
    with np.errstate(invalid="ignore"):
        return values >= threshold


def candidate_grid(scores: ArrayLike, resolution: int = DEFAULT_RESOLUTION) -> np.ndarray:
    """`resolution` evenly spaced values from the lowest to the highest finite score."""
    if resolution < 1:
        raise ValueError(f"resolution must be >= 1, got {resolution}")
    values = np.asarray(scores, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return np.empty(0)
    low, high = float(values.min()), float(values.max())
    if low == high or resolution == 1:
        return np.array([(low + high) / 2])
    return np.linspace(low, high, resolution)


def restriction_bound(scores: ArrayLike, weights: ArrayLike, candidates: ArrayLike) -> float:
    """``W * d^2``: how much restricting values to `candidates` can cost (module docstring).

    ``d`` is the largest distance from a point of [min score, max score] to its nearest
    candidate; it is reached at an end of that range or half-way between two candidates.
    """
    s = np.asarray(scores, dtype=float)
    w = np.asarray(weights, dtype=float)
    keep = np.isfinite(s) & (w > 0)
    cand = np.sort(np.asarray(candidates, dtype=float))
    if not keep.any() or cand.size == 0:
        return 0.0
    low, high = s[keep].min(), s[keep].max()
    mids = (cand[1:] + cand[:-1]) / 2
    probes = np.concatenate(([low, high], mids[(mids > low) & (mids < high)]))
    far = np.abs(probes - cand[_nearest(cand, probes)]).max()
    return float(w[keep].sum() * far**2)


def smoothing_cost(
    parent: Sequence[int] | np.ndarray,
    scores: ArrayLike,
    values: ArrayLike,
    weights: ArrayLike | None = None,
    c: float = DEFAULT_C,
) -> float:
    """F(values): weighted squared error over scored nodes plus c per edge whose ends differ."""
    par = np.asarray(parent, dtype=np.intp)
    score, weight = _check_data(scores, weights, len(par))
    x = np.asarray(values, dtype=float)
    loss = float(np.sum(weight * (score - x) ** 2))
    child = np.flatnonzero(par >= 0)
    cuts = int(np.count_nonzero(x[child] != x[par[child]]))
    return loss + c * cuts


# -- input checks ----------------------------------------------------------------------------


def _check_parent(parent: Sequence[int] | np.ndarray) -> np.ndarray:
    par = np.asarray(parent)
    if par.ndim != 1 or (par.size and not np.issubdtype(par.dtype, np.integer)):
        raise ValueError("parent must be a flat sequence of integer node ids")
    par = par.astype(np.intp, copy=False)
    if np.any(par < -1) or np.any(par >= np.arange(len(par))):
        raise ValueError("parent[v] must be -1 (a root) or an id smaller than v, as in preorder")
    return par


def _check_data(
    scores: ArrayLike, weights: ArrayLike | None, n: int
) -> tuple[np.ndarray, np.ndarray]:
    """Scores with NaN replaced by 0 and weights zeroed there, so NaN costs nothing."""
    score = np.asarray(scores, dtype=float).reshape(-1)
    if score.shape != (n,):
        raise ValueError(f"got {score.size} scores for {n} nodes")
    if np.isinf(score).any():
        raise ValueError("scores must be finite numbers or NaN")
    weight = np.ones(n) if weights is None else np.asarray(weights, dtype=float).reshape(-1)
    if weight.shape != (n,):
        raise ValueError(f"got {weight.size} weights for {n} nodes")
    if not np.isfinite(weight).all() or (weight < 0).any():
        raise ValueError("weights must be finite numbers >= 0")
    missing = np.isnan(score)
    if missing.any():
        score = np.where(missing, 0.0, score)
        weight = np.where(missing, 0.0, weight)
    return score, weight


def _check_candidates(candidates: ArrayLike) -> np.ndarray:
    grid = np.unique(np.asarray(candidates, dtype=float).reshape(-1))
    if grid.size == 0 or not np.isfinite(grid).all():
        raise ValueError("candidates must be a non-empty set of finite numbers")
    return grid


# -- the dynamic program ---------------------------------------------------------------------


# Rows are processed in blocks of about this many cells (256 KiB of float64): the several
# passes over a block (data term, suffix minimum, contribution) then stay in the CPU cache,
# and scratch memory stays small however wide a level is.
_BLOCK_CELLS = 1 << 15
_FEW_ROWS = 32


@dataclass(slots=True)
class _Level:
    """One depth level: its inner nodes with their cost rows, and its leaves (ids ascending)."""

    inner: np.ndarray
    leaves: np.ndarray
    cost: np.ndarray | None = None  # cost[i][j]: subtree of inner[i] with x = X[j]
    stay: np.ndarray | None = None  # stay[i][j]: inner[i] keeps its parent's value X[j]


def _solve(
    parent: np.ndarray, score: np.ndarray, weight: np.ndarray, c: float, grid: np.ndarray
) -> np.ndarray:
    """Index into `grid` of every node's value in an optimum of the restricted problem."""
    levels = _levels(parent)
    nearest = _nearest(grid, score)  # a leaf's own best index
    work = _Workspace(score, weight, grid, nearest, c)
    pending: tuple[np.ndarray, np.ndarray] | None = None  # (parent ids, rows) from below
    for level in reversed(levels):
        level.cost = _children_sum(level.inner, pending, len(grid))
        up = np.empty((len(level.inner) + len(level.leaves), len(grid)))
        level.stay = work.climb_inner(level.inner, level.cost, up[: len(level.inner)])
        work.climb_leaves(level.leaves, up[len(level.inner) :])
        pending = (np.concatenate((parent[level.inner], parent[level.leaves])), up)
    choice = np.empty(len(parent), dtype=np.intp)
    roots = levels[0]  # no parent: no constraint, no penalty
    assert roots.cost is not None
    choice[roots.inner] = roots.cost.argmin(axis=1)
    choice[roots.leaves] = nearest[roots.leaves]
    for level in levels[1:]:
        choice[level.inner] = _inner_choice(level, choice[parent[level.inner]])
        choice[level.leaves] = work.leaf_choice(level.leaves, choice[parent[level.leaves]])
    return choice


def _levels(parent: np.ndarray) -> list[_Level]:
    """Nodes grouped by depth, split into inner nodes and leaves."""
    n = len(parent)
    depth = _depths(parent)
    has_child = np.zeros(n, dtype=bool)
    has_child[parent[parent >= 0]] = True
    order = np.argsort(depth, kind="stable")
    bounds = np.searchsorted(depth[order], np.arange(depth.max() + 2))
    levels = []
    for lo, hi in pairwise(bounds):
        ids = order[lo:hi]
        inner = has_child[ids]
        levels.append(_Level(ids[inner], ids[~inner]))
    return levels


def _depths(parent: np.ndarray) -> np.ndarray:
    """Depth of every node by pointer jumping: O(n log depth), no recursion, no per-node loop.

    Invariant: depth[v] is the number of edges from v up to up[v] (to its root once up[v] is
    -1); each round doubles the hop.
    """
    depth = (parent >= 0).astype(np.intp)
    up = parent.copy()
    while True:
        live = np.flatnonzero(up >= 0)
        if live.size == 0:
            return depth
        hop = up[live]
        depth[live] += depth[hop]
        up[live] = up[hop]


def _nearest(grid: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Index of the candidate nearest to each value (the lower one on a tie)."""
    if len(grid) == 1:
        return np.zeros(len(values), dtype=np.intp)
    right = np.clip(np.searchsorted(grid, values), 1, len(grid) - 1)
    left = right - 1
    take_right = np.abs(grid[right] - values) < np.abs(values - grid[left])
    return np.where(take_right, right, left)


def _children_sum(
    ids: np.ndarray, pending: tuple[np.ndarray, np.ndarray] | None, k: int
) -> np.ndarray:
    """Row i: the sum of the contribution rows whose parent is ids[i] (each has at least one)."""
    if pending is None or not len(ids):
        return np.zeros((len(ids), k))
    parents, rows = pending
    target = np.searchsorted(ids, parents)
    if len(target) == len(ids):  # every node has a child, so here exactly one: reorder
        out = np.empty_like(rows)
        out[target] = rows
        return out
    if len(target) <= _FEW_ROWS:  # a sparse matrix costs more to build than this loop
        out = np.zeros((len(ids), k))
        for row, at in enumerate(target.tolist()):
            out[at] += rows[row]
        return out
    # Sum rows by parent with a 0/1 sparse matrix: one C pass (np.add.at and np.add.reduceat
    # along axis 0 are an order of magnitude slower). Built from indptr, which on a small
    # level costs less than the COO route.
    indptr = np.zeros(len(ids) + 1, dtype=np.intp)
    np.cumsum(np.bincount(target, minlength=len(ids)), out=indptr[1:])
    order = np.argsort(target, kind="stable")
    member = sparse.csr_matrix((np.ones(len(target)), order, indptr), shape=(len(ids), len(rows)))
    return np.asarray(member @ rows)


class _Workspace:
    """The per-block passes of the dynamic program, with their scratch buffers."""

    def __init__(
        self, score: np.ndarray, weight: np.ndarray, grid: np.ndarray, nearest: np.ndarray, c: float
    ) -> None:
        self.score, self.weight, self.grid, self.nearest, self.c = score, weight, grid, nearest, c
        self.unit_weights = bool(np.all(weight == 1))
        self.block = max(1, _BLOCK_CELLS // len(grid))
        self.scratch = np.empty((self.block, len(grid)))
        self.below = np.empty((self.block, len(grid)), dtype=bool)
        columns = np.arange(len(grid))
        # below[p] = (j < p): copying a row of this table costs less than comparing.
        small = len(grid) <= 2048
        self.below_table = columns[None, :] < columns[:, None] if small else None
        self.columns = columns

    def data_rows(self, ids: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out[i][j] = w (s - X[j])^2 for node ids[i]."""
        np.subtract(self.score[ids, None], self.grid[None, :], out=out)
        np.square(out, out=out)
        if not self.unit_weights:
            out *= self.weight[ids, None]
        return out

    def climb_inner(self, ids: np.ndarray, cost: np.ndarray, up: np.ndarray) -> np.ndarray:
        """Add the data term to `cost`; write what each node adds to its parent's row into `up`.

        up[i][j] = min(cost[i][j], min_{k>j} cost[i][k] + c): keep the parent's value X[j], or
        move strictly up and pay c. Returns where keeping it is at least as good.
        """
        stay = np.empty(cost.shape, dtype=bool)
        for lo in range(0, len(ids), self.block):
            part = slice(lo, lo + self.block)
            rows = cost[part]
            tmp = self.data_rows(ids[part], self.scratch[: len(rows)])
            rows += tmp
            tmp[:, -1] = np.inf  # now the strict suffix minimum
            if rows.shape[1] > 1:
                np.minimum.accumulate(rows[:, :0:-1], axis=1, out=tmp[:, -2::-1])
            tmp += self.c
            np.less_equal(rows, tmp, out=stay[part])
            np.minimum(rows, tmp, out=up[part])
        return stay

    def climb_leaves(self, ids: np.ndarray, up: np.ndarray) -> None:
        """`climb_inner` for leaves, in closed form and without keeping their rows.

        A leaf's row w (s - X[j])^2 is a parabola on the sorted X with its minimum at
        p = nearest[leaf]. For j >= p the row does not decrease after j, so the leaf stays:
        row[j]. For j < p its best move up is to p: min(row[j], row[p] + c).
        """
        for lo in range(0, len(ids), self.block):
            part = slice(lo, lo + self.block)
            rows = self.data_rows(ids[part], up[part])
            p = self.nearest[ids[part]]
            floor = rows[np.arange(len(rows)), p] + self.c
            below = self.below[: len(rows)]
            if self.below_table is not None:
                np.take(self.below_table, p, axis=0, out=below)
            else:
                np.less(self.columns[None, :], p[:, None], out=below)
            np.minimum(rows, floor[:, None], out=rows, where=below)

    def leaf_choice(self, ids: np.ndarray, above: np.ndarray) -> np.ndarray:
        """Leaves' indices given their parents' indices, by the closed form of `climb_leaves`."""
        p = self.nearest[ids]
        w, s = self.weight[ids], self.score[ids]
        stay_cost = w * (s - self.grid[above]) ** 2
        move_cost = w * (s - self.grid[p]) ** 2 + self.c
        return np.where((above >= p) | (stay_cost <= move_cost), above, p)


def _inner_choice(level: _Level, above: np.ndarray) -> np.ndarray:
    """Inner nodes' indices given their parents' indices `above`."""
    assert level.stay is not None and level.cost is not None  # set by the climb
    choice = above.copy()
    move = np.flatnonzero(~level.stay[np.arange(len(above)), above])
    if move.size:
        cost = level.cost[move]
        higher = np.arange(cost.shape[1])[None, :] > above[move, None]
        choice[move] = np.where(higher, cost, np.inf).argmin(axis=1)
    return choice
