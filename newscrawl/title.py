"""A page's title for extractors whose algorithm has no title stage of its own (MSS, CETD-TPC)."""

from __future__ import annotations

import re

from newscrawl.dom import Dom

__all__ = ["h1_texts", "page_title", "without_site_name"]

# Separators sites put between the headline and their own name in <title>.
_SITE_SUFFIX = re.compile(r"\s+(?:[|·•«»:]|-{1,2}|–|—|::)\s+")
# The same at the start or the end of what is left when the headline is taken off a title:
# "| Site", " - Site - 13.06.2023", "Site: " (a colon only spaced or after the site's name).
_SEPARATOR_AFTER = re.compile(r"^(?:\s*(?:[|·•«»/~_]|::|-{1,2}|–|—)|\s+:)\s*\S")
_SEPARATOR_BEFORE = re.compile(r"\S\s*(?:[|·•«»/~_:]|::|-{1,2}|–|—)\s*$")


def _headline_part(title: str) -> str:
    """The longest part of a <title> split at site-name separators."""
    parts = [p for p in _SITE_SUFFIX.split(title) if p.strip()]
    return max(parts, key=len).strip() if parts else title.strip()


def h1_texts(dom: Dom) -> list[tuple[int, str]]:
    """The page's <h1> elements that hold text, with their text (whitespace collapsed)."""
    nodes = dom.nodes_of("h1")
    found = ((node, " ".join(dom.text(node).split())) for node in nodes)
    return [(node, text) for node, text in found if text]


def without_site_name(dom: Dom, title: str) -> str:
    """The headline of `title` without the site's name: when the page's own <h1>, og:title or
    twitter:title is `title` less a shorter part set off by a separator ("Storm closes harbour
    | Gazette", "Storm closes harbour - DW - 13.06.2023"), that headline; else `title` with its
    whitespace collapsed. A title the page does not confirm is kept whole: a colon or dash may
    belong to the headline itself."""
    title = " ".join(title.split())
    own = [text for _, text in h1_texts(dom)]
    own += [dom.meta.get("og:title", ""), dom.meta.get("twitter:title", "")]
    folded = title.casefold()
    best = ""
    for text in own:
        headline = " ".join(text.split())
        size = len(headline)
        if not headline or size >= len(title) or size <= len(best):
            continue
        rest = ""
        if folded.startswith(headline.casefold()) and _SEPARATOR_AFTER.match(title[size:]):
            rest = title[size:]
        elif folded.endswith(headline.casefold()) and _SEPARATOR_BEFORE.search(title[:-size]):
            rest = title[:-size]
        if rest and len(rest.strip(" |·•«»/~_:-–—")) < size:
            best = headline
    return best or title


def page_title(dom: Dom) -> str:
    """og:title (without the site's name, `without_site_name`), else the longest <h1> the
    <title> contains (a site's name in an <h1> is in the <title> too), else the headline part
    of <title>; without a <title>, the first <h1>."""
    og = dom.meta.get("og:title") or dom.meta.get("twitter:title")
    if og:
        return without_site_name(dom, og)
    title = dom.title
    headings = h1_texts(dom)
    if not title:
        return headings[0][1] if headings else ""
    folded = title.casefold()
    named = [text for _, text in headings if text.casefold() in folded]
    return max(named, key=len) if named else _headline_part(title)
