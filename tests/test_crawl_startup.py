"""A short crawl starts no worker process it does not need: the site pass workers start once the
crawl's first `SITEPASS_WORKERS_AFTER_PAGES` pages have arrived (a crawl of fewer pages passes its
site in a thread, with the rows the workers give), the parse workers with its second page.

Real crawls (Scrapy against a server this test starts on 127.0.0.1, in a child process), checked
through the summary and the Parquet files they leave. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import serve_pages
from newscrawl.site.site_pool import SITEPASS_WORKERS_AFTER_PAGES

ROOT = Path(__file__).resolve().parents[1]
WORDS = "The harbour board met on Tuesday to weigh the new ferry timetable for the winter"


def _page(number: int, pages: int) -> bytes:
    links = "".join(f'<li><a href="/p{n}.html">Page {n}</a></li>' for n in range(1, pages))
    body = " ".join(f"{WORDS} (part {number}, line {line})." for line in range(12))
    return (
        f"<html><head><title>Page {number}</title></head><body><nav><ul>{links}</ul></nav>"
        f"<article><h1>Page {number}</h1><p>{body}</p></article>"
        "<footer>Harbour News, all rights kept</footer></body></html>"
    ).encode()


def _site(pages: int) -> Callable[[str], bytes | None]:
    """A site of `pages` pages: the home page and pages 1 to `pages` - 1, each linking all."""

    def page(path: str) -> bytes | None:
        if path in ("/", "/index.html"):
            return _page(0, pages)
        number = path.removeprefix("/p").removesuffix(".html")
        return _page(int(number), pages) if number.isdigit() and int(number) < pages else None

    return page


def _crawl(
    start: str, out: Path, pages: int, *settings: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A crawl of the site at `start`, capped at `pages`; its summary and its articles rows in
    URL order (without their fetch time)."""
    sites = out.with_suffix(".csv")
    sites.write_text(f"url,name,max_pages\n{start}index.html,harbour,{pages}\n")
    settings = (*FAST_CRAWL, "DOWNLOAD_TIMEOUT=5", "NEWSCRAWL_CRAWL_ID=same", *settings)
    command = crawl_command(sites, out, settings)
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    (summary,) = out.glob(".newscrawl/*/summary.json")
    rows = pq.read_table(out / "articles").drop(["fetched_at"]).to_pylist()
    return json.loads(summary.read_text()), sorted(rows, key=lambda row: row["final_url"])


def test_a_one_page_crawl_starts_no_site_pass_worker(tmp_path: Path) -> None:
    with serve_pages("127.0.0.1", _site(1)) as start:
        summary, rows = _crawl(start, tmp_path / "one", 1)
    assert summary["pages"] == 1 and summary["peak_rss_sitepass_mb"] == 0  # no worker ran
    (row,) = rows
    assert row["stage"] == "page" and "ferry timetable" in row["text"]


@pytest.mark.slow
def test_a_crawl_past_the_first_pages_passes_in_the_workers_with_the_same_rows(
    tmp_path: Path,
) -> None:
    pages = SITEPASS_WORKERS_AFTER_PAGES + 3
    with serve_pages("127.0.0.1", _site(pages)) as start:
        summary, rows = _crawl(start, tmp_path / "workers", pages)
        threaded, expected = _crawl(
            start, tmp_path / "thread", pages, "NEWSCRAWL_SITEPASS_WORKERS=0"
        )
    assert summary["pages"] == pages and summary["peak_rss_sitepass_mb"] > 0  # in a worker
    assert threaded["peak_rss_sitepass_mb"] == 0
    assert {row["stage"] for row in rows} == {"site"} and rows == expected
