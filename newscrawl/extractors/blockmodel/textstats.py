"""Text statistics of a page's blocks: the `_TEXT` columns of the learned extractor's features.

Speed matters here (every page pays it): character classes (and bullets) are counted with one
table lookup per character and one `np.bincount`, block texts are built in one pass over the
pieces, and the date pattern is led by a digit look-ahead so the scan skips text fast. The columns
are exactly those of the per-block formulas: the shipped model was trained on them, and a float
that moves by one unit in the last place can flip a tree split.
"""

from __future__ import annotations

import itertools
import re
from functools import cache

import numpy as np

from newscrawl.extractors.blockmodel.blocks import Blocks
from newscrawl.html.dom import Dom
from newscrawl.html.stopwords import (
    CJK,
    GUESS_WORDS,
    LANGUAGES_OF,
    STOPWORDS,
    guess_language,
    language_of_counts,
    stopword_share,
)

__all__ = ["COMPILED_COUNTS", "block_texts", "lower_words", "mark_columns", "text_columns"]

try:  # the compiled counts (an optional extension: pip builds it where a C compiler is found)
    from newscrawl.extractors.blockmodel._textstats import counts as _compiled_counts
    from newscrawl.extractors.blockmodel._textstats import language_counts as _compiled_languages
    from newscrawl.extractors.blockmodel._textstats import stop_shares as _compiled_shares
except ImportError:  # pragma: no cover - exercised where the extension was not built
    _compiled_counts = _compiled_shares = _compiled_languages = None

#: Whether the text statistics are counted in compiled code (else numpy and regexes).
COMPILED_COUNTS = _compiled_counts is not None

_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|[。！？]")
_COPYRIGHT = re.compile(r"©|\([cC]\)")
# NCE's comment-date pattern (`newscrawl.extractors.nce`) with `(?=\d)` put first: implied by
# every alternative, so it matches exactly where the pattern without it does, but lets the scan
# skip non-digits fast.
_DATE = re.compile(
    r"(?=\d)(?<!\d)(?:(?:19|20)\d\d|\d{1,2}:\d\d|\d{1,2}[./-]\d{1,2}[./-]\d{2,4})(?!\d)"
)
_BULLET_CHARS = "|•·»›"
_SENTENCE_CHARS = ".!?。！？\"'”"


def block_texts(dom: Dom, blocks: Blocks) -> list[str]:
    """`blocks.text(dom, k)` of every block, in one pass over the pieces.

    A block's pieces are contiguous (`Dom.ranges_text`)."""
    return dom.ranges_text(blocks.start, blocks.stop)


@cache  # one table for every page: a pure function of str's character methods
def _char_classes() -> np.ndarray:
    """Class bits of every BMP code point: 1 space, 2 alnum, 4 digit, 8 upper, 16 alpha, 32 CJK,
    64 bullet."""
    table = np.zeros(0x10000, dtype=np.uint8)
    for code in range(0x10000):
        c = chr(code)
        table[code] = (
            c.isspace()
            | c.isalnum() << 1
            | c.isdigit() << 2
            | c.isupper() << 3
            | c.isalpha() << 4
            | bool(CJK.match(c)) << 5
            | (c in _BULLET_CHARS) << 6
        )
    return table


_BITS = 7
# Which of the class bits each of the 128 class values has, as a (128, 7) 0/1 matrix.
_BIT_MATRIX = ((np.arange(1 << _BITS)[:, None] >> np.arange(_BITS)[None, :]) & 1).astype(np.float64)


class _Chars:
    """The characters of a page's texts joined: code points, class bits, owning text, where
    each text starts and ends (for runs and neighbours that must not cross texts)."""

    def __init__(self, texts: list[str]) -> None:
        self.count = len(texts)
        self.lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
        self.codes = np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)
        codes = self.codes
        # astral characters count as letters (emoji and rare scripts are rare enough)
        self.bits = np.where(codes < 0x10000, _char_classes()[np.minimum(codes, 0xFFFF)], 2 | 16)
        self.owner = np.repeat(np.arange(len(texts), dtype=np.int64), self.lengths)
        stops = np.cumsum(self.lengths)
        filled = self.lengths > 0
        self.first = np.zeros(len(codes), dtype=bool)  # the first character of its text
        self.first[(stops - self.lengths)[filled]] = True
        self.last = np.zeros(len(codes), dtype=bool)  # the last character of its text
        self.last[stops[filled] - 1] = True

    def per_text(self, flags: np.ndarray) -> np.ndarray:
        """How many characters of each text have `flags` set (whole numbers, as floats)."""
        return np.bincount(self.owner, weights=flags, minlength=self.count)


def _class_counts(chars: _Chars) -> np.ndarray:
    """Per text, counts of: characters, spaces, alphanumerics, digits, capitals, letters, CJK,
    bullets."""
    n = chars.count
    out = np.zeros((n, 1 + _BITS))
    out[:, 0] = chars.lengths
    if not len(chars.codes):
        return out
    # one count per (text, class value), then the bits of each value: whole numbers, exact
    keys = chars.owner << _BITS | chars.bits
    per_value = np.bincount(keys, minlength=n << _BITS).reshape(n, 1 << _BITS)
    out[:, 1:] = per_value @ _BIT_MATRIX
    return out


