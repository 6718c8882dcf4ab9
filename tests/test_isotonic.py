"""Isotonic tree smoothing: exact on the restricted problem, within its bound of the true one."""

from __future__ import annotations

import itertools
import math
import random
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression

from newscrawl.cli import main
from newscrawl.lab.bench_smooth import dom_like_tree, naive_smooth, template_scores
from newscrawl.template.isotonic import (
    candidate_grid,
    restriction_bound,
    smooth_scores,
    smooth_tree,
    smoothing_cost,
    template_mask,
)

PROPERTY = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOL = 1e-9


# -- references ------------------------------------------------------------------------------


def brute_restricted(parent, scores, weights, c, candidates) -> float:
    """Least F over every assignment of candidate values to nodes that respects the edges."""
    grid = np.unique(candidates)
    n = len(parent)
    picks = np.array(list(itertools.product(range(len(grid)), repeat=n)), dtype=np.intp)
    values = grid[picks]  # one row per assignment
    ok = np.ones(len(values), dtype=bool)
    cuts = np.zeros(len(values))
    for node, up in enumerate(parent):
        if up >= 0:
            ok &= values[:, up] <= values[:, node]
            cuts += values[:, up] != values[:, node]
    s = np.nan_to_num(np.asarray(scores, dtype=float))
    w = np.where(np.isnan(scores), 0.0, 1.0 if weights is None else np.asarray(weights))
    cost = ((values - s) ** 2 * w).sum(axis=1) + c * cuts
    return float(cost[ok].min())


def brute_continuous(parent, scores, weights, c) -> tuple[float, np.ndarray]:
    """The optimum over all real values, by enumerating which edges change value.

    For a set of changing edges, the other edges glue nodes into blocks; every block at its
    weighted mean is the best such solution when the means respect the changing edges. The
    true optimum has this form (module docstring), so the least feasible total is the optimum.
    Needs positive weights.
    """
    n = len(parent)
    s = np.asarray(scores, dtype=float)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    edges = [v for v in range(n) if parent[v] >= 0]
    best, best_values = math.inf, None
    for changing in itertools.product((False, True), repeat=len(edges)):
        block = list(range(n))
        for v, cut in zip(edges, changing, strict=True):
            if not cut:
                block[v] = block[parent[v]]  # parents come first, so this is already final
        block = np.array(block)
        means = np.zeros(n)
        for b in np.unique(block):
            members = block == b
            means[members] = np.average(s[members], weights=w[members])
        if any(means[parent[v]] > means[v] + 1e-12 for v in edges):
            continue
        cost = float((w * (s - means) ** 2).sum() + c * sum(changing))
        if cost < best:
            best, best_values = cost, means
    return best, best_values


def satisfies_order(parent, values) -> bool:
    return all(values[up] <= values[v] for v, up in enumerate(parent) if up >= 0)


@st.composite
def trees(draw, max_nodes: int = 8, nan: bool = False, weighted: bool = True):
    n = draw(st.integers(1, max_nodes))
    parent = [-1] + [draw(st.integers(0, v - 1)) for v in range(1, n)]
    unit = st.floats(0, 1, allow_nan=False)
    score = st.one_of(unit, st.just(math.nan)) if nan else unit
    scores = [draw(score) for _ in range(n)]
    weights = None
    if weighted and draw(st.booleans()):
        weights = [draw(st.floats(0.1, 3)) for _ in range(n)]
    c = draw(st.sampled_from([0.0, 0.01, 0.1, 1.0]))
    return parent, scores, weights, c


# -- exactness -------------------------------------------------------------------------------


@PROPERTY
@given(trees(nan=True), st.data())
def test_equals_brute_force_over_any_candidate_set(tree, data):
    parent, scores, weights, c = tree
    n = len(parent)
    most = {1: 8, 2: 8, 3: 8, 4: 8, 5: 8, 6: 6, 7: 5, 8: 4}[n]  # keeps k**n small
    candidates = data.draw(st.lists(st.floats(0, 1), min_size=1, max_size=most))
    result = smooth_tree(parent, scores, weights, c, candidates=candidates)
    if all(math.isnan(s) for s in scores):
        assert np.isnan(result.values).all()
        return
    expected = brute_restricted(parent, scores, weights, c, candidates)
    assert result.cost == pytest.approx(expected, abs=TOL)
    assert result.cost == pytest.approx(
        smoothing_cost(parent, scores, result.values, weights, c), abs=TOL
    )
    assert satisfies_order(parent, result.values)
    assert set(result.values) <= set(candidates)


