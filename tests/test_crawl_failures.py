"""Failures a crawl must make visible: a site that yields no page, a full disk, and the error
kinds and examples of the summary. Real crawls (`newscrawl crawl` in a child process) of small
sites served on 127.0.0.1 by the test."""

from __future__ import annotations

import contextlib
import gzip
import json
import random
import subprocess
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL
from recording_server import HTML, Answer, RecordingServer

from newscrawl.crawl.crawl_process import crawl_command

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PAGE = b"<html><body><p>A page of the site, with a few words of text on it.</p></body></html>"
TEXT = {"Content-Type": "text/plain"}


def crawl(
    sites: str, out: Path, *settings: str, pages: int = 5, extra: tuple[str, ...] = ()
) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Run `newscrawl crawl` on `sites` (at most `pages` a site); its result and summary
    (None when none was written)."""
    options = ["--max-pages", str(pages), *extra]
    command = crawl_command(sites, out, (*FAST_CRAWL, *settings), options)
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    found = list(out.glob(".newscrawl/*/summary.json"))
    return result, json.loads(found[0].read_text()) if found else None


def site_name(server: RecordingServer) -> str:
    return server.origin.removeprefix("http://").replace(":", "_")


def test_a_site_that_yields_no_page_fails_with_its_reason(tmp_path: Path) -> None:
    """A 404 start page and a robots.txt that disallows everything fetched nothing and the
    crawl exited 0; now each such site fails (3 beside a good site, 1 when all fail)."""
    good = {"/": Answer(200, PAGE)}
    missing = {"/": Answer(404, b"no such page")}
    robots = {
        "/robots.txt": Answer(200, b"User-agent: *\nDisallow: /\n", TEXT),
        "/": Answer(200, PAGE),
    }
    with (
        RecordingServer(good) as ok,
        RecordingServer(missing) as gone,
        RecordingServer(robots) as closed,
    ):
        urls = ",".join(f"{s.origin}/" for s in (ok, gone, closed))
        result, summary = crawl(urls, tmp_path / "out")
        alone, alone_summary = crawl(f"{gone.origin}/", tmp_path / "alone")
    assert result.returncode == 3, result.stderr[-3000:]
    assert summary["status"] == "partial"
    assert summary["failed_sites"] == sorted([site_name(gone), site_name(closed)])
    sites = summary["sites"]
    assert not sites[site_name(ok)]["failed"] and sites[site_name(ok)]["pages"] == 1
    assert sites[site_name(gone)]["failure"] == "no page: start page answered HTTP 404"
    assert sites[site_name(closed)]["failure"] == "no page: robots.txt disallows the start page"
    assert "/" not in closed.requested  # robots.txt obeyed
    assert "start page answered HTTP 404" in result.stdout  # the printed summary says why
    assert alone.returncode == 1, alone.stderr[-3000:]
    assert alone_summary["status"] == "failed" and alone_summary["failed_sites"] == [
        site_name(gone)
    ]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MB tmpfs (needs root: skipped where mount is not permitted)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs for a full disk here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def text_page(number: int, links: int, words: int = 20_000) -> bytes:
    """An HTML page of `words` pseudo-random words (they compress little) linking to
    /p0.../p<links-1>."""
    rng = random.Random(number)
    letters = "abcdefghijklmnopqrstuvwxyz"
    body = " ".join("".join(rng.choices(letters, k=7)) for _ in range(words))
    anchors = "".join(f'<a href="/p{j}">page {j}</a> ' for j in range(links))
    return f"<html><body><h1>Page {number}</h1><p>{body}</p>{anchors}</body></html>".encode()


def test_a_full_disk_stops_the_crawl_in_one_line_and_resumes(small_disk: Path) -> None:
    """A full disk ended with "the crawl ended without a summary", Errno 28 tracebacks in the
    log and a .tmp file left behind; now one line says the disk is full, nothing temporary
    stays, and --resume finishes the crawl once there is space, each page once."""
    pages = {"/": Answer(200, text_page(0, 20))}
    pages |= {f"/p{j}": Answer(200, text_page(j + 1, 20)) for j in range(20)}
    out = small_disk / "out"
    flush = "NEWSCRAWL_FLUSH_ROWS=4"  # rows reach the disk as the crawl goes
    with RecordingServer(pages) as site:
        full, summary = crawl(f"{site.origin}/", out, flush, pages=21)
        temporary = [p.name for p in out.rglob("*.tmp")]
        subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
        resumed, _ = crawl(f"{site.origin}/", out, flush, pages=21, extra=("--resume",))
    assert full.returncode == 1, full.stderr[-3000:]
    last = full.stderr.strip().splitlines()[-1]
    assert last.startswith("newscrawl crawl: disk full (No space left on device: "), last
    assert "Traceback" not in full.stderr and "Errno 28" not in full.stderr
    assert full.stderr.count("ERROR: disk full: No space left on device") == 1
    assert "stopped: disk full" in full.stdout  # the summary, printed though not written
    # "errors logged 1  e.g. " had no example
    logged = [line for line in full.stdout.splitlines() if "errors logged" in line]
    assert logged and all("e.g. disk full: No space left on device" in x for x in logged)
    assert summary is None or summary["reason"] == "disk full"
    assert temporary == []
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    for dataset in ("pages", "articles"):
        urls = pq.read_table(out / dataset, columns=["final_url"]).column(0).to_pylist()
        assert len(urls) == len(set(urls)) == 21, dataset


def slow_page(handler: BaseHTTPRequestHandler) -> None:
    """A page that answers after the crawl's download timeout."""
    time.sleep(6)
    with contextlib.suppress(OSError):  # the crawler gave up on it
        body = b"<html><body><p>A slow page.</p></body></html>"
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


