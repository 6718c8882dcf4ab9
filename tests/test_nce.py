"""NCE: each rule of the seed (ALGORITHMS.md section 1) on small hand-written pages."""

from __future__ import annotations

import pytest

from newscrawl.extractors import get_extractor
from newscrawl.extractors.nce import NCE, NCEConfig, remove_comments, select_separator
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html

# Article paragraphs: each one longer than alpha0 (200) and alpha5 (120) characters.
P1 = (
    "The city council voted on Tuesday evening to replace the old river bridge, ending a debate "
    "that had divided the town for almost a decade and had filled every public meeting with "
    "residents who wanted the historic structure kept as it was."
)
P2 = (
    "Engineers told the council that the steel frame had corroded far beyond repair, and that "
    "heavy lorries would have to be kept off the bridge within two years unless work began "
    "soon, which would send traffic through the narrow streets of the old quarter."
)
P3 = (
    "Construction is expected to start next spring and to last about eighteen months, during "
    "which a temporary footbridge will let pedestrians and cyclists cross while cars follow a "
    "signposted detour through the industrial estate north of the station."
)
P4 = (
    "Opponents said they would keep campaigning for a design that reuses the original stone "
    "piers, and a petition with more than four thousand signatures will be handed to the mayor "
    "at the next session of the council in the town hall."
)
NAV = "".join(f'<li><a href="/section/{n}">Section {n} news</a></li>' for n in range(12))
FOOTER = "".join(f'<a href="/page/{n}">Footer page {n}</a> ' for n in range(10))


def page(body: str, title: str = "Bridge vote | Town Herald") -> Dom:
    return parse_html(f"<html><head><title>{title}</title></head><body>{body}</body></html>")


def element(dom: Dom, ident: str) -> int:
    """Node id of the element with id="ident"."""
    return next(i for i, el in enumerate(dom.elements) if el.get("id") == ident)


def separator(dom: Dom, **config: object) -> str | None:
    """The id attribute of the separator node NCE picks (None: the whole tree)."""
    node = select_separator(dom, NCEConfig(**config))
    return None if node is None else dom.elements[node].get("id") or dom.tag[node]


# -- 1a. separator node ---------------------------------------------------------------------------


def test_stops_at_the_article_container_and_drops_navigation() -> None:
    dom = page(
        f'<ul id="nav">{NAV}</ul>'
        f'<div id="article"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>'
        f'<div id="footer">{FOOTER}</div>'
    )
    assert separator(dom) == "article"
    result = NCE().extract(dom)
    assert result.extractor == "nce"
    assert result.node_ids == (element(dom, "article"),)
    assert P1 in result.text and P3 in result.text
    assert "Section 3 news" not in result.text and "Footer page" not in result.text
    assert result.text.splitlines()[1:] == [P1, P2, P3]  # one line per paragraph


def test_condition_1_a_paragraph_is_never_the_separator() -> None:
    # The <p> alone has alpha1 characters and link-heavy surroundings: only rule 1 stops it.
    text, share = f"{P1} {P2} {P3}", '<a href="/share">Share this story</a>'
    dom = page(f'<ul>{NAV}</ul><div id="story"><p id="para">{text}</p>{share}</div>')
    assert separator(dom) == "story"
    as_div = page(f'<ul>{NAV}</ul><div id="story"><div id="para">{text}</div>{share}</div>')
    assert separator(as_div) == "para"


def test_condition_2_the_separator_holds_alpha1_characters() -> None:
    # #lead holds one leaf (a bit over 200 characters) and its parent adds links: it satisfies
    # conditions 1, 3 and 4, so only alpha1 sends the climb on to #main.
    dom = page(
        f'<ul>{NAV}</ul><div id="main"><div id="lead"><p>{P1}</p></div>'
        f'<ul id="more">{NAV}</ul><div><p>{P2}</p><p>{P3}</p></div></div>'
    )
    assert separator(dom) == "main"
    assert separator(dom, alpha1=200) == "lead"


def test_condition_3_climbs_while_the_parent_adds_plain_text() -> None:
    # Climbing from #first to #story adds #second: plain text, not link-heavy noise, so
    # condition 3 keeps the climb going; #story's parent adds the menu, so it stops there.
    dom = page(
        f'<ul>{NAV}</ul><div id="story"><div id="first"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>'
        f'<div id="second"><p>{P4}</p></div></div>'
    )
    assert separator(dom) == "story"
    assert P4 in NCE().extract(dom).text
    assert separator(dom, alpha2=0.0) == "first"  # with no noise needed, it stops too early


def test_condition_3_needs_alpha3_characters_of_noise() -> None:
    dom = page(
        f'<div id="story"><div id="body"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>'
        '<a href="/print">Print</a></div>'
    )
    assert separator(dom) == "body"  # alpha3 = 0: a single link is noise enough
    assert separator(dom, alpha3=20) is None  # five characters are not


