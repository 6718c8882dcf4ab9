"""The compiled Dom walk (`newscrawl/html/_domwalk.c`) gives every page the Dom the Python walk
gives it: the same nodes, pieces, links, title and metadata, on generated markup of every
shape (tags in any case, skipped and shown elements, comments, odd whitespace, deep nesting)
and on the project's own fixture pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from newscrawl.html import dom as dom_module
from newscrawl.html.dom import Dom
from newscrawl.html.parse import page_text, parse_html
from newscrawl.html.tree import PageError, page_tree

pytestmark = pytest.mark.compiled

FIXTURES = Path(__file__).parent / "fixtures" / "pages" / "html"
_TAGS = ["p", "div", "a", "b", "br", "span", "LI", "Title", "script", "noscript", "head",
         "meta name=k content=v", "a href=' /x '", "h2", "table", "td", "style", "img", "label",
         "select", "sup"]  # fmt: skip
_TEXTS = ["", " ", "word", "  two  words ", "\u00a0nb\u00a0", "\u3000wide", "\t\n", "é", "<!--c-->",
          "&amp;", "x y", "北京", "」", "<a></a>"]  # fmt: skip


def _doms(html: str) -> tuple[Dom, Dom]:
    """The page's Dom by the compiled walk (as built, whatever the import check found), then
    by the Python walk."""
    from newscrawl.html._domwalk import walk

    text = page_text(html.encode()).text
    in_use = dom_module._compiled_walk
    try:
        dom_module._compiled_walk = walk
        fast = Dom(page_tree(text))
        dom_module._compiled_walk = None
        slow = Dom(page_tree(text))
    finally:
        dom_module._compiled_walk = in_use
    return fast, slow


def _same(fast: Dom, slow: Dom) -> None:
    for field in dom_module._DOM_FIELDS:
        assert getattr(fast, field) == getattr(slow, field), field
    assert [e.tag for e in fast.elements] == [e.tag for e in slow.elements]


def test_the_compiled_walk_is_built_and_in_use() -> None:
    assert dom_module.COMPILED_WALK and dom_module._compiled_walk is not None
    assert dom_module.compiled_walk_agrees()


def test_the_compiled_walk_makes_an_elements_proxy_when_it_is_read() -> None:
    """`Dom.elements` from the compiled walk holds the nodes, not a proxy each: an element is
    made when read, the one lxml element of its node while any is held, and the Dom keeps the
    tree alive when every element a reader took is gone."""
    import gc

    from newscrawl.html._domwalk import Elements

    dom = parse_html(b"<html><body><p class=a>x</p><!--c--><div id=d>y</div></body></html>")
    assert isinstance(dom.elements, Elements)
    assert [e.tag for e in dom.elements] == dom.tag == ["html", "body", "p", "div"]
    held = dom.elements[2]
    assert dom.elements[2] is held and dom.elements[-2] is held
    assert held.getparent() is dom.elements[1]
    with pytest.raises(IndexError):
        dom.elements[len(dom)]
    del held
    gc.collect()
    assert dom.elements[3].get("id") == "d" and dom.elements[2].text == "x"
    assert dom.attribute_values([2, 3, 0], ("class", "id")) == [("a", None), (None, "d"), None]
    assert dom.nodes_with_attribute("class") == [2]


@st.composite
def _markup(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if depth < 6 and draw(st.booleans()):
            tag = draw(st.sampled_from(_TAGS))
            inner = draw(_markup(depth + 1))
            closed = draw(st.booleans())
            parts.append(f"<{tag}>{inner}" + (f"</{tag.split()[0]}>" if closed else ""))
        else:
            parts.append(draw(st.sampled_from(_TEXTS)))
    return "".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(head=_markup(), body=_markup())
def test_the_two_walks_agree_on_generated_markup(head: str, body: str) -> None:
    html = f"<html><head>{head}</head><body>{body}</body></html>"
    try:
        fast, slow = _doms(html)
    except PageError:
        return  # nothing to walk (a page of only blanks)
    _same(fast, slow)


@pytest.mark.parametrize("page", sorted(FIXTURES.glob("*.html")), ids=lambda p: p.stem)
def test_the_two_walks_agree_on_the_fixture_pages(page: Path) -> None:
    _same(*_doms(page.read_bytes().decode("utf-8", "replace")))


def test_deep_nesting_is_walked_alike() -> None:
    html = "<html><body>" + "<div>x " * 1500 + "</div>" * 1500 + "</body></html>"
    fast, slow = _doms(html)
    _same(fast, slow)
    assert max(fast.depth) > 1000


def test_a_tree_deeper_than_the_compiled_walk_recurses_is_walked_in_python() -> None:
    """No parsed page nests past the parser's limit (2,048), but a tree built by hand can: past
    4,096 levels the compiled walk gives way to the Python walk, which keeps its stack in a
    list, and the Dom is the same."""
    import lxml.etree

    root = lxml.etree.Element("html")
    body = lxml.etree.SubElement(root, "body")
    node = body
    for i in range(5000):
        node = lxml.etree.SubElement(node, "div")
        node.text = f"level {i}"
    fast = Dom(root)
    compiled = dom_module._compiled_walk
    dom_module._compiled_walk = None
    try:
        slow = Dom(root)
    finally:
        dom_module._compiled_walk = compiled
    _same(fast, slow)
    assert len(fast.tag) == 5002 and fast.piece_text[-1] == "level 4999"


def test_namespaced_elements_keep_lxmls_tag_in_both_walks() -> None:
    """XHTML parsed as XML and handed to `Dom`: its tags are "{namespace}name", as lxml gives
    them, in the compiled walk as in the Python walk (not the bare local names)."""
    import lxml.etree

    xhtml = (
        b'<html xmlns="http://www.w3.org/1999/xhtml"><head><title>T</title></head>'
        b'<body><p>one <a href="/u">link</a></p></body></html>'
    )
    compiled = dom_module._compiled_walk
    try:
        fast = Dom(lxml.etree.fromstring(xhtml))
        dom_module._compiled_walk = None
        slow = Dom(lxml.etree.fromstring(xhtml))
    finally:
        dom_module._compiled_walk = compiled
    _same(fast, slow)
    assert fast.tag[0] == "{http://www.w3.org/1999/xhtml}html" and fast.href == {}


def test_the_compiled_walk_refuses_arguments_it_cannot_fill() -> None:
    """Lists that are not empty or are passed twice, and roots that are no element in a tree,
    are refused with an exception rather than written past their end."""
    import lxml.etree
    from newscrawl.html._domwalk import Elements, walk

    from newscrawl.html.tags import BLOCK_TAGS, GLUE_TAGS, SKIPPED_TAGS

    root = lxml.etree.fromstring(b"<html><body><p>x<br/>y</p></body></html>")

    def call(element: object, lists: list[list[object]]) -> object:
        return walk(
            element, *lists[:5], *lists[6:15], {}, *lists[15:18], set(),
            SKIPPED_TAGS, BLOCK_TAGS, GLUE_TAGS,
        )  # fmt: skip

    fresh = [[] for _ in range(18)]  # (the 7th, once the elements' list, is not passed)
    filled = call(root, fresh)  # a plain call works and gives the nodes' elements
    assert isinstance(filled, Elements)
    assert [e.tag for e in filled] == ["html", "body", "p", "br"]
    shared: list[object] = []
    with pytest.raises(ValueError, match="empty lists of its own"):
        call(root, [shared] * 18)
    with pytest.raises(ValueError, match="empty lists of its own"):
        call(root, [["junk"] * 5, *([] for _ in range(17))])
    with pytest.raises(TypeError, match="lxml element in a tree"):
        call(lxml.etree.Comment("c"), [[] for _ in range(18)])
    with pytest.raises(TypeError, match="lxml element in a tree"):
        call(lxml.etree._Element.__new__(lxml.etree._Element), [[] for _ in range(18)])


_ATTRIBUTED = ["script type=application/ld+json", "script", "div itemtype=x", "span ITEMTYPE=''",
               "p class=a", "svg", "template", "noscript", "b role=dialog"]  # fmt: skip


@st.composite
def _attributed_markup(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 4))):
        if depth < 5 and draw(st.booleans()):
            tag = draw(st.sampled_from(_ATTRIBUTED))
            parts.append(f"<{tag}>{draw(_attributed_markup(depth + 1))}</{tag.split()[0]}>")
        else:
            parts.append(draw(st.sampled_from(["x", "<!--c-->", "<script>s</script>", " "])))
    return "".join(parts)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(head=_attributed_markup(), body=_attributed_markup())
def test_the_compiled_element_readers_agree_with_lxml(head: str, body: str) -> None:
    """`elements_named` is `root.iter(tag)` (scripts hidden in skipped elements included) and
    `Dom.nodes_with_attribute` is the Python `get` over the Dom's elements."""
    import itertools

    try:
        dom = parse_html(f"<html><head>{head}</head><body>{body}</body></html>")
    except PageError:
        return
    root = dom.elements[0].getroottree().getroot()
    for tag in ("script", "div", "html", "svg"):
        assert dom_module.elements_named(root, tag) == list(root.iter(tag))
    for name in ("itemtype", "class", "role", "type"):
        nodes = itertools.compress(range(len(dom.elements)), dom.has_attributes)
        expected = [n for n in nodes if dom.elements[n].get(name) is not None]
        assert dom.nodes_with_attribute(name) == expected
    for tag in ("p", "div", "script", "b"):
        assert dom.nodes_of(tag) == [n for n, t in enumerate(dom.tag) if t == tag]
    names = ("class", "itemtype", "role", "type")
    nodes = list(range(len(dom.elements)))[::-1]
    expected_values = [
        tuple(dom.elements[n].get(name) for name in names) if dom.has_attributes[n] else None
        for n in nodes
    ]
    assert dom.attribute_values(nodes, names) == expected_values


