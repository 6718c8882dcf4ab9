"""The site pass parses each page once: the node hashes its first pass counts are stored beside
the raw page where the page was parsed already (`newscrawl.template.node_summary`), and read
back instead of parsing the page again, with the same rows.

Real site passes over pages stored in a real `pages` file, with and without the stored hashes;
and a real crawl (Scrapy against a server this test starts on 127.0.0.1, in a child process)
whose stored pages carry their hashes. No timing is asserted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL
from newscrawl.pipelines.extraction import ExtractionSettings

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import serve_pages
from newscrawl.html.dom import Dom
from newscrawl.site import site_job as sitejob
from newscrawl.site.site_job import PassSettings, SitePasser, SitePassJob
from newscrawl.site.site_store import PassPage
from newscrawl.site.slot_cut import SITE_STAGE
from newscrawl.template.node_records import node_hashes
from newscrawl.template.node_summary import (
    MAX_SUMMARY_HASHES,
    hash_summary,
    read_summary,
)
from newscrawl.template.sitelevel import RawPage, parse_raw

ROOT = Path(__file__).resolve().parents[1]
PAGES = 24
_PAGE = re.compile(r"^/page-(\d+)\.html$")


def grid_page(n: int, generator: str = "") -> bytes:
    """A story and 3,000 images: 24 such pages are more elements than the pass keeps parsed
    between its two passes (`KeptDoms`)."""
    menu = "".join(f'<a class="m" href="/page-{k}.html">section {k}</a> ' for k in range(6))
    words = " ".join(f"word{(n * 31 + k) % 997}" for k in range(120))
    meta = f'<meta name="generator" content="{generator}">' if generator else ""
    return (
        f"<html><head><title>Page {n}</title>{meta}</head><body><nav class='menu'>{menu}</nav>"
        f"<article class='story'><h1>Page {n}</h1><p>{words}</p></article>"
        f"<div class='grid'>{'<img width=8 height=8>' * 3_000}</div>"
        "<footer class='foot'>The Grid Site.</footer></body></html>"
    ).encode()


def url(n: int) -> str:
    return f"http://grid.test/page-{n}.html"


def stored_job(folder: Path, hashes: bool) -> SitePassJob:
    """The site's pages stored in a `pages` file (with their hashes, or a file written before
    they were stored), the job reading them from there."""
    bodies = [grid_page(n) for n in range(PAGES)]
    columns: dict[str, list[object]] = {"final_url": [url(n) for n in range(PAGES)]}
    columns["html"] = list(bodies)
    if hashes:
        columns["node_hashes"] = [
            hash_summary(parse_raw(RawPage(url(n), body, "text/html"), "grid.test"))
            for n, body in enumerate(bodies)
        ]
    folder.mkdir(parents=True)
    path = folder / "pages.parquet"
    pq.write_table(pa.table(columns), path, row_group_size=8)
    pages = tuple(
        PassPage(url(n), b"", "text/html", None, False, str(path), n, len(body))
        for n, body in enumerate(bodies)
    )
    return SitePassJob("grid.test", "c", pages, staging=str(folder / "staging"))


@pytest.fixture(scope="module")
def passer() -> SitePasser:
    chain = ExtractionSettings(("learned", "cetd-tpc"), {}, "learned")
    return SitePasser.from_settings(PassSettings(chain))


def test_the_pass_reads_stored_hashes_instead_of_parsing_pages_twice(
    passer: SitePasser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the hashes stored beside the pages each page is parsed once (without them, the
    pages its kept trees leave out are parsed twice), and the rows are the same."""
    parses = [0]
    parse = sitejob.parse_raw

    def counted(raw: RawPage, site: str | None = None) -> Dom:
        parses[0] += 1
        return parse(raw, site)

    monkeypatch.setattr(sitejob, "parse_raw", counted)
    runs, counts = {}, {}
    for hashes in (False, True):
        parses[0] = 0
        runs[hashes] = passer.run(stored_job(tmp_path / str(hashes), hashes))
        counts[hashes] = parses[0]
    assert counts[True] == PAGES < counts[False]
    without, with_hashes = runs[False], runs[True]
    assert with_hashes.ran and with_hashes.template
    assert with_hashes.pages == without.pages and len(without.pages) == PAGES
    assert {page.fields["stage"] for page in without.pages.values()} == {SITE_STAGE}
    assert pq.read_table(with_hashes.nodes_file).equals(pq.read_table(without.nodes_file))


