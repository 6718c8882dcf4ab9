"""What the archive readers hand over: a record's head (`RecordHead`), a record with its decoded
payload (`Record`), and a `Problem` where a record or the archive is damaged; `decode_payload`
undoes the payload's content encodings (gzip, deflate, Brotli, zstd) within a size limit."""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from warcio.bufferedreaders import BufferedReader, ChunkedDataReader, DecompressingBufferedReader

__all__ = [
    "Problem",
    "Record",
    "RecordHead",
]


@dataclass(frozen=True, slots=True)
class RecordHead:
    """What a record says about itself, before its payload is read."""

    type: str  # warcinfo, request, response, metadata, revisit, resource, conversion
    url: str
    date: datetime | None
    record_id: str | None  # None for ARC records, which have none
    offset: int  # where the record starts in the file (of its gzip member, if gzipped)
    status: int | None  # HTTP status of response and revisit records
    http_headers: tuple[tuple[str, str], ...]
    length: int  # declared block length (Content-Length of the record)

    def header(self, name: str) -> str:
        """An HTTP header's value ("" when absent), by case-insensitive name."""
        name = name.lower()
        return next((v for k, v in self.http_headers if k.lower() == name), "")


@dataclass(frozen=True, slots=True)
class Record:
    head: RecordHead
    payload: bytes | None  # decoded HTTP payload, when the caller asked for it


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with the file at `offset`; `kind` is one of the keys of PROBLEMS."""

    kind: str
    offset: int
    detail: str


PROBLEMS = {
    "not_warc": "not a WARC or ARC file",
    "corrupt": "corrupt data (skipped to the next record)",
    "truncated": "record cut short (truncated file or declared length too long)",
    "bad_length": "declared length wrong (the record does not end where it says)",
    "too_large": "record over the size cap",
    "bad_encoding": "payload transfer or content encoding undecodable",
}


def decode_payload(raw: bytes, head: RecordHead, limit: int) -> bytes:
    """The payload with its transfer encoding (chunked) and content encoding (gzip, deflate,
    br, zstd) undone, at most `limit` + 1 bytes (more means too large). Raises on undecodable
    data."""
    encoding = head.header("content-encoding").strip().lower() or None
    chunked = head.header("transfer-encoding").strip().lower() == "chunked"
    own = _DECODERS.get(encoding or "")
    if own is not None:  # br and zstd: decoded here, see `_DECODERS`
        return own(
            _read_capped(ChunkedDataReader(io.BytesIO(raw)), len(raw)) if chunked else raw, limit
        )
    if encoding not in BufferedReader.get_supported_decompressors():
        encoding = None
    stream: Any
    if chunked:
        stream = ChunkedDataReader(io.BytesIO(raw), decomp_type=encoding)
    elif encoding:
        stream = DecompressingBufferedReader(io.BytesIO(raw), decomp_type=encoding)
    else:
        return raw[: limit + 1]
    return _read_capped(stream, limit)


def _read_capped(stream: Any, limit: int) -> bytes:
    """What `stream` gives, at most `limit` + 1 bytes."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _unbrotli(data: bytes, limit: int) -> bytes:
    """Brotli-decoded `data`, at most `limit` + 1 bytes (a bomb stops there)."""
    import brotli  # Scrapy's own dependency for br responses

    decoder = brotli.Decompressor()
    chunks = [decoder.process(data, output_buffer_limit=65536)]
    size = len(chunks[0])
    while size <= limit and not decoder.is_finished():
        chunk = decoder.process(b"", output_buffer_limit=65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)[: limit + 1]


def _unzstd(data: bytes, limit: int) -> bytes:
    """Zstandard-decoded `data`, at most `limit` + 1 bytes; a truncated frame gives what it
    holds."""
    try:
        from compression import zstd  # type: ignore[import-not-found]  # Python 3.14
    except ImportError:
        from backports import zstd  # type: ignore[no-redef]  # Scrapy's own dependency

    return _read_capped(_UntilTruncated(zstd.ZstdFile(io.BytesIO(data))), limit)


class _UntilTruncated:
    """A reader whose truncated end (EOFError) reads as its end."""

    def __init__(self, reader: Any) -> None:
        self._reader = reader

    def read(self, size: int) -> bytes:
        try:
            return bytes(self._reader.read(size))
        except EOFError:
            return b""


# Content encodings decoded here rather than by warcio: its br reader sets an attribute that
# Brotli 1.2's decompressor no longer has (every br record failed), and it has no zstd. The
# crawl asks servers for both (Scrapy's Accept-Encoding) and `--warc` stores bodies as sent.
_DECODERS: dict[str, Callable[[bytes, int], bytes]] = {"br": _unbrotli, "zstd": _unzstd}


def payload_record(head: RecordHead, raw: bytes | None, limit: int, big: bool) -> Record | Problem:
    if big or (raw is not None and len(raw) > limit):
        return Problem("too_large", head.offset, f"{head.url}: {head.length} bytes")
    if raw is None:
        return Record(head, None)
    try:
        payload = decode_payload(raw, head, limit)
    except Exception as err:
        return Problem("bad_encoding", head.offset, f"{head.url}: {type(err).__name__}: {err}")
    if len(payload) > limit:
        return Problem("too_large", head.offset, f"{head.url}: over {limit} bytes decoded")
    return Record(head, payload)