def test_the_compiled_element_readers_refuse_what_is_no_element() -> None:
    import lxml.etree
    from newscrawl.html._domwalk import attribute_values, named, with_attribute

    root = lxml.etree.fromstring(b"<html><body><p class='a'>x</p></body></html>")
    assert with_attribute(list(root.iter()), "class") == [2]
    assert [e.tag for e in named(root, "p")] == ["p"]
    with pytest.raises(TypeError, match="lxml elements"):
        with_attribute([root, "p"], "class")
    with pytest.raises(TypeError):
        named(lxml.etree.Comment("c"), "p")
    with pytest.raises(TypeError, match="element in a tree"):
        named(lxml.etree._Element.__new__(lxml.etree._Element), "p")
    assert attribute_values(list(root.iter()), [2, 0], ("class", "id")) == [("a", None), None]
    with pytest.raises(IndexError):
        attribute_values([root], [1], ("class",))
    with pytest.raises(ValueError, match="no namespace"):
        attribute_values([root], [0], ("{x}class",))
    with pytest.raises(TypeError, match="lxml elements"):
        attribute_values(["p"], [0], ("class",))
    for name in ("", "{http://x}p", "{}p", "*", "{*}p"):  # lxml's own rules: not matched in C
        with pytest.raises(ValueError, match="no namespace"):
            named(root, name)
        with pytest.raises(ValueError, match="no namespace"):
            with_attribute([root], name)


