"""Titles, publication dates and authors of article pages (`newscrawl.extractors.page_metadata`,
`newscrawl.extractors.title`), on fixture pages written for the project: one per way real pages
misled
the extraction, with the values each page shows in tests/fixtures/metadata/labels.jsonl."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from newscrawl.cli import main
from newscrawl.extractors import DEFAULT_EXTRACTOR, build_extractor
from newscrawl.extractors.datelines import date_in_line
from newscrawl.extractors.page_metadata import clean_names, page_metadata, parse_time, url_date
from newscrawl.extractors.title import page_title, without_site_name
from newscrawl.html.parse import parse_html
from newscrawl.lab.bench_metadata import Guess, Labelled, Tally, read_labels, score

FIXTURES = Path(__file__).parent / "fixtures" / "metadata"
LABELS = [json.loads(line) for line in (FIXTURES / "labels.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("label", LABELS, ids=[label["html"] for label in LABELS])
def test_fixture_page_gives_its_title_date_and_authors(label: dict[str, Any]) -> None:
    dom = parse_html((FIXTURES / label["html"]).read_bytes(), label["url"])
    found = page_metadata(dom, label["url"])
    assert found.published is not None and found.published.date().isoformat() == label["date"]
    if label["authors"] is not None:
        assert list(found.authors) == label["authors"], label["miss"]
    assert build_extractor(DEFAULT_EXTRACTOR).extract(dom).title == label["title"]
    assert page_title(dom) == label["title"]  # the title of the extractors without a title stage


def test_json_fields_of_one_page() -> None:
    page = (FIXTURES / "author_given_family.html").read_bytes()
    fields = page_metadata(parse_html(page)).fields()
    assert fields == {
        "date": "2024-03-07T11:00:00+01:00",  # the page's own offset: its own day
        "author": "Camille Lefèvre, Hugo Martin",
        "authors": ["Camille Lefèvre", "Hugo Martin"],
        "language": "fr",
    }


def _page(head: str, body: str = "<p>Text of the story.</p>") -> str:
    return f"<html><head>{head}</head><body><h1>Story</h1>{body}</body></html>"


def _ld(text: str) -> str:
    return f'<script type="application/ld+json">{text}</script>'


@pytest.mark.parametrize(
    "head",
    [
        _ld('{"@type": "NewsArticle", "datePublished": '),  # cut short
        _ld("[" * 100_000 + "]" * 100_000),  # nested past the parser's recursion limit
        _ld('{"@graph": ' + "[" * 50 + '{"@type": "Article"}' + "]" * 50 + "}"),
        _ld('{"@type": "Article", "author": ' + '{"x": ' * 500 + "1" + "}" * 500 + "}"),
        _ld('{"@type": "Article", "datePublished": "' + "9" * 3_000_000 + '"}'),
        _ld('{"@type": "Article", "author": [1, null, {"name": 5}, {"givenName": ["A"]}]}'),
        _ld('{"@type": ["Article", 3], "author": {"@id": "#nobody"}, "datePublished": 20}'),
        '<meta property="article:published_time" content="0000-01-01T00:00:00">',
        '<meta property="article:published_time" content="-0001-01-01">',
        '<meta property="article:published_time" content="9999-12-31T23:59:59+14:00">',
        '<meta property="article:published_time" content="0001-01-01T00:00:00+14:00">',
        '<meta name="date" content="2024-02-30">',
        '<meta name="author" content="https://example.com/people/x">',
        '<meta name="author" content="   ">',
    ],
)
def test_bad_markup_gives_no_value_and_no_error(head: str) -> None:
    found = page_metadata(parse_html(_page(head)), "https://example.com/story")
    assert found.published is None
    assert found.authors == ()


def test_far_future_and_ancient_dates_are_refused() -> None:
    assert parse_time("3024-01-01") is None
    assert parse_time("1066-10-14") is None
    assert parse_time("9999-12-31T23:59:59-12:00") is None
    assert parse_time("x" * 10_000) is None
    assert parse_time("2024-05-03T08:15:00+02:00") == datetime(2024, 5, 3, 6, 15, tzinfo=UTC)


def test_a_year_month_url_is_a_check_not_a_day() -> None:
    assert url_date("https://s.example/2024/04/slug/") == (datetime(2024, 4, 1, tzinfo=UTC), False)
    assert url_date("https://s.example/2024/04/17/slug/")[1]
    bare = parse_html(_page(""))
    assert page_metadata(bare, "https://s.example/2024/04/slug/").published is None
    assert page_metadata(bare, "https://s.example/2024/04/17/slug/").published == datetime(
        2024, 4, 17, tzinfo=UTC
    )
    # an unmarked <time> in another month than the URL's is a teaser's, not the page's
    teaser = parse_html(_page("", '<p><time datetime="2023-01-09">9 Jan</time></p>'))
    assert page_metadata(teaser, "https://s.example/2024/04/slug/").published is None
    assert page_metadata(teaser, "https://s.example/slug/").published == datetime(
        2023, 1, 9, tzinfo=UTC
    )


def test_author_strings_are_split_into_people() -> None:
    assert clean_names("By Jane Doe and Bo Li") == ["Jane Doe", "Bo Li"]
    assert clean_names("Anna Schmidt und Jonas Weber") == ["Anna Schmidt", "Jonas Weber"]
    assert clean_names("JILL LAWLESS, Associated Press Writer") == ["Jill Lawless"]
    assert clean_names("jane@example.com (Jane Doe)") == []
    assert clean_names("Staff photo by Kathy Anderson") == []
    assert clean_names("Condé Nast", {"condé nast"}) == []


def test_a_visible_byline_under_the_headline() -> None:
    html = _page("", "<p>Sunday, May 5, 2024</p><p>By MARK SHERMAN</p><p>The court ruled.</p>")
    assert page_metadata(parse_html(html)).authors == ("Mark Sherman",)
    role = _page("", "<p>By Elizabeth Mullener Staff writer</p><p>The court ruled.</p>")
    assert page_metadata(parse_html(role)).authors == ("Elizabeth Mullener",)
    lower = _page("", "<p>By submitting this form you agree.</p><p>The court ruled.</p>")
    assert page_metadata(parse_html(lower)).authors == ()


def test_the_site_name_stays_unless_the_page_confirms_the_headline() -> None:
    html = "<html><body><h1>Storm closes harbour</h1><h2>Review</h2><p>Text.</p></body></html>"
    dom = parse_html(html)
    assert without_site_name(dom, "Review: The new phone") == "Review: The new phone"
    assert without_site_name(dom, "Storm closes harbour | Gazette") == "Storm closes harbour"
    assert without_site_name(dom, "Gazette: Storm closes harbour") == "Storm closes harbour"
    assert without_site_name(dom, "Storm closes harbour | The Harbour Gazette of Record") == (
        "Storm closes harbour | The Harbour Gazette of Record"  # the rest outweighs the headline
    )
    assert without_site_name(dom, "Other headline | Gazette") == "Other headline | Gazette"


def test_a_title_part_naming_the_site_goes() -> None:
    dw = parse_html("<html><body><h2>Trams</h2></body></html>", "https://www.dw.com/en/t/a-1")
    assert without_site_name(dw, "Tram line extended – DW – 13.06.2023") == "Tram line extended"
    named = parse_html(
        "<html><head><meta property='og:site_name' content='Harbour Post'></head></html>"
    )
    assert without_site_name(named, "Harbour Post: Storm closes quay") == "Storm closes quay"
    assert without_site_name(named, "Storm | closes quay") == "Storm | closes quay"


def test_labels_name_pages_by_path_or_by_dataset_and_id(tmp_path: Path) -> None:
    (tmp_path / "set" / "html").mkdir(parents=True)
    (tmp_path / "set" / "html" / "p1.html").write_text(_page(""))
    (tmp_path / "set" / "meta.jsonl").write_text('{"id": "p1", "url": "https://s.example/a"}\n')
    (tmp_path / "labels.jsonl").write_text(
        '{"dataset": "set", "id": "p1", "title": "Story", "date": null, "authors": []}\n'
        '{"dataset": "set", "id": "missing", "title": "x"}\nnot json\n'
    )
    pages = list(read_labels(tmp_path / "labels.jsonl"))
    assert [(p.name, p.url, p.authors) for p in pages] == [("p1", "https://s.example/a", ())]
    tally = Tally()
    page = Labelled("x", "p", b"", None, "Story", "2024-01-02", ("Jane Doe", "Bo Li"))
    score(tally, page, Guess("Story", "2024-01-02T10:00:00", ["jane doe"]))
    assert (tally.titles_right, tally.dates_right, tally.author_empty) == (1, 1, 0)
    assert tally.author_f1 == pytest.approx(2 * 1.0 * 0.5 / 1.5)


def test_bench_scores_the_fixtures_for_every_system(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "metadata", str(FIXTURES / "labels.jsonl"), "--no-demo"]) == 0
    rows = {line.split()[1]: line.split() for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["newscrawl"][2:4] == ["100.0%", str(len(LABELS))]
    assert "trafilatura" in rows and "htmldate" in rows


@pytest.mark.parametrize(
    ("line", "day"),
    [
        ("Saturday, December 29, 2007", "2007-12-29"),
        ("Dec. 31, 2007 11:14 AM", "2007-12-31"),
        ("Wednesday 14 December 2011 18.29 GMT", "2011-12-14"),
        ("04-01-2012, ostatnia aktualizacja 04-01-2012 08:02", "2012-01-04"),
        ("13. Juni 2023", "2023-06-13"),
        ("le 7 mars 2024 à 11h", "2024-03-07"),
        ("31 de mayo de 2023", "2023-05-31"),
        ("28 ноября 2011 19:00", "2011-11-28"),
        ("4 stycznia 2012", "2012-01-04"),
        ("2012年01月11日20:54", "2012-01-11"),
        ("优活健康资讯网 2012-01-12 10:50", "2012-01-12"),
        ("1/10/2008, 3:50 a.m. EST", "2008-01-10"),
        ("Posted 13/01/2008", "2008-01-13"),
        ("31.02.2024", None),  # not a day
        ("Call 0800 2024 1234", None),
        ("Page 3 of 12", None),
    ],
)
def test_date_in_a_dateline(line: str, day: str | None) -> None:
    when = date_in_line(line, day_first=False)
    assert (when.date().isoformat() if when else None) == day


def test_an_ambiguous_numeric_date_reads_by_the_page_language() -> None:
    assert date_in_line("03/04/2024", day_first=True) == datetime(2024, 4, 3, tzinfo=UTC)
    assert date_in_line("03/04/2024", day_first=False) == datetime(2024, 3, 4, tzinfo=UTC)


def test_a_shown_date_is_read_near_the_headline_only() -> None:
    masthead = "<p>Friday, 19 December 2025</p>"
    story = "<p>By Ann Lee</p><p>14 December 2025</p><p>The council met.</p>"
    html = f"<html><body>{masthead}<h1>Council meets</h1>{story}</body></html>"
    assert page_metadata(parse_html(html)).published == datetime(2025, 12, 14, tzinfo=UTC)
    no_h1 = html.replace("h1>", "h2>")  # a page's first lines are its masthead: no date
    assert page_metadata(parse_html(no_h1)).published is None
    above = f"<html><body><p>14 Dec 2025</p><h1>Council meets</h1><p>{'Text. ' * 20}</p>"
    assert page_metadata(parse_html(above)).published == datetime(2025, 12, 14, tzinfo=UTC)