def test_a_summary_holds_the_distinct_hashes_and_the_generator() -> None:
    dom = parse_raw(RawPage(url(3), grid_page(3, "WordPress 6.4"), "text/html"))
    found = read_summary(hash_summary(dom))
    assert found is not None and found.blog_generator
    hashes = node_hashes(dom)
    assert int(found.hashes[0]) == int(hashes[0])
    assert (found.hashes[1:] == sorted(set(hashes.tolist()))).all()
    plain = read_summary(hash_summary(parse_raw(RawPage(url(3), grid_page(3), "text/html"))))
    assert plain is not None and not plain.blog_generator
    assert read_summary(b"") is None and read_summary(b"\x07" * 16) is None


def test_a_page_over_the_bound_gets_no_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    from newscrawl.template import node_summary

    dom = parse_raw(RawPage(url(1), grid_page(1), "text/html"))
    assert len(set(node_hashes(dom).tolist())) < MAX_SUMMARY_HASHES
    monkeypatch.setattr(node_summary, "MAX_SUMMARY_HASHES", 10)
    assert hash_summary(dom) == b""


def grid_site(path: str) -> bytes | None:
    """A home page linking 12 grid pages."""
    if path == "/":
        links = "".join(f'<a href="/page-{n}.html">page {n}</a> ' for n in range(12))
        return f"<html><body><nav>{links}</nav></body></html>".encode()
    found = _PAGE.match(path)
    if found is None or int(found.group(1)) >= 12:
        return None
    return grid_page(int(found.group(1)))


def test_a_crawl_stores_each_pages_hashes_beside_it(tmp_path: Path) -> None:
    """The crawl's parse (in its parse workers, or inline while they start) stores each page's
    hashes in `pages`, the ones its site pass would count."""
    with serve_pages("127.0.0.1", grid_site) as start:
        sites = tmp_path / "sites.csv"
        sites.write_text(f"url,name,max_pages\n{start},grid,20\n")
        command = crawl_command(sites, tmp_path / "out", (*FAST_CRAWL, "DOWNLOAD_TIMEOUT=5"))
        result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = pq.read_table(tmp_path / "out" / "pages").to_pylist()
    assert len(rows) == 13
    for row in rows:
        raw = RawPage(row["final_url"], row["html"], row["content_type"])
        assert row["node_hashes"] == hash_summary(parse_raw(raw)), row["final_url"]


def test_hashes_are_stored_only_for_a_site_pass_that_counts_them() -> None:
    from scrapy.settings import Settings

    from newscrawl import settings as defaults
    from newscrawl.template.node_summary import summaries_wanted

    def wanted(**values: object) -> bool:
        settings = Settings()
        settings.setmodule(defaults)
        settings.update(values, priority="cmdline")
        return summaries_wanted(settings)

    raw_only = {"newscrawl.pipelines.rawpages.RawPagePipeline": 400}
    assert wanted()
    assert not wanted(ITEM_PIPELINES=raw_only)  # no site pass: nothing reads them
    assert not wanted(NEWSCRAWL_SITELEVEL=False)
    assert not wanted(NEWSCRAWL_SITE_METHOD="sst")


_RESIDENT = """
import os
from newscrawl.crawl.parsepool import hashed_page_links
from newscrawl.lab.synthetic_heavysite import heavy_page

def resident() -> float:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

body = heavy_page(5, 200)
hashed_page_links(b"<p>warm</p>", "http://h.test/", "text/html", 100_000)
before = resident()
links = hashed_page_links(body, "http://h.test/page-5.html", "text/html", 100_000)
assert links.node_hashes
print(round(resident() - before, 1))
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc")
def test_a_parse_worker_gives_back_the_memory_of_a_large_pages_tree() -> None:
    """After the tree of a page of 95,000 elements (about 150 MB at its peak) is let go of, a
    parse worker keeps little of it resident (it kept some 40 MB: the heap's high-water
    mark), so idle workers beside the site pass hold less."""
    found = subprocess.run(
        [sys.executable, "-c", _RESIDENT], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert found.returncode == 0, found.stderr[-2000:]
    assert float(found.stdout) < 20.0
