"""NCE - News Content Extractor (a PUC-Rio thesis chapter).

Three stages over one parsed `Dom`:

1a. *Separator node.* From the first text leaf with at least ``alpha0`` characters (DFS order),
    SelectAncestor climbs the ancestors and stops at the first ``t`` that (1) is not a ``<p>``,
    (2) holds at least ``alpha1`` characters, (3) whose parent would only add link-heavy text,
    and (4) which has at most one text-rich sibling. The answer is F(t, tr): the children of ``t``
    whose link density is at most ``tr``; with no such ``t``, the whole tree.
1b. *Comment removal.* The topmost blocks of that forest with ``alpha4``..``alpha5`` characters
    form a list L; two of them are linked when at most ``alpha6`` blocks lie between them and
    their LCS is long (``alpha7``). The first connected component of three marks the start of
    the comments: the child of LCA(n1, n2) holding n1 is dropped, and all that follows.
1c. *Title search.* Before the content, the longest short text whose words mostly occur in the
    content, or the ``<title>``, is the title; the thesis adds it to the answer.

Every choice taken where the thesis is ambiguous or where its literal reading fails on real pages is
a field of `NCEConfig`, documented there, with the thesis's reading one setting away.

Cost: linear in the number of nodes and text pieces (subtree measures are O(1) prefix-sum
differences in `Dom`; explicit stacks, no recursion, so pages nested thousands of levels deep are
fine), plus at most ``alpha6 + 1`` LCS comparisons per block of L.

Content is handled as a list of *items* in document order: an element id >= 0 (its whole
subtree) or ``~k`` for a text piece k sitting directly in an element. The thesis's DOM counts text
nodes as children, so text directly inside ``t`` (lines between ``<br>`` tags) is one of the trees
of F(t, tr); items keep it. `Extraction.node_ids` lists the element items (or ``t`` alone when
none of its children was dropped).
"""

from __future__ import annotations

import heapq
import re
import weakref
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import accumulate
from math import ceil
from typing import ClassVar, Literal

import numpy as np
from rapidfuzz.distance import LCSseq

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.nce_title import find_title, with_title
from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom
from newscrawl.html.tags import BLOCK_TAGS
from newscrawl.html.unicode_scripts import CJK_AND_HANGUL

__all__ = ["NCE", "NCEConfig"]

# Chinese, Japanese and Korean text: each of its characters counts as a word in the title
# stage's bags, and character thresholds are scaled on pages written in it.
_CJK = CJK_AND_HANGUL
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_FIRST_CJK = min(ord(c) for c in _CJK if c != "-")  # the lowest code point of the ranges
# A date or a time of day, in digits: a year, hh:mm, or d.m.y / d-m-y / d/m/y.
_DATE = re.compile(r"(?<!\d)(?:(?:19|20)\d\d|\d{1,2}:\d\d|\d{1,2}[./-]\d{1,2}[./-]\d{2,4})(?!\d)")
_END = -(2**62)  # sentinel item closing the last run of `children_forest`


