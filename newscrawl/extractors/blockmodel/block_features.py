"""Features of each text block, for the learned extractor's classifier.

One row per block (see `blocks.py`), columns named in `FEATURES`. They extend the template
classifier's seven numbers (link density, anchor share, position, ...) with what the
boilerplate-detection literature found to matter (Kohlschütter's shallow text features, Web2Text's
tree context, Dragnet's class/id tokens):

* text statistics of the block: characters, words, sentences, punctuation, digits, capitals,
  the share of the page language's function words, link density;
* the block element: its tag, depth, and the text and link density of it, its parent and its
  grandparent (how much prose surrounds the block);
* class, id, role and itemprop of the block and its ancestors: keyword groups ("comment",
  "nav", "article body", ...), near (three levels) and anywhere above, plus hashed tokens;
  structural tags above it (<article>, <nav>, <footer>, <li>, ...); whether the markup hides
  it until the reader acts (a closed dialog or modal, an inline display:none);
* the tag path: how many blocks and what share of the page's text share it;
* position in the page and the page's size;
* the neighbouring blocks' size, link density and function-word share;
* whether each seed extractor (NCE, MSS, CETD-TPC) selected the block;
* similarity to the page's <title>.

Everything is computed from the one parsed `Dom`; no feature needs a rendered page.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from newscrawl.extractors.blockmodel.blocks import Blocks
from newscrawl.extractors.blockmodel.headline_features import (
    HEADLINE_COLUMNS,
    SUMMARY_COLUMNS,
    TITLE_COLUMNS,
    headline_columns,
    summary_columns,
    title_columns,
)
from newscrawl.extractors.blockmodel.textstats import (
    block_texts,
    mark_columns,
    text_columns,
)
from newscrawl.html.dom import Dom, elements_named
from newscrawl.site.site_template import SITE_FEATURES, TemplateHashes, site_columns

__all__ = [
    "FEATURES",
    "block_features",
    "block_groups",
]

# Keyword groups looked for in class, id, role and itemprop values.
_GROUPS: dict[str, str] = {
    "comment": r"comment|disqus|respon|reply|discuss",
    "nav": r"nav|menu|breadcrumb|paginat|pager|toolbar|skip",
    "footer": r"foot|copyright|legal|contentinfo|imprint",
    "header": r"header|masthead|topbar|logo|brand",
    "side": r"side|aside|rail|complementary|widget",
    "share": r"share|social|follow|facebook|twitter|whatsapp|print|mail",
    "related": r"related|recommend|more|trending|popular|teaser|promo|recirc|next|prev",
    "ad": r"(?:^|[\s_-])ads?(?:$|[\s_-])|advert|sponsor|banner|dfp|outbrain|taboola",
    "content": r"article|content|post|entry|story|main|body|text|prose|blog",
    "body": r"articlebody|article-?body|post-?body|entry-?content|story-?body|post-?content|"
    r"article-?content|article-?text|main-?content|rich-?text",
    "caption": r"caption|figure|credit|photo|image|gallery|media",
    "meta": r"author|byline|date|time|meta|publish|dateline|info|source",
    "title": r"title|headline|heading",
    "tags": r"tag|categor|topic|label|keyword",
    "overlay": r"subscri|newsletter|signup|login|register|cookie|consent|paywall|modal|popup",
    "hidden": r"hidden|sr-only|visually-hidden|screen-reader|offscreen",
    "product": r"product|price|review|rating|cart|descr|spec|detail",
    "forum": r"message|thread|forum|bbcode|quote|signature",
}
_GROUP_RES = [re.compile(p) for p in _GROUPS.values()]
_ANY_GROUP = re.compile("|".join(f"(?:{p})" for p in _GROUPS.values()))  # one search for none
# Structural tags whose presence above a block is a feature.
_TAG_BITS = (
    "article", "main", "nav", "header", "footer", "aside", "form", "li", "table", "blockquote",
    "figure", "a", "h1", "h2", "h3", "pre", "dl", "button", "label", "section",
)  # fmt: skip
_TAG_BIT = {tag: 1 << (len(_GROUPS) + i) for i, tag in enumerate(_TAG_BITS)}
# What the page's own markup hides until the reader acts: a dialog (a closed <dialog>, or an
# element with role dialog or aria-modal, such as a cookie or privacy-policy modal), and an
# inline style of display:none or visibility:hidden. The `hidden` attribute and aria-hidden
# are left out: on tabs and accordions they hide text gold keeps as often as not.
_HIDING = ("dialog", "styled_hidden")
_DIALOG_BIT = 1 << (len(_GROUPS) + len(_TAG_BITS))
_STYLED_HIDDEN_BIT = _DIALOG_BIT << 1
_DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
# A property name starts the declaration: `--my-display: none` is a custom property, not display.
_HIDING_STYLE = re.compile(
    r"(?<![\w-])(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.IGNORECASE
)
_BIT_NAMES = [*_GROUPS, *(f"tag_{t}" for t in _TAG_BITS), *_HIDING]
# One-hot tags of the block element.
_BLOCK_TAGS = (
    "p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "br", "dd", "dt", "pre",
    "blockquote", "section", "article", "span", "a", "figcaption", "header", "footer",
)  # fmt: skip
_PARENT_TAGS = ("div", "td", "li", "ul", "ol", "article", "section", "p", "body", "blockquote")
_BLOCK_INDEX = {tag: i for i, tag in enumerate(_BLOCK_TAGS)}
_PARENT_INDEX = {tag: i for i, tag in enumerate(_PARENT_TAGS)}
_HASH_BUCKETS = 32
_CLASS_TOKEN = re.compile(r"[a-z]+")
_NEIGHBOURS = (-2, -1, 1, 2)
_SEEDS = ("nce", "mss", "cetd-tpc")

_TEXT = [
    "chars_log", "words_log", "tokens_log", "sentences", "sentences_per_word", "punct_share",
    "digit_share", "upper_share", "mean_word_len", "ends_sentence", "starts_upper", "stop_share",
    "cjk_share", "link_density", "has_date", "bullets", "has_copyright", "pieces",
]  # fmt: skip
_TREE = [
    "depth", "depth_rel", "node_chars_log", "node_link_density", "node_children",
    "parent_chars_log", "parent_link_density", "parent_children", "parent_blocks_share",
    "grand_chars_log", "grand_link_density", "share_of_parent", "share_of_grand",
]  # fmt: skip
_PATH = ["path_blocks_log", "path_chars_share", "path_len"]
_POSITION = [
    "position_chars", "position_blocks", "page_chars_log", "page_blocks_log", "page_links_log",
    "page_link_density", "rank_share",
]  # fmt: skip
_NEIGHBOUR = [
    f"n{o:+d}_{name}" for o in _NEIGHBOURS for name in ("chars_log", "link_density", "stop_share")
]
# What kind of page this is, from its own markup: schema.org types (JSON-LD or microdata) and
# og:type, and how its blocks look as a whole. The same for every block of a page; they let
# the trees learn that a forum's posts or a product's description are its main text.
_SCHEMA_WORDS = {
    "article": "article newsarticle blogposting reportagenewsarticle analysisnewsarticle "
    "opinionnewsarticle scholarlyarticle liveblogposting report",
    "forum": "discussionforumposting comment qapage question answer socialmediaposting",
    "product": "product offer aggregateoffer productgroup individualproduct",
    "listing": "itemlist collectionpage searchresultspage offercatalog",
    "docs": "techarticle faqpage howto softwareapplication apireference",
}
_SCHEMA_KINDS = {kind: frozenset(words.split()) for kind, words in _SCHEMA_WORDS.items()}
_OG_KINDS = ("article", "product", "website")
_PAGE = [
    *(f"schema_{k}" for k in _SCHEMA_KINDS),
    *(f"og_{k}" for k in _OG_KINDS),
    "page_articles_log",
    "page_times_log",
    "page_heading_share",
    "page_li_share",
    "page_forum_share",
    "page_comment_share",
]
_LD_TYPE = re.compile(r'"@type"\s*:\s*\[?\s*"([^"]{1,60})"')

FEATURES: list[str] = [
    *_TEXT,
    *_TREE,
    *(f"block_{t}" for t in _BLOCK_TAGS),
    "block_other",
    *(f"parent_{t}" for t in _PARENT_TAGS),
    *(f"near_{b}" for b in _BIT_NAMES),
    *(f"above_{b}" for b in _BIT_NAMES),
    *(f"hash_{i}" for i in range(_HASH_BUCKETS)),
    *_PATH,
    *_POSITION,
    *_NEIGHBOUR,
    *(f"seed_{s}" for s in _SEEDS),
    *TITLE_COLUMNS,
    *HEADLINE_COLUMNS,
    *SUMMARY_COLUMNS,
    *_PAGE,
    *SITE_FEATURES,
]


@lru_cache(maxsize=1 << 16)
def _keyword_mask(words: str) -> int:
    """Bits of the keyword groups found in an element's class/id/role/itemprop words.

    No group's pattern matches across whitespace (a whitespace before or after "ad" is a
    token's start or end), so the words' mask is the OR of their whitespace-separated tokens'
    masks. Cached, the words and each token: the same class strings and tokens repeat across
    a page's elements and a site's pages.
    """
    mask = 0
    for token in words.split():
        mask |= _token_mask(token)
    return mask


@lru_cache(maxsize=1 << 16)
def _token_mask(token: str) -> int:
    """Bits of the keyword groups one token of an element's words matches."""
    mask = 0
    if not _ANY_GROUP.search(token):
        return mask
    for bit, pattern in enumerate(_GROUP_RES):
        if pattern.search(token):
            mask |= 1 << bit
    return mask


