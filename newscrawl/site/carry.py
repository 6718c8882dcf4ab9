"""A site's template carried across crawls, and the redesign that breaks it.

A scheduled crawl brings a few new pages of a site each run: too few for SiteLevel and the site
pass to learn the site's template from. The site pass therefore also reads the site's pages
stored by earlier crawls of the same folder (`CrawlHistory.context_pages`: the latest version
of each URL, newest first, up to the site's page budget) - they shape the template and are
never written again.

When the site was redesigned, those pages would teach the old design. SiteLevel's own test
decides, on the pages' markup rather than their text: each node gets a *skeleton* hash (its tag
and its children's skeletons, no text and no attributes), the new pages' template skeletons
(on at least p of the new pages, as SiteLevel counts them) are compared with every skeleton of
the stored pages, and when most of them (`REDESIGN_SHARE`) were never seen before, the site is
flagged redesigned and its site pass uses only pages of the new design. Only containers count
(nodes with at least `MIN_SUBTREE` - 1 descendants): a link keeps its shape through a redesign,
the markup around it does not. Text is left out because it changes every day: the content
hashes SiteLevel labels with change for a "latest" box or a pager whenever an article is added,
and on a small daily run (an article and the three listing pages fetched again) half of a small
site's content template was new without any redesign. On the demo web's day-1 pages against
day 0 (`tests/test_incremental_units.py`), the redesigned site's new template skeletons are 85%
unseen (93% for one new article and three listing pages), the other two sites' 0%; content
hashes gave 92% against 30% and 33% (40% and 36% for the small run).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from newscrawl.template.node_records import PageNodes
from newscrawl.template.sitelevel import SiteLevelConfig, frequent_hashes

__all__ = [
    "MIN_NEW_PAGES",
    "MIN_SUBTREE",
    "REDESIGN_SHARE",
    "is_redesign",
    "skeletons",
    "unseen_template_share",
]

# Share of the new pages' template hashes never seen on the stored pages that means a redesign.
REDESIGN_SHARE = 0.5
# Fewer new pages than this say too little about the template to call a redesign.
MIN_NEW_PAGES = 3
# Nodes of at least this many nodes (itself included) are containers: markup, not one link.
MIN_SUBTREE = 3


def skeletons(page: PageNodes) -> np.ndarray:
    """Per node, a hash of its tag and its children's skeletons in order: the subtree's
    markup without its text (int64; tuples of ints hash the same in every process)."""
    count = len(page.tag)
    out = [0] * count
    children: list[list[int]] = [[] for _ in range(count)]
    tags, parents = page.tag.tolist(), page.parent.tolist()
    for node in range(count - 1, -1, -1):  # children have larger ids: they come first
        kids = children[node]
        kids.reverse()  # gathered last child first
        out[node] = hash((tags[node], *kids))
        if parents[node] >= 0:
            children[parents[node]].append(out[node])
    return np.asarray(out, dtype=np.int64)


def _containers(page: PageNodes, shapes: np.ndarray) -> np.ndarray:
    return shapes[(page.end - np.arange(len(shapes))) >= MIN_SUBTREE]


def unseen_template_share(
    new: Sequence[PageNodes], stored: Sequence[PageNodes], config: SiteLevelConfig | None = None
) -> float:
    """Share of the new pages' template skeletons (of containers) that no stored page has (0
    when the new pages share no container at all)."""
    config = config or SiteLevelConfig()
    # one page fetched twice counts once (its content root hash tells); pages of the same
    # shape are different pages
    once = {int(page.hash[0]): page for page in new if len(page.hash)}.values()
    shapes = [np.unique(_containers(page, skeletons(page))) for page in once]
    template = frequent_hashes([found for found in shapes if len(found)], config)
    if not len(template) or not stored:
        return 0.0
    seen = np.unique(np.concatenate([skeletons(page) for page in stored]))
    return float(np.mean(~np.isin(template, seen)))


def is_redesign(new: Sequence[PageNodes], stored: Sequence[PageNodes]) -> tuple[bool, float]:
    """(redesigned, unseen share) of a site whose `new` pages join its `stored` ones."""
    if len(new) < MIN_NEW_PAGES or not stored:
        return False, 0.0
    share = unseen_template_share(new, stored)
    return share >= REDESIGN_SHARE, share
