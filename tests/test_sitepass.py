"""The site pass: a site's template cut out of its pages' text, in a crawl and offline alike.

Unit tests drive `newscrawl.site.slot_cut` with a stub extractor on hand-written pages; the
end-to-end tests crawl the demo web with real Scrapy over real HTTP on 127.0.0.x and re-extract
the stored pages offline with `newscrawl extract --site-from meta`."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pandas as pd
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web
from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.title import page_title
from newscrawl.gold.metric import aggregate, score_page
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.urls import canonical_url
from newscrawl.site.page_choice import SiteSlots, page_choice, slot_name
from newscrawl.site.slot_cut import PAGE_STAGE, SITE_STAGE, site_pass
from newscrawl.template.sitelevel import KeptDoms, RawPage

ROOT = Path(__file__).resolve().parents[1]
FAST = [*FAST_CRAWL, "DOWNLOAD_TIMEOUT=2"]


# ---------------------------------------------------------------------------- the site pass


def page(n: int, comments: bool) -> str:
    """A page of a small site: menu, headline (= title), a body of its own, related links, and
    on some pages a comments box."""
    box = (
        f'<section class="comments"><p>Reader {n} says this is great, thanks.</p></section>'
        if comments
        else ""
    )
    return (
        f"<html><head><title>Story number {n}</title></head><body>"
        '<nav class="menu"><a href="/">Home</a> <a href="/news/">News</a></nav>'
        f'<div class="post post-{n}"><h1 class="headline">Story number {n}</h1>'
        f'<div class="body"><p>Paragraph one of story {n}, which is about item {n}.</p>'
        f"<p>Paragraph two of story {n} goes on with more detail {n * 7}.</p></div></div>"
        f"{box}"
        f'<ul class="related"><li><a href="/s/{n + 1}">Story number {n + 1}</a></li></ul>'
        "</body></html>"
    )


class ByClass:
    """A stand-in extractor: chooses the blocks under elements with the wanted classes, and
    under `sometimes` classes too on the pages numbered in `on` (read from the title)."""

    name: ClassVar[str] = "byclass"

    def __init__(self, *classes: str, sometimes: str = "", on: frozenset[int] = frozenset()):
        self.classes, self.sometimes, self.on = set(classes), sometimes, on

    def extract(self, dom: Dom) -> Extraction:
        title = page_title(dom)
        wanted = set(self.classes)
        if title.split()[-1:] and int(title.split()[-1]) in self.on:
            wanted.add(self.sometimes)
        chosen: set[int] = set()
        for node in range(dom.body, len(dom)):
            if set((dom.elements[node].get("class") or "").split()) & wanted:
                blocks = range(node, dom.end[node])
                chosen.update(b for b in blocks if dom.tag[b] in ("p", "h1", "li"))
        body = dom.body
        pieces = [
            k
            for k in range(dom.piece_start[body], dom.piece_end[body])
            if dom.piece_block[k] in chosen
        ]
        return Extraction(title, dom.pieces_text(pieces), tuple(sorted(chosen)), self.name)


def raws(count: int, comments: range | set[int]) -> list[RawPage]:
    return [
        RawPage(f"http://news.example/s/{n}", page(n, n in comments).encode()) for n in range(count)
    ]


def run(
    count: int, comments: range | set[int], extractor: ByClass
) -> tuple[dict[str, Extraction], set[str]]:
    result = site_pass(
        "news.example",
        raws(count, comments),
        lambda raw, dom: extractor.extract(dom),
        geometry="flow",
    )
    return {o.raw.url: o.extraction for o in result.outcomes}, {o.stage for o in result.outcomes}


def test_slot_names_leave_out_numbered_classes_and_ids() -> None:
    dom = parse_html(b'<div class="post post-12 hentry" id="p-3"><p>x</p></div><p>y</p>')
    div = dom.nodes_by_tag["div"][0]
    assert slot_name(dom.elements[div]) == ("div", "hentry post", "")
    assert slot_name(dom.elements[dom.nodes_by_tag["p"][1]]) is None


def test_page_choice_rejoins_the_extraction_text_exactly() -> None:
    dom = parse_html(page(3, comments=True).encode())
    extraction = ByClass("post", "comments").extract(dom)
    choice = page_choice(dom, extraction, SiteSlots())
    assert choice.exact and len(choice.texts) == 4
    assert "Reader 3 says" in extraction.text


def test_boilerplate_and_title_slots_leave_the_text_and_the_body_stays() -> None:
    extractor = ByClass("post", "related", sometimes="comments", on=frozenset({2}))
    texts, stages = run(8, comments=range(6), extractor=extractor)
    assert stages == {SITE_STAGE}
    # comments: on 6 pages, chosen on 1 of them - boilerplate, gone from page 2
    assert "Reader" not in texts["http://news.example/s/2"].text
    for n in range(8):
        extraction = texts[f"http://news.example/s/{n}"]
        lines = extraction.text.splitlines()
        assert extraction.title == f"Story number {n}"
        assert f"Story number {n}" not in lines  # the title slot: the title is its own field
        assert f"Story number {n + 1}" in lines  # related links: chosen on every page, kept
        assert lines[0].startswith(f"Paragraph one of story {n}")
        assert lines[1].startswith(f"Paragraph two of story {n}")


def test_too_few_pages_keep_the_page_level_text() -> None:
    extractor = ByClass("post", "related", sometimes="comments", on=frozenset({1}))
    texts, stages = run(4, comments={1}, extractor=extractor)
    assert stages == {PAGE_STAGE}
    dom = parse_html(page(1, True).encode(), "http://news.example/s/1")
    assert texts["http://news.example/s/1"] == extractor.extract(dom)
    assert "Reader 1 says" in texts["http://news.example/s/1"].text


def test_a_page_the_site_pass_would_empty_keeps_its_text() -> None:
    extractor = ByClass("post", "related", sometimes="comments", on=frozenset({7}))
    lone = RawPage(
        "http://news.example/s/7",
        b"<html><head><title>Story number 7</title></head><body>"
        b'<section class="comments"><p>Only a comment here.</p></section></body></html>',
    )
    result = site_pass(
        "news.example",
        [*raws(7, comments=range(7)), lone],
        lambda raw, dom: extractor.extract(dom),
        geometry="flow",
    )
    outcome = next(o for o in result.outcomes if o.raw is lone)
    assert outcome.stage == SITE_STAGE and outcome.extraction.text == "Only a comment here."


# ---------------------------------------------------------------------------- crawl and offline


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


def crawl(sites: Path, out: Path, *settings: str) -> pd.DataFrame:
    command = crawl_command(sites, out, (*FAST, *settings))
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    return pd.read_parquet(out / "articles")


def export_pages(out: Path, folder: Path) -> None:
    """The crawl's stored pages as a dataset folder: html/ID.html and meta.jsonl (url, site,
    content_type), what `newscrawl extract --site-from meta` reads."""
    pages = pd.read_parquet(out / "pages")
    (folder / "html").mkdir(parents=True)
    with (folder / "meta.jsonl").open("w") as meta:
        for index, row in enumerate(pages.itertuples()):
            (folder / "html" / f"p{index}.html").write_bytes(row.html)
            record = {"id": f"p{index}", "url": row.final_url, "site": str(row.site)}
            meta.write(json.dumps({**record, "content_type": row.content_type}) + "\n")


def assert_reextract_keeps_crawls_apart(
    pages: Path, tmp_path: Path, crawled: dict[str, tuple[str, str]]
) -> None:
    """A folder of several crawls: each crawl's pages of a site go through their own pass. A
    second crawl whose pages all carry one article of the first would make that article's
    body template in a joint pass; and one crawl's partition keeps its crawl id."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = pq.read_table(pages).to_pylist()
    (crawl_id,) = {row["crawl"] for row in rows}
    longest = max(crawled, key=lambda url: len(crawled[url][1]))
    first = next(row for row in rows if row["url"] == longest)
    copies = [
        {**first, "crawl": "second", "url": f"{first['url']}?copy={k}",
         "html": first["html"].replace(b"<title>", f"<title>copy {k} ".encode(), 1)}
        for k in range(100)
    ]  # fmt: skip
    both = tmp_path / "both"
    pq.write_to_dataset(
        pa.Table.from_pylist(rows + copies),
        both,
        partitioning=["crawl"],
        partitioning_flavor="hive",
    )
    command = [sys.executable, "-m", "newscrawl.cli", "reextract"]
    for source, target in ((both, "rx-both"), (pages / f"crawl={crawl_id}", "rx-one")):
        result = subprocess.run(
            [*command, str(source), "--out", str(tmp_path / target)],
            capture_output=True, text=True, cwd=ROOT,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-3000:]
    again = pd.read_parquet(tmp_path / "rx-both")
    again = again[again.crawl == crawl_id]
    redone = dict(zip(again.url, zip(again.title, again.text, strict=True), strict=True))
    assert {url: redone[url] for url in crawled} == crawled
    assert {p.name for p in (tmp_path / "rx-one").iterdir()} == {f"crawl={crawl_id}"}


