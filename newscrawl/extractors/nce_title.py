"""NCE's stage 1c, the title search (see `newscrawl.extractors.nce`): the longest short text
before the content whose words mostly occur in the content, or the <title>'s headline part; and
the answer's text with that title as its first line."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from newscrawl.extractors.title import page_title, without_site_name
from newscrawl.html.dom import Dom
from newscrawl.html.unicode_scripts import CJK_AND_HANGUL

if TYPE_CHECKING:
    from newscrawl.extractors.nce import NCEConfig

__all__ = ["find_title", "headline_part", "lead_line", "title_candidates", "with_title"]

# Chinese, Japanese and Korean characters count one word each in the title bags.
_CJK = CJK_AND_HANGUL
_WORD = re.compile(rf"[^\W{_CJK}]+|[{_CJK}]")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Separators between the headline and the site's name in a <title>: spaced punctuation anywhere,
# and "_" or an unspaced dash next to CJK text (elsewhere "-" joins words: "all-clear").
_SITE_SEPARATOR = re.compile(
    rf"\s+(?:[|·•«»:/>~]|-{{1,2}}|–|—|::)\s+|\s*_\s*|(?<=[{_CJK}])[-|–—]|[-|–—](?=[{_CJK}])"
)


def with_title(title: str, text: str) -> str:
    """The text with the title as its first line, unless the text already opens with it.

    The thesis adds the title node to NCE's answer: the title is part of the news.
    """
    words = _WORD.findall(title.lower())
    if not words:
        return text
    opening = _WORD.findall(" ".join(text.split("\n", 3)[:3]).lower())
    if _contains(opening, words):
        return text
    return f"{title}\n{text}"


def _contains(words: list[str], part: list[str]) -> bool:
    """True when `part` occurs in `words` as a contiguous run."""
    size = len(part)
    return any(words[i : i + size] == part for i in range(len(words) - size + 1))


def _covered(words: list[str], bag: Counter[str], share: float) -> bool:
    """|bag(words) & bag| >= share * |bag(words)|."""
    common = sum((Counter(words) & bag).values())
    return common >= share * len(words)


def title_candidates(dom: Dom, first_piece: int, cfg: NCEConfig) -> Iterator[tuple[str, list[str]]]:
    """(text, lower-cased words) of the nodes before the content with a title-sized text.

    Nodes are visited in id order and every node whose text starts at or after the content's
    first piece is past it; wrappers whose only child has the same text are skipped, so each
    text is tokenised once and the pass stays linear.
    """
    for node in range(dom.body, len(dom)):
        start, end = dom.piece_start[node], dom.piece_end[node]
        if start >= first_piece:
            return
        if end > first_piece or start == end:
            continue
        kids = dom.children[node]
        if len(kids) == 1 and dom.piece_start[kids[0]] == start and dom.piece_end[kids[0]] == end:
            continue
        if dom.words(node) > 2 * cfg.title_max_words:
            continue
        if dom.link_chars(node) > cfg.title_max_link_density * dom.text_len(node):
            continue  # a menu entry or a breadcrumb, not a headline
        text = " ".join(dom.piece_text[start:end])
        words = _WORD.findall(text.lower())
        if cfg.alpha8 <= len(words) <= cfg.title_max_words:
            yield text, words


def headline_part(title: str) -> str:
    """The longest part of a <title> split at the separators sites put before their own name."""
    parts = [part.strip() for part in _SITE_SEPARATOR.split(title)]
    return max(parts, key=len) if parts else ""


def lead_line(dom: Dom, pieces: list[int]) -> str:
    """The first line of the content: its first pieces up to the first change of block."""
    block = dom.piece_block[pieces[0]]
    line = []
    for k, piece in enumerate(pieces):
        if dom.piece_block[piece] != block or piece != pieces[0] + k:
            break
        line.append(dom.piece_text[piece])
    return " ".join(line)


def find_title(dom: Dom, pieces: list[int], cfg: NCEConfig) -> str:
    """The title: the longest candidate before the content (the thesis's rule), with refinements,
    without the site's name where the page confirms its headline (`without_site_name`).

    Candidates are the <title> and the nodes before the content with `alpha8` to
    `title_max_words` words, at least `alpha9` of them found in the content, and a link density
    at most `title_max_link_density` (menus and breadcrumbs are links). The <title> stands in as
    its headline part, without the site name: whole, it would nearly always be the longest and
    the headline on the page would never win. The thesis notes that the title is reproduced in
    <title>; so a page candidate whose words are mostly (`title_echo_share`) in that headline
    part is preferred, and when there is none, so is a first content line that echoes it (the
    headline often opens the content itself, where the thesis does not look).
    """
    return without_site_name(dom, _title_search(dom, pieces, cfg))


def _title_search(dom: Dom, pieces: list[int], cfg: NCEConfig) -> str:
    bag: list[Counter[str]] = []

    def in_content(words: list[str]) -> bool:
        """At least alpha9 of `words` occur in the content (its bag is built on first use)."""
        if not bag:
            text = " ".join(dom.piece_text[k] for k in pieces)
            bag.append(Counter(_WORD.findall(text.lower())))
        return _covered(words, bag[0], cfg.alpha9)

    headline = headline_part(dom.title) if dom.title else page_title(dom)
    echo = Counter(_WORD.findall(headline.lower()))
    best = best_echo = ""
    for text, words in title_candidates(dom, pieces[0], cfg):
        if len(text) > len(best_echo) and echo and _covered(words, echo, cfg.title_echo_share):
            if in_content(words):
                best_echo = text
        elif len(text) > len(best) and in_content(words):
            best = text
    if best_echo:
        return best_echo
    lead = lead_line(dom, pieces)
    words = _WORD.findall(lead.lower())
    lead_fits = cfg.alpha8 <= len(words) <= cfg.title_max_words
    if echo and lead_fits and _covered(words, echo, cfg.title_echo_share):
        return lead
    if best and len(best) >= len(headline):
        return best  # the thesis's rule: the longest candidate; on a tie, the text on the page
    # A <title> that the content does not echo names the site; a heading opening the content
    # is the better title then.
    heading = dom.tag[dom.piece_block[pieces[0]]] in _HEADINGS
    if lead_fits and heading and not in_content(_WORD.findall(headline.lower())):
        return lead
    return headline