def test_condition_4_keeps_climbing_over_two_text_rich_siblings() -> None:
    # #part1 has two siblings with real text: the content is spread out, so NCE climbs to #story
    # (whose parent adds the menu) instead of keeping only the first part.
    dom = page(
        f'<ul>{NAV}</ul><div id="story"><div id="part1"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>'
        f'<div id="part2"><p>{P4}</p></div><div id="part3"><p>{P2}</p></div>'
        f'<ul id="related">{NAV}</ul></div>'
    )
    assert separator(dom) == "story"
    assert separator(dom, sibling_min_chars=1000) == "part1"  # no sibling counts as rich


def test_tr_keeps_children_with_few_links_and_drops_link_lists() -> None:
    linked = f'<p id="linked">{P3} Read the <a href="/report">engineers report</a>.</p>'
    dom = page(
        f'<ul>{NAV}</ul><div id="article"><p id="p1">{P1}</p>{linked}'
        f'<ul id="related">{NAV}</ul><p id="p4">{P4}</p></div>'
    )
    assert separator(dom) == "article"
    result = NCE().extract(dom)
    assert result.node_ids == (element(dom, "p1"), element(dom, "linked"), element(dom, "p4"))
    assert "engineers report" in result.text and "Section 2 news" not in result.text
    strict = NCE(NCEConfig(tr=0.0)).extract(dom)
    assert element(dom, "linked") not in strict.node_ids  # any link at all is too many now


def test_text_directly_inside_the_separator_is_kept() -> None:
    # Text runs between <br>s are children of the separator in the seed's DOM.
    dom = page(f'<ul>{NAV}</ul><div id="article">{P1}<br>{P2}<br>{P3}<ul>{NAV}</ul></div>')
    text = NCE().extract(dom).text
    assert all(p in text for p in (P1, P2, P3)) and "Section 1 news" not in text


def test_a_link_inside_a_sentence_stays_with_it() -> None:
    sentence = 'Read the <a href="/report">engineers report</a> before the vote.'
    dom = page(f'<ul>{NAV}</ul><div id="article">{P1}<br>{P2} {sentence}<br>{P3}</div>')
    assert "Read the engineers report before the vote." in NCE().extract(dom).text
    literal = NCE(NCEConfig(inline_runs=False)).extract(dom).text
    assert "engineers report" not in literal and "before the vote." in literal


def test_a_link_heavy_first_leaf_does_not_start_the_search() -> None:
    # A paragraph of teaser links has no text of its own: it is not a long leaf.
    teasers = "".join(
        f'<a href="/t/{n}">Teaser headline number {n} in the sidebar</a> ' for n in range(8)
    )
    dom = page(
        f'<div id="side"><p>{teasers}</p></div>'
        f'<div id="article"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div><ul>{NAV}</ul>'
    )
    assert separator(dom) == "article"
    assert separator(dom, leaf="piece", leaf_max_link_density=1.0) == "article"


def test_after_a_boilerplate_first_leaf_the_longest_leaf_is_tried() -> None:
    notice = f"<p>{P4}</p>"  # a long notice alone in a box of plain text: no separator above it
    dom = page(
        f'<div id="notice">{notice}</div><ul>{NAV}</ul>'
        f'<div id="article"><p>{P1} {P2}</p><p>{P3}</p></div><ul>{NAV}</ul>'
    )
    assert separator(dom) == "article"
    assert separator(dom, retry_leaves=0) is None


def test_whole_tree_when_no_ancestor_qualifies() -> None:
    # No links anywhere: climbing never adds noise, so condition 3 never holds.
    dom = page(f'<div id="a"><p>{P1}</p></div><div id="b"><p>{P2}</p><p>{P3}</p></div>')
    assert separator(dom) is None
    result = NCE().extract(dom)
    assert result.node_ids == (dom.body,)
    assert all(p in result.text for p in (P1, P2, P3))
    assert NCE(NCEConfig(fallback="empty")).extract(dom).text == ""


def test_short_cjk_articles_are_found_with_scaled_thresholds() -> None:
    sentence = "市议会周二晚上投票决定更换旧河桥，结束了持续近十年的争论。"  # 30 characters
    body = "".join(f"<p>{sentence * 3}</p>" for _ in range(4))  # 360 characters in all
    dom = page(f'<ul>{NAV}</ul><div id="article">{body}</div>', title="旧河桥将被更换_新闻")
    assert separator(dom) is None  # 360 characters are short of alpha1 = 600
    assert NCE().extract(dom).node_ids == (element(dom, "article"),)


# -- 1b. comment removal --------------------------------------------------------------------------

HEADERS = (
    "Ann wrote on 12 March 2009 at 10:15 pm | Reply | Report abuse",
    "Bob wrote on 13 March 2009 at 11:40 am | Reply | Report abuse",
    "Cy wrote on 14 March 2009 at 09:05 pm | Reply | Report abuse",
)
REPLIES = (
    "I completely disagree with the council and its plan for the bridge.",
    "Great reporting, thank you for covering the story so carefully.",
    "Does anyone know when the public hearing is scheduled to happen?",
)


