"""A page's title for extractors whose algorithm has no title stage of its own (MSS, CETD-TPC)."""

from __future__ import annotations

import re

from newscrawl.dom import Dom

__all__ = ["h1_texts", "page_title"]

# Separators sites put between the headline and their own name in <title>.
_SITE_SUFFIX = re.compile(r"\s+(?:[|·•«»:]|-{1,2}|–|—|::)\s+")


def _headline_part(title: str) -> str:
    """The longest part of a <title> split at site-name separators."""
    parts = [p for p in _SITE_SUFFIX.split(title) if p.strip()]
    return max(parts, key=len).strip() if parts else title.strip()


def h1_texts(dom: Dom) -> list[tuple[int, str]]:
    """The page's <h1> elements that hold text, with their text (whitespace collapsed)."""
    nodes = dom.nodes_of("h1")
    found = ((node, " ".join(dom.text(node).split())) for node in nodes)
    return [(node, text) for node, text in found if text]


def page_title(dom: Dom) -> str:
    """og:title, else the longest <h1> the <title> contains (a site's name in an <h1> is in
    the <title> too), else the headline part of <title>; without a <title>, the first <h1>."""
    og = dom.meta.get("og:title") or dom.meta.get("twitter:title")
    if og:
        return og
    title = dom.title
    headings = h1_texts(dom)
    if not title:
        return headings[0][1] if headings else ""
    folded = title.casefold()
    named = [text for _, text in headings if text.casefold() in folded]
    return max(named, key=len) if named else _headline_part(title)