@lru_cache(maxsize=1 << 16)
def _token_counts(words: str) -> np.ndarray:
    """How many of the `[a-z]+` tokens of an element's words fall in each hash bucket."""
    buckets = [zlib.crc32(t.encode()) % _HASH_BUCKETS for t in _CLASS_TOKEN.findall(words)]
    counts = np.bincount(buckets, minlength=_HASH_BUCKETS).astype(np.float64)
    counts.flags.writeable = False  # shared by every element of these words
    return counts


_COLUMN = {name: i for i, name in enumerate(FEATURES)}


# The attributes the keyword and hiding columns read, in this order (`Dom.attribute_values`).
_READ = ("class", "id", "role", "itemprop", "aria-modal", "style", "open")
_UNSET = (None,) * len(_READ)
_Values = tuple[str | None, ...]


def _words(values: _Values) -> str:
    """An element's class, id, role and itemprop values, lower-cased, in one string."""
    klass, ident, role, prop = values[:4]
    return f"{klass or ''} {ident or ''} {role or ''} {prop or ''}".strip().lower()


def _hiding(tag: str, values: _Values) -> int:
    """The `_HIDING` bits of an element's own markup."""
    _, _, role, _, modal, style, opened = values
    mask = 0
    if (
        (tag == "dialog" and opened is None)
        or (role is not None and _first_token(role) in _DIALOG_ROLES)
        or (modal is not None and modal.strip().lower() == "true")
    ):
        mask |= _DIALOG_BIT
    if style and _HIDING_STYLE.search(style):
        mask |= _STYLED_HIDDEN_BIT
    return mask


