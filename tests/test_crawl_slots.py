"""A site's concurrency and its page cap, held at the downloader and the scheduler.

Real `newscrawl crawl` runs against a server on 127.0.0.1 whose home page links to many pages.
With no download delay, Scrapy's downloader (asyncio reactor) started every request queued in a
site's slot at once, up to CONCURRENT_REQUESTS, whatever CONCURRENT_REQUESTS_PER_DOMAIN said;
and once a site had its pages, each of its queued links still went through the downloader's
middlewares to be refused there one by one, and those waiting in the slot were fetched.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl import settings as project
from newscrawl.crawl.crawl_process import crawl_command

pytestmark = pytest.mark.slow  # real crawls in child processes

ROOT = Path(__file__).resolve().parents[1]
LINKS = 60
WRITE_ONLY = {
    "newscrawl.pipelines.rawpages.RawPagePipeline": 40,
    "newscrawl.pipelines.parquet.ParquetWriterPipeline": 500,
}
# a downloader middleware ahead of all others: counts the requests that reach the downloader
PROBE = """
import os

class Probe:
    seen = 0

    def process_request(self, request):
        if request.meta.get("newscrawl_kind") == "page":
            Probe.seen += 1
            with open(os.environ["PROBE_FILE"], "w") as out:
                out.write(str(Probe.seen))
"""


class LinkSite:
    """A home page linking to LINKS pages; each answer takes `delay` seconds, and the most
    requests in progress at once is kept in `peak`."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.pages: list[str] = []
        self.peak = self.now = 0
        self.lock = threading.Lock()

    def answer(self, path: str) -> bytes | None:
        if path == "/":
            links = "".join(f'<a href="/p{n}.html">page {n}</a> ' for n in range(LINKS))
            return f"<html><body><h1>Home</h1>{links}</body></html>".encode()
        if path.startswith("/p") and path.endswith(".html"):
            self.pages.append(path)
            return f"<html><body><p>Page {path}.</p></body></html>".encode()
        return None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with site.lock:
                    site.now += 1
                    site.peak = max(site.peak, site.now)
                try:
                    time.sleep(site.delay)
                    self._answer(site.answer(self.path))
                finally:
                    with site.lock:
                        site.now -= 1

            def _answer(self, body: bytes | None) -> None:
                if body is None:
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@contextmanager
def serving(site: LinkSite) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), site.handler())
    server.daemon_threads = True
    server.request_queue_size = 64  # no connection refused for lack of a listen queue
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def _crawl(
    url: str, out: Path, cap: int, settings: list[str], env: Callable[[], dict[str, str]] = dict
) -> dict[str, Any]:
    command = crawl_command(url, out, [*FAST_CRAWL, *settings], ["--max-pages", str(cap)])
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **env()},
    )
    summaries = list(out.glob(".newscrawl/*/summary.json"))
    assert done.returncode == 0 and summaries, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(summaries[0].read_text())
    return summary


def test_a_site_never_has_more_requests_on_the_wire_than_its_concurrency(tmp_path: Path) -> None:
    site = LinkSite(delay=0.05)
    with serving(site) as url:
        summary = _crawl(
            url,
            tmp_path / "out",
            LINKS + 1,
            ["CONCURRENT_REQUESTS_PER_DOMAIN=2", f"ITEM_PIPELINES={json.dumps(WRITE_ONLY)}"],
        )
    assert summary["pages"] == LINKS + 1
    assert sorted(site.pages) == sorted(f"/p{n}.html" for n in range(LINKS))
    assert site.peak <= 2, f"{site.peak} requests at once for a concurrency of 2"


def test_the_queued_links_of_a_site_with_its_pages_reach_neither_downloader_nor_site(
    tmp_path: Path,
) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    probe_file = tmp_path / "probe.txt"
    middlewares = {**project.DOWNLOADER_MIDDLEWARES, "probe.Probe": 1}
    cap = 5
    site = LinkSite(delay=0.02)
    with serving(site) as url:
        summary = _crawl(
            url,
            tmp_path / "out",
            cap,
            [
                "CONCURRENT_REQUESTS=4",
                "CONCURRENT_REQUESTS_PER_DOMAIN=2",
                f"DOWNLOADER_MIDDLEWARES={json.dumps(middlewares)}",
                f"ITEM_PIPELINES={json.dumps(WRITE_ONLY)}",
            ],
            lambda: {"PYTHONPATH": str(tmp_path), "PROBE_FILE": str(probe_file)},
        )
    assert summary["pages"] == cap
    # every link is a page kept, or refused by the cap (fetched or not): none lost, none twice
    assert summary["errors"]["cap_reached"] == LINKS + 1 - cap
    seen = int(probe_file.read_text())
    assert seen <= cap + 4 + 2, f"{seen} of {LINKS + 1} page requests reached the downloader"
    assert len(site.pages) <= cap + 2 + 2, f"{len(site.pages)} pages fetched for a cap of {cap}"
