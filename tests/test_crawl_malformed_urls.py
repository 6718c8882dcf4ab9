"""A crawl meets URLs urllib cannot parse: each is skipped, and nothing after it is lost.

A real `newscrawl crawl` against a small site served on 127.0.0.1 whose home page (links, its
`<base>`, canonical and feed links), robots.txt and sitemap each hold an unparsable URL (an
unclosed IPv6 bracket, a port out of range) before good ones, and one of whose links redirects
to such a URL: every good page is fetched and stored, the redirect is reported, and no spider
callback fails.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
ARTICLE = "<p>{} is a page of the malformed-link site, with enough words to be a page.</p>"


def pages(origin: str) -> dict[str, tuple[str, str]]:
    """Path -> (content type, body) of the site at `origin`."""
    html = "text/html; charset=utf-8"
    home = (
        "<html><head><title>Home</title><base href='http://[::1'>"
        "<link rel='canonical' href='http://[::1/'>"
        "<link rel='alternate' type='application/rss+xml' href='http://host:99999/feed'>"
        "</head><body><a href='/a.html'>a</a> <a href='http://[::1'>bad</a> "
        "<a href='http://host:99999/'>bad port</a> <a href='/b.html'>b</a> "
        "<a href='http://[]/'>empty host</a> <a href='c.html'>c</a> "
        "<a href='/moved.html'>moved</a></body></html>"
    )
    robots = f"User-agent: *\nAllow: /\nSitemap: http://[::1/sm.xml\nSitemap: {origin}/good.xml\n"
    sitemap = (
        '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f"<url><loc>http://[::1/x.html</loc></url><url><loc>{origin}/listed.html</loc></url>"
        "</urlset>"
    )
    site = {"/": (html, home), "/robots.txt": ("text/plain", robots)}
    site["/good.xml"] = ("application/xml", sitemap)
    for name in ("a", "b", "c", "listed"):
        site[f"/{name}.html"] = (html, f"<html><body>{ARTICLE.format(name)}</body></html>")
    return site


class Site:
    """The site on a thread of this process; `requested` lists the paths asked for."""

    def __init__(self) -> None:
        self.requested: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requested.append(self.path)
                if self.path == "/moved.html":  # a redirect to a URL that cannot be parsed
                    self.send_response(302)
                    self.send_header("Location", "http://[::1/elsewhere.html")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                found = site.pages.get(self.path)
                if found is None:
                    self.send_error(404)
                    return
                body = found[1].encode()
                self.send_response(200)
                self.send_header("Content-Type", found[0])
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.pages = pages(self.origin)


@pytest.fixture
def site() -> Iterator[Site]:
    served = Site()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()


def test_unparsable_urls_are_skipped_and_the_good_ones_after_them_crawled(
    site: Site, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    command = crawl_command(f"{site.origin}/", out, FAST_CRAWL, ["--max-pages", "20"])
    process = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert process.returncode == 0, process.stderr[-3000:]
    # the links after the bad ones, the sitemap after the bad Sitemap line, the page after
    # the sitemap's bad <loc>
    wanted = {"/", "/a.html", "/b.html", "/c.html", "/good.xml", "/listed.html"}
    assert wanted <= set(site.requested)
    summary = json.loads(next(out.glob(".newscrawl/*/summary.json")).read_text())
    assert "spider_exception" not in summary["errors"], summary["errors"]
    assert summary["errors"].get("redirect_bad_url") == 1  # reported, not a crash
    assert sum(s["pages"] for s in summary["sites"].values()) == 5  # the home page too
    assert pq.read_table(out / "pages").num_rows == 5
