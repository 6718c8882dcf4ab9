"""The DOM model: one linear pass gives every per-node measure the extractors read."""

from __future__ import annotations

import tracemalloc

import pytest

from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError, size_error

PAGE = b"""<html lang="en"><head><title>Headline | Site</title>
<meta property="og:title" content="Headline"><script>var hidden = 1;</script></head>
<body><div id="main">Hello <b>big</b>world<br>next line
<p>para <a href="/x">link text</a> tail</p>after</div>
<!-- a comment --><style>p {}</style>end</body></html>"""


@pytest.fixture()
def dom() -> Dom:
    return parse_html(PAGE, url="http://example.org/")


def node(dom: Dom, tag: str) -> int:
    return dom.tag.index(tag)


def test_nodes_are_numbered_in_preorder(dom: Dom) -> None:
    assert dom.tag == ["html", "head", "title", "meta", "body", "div", "b", "br", "p", "a"]
    assert dom.parent == [-1, 0, 1, 1, 0, 4, 5, 5, 5, 8]
    assert dom.depth[node(dom, "a")] == 4
    assert dom.children[node(dom, "div")] == [6, 7, 8]


def test_subtree_is_a_contiguous_id_range(dom: Dom) -> None:
    div = node(dom, "div")
    assert (div, dom.end[div]) == (5, 10)
    assert dom.is_ancestor(div, node(dom, "a"))
    assert not dom.is_ancestor(node(dom, "a"), div)


def test_invisible_elements_get_no_nodes_and_no_text(dom: Dom) -> None:
    assert "script" not in dom.tag and "style" not in dom.tag
    assert "hidden" not in dom.text(0)
    assert dom.text_len(node(dom, "head")) == 0


def test_subtree_measures(dom: Dom) -> None:
    p = node(dom, "p")
    assert dom.text(p) == "para link text tail"
    assert dom.text_len(p) == len("para") + len("link text") + len("tail")
    assert dom.link_chars(p) == len("link text")
    assert dom.words(p) == 4 and dom.link_words(p) == 2
    assert dom.tag_count(p) == 2 and dom.link_count(p) == 1
    assert dom.link_density(p) == pytest.approx(9 / 17)
    assert dom.href[node(dom, "a")] == "/x"
    assert dom.own_text_len[p] == len("para") + len("tail")


def test_text_keeps_blocks_as_lines(dom: Dom) -> None:
    assert dom.text(node(dom, "body")).split("\n") == [
        "Hello bigworld",
        "next line",
        "para link text tail",
        "after",
        "end",
    ]


def test_text_of_nested_selection_does_not_repeat(dom: Dom) -> None:
    assert dom.text_of([node(dom, "p"), node(dom, "a")]) == "para link text tail"


def test_head_metadata(dom: Dom) -> None:
    assert dom.title == "Headline | Site"
    assert dom.meta["og:title"] == "Headline"
    assert dom.lang == "en"
    assert dom.tag_path(node(dom, "a")) == ("html", "body", "div", "p", "a")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"   \n ", "empty"),
        (b"\x89PNG\r\n\x1a\n" + bytes(200), "binary"),
        (bytes(range(256)) * 10, "binary"),
    ],
)
def test_bad_input_gives_a_clear_error(data: bytes, message: str) -> None:
    with pytest.raises(PageError, match=message):
        parse_html(data)