def story_with(tail: str) -> Dom:
    return page(f'<ul>{NAV}</ul><div id="main"><p>{P1}</p><p>{P2}</p><p>{P3}</p>{tail}</div>')


def test_drops_the_comment_block_of_repeated_author_and_date_headers() -> None:
    comments = "".join(
        f'<div class="comment" id="c{n}"><div class="head">{head}</div><p>{reply}</p></div>'
        for n, (head, reply) in enumerate(zip(HEADERS, REPLIES, strict=True))
    )
    dom = story_with(f'<div id="comments">{comments}</div>')
    result = NCE().extract(dom)
    assert P3 in result.text
    assert not any(reply in result.text for reply in REPLIES)
    assert "Report abuse" not in result.text
    # Everything before the first comment survives: the paragraphs, not the comment box.
    assert element(dom, "comments") not in result.node_ids
    assert NCE(NCEConfig(alpha7=0.95)).extract(dom).text.count("Report abuse") == 3


def test_keeps_short_blocks_that_do_not_repeat() -> None:
    notes = "".join(f"<p>{reply}</p>" for reply in REPLIES)
    dom = story_with(f'<div id="notes">{notes}</div>')
    items = [element(dom, "main")]
    assert remove_comments(dom, items, NCEConfig()) == items
    assert all(reply in NCE().extract(dom).text for reply in REPLIES)


def test_repeated_records_without_dates_are_not_comments() -> None:
    # Hypothesis 2's repeated pattern is "date and author": a listing repeats labels, not dates.
    records = "".join(
        f"<div><div>Course: bridge design | Room: hall {n} | Fee: fifteen pounds</div>"
        f"<p>{reply}</p></div>"
        for n, reply in zip("ABC", REPLIES, strict=True)
    )
    dom = story_with(f'<div id="courses">{records}</div>')
    assert NCE().extract(dom).text.count("Course: bridge design") == 3
    assert "Course: bridge design" not in NCE(NCEConfig(comment_dates=False)).extract(dom).text


def test_repeated_blocks_before_any_body_are_not_comments() -> None:
    # A list of similar short lines at the very top is part of the content.
    listing = "".join(f"<div>{head}</div>" for head in HEADERS)
    dom = page(f'<ul>{NAV}</ul><div id="main">{listing}<p>{P1}</p><p>{P2}</p><p>{P3}</p></div>')
    assert "Cy wrote" in NCE().extract(dom).text
    assert "Cy wrote" not in NCE(NCEConfig(min_body_chars=0)).extract(dom).text


# -- 1c. title ------------------------------------------------------------------------------------


def test_picks_the_headline_not_a_navigation_link() -> None:
    headline = "Council votes to replace the old river bridge"
    nav_link = '<a href="/x">The council and the old river bridge: every vote on the bridge</a>'
    dom = page(
        f"<div>{nav_link}</div><ul>{NAV}</ul><h1>{headline}</h1>"
        f'<div id="article"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>',
        title=f"{headline} | Town Herald",
    )
    result = NCE().extract(dom)
    assert result.title == headline
    assert result.text.splitlines()[0] == headline  # the seed adds the title to the answer
    assert NCE(NCEConfig(title_in_text=False)).extract(dom).text.splitlines()[0] == P1


def test_the_longest_candidate_echoing_the_content_wins() -> None:
    # No <title>: the seed's rule alone. Both short texts share their words with the article;
    # the longer one wins, a short label of fewer than alpha8 words is no candidate.
    headline = "Council votes to replace the old river bridge"
    dom = page(
        f"<div>Town news</div><h2>Bridge vote</h2><h1>{headline}</h1>"
        f'<ul>{NAV}</ul><div id="article"><p>{P1}</p><p>{P2}</p><p>{P3}</p></div>',
        title="",
    )
    assert NCE().extract(dom).title == headline


def test_title_falls_back_to_the_title_tag() -> None:
    dom = story_with("")
    assert NCE().extract(dom).title == "Bridge vote"


# -- degenerate input -----------------------------------------------------------------------------


def test_empty_page() -> None:
    result = NCE().extract(parse_html("<html><body><div></div></body></html>"))
    assert (result.text, result.node_ids, result.extractor) == ("", (), "nce")
    assert not result


def test_deeply_nested_page_needs_no_recursion() -> None:
    depth = 2000  # libxml2 stops nesting at 2048 levels
    html = "<div>" * depth + f"<p>{P1}</p><p>{P2}</p><p>{P3}</p>" + "</div>" * depth
    result = NCE().extract(page(f"<ul>{NAV}</ul>{html}"))
    assert P2 in result.text


def test_registry_builds_nce_with_overrides() -> None:
    extractor = get_extractor("nce", alpha0=150, tr=0.3)
    assert isinstance(extractor, NCE)
    assert (extractor.config.alpha0, extractor.config.tr, extractor.config.alpha1) == (
        150,
        0.3,
        600,
    )
    with pytest.raises(TypeError):
        NCEConfig(alpha10=1)  # type: ignore[call-arg]