@lru_cache(maxsize=1 << 16)
def _marked(tag: str, values: _Values | None) -> tuple[int, str]:
    """An element's mask (its tag's bit, its hiding bits, its keyword groups) and its words;
    `values`: its `_READ` attributes, None when it has none. Cached: a page's elements repeat
    a few tags and class strings."""
    mask = _TAG_BIT.get(tag, 0)
    if values is None and tag != "dialog":  # no words, no hiding
        return mask, ""
    values = values or _UNSET
    words = _words(values)
    mask |= _hiding(tag, values)
    if words:
        mask |= _keyword_mask(words)
    return mask, words


class _Attributes:
    """Per-node keyword masks, computed for the nodes blocks reach."""

    def __init__(self, dom: Dom) -> None:
        self.dom = dom
        self._own: dict[int, int] = {}

    def _marks(self, nodes: list[int]) -> list[tuple[int, str]]:
        """Each node's mask and words (`_marked`), their attributes read in one call; the
        masks are kept for `above`."""
        tags = self.dom.tag
        values = self.dom.attribute_values(nodes, _READ)
        marks = [_marked(tags[node], found) for node, found in zip(nodes, values, strict=True)]
        self._own.update(zip(nodes, (mask for mask, _ in marks), strict=True))
        return marks

    def table(self, nodes: list[int]) -> tuple[list[int], list[str]]:
        """The masks of `nodes` and their class/id/role/itemprop words."""
        marks = self._marks(nodes)
        return [mask for mask, _ in marks], [words for _, words in marks]

    def above(self, nodes: list[int]) -> list[int]:
        """Per node of `nodes`: the OR of its mask and all its ancestors' masks. The
        ancestors `table` has not seen are read in one more call (masks only); ids are
        preorder, so a parent's OR is known before its children's."""
        parent_of = self.dom.parent
        chains: set[int] = set()  # the nodes and all their ancestors, each met once
        for node in set(nodes):
            while node >= 0 and node not in chains:
                chains.add(node)
                node = parent_of[node]
        unseen = chains.difference(self._own)
        if unseen:
            self._marks(sorted(unseen))
        ored: dict[int, int] = {-1: 0}
        for node in sorted(chains):
            ored[node] = self._own[node] | ored[parent_of[node]]
        return [ored[node] for node in nodes]


