"""CETD-TPC: text block density x content tag path coverage over the Dom model."""

from __future__ import annotations

import math

import pytest

from newscrawl.extractors import get_extractor
from newscrawl.extractors.cetd_tpc import (
    CETDTPC,
    CETDTPCConfig,
    content_pieces,
    path_ids,
    text_block_density,
)
from newscrawl.html.parse import parse_html

SENTENCE = "Engineers inspected the old stone bridge after the flood and found the arches sound. "
PARAGRAPHS = [SENTENCE * 3 + f"Report {i}." for i in range(8)]
# 100 short, link-free labels: a dense block (many children) that holds no content paths.
TAGS = "".join(f"<span>Label number {i:03d} here</span>" for i in range(100))
NAV = "".join(f'<li><a href="/s{i}">Section {i}</a></li>' for i in range(20))

PAGE = f"""<html><head><title>Bridge report</title></head><body>
<ul class="nav">{NAV}</ul>
<div class="labels">{TAGS}</div>
<div class="story">{"".join(f"<p>{p}</p>" for p in PARAGRAPHS)}</div>
</body></html>"""


def node_with_class(dom, name: str) -> int:
    return next(n for n, el in enumerate(dom.elements) if el.get("class") == name)


def test_tbd_follows_the_formula() -> None:
    dom = parse_html(
        '<html><body><div><p>abcd</p><p>ef <a href="/x">link</a></p></div></body></html>'
    )
    div = dom.tag.index("div")
    tbd = text_block_density(dom, text_children=False)
    # p1: (4 - 0 + 1) / (1 - 0 + 1); p2: ("ef" + "link" - "link" + 1) / (2 - 1 + 1)
    assert tbd[div] == 5 / 2 + 3 / 2
    # p2's children: the text "ef", (2 + 1) / (text_child_tags + 1), and <a>: (0 + 1) / (0 + 1).
    p2 = dom.tag.index("p", dom.tag.index("p") + 1)
    assert text_block_density(dom, text_children=True, text_child_tags=0.0)[p2] == 3 + 1
    assert text_block_density(dom, text_children=True, text_child_tags=1.0)[p2] == 3 / 2 + 1


def test_picks_highest_tbd_times_coverage_not_highest_tbd() -> None:
    dom = parse_html(PAGE)
    labels, story = node_with_class(dom, "labels"), node_with_class(dom, "story")
    tbd = text_block_density(dom, text_children=True, text_child_tags=1.0)
    assert max(range(len(tbd)), key=tbd.__getitem__) == labels  # TBD alone: the label cloud
    result = CETDTPC().extract(dom)
    assert result.node_ids == (story,)
    assert result.text.splitlines() == PARAGRAPHS
    assert result.extractor == "cetd-tpc"
    assert result.title == "Bridge report"


@pytest.mark.parametrize("link_text", [True, False])
def test_tpr_threshold_excludes_link_list_paths(link_text: bool) -> None:
    dom = parse_html(PAGE)
    content = content_pieces(dom, path_ids(dom), tau_lambda=1.0, link_text=link_text)
    by_text = dict(zip(dom.piece_text, content, strict=True))
    assert not any(by_text[f"Section {i}"] for i in range(20))
    assert not by_text["Label number 007 here"]
    assert all(by_text[p] for p in PARAGRAPHS)


def test_long_linked_headlines_are_not_content_paths() -> None:
    teaser = "A long linked headline about another story, with the first line of its summary"
    headlines = [f"{teaser} ({i})" for i in range(20)]
    related = "".join(f'<li><a href="/r{i}">{h}</a></li>' for i, h in enumerate(headlines))
    dom = parse_html(PAGE.replace("</body>", f"<div><ul>{related}</ul></div></body>"))
    paths = path_ids(dom)
    literal = dict(zip(dom.piece_text, content_pieces(dom, paths, 1.0, True), strict=True))
    assert literal[headlines[3]]  # the seed's TPR counts link text: 80-odd characters a node
    default = dict(zip(dom.piece_text, content_pieces(dom, paths), strict=True))
    assert not default[headlines[3]] and default[PARAGRAPHS[0]]


