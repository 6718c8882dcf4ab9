"""What the site pass keeps of one page while its `Dom` is at hand: the slot of each text block
(`slot_name`, `SiteSlots`) and the page's `PageChoice` (the pieces the extractor chose, the
pieces left out of the slots it chose, its title slots and comment thread). The decisions over
the site's pages are `newscrawl.site.slot_cut`'s.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from hashlib import blake2b

import numpy as np

from newscrawl.extractors.comments import comment_pieces
from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.markdown import MarkdownOptions, piece_marks
from newscrawl.extractors.markdown_render import Mark
from newscrawl.extractors.selection import chosen_pieces
from newscrawl.html.dom import Dom

__all__ = [
    "PageChoice",
    "SiteSlots",
    "chosen_thread",
    "page_choice",
    "slot_name",
    "spare_pieces",
]

_DIGIT = re.compile(r"\d")


def slot_name(element: object) -> tuple[str, str, str] | None:
    """(tag, classes, id) of an element that has a class or an id; None for one that has not.

    Class tokens and ids holding a digit are left out: they number posts, authors and
    categories (post-1234, author-7) and would make every page's slots its own.
    """
    get = getattr(element, "get", None)
    if get is None:
        return None
    tag = getattr(element, "tag", "")
    return _slot_name(tag if isinstance(tag, str) else "", get("class") or "", get("id") or "")


@lru_cache(maxsize=1 << 16)
def _slot_name(tag: str, classes: str, ident: str) -> tuple[str, str, str] | None:
    """`slot_name` of an element's tag, class and id values (cached: a site repeats them)."""
    classes = " ".join(sorted(c for c in classes.split() if not _DIGIT.search(c)))
    ident = ident.strip()
    if _DIGIT.search(ident):
        ident = ""
    if not classes and not ident:
        return None
    return (tag, classes, ident)


class SiteSlots:
    """Slot ids of one site: equal named-ancestor chains get equal ids on every page.

    An id is a 63-bit digest of the chain, not a counter: the pages of one site may be read by
    several processes (the crawl's site pass splits a large site over its workers), and each
    must give a chain the id the others give it."""

    def __init__(self) -> None:
        self._ids: dict[tuple[int, tuple[str, str, str]], int] = {}

    def _new_id(self, key: tuple[int, tuple[str, str, str]]) -> int:
        above, (tag, classes, ident) = key
        data = f"{above}\x00{tag}\x00{classes}\x00{ident}".encode("utf-8", "surrogatepass")
        digest = int.from_bytes(blake2b(data, digest_size=8).digest(), "little") >> 1
        self._ids[key] = found = digest or 1  # 0 is "no named ancestor"
        return found

    def of_nodes(self, dom: Dom) -> np.ndarray:
        """Slot id per node (0: <body> and everything outside it, or no named ancestor)."""
        if not len(dom):
            return np.zeros(0, dtype=np.int64)
        body = dom.body
        slots = [0] * len(dom)  # a list while filling: numpy's per-item access is slower
        parent, elements, ids = dom.parent, dom.elements, self._ids
        for node in range(body + 1, dom.end[body]):
            above = slots[parent[node]]
            element = elements[node]
            classes, ident = element.get("class"), element.get("id")
            name = None
            if classes or ident:
                name = _slot_name(element.tag, classes or "", ident or "")
            if name is None:
                slots[node] = above
            else:
                key = (above, name)
                found = ids.get(key)
                slots[node] = found if found is not None else self._new_id(key)
        return np.array(slots, dtype=np.int64)


@dataclass(slots=True)
class PageChoice:
    """What the site pass keeps of one page: the page-level extraction, the slots with text on
    the page, the slots holding its title, and the chosen text pieces (text, line number,
    glued to the piece before, slot, owner node, chosen node, ``<pre>``: its text is then as
    written) in document order."""

    extraction: Extraction
    present: frozenset[int] = frozenset()
    title_slots: frozenset[int] = frozenset()
    texts: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    glued: list[bool] = field(default_factory=list)
    index: list[int] = field(default_factory=list)  # piece number (gaps start a new line)
    slot: list[int] = field(default_factory=list)
    owner: list[int] = field(default_factory=list)
    root: list[int] = field(default_factory=list)  # the chosen node the piece lies in
    pre: list[int] = field(default_factory=list)  # the <pre> holding the piece (-1: none)
    # False for a piece the extractor left out, in a slot it chose on the page (`spare_pieces`)
    picked: list[bool] = field(default_factory=list)
    exact: bool = False  # the pieces re-join to the extraction's text: it may be cut
    # the pieces' Markdown marks and how to render them, when Markdown is asked for
    marks: list[Mark] | None = None
    markdown: MarkdownOptions | None = None
    # the page's comment thread as pieces (piece, text, line, glued, <pre>), kept when the
    # extractor chose some of it: what the `comments` field holds once the pass cut that text
    thread: list[tuple[int, str, int, bool, int]] = field(default_factory=list)

    @property
    def chosen(self) -> frozenset[int]:
        return frozenset(self.chosen_slots())

    def chosen_slots(self) -> list[int]:
        """The slot of each piece the extractor chose."""
        if not self.picked:
            return list(self.slot)
        return [slot for slot, picked in zip(self.slot, self.picked, strict=True) if picked]

    def slot_chars(self, picked: bool) -> Counter[int]:
        """Characters per slot of the pieces the extractor chose (`picked`), or of those it
        left out."""
        found: Counter[int] = Counter()
        flags = self.picked or [True] * len(self.slot)
        for slot, text, flag in zip(self.slot, self.texts, flags, strict=True):
            if flag is picked:
                found[slot] += len(text)
        return found