def _first_token(value: str) -> str:
    """The first token of a token-list attribute, lower-cased: `role="dialog region"` is a
    dialog (a browser takes the first role it knows)."""
    tokens = value.split(None, 1)
    return tokens[0].lower() if tokens else ""


def block_features(
    dom: Dom,
    blocks: Blocks,
    seeds: Sequence[Sequence[int]] = ((), (), ()),
    template: TemplateHashes | None = None,
) -> np.ndarray:
    """The feature matrix of `blocks` (rows) by `FEATURES` (columns), float32.

    `seeds`: for NCE, MSS and CETD-TPC in that order, the node ids each selected. `template`:
    the SiteLevel template of the page's site, when its pages are known (`sitetemplate`).
    """
    n = len(blocks)
    if n == 0:
        return np.zeros((0, len(FEATURES)), dtype=np.float32)
    out = _Columns(n)
    texts = block_texts(dom, blocks)
    chars, density = _block_sizes(dom, blocks)
    lineage = _lineage(dom, blocks)
    text, counts, tokens = text_columns(texts)
    out.add(text, density[:, None], mark_columns(texts, counts))
    out.add(np.subtract(blocks.stop, blocks.start)[:, None])
    out.add(_tree_columns(dom, lineage, chars), _tag_columns(dom, lineage))
    out.add(*_attribute_columns(dom, blocks, lineage), _path_columns(dom, lineage[0], chars))
    out.add(_position_columns(dom, chars, density))
    out.add(_neighbour_columns(chars, density, text[:, 11]))
    out.add(_seed_columns(dom, blocks, seeds), title_columns(dom, texts))
    out.add(headline_columns(dom, blocks), summary_columns(dom, tokens))
    out.add(_page_columns(dom, out.rows, chars))
    out.add(site_columns(dom, blocks, template))
    assert out.filled == len(FEATURES), (out.filled, len(FEATURES))
    return out.rows


class _Columns:
    """The float32 feature matrix of a page's blocks, filled column group by column group (each
    value rounded to float32 as it is written: as one cast of the whole matrix would round it)."""

    def __init__(self, n: int) -> None:
        self.rows = np.empty((n, len(FEATURES)), dtype=np.float32)
        self.filled = 0

    def add(self, *groups: np.ndarray) -> None:
        for group in groups:
            width = group.shape[1]
            self.rows[:, self.filled : self.filled + width] = group
            self.filled += width


_Lineage = tuple[np.ndarray, np.ndarray, np.ndarray]


def _lineage(dom: Dom, blocks: Blocks) -> _Lineage:
    """Each block's element, its parent and its grandparent (-1 where there is none)."""
    node = np.asarray(blocks.node, dtype=np.int64)
    parent_of = dom.node_arrays[0]
    parent = parent_of[node]
    grand = np.where(parent >= 0, parent_of[np.maximum(parent, 0)], -1)
    return node, parent, grand


def block_groups(dom: Dom, blocks: Blocks) -> np.ndarray:
    """Per block, ids of the structures it shares with other blocks of the page: its element's
    parent, its grandparent, and its tag path (columns in `stacking.GROUPS` order)."""
    node, parent, grand = _lineage(dom, blocks)
    path = np.asarray(dom.path_ids, dtype=np.int64)[node] if len(node) else node
    return np.column_stack([parent, grand, path]).astype(np.int32)


def _block_sizes(dom: Dom, blocks: Blocks) -> tuple[np.ndarray, np.ndarray]:
    """Characters of each block and the share of them inside links."""
    prefix, link_prefix = dom.subtree_arrays[2:]  # whole numbers: the same sums as a cumsum
    start = np.array(blocks.start)
    stop = np.array(blocks.stop)
    chars = prefix[stop] - prefix[start]
    link = link_prefix[stop] - link_prefix[start]
    return chars, np.divide(link, chars, out=np.zeros(len(chars)), where=chars > 0)


