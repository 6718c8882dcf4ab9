"""A page's comment thread, as a text of its own beside the article's.

Two readers find the thread, and their regions are joined:

- NCE's comment detection (`newscrawl.extractors.nce`, its step 1b): below the
  separator node, a run of short blocks of repeated pattern, dated, after enough body text, is
  where comments start; the comments are that run's container from there on;
- the site template's comment slots: elements whose class or id names a comment thread
  (``comments``, ``comment-list``, ``commentlist``, ``replies``, ``discussion``...), the slots the
  site pass finds on every page of a site (`newscrawl.site.page_choice.slot_name`).

Text the extractor selected is never a comment (`page_comments` leaves it out), so the two
fields never share a line; forms (the reply box) are left out too.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from itertools import compress

from newscrawl.html.dom import Dom

__all__ = ["comment_pieces", "page_comments", "thread_text"]

# A class or id token that names a comment thread, or one comment of it.
_THREAD = re.compile(
    r"^(?:comments?|comment[-_]?(?:list|thread|section|area|body|text|content|wrap(?:per)?)?"
    r"|commentlist|replies|discussion|disqus[-_]?thread|user[-_]?comments?)$",
    re.IGNORECASE,
)
_TOKENS = re.compile(r"[\s]+")
# What every value holding such a token holds somewhere.
_HINTS = ("comment", "repl", "discussion", "disqus")
# A thread region with less text than this is a "3 comments" link or an empty box.
_MIN_CHARS = 40


def _hinted(value: str) -> bool:
    """Whether a class or id value may hold a thread's name (substring searches, in C)."""
    lowered = value.lower()
    return any(hint in lowered for hint in _HINTS)


def _named_threads(dom: Dom) -> list[int]:
    """Outermost nodes of the body whose class or id names a comment thread."""
    found: list[int] = []
    covered = -1
    body = dom.body
    nodes = list(compress(range(len(dom)), dom.has_attributes))
    values = dom.attribute_values(nodes, ("class", "id"))
    # one search over every value (in C) rules out most pages
    if not _hinted("\n".join(v for pair in values if pair for v in pair if v)):
        return found
    for node, pair in zip(nodes, values, strict=True):
        if node < covered or node <= body or pair is None or not dom.is_ancestor(body, node):
            continue
        if not any(value and _hinted(value) for value in pair):
            continue
        tokens = [t for value in pair if value for t in _TOKENS.split(value) if t]
        if any(_THREAD.match(token) for token in tokens) and dom.text_len(node) >= _MIN_CHARS:
            found.append(node)
            covered = dom.end[node]
    return found


def _nce_thread(dom: Dom) -> list[int]:
    """The pieces NCE's comment detection reads as comments (none when it finds no thread):
    what a default NCE run on the page found (the learned extractor runs one as a seed), else
    found now."""
    from newscrawl.extractors.nce import (
        NCEConfig,
        children_forest,
        comment_thread,
        find_comment_cut,
        for_script,
        found_thread,
        select_separator,
    )

    found = found_thread(dom)
    if found is None:
        cfg = for_script(dom, NCEConfig())
        separator = select_separator(dom, cfg)
        if separator is None:
            return []
        items = children_forest(dom, separator, cfg)
        found = (comment_thread(dom, find_comment_cut(dom, items, cfg)),)
    thread = found[0]
    return list(range(*thread)) if thread is not None else []


def comment_pieces(dom: Dom, selected: Iterable[int] = ()) -> list[int]:
    """The text pieces of the page's comment thread, in document order, without `selected`
    (the extractor's pieces) and without the text of forms."""
    if not dom.piece_text:
        return []
    found: set[int] = set()
    for node in _named_threads(dom):
        found.update(range(dom.piece_start[node], dom.piece_end[node]))
    with contextlib.suppress(Exception):  # a detection bug costs the NCE thread, not the page
        found.update(_nce_thread(dom))
    if not found:
        return []
    found.difference_update(selected)
    for form in dom.nodes_of("form"):
        found.difference_update(range(dom.piece_start[form], dom.piece_end[form]))
    return sorted(found)


def page_comments(dom: Dom, selected: Iterable[int] = ()) -> str:
    """The text of the page's comment thread (`comment_pieces`), one line per block; "" when
    the page has none."""
    pieces = comment_pieces(dom, selected)
    return thread_text(dom.pieces_text(pieces) if pieces else "")


def thread_text(text: str) -> str:
    """The joined text of a thread's pieces as the `comments` field holds it: "" when it is
    too short to be a thread (a "3 comments" link, an empty box)."""
    return text if len(text.strip()) >= _MIN_CHARS else ""
