"""MSS: Kadane on the tag/text token sequence built from the Dom model."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lxml import etree, html

from newscrawl.extractors import get_extractor
from newscrawl.extractors.mss import (
    MSS,
    MSSConfig,
    covered_nodes,
    max_subarray,
    tag_runs,
    token_scores,
)
from newscrawl.html.parse import parse_html
from newscrawl.html.tags import VOID_TAGS

ARTICLE = [
    "The river rose again overnight and the town council met at dawn to plan the response.",
    "Volunteers filled sandbags along the embankment while engineers checked the old bridge.",
    "By noon the water had stopped rising, and most families were allowed to return home.",
]

PAGE = f"""<html><head><title>River rises again | Example Times</title></head><body>
<ul class="nav"><li><a href="/">Home</a></li><li><a href="/w">World</a></li>
<li><a href="/s">Sport</a></li><li><a href="/c">Culture</a></li></ul>
<div class="story"><h1>River rises again</h1>
<p>{ARTICLE[0]}</p><p>{ARTICLE[1]}</p><p>{ARTICLE[2]}</p></div>
<div class="footer"><a href="/a">About</a> | <a href="/t">Terms</a> | <a href="/p">Privacy</a></div>
</body></html>"""


def brute_force_max(scores: list[float]) -> float:
    return max(sum(scores[i:j]) for i in range(len(scores)) for j in range(i + 1, len(scores) + 1))


def test_max_subarray_small_cases() -> None:
    assert max_subarray([]) == (0, 0, 0.0)
    assert max_subarray([-3.25, 5, -3.25, 4, -10, 2]) == (1, 4, 5.75)
    assert max_subarray([-1, -2]) == (0, 1, -1)


@given(st.lists(st.integers(-20, 20).map(lambda n: n / 4), min_size=1, max_size=60))
def test_max_subarray_matches_brute_force(scores: list[float]) -> None:
    start, stop, total = max_subarray(scores)
    assert 0 <= start < stop <= len(scores)
    assert total == sum(scores[start:stop])
    assert total == brute_force_max(scores)


def test_picks_the_article_span() -> None:
    dom = parse_html(PAGE)
    result = MSS().extract(dom)
    assert result.extractor == "mss"
    # The three-word headline is not worth the two tags (-6.5) between it and the story.
    assert result.text.splitlines() == ARTICLE
    assert result.title == "River rises again"
    assert [dom.tag[n] for n in result.node_ids] == ["p", "p", "p"]


def test_node_ids_are_the_maximal_covered_nodes() -> None:
    story = "".join(f"<p>{text}</p><img src='{i}.png'>" for i, text in enumerate(ARTICLE))
    dom = parse_html(
        f"<html><body><ul><li><a href='/'>Home</a></li><li><a href='/n'>News</a></li></ul>"
        f"<div id='story'>{story}</div><p><a href='/a'>About</a></p></body></html>"
    )
    result = MSS().extract(dom)
    assert result.text.splitlines() == ARTICLE
    # All of the div's text is in the span: the div itself, not its children, is the node.
    assert [dom.elements[n].get("id") for n in result.node_ids] == ["story"]
    first, second, third = (dom.piece_text.index(text) for text in ARTICLE)
    tags = [dom.tag[n] for n in covered_nodes(dom, first, second)]
    assert tags == ["p", "img", "p"]  # the image between two covered pieces is covered
    assert [dom.tag[n] for n in covered_nodes(dom, second, third)] == ["p", "img", "p"]
    assert [dom.tag[n] for n in covered_nodes(dom, third, third)] == ["p"]


def test_scores_are_configurable() -> None:
    dom = parse_html(PAGE)
    cheap_tags = MSS(MSSConfig(tag_score=-0.1)).extract(dom)
    assert "Home" in cheap_tags.text and "Privacy" in cheap_tags.text
    costly_tags = get_extractor("mss", tag_score=-40.0).extract(dom)
    assert costly_tags.text in ARTICLE  # one paragraph: no tag is worth crossing
    no_words = MSS(MSSConfig(word_score=0.0)).extract(dom)
    assert no_words.text == ""  # no span has a positive sum


def test_closing_tags_are_tokens_and_void_tags_count_once() -> None:
    dom = parse_html("<html><body><p>two words<br>and three more</p></body></html>")
    # <html><body><p> | two words | <br> | and three more | </p></body></html>
    assert tag_runs(dom) == [3, 1, 3]
    assert token_scores(dom, MSSConfig()) == [-9.75, 2.0, -3.25, 3.0, -9.75]
    assert tag_runs(dom, close_tags=False) == [3, 1, 0]


def source_token_runs(source: str) -> list[int]:
    """Reference: tags between text runs, counted on lxml's element events as the source reads
    (an opening tag, the text, the children, a closing tag unless void, the tail)."""
    runs = [0]
    root = html.document_fromstring(source)
    head = root.find("head")
    for event, el in etree.iterwalk(root, events=("start", "end")):
        inside_head = head is not None and (el is head or head in el.iterancestors())
        if event == "start":
            runs[-1] += 1
            text = el.text
        else:
            runs[-1] += el.tag not in VOID_TAGS
            text = el.tail if el is not root else None
            inside_head = inside_head and el is not head
        if text and text.strip() and not inside_head:
            runs.append(0)
    return runs


def test_token_runs_match_the_source_tag_sequence() -> None:
    source = (
        "<html><head><title>T</title><meta name='x' content='y'></head><body>"
        "<div class='a'><h2>Head</h2><p>One <b>bold</b> and <i>it</i><br>tail</p>"
        "<img src='x.png'><ul><li><a href='/1'>L1</a></li><li></li></ul>after list</div>"
        "<table><tr><td>cell</td><td><hr></td></tr></table>end</body></html>"
    )
    assert tag_runs(parse_html(source)) == source_token_runs(source)


def test_words_and_symbols_and_cjk() -> None:
    dom = parse_html("<html><body><p>Hello, world!</p><p>天气很好</p></body></html>")
    # "Hello" "," "world" "!", and two characters per word.
    assert token_scores(dom, MSSConfig())[1::2] == [4.0, 2.0]
    assert token_scores(dom, MSSConfig(cjk_chars_per_word=0))[1::2] == [4.0, 1.0]


def test_page_without_text_is_empty() -> None:
    dom = parse_html("<html><head><title>Nothing</title></head><body><div></div></body></html>")
    result = MSS().extract(dom)
    assert not result and result.node_ids == () and result.title == "Nothing"


def test_deeply_nested_page() -> None:
    depth = 1500  # deeper than Python's recursion limit; libxml2 keeps up to ~2000 levels
    html = "<html><body>" + "<div>" * depth + "deep text here" + "</div>" * depth + "</body></html>"
    result = MSS().extract(parse_html(html))
    assert result.text == "deep text here"