def _tree_columns(dom: Dom, lineage: _Lineage, chars: np.ndarray) -> np.ndarray:
    """Depth, size, link density and fan-out of the block element, its parent and grandparent
    (`lineage`: theirs, as `_lineage` gives it)."""
    node, parent, grand = lineage
    own, own_link = dom.subtree_chars(node)
    up, up_link = dom.subtree_chars(np.maximum(parent, 0))
    up2, up2_link = dom.subtree_chars(np.maximum(grand, 0))
    up, up_link = np.where(parent >= 0, up, own), np.where(parent >= 0, up_link, 0.0)
    up2, up2_link = np.where(grand >= 0, up2, up), np.where(grand >= 0, up2_link, 0.0)
    fan_out = np.fromiter(map(len, dom.children), dtype=np.float64, count=len(dom.children))
    siblings = np.bincount(parent + 1)[parent + 1] if len(parent) else parent  # blocks a parent
    depth = dom.node_arrays[2][node].astype(np.float64)

    def ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.divide(a, b, out=np.zeros(len(a)), where=b > 0)

    return np.column_stack(
        [
            depth,
            depth - dom.depth[dom.body],
            np.log1p(own),
            ratio(own_link, own),
            fan_out[node],
            np.log1p(up),
            ratio(up_link, up),
            np.where(parent >= 0, fan_out[np.maximum(parent, 0)], 0.0),
            siblings,
            np.log1p(up2),
            ratio(up2_link, up2),
            ratio(chars, up),
            ratio(chars, up2),
        ]
    )


def _tag_columns(dom: Dom, lineage: _Lineage) -> np.ndarray:
    """One-hot tag of the block element (plus "other") and of its parent."""
    node, parent, _ = lineage
    width = len(_BLOCK_TAGS) + 1
    out = np.zeros((len(node), width + len(_PARENT_TAGS)))
    tags, rows = dom.tag, np.arange(len(node))
    out[rows, [_BLOCK_INDEX.get(tags[k], width - 1) for k in node.tolist()]] = 1.0
    # a parent of no listed tag (or no parent) gets the column past the last, dropped after
    above = [_PARENT_INDEX.get(tags[k], len(_PARENT_TAGS)) if k >= 0 else len(_PARENT_TAGS)
             for k in parent.tolist()]  # fmt: skip
    parents = np.zeros((len(node), len(_PARENT_TAGS) + 1))
    parents[rows, above] = 1.0
    out[:, width:] = parents[:, :-1]
    return out


