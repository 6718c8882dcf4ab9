"""Helpers for the WARC tests: small CC-NEWS-shaped files and ways to damage them."""

from __future__ import annotations

import gzip
import re
from datetime import UTC, datetime
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from newscrawl.lab.synthetic_warc import Capture, write_ccnews_warc

__all__ = [
    "html_page",
    "member_offsets",
    "relength",
    "relength_member",
    "small_captures",
    "write_warc",
]


def html_page(n: int, words: int = 120) -> bytes:
    text = " ".join(f"word{(n * 7 + i) % 97}" for i in range(words))
    return (
        f"<!doctype html><html lang='en'><head><title>Story {n}</title></head><body>"
        f"<nav><a href='/'>Home</a></nav><article><h1>Story {n}</h1><p>{text}.</p>"
        f"<p>Second paragraph of story {n}, with more words to read.</p></article>"
        "<footer>Footer text</footer></body></html>"
    ).encode()


def small_captures(n: int = 6, host: str = "news.example") -> list[Capture]:
    when = datetime(2024, 5, 1, tzinfo=UTC)
    return [Capture(f"https://{host}/story/{i}.html", html_page(i), date=when) for i in range(n)]


def write_warc(path: Path, captures: list[Capture], **options: object) -> Path:
    write_ccnews_warc(path, captures, **options)  # type: ignore[arg-type]
    return path


def member_offsets(path: Path) -> list[tuple[str, str, int]]:
    """(type, url, offset) of every record, as warcio reads them."""
    found = []
    with open(path, "rb") as fh:
        iterator = ArchiveIterator(fh)
        for record in iterator:
            url = record.rec_headers.get_header("WARC-Target-URI") or ""
            found.append((record.rec_type, url, iterator.get_record_offset()))
    return found


def relength(record: bytes, delta: int) -> bytes:
    """A record with its (first, WARC) Content-Length changed by `delta`: a lying length."""
    match = re.search(rb"Content-Length: (\d+)", record)
    assert match is not None
    lie = b"Content-Length: %d" % (int(match.group(1)) + delta)
    return record[: match.start()] + lie + record[match.end() :]


def relength_member(data: bytes, start: int, end: int, delta: int) -> bytes:
    """The gzip member data[start:end] recompressed with its declared length changed."""
    plain = relength(gzip.decompress(data[start:end]), delta)
    return data[:start] + gzip.compress(plain) + data[end:]
