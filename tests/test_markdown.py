"""Markdown of an extractor's selection (newscrawl.extractors.markdown), and the plain text it
agrees with."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.markdown import markdown_of, page_markdown
from newscrawl.html.parse import parse_html

FIXTURES = Path(__file__).parent / "fixtures" / "markdown"
PAGES = sorted(p.stem for p in FIXTURES.glob("*.html"))


def body_extraction(html: str) -> tuple[object, Extraction]:
    dom = parse_html(html)
    text = dom.text(dom.body)
    return dom, Extraction("", text, (dom.body,), "test")


@pytest.mark.parametrize("name", PAGES)
def test_fixture_rendered_exactly(name: str) -> None:
    html = (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    expected = (FIXTURES / f"{name}.md").read_text(encoding="utf-8").removesuffix("\n")
    dom, extraction = body_extraction(html)
    assert page_markdown(dom, extraction) == expected  # type: ignore[arg-type]


def test_every_structure_has_a_fixture() -> None:
    assert set(PAGES) >= {
        "nested_lists", "table_header", "table_plain", "code_block", "headings",
        "definition_list", "quotes",
    }  # fmt: skip


def test_pre_keeps_its_lines_in_text() -> None:
    dom = parse_html("<body><p>Run:</p><pre>\n  a = 1\n\n  <b>b</b> = 2\n</pre><p>done</p></body>")
    assert dom.text(dom.body) == "Run:\n  a = 1\n\n  b = 2\ndone"
    # a button's label and the code after it stay two words, as outside <pre>
    dom = parse_html("<body><pre><button>Copy</button><code>x = <i>1</i></code></pre></body>")
    assert dom.text(dom.body) == "Copy x = 1"
    assert markdown_of(dom, range(len(dom.piece_text))) == "```\nCopy x = 1\n```"  # type: ignore[arg-type]


def test_links_and_images_only_on_request() -> None:
    html = (
        '<body><p>See <a href="/more">the <em>report</em></a><img src="c.png" alt="A chart">.'
        "</p></body>"
    )
    dom, extraction = body_extraction(html)
    assert page_markdown(dom, extraction) == "See the *report*."  # type: ignore[arg-type]
    shown = page_markdown(dom, extraction, links=True, images=True)  # type: ignore[arg-type]
    assert shown == "See [the *report*](/more)![A chart](c.png)."


def test_page_text_never_turns_into_markup() -> None:
    """Literal markup characters of the page are escaped; the words stay the text's."""
    html = (
        "<body><p>2 * 3 = 6, snake_case, *stars*, `tick`, [a](b) and ~~struck~~ &amp;amp;</p>"
        "<p># not a heading</p><p>&gt; not a quote</p><p>Use <code>a`b</code>, a back\\slash</p>"
        "<table><tr><th>a|b</th><th>c</th></tr><tr><td>1</td><td>x|y</td></tr></table></body>"
    )
    dom, extraction = body_extraction(html)
    markdown = page_markdown(dom, extraction)  # type: ignore[arg-type]
    assert markdown == (
        "2 \\* 3 = 6, snake\\_case, \\*stars\\*, \\`tick\\`, \\[a\\](b) and \\~\\~struck"
        "\\~\\~ \\&amp;\n\n\\# not a heading\n\n\\> not a quote\n\n"
        "Use ``a`b``, a back\\\\slash\n\n| a\\|b | c |\n| --- | --- |\n| 1 | x\\|y |"
    )
    assert words(markdown) == words(extraction.text, markdown=False)


def test_links_and_images_are_absolute_and_readable() -> None:
    """With the page's URL, links and images point to absolute addresses; an address with
    spaces or parentheses is written in angle brackets, an alt text is escaped."""
    html = '<body><p>See <a href="r (1).html">it</a><img src="/i.png" alt="A *b*">.</p></body>'
    dom = parse_html(html, url="http://example.com/news/a.html")
    extraction = Extraction("", dom.text(dom.body), (dom.body,), "test")
    shown = page_markdown(dom, extraction, links=True, images=True)
    assert shown == (
        "See [it](<http://example.com/news/r (1).html>)![A \\*b\\*](http://example.com/i.png)."
    )


