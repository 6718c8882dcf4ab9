"""The compiled text statistics (`newscrawl/extractors/blockmodel/_textstats.c`) give the learned
extractor's text columns exactly the numbers the numpy and regex code gives: character
classes, words, sentence ends, tokens and function-word shares, on generated texts in many
scripts and on the fixture pages' blocks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from newscrawl.extractors.blockmodel import textstats
from newscrawl.extractors.blockmodel.blocks import split_blocks
from newscrawl.html.parse import parse_html

pytestmark = pytest.mark.compiled

FIXTURES = Path(__file__).parent / "fixtures" / "pages" / "html"
# Runs of text as blocks hold them: words of several scripts, digits, sentence ends of both
# widths, bullets, odd spaces, an astral character, underscores, characters lower() lengthens.
_PIECES = ["The", "cat", "and", "of", "Ünïcödé", "ΟΔΟΣ", "İstanbul", "der", "и", "的", "中文",
           "12:30", "2024", "x_y", ".", "!", "?", "。", "！", " ", "  ", "\u00a0", "\u3000", "\n",
           "•", "»", "©", "(c)", "𝐀𝐁", "😀", "ǅ", "'", "\u2019"]  # fmt: skip


def _both(texts: list[str]) -> tuple[tuple, tuple]:
    """`text_columns` with the compiled code, then with numpy and regexes alone."""
    names = ("_compiled_counts", "_compiled_shares", "_compiled_languages")
    compiled = {name: getattr(textstats, name) for name in names}
    fast = textstats.text_columns(texts)
    try:
        for name in names:
            setattr(textstats, name, None)
        slow = textstats.text_columns(texts)
    finally:
        for name, function in compiled.items():
            setattr(textstats, name, function)
    return fast, slow


def _same(fast: tuple, slow: tuple) -> None:
    assert np.array_equal(fast[0], slow[0])  # every column, bit for bit
    assert np.array_equal(fast[1], slow[1])
    assert fast[2] == slow[2]


def test_the_compiled_counts_are_built_and_in_use() -> None:
    assert textstats.COMPILED_COUNTS and textstats._compiled_shares is not None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join), max_size=12))
def test_compiled_and_numpy_statistics_agree_on_generated_texts(texts: list[str]) -> None:
    _same(*_both(texts))


_WORDS = ["the", "and", "der", "die", "de", "la", "и", "в", "的", "中文", "日本", "x", "yang",
          "𠀀", "und", "het", "että"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_WORDS), max_size=400), max_size=12))
def test_compiled_and_python_language_guesses_agree(tokens: list[list[str]]) -> None:
    """The page's language from its tokens, compiled or not: ties, pages of ideographs, pages
    past the 3,000 words read (400 x 12)."""
    import itertools

    from newscrawl.html.stopwords import guess_language

    textstats.text_columns(["warm the class table"])
    expected = guess_language(itertools.chain.from_iterable(tokens))
    assert textstats._language(tokens) == expected


@pytest.mark.parametrize("page", sorted(FIXTURES.glob("*.html")), ids=lambda p: p.stem)
def test_compiled_and_numpy_statistics_agree_on_the_fixture_pages(page: Path) -> None:
    dom = parse_html(page.read_bytes())
    texts = textstats.block_texts(dom, split_blocks(dom))
    fast, slow = _both(texts)
    _same(fast, slow)
    assert fast[0][:, 1].max() > 0  # the pages have words: the columns are not all zero


def test_the_compiled_counts_refuse_what_is_not_exactly_str() -> None:
    """A str subclass could run code (its lower(), its __eq__) while the compiled code reads a
    list: refused with TypeError instead."""
    from newscrawl.extractors.blockmodel._textstats import counts, language_counts, stop_shares

    class Odd(str):
        def lower(self) -> str:  # type: ignore[override]
            texts.clear()
            return "x"

    texts: list[str] = [Odd("Hello"), "world"]
    table = np.zeros(0x10000, dtype=np.uint8)
    with pytest.raises(TypeError, match="texts must be str"):
        counts(texts, table, np.empty((2, 12)))
    with pytest.raises(TypeError, match="non-empty str"):
        stop_shares([[Odd("the")]], frozenset({"the"}), np.empty(1))
    with pytest.raises(TypeError, match="to tuples"):
        language_counts([["the"]], {"the": ["en"]}, table, 10, {"en": 0})


def test_the_compiled_language_counts_add_up_as_python_does() -> None:
    """The languages `counts` starts with are counted in C and added at the end; a language
    it lacks, or one given by an equal but other str, is counted into the dict itself: every
    total as one-at-a-time adding gives it."""
    from newscrawl.extractors.blockmodel._textstats import language_counts

    table = np.zeros(0x10000, dtype=np.uint8)
    other_en = "".join(["e", "n"])  # equal to "en", not the same object
    languages_of = {"the": ("en",), "die": ("de", "en"), "la": ("fr", "xx"), "of": (other_en,)}
    tokens = [["the", "die", "la"], ["of", "the", "zzz", "la"]]
    counts = {"en": 5, "de": 0, "fr": 1}
    assert language_counts(tokens, languages_of, table, 100, counts) == (0, 7)
    assert counts == {"en": 5 + 2 + 1 + 1, "de": 1, "fr": 3, "xx": 2}
    counts = {"en": 0}
    assert language_counts(tokens, languages_of, table, 2, counts) == (0, 2)
    assert counts == {"en": 2, "de": 1}  # only the first two tokens read
