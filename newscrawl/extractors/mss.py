"""MSS: Maximum Subsequence Segmentation (Pasternack & Roth, WWW 2009, "baseline II").

The page is read as one sequence of tokens, each a tag or the text between two tags. A tag scores
`tag_score` (-3.25); a text token scores `word_score` (+1) for every word or symbol it holds. An
article is long runs of text with few tags inside, so the contiguous subsequence with the largest
sum (Kadane, one pass) is taken as the article, and the text inside it is the output.

The sequence comes from the `Dom` model, not from the HTML source (nothing is parsed twice):
entering a node emits its opening tag, its text pieces and its children's tokens follow in
document order, leaving it emits its closing tag. `<script>`/`<style>` never become nodes, which is
the paper's first step. Readings taken where the seed leaves room (each is a knob):

* Closing tags are tokens (`close_tags=True`). The paper tokenises the HTML source, where
  `</p>` is as much a tag as `<p>`; void elements (`<br>`, `<img>` ...) have no closing tag and
  count once. With closing tags an empty element costs two tags, which is what makes dense
  markup (menus, link lists) expensive.
* "Words or symbols": a run of `\\w` characters, or one character that is neither a word
  character nor a space. Scripts written without spaces (Chinese, Japanese) have no words in
  that sense: a whole Chinese paragraph would score like one English word and never outweigh
  the tags around it. There every `cjk_chars_per_word` (2: a Chinese word averages about two
  characters) ideographs or kana count as a word; 0 turns this off.
* Link text scores like any text (`link_word_score=None`, the seed); a number gives words
  inside `<a>` their own score.
* A text token's score is additive over its words, so a maximum span never cuts a text token in
  two: the output is always whole text pieces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from newscrawl.dom import Dom
from newscrawl.extractors.base import Extraction
from newscrawl.title import page_title

__all__ = ["MSS", "MSSConfig", "Tokens", "max_subarray", "tokenize"]

# Elements written without a closing tag in HTML source.
VOID_TAGS = frozenset(
    "area base br col embed hr img input keygen link meta param source track wbr".split()
)
# Ideographs and kana: scripts without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORDS_PLAIN = re.compile(r"\w+|[^\w\s]")

# Token kinds in the sequence.
OPEN, CLOSE, TEXT = 0, 1, 2


@dataclass(frozen=True, slots=True)
class MSSConfig:
    """Token scores of baseline II and the tokenisation readings described in the module doc."""

    tag_score: float = -3.25
    word_score: float = 1.0
    close_tags: bool = True
    cjk_chars_per_word: int = 2
    link_word_score: float | None = None


def max_subarray(scores: list[float]) -> tuple[int, int, float]:
    """Kadane: the contiguous slice `[start, stop)` with the largest sum, and that sum.

    Among equal sums the first slice found wins, and a slice never starts with a non-positive
    prefix. An empty input gives `(0, 0, 0.0)`.
    """
    best, best_start, best_stop = float("-inf"), 0, 0
    current, start = 0.0, 0
    for i, score in enumerate(scores):
        if current <= 0:
            current, start = score, i
        else:
            current += score
        if current > best:
            best, best_start, best_stop = current, start, i + 1
    if best_stop == 0:
        return 0, 0, 0.0
    return best_start, best_stop, best


@lru_cache(maxsize=8)
def _word_pattern(cjk_chars_per_word: int) -> re.Pattern[str]:
    """Words and symbols; runs of up to `cjk_chars_per_word` ideographs or kana count as a word."""
    if cjk_chars_per_word <= 0:
        return _WORDS_PLAIN
    return re.compile(rf"[{_CJK}]{{1,{cjk_chars_per_word}}}|[^\W{_CJK}]+|[^\w\s]")


@dataclass(slots=True)
class Tokens:
    """A page's token sequence as parallel lists, with each node's token range.

    `kinds[i]` is OPEN, CLOSE or TEXT; `refs[i]` the node id (tags) or piece index (text).
    The tokens of node `n`'s subtree are `[first[n], last[n]]`, both ends included.
    """

    scores: list[float]
    kinds: list[int]
    refs: list[int]
    first: list[int]
    last: list[int]

    def add_tag(self, kind: int, node: int, score: float) -> None:
        self.scores.append(score)
        self.kinds.append(kind)
        self.refs.append(node)

    def add_text(self, piece_scores: list[float], start: int, stop: int) -> int:
        """Append pieces `[start, stop)` (often none); returns the next piece to emit."""
        if start < stop:
            self.scores.extend(piece_scores[start:stop])
            self.kinds.extend([TEXT] * (stop - start))
            self.refs.extend(range(start, stop))
            return stop
        return start


def tokenize(dom: Dom, config: MSSConfig) -> Tokens:
    """The token sequence of `dom`, in one pass over nodes in preorder with an explicit stack.

    Before a node opens, the pieces that precede it are emitted; when the walk leaves a subtree,
    the pieces left inside it (tails of its last children) are emitted, then its closing tag.
    """
    piece_scores = _piece_scores(dom, config)
    tag_score, close_tags = config.tag_score, config.close_tags
    piece_start, piece_end, end, tags = dom.piece_start, dom.piece_end, dom.end, dom.tag
    count = len(tags)
    tokens = Tokens([], [], [], [0] * count, [0] * count)
    scores = tokens.scores
    stack: list[int] = []
    k = 0  # next piece to emit
    for node in range(count + 1):
        # Leave every open subtree that does not contain `node` (all of them at the end).
        while stack and (node == count or end[stack[-1]] <= node):
            top = stack.pop()
            k = tokens.add_text(piece_scores, k, piece_end[top])
            if close_tags and tags[top] not in VOID_TAGS:
                tokens.add_tag(CLOSE, top, tag_score)
            tokens.last[top] = len(scores) - 1
        if node == count:
            tokens.add_text(piece_scores, k, len(piece_scores))
            break
        k = tokens.add_text(piece_scores, k, piece_start[node])
        tokens.first[node] = len(scores)
        tokens.add_tag(OPEN, node, tag_score)
        stack.append(node)
    return tokens


def _piece_scores(dom: Dom, config: MSSConfig) -> list[float]:
    """Score of every text piece: its count of words and symbols times the word score."""
    findall = _word_pattern(config.cjk_chars_per_word).findall
    word = config.word_score
    link = word if config.link_word_score is None else config.link_word_score
    return [
        (link if in_link else word) * len(findall(text))
        for text, in_link in zip(dom.piece_text, dom.piece_in_link, strict=True)
    ]


def covered_nodes(dom: Dom, tokens: Tokens, start: int, stop: int) -> list[int]:
    """The maximal nodes that the token slice `[start, stop)` covers, in preorder.

    A maximum span starts and ends on text (a tag at either end only lowers its sum), so the
    opening tag of the first paragraph lies just outside it. "Covered" therefore means: every
    text piece of the node's subtree is in the span, or, for a node without text, all its
    tokens are. One walk that skips whole subtrees outside the span or covered by it.
    """
    pieces = [tokens.refs[i] for i in range(start, stop) if tokens.kinds[i] == TEXT]
    if not pieces:
        return []
    low, high = pieces[0], pieces[-1]
    first, last, end = tokens.first, tokens.last, dom.end
    picked: list[int] = []
    node = 0
    while node < len(first):
        if last[node] < start or first[node] >= stop:
            node = end[node]  # entirely outside the span
        elif dom.piece_start[node] < dom.piece_end[node]:
            if low <= dom.piece_start[node] and dom.piece_end[node] - 1 <= high:
                picked.append(node)
                node = end[node]
            else:
                node += 1  # partly inside: look at its children
        elif start <= first[node] and last[node] < stop:
            picked.append(node)  # no text of its own, all its tags inside
            node = end[node]
        else:
            node += 1
    return picked


class MSS:
    """Maximum Subsequence Segmentation over the page's tag/text token sequence."""

    name = "mss"
    Config = MSSConfig

    def __init__(self, config: MSSConfig | None = None) -> None:
        self.config = config or MSSConfig()

    def extract(self, dom: Dom) -> Extraction:
        title = page_title(dom)
        tokens = tokenize(dom, self.config)
        start, stop, total = max_subarray(tokens.scores)
        kinds, refs = tokens.kinds, tokens.refs
        pieces = [refs[i] for i in range(start, stop) if kinds[i] == TEXT]
        if total <= 0 or not pieces:
            return Extraction.empty(self.name, title)
        text = dom.pieces_text(pieces)
        nodes = covered_nodes(dom, tokens, start, stop)
        return Extraction(title=title, text=text, node_ids=tuple(nodes), extractor=self.name)
