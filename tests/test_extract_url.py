"""`newscrawl extract URL`: one page fetched over HTTP from a server on 127.0.0.1 that the test
starts, with the crawl's address guard, redirect checks and size limit."""

from __future__ import annotations

import contextlib
import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import newscrawl
from newscrawl.cli import main
from newscrawl.crawl.fetch import FetchError, fetch_page

PARAGRAPH = "The harbour council met on Tuesday to talk about the new ferry timetable and its cost."
PAGE = (
    "<html><head><title>Ferry timetable</title></head><body><nav><a href='/'>Home</a></nav>"
    f"<article><h1>Ferry timetable</h1>{f'<p>{PARAGRAPH}</p>' * 8}</article></body></html>"
).encode()
LIMIT = 10 * 1024 * 1024  # the crawl's DOWNLOAD_MAXSIZE


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE, {}),
            "/gzip": (200, "text/html", gzip.compress(PAGE), {"Content-Encoding": "gzip"}),
            "/hop": (302, "text/html", b"", {"Location": "/page"}),
            "/to-private": (302, "text/html", b"", {"Location": "http://10.1.2.3/page"}),
            "/to-ftp": (302, "text/html", b"", {"Location": "ftp://127.0.0.1/page"}),
            "/loop": (302, "text/html", b"", {"Location": "/loop"}),
            "/big": (200, "text/html", b"<p>" + b"x" * (LIMIT + 10), {}),
            "/pdf": (200, "application/pdf", b"%PDF-1.4", {}),
        }
        status, kind, body, headers = routes.get(self.path, (404, "text/html", b"no", {}))
        self.send_response(status)
        self.send_header("Content-Type", kind)
        if self.path != "/big":  # the size is found out while reading
            self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        with contextlib.suppress(OSError):  # the client stopped reading at its limit
            self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_extract_url_fetches_the_page_when_loopback_is_allowed(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["extract", f"{server}/hop", "--allow-private", "loopback"]) == 0
    out = capsys.readouterr().out
    expected = newscrawl.extract(PAGE, url=f"{server}/page")
    assert out == f"{expected.title}\n\n{expected.text}\n"
    assert PARAGRAPH in out


def test_extract_url_refuses_loopback_as_the_crawl_does(
    server: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["extract", f"{server}/page"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "refused non-public address 127.0.0.1" in captured.err


def test_extract_keeps_the_order_of_urls_and_files(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    saved = tmp_path / "saved.html"
    saved.write_bytes(b"<html><head><title>Saved</title></head><body><p>On disk.</p></body></html>")
    args = ["extract", f"{server}/page", str(saved), f"{server}/gzip", "-f", "jsonl"]
    assert main([*args, "--allow-private", "loopback", "-e", "cetd-tpc"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split('"path": ')[1].split('"')[1] for line in lines] == [
        f"{server}/page",
        str(saved),
        f"{server}/gzip",
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/to-private", "refused non-public address 10.1.2.3"),
        ("/to-ftp", r"not an http\(s\) URL"),
        ("/loop", "more than 10 redirects"),
        ("/big", "larger than the crawl's limit"),
        ("/pdf", "not an HTML page"),
        ("/missing", "HTTP 404"),
    ],
)
def test_fetch_refuses_what_the_crawl_refuses(server: str, path: str, message: str) -> None:
    with pytest.raises(FetchError, match=message):
        fetch_page(f"{server}{path}", allow_private="loopback")


def test_fetch_decompresses_and_follows_redirects(server: str) -> None:
    page = fetch_page(f"{server}/hop", allow_private="loopback")
    assert page.final_url == f"{server}/page" and page.body == PAGE
    assert fetch_page(f"{server}/gzip", allow_private="loopback").body == PAGE