@dataclass(frozen=True, slots=True)
class NCEConfig:
    """NCE parameters. ``alpha0``..``alpha9`` and ``tr`` keep the thesis's table 3.1 values.

    Readings of the thesis where it contradicts itself:

    - Condition 3 takes ``alpha2`` as the minimum link density and ``alpha3`` as the minimum
      characters of the region ``parent(T_t) - T_t`` (set difference; the thesis says
      "intersection"), as the rule's own text says; the table's labels for the two are swapped.
    - Condition 4 cannot reuse ``alpha2``/``alpha3`` as written (a link density below 0 never
      occurs, which would void the rule), so it has its own thresholds: a sibling is text-rich
      with more than ``sibling_min_chars`` characters and a link density below
      ``sibling_max_link_density``. The defaults are ``alpha0`` and ``tr``: a sibling that could
      hold a long leaf and would pass the ``tr`` filter. F1 is flat around them.
    - ``alpha8`` is the lower bound on a title candidate's words (as the table says) and
      ``title_max_words`` the upper bound the rule needs (a title of at most 4 words is rare).

    Choices where the thesis leaves room, each measured (shingle F1 on the development datasets)
    and each undone by the value in brackets:

    - ``leaf``: what a "text leaf" is. ``"piece"`` is the thesis's literal DOM text node, one run of
      text between tags; ``"block"`` is a rendered paragraph, every run of one block element, so
      an inline link or bold word does not cut a long paragraph into short leaves. Only text
      outside links counts toward ``alpha0`` (in the thesis's DOM each link has its own text node,
      so a menu never makes one long leaf), and a leaf's link density is at most
      ``leaf_max_link_density`` [``"piece"``, 1.0].
    - ``inline_runs``: the ``tr`` filter judges a run of inline children and text between two
      block children of t as one tree (the line a reader sees), so the link inside a sentence
      written directly in t stays with its sentence [False: every ``<a>`` child of t has link
      density 1 and is dropped, leaving holes in the text].
    - ``alpha1_measure``: condition 2 counts the characters outside links of F(t, tr), the text
      NCE would actually return, so a link-heavy box never qualifies as the body ["subtree"].
    - ``retry_leaves``: when the first long leaf's ancestors hold no separator (it was a notice
      or a teaser) or no leaf reaches ``alpha0`` (wire copy in short paragraphs), SelectAncestor
      climbs again from the page's ``retry_leaves`` longest leaves of at least ``alpha4``
      characters before falling back to the whole tree [0].
    - ``fallback``: ``"tree"`` returns the whole tree when no separator exists, as the thesis does;
      ``"empty"`` returns nothing (a page without a news body).
    - ``cjk_char_weight``: the thesis's character thresholds were set on Portuguese text. A
      Chinese, Japanese or Korean character carries about a word, so on a page whose text is a
      share s of such characters every character threshold is divided by
      ``1 + (cjk_char_weight - 1) * s`` [1].
    - ``lcs_norm``: the comment graph's edge rule compares the LCS with ``alpha7`` times the
      *longer* text. With the thesis's shorter text (``"min"``) a short headline and the lead
      sentence that repeats its words are "similar", and so is any short line to a longer one;
      real comment headers have near-equal lengths, so ``"max"`` keeps them and drops those
      false pairs ["min"].
    - ``min_body_chars``: comments follow the news body (hypothesis 2), so a component whose cut
      would leave fewer characters before it is a list inside the body, not comments; the search
      goes on [0].
    - ``comment_dates``: hypothesis 2 names the repeated pattern, "such as date and author".
      Requiring n1 and n2 to hold a date or a time in digits (a year, hh:mm, d.m.y) tells a
      comment thread from a listing whose records repeat field labels (courses, jobs, products),
      which the undated rule cuts after its first record [False].
    - ``title_max_link_density``: a title candidate is not mostly link text (a menu entry, a
      breadcrumb) [1.0]. ``title_echo_share``: a candidate whose words are mostly in the
      <title>'s headline part is preferred, as is a first content line that echoes it (the
      seed notes that <title> reproduces the title) [above 1]. ``title_in_text``: the title
      opens the text unless the text already starts with it (the thesis adds the title node to
      the answer) [False].
    """

    alpha0: int = 200  # minimum characters of the text leaf that starts SelectAncestor
    alpha1: int = 600  # condition 2: minimum characters of the separator's content
    alpha2: float = 0.1  # condition 3: minimum link density of the region climbing would add
    alpha3: int = 0  # condition 3: minimum characters of that region
    sibling_min_chars: int = 200  # condition 4: a sibling with more characters than this ...
    sibling_max_link_density: float = 0.4  # ... and a link density below this is text-rich
    tr: float = 0.4  # maximum link density of a kept child of the separator
    inline_runs: bool = True
    alpha4: int = 30  # minimum characters of a block of the comment graph
    alpha5: int = 120  # maximum characters of a block of the comment graph
    alpha6: int = 5  # at most this many blocks of L between two linked blocks
    alpha7: float = 0.8  # minimum LCS over text length for two linked blocks
    alpha8: int = 4  # minimum words of a title candidate
    title_max_words: int = 40  # maximum words of a title candidate
    alpha9: float = 0.7  # minimum share of a candidate's words found in the content
    leaf: Literal["block", "piece"] = "block"
    leaf_max_link_density: float = 0.5
    alpha1_measure: Literal["forest", "subtree"] = "forest"
    retry_leaves: int = 2
    fallback: Literal["tree", "empty"] = "tree"
    cjk_char_weight: float = 3.0
    min_comment_cluster: int = 3  # nodes of the component that marks the comments
    lcs_norm: Literal["max", "min"] = "max"
    min_body_chars: int = 600  # characters that must precede a comment cut
    comment_dates: bool = True
    title_max_link_density: float = 0.5
    title_echo_share: float = 0.8
    title_in_text: bool = True


