"""Text statistics of a page's blocks: the `_TEXT` columns of the learned extractor's features.

Speed matters here (every page pays it), so the regular expressions run once over all of a
page's blocks joined by a separator rather than once per block, and character classes are
counted with one table lookup per character. The columns are exactly those the per-block
formulas give: the shipped model was trained on them, and a float that moves by one unit in the
last place can flip a tree split. Where the joined text could mislead (a block holding the
separator itself) the per-block formulas run instead.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable

import numpy as np

from newscrawl.dom import Dom
from newscrawl.learned.blocks import Blocks
from newscrawl.learned.stopwords import CJK, STOPWORDS, guess_language, stopword_share

__all__ = ["block_texts", "mark_columns", "text_columns"]

# Between joined blocks: a character no block has (checked), not a word, not a space.
_SEP = "\x00"
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"[.!?。！？](?:\s|$)|[。！？]")
# The same two patterns over joined blocks: the separator is a match of its own, and a
# sentence end before it counts as one before the end of its block (`$` above).
_WORD_JOINED = re.compile(r"\w+|\x00")
_SENTENCE_JOINED = re.compile(r"[.!?。！？](?:\s|$|(?=\x00))|[。！？]|\x00")
_BULLETS = re.compile("[|•·»›]")
_COPYRIGHT = re.compile(r"©|\([cC]\)")
# The seed-004 date pattern with `(?=\d)` put first: implied by every alternative, so it
# matches exactly where the pattern without it does, but lets the scan skip non-digits fast.
_DATE = re.compile(
    r"(?=\d)(?<!\d)(?:(?:19|20)\d\d|\d{1,2}:\d\d|\d{1,2}[./-]\d{1,2}[./-]\d{2,4})(?!\d)"
)
_BULLET_CODES = np.array([ord(c) for c in "|•·»›"], dtype=np.uint32)
_SENTENCE_CHARS = ".!?。！？\"'”"


def block_texts(dom: Dom, blocks: Blocks) -> list[str]:
    """`blocks.text(dom, k)` of every block, in one pass over the pieces.

    A block's pieces are contiguous, so its text is its first piece, then each next piece
    after a new line (its line number changed), nothing (glued) or a space: `join_pieces`.
    """
    text, line, glued = dom.piece_text, dom.piece_line, dom.piece_glued
    joined = [
        ("\n" if line[k] != line[k - 1] else "" if glued[k] else " ") + text[k] if k else text[k]
        for k in range(len(text))
    ]
    return [
        text[a] + "".join(joined[a + 1 : b]) if b - a > 1 else text[a]
        for a, b in zip(blocks.start, blocks.stop, strict=True)
    ]


def _char_classes() -> np.ndarray:
    """Class bits of every BMP code point: 1 space, 2 alnum, 4 digit, 8 upper, 16 alpha, 32 CJK."""
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
        )
    return table


_CLASSES: np.ndarray | None = None
# Which of the six class bits each of the 64 class values has, as a (64, 6) 0/1 matrix.
_BIT_MATRIX = ((np.arange(64)[:, None] >> np.arange(6)[None, :]) & 1).astype(np.float64)


def _class_counts(texts: list[str], codes: np.ndarray) -> np.ndarray:
    """Per text, counts of: characters, spaces, alphanumerics, digits, capitals, letters, CJK
    (`codes`: the code points of the texts joined without separator)."""
    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _char_classes()
    n = len(texts)
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    out = np.zeros((n, 7))
    out[:, 0] = lengths
    if not len(codes):
        return out
    # astral characters count as letters (emoji and rare scripts are rare enough)
    bits = np.where(codes < 0x10000, _CLASSES[np.minimum(codes, 0xFFFF)], 2 | 16)
    owner = np.repeat(np.arange(n, dtype=np.int64), lengths)
    # one count per (text, class value), then the bits of each value: whole numbers, exact
    per_value = np.bincount(owner * 64 + bits, minlength=n * 64).reshape(n, 64)
    out[:, 1:] = per_value @ _BIT_MATRIX
    return out


def _codes(texts: list[str]) -> np.ndarray:
    return np.frombuffer("".join(texts).encode("utf-32-le"), dtype=np.uint32)


def text_columns(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The `_TEXT` columns of `features` up to the stop-word share (13 columns), and the
    digit count of each text."""
    codes = _codes(texts)
    counts = _class_counts(texts, codes)
    chars = np.maximum(counts[:, 0], 1)
    out = np.zeros((len(texts), 13))
    out[:, 0] = np.log1p(counts[:, 0])
    out[:, 5] = (counts[:, 0] - counts[:, 1] - counts[:, 2]) / chars  # punctuation and symbols
    out[:, 6] = counts[:, 3] / chars
    out[:, 7] = counts[:, 4] / np.maximum(counts[:, 5], 1)
    out[:, 12] = counts[:, 6] / chars
    words = np.array([len(text.split()) for text in texts], dtype=np.float64)
    sentences = _per_block_counts(texts, _SENTENCE_JOINED, _SENTENCE_END)
    found, token_chars, stop = _token_columns(texts)
    out[:, 1] = np.log1p(words)
    out[:, 2] = np.log1p(found)
    out[:, 3] = np.minimum(sentences, 50)
    out[:, 4] = sentences / np.maximum(words, 1)
    out[:, 8] = token_chars / np.maximum(found, 1)
    out[:, 9] = [bool(s) and s[-1] in _SENTENCE_CHARS for s in map(str.rstrip, texts)]
    out[:, 10] = [bool(text) and text[0].isupper() for text in texts]
    out[:, 11] = stop
    return out, counts[:, 3]