@PROPERTY
@given(trees(max_nodes=6))
def test_observed_scores_as_candidates_the_digest_reading(tree):
    parent, scores, weights, c = tree
    result = smooth_tree(parent, scores, weights, c, candidates=scores)
    assert result.cost == pytest.approx(
        brute_restricted(parent, scores, weights, c, scores), abs=TOL
    )


@PROPERTY
@given(trees())
def test_default_grid_is_within_its_bound_of_the_true_optimum(tree):
    parent, scores, weights, c = tree
    optimum, _ = brute_continuous(parent, scores, weights, c)
    result = smooth_tree(parent, scores, weights, c)
    assert optimum - TOL <= result.cost <= optimum + result.bound + TOL
    assert satisfies_order(parent, result.values)


@PROPERTY
@given(trees())
def test_exact_when_the_candidates_hold_the_optimal_values(tree):
    parent, scores, weights, c = tree
    optimum, values = brute_continuous(parent, scores, weights, c)
    candidates = np.concatenate((values, candidate_grid(scores, 7)))
    result = smooth_tree(parent, scores, weights, c, candidates=candidates)
    assert result.cost == pytest.approx(optimum, abs=TOL)


def test_observed_scores_are_not_enough_for_squared_loss():
    # The digest's claim fails: the best flat value for 0.8 over 0.2 is their mean.
    observed = smooth_tree([-1, 0], [0.8, 0.2], candidates=[0.8, 0.2])
    assert observed.cost == pytest.approx(0.36)
    grid = smooth_tree([-1, 0], [0.8, 0.2])
    assert grid.values[0] == grid.values[1]
    assert grid.values[0] == pytest.approx(0.5, abs=0.6 / 255)
    assert grid.cost <= 0.18 + grid.bound + TOL
    assert smooth_tree([-1, 0], [0.8, 0.2], candidates=[0.2, 0.5, 0.8]).cost == pytest.approx(0.18)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=40), st.booleans())
def test_without_penalty_it_is_isotonic_regression(scores, weighted):
    """c = 0 on a chain is plain isotonic regression: compare with scikit-learn's PAVA."""
    n = len(scores)
    parent = list(range(-1, n - 1))
    weights = np.linspace(0.5, 2, n) if weighted else np.ones(n)
    fitted = IsotonicRegression().fit_transform(np.arange(n), scores, sample_weight=weights)
    expected = float(np.sum(weights * (np.asarray(scores) - fitted) ** 2))
    exact = smooth_tree(parent, scores, weights, 0.0, candidates=np.unique(fitted))
    assert exact.cost == pytest.approx(expected, abs=TOL)
    gridded = smooth_tree(parent, scores, weights, 0.0)
    assert expected - TOL <= gridded.cost <= expected + gridded.bound + TOL


@PROPERTY
@given(trees())
def test_huge_penalty_gives_one_flat_value(tree):
    parent, scores, weights, _ = tree
    values = smooth_scores(parent, scores, weights, c=1e6)
    assert len(set(values)) == 1
    mean = np.average(scores, weights=weights)
    step = (max(scores) - min(scores)) / 255
    assert values[0] == pytest.approx(mean, abs=step / 2 + 1e-12)


def test_matches_the_naive_solver_on_dom_shaped_trees():
    rng = random.Random(7)
    for n, c in ((60, 0.01), (150, 0.1), (300, 1.0), (300, 0.01)):
        parent = dom_like_tree(n, rng)
        scores = template_scores(parent, rng)
        grid = candidate_grid(scores, 24)
        fast = smooth_tree(parent, scores, c=c, candidates=grid)
        naive = naive_smooth(parent, scores, None, c, grid)
        assert fast.cost == pytest.approx(smoothing_cost(parent, scores, naive, c=c), abs=1e-9)
        assert satisfies_order(parent, fast.values)


# -- the root, missing scores, forests ---------------------------------------------------------


def test_root_is_free_and_never_penalised():
    # A lone root just takes its nearest candidate; nothing is charged for it.
    single = smooth_tree([-1], [0.3], c=1.0, candidates=[0.0, 0.25, 1.0])
    assert single.values.tolist() == [0.25]
    assert single.cost == pytest.approx(0.05**2)
    # Two roots of a forest are independent: no constraint, no penalty between them.
    forest = smooth_tree([-1, -1], [0.9, 0.1], c=1.0, candidates=[0.1, 0.9])
    assert forest.values.tolist() == [0.9, 0.1]
    assert forest.cost == 0.0