class NCE:
    """News Content Extractor: separator node, comment removal, title search."""

    name: ClassVar[str] = "nce"
    Config: ClassVar[type[NCEConfig]] = NCEConfig

    def __init__(self, config: NCEConfig | None = None) -> None:
        self.config = config or NCEConfig()

    def extract(self, dom: Dom) -> Extraction:
        found = self._selection(dom)
        if found is None:
            return Extraction.empty(self.name, title=page_title(dom))
        cfg, node_ids, pieces = found
        title = find_title(dom, pieces, cfg)
        text = dom.pieces_text(pieces)
        if cfg.title_in_text:
            text = with_title(title, text)
        return Extraction(title, text, node_ids, self.name, tuple(pieces))

    def select(self, dom: Dom) -> tuple[int, ...]:
        """The `node_ids` of `extract`, without its title search and text (what a reader of
        the selection alone, the learned extractor's features, needs)."""
        found = self._selection(dom)
        return found[1] if found is not None else ()

    def _selection(self, dom: Dom) -> tuple[NCEConfig, tuple[int, ...], list[int]] | None:
        """The page's config, selected node ids and text pieces; None when nothing is."""
        if not dom.piece_text:
            return None
        cfg = for_script(dom, self.config)
        separator = select_separator(dom, cfg)
        if separator is not None:
            items = children_forest(dom, separator, cfg)
        elif cfg.fallback == "tree":
            items = [dom.body]
        else:
            return None
        cut = find_comment_cut(dom, items, cfg)
        if self.config == _DEFAULT_CONFIG:  # what `newscrawl.extractors.comments` reads
            _THREADS[dom] = comment_thread(dom, cut)
        items = items if cut is None else cut_items(dom, items, cut)
        pieces = item_pieces(dom, items)
        if not pieces:
            return None
        node_ids = tuple(item for item in items if item >= 0)
        if separator is not None and items == children_items(dom, separator):
            node_ids = (separator,)  # nothing was dropped: the separator's subtree is the answer
        return cfg, node_ids, pieces


def _highest_code(text: str) -> int:
    return int(np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).max())


def for_script(dom: Dom, cfg: NCEConfig) -> NCEConfig:
    """The config with its character thresholds scaled to the page's script.

    See `NCEConfig.cjk_char_weight`. Counting CJK characters costs one regex pass over the text,
    skipped at the first search when the page has none.
    """
    if cfg.cjk_char_weight == 1:
        return cfg
    text = "".join(dom.piece_text)
    # no code point at or past the first CJK range: no CJK character (one C-speed pass, where
    # the pattern's search walks the text in Python's regex engine)
    if text.isascii() or _highest_code(text) < _FIRST_CJK or not _CJK_CHAR.search(text):
        return cfg
    cjk = len(text) - len(_CJK_CHAR.sub("", text))
    scale = 1 + (cfg.cjk_char_weight - 1) * cjk / len(text)
    return replace(
        cfg,
        alpha0=round(cfg.alpha0 / scale),
        alpha1=round(cfg.alpha1 / scale),
        alpha3=round(cfg.alpha3 / scale),
        alpha4=round(cfg.alpha4 / scale),
        alpha5=round(cfg.alpha5 / scale),
        sibling_min_chars=round(cfg.sibling_min_chars / scale),
        min_body_chars=round(cfg.min_body_chars / scale),
        cjk_char_weight=1,
    )


# -- items: element subtrees (id >= 0) and text pieces owned directly by an element (~piece) ------


def children_items(dom: Dom, node: int) -> list[int]:
    """The children of `node` as the thesis's DOM has them: elements and text runs, in order."""
    if not dom.own_text_len[node]:
        return list(dom.children[node])  # no text of its own: just the elements
    items: list[int] = []
    cursor = dom.piece_start[node]
    for child in dom.children[node]:
        items.extend(~k for k in range(cursor, dom.piece_start[child]))
        items.append(child)
        cursor = dom.piece_end[child]
    items.extend(~k for k in range(cursor, dom.piece_end[node]))
    return items