def _words_and_sentences(chars: _Chars) -> tuple[np.ndarray, np.ndarray]:
    """Per text, `len(text.split())` and `len(_SENTENCE_END.findall(text))`, from the
    characters: a word starts at a non-space after a space or at its text's start (str.split
    and re's `\\s` both read `str.isspace`); a sentence ends at each of 。！？ and at each of
    .!? followed by a space or its text's end (the space the pattern takes cannot start a
    match, so these are its matches, one each)."""
    if not len(chars.codes):
        return np.zeros(chars.count), np.zeros(chars.count)
    space = (chars.bits & 1) > 0
    after_space = np.concatenate([[True], space[:-1]]) | chars.first
    words = chars.per_text(~space & after_space)
    codes = chars.codes
    before_space = np.concatenate([space[1:], [True]]) | chars.last
    latin = (codes == 0x2E) | (codes == 0x21) | (codes == 0x3F)  # . ! ?
    wide = (codes == 0x3002) | (codes == 0xFF01) | (codes == 0xFF1F)  # 。 ！ ？
    return words, chars.per_text(latin & before_space | wide)


def lower_words(text: str) -> list[str]:
    """The `\\w+` tokens of `text`, lower-cased: the words every text column counts."""
    return _WORD.findall(text.lower())


def text_columns(texts: list[str]) -> tuple[np.ndarray, np.ndarray, list[list[str]]]:
    """The `_TEXT` columns of `features` up to the stop-word share (13 columns), the digit
    and bullet counts of each text (columns), and each text's `\\w+` tokens, lower-cased."""
    if _compiled_counts is not None and texts:
        counts, words, sentences, tokens, found, token_chars = _compiled_statistics(texts)
    else:
        counts, words, sentences, tokens, found, token_chars = _statistics(texts)
    chars = np.maximum(counts[:, 0], 1)
    out = np.zeros((len(texts), 13))
    out[:, 0] = np.log1p(counts[:, 0])
    out[:, 5] = (counts[:, 0] - counts[:, 1] - counts[:, 2]) / chars  # punctuation and symbols
    out[:, 6] = counts[:, 3] / chars
    out[:, 7] = counts[:, 4] / np.maximum(counts[:, 5], 1)
    out[:, 12] = counts[:, 6] / chars
    out[:, 1] = np.log1p(words)
    out[:, 2] = np.log1p(found)
    out[:, 3] = np.minimum(sentences, 50)
    out[:, 4] = sentences / np.maximum(words, 1)
    out[:, 8] = token_chars / np.maximum(found, 1)
    out[:, 9] = [bool(s) and s[-1] in _SENTENCE_CHARS for s in map(str.rstrip, texts)]
    out[:, 10] = [bool(text) and text[0].isupper() for text in texts]
    out[:, 11] = _stop_share(tokens, texts)
    return out, counts[:, [3, 7]], tokens


def _language(tokens: list[list[str]]) -> str:
    """The page's language from its blocks' tokens (`stopwords.guess_language`)."""
    if _compiled_languages is None:
        return guess_language(itertools.chain.from_iterable(tokens))
    counts = dict.fromkeys(STOPWORDS, 0)
    cjk, total = _compiled_languages(tokens, LANGUAGES_OF, _char_classes(), GUESS_WORDS, counts)
    return language_of_counts(counts, cjk, total)


# Per text: class counts (8 columns), words, sentence ends, tokens, their count and characters.
_Statistics = tuple[np.ndarray, np.ndarray, np.ndarray, list[list[str]], np.ndarray, np.ndarray]


def _statistics(texts: list[str]) -> _Statistics:
    """The counts in numpy and regular expressions (where the compiled counts are not built)."""
    page = _Chars(texts)
    counts = _class_counts(page)
    words, sentences = _words_and_sentences(page)
    tokens = list(map(lower_words, texts))
    found = np.fromiter(map(len, tokens), dtype=np.float64, count=len(texts))
    token_chars = np.array([sum(map(len, t)) for t in tokens], dtype=np.float64)
    return counts, words, sentences, tokens, found, token_chars


def _compiled_statistics(texts: list[str]) -> _Statistics:
    """The same counts in one compiled pass over each text (`_textstats.c`)."""
    assert _compiled_counts is not None
    out = np.empty((len(texts), 12))
    tokens = _compiled_counts(texts, _char_classes(), out)
    return out[:, :8], out[:, 8], out[:, 9], tokens, out[:, 10], out[:, 11]


def _stop_share(tokens: list[list[str]], texts: list[str]) -> np.ndarray:
    """Per text, the share of its tokens that are function words of the page's language."""
    lang = _language(tokens)
    stop = STOPWORDS.get(lang)
    if lang == "zh" or not stop:  # zh: counted over CJK characters, not tokens
        pairs = zip(tokens, texts, strict=True)
        return np.array([stopword_share(t, text, lang) for t, text in pairs], dtype=np.float64)
    if _compiled_shares is not None:
        share = np.empty(len(tokens))
        _compiled_shares(tokens, stop, share)
        return share
    # `stopword_share` without its per-call lookups: int / int, the same float
    return np.array([sum(map(stop.__contains__, t)) / len(t) if t else 0.0 for t in tokens])


def mark_columns(texts: list[str], counts: np.ndarray) -> np.ndarray:
    """has_date, bullets, has_copyright of each text (`counts`: its digits and bullets, from
    `text_columns`; a text with fewer than three digits holds no date to look for)."""
    out = np.zeros((len(texts), 3))
    digits = counts[:, 0]
    out[:, 1] = counts[:, 1]
    search = _DATE.search
    # every date or time the pattern takes has three digits or more: fewer texts are searched
    out[:, 0] = [digits[k] >= 3 and search(text) is not None for k, text in enumerate(texts)]
    joined = "".join(texts)
    if "©" in joined or "(c)" in joined or "(C)" in joined:  # the pattern's three strings
        out[:, 2] = [_COPYRIGHT.search(t) is not None for t in texts]
    return out