def test_selection_only() -> None:
    """Only the selected pieces are rendered: a list item left out is not written."""
    dom = parse_html("<body><ul><li>kept</li><li>menu</li></ul><p>more</p></body>")
    first, _menu, more = range(dom.piece_start[dom.body], dom.piece_end[dom.body])
    assert markdown_of(dom, [first, more]) == "- kept\n\nmore"


@pytest.mark.parametrize(
    "html",
    [
        "<ul>" * 3000 + "<li>deep",
        "<body><blockquote>" * 1500 + "q",
        "<table>" + "<tr>" + "<td>x</td>" * 3000 + "</tr>" * 30,
        "<p>broken <b><i>tags</b> here</i><li>orphan<td>cell<dt>t<dd>d<h7>x",
        "<pre>" + "<pre>" * 50 + "a\n b",
    ],
)
def test_bad_input_gives_sane_markdown(html: str) -> None:
    dom, extraction = body_extraction(html)
    markdown = page_markdown(dom, extraction)  # type: ignore[arg-type]
    assert words(markdown) == words(extraction.text)


# Markers that open a line: quotes, list items and definitions (nested), then a heading's.
LINE_MARKERS = re.compile(r"^(?:[ \t]*(?:>|[-:]|\d{1,9}\.)(?=\s|$))*(?:[ \t]*#{1,6}(?=\s|$))?")
QUOTE_MARKER = re.compile(r"^[ \t]*>(?=\s|$)")
FENCE = re.compile(r"[ \t]*`{3,}")
TABLE_RULE = re.compile(r"[ \t]*\|(?: --- \|)+")


def words(text: str, markdown: bool = True) -> list[str]:
    """Words of a text or a Markdown with the markup taken away (characters Markdown uses
    for emphasis, code, cells and escapes are dropped from both, so a literal one counts for
    neither)."""
    if markdown:
        lines: list[str] = []
        fenced = 0  # the backticks of the open fence (0: none)
        quotes = 0  # the quote markers before the open fence
        for line in text.split("\n"):
            inner = LINE_MARKERS.sub("", line)
            if FENCE.fullmatch(inner) and (not fenced or len(inner.strip()) >= fenced):
                fenced = 0 if fenced else len(inner.strip())
                quotes = line[: len(line) - len(inner)].count(">")
            elif fenced:  # a code block's line: only the quotes around it are markup
                for _ in range(quotes):
                    line = QUOTE_MARKER.sub("", line)
                lines.append(line)
            elif not TABLE_RULE.fullmatch(inner):
                lines.append(inner)
        text = "\n".join(lines)
    return re.sub(r"[*`|\\]", "", text).split()


DEV_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
ALL_PAGES_ENV = "NEWSCRAWL_TEST_ALL_DEV_PAGES"


def dev_pages() -> list[Path]:
    """The dev pages with gold text (every one with NEWSCRAWL_TEST_ALL_DEV_PAGES=1, else one
    in 40 of each dataset)."""
    pages = sorted(DEV_DATA.glob("*/html/*.html"))
    return pages if os.environ.get(ALL_PAGES_ENV) == "1" else pages[::40]


@pytest.mark.slow
@pytest.mark.skipif(not DEV_DATA.is_dir(), reason="no dev data")
def test_text_is_the_markdown_without_markup() -> None:
    """On the dev pages, every extractor's Markdown has its text's words in the same order."""
    from newscrawl.extractors import EXTRACTORS, get_extractor
    from newscrawl.html.tree import PageError

    extractors = [get_extractor(name) for name in EXTRACTORS]
    differ: list[str] = []
    for path in dev_pages():
        try:
            dom = parse_html(path.read_bytes())
        except PageError:
            continue
        for extractor in extractors:
            extraction = extractor.extract(dom)
            if words(page_markdown(dom, extraction)) != words(extraction.text, markdown=False):
                differ.append(f"{path.name} {extractor.name}")
    assert not differ


