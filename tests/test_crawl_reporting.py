"""The crawl summary tells what happened: refusals as refusals, and a resumed crawl's pages and
articles counted on the same basis. Real Scrapy, in a child process, against the demo web."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
FAST = [*FAST_CRAWL, "DOWNLOAD_TIMEOUT=1.5", "NEWSCRAWL_EXTRACTORS=nce"]


@pytest.fixture(scope="module")
def web() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0, faults=True, slow_seconds=3.0) as server:
        yield server


def crawl(sites: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = crawl_command(sites, out, FAST, extra)
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def summary_of(out: Path, crawl_id: str) -> dict:
    return json.loads((out / ".newscrawl" / crawl_id / "summary.json").read_text())


def test_redirects_to_file_and_data_urls_are_refusals(web: DemoServer, tmp_path: Path) -> None:
    sites = web.write_site_list(tmp_path / "sites.csv", ["faults"])
    out = tmp_path / "out"
    result = crawl(sites, out, "--crawl-id", "schemes")
    summary = summary_of(out, "schemes")
    refused = summary["samples"].get("redirect_scheme", [])
    assert summary["errors"].get("redirect_scheme", 0) == 2, summary["errors"]
    assert [s for s in refused if "/go/file " in s] and [s for s in refused if "/go/data " in s]
    for kind, samples in summary["samples"].items():  # not also an HTTP 302 or anything else
        if kind != "redirect_scheme":
            assert not [url for url in samples if "/go/file" in url or "/go/data" in url], kind
    assert "http_other" not in summary["errors"]
    printed = result.stdout.split("refused or skipped:", 1)
    assert len(printed) == 2 and "non-web URL" in printed[1]
    requested = {r.path for r in web.requests_for("faults")}
    assert {"/go/file", "/go/data"} <= requested


def test_resumed_crawl_counts_pages_and_articles_for_the_whole_crawl(
    web: DemoServer, tmp_path: Path
) -> None:
    """Killed once a small site is written whole and another is half-way, then resumed: the
    summary's pages and articles both count the whole crawl (the small site's articles were
    written before the kill), and it says what the resumed run itself added."""
    out = tmp_path / "out"
    caps = {"field-notes": 12, "harbor-gazette": 60}
    sites = web.write_site_list(tmp_path / "sites.csv", list(caps), caps=caps)
    # the spider's parse inline: which 12 pages the small site gets no longer depends on when
    # the parse pool hands back each page's links (on a loaded machine, only index pages)
    slow = (
        *FAST,
        "DOWNLOAD_DELAY=0.2",
        "CONCURRENT_REQUESTS_PER_DOMAIN=1",
        "NEWSCRAWL_PARSE_WORKERS=0",
    )
    command = crawl_command(sites, out, slow, ("--crawl-id", "twice"))
    child = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    written = [out / d / "crawl=twice" / "site=field-notes" for d in ("articles", "pages")]
    try:
        deadline = time.monotonic() + 120
        while not all(list(folder.glob("part-*.parquet")) for folder in written):
            assert child.poll() is None, "the crawl ended before it could be killed"
            assert time.monotonic() < deadline, "the small site was never written"
            time.sleep(0.1)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    stored_pages = pd.read_parquet(out / "pages")
    stored = pd.read_parquet(out / "articles")
    assert stored[stored.site == "field-notes"].is_article.sum() > 0

    result = crawl(sites, out, "--resume")
    summary = summary_of(out, "twice")
    articles = pd.read_parquet(out / "articles")
    assert not articles.final_url.duplicated().any()
    for name, site in summary["sites"].items():
        rows = articles[articles.site == name]
        assert site["pages"] == len(rows) == caps[name]
        assert site["articles"] == int(rows.is_article.sum()), name
    assert summary["pages"] == len(articles)
    assert summary["articles"] == int(articles.is_article.sum())
    assert summary["resumed"] == {
        "pages": len(stored_pages),
        "articles": int(stored.is_article.sum()),
    }
    assert summary["pages_fetched"] == len(articles) - len(stored_pages)
    new = articles[~articles.final_url.isin(stored.final_url)]
    assert summary["articles_written"] == int(new.is_article.sum())
    assert f"{len(articles)} pages, {summary['articles']} articles" in result.stdout
    assert f"this run fetched {summary['pages_fetched']} new pages" in result.stdout
