"""MSS: Maximum Subsequence Segmentation (Pasternack & Roth, WWW 2009, "baseline II").

The page is read as one sequence of tokens, each a tag or the text between two tags. A tag scores
`tag_score` (-3.25); a text token scores `word_score` (+1) for every word or symbol it holds. An
article is long runs of text with few tags inside, so the contiguous subsequence with the largest
sum (Kadane, one pass) is taken as the article, and the text inside it is the output.

The sequence comes from the `Dom` model, not from the HTML source (nothing is parsed twice): it
is the sequence a walk would give (entering a node emits its opening tag, then its text pieces
and its children's tokens in document order, leaving it emits its closing tag), computed without
the walk. Text tokens are the Dom's text pieces, and the tags between two pieces are counted from
the flat piece ranges: node n opens just before piece `piece_start[n]` and closes just after
piece `piece_end[n] - 1`. Adjacent tags are merged into one token worth their summed score,
which changes no maximum (see `token_scores`). `<script>`/`<style>` never become nodes, which is
the paper's first step; text inside `<head>` is not a piece, its tags still count.

Readings taken where the paper leaves room (each is a knob of `MSSConfig`):

* Closing tags are tokens (`close_tags=True`). The paper tokenises the HTML source, where
  `</p>` is as much a tag as `<p>`; void elements (`<br>`, `<img>` ...) have no closing tag and
  count once. With closing tags an empty element costs two tags, which is what makes dense
  markup (menus, link lists) expensive (what counting closing tags is worth:
  docs/experiments.md).
* "Words or symbols": a run of `\\w` characters, or one character that is neither a word
  character nor a space. Scripts written without spaces (Chinese, Japanese) have no words in
  that sense: a whole Chinese paragraph would score like one English word and never outweigh
  the tags around it. There every `cjk_chars_per_word` (2: a Chinese word averages about two
  characters) ideographs or kana count as a word; 0 turns this off.
* Link text scores like any text (`link_word_score=None`, the paper); a number gives words
  inside `<a>` their own score.
* A text token's score is additive over its words, so a maximum span never cuts a text token in
  two: the output is always whole text pieces (a word-level span would only ever extend to
  the ends of its text runs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

import numpy as np

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom
from newscrawl.html.tags import VOID_TAGS
from newscrawl.html.unicode_scripts import IDEOGRAPHS_AND_KANA

__all__ = ["MSS", "MSSConfig", "covered_nodes", "max_subarray", "tag_runs", "token_scores"]

# Elements written without a closing tag in HTML source.
# Ideographs and kana: scripts without spaces between words (Hangul, spaced, is not among them).
_CJK = IDEOGRAPHS_AND_KANA
_WORDS_PLAIN = re.compile(r"\w+|[^\w\s]")


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


def tag_runs(dom: Dom, close_tags: bool = True) -> list[int]:
    """How many tags lie between consecutive text pieces: `runs[k]` just before piece k, and
    `runs[-1]` after the last piece.

    An element opens just before its first piece (`piece_start`) and closes just after its last
    (`piece_end`); an element without text sits where its empty piece range is. So the opening
    tag of node n falls in run `piece_start[n]` and its closing tag in run `piece_end[n]`.
    """
    runs = [0] * (len(dom.piece_text) + 1)
    for start in dom.piece_start:
        runs[start] += 1
    if close_tags:
        for stop, tag in zip(dom.piece_end, dom.tag, strict=True):
            if tag not in VOID_TAGS:
                runs[stop] += 1
    return runs


def token_scores(dom: Dom, config: MSSConfig) -> list[float]:
    """The page's token scores in document order, each run of adjacent tags merged into one.

    Even positions 2k hold the tags just before piece k (run k: `tag_score` times its length),
    odd positions 2k + 1 hold piece k. Merging adjacent tags changes no maximum: a maximum span
    never starts or ends inside a run of negative tags, and takes a run whole or not at all.
    """
    scores = [0.0] * (2 * len(dom.piece_text) + 1)
    scores[0::2] = [config.tag_score * n for n in tag_runs(dom, config.close_tags)]
    scores[1::2] = _piece_scores(dom, config)
    return scores


def _piece_scores(dom: Dom, config: MSSConfig) -> list[float]:
    """Score of every text piece: its count of words and symbols times the word score."""
    counts = _token_counts(dom.piece_text, config.cjk_chars_per_word)
    if counts is None:
        findall = _word_pattern(config.cjk_chars_per_word).findall
        counts = [len(findall(text)) for text in dom.piece_text]
    word = config.word_score
    link = word if config.link_word_score is None else config.link_word_score
    return [
        (link if in_link else word) * count
        for count, in_link in zip(counts, dom.piece_in_link, strict=True)
    ]


_WORD, _SPACE, _IDEOGRAPH = 1, 2, 4


@cache  # the same table for every page: a pure function of the patterns
def _char_table() -> np.ndarray:
    """Per BMP code point: `_WORD` where re's `\\w` matches it, `_SPACE` for `\\s`, `_IDEOGRAPH`
    for the CJK class; read off the patterns themselves, so counts made from it are theirs."""
    every = "".join(map(chr, range(0x10000)))
    table = np.zeros(0x10000, dtype=np.uint8)
    for bit, pattern in ((_WORD, r"\w"), (_SPACE, r"\s"), (_IDEOGRAPH, f"[{_CJK}]")):
        table[[m.start() for m in re.finditer(pattern, every)]] |= bit
    return table


def _token_counts(texts: list[str], per_word: int) -> list[int] | None:
    """`len(_word_pattern(per_word).findall(text))` of every text, from character classes
    rather than one regex call per piece (the hottest loop of MSS); None when the pattern is
    the plain one or a character lies outside the BMP (then the regex counts).

    The pattern's matches are: each maximal run of word characters that are not ideographs,
    each character that is neither a word character, a space nor an ideograph, and
    ceil(L / per_word) for a run of L ideographs (it takes `per_word` at a time, greedily).
    """
    codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
    if per_word <= 0 or (len(codes) and int(codes.max()) >= 0x10000):
        return None
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    bits = _char_table().take(codes)  # take: far cheaper than indexing with uint32 codes
    ideograph = (bits & _IDEOGRAPH) > 0
    word = ((bits & _WORD) > 0) & ~ideograph
    symbol = ((bits & (_WORD | _SPACE)) == 0) & ~ideograph
    stops = np.cumsum(lengths)
    first = np.zeros(len(codes), dtype=bool)  # the first character of its text
    first[(stops - lengths)[lengths > 0]] = True
    word_start = word & ~(np.concatenate([[False], word[:-1]]) & ~first)
    tokens = word_start | symbol
    if ideograph.any():  # runs of ideographs: one token per `per_word` of them
        run_start = ideograph & ~(np.concatenate([[False], ideograph[:-1]]) & ~first)
        index = np.arange(len(codes))
        offset = index - np.maximum.accumulate(np.where(run_start, index, 0))
        tokens |= ideograph & (offset % per_word == 0)
    # tokens per text: differences of the running count at the texts' ends
    running = np.concatenate([[0], np.cumsum(tokens, dtype=np.int64)])
    return (running[stops] - running[stops - lengths]).tolist()


def covered_nodes(dom: Dom, low: int, high: int) -> list[int]:
    """The maximal nodes inside the span whose text is pieces `low..high`, in preorder.

    A maximum span starts and ends on text (a tag at either end only lowers its sum), so the
    opening tag of the first paragraph lies just outside it. "Covered" therefore means: every
    text piece of the node's subtree is in the span, or, for a node without text, it sits
    between two pieces of the span. One walk that skips whole subtrees covered or outside.
    """
    piece_start, piece_end, end = dom.piece_start, dom.piece_end, dom.end
    picked: list[int] = []
    node = 0
    while node < len(end):
        first, stop = piece_start[node], piece_end[node]
        if first == stop:  # no text: it sits just before piece `first`
            covered = low < first <= high
        else:
            covered = low <= first and stop - 1 <= high
            if not covered and first <= high and stop > low:
                node += 1  # partly inside: look at its children
                continue
        if covered:
            picked.append(node)
        node = end[node]  # covered or entirely outside: skip the subtree
    return picked


class MSS:
    """Maximum Subsequence Segmentation over the page's tag/text token sequence.

    `node_ids` of the result are the maximal nodes covered by the span (see `covered_nodes`);
    text a partly covered node owns directly (e.g. the tail after a `<br>`) is in the text but
    has no node of its own there.
    """

    name = "mss"
    Config = MSSConfig

    def __init__(self, config: MSSConfig | None = None) -> None:
        self.config = config or MSSConfig()

    def extract(self, dom: Dom) -> Extraction:
        title = page_title(dom)
        span = self._span(dom)
        if span is None:
            return Extraction.empty(self.name, title)
        low, high = span
        text = dom.pieces_text(range(low, high + 1))
        nodes = covered_nodes(dom, low, high)
        return Extraction(
            title=title,
            text=text,
            node_ids=tuple(nodes),
            extractor=self.name,
            pieces=tuple(range(low, high + 1)),
        )

    def select(self, dom: Dom) -> tuple[int, ...]:
        """The `node_ids` of `extract`, without its title and text."""
        span = self._span(dom)
        return tuple(covered_nodes(dom, *span)) if span is not None else ()

    def _span(self, dom: Dom) -> tuple[int, int] | None:
        """The first and last text piece of the maximum span; None when it holds none."""
        start, stop, total = max_subarray(token_scores(dom, self.config))
        low, high = start // 2, (stop - 2) // 2  # the pieces at odd positions in the span
        return None if total <= 0 or low > high else (low, high)