def test_tau_is_lambda_times_sigma() -> None:
    # Three paths: TPR 2, 4 and 12 over five pieces; sigma of (2, 2, 4, 12, 12) is 4.4.
    dom = parse_html(
        "<html><body><p>aa</p><p>bb</p><h2>cccc</h2>"
        "<div>dddddddddddd</div><div>eeeeeeeeeeee</div></body></html>"
    )
    paths = path_ids(dom)
    assert content_pieces(dom, paths, tau_lambda=0.0) == [True] * 5
    assert content_pieces(dom, paths, tau_lambda=0.5) == [False, False, True, True, True]
    assert content_pieces(dom, paths, tau_lambda=1.0) == [False, False, False, True, True]
    # A threshold above every ratio falls back to the top path rather than to no content.
    assert content_pieces(dom, paths, tau_lambda=50.0) == [False, False, False, True, True]


def test_path_ids_are_interned_tag_paths() -> None:
    dom = parse_html(
        "<html><body><div><p>a</p></div><div><p>b</p><span>c</span></div></body></html>"
    )
    ids = path_ids(dom)
    for a in range(len(dom.tag)):
        for b in range(len(dom.tag)):
            assert (ids[a] == ids[b]) == (dom.tag_path(a) == dom.tag_path(b))


def test_config_through_registry() -> None:
    extractor = get_extractor("cetd-tpc", tau_lambda=1.0)
    assert isinstance(extractor, CETDTPC)
    assert extractor.config == CETDTPCConfig(tau_lambda=1.0)


def test_empty_pages() -> None:
    for html in (
        "<html><head><title>Nothing</title></head><body></body></html>",
        "<html><body><div><img src='a.png'></div></body></html>",
    ):
        result = CETDTPC().extract(parse_html(html))
        assert not result and result.node_ids == ()
        assert result.extractor == "cetd-tpc"


def test_deeply_nested_page() -> None:
    depth = 1500  # deeper than Python's recursion limit; libxml2 keeps up to ~2000 levels
    html = "<html><body>" + "<div>" * depth + "deep text here" + "</div>" * depth + "</body></html>"
    result = CETDTPC().extract(parse_html(html))
    assert result.text == "deep text here"


def _content_by_definition(dom, paths: list[int], tau_lambda: float, link_text: bool) -> list[bool]:
    """TPR per path from per-piece sums, then tau = lambda x sigma, piece by piece."""
    owners = [paths[owner] for owner in dom.piece_owner]
    total: dict[int, int] = {}
    count: dict[int, int] = {}
    for path, text, in_link in zip(owners, dom.piece_text, dom.piece_in_link, strict=True):
        total[path] = total.get(path, 0) + (0 if in_link and not link_text else len(text))
        count[path] = count.get(path, 0) + 1
    values = [total[path] / count[path] for path in owners]
    mean = sum(values) / len(values)
    sigma = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    tau = min(tau_lambda * sigma, max(values) - 1e-9)
    return [v > tau for v in values]


@pytest.mark.parametrize("link_text", [False, True])
@pytest.mark.parametrize("tau_lambda", [0.0, 0.3, 1.0, 2.5])
def test_content_pieces_are_the_per_piece_definitions(tau_lambda: float, link_text: bool) -> None:
    """The array reading gives each piece the answer the per-piece sums give."""
    odd = "<div><b>x</b> <i>long italic run of words</i> <a href=/a>link text here</a></div>" * 7
    for page in (PAGE, odd, "<p>one</p>", "<p>a</p><p>bb</p><div><p>ccc</p></div>"):
        dom = parse_html(page)
        paths = path_ids(dom)
        expected = _content_by_definition(dom, paths, tau_lambda, link_text)
        assert content_pieces(dom, paths, tau_lambda, link_text) == expected
