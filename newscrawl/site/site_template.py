"""The site's template as features of the learned extractor: SiteLevel's flag, block by block.

When the pages of a site are known (a crawl's site pass, `--site-from`, a dataset's sites),
SiteLevel's rule (Chakrabarti, Kumar and Punera; `newscrawl.template.sitelevel`) marks as
template every node whose content hash occurs on at least p of the site's pages, and everything
inside such a node. A
block learns from it how much of its own text, and of its parent element's text, is template.
A page whose site is unknown, or has fewer pages than SiteLevel needs, gets -1 in the share
columns and 0 pages, so one model serves pages with and without a site.

The flag is unsupervised (no gold text goes into it), so cross-validation stays honest: a
site's pages sit in one fold, and the held-out site's template comes from its own pages, as
it would in a crawl.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from newscrawl.extractors.blockmodel.blocks import Blocks
from newscrawl.html.dom import Dom
from newscrawl.html.tree import PageError
from newscrawl.template.node_records import node_hashes
from newscrawl.template.sitelevel import (
    PageParser,
    RawPage,
    SiteLevelConfig,
    distinct_pages,
    frequent_hashes,
    in_sorted,
    parse_raw,
)

__all__ = [
    "MAX_TEMPLATE_PAGES",
    "SITE_FEATURES",
    "TemplateHashes",
    "hashes_template",
    "page_hashes",
    "pages_template",
    "site_columns",
    "site_template",
    "template_nodes",
]

# A site's template is learnt from at most this many of its pages (a crawl's page budget).
MAX_TEMPLATE_PAGES = 200
SITE_FEATURES: list[str] = ["site_pages_log", "site_template_share", "site_template_parent_share"]


@dataclass(frozen=True, slots=True)
class TemplateHashes:
    """A site's template hashes (SiteLevel's frequent node hashes) and how many distinct pages
    they were counted on."""

    hashes: np.ndarray  # sorted uint64
    pages: int


def site_template(
    page_hashes: Sequence[np.ndarray], config: SiteLevelConfig | None = None
) -> TemplateHashes | None:
    """The template of a site from each page's node hashes (`records.node_hashes`); None when
    the site has fewer distinct pages than SiteLevel needs (`config.min_pages`)."""
    config = config or SiteLevelConfig()
    distinct = distinct_pages(page_hashes)
    if len(distinct) < config.min_pages:
        return None
    return TemplateHashes(frequent_hashes(distinct, config), len(distinct))


def pages_template(
    pages: Sequence[RawPage],
    config: SiteLevelConfig | None = None,
    parse: PageParser = parse_raw,
) -> TemplateHashes | None:
    """The template of a site from its raw pages (at most `MAX_TEMPLATE_PAGES`; pages that
    cannot be parsed are left out); None when too few pages remain, and then a site under
    SiteLevel's minimum is not parsed at all. `parse`: how a page becomes its Dom."""
    config = config or SiteLevelConfig()
    if len(pages) < config.min_pages:
        return None
    return hashes_template([page_hashes(page, parse) for page in pages[:MAX_TEMPLATE_PAGES]])


def page_hashes(page: RawPage, parse: PageParser = parse_raw) -> np.ndarray | None:
    """A raw page's node hashes, None when it cannot be parsed."""
    try:
        return node_hashes(parse(page))
    except PageError:
        return None


def hashes_template(
    hashes: Sequence[np.ndarray | None], config: SiteLevelConfig | None = None
) -> TemplateHashes | None:
    """`pages_template` from each page's `page_hashes` (the pages in the same order, read by
    one process or several): the first `MAX_TEMPLATE_PAGES` pages count, those that did not
    parse are left out."""
    config = config or SiteLevelConfig()
    if len(hashes) < config.min_pages:
        return None
    parsed = [found for found in hashes[:MAX_TEMPLATE_PAGES] if found is not None]
    return site_template(parsed, config)


def template_nodes(
    dom: Dom, template: TemplateHashes, hashes: np.ndarray | None = None
) -> np.ndarray:
    """bool per node: the node, or an element around it, has a template hash."""
    hashes = node_hashes(dom) if hashes is None else hashes
    marked = np.flatnonzero(in_sorted(hashes, template.hashes))
    cover = np.zeros(len(dom) + 1, dtype=np.int64)
    np.add.at(cover, marked, 1)  # a marked node covers its subtree, ids [node, end)
    np.add.at(cover, np.asarray(dom.end, dtype=np.int64)[marked], -1)
    return np.cumsum(cover[:-1]) > 0


def site_columns(
    dom: Dom, blocks: Blocks, template: TemplateHashes | None, hashes: np.ndarray | None = None
) -> np.ndarray:
    """`SITE_FEATURES` of each block (one row per block)."""
    out = np.zeros((len(blocks), len(SITE_FEATURES)), dtype=np.float32)
    if template is None or not len(blocks):
        out[:, 1:] = -1.0
        return out
    flagged = template_nodes(dom, template, hashes)
    lengths = np.fromiter(map(len, dom.piece_text), dtype=np.float64, count=len(dom.piece_text))
    owners = np.asarray(dom.piece_owner, dtype=np.int64)
    total = np.concatenate([[0.0], np.cumsum(lengths)])
    marked = np.concatenate([[0.0], np.cumsum(lengths * flagged[owners])])
    start = np.asarray(blocks.start, dtype=np.int64)
    stop = np.asarray(blocks.stop, dtype=np.int64)
    parent_of = np.asarray(dom.parent, dtype=np.int64)
    parent = parent_of[np.asarray(blocks.node, dtype=np.int64)]
    parent = np.where(parent >= 0, parent, np.asarray(blocks.node, dtype=np.int64))
    low = np.asarray(dom.piece_start, dtype=np.int64)[parent]
    high = np.asarray(dom.piece_end, dtype=np.int64)[parent]
    out[:, 0] = np.log1p(template.pages)
    out[:, 1] = _share(marked, total, start, stop)
    out[:, 2] = _share(marked, total, low, high)
    return out


def _share(marked: np.ndarray, total: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    chars = total[high] - total[low]
    return np.where(chars > 0, (marked[high] - marked[low]) / np.maximum(chars, 1.0), 0.0)
