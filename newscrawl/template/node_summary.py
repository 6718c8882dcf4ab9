"""A parsed page's node hashes as the site pass's first pass reads them, stored beside its raw page.

The site pass counts, per node hash, the pages it occurs on (`newscrawl.site.stream_pass`):
it needs each page's root hash, its distinct hashes and whether its generator names a blog
engine, not its tree. Where a page is parsed already (the crawl's parse workers or inline
parse, an ingest) `hash_summary` gives these as bytes, stored in the `pages` dataset's
`node_hashes` column, and `read_summary` reads them back: the site pass then parses each
such page once, not twice. A page with more distinct hashes than `MAX_SUMMARY_HASHES` gets
no summary (the pass parses it as before), so what is stored per page stays bounded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from newscrawl.template.node_records import node_hashes, page_kind

if TYPE_CHECKING:
    from newscrawl.html.dom import Dom

__all__ = [
    "MAX_SUMMARY_HASHES",
    "SUMMARY_COLUMN",
    "PageHashes",
    "hash_summary",
    "read_summary",
    "summaries_wanted",
]

SUMMARY_COLUMN = "node_hashes"  # the `pages` column
# A page's stored summary holds at most this many distinct node hashes (8 bytes each); a page
# with more gets none, and the first pass parses it.
MAX_SUMMARY_HASHES = 1 << 18
# The summary's first word: it is one (1), and its page's generator names a blog engine (+2).
_SUMMARY, _BLOG_GENERATOR = 1, 2


@dataclass(frozen=True, slots=True)
class PageHashes:
    """What the first pass reads of a parsed page: its root hash then its distinct node
    hashes (sorted), and whether its <meta name="generator"> names a blog engine."""

    hashes: np.ndarray
    blog_generator: bool


def hash_summary(dom: Dom) -> bytes:
    """What the first pass reads of a parsed page, as bytes to store beside its raw page
    (little-endian 64-bit words: a flags word, the root hash, the distinct hashes sorted);
    empty when the page has more than `MAX_SUMMARY_HASHES` distinct hashes."""
    hashes = node_hashes(dom)
    distinct = np.unique(hashes)
    if len(distinct) > MAX_SUMMARY_HASHES:
        return b""
    blog = page_kind("", dom.meta.get("generator", "")) == "blog"
    head = np.array([_SUMMARY + _BLOG_GENERATOR * blog], dtype=np.uint64)
    return np.concatenate([head, hashes[:1], distinct]).astype("<u8").tobytes()


def read_summary(data: bytes | None) -> PageHashes | None:
    """The `hash_summary` in `data`; None when there is none (empty, or not one)."""
    if not data or len(data) % 8:
        return None
    words = np.frombuffer(data, dtype="<u8").astype(np.uint64)
    if int(words[0]) not in (_SUMMARY, _SUMMARY + _BLOG_GENERATOR):
        return None
    return PageHashes(words[1:], bool(int(words[0]) & _BLOG_GENERATOR))


def summaries_wanted(settings: Any) -> bool:
    """Whether a crawl with these (Scrapy) settings stores its pages' hash summaries: its raw
    pages are stored (the `pages` dataset) and its site pass counts SiteLevel's hashes."""
    if not settings.getbool("NEWSCRAWL_SITELEVEL", True):
        return False
    if (settings.get("NEWSCRAWL_SITE_METHOD") or "sitelevel") != "sitelevel":
        return False
    enabled = {
        str(name).rpartition(".")[2]
        for name, order in settings.getwithbase("ITEM_PIPELINES").items()
        if order is not None
    }
    return {"RawPagePipeline", "SitePassPipeline"} <= enabled
