"""Speed of isotonic tree smoothing (newscrawl.template.isotonic) on a DOM-shaped tree.

Builds a random tree shaped like a page's DOM (seeded, so runs are comparable): nested
containers a few dozen levels deep, lists and link bars with many children, half the nodes
leaves. Scores mimic a classifier's: regions of template and content with noisy scores inside
them. Smoothing is timed --repeat times after one warm-up run; the median wall-clock and CPU
times are reported (on a busy machine CPU time is the fairer figure: wall time then includes
waiting for a core). --nodes sets the tree's size (a large page has some 5,000 nodes).

For reference, a naive O(n k^2) dynamic program (one node at a time, each suffix minimum
recomputed from scratch) runs on a smaller tree, next to the fast solver on that same tree:
the ratio of the two and whether their costs agree are printed.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from newscrawl.lab._bench_args import nonnegative_float, nonnegative_int, positive_int

if TYPE_CHECKING:
    import numpy as np

__all__ = ["HELP", "add_arguments", "dom_like_tree", "naive_smooth", "run", "template_scores"]

HELP = "milliseconds to smooth a 5,000-node page, against a naive O(n k^2) solver"
TARGET_MS = 50.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--nodes", type=positive_int, default=5000, metavar="N", help="tree size (5000)"
    )
    parser.add_argument(
        "-r", "--repeat", type=positive_int, default=15, metavar="R", help="timed runs; median (15)"
    )
    parser.add_argument(
        "-c", type=nonnegative_float, default=0.01, help="penalty per value change (0.01)"
    )
    parser.add_argument(
        "--resolution",
        type=positive_int,
        default=None,
        metavar="K",
        help="candidate grid size (256)",
    )
    parser.add_argument(
        "--naive-nodes",
        type=nonnegative_int,
        default=300,
        metavar="M",
        help="tree size for the naive reference run, 0 to skip (300)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")


def run(args: argparse.Namespace) -> int:
    from newscrawl.template.isotonic import DEFAULT_RESOLUTION, smooth_tree

    resolution = args.resolution or DEFAULT_RESOLUTION
    rng = random.Random(args.seed)
    parent = dom_like_tree(args.nodes, rng)
    scores = template_scores(parent, rng)
    depth = _max_depth(parent)
    leaves = args.nodes - len(set(parent[1:]))
    print(
        f"tree: {args.nodes} nodes, depth {depth}, {leaves} leaves; "
        f"c = {args.c}, {resolution} candidate values"
    )

    def fast() -> object:
        return smooth_tree(parent, scores, c=args.c, resolution=resolution)

    wall, cpu = _time(fast, args.repeat)
    result = smooth_tree(parent, scores, c=args.c, resolution=resolution)
    print(f"smooth_tree: {wall:.1f} ms wall, {cpu:.1f} ms CPU (median of {args.repeat})")
    print(f"  cost {result.cost:.4f}, at most {result.bound:.4f} above the unrestricted optimum")
    print(f"target: {args.nodes} nodes under {TARGET_MS:.0f} ms: {_verdict(wall, cpu)}")
    if args.naive_nodes > 0:
        _compare_naive(args, resolution, rng)
    return 0


def _compare_naive(args: argparse.Namespace, resolution: int, rng: random.Random) -> None:
    from newscrawl.template.isotonic import smooth_tree, smoothing_cost

    parent = dom_like_tree(args.naive_nodes, rng)
    scores = template_scores(parent, rng)
    fast = smooth_tree(parent, scores, c=args.c, resolution=resolution)
    repeat = max(1, min(args.repeat, 3))
    fast_wall, fast_cpu = _time(
        lambda: smooth_tree(parent, scores, c=args.c, resolution=resolution), args.repeat
    )
    naive_wall, naive_cpu = _time(
        lambda: naive_smooth(parent, scores, None, args.c, fast.candidates), repeat
    )
    naive = naive_smooth(parent, scores, None, args.c, fast.candidates)
    naive_cost = smoothing_cost(parent, scores, naive, None, args.c)
    agree = "yes" if math.isclose(naive_cost, fast.cost, rel_tol=1e-9, abs_tol=1e-9) else "NO"
    print(
        f"naive O(n k^2) on {args.naive_nodes} nodes: {naive_wall:.1f} ms wall, "
        f"{naive_cpu:.1f} ms CPU; smooth_tree on the same tree: {fast_wall:.2f} ms wall, "
        f"{fast_cpu:.2f} ms CPU; ratio {naive_cpu / max(fast_cpu, 1e-6):.0f}x (CPU)"
    )
    print(f"  same cost: {agree} ({naive_cost:.6f} naive, {fast.cost:.6f} smooth_tree)")


def _verdict(wall: float, cpu: float) -> str:
    if wall < TARGET_MS:
        return "met"
    if cpu < TARGET_MS:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        return (
            f"met in CPU time; wall time also counts waiting for a core "
            f"(load average {load:.1f} on {os.cpu_count()} CPUs)"
        )
    return "NOT met"


def _time(job: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and CPU milliseconds of `repeat` runs, after one warm-up run."""
    job()
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        job()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - wall)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def dom_like_tree(n: int, rng: random.Random) -> list[int]:
    """A random preorder parent array shaped like a page's DOM.

    Walks down from the root keeping a stack of open elements: each new node is the child of
    the top of the stack; it becomes a container (pushed) with some probability, and elements
    close (pop) at random. Containers sometimes turn into lists that take a run of many
    children in a row, as menus and link bars do.
    """
    parent = [-1]
    stack = [0]
    while len(parent) < n:
        node = len(parent)
        while len(stack) > 1 and rng.random() < 0.4:
            stack.pop()
        top = stack[-1]
        if rng.random() < 0.04:  # a list: many siblings at once, some with a nested link
            for _ in range(min(rng.randint(5, 40), n - len(parent))):
                item = len(parent)
                parent.append(top)
                if len(parent) < n and rng.random() < 0.8:
                    parent.append(item)
            continue
        parent.append(top)
        if len(stack) < 30 and rng.random() < 0.7:
            stack.append(node)
    return parent


