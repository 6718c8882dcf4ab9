"""The fast way through a sound stretch of a WARC file: FastWARC (Resiliparse's WARC reader,
compiled) reads the records, and hands over to the reference reader (warcio, in
`newscrawl.storage.warc_reader`) at the first sign of trouble.

FastWARC is strict: a corrupt gzip member, a header that is not one, a record whose declared
length lies (the bytes after it are not the next record) all raise. A record is therefore handed
on only once the record after it has been read cleanly; when FastWARC raises, the record it
still holds - the one the damage may be in - and everything after it go to the reference
reader, which finds the damage, reports it, resynchronises, and reads a few records before
FastWARC takes over again (`newscrawl.storage.warc_reader.read_archive`). The last record of a pass
goes to the reference reader too, so a file cut short at its end is judged as before. Offsets
are those of warcio: where the record's gzip member starts (gzipped files), or the record's
first byte (plain files).

What a record gives (`RecordHead`: type, URL, date, id, status, HTTP headers, declared length)
is read from the same header fields as the reference reader reads, by the same helpers, and
payloads are read and decoded the same way, so both readers give the same records.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from newscrawl.storage.warc_records import Problem, Record, RecordHead

try:
    from fastwarc.warc import ArchiveIterator as _FastIterator

    FAST_READER = True
except ImportError:  # pragma: no cover - fastwarc is a dependency; warcio reads alone without it
    FAST_READER = False

__all__ = ["FAST_READER", "read_fast"]

_GZIP_MAGIC = b"\x1f\x8b\x08"
_HTTP_RECORDS = ("response", "request", "revisit")
_HTTP_SCHEMES = ("http:", "https:")


class _Refused(Exception):
    """A record the fast reader would read otherwise than the reference reader."""


def read_fast(
    fh: BinaryIO,
    start: int,
    gzipped: bool,
    wants: Callable[[RecordHead], bool],
    limit: int,
) -> Generator[Record | Problem, None, int]:
    """The records of `fh` from offset `start` (a record boundary) as `read_archive` gives
    them, until the end of the file or the first trouble; returns the offset of the first record
    not handed on, where the reference reader takes over."""
    from newscrawl.storage.warc_records import payload_record

    magic = _GZIP_MAGIC if gzipped else b"WARC/"
    fh.seek(start)
    iterator = iter(_FastIterator(fh, parse_http=True, max_header_len=1 << 20))
    held: Record | Problem | None = None
    held_offset = start
    while True:
        try:
            record = next(iterator)
        except Exception:  # the end (StopIteration), or damage: the reference reader's
            break
        offset = record.stream_pos
        if os.pread(fh.fileno(), len(magic), offset) != magic:
            break  # not where a record starts: e.g. several records in one gzip member
        try:
            head, raw, big = _read(record, offset, wants, limit)
        except Exception:
            break
        if held is not None:
            yield held
        held, held_offset = payload_record(head, raw, limit, big), offset
    return held_offset


def _read(
    record: Any, offset: int, wants: Callable[[RecordHead], bool], limit: int
) -> tuple[RecordHead, bytes | None, bool]:
    """The record's head, and its raw payload (capped) when wanted and not too large."""
    from newscrawl.storage.warc_reader import head_of

    # The header fields by lower-cased name, the first of a repeated name winning, as
    # HeaderMap.get finds them; one dict instead of five searches of the map per record.
    headers = {name.lower(): value for name, value in reversed(record.headers.items())}
    kind = headers.get("warc-type") or ""
    url = headers.get("warc-target-uri") or ""
    length = headers.get("content-length")
    status: int | None = None
    http: tuple[tuple[str, str], ...] = ()
    if kind in _HTTP_RECORDS and url.startswith(_HTTP_SCHEMES) and length not in ("0", None):
        if not record.is_http:  # warcio reads HTTP headers here whatever the Content-Type says
            raise _Refused(offset)
        if kind != "request":
            http = tuple(record.http_headers.items())
            status = record.http_headers.status_code
    head = head_of(
        kind,
        url,
        headers.get("warc-date"),
        headers.get("warc-record-id"),
        length,
        offset,
        status,
        http,
    )
    wanted = wants(head)
    big = head.length > limit + 65536
    raw = record.reader.read(limit + 1) if wanted and not big else None
    return head, raw, wanted and big