def item_pieces(dom: Dom, items: list[int]) -> list[int]:
    """Text piece ids of the items, in document order."""
    pieces: list[int] = []
    for item in items:
        if item >= 0:
            pieces.extend(range(dom.piece_start[item], dom.piece_end[item]))
        else:
            pieces.append(~item)
    return pieces


def _item_len(dom: Dom, item: int) -> int:
    return dom.text_len(item) if item >= 0 else len(dom.piece_text[~item])


def _item_text(dom: Dom, item: int) -> str:
    if item < 0:
        return dom.piece_text[~item]
    return " ".join(dom.piece_text[dom.piece_start[item] : dom.piece_end[item]])


def _item_link_chars(dom: Dom, item: int) -> int:
    if item >= 0:
        return dom.link_chars(item)
    return len(dom.piece_text[~item]) if dom.piece_in_link[~item] else 0


def _item_parent(dom: Dom, item: int) -> int:
    return dom.parent[item] if item >= 0 else dom.piece_owner[~item]


# -- 1a. separator node --------------------------------------------------------------------------


def text_leaves(dom: Dom, cfg: NCEConfig) -> list[tuple[int, int]]:
    """(start node, characters) of every text leaf with a low link density, in document order."""
    texts = dom.piece_text
    if cfg.leaf == "piece":
        return [
            (dom.piece_owner[k], len(text))
            for k, text in enumerate(texts)
            if cfg.leaf_max_link_density >= 1 or not dom.piece_in_link[k]
        ]
    # Only text outside links counts towards alpha0: in the thesis's DOM every link holds its own
    # text node, so a menu never makes one long leaf, but a block of many links does here.
    chars: dict[int, int] = {}  # block id -> characters outside links, in order of appearance
    links: dict[int, int] = {}
    for k, block in enumerate(dom.piece_block):
        size = len(texts[k])
        if dom.piece_in_link[k]:
            links[block] = links.get(block, 0) + size
            chars.setdefault(block, 0)
        else:
            chars[block] = chars.get(block, 0) + size
    density = cfg.leaf_max_link_density
    # A <br> "block" is the text after a line break: its subtree lies in the <br>'s parent.
    return [
        (dom.parent[block] if dom.tag[block] == "br" else block, size)
        for block, size in chars.items()
        if size and links.get(block, 0) <= density * (size + links.get(block, 0))
    ]


def select_separator(dom: Dom, cfg: NCEConfig) -> int | None:
    """The separator node t, or None: SelectAncestor from the first long leaf, then the longest.

    The thesis climbs from the first leaf of at least `alpha0` characters in document order; see
    `NCEConfig.retry_leaves` for the further climbs. The four conditions depend on t alone, not
    on the leaf, so a later climb stops at the first node an earlier one judged: every node is
    judged at most once.
    """
    leaves = text_leaves(dom, cfg)
    starts = [next((node for node, size in leaves if size >= cfg.alpha0), -1)]
    if cfg.retry_leaves:
        longest = heapq.nlargest(cfg.retry_leaves, leaves, key=lambda leaf: leaf[1])
        starts.extend(node for node, size in longest if size >= cfg.alpha4)
    judged = bytearray(len(dom))
    rich = _TextRichSiblings(dom, cfg)
    for node in starts:
        while node >= 0 and not judged[node]:
            judged[node] = 1
            if is_separator(dom, node, cfg, rich):
                return node
            node = dom.parent[node]
    return None


def is_separator(dom: Dom, node: int, cfg: NCEConfig, rich: _TextRichSiblings) -> bool:
    """SelectAncestor's four conditions, the O(1) tests first."""
    if dom.tag[node] == "p":  # 1. not a paragraph
        return False
    # 2, first an O(1) upper bound of the measure: the text of T_t (outside links for "forest").
    links = dom.link_chars(node) if cfg.alpha1_measure == "forest" else 0
    if dom.text_len(node) - links < cfg.alpha1:
        return False
    parent = dom.parent[node]
    if parent < 0:  # the root: climbing would add nothing, so condition 3 cannot hold
        return False
    # 3. what parent(t) adds beyond T_t is link-heavy noise, so stop climbing here.
    added = dom.text_len(parent) - dom.text_len(node)
    added_links = dom.link_chars(parent) - dom.link_chars(node)
    density = added_links / added if added else 0.0
    if density < cfg.alpha2 or added < cfg.alpha3:
        return False
    if forest_chars(dom, node, cfg) < cfg.alpha1:  # 2. big enough to be the news body
        return False
    # 4. content is not spread over several text-rich siblings.
    return rich.siblings(node) <= 1


