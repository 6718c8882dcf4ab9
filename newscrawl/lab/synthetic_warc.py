"""WARC files shaped like Common Crawl's news crawl (CC-NEWS), made locally, for tests and the
ingest benchmark: a warcinfo record, then per capture a request, a response and a metadata
record (fetch time), and revisit records for pages captured again unchanged. Pages come from
the bundled demo web (`demo_captures`) or from anywhere else.
"""

from __future__ import annotations

import gzip as gzip_module
import io
import os
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

__all__ = ["Capture", "demo_captures", "write_ccnews_warc"]


@dataclass(frozen=True, slots=True)
class Capture:
    url: str
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    status: int = 200
    date: datetime | None = None
    content_encoding: str | None = None  # "gzip", "br" or "zstd": how the body is on the wire
    chunked: bool = False  # sent with Transfer-Encoding: chunked


def demo_captures(seed: int = 4, copies: int = 1, html_only: bool = False) -> Iterator[Capture]:
    """Every response of the demo web as a capture, each site `copies` times on hosts of its
    own (``https://NAME-K.example/``), in a fixed order."""
    from newscrawl.demo.web import build_demo_web

    web = build_demo_web(seed)
    start = datetime(2024, 5, 1, tzinfo=UTC)
    n = 0
    for copy in range(copies):
        for site in web.sites:
            base = f"https://{site.name}-{copy}.example"
            for path, page in sorted(site.pages.items()):
                if html_only and not page.content_type.startswith("text/html"):
                    continue
                n += 1
                yield Capture(
                    url=base + path,
                    body=page.body.replace(b"{{BASE}}", base.encode()),
                    content_type=page.content_type,
                    status=page.status,
                    date=start + timedelta(seconds=n),
                )


def _http_headers(capture: Capture, body: bytes) -> StatusAndHeaders:
    headers = [("Content-Type", capture.content_type), ("Server", "demo")]
    if capture.content_encoding:
        headers.append(("Content-Encoding", capture.content_encoding))
    if capture.chunked:
        headers.append(("Transfer-Encoding", "chunked"))
    else:
        headers.append(("Content-Length", str(len(body))))
    phrase = {200: "OK", 301: "Moved Permanently", 404: "Not Found"}.get(capture.status, "X")
    return StatusAndHeaders(f"{capture.status} {phrase}", headers, protocol="HTTP/1.1")


def _wire_body(capture: Capture) -> bytes:
    body = capture.body
    if capture.content_encoding == "gzip":
        body = gzip_module.compress(body, mtime=0)
    elif capture.content_encoding == "br":
        import brotli

        body = brotli.compress(body)
    elif capture.content_encoding == "zstd":
        from backports import zstd

        body = zstd.compress(body)
    if capture.chunked:
        size = max(1, len(body) // 3)
        parts = [body[i : i + size] for i in range(0, len(body), size)]
        body = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    return body


def _warc_date(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_ccnews_warc(
    path: str | os.PathLike[str],
    captures: Iterable[Capture],
    *,
    gzip: bool = True,
    revisit_every: int = 0,
    seed: int = 0,
) -> int:
    """Write `captures` as a CC-NEWS-shaped WARC file; every `revisit_every`-th capture is
    followed by a revisit record of it. Returns the number of records written."""
    rng = random.Random(seed)
    records = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=gzip, warc_version="WARC/1.0")
        info = writer.create_warcinfo_record(
            Path(path).name,
            {
                "software": "newscrawl synthetic CC-NEWS writer",
                "isPartOf": "CC-NEWS-TEST",
                "operator": "tests",
                "format": "WARC File Format 1.0",
            },
        )
        writer.write_record(info)
        records += 1
        for n, capture in enumerate(captures, start=1):
            date = _warc_date(capture.date or datetime(2024, 5, 1, tzinfo=UTC))
            body = _wire_body(capture)
            http = _http_headers(capture, body)
            request = writer.create_warc_record(
                capture.url,
                "request",
                payload=io.BytesIO(b""),
                length=0,
                http_headers=StatusAndHeaders(
                    f"GET {urlsplit(capture.url).path or '/'} HTTP/1.1",
                    [("User-Agent", "CCBot/2.0"), ("Accept-Encoding", "gzip")],
                    is_http_request=True,
                ),
                warc_headers_dict={"WARC-Date": date},
            )
            response = writer.create_warc_record(
                capture.url,
                "response",
                payload=io.BytesIO(body),
                length=len(body),
                http_headers=http,
                warc_headers_dict={"WARC-Date": date, "WARC-IP-Address": "192.0.2.1"},
            )
            writer.write_request_response_pair(request, response)
            fetch = f"fetchTimeMs: {rng.randint(50, 900)}\r\n".encode()
            metadata = writer.create_warc_record(
                capture.url,
                "metadata",
                payload=io.BytesIO(fetch),
                length=len(fetch),
                warc_content_type="application/warc-fields",
                warc_headers_dict={
                    "WARC-Date": date,
                    "WARC-Concurrent-To": response.rec_headers.get_header("WARC-Record-ID"),
                },
            )
            writer.write_record(metadata)
            records += 3
            if revisit_every and n % revisit_every == 0:
                revisit = writer.create_revisit_record(
                    capture.url,
                    digest=response.rec_headers.get_header("WARC-Payload-Digest"),
                    refers_to_uri=capture.url,
                    refers_to_date=date,
                    http_headers=http,
                )
                writer.write_record(revisit)
                records += 1
    return records