def test_namespaced_and_wildcard_names_are_read_by_lxml() -> None:
    import lxml.etree

    root = lxml.etree.fromstring(
        b'<r xmlns="http://x" xmlns:y="http://y"><p y:t="1"/><q xmlns=""><p t="2"/></q></r>'
    )
    for name in ("{http://x}p", "{}p", "p", "*", "{*}p"):
        assert dom_module.elements_named(root, name) == list(root.iter(name)), name


def test_entity_references_in_a_hand_built_tree_keep_their_tail_in_both_walks() -> None:
    """The parser never makes entity-reference nodes, but a tree built by hand can hold them:
    like a comment, one keeps only its tail (the Python walk used to fail on it)."""
    import lxml.etree
    from newscrawl.html._domwalk import walk

    root = lxml.etree.Element("html")
    body = lxml.etree.SubElement(root, "body")
    para = lxml.etree.SubElement(body, "p")
    para.text = "a "
    para.append(lxml.etree.Entity("amp"))
    para[0].tail = "x"
    lxml.etree.SubElement(body, "div").text = "y"
    in_use = dom_module._compiled_walk
    try:
        dom_module._compiled_walk = walk
        fast = Dom(root)
        dom_module._compiled_walk = None
        slow = Dom(root)
    finally:
        dom_module._compiled_walk = in_use
    _same(fast, slow)
    assert slow.piece_text == ["a", "x", "y"]