def template_scores(parent: Sequence[int], rng: random.Random) -> np.ndarray:
    """Classifier-like scores: each node inherits its parent's region (template or content)
    and flips it now and then; its score is the region's level plus noise, clipped to [0, 1]."""
    import numpy as np

    level = [0.0] * len(parent)
    scores = np.empty(len(parent))
    for node, up in enumerate(parent):
        if up < 0 or rng.random() < 0.08:
            level[node] = rng.choice((0.15, 0.85))
        else:
            level[node] = level[up]
        scores[node] = min(1.0, max(0.0, rng.gauss(level[node], 0.15)))
    return scores


def naive_smooth(
    parent: Sequence[int],
    scores: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray | None,
    c: float,
    candidates: Sequence[float] | np.ndarray,
) -> np.ndarray:
    """The same restricted problem as `smooth_tree`, solved the plain way: O(n k^2).

    One node at a time, children before parents; each child's best move up from value X[j]
    is a fresh minimum over X[j+1:]. It shares no code with the fast solver, so it also serves
    as an independent check of it on trees too big for brute force.
    """
    import numpy as np

    grid = np.unique(np.asarray(candidates, dtype=float))
    k, n = len(grid), len(parent)
    children: list[list[int]] = [[] for _ in range(n)]
    for node, up in enumerate(parent):
        if up >= 0:
            children[up].append(node)
    cost: list[np.ndarray] = [np.empty(0)] * n
    for node in range(n - 1, -1, -1):  # parent ids are smaller than their children's
        s = scores[node]
        w = 1.0 if weights is None else weights[node]
        row = np.zeros(k) if math.isnan(s) else w * (s - grid) ** 2
        for child in children[node]:
            below = cost[child]
            for j in range(k):
                move = below[j + 1 :].min() + c if j + 1 < k else math.inf
                row[j] += min(below[j], move)
        cost[node] = row
    choice = [0] * n
    for node in range(n):
        up = parent[node]
        row = cost[node]
        if up < 0:
            choice[node] = int(row.argmin())
            continue
        j = choice[up]
        higher = row[j + 1 :]
        if higher.size and higher.min() + c < row[j]:
            choice[node] = j + 1 + int(higher.argmin())
        else:
            choice[node] = j
    return grid[choice]


def _max_depth(parent: Sequence[int]) -> int:
    depth = [0] * len(parent)
    for node, up in enumerate(parent):
        if up >= 0:
            depth[node] = depth[up] + 1
    return max(depth, default=0)