def test_one_change_costs_c():
    # root 0.1, two children at 0.9: one value change per child edge when c is small...
    result = smooth_tree([-1, 0, 0], [0.1, 0.9, 0.9], c=0.05, candidates=[0.1, 0.9])
    assert result.values.tolist() == [0.1, 0.9, 0.9]
    assert result.cost == pytest.approx(0.1)
    # ...and no change when two changes cost more than flattening.
    flat = smooth_tree([-1, 0, 0], [0.1, 0.9, 0.9], c=0.5, candidates=[0.1, 0.9])
    assert flat.values.tolist() == [0.9, 0.9, 0.9]


def test_nan_scores_have_no_data_term():
    # An unscored leaf copies its parent; an unscored middle node sits between its neighbours.
    values = smooth_scores([-1, 0, 1, 0], [0.2, np.nan, 0.8, np.nan], c=0.01)
    assert values[3] == values[0]
    assert values[0] <= values[1] <= values[2]
    assert values[0] == pytest.approx(0.2) and values[2] == pytest.approx(0.8)
    assert np.isnan(smooth_scores([-1, 0], [np.nan, np.nan])).all()
    assert np.isnan(smooth_scores([-1, 0], [0.4, 0.6], weights=[0, 0])).all()


def test_template_mask():
    mask = template_mask([0.2, 0.5, 0.9, np.nan])
    assert mask.tolist() == [False, True, True, False]
    assert template_mask([0.6], threshold=0.7).tolist() == [False]


def test_empty_tree():
    result = smooth_tree([], [])
    assert result.values.shape == (0,)


@pytest.mark.parametrize(
    ("parent", "scores", "weights", "c", "message"),
    [
        ([-1, 2, 0], [0.1] * 3, None, 0.01, "smaller than v"),
        ([0], [0.1], None, 0.01, "smaller than v"),
        ([-1, -2], [0.1] * 2, None, 0.01, "smaller than v"),
        ([-1, 0], [0.1], None, 0.01, "1 scores for 2 nodes"),
        ([-1, 0], [0.1, math.inf], None, 0.01, "finite"),
        ([-1, 0], [0.1, 0.2], [1, -1], 0.01, "weights"),
        ([-1, 0], [0.1, 0.2], [1], 0.01, "1 weights"),
        ([-1, 0], [0.1, 0.2], None, -1.0, "c must be"),
        ([-1, 0.5], [0.1, 0.2], None, 0.01, "integer"),
    ],
)
def test_bad_input_is_a_clear_error(parent, scores, weights, c, message):
    with pytest.raises(ValueError, match=message):
        smooth_tree(parent, scores, weights, c)


def test_bad_candidates_and_resolution():
    with pytest.raises(ValueError, match="candidates"):
        smooth_tree([-1], [0.5], candidates=[])
    with pytest.raises(ValueError, match="candidates"):
        smooth_tree([-1], [0.5], candidates=[math.nan])
    with pytest.raises(ValueError, match="resolution"):
        smooth_tree([-1], [0.5], resolution=0)


def test_bound_of_a_grid_is_half_its_step_squared_times_weight():
    scores = [0.0, 1.0, 0.5]
    grid = candidate_grid(scores, 11)
    assert restriction_bound(scores, [1, 1, 1], grid) == pytest.approx(3 * 0.05**2)
    assert restriction_bound(scores, [1, 1, 1], [0.5]) == pytest.approx(3 * 0.25)


# -- size and depth ----------------------------------------------------------------------------


def test_a_5000_deep_chain_needs_no_recursion():
    rng = np.random.default_rng(3)
    n = 5000
    parent = list(range(-1, n - 1))
    scores = rng.random(n)
    grid = candidate_grid(scores, 8)
    result = smooth_tree(parent, scores, c=0.01, candidates=grid)
    assert np.all(np.diff(result.values) >= 0)
    naive = naive_smooth(parent, scores, None, 0.01, grid)
    assert result.cost == pytest.approx(smoothing_cost(parent, scores, naive, c=0.01), abs=1e-7)
    deep = smooth_tree(parent, scores)  # default grid, 5,000 one-node levels
    assert np.all(np.diff(deep.values) >= 0)


def test_a_5000_node_page_is_fast():
    """A loose ceiling (the bench measures the real figure): catches an accidental O(n^2)."""
    rng = random.Random(5)
    parent = dom_like_tree(5000, rng)
    scores = template_scores(parent, rng)
    smooth_tree(parent, scores)
    start = time.process_time()
    result = smooth_tree(parent, scores)
    assert time.process_time() - start < 0.5
    assert satisfies_order(parent, result.values)


def test_bench_smooth_command(capsys):
    assert main(["bench", "smooth", "--nodes", "400", "--repeat", "2", "--naive-nodes", "40"]) == 0
    out = capsys.readouterr().out
    assert "tree: 400 nodes" in out and "ms CPU" in out
    assert "same cost: yes" in out
