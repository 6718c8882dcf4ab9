"""The site pass over a site larger than its budgets: each page written once, and what the pass
holds at once does not grow with the site.

A real crawl (Scrapy against a server this test starts on 127.0.0.1, in a child process) of a
site whose raw pages pass NEWSCRAWL_SITELEVEL_MAX_BYTES; and the site pass of generated sites
of 6 and 24 element-heavy pages, counting the node records alive at once. No timing is
asserted."""

from __future__ import annotations

import dataclasses
import gc
import re
import subprocess
import sys
import weakref
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL
from newscrawl.pipelines.extraction import ExtractionSettings

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.crawl.items import PageItem
from newscrawl.demo.server import serve_pages
from newscrawl.html.dom import Dom
from newscrawl.site import site_job as sitejob
from newscrawl.site import stream_pass as streampass
from newscrawl.site.site_job import PassSettings, SitePasser, SitePassJob, SitePassResult
from newscrawl.site.site_store import PageResult, PassPage, ResultRecords, site_rows
from newscrawl.site.slot_cut import SITE_STAGE
from newscrawl.template import sitelevel
from newscrawl.template.node_records import PageNodes
from newscrawl.template.sitelevel import RawPage

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
    assert not list((tmp_path / "out").rglob("results-*"))  # the pass's results file is gone


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


@pytest.fixture(scope="module")
def passer() -> SitePasser:
    chain = ExtractionSettings(("learned", "cetd-tpc"), {}, "learned")
    return SitePasser.from_settings(PassSettings(chain))


def story_job(pages: int, folder: Path, results: bool = True) -> SitePassJob:
    """A site of `pages` of `small_site`'s stories, each page's result written to a file in
    `folder` (`results`: else they come back in the result)."""
    found = tuple(
        PassPage(f"http://small.test/story-{n}.html", small_site(f"/story-{n}.html") or b"")
        for n in range(pages)
    )
    job = SitePassJob("small.test", "c", found, staging=str(folder / "staging"))
    return dataclasses.replace(job, results=str(folder / "results.pickle")) if results else job


def written(result: SitePassResult) -> dict[int, PageResult]:
    """The pages' results a pass wrote to its results file, by page index."""
    with ResultRecords(open(result.results_file, "rb")) as records:
        records.at = result.result_at
        return {index: records.get(index) for index in result.result_at}


def results_held() -> int:
    """Pages whose results this process holds: items and pages' results holding a text."""
    return sum(map(_holds_text, gc.get_objects()))


def _holds_text(found: object) -> bool:
    if isinstance(found, PageItem):
        return bool(found.text)
    return isinstance(found, PageResult) and bool(found.fields.get("text"))


