"""The site pass gives back what the extractor left out of a slot the site's pages take whole."""

from __future__ import annotations

import pytest

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.html.dom import Dom
from newscrawl.site.slot_cut import SitePassConfig, site_pass
from newscrawl.template.sitelevel import RawPage


def story_page(n: int, boxed: bool = False) -> str:
    """A page of one site: a story in its named slot, with a bold sub-heading and a short
    last line between <br>s, as old table layouts write them; `boxed`: the story slot also
    holds a box of teasers."""
    lines = [
        f"Story {n}, part {k}: the harbour board met again about the ferry timetable and the "
        f"pier, and {n + k} residents came to listen to it."
        for k in range(4)
    ]
    body = "<br><br>".join([*lines[:2], "<b>The numbers</b>", *lines[2:], "Nobody objected."])
    teasers = "".join(f"<p>Teaser {k}: read more soon</p>" for k in range(8)) if boxed else ""
    return (
        f"<html><head><title>Story {n}</title></head><body><div class='nav'>Home News</div>"
        f"<div class='story'><font>{body}</font>{teasers}</div></body></html>"
    )


def chosen_lines(dom: Dom, story: int, keep: int) -> Extraction:
    """An extraction of the story's first `keep` runs of text (between <br>s): what a page-level
    extractor gives when it drops the sub-heading and the short last line."""
    from newscrawl.extractors.blockmodel.blocks import split_blocks

    blocks = split_blocks(dom)
    inside = [
        k
        for k in range(len(blocks))
        if dom.is_ancestor(story, blocks.node[k]) and "Story" in blocks.text(dom, k)
    ][:keep]
    pieces = blocks.pieces_of(inside)
    nodes = tuple(sorted({blocks.node[k] for k in inside}))
    return Extraction("", dom.pieces_text(pieces), nodes, "test", tuple(pieces))


def run(pages: list[str], config: SitePassConfig | None = None) -> dict[str, str]:
    raws = [RawPage(f"http://news.test/{n}", html.encode()) for n, html in enumerate(pages)]

    def extract(raw: RawPage, dom: Dom) -> Extraction:
        story = next(n for n in range(len(dom)) if dom.elements[n].get("class") == "story")
        if raw.url.endswith("/0"):  # one page: its lines without the sub-heading and the end
            return chosen_lines(dom, story, 4)
        return Extraction("", dom.text(story), (story,), "test")

    done = site_pass("news.test", raws, extract, config=config, nodes=False)
    return {outcome.raw.url: outcome.extraction.text for outcome in done.outcomes}


def test_a_slot_taken_whole_gets_its_left_out_lines_back() -> None:
    texts = run([story_page(n) for n in range(6)])
    first = texts["http://news.test/0"].split("\n")
    assert "The numbers" in first and first[-1] == "Nobody objected."
    # without the rule the page keeps its page-level text
    plain = run([story_page(n) for n in range(6)], SitePassConfig(whole_share=2.0))
    assert "The numbers" not in plain["http://news.test/0"]


def test_a_slot_not_taken_whole_keeps_its_cuts() -> None:
    """Where the extractor leaves out much of the slot on the site's pages (a box of teasers
    inside it), nothing comes back."""
    pages = [story_page(n, boxed=True) for n in range(6)]
    raws = [RawPage(f"http://news.test/{n}", html.encode()) for n, html in enumerate(pages)]

    def extract(raw: RawPage, dom: Dom) -> Extraction:
        story = next(n for n in range(len(dom)) if dom.elements[n].get("class") == "story")
        return chosen_lines(dom, story, 4 if raw.url.endswith("/0") else 6)

    done = site_pass("news.test", raws, extract, nodes=False)
    texts = {outcome.raw.url: outcome.extraction.text for outcome in done.outcomes}
    assert "The numbers" not in texts["http://news.test/0"]
    assert all("Teaser" not in text for text in texts.values())


@pytest.mark.slow
def test_demo_articles_markdown_equals_the_gold_through_the_site_pass() -> None:
    """Every article of the demo web, through the crawl's site pass (`extract_site`), has the
    gold Markdown exactly; bold sub-headings and short last paragraphs included."""
    import newscrawl
    from newscrawl.demo.web import build_demo_web

    base = "http://demo.test"
    differ = []
    for site in build_demo_web(4).sites:
        pages = [
            (base + path, page.body.replace(b"{{BASE}}", base.encode()))
            for path, page in sorted(site.pages.items())
            if page.content_type.startswith("text/html")
        ]
        articles = newscrawl.extract_site(pages, site=site.name)
        urls = [url.removeprefix(base) for url, _ in pages]
        by_path = dict(zip(urls, articles, strict=True))
        differ += [
            (site.name, path)
            for path, gold in site.articles.items()
            if by_path[path].markdown != gold.markdown
        ]
    assert not differ
