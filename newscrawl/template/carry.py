"""A site's template carried across crawls, and the redesign that breaks it.

A scheduled crawl brings a few new pages of a site each run: too few for SiteLevel and the site
pass to learn the site's template from. The site pass therefore also reads the site's pages
stored by earlier crawls of the same folder (`CrawlHistory.context_pages`: the latest version
of each URL, newest first, up to the site's page budget) - they shape the template and are
never written again.

When the site was redesigned, those pages would teach the old design. SiteLevel's own test
decides: the new pages' template hashes (hashes on at least p of the new pages, as SiteLevel
counts them) are compared with every hash of the stored pages; when most of them
(`REDESIGN_SHARE`) were never seen before, the site is flagged redesigned and its site pass
uses only pages of the new design. Only hashes of containers count (nodes with at least
`MIN_SUBTREE` - 1 descendants): a link or a line of text (a menu entry, a headline) keeps its
hash through a redesign, the markup around it does not. On the demo web's day-1 crawl after
day 0, 100% of the redesigned site's container template was unseen and 16% and 28% of the
other two sites' (the "latest" lists and pagers that change every day), where counting every
node gave 73% against 9% and 26% (``python -m pytest -s tests/test_incremental.py -k
redesigned`` prints them).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from newscrawl.template.records import PageNodes
from newscrawl.template.sitelevel import SiteLevelConfig, distinct_pages, frequent_hashes

__all__ = [
    "MIN_NEW_PAGES",
    "MIN_SUBTREE",
    "REDESIGN_SHARE",
    "is_redesign",
    "unseen_template_share",
]

# Share of the new pages' template hashes never seen on the stored pages that means a redesign.
REDESIGN_SHARE = 0.5
# Fewer new pages than this say too little about the template to call a redesign.
MIN_NEW_PAGES = 3
# Nodes of at least this many nodes (itself included) are containers: markup, not one link.
MIN_SUBTREE = 3


def _containers(page: PageNodes) -> np.ndarray:
    return page.hash[(page.end - np.arange(len(page.hash))) >= MIN_SUBTREE]


def unseen_template_share(
    new: Sequence[PageNodes], stored: Sequence[PageNodes], config: SiteLevelConfig | None = None
) -> float:
    """Share of the new pages' template hashes (of containers) that no stored page has (0 when
    the new pages share no container at all)."""
    config = config or SiteLevelConfig()
    template = frequent_hashes(distinct_pages(_containers(page) for page in new), config)
    if not len(template) or not stored:
        return 0.0
    seen = np.unique(np.concatenate([page.hash for page in stored]))
    return float(np.mean(~np.isin(template, seen)))


def is_redesign(new: Sequence[PageNodes], stored: Sequence[PageNodes]) -> tuple[bool, float]:
    """(redesigned, unseen share) of a site whose `new` pages join its `stored` ones."""
    if len(new) < MIN_NEW_PAGES or not stored:
        return False, 0.0
    share = unseen_template_share(new, stored)
    return share >= REDESIGN_SHARE, share