def forest_chars(dom: Dom, node: int, cfg: NCEConfig) -> int:
    """Condition 2's measure of `node`: see `NCEConfig.alpha1_measure`."""
    if cfg.alpha1_measure == "subtree":
        return dom.text_len(node)
    return sum(
        _item_len(dom, item) - _item_link_chars(dom, item)
        for item in children_forest(dom, node, cfg)
    )


class _TextRichSiblings:
    """Condition 4's count of text-rich siblings, computed once per parent."""

    def __init__(self, dom: Dom, cfg: NCEConfig) -> None:
        self.dom = dom
        self.min_chars = cfg.sibling_min_chars
        self.max_density = cfg.sibling_max_link_density
        self.counts: dict[int, int] = {}

    def is_rich(self, node: int) -> bool:
        chars = self.dom.text_len(node)
        return chars > self.min_chars and self.dom.link_chars(node) < self.max_density * chars

    def siblings(self, node: int) -> int:
        parent = self.dom.parent[node]
        count = self.counts.get(parent)
        if count is None:
            count = sum(map(self.is_rich, self.dom.children[parent]))
            self.counts[parent] = count
        return count - self.is_rich(node)


def children_forest(dom: Dom, node: int, cfg: NCEConfig) -> list[int]:
    """F(t, tr): the children of t whose link density is at most tr.

    With `inline_runs`, a run of inline children and text between two block children is judged
    as one tree, the line a reader sees (CSS calls it an anonymous block): a link inside a
    sentence written directly in t is then kept with its sentence, not dropped for being a link.
    """
    kept: list[int] = []
    run: list[int] = []
    chars = links = 0
    for item in [*children_items(dom, node), _END]:
        if cfg.inline_runs and item != _END and (item < 0 or dom.tag[item] not in BLOCK_TAGS):
            size, linked = _item_len(dom, item), _item_link_chars(dom, item)
            run.append(item)
            chars, links = chars + size, links + linked
            continue
        if run and links <= cfg.tr * chars:
            kept.extend(run)
        run, chars, links = [], 0, 0
        if item != _END and _item_link_chars(dom, item) <= cfg.tr * _item_len(dom, item):
            kept.append(item)
    return kept


# -- 1b. comment removal -------------------------------------------------------------------------


def comment_candidates(dom: Dom, items: list[int], cfg: NCEConfig) -> list[int]:
    """L: the topmost items of the forest whose text length is within [alpha4, alpha5]."""
    found: list[int] = []
    stack = list(reversed(items))
    while stack:
        item = stack.pop()
        size = _item_len(dom, item)
        if cfg.alpha4 <= size <= cfg.alpha5:
            found.append(item)
        elif size > cfg.alpha5 and item >= 0:
            stack.extend(reversed(children_items(dom, item)))
    return found


def comment_cut(
    dom: Dom, found: list[int], cfg: NCEConfig, body_chars: Callable[[int], int]
) -> int | None:
    """The item where comments start: below LCA(n1, n2) of the first qualifying component of G.

    G is built node by node in L order. A component qualifies once it has `min_comment_cluster`
    nodes, its cut leaves at least `min_body_chars` of content before it and (with
    `comment_dates`) n1 and n2 carry a date; otherwise the search goes on.
    """
    texts = [_item_text(dom, item) for item in found]
    root = list(range(len(found)))
    size = [1] * len(found)
    # The first two members of each component (in L order) and whether that pair was rejected.
    firsts: list[tuple[int, ...]] = [(i,) for i in range(len(found))]
    rejected: set[tuple[int, ...]] = set()

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    for j in range(len(found)):
        for i in range(max(0, j - cfg.alpha6 - 1), j):
            a, b = find(i), find(j)
            if a == b or not _similar(texts[i], texts[j], cfg):
                continue
            if size[a] < size[b]:
                a, b = b, a
            root[b] = a
            size[a] += size[b]
            pair = firsts[a] = tuple(sorted(firsts[a] + firsts[b])[:2])
            if size[a] < cfg.min_comment_cluster or pair in rejected:
                continue
            first, second = pair
            cut = _lca_child(dom, found[first], found[second])
            dated = not cfg.comment_dates or all(_DATE.search(texts[k]) for k in pair)
            if body_chars(cut) >= cfg.min_body_chars and dated:
                return cut
            rejected.add(pair)
    return None


