"""A page's title for extractors whose algorithm has no title stage of its own (MSS, CETD-TPC)."""

from __future__ import annotations

import re

from newscrawl.dom import Dom

__all__ = ["page_title"]

# Separators sites put between the headline and their own name in <title>.
_SITE_SUFFIX = re.compile(r"\s+(?:[|·•«»:]|-{1,2}|–|—|::)\s+")


def _headline_part(title: str) -> str:
    """The longest part of a <title> split at site-name separators."""
    parts = [p for p in _SITE_SUFFIX.split(title) if p.strip()]
    return max(parts, key=len).strip() if parts else title.strip()


def page_title(dom: Dom) -> str:
    """og:title, else an <h1> that the <title> contains, else the headline part of <title>."""
    og = dom.meta.get("og:title") or dom.meta.get("twitter:title")
    if og:
        return og
    title = dom.title
    folded = title.casefold()
    for node, tag in enumerate(dom.tag):
        if tag == "h1":
            h1 = " ".join(dom.text(node).split())
            if h1 and (not title or h1.casefold() in folded):
                return h1
    return _headline_part(title)