def _attribute_columns(
    dom: Dom, blocks: Blocks, lineage: _Lineage
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """near_* and above_* keyword/tag bits (0 or 1, one byte each), then hashed class/id tokens
    of block and 2 parents: three groups of columns."""
    attrs = _Attributes(dom)
    bits = len(_BIT_NAMES)
    node, parent, grand = lineage
    # Blocks share parents and grandparents: each element is looked at once, then gathered.
    # Row 0 of the tables stands for "no such element" (mask 0, no tokens).
    seen = np.zeros(len(dom.parent) + 1, dtype=bool)
    seen[np.concatenate([node, parent, grand]) + 1] = True
    elements = np.flatnonzero(seen[1:])  # sorted, without -1: as np.unique, with no sort
    row = np.zeros(len(dom.parent) + 1, dtype=np.int64)
    row[elements + 1] = np.arange(1, len(elements) + 1)
    listed = elements.tolist()
    masks, words = attrs.table(listed)
    own = np.array([0, *masks], dtype=np.int64)
    # token counts per (element row, bucket): whole numbers, each words' counts made once
    tokens = np.zeros((len(listed) + 1, _HASH_BUCKETS))
    worded = [k for k, found in enumerate(words, start=1) if found]
    if worded:  # one array of the rows, not a list numpy reads row by row
        counts = np.concatenate([_token_counts(words[k - 1]) for k in worded])
        tokens[worded] = counts.reshape(len(worded), _HASH_BUCKETS)
    at = [row[nodes + 1] for nodes in (node, parent, grand)]
    near = own[at[0]] | own[at[1]] | own[at[2]]
    above = np.array(attrs.above(list(blocks.node)), dtype=np.int64)
    hashed = tokens[at[0]] + tokens[at[1]] + tokens[at[2]]
    return _bit_columns(near, bits), _bit_columns(above, bits), hashed


def _bit_columns(masks: np.ndarray, bits: int) -> np.ndarray:
    """Bits 0 to `bits` - 1 of each int64 mask, lowest first, as 0/1 bytes (one row a mask)."""
    as_bytes = masks.astype("<i8").view(np.uint8).reshape(len(masks), 8)
    return np.unpackbits(as_bytes, axis=1, count=bits, bitorder="little")


def _path_columns(dom: Dom, node: np.ndarray, chars: np.ndarray) -> np.ndarray:
    """How many blocks share the block's tag path, their share of the text, the path length
    (`node`: each block's element)."""
    path_of = dom.path_ids
    paths = np.array([path_of[k] for k in node.tolist()], dtype=np.int64)
    if not len(paths):
        return np.zeros((0, 3))
    counts = np.bincount(paths)[paths]  # path ids are small integers: bins of their own
    path_chars = np.bincount(paths, weights=chars)[paths]
    body_depth = dom.depth[dom.body]
    depth = (dom.node_arrays[2][node] - body_depth).astype(np.float64)
    total = float(chars.sum()) or 1.0
    return np.column_stack([np.log1p(counts), path_chars / total, depth])


def _position_columns(dom: Dom, chars: np.ndarray, density: np.ndarray) -> np.ndarray:
    n = len(chars)
    total = float(chars.sum()) or 1.0
    before = np.concatenate([[0.0], np.cumsum(chars)[:-1]])
    ranks = np.argsort(np.argsort(-chars, kind="stable"), kind="stable")
    page = [math.log1p(total), math.log1p(n), math.log1p(len(dom.href)), density @ chars / total]
    return np.column_stack(
        [before / total, np.arange(n) / n, *(np.full(n, v) for v in page), ranks / n]
    )


def _neighbour_columns(chars: np.ndarray, density: np.ndarray, stop: np.ndarray) -> np.ndarray:
    n = len(chars)
    own = np.column_stack([np.log1p(chars), density, stop])
    out = []
    for offset in _NEIGHBOURS:
        shifted = np.zeros_like(own)
        if offset < 0 and n > -offset:
            shifted[-offset:] = own[:offset]
        elif offset > 0 and n > offset:
            shifted[:-offset] = own[offset:]
        out.append(shifted)
    return np.hstack(out)


def _seed_columns(dom: Dom, blocks: Blocks, seeds: Sequence[Sequence[int]]) -> np.ndarray:
    first = np.array(blocks.start)
    return np.column_stack([mark[first] for mark in _seed_marks(dom, seeds)])


def _schema_types(dom: Dom) -> set[str]:
    """schema.org types the page declares, lower-cased: JSON-LD @type and microdata itemtype."""
    found: set[str] = set()
    if not dom.elements:
        return found
    top = dom.elements[0]
    root = top.getroottree().getroot()
    # not in the Dom's nodes; the Dom found them where it was built from the tree's root
    for el in dom.scripts if root is top else elements_named(root, "script"):
        if (el.get("type") or "").strip().lower() == "application/ld+json" and el.text:
            found.update(t.lower() for t in _LD_TYPE.findall(el.text))
    # itemtype of the Dom's elements: the walk's nodes are exactly the elements no skipped
    # element hides
    for node in dom.nodes_with_attribute("itemtype"):
        kind = dom.elements[node].get("itemtype")
        if kind:
            found.update(k.rstrip("/").rsplit("/", 1)[-1].lower() for k in kind.split())
    return found


def _page_columns(dom: Dom, before: np.ndarray, chars: np.ndarray) -> np.ndarray:
    """The `_PAGE` columns, the same on every row; `before` holds the columns computed so far."""
    types = _schema_types(dom)
    og = (dom.meta.get("og:type") or "").strip().lower()
    col = _COLUMN
    total = float(chars.sum()) or 1.0
    # the columns read are 0 or 1: read as float64, they are the values computed
    heading = before[:, [col[f"block_h{level}"] for level in range(1, 7)]].astype(np.float64)
    heading = heading.sum(axis=1)
    values = [
        *(float(bool(types & kinds)) for kinds in _SCHEMA_KINDS.values()),
        *(float(og.startswith(kind)) for kind in _OG_KINDS),
        math.log1p(dom.tag.count("article")),
        math.log1p(dom.tag.count("time")),
        float(heading.mean()),
        float(before[:, col["block_li"]].astype(np.float64) @ chars) / total,
        float(before[:, col["near_forum"]].astype(np.float64) @ chars) / total,
        float(before[:, col["near_comment"]].astype(np.float64) @ chars) / total,
    ]
    return np.tile(np.array(values), (len(chars), 1))


def _seed_marks(dom: Dom, seeds: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Per text piece, 1 where a seed extractor's selected subtrees cover it."""
    marks = []
    for node_ids in seeds:
        mark = np.zeros(len(dom.piece_text) + 1, dtype=np.float32)
        for node in node_ids:
            mark[dom.piece_start[node] : dom.piece_end[node]] = 1.0
        marks.append(mark)
    return marks