def test_the_site_pass_holds_one_page_result_at_a_time(
    passer: SitePasser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a results file, a site four times larger holds no more pages' results at once,
    while its pages are extracted and while their final texts are made (every page's item
    kept its result to the end, and the results came back together); the file holds the
    results the pass gives in memory."""
    most = [0]

    def note() -> None:
        most[0] = max(most[0], results_held())

    extract, hashed = SitePasser.extract, sitejob.content_hash

    def counted_extract(self: SitePasser, *args: object) -> object:
        found = extract(self, *args)  # type: ignore[arg-type]
        note()
        return found

    def counted_hash(text: str) -> str:
        note()
        return hashed(text)

    monkeypatch.setattr(SitePasser, "extract", counted_extract)
    monkeypatch.setattr(sitejob, "content_hash", counted_hash)
    held, results = {}, {}
    for pages in (6, 24):
        most[0] = 0
        results[pages] = passer.run(story_job(pages, tmp_path / str(pages)))
        held[pages] = most[0]
    assert held[6] == held[24] <= 2
    monkeypatch.undo()
    for pages, result in results.items():
        assert result.ran and result.template and not result.pages
        in_memory = passer.run(story_job(pages, tmp_path / f"memory-{pages}", results=False))
        assert written(result) == in_memory.pages
        assert {page.fields["stage"] for page in in_memory.pages.values()} == {SITE_STAGE}
        assert all(page.fields["text"] for page in in_memory.pages.values())


def test_a_failed_pass_writes_the_results_it_gives_in_memory(
    passer: SitePasser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass that fails while it makes the final texts: its results file holds what the
    pass gives in memory then (the pages' page-level results), not the final texts made
    before it failed."""
    made = [0]
    final = streampass.final_extraction

    def failing(*args: object) -> object:
        made[0] += 1
        if made[0] > 3:
            raise RuntimeError("a bug in the slot decisions")
        return final(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(streampass, "final_extraction", failing)
    result = passer.run(story_job(6, tmp_path / "file"))
    made[0] = 0
    in_memory = passer.run(story_job(6, tmp_path / "memory", results=False))
    assert not result.ran and not in_memory.ran and result.errors == 1
    assert len(in_memory.pages) == 6
    assert written(result) == in_memory.pages


def test_the_crawl_process_writes_one_page_result_at_a_time(
    passer: SitePasser, tmp_path: Path
) -> None:
    """The crawl process reads the pages' results from the pass's file one page at a time,
    in URL order, as it writes their rows: one item holds a text at once."""
    job = story_job(24, tmp_path)
    result = passer.run(job)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    items = [
        PageItem(page.final_url, page.final_url, job.site, "c", start, 200) for page in job.pages
    ]
    rows, most = [], 0
    for item in site_rows(items, result):
        most = max(most, sum(1 for held in items if held.text))
        rows.append((item.final_url, item.stage, item.text))
    assert most == 1
    assert not any(item.text for item in items)
    got = written(result)
    expected = sorted(
        (job.pages[i].final_url, got[i].fields["stage"], got[i].fields["text"]) for i in got
    )
    assert rows == expected and len(rows) == 24


def test_the_hash_counts_hold_a_bucket_of_at_most_their_budget(tmp_path: Path) -> None:
    """A site of many distinct hashes: the counts never read more than their budget of hashes
    at once (each bucket held all of its share of the site's hashes), and the template
    hashes are those counted over every page at once, in the same order."""
    rng = np.random.default_rng(7)
    template = rng.integers(0, 2**63, 300, dtype=np.uint64) * np.uint64(2)
    pages = []
    for n in range(80):
        own = rng.integers(0, 2**63, 1_200, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
        shared = template[: 150 + n]  # some template hashes on only some of the pages
        pages.append(np.concatenate([own, shared, shared[:20]]))  # its root first; repeats
    config = sitelevel.SiteLevelConfig()
    expected = sitelevel.frequent_hashes([np.unique(page) for page in pages], config)
    for budget in (1 << 20, 4 << 10):
        counts = streampass.HashCounts(str(tmp_path / f"spill-{budget}"), budget=budget)
        try:
            for page in pages:
                counts.add(page)
            found = counts.frequent(config)
        finally:
            counts.close()
        assert found.dtype == np.uint64 and np.array_equal(found, expected)
        assert 0 < counts.largest <= max(budget, 8 * len(pages))
    assert len(expected) > 100


_STORED_RESIDENT = """
import os, sys
from datetime import UTC, datetime
from pathlib import Path
import pyarrow as pa
import pyarrow.parquet as pq
from newscrawl.site.site_store import stored_items

def resident() -> float:
    with open(f"/proc/{os.getpid()}/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

class Stored:
    crawl_id = "c"
    def __init__(self, root: Path) -> None:
        self.root = root
    def dataset_root(self, name: str) -> Path:
        return self.root / name
    def partition(self, site: str) -> dict[str, str]:
        return {"crawl": "c", "site": site}

def pages_file(root: Path, pages: int) -> None:
    folder = root / "pages" / "crawl=c" / "site=s"
    folder.mkdir(parents=True)
    rows = [
        {"url": f"http://s.test/{k}", "final_url": f"http://s.test/{k}",
         "fetched_at": datetime(2024, 1, 1, tzinfo=UTC), "status": 200,
         "content_type": "text/html", "headers": [("server", "t")],
         "html": "".join(f"<tr><td>{k}-{j}</td><td>{(k * 7919 + j * 104729) % 1000003}</td></tr>"
                         for j in range(40_000)).encode()}
        for k in range(pages)
    ]
    schema = pa.schema([("url", pa.string()), ("final_url", pa.string()),
                        ("fetched_at", pa.timestamp("us", tz="UTC")), ("status", pa.int32()),
                        ("content_type", pa.string()),
                        ("headers", pa.map_(pa.string(), pa.string())), ("html", pa.binary())])
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, folder / "part-1.parquet", row_group_size=4, compression="zstd")

root = Path(sys.argv[1])
if sys.argv[2] == "write":  # in a process of its own: the reading one starts afresh
    pages_file(root / "small", 2), pages_file(root / "large", 48)
    sys.exit()
small, large = Stored(root / "small"), Stored(root / "large")
stored_items(small, "s", refs={})
before = resident()
refs = {}
items = stored_items(large, "s", refs=refs)
assert len(items) == len(refs) == 48 and not any(item.html for item in items)
print(round(resident() - before, 1))
"""


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads /proc")
def test_listing_a_sites_stored_pages_keeps_one_row_group_resident(tmp_path: Path) -> None:
    """The crawl process lists a site's stored pages (their bytes' sizes read a row group at
    a time) at its site pass's start: 77 MB of pages in row groups of 4 leave 20 MB or less
    resident after (they left 40-45 MB: the high-water mark of the groups read, which grew
    with the site)."""
    for step in ("write", "read"):
        found = subprocess.run(
            [sys.executable, "-c", _STORED_RESIDENT, str(tmp_path), step],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert found.returncode == 0, found.stderr[-2000:]
    assert float(found.stdout) < 30.0