def _similar(a: str, b: str, cfg: NCEConfig) -> bool:
    """LCS(a, b) >= alpha7 * min(|a|, |b|), for texts of comparable length."""
    short, long = (len(a), len(b)) if len(a) <= len(b) else (len(b), len(a))
    needed = cfg.alpha7 * (short if cfg.lcs_norm == "min" else long)
    if short < needed:  # the LCS is never longer than the shorter text
        return False
    return LCSseq.similarity(a, b, score_cutoff=ceil(needed)) >= needed


def _lca_child(dom: Dom, n1: int, n2: int) -> int:
    """The item on the path from n1 up to LCA(n1, n2) that is a child of that ancestor."""
    below, node = n1, _item_parent(dom, n1)
    target = n2 if n2 >= 0 else dom.piece_owner[~n2]
    while node >= 0 and not dom.is_ancestor(node, target):
        below, node = node, dom.parent[node]
    return below


def cut_items(dom: Dom, items: list[int], cut: int) -> list[int]:
    """The items that precede `cut` (an element or piece item) in document order.

    An item that contains the cut is opened up into its children, level by level, so the text
    before the cut inside it is kept.
    """
    if cut >= 0:
        cut_node, cut_piece = cut, dom.piece_start[cut]
    else:
        cut_piece = ~cut
        owner = dom.piece_owner[cut_piece]
        later = [c for c in dom.children[owner] if dom.piece_start[c] > cut_piece]
        cut_node = later[0] if later else dom.end[owner]
    kept: list[int] = []
    stack = list(reversed(items))
    while stack:
        item = stack.pop()
        if item < 0:
            if ~item < cut_piece:
                kept.append(item)
            continue
        if dom.end[item] <= cut_node:
            kept.append(item)
        elif item < cut_node:  # an ancestor of the cut
            stack.extend(reversed(children_items(dom, item)))
        else:
            break
    return kept


# The comment thread NCE's default config found on a page, by its Dom, while the page is alive:
# the piece where comments start and the end of their container (None: no thread), so that
# `newscrawl.extractors.comments` reads what an NCE run (the learned extractor's seed) already
# found.
_THREADS: weakref.WeakKeyDictionary[Dom, tuple[int, int] | None] = weakref.WeakKeyDictionary()
_DEFAULT_CONFIG = NCEConfig()


def comment_thread(dom: Dom, cut: int | None) -> tuple[int, int] | None:
    """The pieces [start, stop) of the comments from `cut` (`comment_cut`) on, to the end of
    the element holding them; None for no cut."""
    if cut is None:
        return None
    holder = _item_parent(dom, cut)
    start = dom.piece_start[cut] if cut >= 0 else ~cut
    return (start, dom.piece_end[holder]) if holder >= 0 else None


def found_thread(dom: Dom) -> tuple[tuple[int, int] | None] | None:
    """What a default NCE run on `dom` found as its comment thread, in a 1-tuple (None: no
    such run yet)."""
    if dom not in _THREADS:
        return None
    return (_THREADS[dom],)


def remove_comments(dom: Dom, items: list[int], cfg: NCEConfig) -> list[int]:
    """U': the forest with the comment region (and all after it) removed."""
    cut = find_comment_cut(dom, items, cfg)
    return items if cut is None else cut_items(dom, items, cut)


def find_comment_cut(dom: Dom, items: list[int], cfg: NCEConfig) -> int | None:
    """The item where the comments of the forest `items` start (`comment_cut`); None: none."""
    pieces = item_pieces(dom, items)
    chars = [0, *accumulate(len(dom.piece_text[k]) for k in pieces)]

    def body_chars(cut: int) -> int:
        """Characters of the forest before `cut` (pieces are in document order)."""
        first = dom.piece_start[cut] if cut >= 0 else ~cut
        return chars[bisect_left(pieces, first)]

    return comment_cut(dom, comment_candidates(dom, items, cfg), cfg, body_chars)