def test_error_kinds_name_what_happened(tmp_path: Path) -> None:
    """A gzip sitemap bomb was counted as "unsafe XML (entities)", a Content-Encoding bomb as
    "other error", and the timeouts of pages asked for before the site had its cap vanished
    (their retries were refused by the cap)."""
    links = "".join(f'<a href="/fast{j}">fast</a> ' for j in range(3))
    links += "".join(f'<a href="/slow{j}">slow</a> ' for j in range(4))
    site: dict[str, Answer | Any] = {
        "/": Answer(200, f"<html><body>{links}</body></html>".encode())
    }
    site |= {f"/fast{j}": Answer(200, PAGE) for j in range(3)}
    site |= {f"/slow{j}": slow_page for j in range(4)}
    # 60 MB of XML in 60 KB: past the sitemap protocol's 50 MB
    bomb = gzip.compress(b"<urlset>" + b" " * (60 << 20), compresslevel=9)
    site["/sitemap.xml"] = Answer(200, bomb, {"Content-Type": "application/x-gzip"})
    # a start page that inflates past DOWNLOAD_MAXSIZE
    inflating = gzip.compress(b"<html><body>" + b" " * (3 << 20), compresslevel=9)
    encoded = {**HTML, "Content-Encoding": "gzip"}
    settings = ("DOWNLOAD_TIMEOUT=2", "RETRY_TIMES=2", "DOWNLOAD_MAXSIZE=2000000")
    with (
        RecordingServer(site) as capped,
        RecordingServer({"/": Answer(200, inflating, encoded)}) as bombed,
    ):
        result, summary = crawl(
            f"{capped.origin}/,{bombed.origin}/", tmp_path / "out", *settings, pages=4
        )
    assert result.returncode == 3, result.stderr[-3000:]  # the bombed site gave no page
    errors, samples = summary["errors"], summary["samples"]
    assert errors.get("decompression_bomb") == 2, errors
    assert "unsafe_xml" not in errors and "other" not in errors
    assert any("/sitemap.xml" in s for s in samples["decompression_bomb"])
    assert any(f"{bombed.origin}/" in s for s in samples["decompression_bomb"])
    failure = summary["sites"][site_name(bombed)]["failure"]
    assert failure.startswith("no page: start page: decompression bomb"), failure
    # each slow page is accounted for, its timeout shown, and not retried once the cap was met
    slow = errors.get("after_cap", 0) + errors.get("cap_reached", 0)
    assert slow == 4 and errors.get("after_cap", 0) >= 1, errors
    assert all("timeout" in s for s in samples["after_cap"]), samples["after_cap"]
    assert "timeout" not in errors  # none of them was a page the crawl still needed


def test_a_write_that_meets_a_full_disk_publishes_no_torn_file(small_disk: Path) -> None:
    """pyarrow closes a file whose write failed without a word: it was renamed into the
    dataset without its footer, and every later read of the dataset failed."""
    from newscrawl.storage.writer import ParquetDatasetWriter

    schema = pa.schema([("site", pa.string()), ("text", pa.string())])
    writer = ParquetDatasetWriter(small_disk / "rows", schema, ["site"], row_group_rows=8)
    rng = random.Random(0)
    with pytest.raises(OSError, match="No space left on device"):
        for _ in range(2000):
            text = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=4000))
            writer.write({"site": "a", "text": text})
    writer.close()  # nothing of the broken file is left to close
    files = list((small_disk / "rows").rglob("*"))
    assert not [f for f in files if f.name.endswith(".tmp")]
    for path in (f for f in files if f.suffix == ".parquet"):
        pq.read_metadata(path)  # whole