def test_page_over_the_size_limit_is_refused_at_once() -> None:
    big = b"<html><body>" + b"<p>word word word</p>" * (50 * 1024 * 1024 // 21) + b"</body></html>"
    tracemalloc.start()
    with pytest.raises(PageError, match=r"over the 16 MiB limit"):
        parse_html(big)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # refused from its size alone: a tree of it would cost gigabytes, a decoded copy 50 MB
    assert peak < len(big) // 4


def test_deeply_nested_page_parses_without_recursion() -> None:
    deep = b"<html><body>" + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000 + b"</body></html>"
    dom = parse_html(deep, max_nodes=0)  # 100,002 elements: over the crawl's node budget
    assert len(dom) > 100
    assert dom.end[0] == len(dom)
    assert max(dom.depth) == len(dom) - 1


def test_wrong_declared_charset_is_overruled_by_valid_utf8() -> None:
    page = '<meta charset="iso-8859-1"><p>Ελληνικά κείμενα café</p>'.encode()
    assert "Ελληνικά κείμενα café" in parse_html(page).text(0)


def test_plain_text_without_markup_becomes_a_page() -> None:
    dom = parse_html(b"just some words")
    assert dom.text(0) == "just some words"


def test_line_break_splits_lines_but_inline_links_do_not() -> None:
    dom = parse_html(b"<table><tr><td>First.<br>Second part <a href=x>link</a> tail</td></tr>")
    assert dom.text(0) == "First.\nSecond part link tail"


def test_a_mangled_title_end_does_not_swallow_the_page() -> None:
    page = b"<html><head><title>Headline</titvalue x></head><body><p>" + b"Body text. " * 30
    dom = parse_html(page + b"</p></body></html>")
    assert "Body text." in dom.text(0)


# -- issue 10: depth limit, <noframes>, encoding decision, size message ---------------------------

ARTICLE_TEXT = "The bridge opened on Monday after four years of work. " * 20


def deep_page(levels: int) -> bytes:
    return (
        b"<html><head><title>Deep</title></head><body><header>Site name</header>"
        + b"<div class='wrap'>" * levels
        + f"<article><h1>Headline</h1><p>{ARTICLE_TEXT}</p></article>".encode()
        + b"</div>" * levels
        + b"<footer>Footer text</footer></body></html>"
    )


@pytest.mark.parametrize("levels", [3_000, 20_000])
def test_text_below_the_parser_depth_limit_is_kept(levels: int) -> None:
    dom = parse_html(deep_page(levels))
    assert max(dom.depth) < 2048
    text = dom.text(0)
    assert "Site name" in text and "Footer text" in text
    assert ARTICLE_TEXT.strip() in text
    # The content keeps its own structure: only wrappers in the middle lost their tags.
    article = dom.tag.index("article")
    assert dom.text(article).startswith("Headline\nThe bridge opened")


@pytest.mark.parametrize("name", ["nce", "mss", "cetd-tpc"])
def test_extractors_find_the_article_of_a_page_deeper_than_the_parser_limit(name: str) -> None:
    from newscrawl.extractors import get_extractor

    extraction = get_extractor(name).extract(parse_html(deep_page(3_000)))
    assert "The bridge opened on Monday" in extraction.text


def test_noframes_content_is_text_not_markup() -> None:
    page = (
        b"<html><body><noframes><p>Use a <b>frames</b> browser &amp; more</p>"
        b"<script>var x = '<p>';</script></noframes><p>After</p></body></html>"
    )
    dom = parse_html(page)
    text = dom.text(0)
    assert "<" not in text and ">" not in text
    assert text.split("\n") == ["Use a frames browser & more", "After"]


def test_noframes_with_control_characters_still_parses() -> None:
    page = b"<html><body><noframes>\x1b\x01 lead<p>Para</p></noframes></body></html>"
    assert parse_html(page).text(0) == "lead\nPara"


@pytest.mark.parametrize("inner", ["<!-- only a comment -->", "<?pi?>", "<br>", ""])
def test_noframes_without_text_adds_nothing(inner: str) -> None:
    page = f"<html><body><p>Body</p><noframes>{inner}</noframes></body></html>"
    assert parse_html(page.encode()).text(0) == "Body"


def test_noframes_of_a_frameset_page_gives_its_text() -> None:
    page = (
        b"<html><frameset><frame src='a.html'><noframes><body><p>Only text here</p>"
        b"</body></noframes></frameset></html>"
    )
    assert parse_html(page).text(0) == "Only text here"


def test_dom_records_the_encoding_decision() -> None:
    page = "<meta charset='utf-8'><title>Русский заголовок</title><p>Москва - столица России.</p>"
    dom = parse_html(page.encode("cp1251"))
    assert dom.title == "Русский заголовок"
    assert (dom.encoding, dom.encoding_source) == ("cp1251", "detected")
    dom = parse_html(page.encode())
    assert (dom.encoding, dom.encoding_source) == ("utf-8", "declared")
    dom = parse_html(page)
    assert (dom.encoding, dom.encoding_source) == ("", "text")


def test_size_error_counts_mebibytes() -> None:
    limit = 16 * 1024 * 1024
    with pytest.raises(PageError, match=r"^page is 16\.5 MiB, over the 16 MiB limit$"):
        parse_html(b"x" * (limit + limit // 32), max_bytes=limit)
    assert str(size_error(limit)) == "page is over the 16 MiB limit"


def _forum_shell(posts: str, shell: str = "") -> bytes:
    """A forum page as Discourse serves it: a script app, the posts inside <noscript>."""
    return f"""<html><head><title>Thread</title></head><body>
<noscript>Please enable JavaScript.</noscript>
<div id="app">{shell}</div><script>start()</script>
<noscript data-path="/t/1"><div class="post"><p>{posts}</p></div></noscript>
<noscript><img src="/pixel.gif"></noscript></body></html>""".encode()


def test_noscript_holding_the_page_content_is_read() -> None:
    post = " ".join(f"word{k}" for k in range(200))
    dom = parse_html(_forum_shell(post))
    assert post in dom.text(0)
    assert "enable JavaScript" not in dom.text(0)


def test_small_or_secondary_noscript_stays_hidden() -> None:
    short = parse_html(_forum_shell("too few words to be the page"))
    assert "too few" not in short.text(0)
    post = " ".join(f"word{k}" for k in range(200))
    article = " ".join(f"story{k}" for k in range(400))
    duplicate = parse_html(_forum_shell(post, shell=f"<p>{article}</p>"))
    assert article in duplicate.text(0) and post not in duplicate.text(0)


# -- markup a browser does not keep in <head> -------------------------------------------------


def test_an_unknown_element_in_head_starts_the_body() -> None:
    # libxml2 reads everything after <mbox> (here the whole article) into <head>; a browser ends
    # the head at the first element HTML does not allow there and shows the rest.
    page = (
        b"<html><head><title>Headline</title><meta name='x' content='y'><mbox>"
        b"<table><tr><td><p>" + ARTICLE_TEXT.encode() + b"</p></td></tr></table>"
        b"</mbox></head><body><p>Footer text</p></body></html>"
    )
    dom = parse_html(page)
    assert dom.title == "Headline" and dom.meta["x"] == "y"
    assert dom.text(0).split("\n") == [ARTICLE_TEXT.strip(), "Footer text"]
    from newscrawl.extractors import get_extractor

    assert "The bridge opened" in get_extractor("learned").extract(dom).text


def test_text_in_head_starts_the_body_and_head_markup_stays_out() -> None:
    page = b"<html><head><title>T</title><style>p {}</style>Loose words<p>Para</p></head>"
    page += b"<body>Body lead<p>Second</p></body></html>"
    assert parse_html(page).text(0).split("\n") == ["Loose words", "Para", "Body lead", "Second"]
    plain = b"<html><head><title>T</title><script>x = 1</script></head><body><p>Only</p></body>"
    assert parse_html(plain + b"</html>").text(0) == "Only"


def test_page_title_is_the_headline_not_the_site_name_in_an_h1() -> None:
    page = (
        "<html><head><title>Harbour bridge reopens | Daily</title></head><body>"
        "<h1>Daily</h1><article><h1>Harbour bridge reopens</h1><p>At dawn.</p></article>"
    )
    assert page_title(parse_html(page)) == "Harbour bridge reopens"
    untitled = page.replace("<title>Harbour bridge reopens | Daily</title>", "")
    assert page_title(parse_html(untitled)) == "Daily"  # no <title>: the first <h1>
    no_h1 = page.replace("h1>", "h2>")
    assert page_title(parse_html(no_h1)) == "Harbour bridge reopens"  # the <title>'s longest part
    og = page.replace("<head>", "<head><meta property='og:title' content='Bridge reopens'>")
    assert page_title(parse_html(og)) == "Harbour bridge reopens"  # <title> and <h1> agree
    og_only = og.replace("<title>Harbour bridge reopens | Daily</title>", "")
    assert page_title(parse_html(og_only)) == "Bridge reopens"  # og:title over an unconfirmed h1


def test_text_and_links_after_the_document_end_stay_in_the_body() -> None:
    # A browser ignores </body> and </html>; libxml2 2.14 dropped what follows them.
    page = (
        "<html><body><p>Header of the page.</p></body></html>\n"
        "<article><p>The story comes after the end tags, with <a href='/more'>a link</a>.</p>"
        "</article></BODY ></HTML>"
    )
    dom = parse_html(page)
    assert dom.text(0).splitlines() == [
        "Header of the page.",
        "The story comes after the end tags, with a link.",
    ]
    assert list(dom.href.values()) == ["/more"]


@pytest.mark.parametrize(
    ("body", "text"),
    [
        # a link and the span beside it are laid apart by the page's CSS: two words
        ('<a href="/u/lena">lena_rides</a><span>New member</span>', "lena_rides New member"),
        (
            "<label>Colour</label><select><option>Olive</option></select><button>Add</button>",
            "Colour Add",
        ),
        ("<a>Market Tote 18 L</a><span>79.00 EUR</span>", "Market Tote 18 L 79.00 EUR"),
        # styling elements may split a word: a drop cap, a styled syllable, letter by letter
        ('<span class="dropcap">T</span>he tide', "The tide"),
        ("<b>W</b><i>ord</i>", "Word"),
        ("<span>H</span><span>i</span>", "Hi"),
        ("foot<sup>1</sup>", "foot1"),
        # empty elements inside a word hold no text of their own: nothing is laid apart
        ("will le<a></a><a></a>ave", "will leave"),
        ("<a>x</a><a></a><span>y</span>", "x y"),
        # Chinese has no spaces between words: a link in a sentence stays in its word run
        ("北京<a>建设</a><span>成能够</span>", "北京建设成能够"),
    ],
)
def test_elements_side_by_side_are_words_apart_unless_they_may_split_one(
    body: str, text: str
) -> None:
    dom = parse_html(f"<html><body><p>{body}</p></body></html>")
    assert dom.text(dom.body) == text


@pytest.mark.parametrize(
    "end",
    ["</body>", "</BODY >", "</html\u3000>", "</Html\x1c\n>", "</body\u00a0\u2029>", "</bodyx>"],
)
def test_a_utf8_body_parses_as_its_text_does(end: str) -> None:
    # A UTF-8 body is parsed from its own bytes, not encoded again: the same tree as its text,
    # with every end tag a str pattern's whitespace allows cut alike.
    page = (
        f"<html><head><title>Čaj</title></head><body><p>Před koncem.</p>{end}"
        "<p>Za koncem, s <a href='/dál'>odkazem</a>.</p></body></html>"
    )
    from newscrawl.html import tree

    cut = tree._DOCUMENT_END.sub("", page).encode()
    assert tree._DOCUMENT_END_BYTES.sub(b"", page.encode()) == cut
    from_bytes, from_text = parse_html(page.encode()), parse_html(page)
    assert from_bytes.encoding == "utf-8"
    assert from_bytes.text(0) == from_text.text(0)
    assert from_bytes.tag == from_text.tag and from_bytes.href == from_text.href
    assert "Za koncem, s odkazem." in from_bytes.text(0)


def test_node_arrays_are_the_node_lists() -> None:
    dom = parse_html("<html><body><div><p>a <b>b</b></p><ul><li>c</li></ul></div></body></html>")
    parent, end, depth = dom.node_arrays
    assert parent.tolist() == dom.parent and end.tolist() == dom.end
    assert depth.tolist() == dom.depth


@pytest.mark.parametrize(
    "line", ["Storm Closes Harbour", "It`s the `tide`", "Straße", "ＡＢＣ news", "ﬁle", "x\x1cy"]
)
def test_a_page_line_folds_as_a_title_does(line: str) -> None:
    # an ASCII line is only lower-cased; a backtick or any other character is folded in full
    from newscrawl.extractors.title import _fold, _fold_line

    line = " ".join(line.split())
    assert _fold_line(line) == _fold(line)


def test_the_dom_keeps_its_scripts_found_with_its_noscripts() -> None:
    """`Dom.scripts` is every <script> of the tree in document order, those inside skipped
    elements too (`root.iter("script")`), found in the pass that finds the noscripts; a long
    noscript is still read as the page's text."""
    post = " ".join(["word"] * 200)
    page = (
        "<html><head><script>a</script></head><body><p>x</p><svg><script>b</script></svg>"
        f"<noscript><p>{post}</p><script>c</script></noscript><script>d</script></body></html>"
    )
    dom = parse_html(page)
    root = dom.elements[0]
    assert dom.scripts == list(root.iter("script"))
    assert [el.text for el in dom.scripts] == ["a", "b", "c", "d"]
    assert [el.tag for el in dom.shown_noscripts] == ["noscript"]
    assert post in dom.text(0)
