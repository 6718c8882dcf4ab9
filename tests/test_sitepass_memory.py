"""The site pass over a site larger than its budgets: each page written once, and what the pass
holds at once does not grow with the site.

A real crawl (Scrapy against a server this test starts on 127.0.0.1, in a child process) of a
site whose raw pages pass NEWSCRAWL_SITELEVEL_MAX_BYTES; and the site pass of generated sites
of 6 and 24 element-heavy pages, counting the node records alive at once. No timing is
asserted."""

from __future__ import annotations

import re
import subprocess
import weakref
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL
from newscrawl.pipelines.extraction import ExtractionSettings
from newscrawl.pipelines.sitejob import PassPage, PassSettings, SitePasser, SitePassJob

from newscrawl.crawl.runner import crawl_command
from newscrawl.demo.server import serve_pages
from newscrawl.dom import Dom
from newscrawl.template import sitelevel, streampass
from newscrawl.template.records import PageNodes
from newscrawl.template.sitelevel import RawPage
from newscrawl.template.sitepass import SITE_STAGE

ROOT = Path(__file__).resolve().parents[1]
_PAGE = re.compile(r"^/story-(\d+)\.html$")
STORIES = 60


def small_site(path: str) -> bytes | None:
    """A home page linking 60 stories of about 2.5 KB each, each linking the next."""
    if path == "/":
        links = "".join(f'<li><a href="/story-{n}.html">story {n}</a></li>' for n in range(STORIES))
        return f"<html><body><nav class='menu'><ul>{links}</ul></nav></body></html>".encode()
    found = _PAGE.match(path)
    if found is None or int(found.group(1)) >= STORIES:
        return None
    n = int(found.group(1))
    menu = "".join(f'<a class="m" href="/story-{k}.html">section {k}</a> ' for k in range(6))
    words = " ".join(f"word{(n * 31 + k) % 997}" for k in range(260))
    body = (
        f"<html><head><title>Story {n}</title></head><body><nav class='menu'>{menu}</nav>"
        f"<article class='story'><h1>Story {n}</h1><p>{words}</p></article>"
        f"<footer class='foot'>The Small Site, all rights reserved.</footer></body></html>"
    )
    return body.encode()


def test_a_site_over_the_byte_budget_has_each_page_written_once(tmp_path: Path) -> None:
    """61 pages of about 2.5 KB with the site's buffer at 100,000 bytes: every page is in the
    site pass, and each has one row (pages past the budget were written page by page and by
    the site pass both)."""
    assert 2_000 < len(small_site("/story-1.html") or b"") < 3_000
    with serve_pages("127.0.0.1", small_site) as start:
        sites = tmp_path / "sites.csv"
        sites.write_text(f"url,name,max_pages\n{start},small,100\n")
        settings = (*FAST_CRAWL, "DOWNLOAD_TIMEOUT=5", "NEWSCRAWL_SITELEVEL_MAX_BYTES=100000")
        command = crawl_command(sites, tmp_path / "out", settings)
        result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    articles = pd.read_parquet(tmp_path / "out" / "articles")
    assert len(articles) == STORIES + 1
    assert not articles.final_url.duplicated().any()
    assert set(articles.stage) == {SITE_STAGE}
    nodes = pq.read_table(tmp_path / "out" / "nodes", columns=["url"]).to_pandas()
    assert nodes.url.nunique() == STORIES + 1


def element_page(n: int) -> bytes:
    """A page of a short story and 3,000 images (elements with a box and no text, as icons
    are): what its node records and rows cost grows with them, its text does not."""
    menu = "".join(f'<a class="m" href="/page-{k}.html">section {k}</a> ' for k in range(6))
    words = " ".join(f"word{(n * 31 + k) % 997}" for k in range(120))
    cells = '<img width="8" height="8">' * 3_000
    return (
        f"<html><head><title>Page {n}</title></head><body><nav class='menu'>{menu}</nav>"
        f"<article class='story'><h1>Page {n}</h1><p>{words}</p></article>"
        f"<div class='grid'>{cells}</div><footer class='foot'>The Heavy Site.</footer>"
        "</body></html>"
    ).encode()


def heavy_job(pages: int, staging: Path) -> SitePassJob:
    """A site of `pages` element-heavy pages, its node rows staged in `staging`."""
    found = tuple(
        PassPage(f"http://heavy.test/page-{n}.html", element_page(n), "text/html")
        for n in range(pages)
    )
    return SitePassJob("heavy.test", "c", found, staging=str(staging))


def test_the_site_pass_holds_one_page_of_node_records_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A site four times larger holds no more node records at once: one page's (every page's
    records and rows were held until the site was labelled), and every page's rows are
    written to the staging file."""
    alive: set[int] = set()
    most = [0]
    made = sitelevel.page_records

    def counted(raw: RawPage, dom: Dom, geometry: str = "flow") -> PageNodes:
        records = made(raw, dom, geometry)
        key = id(records.boxes)
        alive.add(key)
        most[0] = max(most[0], len(alive))
        weakref.finalize(records.boxes, alive.discard, key)
        return records

    monkeypatch.setattr(sitelevel, "page_records", counted)
    monkeypatch.setattr(streampass, "page_records", counted)
    chain = ExtractionSettings(("learned", "cetd-tpc"), {}, "learned")
    passer = SitePasser.from_settings(PassSettings(chain))
    held, results = {}, {}
    for pages in (6, 24):
        most[0] = 0
        staging = tmp_path / f"staging-{pages}"
        results[pages] = passer.run(heavy_job(pages, staging))
        held[pages] = most[0]
    assert held == {6: 1, 24: 1}
    for pages, result in results.items():
        assert result.ran and result.template and len(result.pages) == pages
        assert result.nodes is None and result.nodes_file
        rows = pq.read_table(result.nodes_file, columns=["page"]).column("page").to_pylist()
        assert sorted(set(rows)) == list(range(pages))