@pytest.mark.slow
def test_crawl_articles_equal_an_offline_site_pass_of_the_stored_pages(
    demo: DemoServer, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    # the crawl's default extractor list (learned, then CETD-TPC where learned cannot run):
    # an empty text is the learned extractor's answer, offline as in the crawl (a listing page
    # whose blocks are all template once got CETD-TPC's text in the crawl and none offline)
    articles = crawl(
        demo.write_site_list(tmp_path / "sites.csv"),
        out,
        "NEWSCRAWL_KEEP_ALL_TEXTS=1",
    )
    assert set(articles.stage) == {SITE_STAGE}
    export_pages(out, tmp_path / "saved")
    command = [sys.executable, "-m", "newscrawl.cli", "extract", str(tmp_path / "saved" / "html")]
    command += ["--site-from", "meta", "-f", "jsonl", "-j", "2"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    meta = {
        json.loads(line)["id"]: json.loads(line)["url"]
        for line in (tmp_path / "saved" / "meta.jsonl").read_text().splitlines()
    }
    offline = {}
    for line in result.stdout.splitlines():
        record = json.loads(line)
        offline[meta[Path(record["path"]).stem]] = (record["title"], record["text"])
    crawled = dict(
        zip(articles.final_url, zip(articles.title, articles.text, strict=True), strict=True)
    )
    assert len(crawled) == len(offline) == len(articles)
    assert crawled == offline
    # `newscrawl reextract` of the crawl's pages dataset takes the same site pass
    command = [sys.executable, "-m", "newscrawl.cli", "reextract", str(out / "pages")]
    result = subprocess.run(
        [*command, "--out", str(tmp_path / "rx")], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-3000:]
    again = pd.read_parquet(tmp_path / "rx")
    redone = dict(zip(again.url, zip(again.title, again.text, strict=True), strict=True))
    assert {url: redone[url] for url in crawled} == crawled
    assert_reextract_keeps_crawls_apart(out / "pages", tmp_path, crawled)
    # the site pass cut the template: closer to the gold than the page-level text it started from
    gold = {canonical_url(url): a.text for url, a in demo.gold().items()}
    rows = articles[articles.final_url.isin(gold)]
    after = aggregate(
        score_page(gold[u], t) for u, t in zip(rows.final_url, rows.text, strict=True)
    )
    before = aggregate(
        score_page(gold[u], dict(texts)[extractor.split("+")[0]])  # learned+guard: learned
        for u, texts, extractor in zip(rows.final_url, rows.texts, rows.extractor, strict=True)
    )
    print(f"\npage-level: F1 {before.f1:.3f} P {before.precision:.3f} R {before.recall:.3f}")
    print(f"site pass: F1 {after.f1:.3f} P {after.precision:.3f} R {after.recall:.3f}")
    assert len(rows) == len(gold)
    assert after.precision > before.precision and after.f1 > before.f1
    assert after.recall >= before.recall - 0.005


@pytest.mark.slow
def test_a_site_too_small_for_sitelevel_keeps_page_level_text(
    demo: DemoServer, tmp_path: Path
) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv", ["field-notes"], caps={"field-notes": 4})
    articles = crawl(sites, tmp_path / "out")
    assert len(articles) == 4 and set(articles.stage) == {PAGE_STAGE}
    assert not (tmp_path / "out" / "nodes").exists() or not list(
        (tmp_path / "out" / "nodes").rglob("*.parquet")
    )


@pytest.mark.slow
def test_without_sitelevel_pages_are_extracted_one_by_one(demo: DemoServer, tmp_path: Path) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv", ["field-notes"], caps={"field-notes": 8})
    articles = crawl(sites, tmp_path / "out", "NEWSCRAWL_SITELEVEL=False")
    assert len(articles) == 8 and set(articles.stage) == {PAGE_STAGE}


@pytest.mark.slow
def test_a_site_is_written_when_its_frontier_is_exhausted(demo: DemoServer, tmp_path: Path) -> None:
    """No site of the demo web reaches the cap: each is written once its last page is in, before
    the crawl closes, not at its end."""
    sites = demo.write_site_list(tmp_path / "sites.csv")
    command = crawl_command(sites, tmp_path / "out", (*FAST, "LOG_LEVEL=INFO"))
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    log = result.stderr
    closing = log.index("Closing spider")
    for site in ("harbor-gazette", "valley-courier", "field-notes"):
        assert f"site {site}: frontier exhausted" in log
        assert log.index(f"site pass: {site},") < closing
    articles = pd.read_parquet(tmp_path / "out" / "articles")
    assert set(articles.stage) == {SITE_STAGE}
    assert not articles.final_url.duplicated().any()
    assert set(canonical_url(u) for u in demo.gold()) <= set(articles.final_url)


def test_kept_doms_hand_over_what_they_kept_and_parse_the_rest_again() -> None:
    def page(n: int, words: int) -> RawPage:
        body = "".join(f"<p>paragraph {n} {'word ' * words}</p>" for _ in range(3))
        return RawPage(f"https://example.org/{n}.html", f"<html><body>{body}</body></html>")

    small, big, heavy = page(1, 5), page(2, 5), page(3, 20_000)
    doms = KeptDoms("example.org", max_nodes=len(parse_html(small.html)) + 1, max_bytes=50_000)
    first = doms.parse(small)
    assert doms.parse(small) is first and first.site == "example.org"  # kept: parsed once
    doms.parse(big)  # over the element budget: not kept
    doms.parse(heavy)  # few elements but over the byte budget: not kept
    assert doms.nodes == len(first) and doms.bytes == len(small.html)
    assert doms.take(small) is first and doms.nodes == doms.bytes == 0
    again = doms.take(big)  # parsed again, the same page
    assert again is not doms.parse(big) and again.piece_text == parse_html(big.html).piece_text
    assert doms.take(small) is not first  # handed over once, then parsed again