def _separated(texts: list[str]) -> bool:
    """Whether the separator can join `texts` (no text holds it)."""
    return not any(_SEP in text for text in texts)


def _matches(texts: list[str], pattern: re.Pattern[str]) -> tuple[list[str], np.ndarray]:
    """All matches of `pattern` (which matches the separator too) over the joined texts, and
    the index of each separator among them."""
    found = pattern.findall(_SEP.join(texts))
    seps = np.flatnonzero(np.fromiter(map(_SEP.__eq__, found), dtype=bool, count=len(found)))
    return found, seps


def _per_block_counts(
    texts: list[str], joined: re.Pattern[str], alone: re.Pattern[str]
) -> np.ndarray:
    """How many matches of `alone` each text holds, counted in one pass with `joined`."""
    if not _separated(texts):
        return np.array([len(alone.findall(t)) for t in texts], dtype=np.float64)
    found, seps = _matches(texts, joined)
    bounds = np.concatenate([[-1], seps, [len(found)]])
    return (np.diff(bounds) - 1).astype(np.float64)


def _token_columns(texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per text: its `\\w+` tokens (lower-cased), their characters, the share of them that
    are function words of the page's language."""
    lowered = [text.lower() for text in texts]
    if not _separated(lowered):
        return _token_columns_alone(texts, lowered)
    tokens, seps = _matches(lowered, _WORD_JOINED)
    lang = guess_language(filter(_SEP.__ne__, tokens))
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    stop_words = STOPWORDS.get(lang)
    is_stop: Callable[[str], bool] = stop_words.__contains__ if stop_words else _never
    stops = np.fromiter(map(is_stop, tokens), dtype=np.int64, count=len(tokens))
    bounds = np.concatenate([[-1], seps, [len(tokens)]])
    found = np.diff(bounds) - 1
    # sums over each block's tokens, which lie strictly between two separators
    first, stop = bounds[:-1] + 1, bounds[1:]
    prefix = np.concatenate([[0], np.cumsum(lengths)])
    chars = prefix[stop] - prefix[first]
    prefix = np.concatenate([[0], np.cumsum(stops)])
    stop_count = prefix[stop] - prefix[first]
    share = _stop_shares(texts, lang, found, stop_count)
    return found.astype(np.float64), chars.astype(np.float64), share


def _never(_: str) -> bool:
    return False


def _stop_shares(
    texts: list[str], lang: str, found: np.ndarray, stop_count: np.ndarray
) -> np.ndarray:
    """`stopwords.stopword_share` of each text from its token and function-word counts."""
    if lang == "zh":  # counted over CJK characters, not tokens
        return np.array([stopword_share([], t, lang) for t in texts], dtype=np.float64)
    if not STOPWORDS.get(lang):
        return np.zeros(len(texts))
    # int / int as Python divides it: both exact in float64, one correctly rounded division
    return np.divide(stop_count, found, out=np.zeros(len(texts)), where=found > 0)


def _token_columns_alone(
    texts: list[str], lowered: list[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_token_columns` block by block (texts that hold the separator)."""
    tokens = [_WORD.findall(text) for text in lowered]
    lang = guess_language(itertools.chain.from_iterable(tokens))
    found = np.array([len(t) for t in tokens], dtype=np.float64)
    chars = np.array([sum(map(len, t)) for t in tokens], dtype=np.float64)
    share = [stopword_share(t, text, lang) for t, text in zip(tokens, texts, strict=True)]
    return found, chars, np.array(share, dtype=np.float64)


def mark_columns(texts: list[str], digits: np.ndarray) -> np.ndarray:
    """has_date, bullets, has_copyright of each text (`digits`: its digit count; a text
    without digits holds no date to look for)."""
    out = np.zeros((len(texts), 3))
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    codes = _codes(texts)
    owner = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    out[:, 1] = np.bincount(owner[np.isin(codes, _BULLET_CODES)], minlength=len(texts))
    dated = np.flatnonzero(digits > 0)
    with_digits = [texts[k] for k in dated]
    if _separated(with_digits):
        out[dated, 0] = _has_match(with_digits, _DATE)
    else:
        out[dated, 0] = [_DATE.search(t) is not None for t in with_digits]
    joined = "".join(texts)
    if "©" in joined or "(c)" in joined or "(C)" in joined:  # the pattern's three strings
        out[:, 2] = [_COPYRIGHT.search(t) is not None for t in texts]
    return out


def _has_match(texts: list[str], pattern: re.Pattern[str]) -> np.ndarray:
    """1 for each text where `pattern` (which cannot match the separator) matches, from one
    pass over the joined texts."""
    hit = np.zeros(len(texts))
    if not texts:
        return hit
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    starts = np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])
    positions = [m.start() for m in pattern.finditer(_SEP.join(texts))]
    if positions:
        hit[np.searchsorted(starts, positions, side="right") - 1] = 1.0
    return hit
