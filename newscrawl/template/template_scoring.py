"""Per-page template scores: what the template filter and the learned extractor read.

`smoothed_scores(dom, model)` gives every DOM node its isotonic-smoothed template probability
(Chakrabarti, Kumar and Punera: the area-bucketed classifiers' scores, smoothed over the tree
so that a parent is never more "template" than its children). It is the filter's own computation
(`TemplateExtractor.template_mask` thresholds it), exposed for callers that want the score as
a feature rather than a cut. Beyond parsing, a page costs its node boxes (from the model's
geometry provider), its node records (without content hashes), the classifiers and the
smoothing on a 64-value grid (their costs: docs/experiments.md).
"""

from __future__ import annotations

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.models.template_model import TemplateModel, check_model
from newscrawl.template.isotonic import DEFAULT_C, smooth_scores
from newscrawl.template.node_features import FEATURES, node_features
from newscrawl.template.node_records import PageNodes

__all__ = ["RESOLUTION", "page_nodes", "raw_scores", "smooth_page", "smoothed_scores"]

# Candidate values of the smoothing: within (1/126)² per node of the exact optimum on [0, 1]
# scores (`isotonic.restriction_bound`), and cheaper than the 256-value default.
RESOLUTION = 64


def page_nodes(
    dom: Dom, model: TemplateModel, geometry: str | None = None, hashes: bool = False
) -> PageNodes:
    """The page's node records with boxes from the model's geometry provider (or `geometry`,
    which must then be the model's: `ModelError` otherwise)."""
    geometry = geometry or model.geometry
    check_model(model, FEATURES, geometry)
    return PageNodes.from_dom(dom, dom.url, geometry=geometry, hashes=hashes)


def raw_scores(dom: Dom, model: TemplateModel, page: PageNodes | None = None) -> np.ndarray:
    """Classifier score per node; NaN for nodes no bucket covers (too small, invisible)."""
    page = page if page is not None else page_nodes(dom, model)
    relative = bool(model.options.get("relative_distances", True))
    return model.scores(node_features(page, relative=relative), page.area)


def smooth_page(parent: np.ndarray | list[int], raw: np.ndarray, body: int, c: float) -> np.ndarray:
    """Smoothed scores from raw ones; nodes before <body> (its <head>) and pages with no score
    at all get 0 (no evidence of template)."""
    if not len(raw):
        return np.zeros(0)
    smoothed = np.nan_to_num(_smooth_pruned(parent, raw, c), nan=0.0)
    smoothed[:body] = 0.0
    return smoothed


def smoothed_scores(
    dom: Dom,
    model: TemplateModel,
    *,
    c: float = DEFAULT_C,
    page: PageNodes | None = None,
) -> np.ndarray:
    """float64 array of shape (len(dom),): each node's isotonic-smoothed template probability.

    Boxes come from the model's own geometry provider. `page` reuses records already made
    (they must come from that provider). Raises `ModelError` when the model's features differ
    from this newscrawl's.
    """
    if not len(dom):
        return np.zeros(0)
    page = page if page is not None else page_nodes(dom, model)
    return smooth_page(dom.parent, raw_scores(dom, model, page), dom.body, c)


def _smooth_pruned(parent: np.ndarray | list[int], raw: np.ndarray, c: float) -> np.ndarray:
    """`smooth_scores` on a smaller tree with the same optimum, mapped back to every node.

    Two reductions, both exact (they change no optimal cost):
    * a subtree with no score has no data term: it takes its parent's value at no cost, so it
      is left out and copied from its parent afterwards (a page's tiny inline nodes);
    * an unscored node with one child (a wrapper <div>) lies on a path parent - node - child
      whose two edges cost c when the ends differ, the same as one edge: it is left out, its
      child hangs from its parent, and it takes its parent's value (as the full program does
      on this tie: a child keeps its parent's value unless moving up is strictly cheaper).
    The smoothing runs one depth level at a time, so a shallower tree is a faster one.
    """
    parents = np.asarray(parent, dtype=np.int64).tolist()
    count = len(parents)
    scored = np.isfinite(raw).tolist()
    keep = list(scored)
    if not any(keep):
        return np.full(count, np.nan)
    kids = [0] * count
    for node in range(count - 1, 0, -1):  # preorder: children after parents
        up = parents[node]
        if keep[node] and up >= 0:
            keep[up] = True
            kids[up] += 1
    # unscored single-child nodes: skipped; `link[v]` is v's nearest solved ancestor
    solve = [keep[v] and (scored[v] or kids[v] != 1 or parents[v] < 0) for v in range(count)]
    link = [-1] * count
    for node in range(count):
        up = parents[node]
        if up >= 0:
            link[node] = up if solve[up] else link[up]
    ids = [v for v in range(count) if solve[v]]
    new_id = {v: i for i, v in enumerate(ids)}
    sub_parent = np.fromiter((new_id.get(link[v], -1) for v in ids), np.int64, len(ids))
    solved = smooth_scores(sub_parent, raw[ids], c=c, resolution=RESOLUTION).tolist()
    out = [float("nan")] * count
    for i, v in enumerate(ids):
        out[v] = solved[i]
    for node in range(count):  # skipped wrappers and unscored subtrees: the parent's value
        if not solve[node] and parents[node] >= 0:
            out[node] = out[parents[node]]
    return np.asarray(out)
