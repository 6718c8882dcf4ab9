"""`newscrawl ingest` end to end: real Scrapy pipelines over WARCs the tests write themselves
(CC-NEWS-shaped records from the demo web, damaged files), in child processes as a user runs it;
the Dask path against the in-process one; and a demo-web crawl with --warc ingested back."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from warc_helpers import html_page, member_offsets, relength_member, small_captures, write_warc

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web
from newscrawl.html.urls import canonical_url
from newscrawl.lab.synthetic_warc import Capture, demo_captures, write_ccnews_warc

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def ingest(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "newscrawl.cli", "ingest", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def rows(out: Path, dataset: str) -> pd.DataFrame:
    frame = pd.read_parquet(out / dataset)
    for column in ("crawl", "site"):
        frame[column] = frame[column].astype(str)
    keys = [c for c in ("site", "final_url", "url", "node") if c in frame.columns]
    return frame.sort_values(keys).reset_index(drop=True)


def damaged_warc(path: Path) -> Path:
    """Six good pages on damaged.example, then a corrupt gzip member, a lying length, a record
    over the size cap and a truncated tail around them."""
    huge = b"<html><body><p>" + b"big " * 80_000 + b"</p></body></html>"
    captures = [*small_captures(6, "damaged.example")]
    captures.insert(3, Capture("https://damaged.example/huge.html", huge))
    captures += small_captures(2, "tail.example")
    write_warc(path, captures)
    data = path.read_bytes()
    found = member_offsets(path)
    bounds = [o for _, _, o in found] + [len(data)]
    member = {url: (o, bounds[i + 1]) for i, (kind, url, o) in enumerate(found)
              if kind == "response"}  # fmt: skip
    data = relength_member(data, *member["https://damaged.example/story/4.html"], -30)
    start = member["https://damaged.example/story/1.html"][0]
    data = data[: start + 40] + b"\0" * 40 + data[start + 80 :]
    tail = member["https://tail.example/story/1.html"][0]
    path.write_bytes(data[: tail + 100])
    return path


def test_ingest_runs_archives_through_the_crawl_pipelines(tmp_path: Path) -> None:
    archives = tmp_path / "archives"
    archives.mkdir()
    demo = list(demo_captures())
    gold = {
        canonical_url(f"https://{site.name}-0.example{path}")
        for site in build_demo_web(4).sites
        for path in site.articles
    }
    extra = [
        Capture(demo[5].url, demo[5].body),  # captured again: a duplicate
        Capture("https://harbor-gazette-0.example/missing.html", b"<html>no</html>", status=404),
    ]
    write_ccnews_warc(archives / "CC-NEWS-20240501000000-00001.warc.gz", demo + extra,
                      revisit_every=10)  # fmt: skip
    damaged_warc(archives / "CC-NEWS-20240501000000-00002.warc.gz")
    (archives / "notes.warc.gz").write_bytes(b"not an archive at all\n" * 20)
    (archives / ".hidden.warc.gz.open").write_bytes(b"being written")
    out = tmp_path / "out"

    done = ingest(archives, "--out", out, "--set", "DOWNLOAD_MAXSIZE=200000", "--json",
                  tmp_path / "summary.json")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "damaged input" in done.stdout and "corrupt" in done.stdout
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["files"] == 3 and not summary["failed"]
    assert {"corrupt", "bad_length", "truncated", "too_large", "not_warc"} <= set(
        summary["problems"]
    )
    assert summary["records"]["revisit"] > 0 and summary["records"]["metadata"] > 0
    assert summary["skipped"]["duplicate"] == 1 and summary["skipped"]["not_200"] == 1
    assert summary["skipped"]["not_html"] > 0  # robots.txt, feeds, sitemaps

    articles, pages = rows(out, "articles"), rows(out, "pages")
    assert not articles.final_url.duplicated().any()
    assert set(articles[articles.is_article].final_url) >= gold
    damaged = set(articles[articles.site == "damaged.example"].final_url)
    assert damaged == {f"https://damaged.example/story/{i}.html" for i in (0, 2, 3, 5)}
    assert set(articles[articles.site == "tail.example"].final_url) == {
        "https://tail.example/story/0.html"
    }
    assert set(articles.site) == {
        "harbor-gazette-0.example",
        "valley-courier-0.example",
        "field-notes-0.example",
        "damaged.example",
        "tail.example",
    }
    assert articles.warc_file.notna().all() and articles.warc_record_id.notna().all()
    assert (articles.warc_date == articles.fetched_at).all()
    first = articles[articles.final_url == canonical_url(demo[5].url)].iloc[0]
    offsets = [o for kind, url, o in member_offsets(archives / first.warc_file)
               if kind == "response" and url == demo[5].url]  # fmt: skip
    assert first.warc_offset == offsets[0] and len(offsets) == 2  # the first capture wins
    assert set(pages.final_url) == set(articles.final_url)
    nodes = pd.read_parquet(out / "nodes")
    assert {"harbor-gazette-0.example", "field-notes-0.example"} <= set(nodes.site.astype(str))

    again = ingest(archives, "--out", out)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "already ingested in run ingest: 3 files" in again.stdout
    assert len(rows(out, "articles")) == len(articles)


def test_hostless_urls_are_bad_urls_and_a_hole_is_read_past(tmp_path: Path) -> None:
    # Each of these became a site ("", "\x00nul", "..") and the page after the hole was lost.
    hostless = ["http:///nohost", "http://\x00nul/x", "http://../x"]
    captures = small_captures(4, "good.example")
    captures[1:1] = [Capture(url, html_page(7 + n)) for n, url in enumerate(hostless)]
    archives = tmp_path / "archives"
    archives.mkdir()
    path = write_warc(archives / "a.warc", captures, gzip=False)
    data = path.read_bytes()
    at = data.index(b"WARC/1.0", data.index(b"good.example/story/3.html") - 400)
    path.write_bytes(data[:at] + b"\0" * (2 << 20) + data[at:])
    out = tmp_path / "out"
    done = ingest(archives, "--out", out, "--json", tmp_path / "summary.json")
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["skipped"]["bad_url"] == 3
    assert summary["examples"]["bad_url"] == [
        "http:///nohost (no usable host)",
        "http://\\x00nul/x (no usable host)",
        "http://../x (no usable host)",
    ]
    assert "\x00" not in done.stdout
    assert "NUL bytes where a record should start; 2097152 bytes skipped" in done.stdout
    articles = rows(out, "articles")
    assert set(articles.site) == {"good.example"}
    assert set(articles.final_url) == {f"https://good.example/story/{i}.html" for i in range(4)}
    assert {p.name for p in out.rglob("*")}.isdisjoint({"", ".", "..", "\x00nul", "site=.."})


def test_a_file_that_grew_since_it_was_ingested_is_read_again(tmp_path: Path) -> None:
    # A download ingested before it finished, then completed under the same name: its other
    # pages are read, the ones already written are not written twice.
    captures = list(demo_captures(html_only=True))[:40]
    full = tmp_path / "full.warc.gz"
    write_ccnews_warc(full, captures)
    archives = tmp_path / "archives"
    archives.mkdir()
    data = full.read_bytes()
    (archives / "a.warc.gz").write_bytes(data[: len(data) // 2])
    first = ingest(archives, "--out", tmp_path / "out")
    assert first.returncode == 0, first.stderr[-3000:]
    early = rows(tmp_path / "out", "pages")
    assert 0 < len(early) < 40
    (archives / "a.warc.gz").write_bytes(data)
    again = ingest(archives, "--out", tmp_path / "out")
    assert again.returncode == 0, again.stderr[-3000:]
    assert "their size changed since run ingest ingested them: 1 files" in again.stdout
    pages = rows(tmp_path / "out", "pages")
    assert set(pages.final_url) == {canonical_url(c.url) for c in captures}
    assert not pages.final_url.duplicated().any()
    assert not rows(tmp_path / "out", "articles").final_url.duplicated().any()
    third = ingest(archives, "--out", tmp_path / "out")
    assert "already ingested in run ingest: 1 files" in third.stdout


def test_one_dask_task_per_file_gives_the_same_rows(tmp_path: Path) -> None:
    captures = list(demo_captures(copies=2, html_only=True))
    half = len(captures) // 2
    archives = tmp_path / "archives"
    archives.mkdir()
    write_ccnews_warc(archives / "a.warc.gz", captures[:half])
    write_ccnews_warc(archives / "b.warc.gz", captures[half:] + captures[:20])
    options = ("--max-pages", "20", "--set", "NEWSCRAWL_INGEST_OPEN_PAGES=25")
    here = ingest(archives, "--out", tmp_path / "here", *options)
    assert here.returncode == 0, here.stderr[-3000:]
    dask = ingest(archives, "--out", tmp_path / "dask", *options, "--cluster",
                  "--dask-workers", "2")  # fmt: skip
    assert dask.returncode == 0, dask.stderr[-3000:]
    for dataset in ("articles", "pages", "nodes"):
        left, right = rows(tmp_path / "here", dataset), rows(tmp_path / "dask", dataset)
        pd.testing.assert_frame_equal(left, right)
    articles = rows(tmp_path / "here", "articles")
    per_file_site = articles.groupby(["warc_file", "site"]).size()
    assert per_file_site.max() == 20 and ("b.warc.gz", "harbor-gazette-0.example") in per_file_site
    assert len(articles) == len(articles.drop_duplicates(["warc_file", "final_url"]))


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


def test_a_crawl_kept_as_warc_ingests_back_to_the_same_articles(
    demo: DemoServer, tmp_path: Path
) -> None:
    sites = tmp_path / "sites.txt"
    sites.write_text("\n".join(demo.site_urls.values()) + "\n")
    fast = [
        "NEWSCRAWL_ALLOW_PRIVATE=loopback",
        "AUTOTHROTTLE_ENABLED=False",
        "DOWNLOAD_DELAY=0",
        "CONCURRENT_REQUESTS_PER_DOMAIN=8",
        "DOWNLOAD_TIMEOUT=3",
        "LOG_LEVEL=WARNING",
    ]
    extra = ["--warc", str(tmp_path / "warc"), "--crawl-id", "c1"]
    command = crawl_command(sites, tmp_path / "crawl", fast, extra)
    crawled = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert crawled.returncode == 0, crawled.stderr[-3000:]
    [warc] = sorted((tmp_path / "warc").iterdir())  # closed: no hidden .open file left
    assert warc.name.startswith("newscrawl-c1-") and warc.name.endswith(".warc.gz")

    done = ingest(tmp_path / "warc", "--out", tmp_path / "ingested", "--crawl-id", "c1")
    assert done.returncode == 0, done.stderr[-3000:]
    crawl, back = rows(tmp_path / "crawl", "articles"), rows(tmp_path / "ingested", "articles")
    assert crawl.is_article.sum() == 162
    columns = ["final_url", "site", "is_article", "article_reason", "title", "text", "published",
               "author", "content_hash", "warc_file", "warc_offset", "warc_record_id"]  # fmt: skip
    pd.testing.assert_frame_equal(crawl[columns], back[columns])


def test_the_ingest_passes_sites_in_a_thread_unless_told(tmp_path: Path) -> None:
    from newscrawl.scale.ingest_run import ingest_settings

    # it waits for each host's pass before reading on: worker processes would overlap nothing
    settings = ingest_settings(tmp_path / "out", tmp_path / "stage", "run")
    assert settings.getint("NEWSCRAWL_SITEPASS_WORKERS") == 0
    told = ingest_settings(
        tmp_path / "out", tmp_path / "stage", "run", {"NEWSCRAWL_SITEPASS_WORKERS": 2}
    )
    assert told.getint("NEWSCRAWL_SITEPASS_WORKERS") == 2


def test_the_summary_times_parse_and_extraction_within_the_ingest(tmp_path: Path) -> None:
    """With the site pass off, pages are parsed and extracted as they are read: the summary
    gives the seconds that took, within each file's time (what `bench ingest` compares)."""
    warc = tmp_path / "demo.warc.gz"
    write_ccnews_warc(warc, demo_captures())
    summary = tmp_path / "summary.json"
    done = ingest(warc, "--out", tmp_path / "out", "--json", summary,
                  "--set", "NEWSCRAWL_SITELEVEL=False")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(summary.read_text())
    (report,) = data["per_file"]
    assert report["pages"] > 100
    assert 0 < report["extract_seconds"] < report["seconds"]
    assert data["extract_seconds"] == round(report["extract_seconds"], 2)


def test_bench_ingest_prints_both_ratios_for_both_page_sizes() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "newscrawl.cli", "bench", "ingest", "--copies", "1", "--sizes",
         "", "--heavy-pages", "3", "--repeat", "1"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    within = [float(line.split(":")[1].split()[0]) for line in done.stdout.splitlines()
              if "within the ingest's process" in line]  # fmt: skip
    across = [line for line in done.stdout.splitlines() if "extraction-only process" in line]
    assert len(within) == 2 and len(across) == 2  # the demo web, then the heavy pages
    assert all(0 < ratio <= 1.0 for ratio in within)  # a share of the ingest's own time
    assert "heavy pages: 3 generated pages" in done.stdout
