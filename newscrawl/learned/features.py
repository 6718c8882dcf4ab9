"""Features of each text block, for the learned extractor's classifier.

One row per block (see `blocks.py`), columns named in `FEATURES`. They extend the seed-004
classifier's seven numbers (link density, anchor share, position, ...) with what the
boilerplate-detection literature found to matter (Kohlschütter's shallow text features, Web2Text's
tree context, Dragnet's class/id tokens):

* text statistics of the block: characters, words, sentences, punctuation, digits, capitals,
  the share of the page language's function words, link density;
* the block element: its tag, depth, and the text and link density of it, its parent and its
  grandparent (how much prose surrounds the block);
* class, id, role and itemprop of the block and its ancestors: keyword groups ("comment",
  "nav", "article body", ...), near (three levels) and anywhere above, plus hashed tokens;
  structural tags above it (<article>, <nav>, <footer>, <li>, ...);
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

import numpy as np
from rapidfuzz import fuzz

from newscrawl.dom import Dom
from newscrawl.learned.blocks import Blocks
from newscrawl.learned.stopwords import guess_language, stopword_share

__all__ = ["FEATURES", "block_features"]

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
# Structural tags whose presence above a block is a feature.
_TAG_BITS = (
    "article", "main", "nav", "header", "footer", "aside", "form", "li", "table", "blockquote",
    "figure", "a", "h1", "h2", "h3", "pre", "dl", "button", "label", "section",
)  # fmt: skip
_TAG_BIT = {tag: 1 << (len(_GROUPS) + i) for i, tag in enumerate(_TAG_BITS)}
_BIT_NAMES = [*_GROUPS, *(f"tag_{t}" for t in _TAG_BITS)]
# One-hot tags of the block element.
_BLOCK_TAGS = (
    "p", "div", "li", "td", "th", "h1", "h2", "h3", "h4", "h5", "h6", "br", "dd", "dt", "pre",
    "blockquote", "section", "article", "span", "a", "figcaption", "header", "footer",
)  # fmt: skip
_PARENT_TAGS = ("div", "td", "li", "ul", "ol", "article", "section", "p", "body", "blockquote")
_HASH_BUCKETS = 32
_CLASS_TOKEN = re.compile(r"[a-z]+")
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|[。！？]")
_WORD = re.compile(r"\w+")
_DATE = re.compile(r"(?<!\d)(?:(?:19|20)\d\d|\d{1,2}:\d\d|\d{1,2}[./-]\d{1,2}[./-]\d{2,4})(?!\d)")
_CJK = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
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
_TITLE = ["title_ratio", "in_title"]

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
    *_TITLE,
]


class _Attributes:
    """Per-node keyword masks and class tokens, computed lazily for the nodes blocks reach."""

    def __init__(self, dom: Dom) -> None:
        self.dom = dom
        self._own: dict[int, int] = {}
        self._above: dict[int, int] = {}
        self._tokens: dict[int, list[str]] = {}

    def tokens(self, node: int) -> list[str]:
        found = self._tokens.get(node)
        if found is None:
            el = self.dom.elements[node]
            words = " ".join(
                el.get(a) or "" for a in ("class", "id", "role", "itemprop")
            ).lower()
            found = _CLASS_TOKEN.findall(words) if words.strip() else []
            self._tokens[node] = found
        return found

    def own(self, node: int) -> int:
        mask = self._own.get(node)
        if mask is None:
            mask = _TAG_BIT.get(self.dom.tag[node], 0)
            el = self.dom.elements[node]
            words = " ".join(el.get(a) or "" for a in ("class", "id", "role", "itemprop"))
            if words.strip():
                words = words.lower()
                for bit, pattern in enumerate(_GROUP_RES):
                    if pattern.search(words):
                        mask |= 1 << bit
            self._own[node] = mask
        return mask

    def above(self, node: int) -> int:
        """OR of the masks of `node` and all its ancestors (memoised up the chain)."""
        chain: list[int] = []
        while node >= 0 and node not in self._above:
            chain.append(node)
            node = self.dom.parent[node]
        mask = self._above.get(node, 0) if node >= 0 else 0
        for n in reversed(chain):
            mask |= self.own(n)
            self._above[n] = mask
        return mask


def _text_stats(text: str, lang: str) -> tuple[list[float], list[str]]:
    chars = len(text) or 1
    words = text.split()
    tokens = _WORD.findall(text)
    lowered = [t.lower() for t in tokens]
    letters = sum(c.isalpha() for c in text) or 1
    sentences = len(_SENTENCE_END.findall(text))
    stripped = text.rstrip()
    stats = [
        math.log1p(len(text)),
        math.log1p(len(words)),
        math.log1p(len(tokens)),
        min(sentences, 50),
        sentences / (len(words) or 1),
        sum(not c.isalnum() and not c.isspace() for c in text) / chars,
        sum(c.isdigit() for c in text) / chars,
        sum(c.isupper() for c in text) / letters,
        sum(map(len, tokens)) / (len(tokens) or 1),
        float(bool(stripped) and stripped[-1] in ".!?。！？\"'”"),
        float(bool(text) and text[0].isupper()),
        stopword_share(lowered, text, lang),
        len(_CJK.findall(text)) / chars,
    ]
    return stats, lowered


def block_features(
    dom: Dom, blocks: Blocks, seeds: Sequence[Sequence[int]] = ((), (), ())
) -> np.ndarray:
    """The feature matrix of `blocks` (rows) by `FEATURES` (columns), float32.

    `seeds`: for NCE, MSS and CETD-TPC in that order, the node ids each selected.
    """
    n = len(blocks)
    out = np.zeros((n, len(FEATURES)), dtype=np.float32)
    if n == 0:
        return out
    texts = [blocks.text(dom, k) for k in range(n)]
    lang = guess_language(w.lower() for t in texts for w in _WORD.findall(t)[:50])
    attrs = _Attributes(dom)
    piece_len = [len(t) for t in dom.piece_text]
    in_link = dom.piece_in_link
    chars = np.array(
        [sum(piece_len[blocks.start[k] : blocks.stop[k]]) for k in range(n)], dtype=np.float64
    )
    link = np.array(
        [
            sum(piece_len[p] for p in range(blocks.start[k], blocks.stop[k]) if in_link[p])
            for k in range(n)
        ],
        dtype=np.float64,
    )
    density = np.divide(link, chars, out=np.zeros(n), where=chars > 0)
    stats = [_text_stats(t, lang) for t in texts]
    stop_share = np.array([s[0][11] for s in stats])
    total_chars = float(chars.sum()) or 1.0
    body_depth = dom.depth[dom.body]

    # Tag paths of block elements, and how much of the page each path carries.
    path_of = _path_ids(dom)
    path_blocks: dict[int, int] = {}
    path_chars: dict[int, float] = {}
    for k, node in enumerate(blocks.node):
        pid = path_of[node]
        path_blocks[pid] = path_blocks.get(pid, 0) + 1
        path_chars[pid] = path_chars.get(pid, 0.0) + chars[k]
    blocks_per_node: dict[int, int] = {}
    for node in blocks.node:
        parent = dom.parent[node]
        blocks_per_node[parent] = blocks_per_node.get(parent, 0) + 1

    seed_marks = _seed_marks(dom, seeds)
    ranks = np.argsort(np.argsort(-chars, kind="stable"), kind="stable")
    cumulative = np.concatenate([[0.0], np.cumsum(chars)[:-1]])
    page_links = len(dom.href)
    title = dom.title.casefold()

    col = 0
    for k in range(n):
        node = blocks.node[k]
        parent = dom.parent[node]
        grand = dom.parent[parent] if parent >= 0 else -1
        row = out[k]
        text_stats, _ = stats[k]
        text = texts[k]
        values: list[float] = [
            *text_stats,
            density[k],
            float(bool(_DATE.search(text))),
            float(sum(text.count(c) for c in "|•·»›")),
            float("©" in text or "(c)" in text.lower()),
            float(blocks.stop[k] - blocks.start[k]),
        ]
        values += _tree_values(dom, node, parent, grand, chars[k], body_depth, blocks_per_node)
        tag = dom.tag[node]
        onehot = [0.0] * (len(_BLOCK_TAGS) + 1)
        onehot[_BLOCK_TAGS.index(tag) if tag in _BLOCK_TAGS else -1] = 1.0
        values += onehot
        ptag = dom.tag[parent] if parent >= 0 else ""
        values += [float(ptag == t) for t in _PARENT_TAGS]
        near = attrs.own(node)
        for up in (parent, grand):
            if up >= 0:
                near |= attrs.own(up)
        above = attrs.above(node)
        values += [float(near >> b & 1) for b in range(len(_BIT_NAMES))]
        values += [float(above >> b & 1) for b in range(len(_BIT_NAMES))]
        hashed = [0.0] * _HASH_BUCKETS
        for up in (node, parent, grand):
            if up >= 0:
                for token in attrs.tokens(up):
                    hashed[zlib.crc32(token.encode()) % _HASH_BUCKETS] += 1.0
        values += hashed
        pid = path_of[node]
        values += [
            math.log1p(path_blocks[pid]),
            path_chars[pid] / total_chars,
            float(dom.depth[node] - body_depth),
        ]
        values += [
            cumulative[k] / total_chars,
            k / n,
            math.log1p(total_chars),
            math.log1p(n),
            math.log1p(page_links),
            float(density @ chars) / total_chars,
            float(ranks[k]) / n,
        ]
        for offset in _NEIGHBOURS:
            j = k + offset
            if 0 <= j < n:
                values += [math.log1p(chars[j]), density[j], stop_share[j]]
            else:
                values += [0.0, 0.0, 0.0]
        first = blocks.start[k]
        values += [float(mark[first]) for mark in seed_marks]
        short = text[:300].casefold()
        values += [
            fuzz.ratio(short, title) / 100.0 if title else 0.0,
            float(bool(short) and short in title),
        ]
        row[:] = values
        col = len(values)
    assert col == len(FEATURES), (col, len(FEATURES))
    return out


def _tree_values(
    dom: Dom,
    node: int,
    parent: int,
    grand: int,
    block_chars: float,
    body_depth: int,
    blocks_per_node: dict[int, int],
) -> list[float]:
    node_chars = dom.text_len(node)
    parent_chars = dom.text_len(parent) if parent >= 0 else node_chars
    grand_chars = dom.text_len(grand) if grand >= 0 else parent_chars
    return [
        float(dom.depth[node]),
        float(dom.depth[node] - body_depth),
        math.log1p(node_chars),
        dom.link_density(node),
        float(len(dom.children[node])),
        math.log1p(parent_chars),
        dom.link_density(parent) if parent >= 0 else 0.0,
        float(len(dom.children[parent])) if parent >= 0 else 0.0,
        float(blocks_per_node.get(parent, 0)),
        math.log1p(grand_chars),
        dom.link_density(grand) if grand >= 0 else 0.0,
        block_chars / parent_chars if parent_chars else 0.0,
        block_chars / grand_chars if grand_chars else 0.0,
    ]


def _path_ids(dom: Dom) -> list[int]:
    """An id per node for its tag path from the root (equal paths, equal ids)."""
    ids: dict[tuple[int, str], int] = {}
    path = [0] * len(dom.tag)
    for node, (tag, parent) in enumerate(zip(dom.tag, dom.parent, strict=True)):
        key = (path[parent] if parent >= 0 else -1, tag)
        path[node] = ids.setdefault(key, len(ids))
    return path


def _seed_marks(dom: Dom, seeds: Sequence[Sequence[int]]) -> list[np.ndarray]:
    """Per text piece, 1 where a seed extractor's selected subtrees cover it."""
    marks = []
    for node_ids in seeds:
        mark = np.zeros(len(dom.piece_text) + 1, dtype=np.float32)
        for node in node_ids:
            mark[dom.piece_start[node] : dom.piece_end[node]] = 1.0
        marks.append(mark)
    return marks