def _title_slots(dom: Dom, slots: np.ndarray, title: str) -> frozenset[int]:
    """Slots whose whole text on this page is the page's title."""
    wanted = _squeeze(title)
    if not wanted:
        return frozenset()
    body = dom.body
    parts: dict[int, list[str]] = {}
    for k in range(dom.piece_start[body], dom.piece_end[body]):
        parts.setdefault(int(slots[dom.piece_block[k]]), []).append(dom.piece_text[k])
    return frozenset(
        slot for slot, texts in parts.items() if slot and _squeeze(" ".join(texts)) == wanted
    )


def _squeeze(text: str) -> str:
    return " ".join(text.split())


def page_choice(
    dom: Dom,
    extraction: Extraction,
    site_slots: SiteSlots,
    markdown: MarkdownOptions | None = None,
) -> PageChoice:
    """The page's `PageChoice` (read while its `Dom` is at hand); `markdown`: also the marks
    a cut text's Markdown is rendered from (`newscrawl.extractors.markdown`), rendered with these
    options.

    The chosen pieces are those of the chosen blocks, else those of the chosen subtrees,
    whichever re-joins to exactly the extraction's text; when neither does, the page's slots
    still count for the site but its text is never cut (`exact` is False)."""
    if not len(dom):
        return PageChoice(extraction)
    slots = site_slots.of_nodes(dom)
    body = dom.body
    present = frozenset(
        int(slots[dom.piece_block[k]])
        for k in range(dom.piece_start[body], dom.piece_end[body])
        if dom.piece_text[k].strip()
    )
    title_slots = _title_slots(dom, slots, extraction.title)
    choice = PageChoice(extraction, present, title_slots)
    if not extraction.node_ids:
        choice.exact = not extraction.text
        return choice
    pairs, choice.exact = chosen_pieces(dom, extraction)
    if choice.exact:
        chosen = [k for k, _ in pairs]
        spare = spare_pieces(dom, slots, chosen)
        choice.thread = chosen_thread(dom, [*chosen, *spare])
        if spare:
            picked = dict.fromkeys(chosen, True) | dict.fromkeys(spare, False)
            roots = dict(pairs)
            pairs = [(k, roots.get(k, dom.piece_block[k])) for k in sorted(picked)]
            choice.picked = [picked[k] for k, _ in pairs]
    pre = dom.pre_pieces
    for k, root in pairs:
        box, text = pre.get(k, (-1, dom.piece_text[k]))
        choice.texts.append(text)
        choice.pre.append(box)
        choice.lines.append(dom.piece_line[k])
        choice.glued.append(dom.piece_glued[k])
        choice.index.append(k)
        choice.slot.append(int(slots[dom.piece_block[k]]))
        choice.owner.append(dom.piece_owner[k])
        choice.root.append(root)
    if markdown is not None and choice.exact:
        choice.marks = piece_marks(dom, choice.index, markdown.images, markdown.links)
        choice.markdown = markdown
    return choice


def spare_pieces(dom: Dom, slots: np.ndarray, chosen: Sequence[int]) -> list[int]:
    """The pieces the extraction left out in the named slots it chose pieces of, outside
    links: what a slot the extractor takes whole on the site's pages gets back
    (`SiteTemplate.whole`)."""
    if not chosen:
        return []
    wanted = {int(slots[dom.piece_block[k]]) for k in chosen} - {0}
    if not wanted:
        return []
    taken = set(chosen)
    block, in_link, text = dom.piece_block, dom.piece_in_link, dom.piece_text
    return [
        k
        for k in range(dom.piece_start[dom.body], dom.piece_end[dom.body])
        if k not in taken and not in_link[k] and int(slots[block[k]]) in wanted and text[k].strip()
    ]


def chosen_thread(dom: Dom, chosen: Sequence[int]) -> list[tuple[int, str, int, bool, int]]:
    """The pieces of the page's comment thread (`newscrawl.extractors.comments.comment_pieces`) as
    `PageChoice.thread` keeps them, when some of them are among `chosen` (the pieces the
    pass may keep or cut); else none (the page-level `comments` field stands whatever the
    pass does)."""

    region = comment_pieces(dom)
    if not region or not set(region).intersection(chosen):
        return []
    pre, text = dom.pre_pieces, dom.piece_text
    found = []
    for k in region:
        box, written = pre.get(k, (-1, text[k]))
        found.append((k, written, dom.piece_line[k], dom.piece_glued[k], box))
    return found