def test_a_layout_table_is_rendered_as_blocks() -> None:
    """A table that lays out the page (one column, or cells holding paragraphs) is no data
    table: its cells' text is written as paragraphs, <br><br> breaking them."""
    html = (
        "<body><table><tr><td><h2>Story</h2>First line.<br>Same paragraph.<br><br>Next one."
        "</td></tr></table></body>"
    )
    dom, extraction = body_extraction(html)
    markdown = page_markdown(dom, extraction)  # type: ignore[arg-type]
    assert markdown == "## Story\n\nFirst line.  \nSame paragraph.\n\nNext one."


# -- outputs ----------------------------------------------------------------------------------


def test_extract_writes_markdown_and_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from newscrawl.cli import main

    page = tmp_path / "a.html"
    page.write_text((FIXTURES / "code_block.html").read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["extract", "-e", "mss", "-f", "markdown", str(page)]) == 0
    markdown = capsys.readouterr().out
    assert "```\ndef count(lines):\n    total = 0\n\n    for line in lines:" in markdown
    assert main(["extract", "-e", "mss", "-f", "json", str(page)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["markdown"] + "\n" == markdown
    assert "    total = 0\n\n    for line in lines:" in record["text"]
    assert set(record) >= {
        "url", "title", "text", "markdown", "comments", "date", "author", "language",
        "page_type", "extractor",
    }  # fmt: skip


THREAD = (
    "<html><body><article><h1>Harbour opens</h1>"
    + "<p>The new harbour opened on Monday after three years of building work by the town.</p>" * 12
    + "</article><section class='comments'><h3>Comments</h3>"
    + "".join(
        f"<div class='comment'><b>Reader {n}</b> 12/0{n}/2024<p>I walked there today and the "
        f"boats look fine, number {n}.</p></div>"
        for n in range(1, 6)
    )
    + "</section><form><textarea>your reply</textarea><label>Name please</label></form>"
    "</body></html>"
)


def test_comments_are_a_field_of_their_own() -> None:
    from newscrawl.extractors import get_extractor
    from newscrawl.extractors.comments import page_comments

    dom = parse_html(THREAD)
    extraction = get_extractor("mss").extract(dom)
    comments = page_comments(dom, extraction.pieces or ())
    assert "Reader 3 12/03/2024" in comments and "boats look fine, number 5." in comments
    assert "Name please" not in comments  # the reply form is no comment
    assert not set(comments.splitlines()) & set(extraction.text.splitlines())
    assert page_comments(parse_html("<body><p>No thread here at all, only text.</p>")) == ""


def test_learned_keeps_a_table_or_code_block_inside_its_text_whole() -> None:
    """The demo web's articles with a table or a code block: the learned extractor keeps it
    whole (the model alone drops most of their short cells and lines), and the Markdown of
    its selection holds the table or code block as the gold Markdown has it."""
    from newscrawl.demo.web import build_demo_web
    from newscrawl.extractors import get_extractor

    extractor = get_extractor("learned")
    checked = 0
    for site in build_demo_web(4).sites:
        for path, article in site.articles.items():
            wanted = [
                block for block in article.markdown.split("\n\n") if block.startswith(("|", "```"))
            ]
            if not wanted:
                continue
            page = site.pages[path]
            dom = parse_html(page.body, content_type=page.content_type)
            markdown = page_markdown(dom, extractor.extract(dom))
            assert all(block in markdown for block in wanted), (site.name, path)
            checked += 1
    assert checked >= 30


def crawl_item(html: str) -> object:
    from datetime import UTC, datetime

    from newscrawl.crawl.items import PageItem

    url = "http://news.test/2024/05/harbour.html"
    when = datetime(2024, 5, 1, tzinfo=UTC)
    return PageItem(url, url, "news.test", "c", when, 200, "text/html", html=html.encode())


@pytest.mark.parametrize("on", [True, False])
def test_the_crawl_fills_markdown_and_comments_unless_turned_off(on: bool) -> None:
    from newscrawl.pipelines.extraction import ExtractionSettings

    settings = ExtractionSettings(("mss",), {}, "mss", markdown=on, comments=on)
    item = settings.build().fill(crawl_item(THREAD))  # type: ignore[arg-type]
    if not on:
        assert item.markdown is None and item.comments is None
        return
    assert item.markdown == "\n\n".join(item.text.split("\n"))  # paragraphs, no markup
    assert item.comments and "Reader 2" in item.comments
    assert "Reader 2" not in item.text


def test_markdown_settings_are_known_and_checked() -> None:
    from newscrawl.crawl.checks import check_settings

    check_settings({"NEWSCRAWL_MARKDOWN": "false", "NEWSCRAWL_COMMENTS": "0"})
    check_settings({"NEWSCRAWL_MARKDOWN_LINKS": "1", "NEWSCRAWL_MARKDOWN_IMAGES": "true"})
    with pytest.raises(ValueError, match="NEWSCRAWL_MARKDOWN"):
        check_settings({"NEWSCRAWL_MARKDOWN": "maybe"})
    with pytest.raises(ValueError, match="NEWSCRAWL_MARKDOWN_LINKS"):
        check_settings({"NEWSCRAWL_MARKDOWN_LINKS": "maybe"})


PARAGRAPH = "<p>The new harbour opened on Monday after three years of building work in town.</p>"
LINKED = (
    "<html><body><article><h1>Harbour opens</h1>"
    + PARAGRAPH * 4
    + '<p>Read <a href="/plan.html">the plan</a> <img src="map.png" alt="The map">here, where '
    "the council explains the three years of building work and what the town paid for it.</p>"
    + PARAGRAPH * 4
    + "</article></body></html>"
)


@pytest.mark.parametrize("on", [True, False])
def test_crawl_markdown_links_and_images_on_request(on: bool) -> None:
    """NEWSCRAWL_MARKDOWN_LINKS and NEWSCRAWL_MARKDOWN_IMAGES reach the crawl's pipeline and
    the settings its worker processes are built from."""
    from newscrawl.pipelines.extraction import ExtractionSettings, markdown_options
    from scrapy.settings import Settings

    values = {"NEWSCRAWL_MARKDOWN_LINKS": on, "NEWSCRAWL_MARKDOWN_IMAGES": on}
    options = markdown_options(Settings(values))
    assert options is not None and (options.links, options.images) == (on, on)
    assert markdown_options(Settings({"NEWSCRAWL_MARKDOWN": False, **values})) is None
    settings = ExtractionSettings(("mss",), {"mss": {}}, "mss", links=on, images=on)
    pipeline = settings.build()
    assert pipeline.settings() == settings  # what a worker process is built from
    item = pipeline.fill(crawl_item(LINKED))  # type: ignore[arg-type]
    linked = "Read [the plan](http://news.test/plan.html) "
    pictured = "![The map](http://news.test/2024/05/map.png)here,"
    assert (linked in item.markdown, pictured in item.markdown) == (on, on)
    assert on or "Read the plan here, where" in item.markdown


def test_api_markdown_links_and_images_on_request() -> None:
    import newscrawl

    url = "http://news.test/2024/05/harbour.html"
    plain = newscrawl.extract(LINKED, url, extractor="mss")
    shown = newscrawl.extract(LINKED, url, extractor="mss", links=True, images=True)
    assert "Read the plan here, where" in plain.markdown
    assert "[the plan](http://news.test/plan.html) ![The map](" in shown.markdown
    site = newscrawl.extract_site([(url, LINKED)], extractor="mss", links=True)
    assert "[the plan](http://news.test/plan.html)" in site[0].markdown


def test_the_articles_schema_has_markdown_and_comments() -> None:
    from newscrawl.storage.schemas import ARTICLES_SCHEMA, REPEATS_SCHEMA

    for schema in (ARTICLES_SCHEMA, REPEATS_SCHEMA):
        assert schema.field("markdown").type == "string"
        assert schema.field("comments").type == "string"


def test_bench_extract_prints_the_markdown_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from newscrawl.cli import main

    for page in FIXTURES.glob("*.html"):
        (tmp_path / page.name).write_bytes(page.read_bytes())
    assert main(["bench", "extract", str(tmp_path), "-e", "learned", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "parse + learned + markdown" in out
    share = re.search(r"markdown cost, share of parse \+ learned's CPU time: (-?[\d.]+)%", out)
    assert share is not None and float(share.group(1)) >= 0


def thread_page(n: int) -> str:
    """A page of one site: a story of its own, with a comment thread of its own."""
    story = "".join(
        f"<p>Story {n}, paragraph {k}: the harbour board met again to talk about the ferry "
        f"timetable and the pier, and {n + k} residents came to listen.</p>"
        for k in range(6)
    )
    thread = "".join(
        f"<div class='comment'><b>Reader {n}{k}</b> 12/0{k + 1}/2024<p>I took the ferry "
        f"on day {k} of story {n} and it was late again.</p></div>"
        for k in range(4)
    )
    return (
        f"<html><head><title>Story {n}</title></head><body><nav><a href='/'>Home</a></nav>"
        f"<div class='story'><h1>Story {n}</h1><h2>What happened</h2>{story}"
        f"<ul><li>First point of story {n}</li><li>Second point</li></ul></div>"
        f"<section class='comments'>{thread}</section></body></html>"
    )


def test_comments_the_site_pass_cuts_go_to_the_comments_field() -> None:
    """A page whose extraction took in the comment thread (the site's comment slot, chosen
    on one page of six): the pass cuts the thread out of its text and its comments hold it."""
    from newscrawl.site.slot_cut import SITE_STAGE, site_pass
    from newscrawl.template.sitelevel import RawPage

    raws = [RawPage(f"http://news.test/story/{n}", thread_page(n).encode()) for n in range(6)]

    def extract(raw: RawPage, dom: object) -> Extraction:
        assert isinstance(dom, type(parse_html("<p>x</p>")))
        whole = raw.url.endswith("/0")  # this page's extraction took the thread in
        story = next(n for n in range(len(dom)) if dom.elements[n].get("class") == "story")
        node = dom.body if whole else story
        return Extraction("", dom.text(node), (node,), "test")

    run = site_pass("news.test", raws, extract, nodes=False)
    outcomes = {outcome.raw.url: outcome for outcome in run.outcomes}
    first = outcomes["http://news.test/story/0"]
    assert first.stage == SITE_STAGE
    assert "Story 0, paragraph 5" in first.extraction.text
    assert "Reader 02" not in first.extraction.text
    comments = first.extraction.comments or ""
    assert "Reader 02 12/03/2024" in comments and "on day 3 of story 0" in comments
    # nothing of a thread was cut elsewhere: the page-level comments stand
    assert outcomes["http://news.test/story/1"].extraction.comments is None


def test_reextract_writes_markdown_and_comments_as_the_crawl(tmp_path: Path) -> None:
    """`newscrawl reextract`'s rows carry the same markdown and comments as the crawl's site
    pass writes for the same stored pages (`extract_site` runs that pass)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import newscrawl
    from newscrawl.scale.dask_stages import ReExtract, read_output, run_stage

    urls = [f"http://news.test/story/{n}" for n in range(6)]
    htmls = [thread_page(n) for n in range(6)]
    pages = tmp_path / "pages"
    pages.mkdir()
    rows = {"site": ["news.test"] * 6, "url": urls, "html": [h.encode() for h in htmls]}
    pq.write_table(pa.table(rows), pages / "part.parquet")
    report = run_stage(ReExtract(), pages, tmp_path / "out")
    assert not report.failed
    written = {row["url"]: row for row in read_output(tmp_path / "out").to_pylist()}
    crawled = newscrawl.extract_site(list(zip(urls, htmls, strict=True)), extractor="learned")
    for url, article in zip(urls, crawled, strict=True):
        row = written[url]
        assert (row["text"], row["markdown"], row["comments"]) == (
            article.text,
            article.markdown,
            article.comments,
        )
    story = written[urls[2]]
    assert (
        "## What happened" in story["markdown"] and "- First point of story 2" in story["markdown"]
    )
    assert "Reader 21" in story["comments"] and "Reader 21" not in story["text"]
