"""NCE - News Content Extractor (seed 000, ALGORITHMS.md section 1).

Three stages over one parsed `Dom`:

1a. *Separator node.* Walk the text leaves in document order; at a leaf with at least ``alpha0``
    characters climb its ancestors (SelectAncestor) and stop at the first ``t`` that is not a
    ``<p>``, holds at least ``alpha1`` characters, whose parent would only add link-heavy text, and
    which has at most one text-rich sibling. The answer is F(t, tr): the children of ``t`` whose
    link density is at most ``tr``.
1b. *Comment removal.* Short text blocks (``alpha4``..``alpha5`` characters) of that forest are
    linked when they are near each other and share a long common subsequence; the first group of
    three or more marks the start of a comment region, which is cut off with all that follows.
1c. *Title search.* Among the nodes before the content, the longest short text most of whose words
    occur in the content (or the ``<title>``) is the title.

Everything is one pass over the node and text-piece arrays of `Dom` (subtree measures are O(1)
there), with explicit stacks instead of recursion, so pages nested thousands of levels deep are
fine. The only super-linear part is the LCS comparison of the comment stage, bounded by
``alpha6`` comparisons per short block.

Content is handled as a list of *items* in document order: an element id (its whole subtree) or a
text piece owned directly by an element. The seed's DOM counts text nodes as children, so a text
run sitting directly in ``t`` is one of the trees of F(t, tr); items let us keep it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass, replace
from itertools import accumulate
from collections.abc import Callable, Iterator
from typing import ClassVar, Literal

from rapidfuzz.distance import LCSseq

from newscrawl.dom import Dom
from newscrawl.extractors.base import Extraction
from newscrawl.title import page_title

__all__ = ["NCE", "NCEConfig"]

# Words for the bags of the title stage. Chinese, Japanese and Korean text has no spaces, so each
# of its characters counts as a word there; elsewhere a word is a run of \w.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Separators between the headline and the site's name in a <title>: spaced punctuation anywhere,
# and "_" or an unspaced dash next to CJK text (where "-" does not join words).
_SITE_SEPARATOR = re.compile(
    rf"\s+(?:[|·•«»:/>~]|-{{1,2}}|–|—|::)\s+|\s*_\s*|(?<=[{_CJK}])[-|–—]|[-|–—](?=[{_CJK}])"
)


@dataclass(frozen=True, slots=True)
class NCEConfig:
    """NCE parameters; defaults are the seed's table 3.1 unless noted.

    Readings taken where the seed contradicts itself (see ALGORITHMS.md, section 1):

    - Condition 3 uses ``alpha2`` as the minimum link density and ``alpha3`` as the minimum
      characters of the region ``parent(T_t) - T_t`` (set difference), as the rule's text says;
      the table's labels for the two are swapped.
    - Condition 4 cannot use ``alpha2``/``alpha3`` as the seed writes (a link density below 0
      never happens, which would make the condition void), so it has its own thresholds:
      a sibling is text-rich when it holds more than ``sibling_min_chars`` characters with a
      link density below ``sibling_max_link_density``.
    - ``alpha8`` is a lower bound on the words of a title candidate (the table) and
      ``title_max_words`` the upper bound the rule needs (a title of at most 4 words is rare).
    - ``leaf`` says what a "text leaf" is: ``"piece"`` is the seed's literal DOM text node (one
      run of text between tags); ``"block"`` (default) is a rendered paragraph, i.e. all text
      runs of one block element, so inline markup (a link, a bold word) inside a long paragraph
      does not hide it. A leaf must also have a link density at most ``leaf_max_link_density``.
    - When SelectAncestor finds nothing for a leaf, the walk goes on to the next leaf ("if no
      node in the tree satisfies these conditions the whole tree is the answer").
    """

    alpha0: int = 200  # minimum characters of the text leaf that starts SelectAncestor
    alpha1: int = 600  # minimum characters of the separator subtree
    alpha2: float = 0.1  # minimum link density of the region climbing would add
    alpha3: int = 0  # minimum characters of that region
    sibling_min_chars: int = 200  # condition 4: a sibling with more characters than this ...
    sibling_max_link_density: float = 0.4  # ... and a link density below this is text-rich
    alpha4: int = 30  # minimum characters of a comment-graph block
    alpha5: int = 120  # maximum characters of a comment-graph block
    alpha6: int = 5  # at most this many blocks between two linked blocks
    alpha7: float = 0.8  # minimum LCS / shorter text for two linked blocks
    alpha8: int = 4  # minimum words of a title candidate
    title_max_words: int = 40  # maximum words of a title candidate
    alpha9: float = 0.7  # minimum share of a candidate's words found in the content
    title_max_link_density: float = 0.5
    title_echo_share: float = 0.8
    title_in_text: bool = True
    tr: float = 0.4  # maximum link density of a kept child of the separator
    leaf: Literal["block", "piece"] = "block"
    leaf_max_link_density: float = 0.5
    alpha1_measure: Literal["subtree", "non_link", "forest"] = "forest"
    short_leaves: bool = True
    fallback: Literal["tree", "filtered", "empty"] = "tree"
    cjk_char_weight: float = 3.0
    min_comment_cluster: int = 3  # nodes of the first connected component that marks comments
    lcs_norm: Literal["min", "max"] = "max"
    lcs_min_length_ratio: float = 0.0
    min_body_chars: int = 600  # characters that must precede a comment cut (seed: none)


class NCE:
    """News Content Extractor: separator node, comment removal, title search."""

    name: ClassVar[str] = "nce"
    Config: ClassVar[type[NCEConfig]] = NCEConfig

    def __init__(self, config: NCEConfig | None = None) -> None:
        self.config = config or NCEConfig()

    def extract(self, dom: Dom) -> Extraction:
        if not dom.piece_text:
            return Extraction.empty(self.name, title=page_title(dom))
        cfg = for_script(dom, self.config)
        separator = select_separator(dom, cfg)
        if separator is not None:
            items = children_forest(dom, separator, cfg.tr)
        elif cfg.fallback == "tree":
            items = [dom.body]
        elif cfg.fallback == "filtered":
            items = children_forest(dom, dom.body, cfg.tr)
        else:
            return Extraction.empty(self.name, title=page_title(dom))
        items = remove_comments(dom, items, cfg)
        pieces = item_pieces(dom, items)
        if not pieces:
            return Extraction.empty(self.name, title=page_title(dom))
        title = find_title(dom, pieces, cfg)
        node_ids = tuple(i for i in items if i >= 0)
        if separator is not None and items == children_items(dom, separator):
            node_ids = (separator,)  # nothing was dropped: the separator's subtree is the answer
        text = dom.pieces_text(pieces)
        if cfg.title_in_text:
            text = with_title(title, text)
        return Extraction(title, text, node_ids, self.name)


def for_script(dom: Dom, cfg: NCEConfig) -> NCEConfig:
    """The config with its character thresholds scaled to the page's script.

    The seed's thresholds count characters of Portuguese text. A Chinese, Japanese or Korean
    character carries about a word, so on a page whose text is a share s of such characters
    every character threshold is divided by 1 + (cjk_char_weight - 1) * s.
    """
    if cfg.cjk_char_weight == 1:
        return cfg
    text = "".join(dom.piece_text)
    cjk = len(text) - len(_CJK_CHAR.sub("", text))
    if not cjk:
        return cfg
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


def with_title(title: str, text: str) -> str:
    """The text with the title as its first line, unless the text already opens with it.

    The seed adds the title node to NCE's answer: the title is part of the news.
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


# -- items: element subtrees (id >= 0) and text pieces owned directly by an element (~piece) ------


def children_items(dom: Dom, node: int) -> list[int]:
    """The children of `node` as the seed's DOM has them: elements and direct text runs, in order."""
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
    # Only text outside links counts towards alpha0: in the seed's DOM every link holds its own
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
    """The separator node t of the first leaf whose ancestors hold one, or None.

    Leaves of at least `alpha0` characters are tried in document order, as the seed does. Pages
    whose paragraphs are all shorter (terse wire copy, CJK text, where 200 characters is a long
    paragraph) would fall back to the whole page, so when `short_leaves` is set the remaining
    leaves of at least `alpha4` characters are tried next, longest first.

    The four conditions depend on t alone, not on the leaf, so an ancestor that failed for one
    leaf fails for every later one: climbs stop at the first node already judged, which keeps the
    whole search linear in the number of nodes (plus one sort of the short leaves).
    """
    leaves = text_leaves(dom, cfg)
    order = [node for node, size in leaves if size >= cfg.alpha0]
    if cfg.short_leaves:
        rest = [(size, -i) for i, (_, size) in enumerate(leaves) if cfg.alpha4 <= size < cfg.alpha0]
        order.extend(leaves[-i][0] for _, i in sorted(rest, reverse=True))
    judged = bytearray(len(dom))
    rich = _TextRichSiblings(dom, cfg)
    for start in order:
        node = start
        while node >= 0 and not judged[node]:
            judged[node] = 1
            if is_separator(dom, node, cfg, rich):
                return node
            node = dom.parent[node]
    return None


def is_separator(dom: Dom, node: int, cfg: NCEConfig, rich: _TextRichSiblings) -> bool:
    """SelectAncestor's four conditions, cheapest first."""
    if dom.tag[node] == "p":  # 1. not a paragraph
        return False
    if forest_chars(dom, node, cfg) < cfg.alpha1:  # 2. big enough to be the news body
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
    # 4. content is not spread over several text-rich siblings.
    return rich.siblings(node) <= 1


def forest_chars(dom: Dom, node: int, cfg: NCEConfig) -> int:
    """Condition 2's measure of `node`: see `NCEConfig.alpha1_measure`."""
    if cfg.alpha1_measure == "subtree":
        return dom.text_len(node)
    if cfg.alpha1_measure == "non_link":
        return dom.text_len(node) - dom.link_chars(node)
    size = dom.own_text_len[node]
    for child in dom.children[node]:
        chars, links = dom.text_len(child), dom.link_chars(child)
        if links <= cfg.tr * chars:
            size += chars - links
    return size


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


def children_forest(dom: Dom, node: int, tr: float) -> list[int]:
    """F(t, tr): the children of t (elements and direct text runs) with link density <= tr."""
    kept: list[int] = []
    for item in children_items(dom, node):
        if item >= 0:
            if dom.link_chars(item) <= tr * dom.text_len(item):
                kept.append(item)
        elif not dom.piece_in_link[~item] or tr >= 1:
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
    nodes and its cut leaves at least `min_body_chars` of content before it: comments follow the
    news body (hypothesis 2), so repeated blocks right at the start are a list in the body (or a
    headline echoed by the lead), not comments; the search then goes on.
    """
    texts = [_item_text(dom, item) for item in found]
    root = list(range(len(found)))
    members: list[list[int]] = [[i] for i in range(len(found))]

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
            if len(members[a]) < len(members[b]):
                a, b = b, a
            root[b] = a
            members[a].extend(members[b])
            if len(members[a]) >= cfg.min_comment_cluster:
                first, second = sorted(members[a])[:2]
                cut = _lca_child(dom, found[first], found[second])
                if body_chars(cut) >= cfg.min_body_chars:
                    return cut
    return None


def _similar(a: str, b: str, cfg: NCEConfig) -> bool:
    """LCS(a, b) >= alpha7 * min(|a|, |b|), for texts of comparable length."""
    short, long = sorted((len(a), len(b)))
    if short < cfg.lcs_min_length_ratio * long:
        return False
    needed = cfg.alpha7 * (short if cfg.lcs_norm == "min" else long)
    return LCSseq.similarity(a, b, score_cutoff=int(needed)) >= needed


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


def remove_comments(dom: Dom, items: list[int], cfg: NCEConfig) -> list[int]:
    """U': the forest with the comment region (and all after it) removed."""
    pieces = item_pieces(dom, items)
    chars = [0, *accumulate(len(dom.piece_text[k]) for k in pieces)]

    def body_chars(cut: int) -> int:
        """Characters of the forest before `cut` (pieces are in document order)."""
        first = dom.piece_start[cut] if cut >= 0 else ~cut
        return chars[bisect_left(pieces, first)]

    cut = comment_cut(dom, comment_candidates(dom, items, cfg), cfg, body_chars)
    return items if cut is None else cut_items(dom, items, cut)


# -- 1c. title -------------------------------------------------------------------------------------


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
    """The title: the longest candidate before the content (seed rule), with refinements.

    Candidates are the <title> and the nodes before the content with `alpha8` to
    `title_max_words` words, at least `alpha9` of them found in the content, and a link density
    at most `title_max_link_density` (menus and breadcrumbs are links). The <title> stands in as
    its headline part, without the site name: whole, it would nearly always be the longest and
    the headline on the page would never win. The seed notes that the title is reproduced in
    <title>; so a page candidate whose words are mostly (`title_echo_share`) in that headline
    part is preferred, and when there is none, so is a first content line that echoes it (the
    headline often opens the content itself, where the seed does not look).
    """
    content = Counter(_WORD.findall(" ".join(dom.piece_text[k] for k in pieces).lower()))
    headline = headline_part(dom.title) if dom.title else page_title(dom)
    echo = Counter(_WORD.findall(headline.lower()))
    best = best_echo = ""
    for text, words in title_candidates(dom, pieces[0], cfg):
        if len(text) > len(best_echo) and echo and _covered(words, echo, cfg.title_echo_share):
            if _covered(words, content, cfg.alpha9):
                best_echo = text
        elif len(text) > len(best) and _covered(words, content, cfg.alpha9):
            best = text
    if best_echo:
        return best_echo
    lead = lead_line(dom, pieces)
    words = _WORD.findall(lead.lower())
    lead_fits = cfg.alpha8 <= len(words) <= cfg.title_max_words
    if echo and lead_fits and _covered(words, echo, cfg.title_echo_share):
        return lead
    if best and len(best) >= len(headline):
        return best  # the seed's rule: the longest candidate; on a tie, the text on the page
    # A <title> that the content does not echo names the site; a heading opening the content
    # is the better title then.
    if lead_fits and dom.tag[dom.piece_block[pieces[0]]] in _HEADINGS:
        if not _covered(_WORD.findall(headline.lower()), content, cfg.alpha9):
            return lead
    return headline
    if lead_fits and dom.tag[dom.piece_block[pieces[0]]] in _HEADINGS:
        return lead
    return headline
