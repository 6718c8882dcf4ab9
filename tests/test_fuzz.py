"""Fuzzing: mutated pages through the parser and every extractor never raise an undocumented error.

Generated article pages are cut, spliced, byte-flipped and wrapped in hostile markup by
hypothesis; each mutant is parsed and handed to every registered extractor. The only error a
caller may see is `PageError` from the parser (binary, empty, too large); an extractor returns
an `Extraction`, possibly empty. Time per page is bounded by hypothesis' per-example deadline,
not by an assertion on a total.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from newscrawl.extractors import EXTRACTORS, get_extractor
from newscrawl.extractors.extractor_base import Extraction
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError

_WORDS = [
    "harbour",
    "bridge",
    "reopened",
    "monday",
    "repairs",
    "engineers",
    "joints",
    "deck",
    "traffic",
    "cracks",
]

_HOSTILE = (
    b"<div>" * 3000,
    b"</div></p></td>" * 50,
    b"<noscript>" + b"<p>quiet words here</p>" * 200 + b"</noscript>",
    b"<noframes><p>frame</p></noframes>",
    b"<?xml version='1.0'?><!DOCTYPE x [<!ENTITY a 'aaaa'>]>",
    b"<script>var s = '</div><p>';</script>",
    b"\x00\x01\x02\xff\xfe",
    b"\xef\xbb\xbf",
    b"<meta charset='utf-16'>",
    b"<table><tr><td><table><tr><td>" * 40,
    "<p>Ünïcödé — 漢字 テキスト русский</p>".encode(),
    b"<a href='javascript:alert(1)'>x</a>" * 30,
    b"<!--",
    b"<![CDATA[",
)


def _article(paragraphs: list[list[int]]) -> bytes:
    body = "".join(
        "<p>" + " ".join(_WORDS[i % len(_WORDS)] for i in words) + ".</p>" for words in paragraphs
    )
    return (
        "<html><head><title>Harbour bridge</title></head><body>"
        "<ul class='nav'><li><a href='/a'>News</a></li><li><a href='/b'>Sport</a></li></ul>"
        f"<article><h1>Harbour bridge</h1>{body}</article>"
        "<footer>© Example</footer></body></html>"
    ).encode()


@st.composite
def mutated_pages(draw: st.DrawFn) -> bytes:
    words = st.lists(st.integers(0, 50), min_size=0, max_size=40)
    page = _article(draw(st.lists(words, min_size=0, max_size=8)))
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(page)))
        kind = draw(st.sampled_from(("cut", "insert", "hostile", "flip", "truncate")))
        if kind == "cut":
            page = page[:at] + page[at + draw(st.integers(1, 200)) :]
        elif kind == "insert":
            page = page[:at] + draw(st.binary(max_size=64)) + page[at:]
        elif kind == "hostile":
            page = page[:at] + draw(st.sampled_from(_HOSTILE)) + page[at:]
        elif kind == "flip" and page:
            at = min(at, len(page) - 1)
            page = page[:at] + bytes([page[at] ^ draw(st.integers(1, 255))]) + page[at + 1 :]
        else:
            page = page[:at]
    return page


_EXTRACTORS = {name: get_extractor(name) for name in EXTRACTORS}


@settings(
    max_examples=60,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)
@given(mutated_pages())
def test_mutated_pages_never_raise_past_the_parser(page: bytes) -> None:
    try:
        dom = parse_html(page, url="http://example.org/news/bridge")
    except PageError:
        return  # the documented refusal: binary, empty or too large
    for name, extractor in _EXTRACTORS.items():
        found = extractor.extract(dom)
        assert isinstance(found, Extraction), name
        assert isinstance(found.text, str) and "<p>" not in found.text, name


@pytest.mark.parametrize("hostile", _HOSTILE, ids=range(len(_HOSTILE)))
def test_each_hostile_fragment_inside_an_article(hostile: bytes) -> None:
    page = _article([[1, 2, 3, 4, 5, 6, 7, 8]] * 5).replace(b"<h1>", hostile + b"<h1>")
    try:
        dom = parse_html(page)
    except PageError:
        return
    for extractor in _EXTRACTORS.values():
        assert isinstance(extractor.extract(dom), Extraction)
