"""A page's title for extractors whose algorithm has no title stage of its own (MSS, CETD-TPC)."""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from newscrawl.html.dom import Dom

__all__ = ["h1_texts", "page_title", "without_site_name"]

# Separators sites put between the headline and their own name in <title>.
_SITE_SUFFIX = re.compile(r"\s+(?:[|·•«»:]|-{1,2}|–|—|::)\s+")
# Where a <title> may be cut between the headline and the site's name ("Headline | Site",
# "Headline - DW - 13.06.2023", "Site: Headline"): the separators, kept by the split.
_TITLE_CUT = re.compile(r"(\s+(?:[|·•«»:/~>]|::|-{1,2}|–|—)\s+|\s*[|_]\s*|:\s+)")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "´": "'", "`": "'", "“": '"', "”": '"', "„": '"'})
_LONGEST_LINE = 400  # page lines longer than this are never a headline


def _headline_part(title: str) -> str:
    """The longest part of a <title> split at site-name separators."""
    parts = [p for p in _SITE_SUFFIX.split(title) if p.strip()]
    return max(parts, key=len).strip() if parts else title.strip()


def h1_texts(dom: Dom) -> list[tuple[int, str]]:
    """The page's <h1> elements that hold text, with their text (whitespace collapsed)."""
    nodes = dom.nodes_of("h1")
    found = ((node, " ".join(dom.text(node).split())) for node in nodes)
    return [(node, text) for node, text in found if text]


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).translate(_QUOTES).split()).casefold()


# The ASCII characters `_QUOTES` replaces (the backtick).
_ASCII_QUOTES = tuple(chr(code) for code in _QUOTES if code < 128)


def _fold_line(line: str) -> str:
    """`_fold` of a line whose whitespace is collapsed: an ASCII one without a quote to replace
    is only lower-cased (NFKC leaves ASCII as it is, and casefold is lower there)."""
    if line.isascii() and not any(quote in line for quote in _ASCII_QUOTES):
        return line.lower()
    return _fold(line)


def _own_lines(dom: Dom) -> dict[str, str]:
    """The page's own headline texts, folded -> as written: its <h1>s, og:title, twitter:title
    and every line of its text (the pieces of one block)."""
    own: dict[str, str] = {}
    for text in (dom.meta.get("og:title", ""), dom.meta.get("twitter:title", "")):
        own.setdefault(_fold(text), " ".join(text.split()))
    line: list[str] = []
    block = -1
    for piece, text in enumerate([*dom.piece_text, ""]):
        owner = dom.piece_block[piece] if piece < len(dom.piece_text) else -2
        if owner != block:
            joined = " ".join(" ".join(line).split())
            if 0 < len(joined) <= _LONGEST_LINE:
                own[_fold_line(joined)] = joined
            block, line = owner, []
        line.append(text)
    for _, text in h1_texts(dom):
        own[_fold(text)] = text
    return own


def without_site_name(dom: Dom, title: str) -> str:
    """The headline of `title` without the site's name: when the page's own text (an <h1>,
    og:title, twitter:title or a line of the page) is `title` less a shorter part set off by a
    separator ("Storm closes harbour | Gazette", "Storm closes harbour - DW - 13.06.2023",
    "Gazette: Storm closes harbour"), that headline as the page writes it; else, when a first
    or last part is the site's name (og:site_name, application-name, its host name), the title
    without it; else `title` with its whitespace collapsed. A title the page does not confirm
    is kept whole: a colon or dash may belong to the headline itself."""
    title = " ".join(title.split())
    parts = _TITLE_CUT.split(title)  # text, separator, text, ...
    if len(parts) < 3:
        return title
    own = _own_lines(dom)
    best = ""
    for cut in range(2, len(parts), 2):
        for headline, rest in (
            ("".join(parts[: cut - 1]), "".join(parts[cut:])),
            ("".join(parts[cut:]), "".join(parts[: cut - 1])),
        ):
            found = own.get(_fold(headline))
            if found and len(rest) < len(headline) and len(found) > len(best):
                best = found
    return best or _named_site_cut(dom, parts) or title


def _site_names(dom: Dom) -> set[str]:
    """The site's names, folded without spaces: og:site_name, application-name and the
    labels of its host name ("www.dw.com" -> "dw", "dw.com")."""
    names = {dom.meta.get("og:site_name", ""), dom.meta.get("application-name", "")}
    host = (urlsplit(dom.url or "").hostname or "").removeprefix("www.")
    if host:
        names.update((host, host.split(".")[0]))
    return {_squeezed(name) for name in names if len(_squeezed(name)) >= 2}


def _squeezed(text: str) -> str:
    return "".join(_fold(text).split())


def _named_site_cut(dom: Dom, parts: list[str]) -> str:
    """The title less its first or last parts when one of them is the site's name (a date
    beside it goes too): "Storm closes harbour - DW - 13.06.2023" on dw.com; "" when no
    end part names the site."""
    names = _site_names(dom)
    texts = parts[::2]
    if not names or len(texts) < 2:
        return ""

    def site_or_date(text: str) -> bool:
        squeezed = _squeezed(text)
        return squeezed in names or not any(ch.isalpha() for ch in squeezed)

    first, last = 0, len(texts)
    while last - first > 1 and site_or_date(texts[last - 1]):
        last -= 1
    while last - first > 1 and site_or_date(texts[first]):
        first += 1
    dropped = texts[:first] + texts[last:]
    if not any(_squeezed(text) in names for text in dropped):
        return ""
    return "".join(parts[2 * first : 2 * last - 1])


def page_title(dom: Dom) -> str:
    """The headline: the longest <h1> that the <title> or og:title confirms (holds, and is
    not mostly something else: a site's name in an <h1> is in the <title> too), else og:title,
    else the <title>, each without the site's name (`without_site_name`; for a <title> the page
    does not confirm, its longest part); without either, the first <h1>."""
    title = " ".join(dom.title.split()) if dom.title else ""
    og = " ".join((dom.meta.get("og:title") or dom.meta.get("twitter:title") or "").split())
    headings = h1_texts(dom)
    for stated in (title, og):
        folded = _fold(stated)
        named = [text for _, text in headings if _fold(text) in folded]
        confirmed = [text for text in named if 2 * len(text) >= len(stated)]
        if confirmed:
            return max(confirmed, key=len)
    if og:
        return without_site_name(dom, og)
    if title:
        headline = without_site_name(dom, title)
        return headline if headline != title else _headline_part(title)
    return headings[0][1] if headings else ""
