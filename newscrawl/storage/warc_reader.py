"""Read WARC and ARC files, gzip or plain, record by record, and survive damaged ones.

FastWARC reads WARC files wherever they are sound (`newscrawl.storage.warc_fastpath`); warcio, the
reference, reads ARC files (ARC records come as WARC ones, `arc2warc`), every damaged stretch
and the end of each file; both give the same records. This module adds what a corpus build over
real archives needs around them:

- a file that is not a WARC or ARC at all is refused at once (warcio would read any text as
  ARC records);
- a damaged stretch - a corrupt gzip member, a record whose declared length lies, a truncated
  tail, a hole of NUL bytes, a header line that never ends - is reported as a `Problem` with
  its offset and a description in words, and reading starts again at the next record boundary
  after it (the next gzip member that opens with a record header, or the next ``WARC/1.x``
  header of a plain file, wherever the damage left it), so every good record after the damage
  is still read;
- header lines are read up to `MAX_HEADER_LINE` bytes: a longer one is damage, so time and
  memory stay linear in the file whatever it holds;
- a record is read in one pass and checked before it is handed on: a payload cut short or
  running into the next record is a problem, not a page;
- payloads are read only for the records the caller wants, at most `max_payload` bytes before
  and after decoding transfer and content encodings; larger ones are reported as too large and
  skipped without being held in memory.

Memory is bounded by one record's capped payload and one header line, whatever the file size.
"""

from __future__ import annotations

import io
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.exceptions import ArchiveLoadFailed
from warcio.recordloader import ArcWarcRecordLoader
from warcio.statusandheaders import StatusAndHeadersParserException

from newscrawl.storage.warc_fastpath import FAST_READER, read_fast
from newscrawl.storage.warc_records import Problem, Record, RecordHead, payload_record

__all__ = [
    "ARCHIVE_SUFFIXES",
    "MAX_HEADER_LINE",
    "archive_files",
    "read_archive",
    "sniff_format",
    "unreadable_archive",
]

ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
_GZIP_MAGIC = b"\x1f\x8b\x08"
_SCAN_CHUNK = 1 << 20
_ARC_LINE = re.compile(rb"^\S+://\S* [0-9a-fA-F:.]+ \d{14} \S* -?\d+\s*$", re.MULTILINE)
_REFERENCE_RECORDS = 4  # records warcio reads from where the fast reader met trouble
_READ_ERRORS = (Exception,)  # any failure inside the container: reported, then resynchronised
# The longest header line read (WARC or HTTP): FastWARC's limit for a whole header block.
MAX_HEADER_LINE = 1 << 20
# The start of a plain WARC record: its version line and a first header field.
_WARC_HEAD = re.compile(rb"WARC/1\.[01]\r?\n[!-9;-~]+:[^\r\n]*\r?\n")
_NUL_RUN = b"\0" * 16


def archive_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The archives named: files as given, folders searched recursively for *.warc(.gz) and
    *.arc(.gz) (hidden names skipped: a WARC being written is hidden); sorted, each once."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path).parts
                if (
                    child.is_file()
                    and child.name.lower().endswith(ARCHIVE_SUFFIXES)
                    and not any(p.startswith(".") for p in rel)
                ):
                    found[child] = None
        else:
            found[path] = None
    return list(found)


def unreadable_archive(path: Path) -> str | None:
    """Why an archive path cannot be read ("not a regular file": a FIFO or device would block
    the reader), or None."""
    if path.exists() and not path.is_file() and not path.is_dir():
        return "not a regular file"
    return None


def sniff_format(path: Path) -> tuple[str, bool] | None:
    """("warc" or "arc", gzipped) from the first bytes of the file, or None for anything else."""
    with open(path, "rb") as fh:
        head = fh.read(4096)
    gzipped = head.startswith(_GZIP_MAGIC)
    if gzipped:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 256)
        except zlib.error:
            return None
    head = head.lstrip(b"\r\n")
    if head.startswith(b"WARC/"):
        return "warc", gzipped
    if head.startswith(b"filedesc://") or _ARC_LINE.match(head.split(b"\n", 1)[0] + b"\n"):
        return "arc", gzipped
    return None


class LongLineError(ValueError):
    """A header line runs over `MAX_HEADER_LINE` bytes without ending."""


class _LineCappedReader(DecompressingBufferedReader):
    """warcio's reader, whose lines are read in linear time and at most `MAX_HEADER_LINE`
    bytes long (warcio's own joins the line's pieces one by one, and has no bound)."""

    def readline(self, length: int | None = None) -> bytes:
        """The next line, or its first `length` bytes; raises LongLineError for a line over
        `MAX_HEADER_LINE` bytes (with no `length` that stops before)."""
        if length == 0:
            return b""
        want = None if length is None or length < 0 else length
        parts: list[bytes] = []
        size = 0
        while True:
            self._fillbuff()
            if self.empty():
                break
            room = MAX_HEADER_LINE + 1 - size
            part = self.buff.readline(room if want is None else min(room, want - size))
            parts.append(part)
            size += len(part)
            if part.endswith(b"\n") or (want is not None and size >= want):
                break
            if size > MAX_HEADER_LINE:
                raise LongLineError(f"a header line longer than {_mib(MAX_HEADER_LINE)}")
        return b"".join(parts)


class _Loader(ArcWarcRecordLoader):
    """warcio's record loader, for which a response without a target URI is a record with no
    HTTP headers (as FastWARC reads it), not a failure."""

    def load_http_headers(self, rec_type: str, uri: str | None, stream: Any, length: int) -> Any:
        if uri is None:
            return None
        return super().load_http_headers(rec_type, uri, stream, length)


def _mib(size: int) -> str:
    return f"{size / (1 << 20):g} MiB"


class _Iterator(ArchiveIterator):
    """warcio's iterator, reading lines with a length limit (`_LineCappedReader`), and counting
    "record not followed by newline" (a lying length) instead of writing it to stderr.

    A line over the limit met after a record (a hole of NUL bytes, say) ends the pass when the
    next record is asked for, not before the record is handed on; `damage_at` is where that
    line starts (plain files), for the problem's offset."""

    def __init__(self, fileobj: Any, **options: Any) -> None:
        super().__init__(fileobj, **options)
        self.reader = _LineCappedReader(self.fh)
        verify = bool(options.get("verify_http"))
        self.loader = _Loader(verify_http=verify, arc2warc=bool(options.get("arc2warc")))
        self.damage_at: int | None = None
        self._long_line: LongLineError | None = None

    def _consume_blanklines(self) -> tuple[bytes | None, int]:
        empty_size = 0
        first_line = True
        while True:
            start = self._position()
            try:
                line = self.reader.readline()
            except LongLineError as err:
                self.err_count += first_line  # the record runs on into it: a lying length
                self.damage_at, self._long_line = start, err
                return None, empty_size
            if len(line) == 0:
                return None, empty_size
            if len(line.rstrip()) == 0 or first_line:
                empty_size += len(line)
                if len(line.rstrip()) != 0:
                    self.err_count += 1
                first_line = False
                continue
            return line, empty_size

    def _position(self) -> int | None:
        """The reader's offset in a plain file (None in a gzipped one)."""
        if self.reader.decompressor:
            return None
        return int(self.fh.tell()) - int(self.reader.rem_length())

    def _next_record(self, next_line: bytes | None) -> Any:
        if self._long_line is not None:
            raise self._long_line
        return super()._next_record(next_line)


def _date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _head(record: Any, offset: int, arc: bool) -> RecordHead:
    headers = record.rec_headers
    http = record.http_headers
    status: int | None = None
    http_headers: tuple[tuple[str, str], ...] = ()
    if http is not None and record.rec_type in ("response", "revisit"):
        try:
            status = int(http.get_statuscode())
        except (TypeError, ValueError):
            status = None
        http_headers = tuple((str(k), str(v)) for k, v in http.headers)
    return head_of(
        record.rec_type or "",
        headers.get_header("WARC-Target-URI"),
        headers.get_header("WARC-Date"),
        None if arc else headers.get_header("WARC-Record-ID"),
        headers.get_header("Content-Length"),
        offset,
        status,
        http_headers,
    )


def head_of(
    kind: str,
    url: str | None,
    date: str | None,
    record_id: str | None,
    length: str | None,
    offset: int,
    status: int | None,
    http_headers: tuple[tuple[str, str], ...],
) -> RecordHead:
    """A RecordHead from a record's header fields as written (either reader's)."""
    try:
        declared = int(length or 0)
    except ValueError:
        declared = 0
    return RecordHead(
        type=kind,
        url=(url or "").strip("<> "),
        date=_date(date),
        record_id=record_id,
        offset=offset,
        status=status,
        http_headers=http_headers,
        length=declared,
    )


def read_archive(
    path: str | os.PathLike[str],
    wants: Callable[[RecordHead], bool],
    max_payload: int,
    fast: bool | None = None,
) -> Iterator[Record | Problem]:
    """Every record of the file, in order, with the payload of those `wants` accepts (decoded,
    capped at `max_payload` bytes), and a Problem for each damaged stretch or refused record.

    `fast` (default: when FastWARC is installed): WARC files are read by FastWARC wherever they
    are sound (`newscrawl.storage.warc_fastpath`), and by warcio where they are not - a stretch with
    damage, from the last record before it to a few records after it - and at their end; ARC
    files by warcio. False: warcio reads everything. The records are the same either way."""
    path = Path(path)
    try:
        sniffed = sniff_format(path)
    except OSError as err:
        yield Problem("not_warc", 0, f"cannot read: {err}")
        return
    if sniffed is None:
        yield Problem("not_warc", 0, "no WARC/ARC header at the start")
        return
    kind, gzipped = sniffed
    fast = (FAST_READER if fast is None else fast) and kind == "warc"
    start = 0
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        while True:
            budget = None
            if fast:
                start = yield from read_fast(fh, start, gzipped, wants, max_payload)
                budget = _REFERENCE_RECORDS
            fh.seek(start)
            state = _ReadState(start)
            arc = kind == "arc"
            yield from _read_from(fh, state, wants, max_payload, arc, size=size, budget=budget)
            if state.paused is not None:  # read past the trouble: the fast reader goes on
                start = state.paused
                continue
            if not state.stopped:
                return
            if state.whole_gzip and start == 0:
                yield from _read_whole_gzip(path, state.records, wants, max_payload, kind)
                return
            found = _next_boundary(fh, state.resume_after + 1, gzipped, kind)
            failed = _skipped(fh, _after_stop(state.failed, found), found, gzipped)
            if failed is not None:
                yield failed
            if found is None:
                return
            start = found


@dataclass(slots=True)
class _ReadState:
    """How a pass over the file ended: `failed` set when it stopped at damage, and the offset
    after which the next record boundary is looked for."""

    resume_after: int
    stopped: bool = False
    records: int = 0  # records handed on
    whole_gzip: bool = False  # the file is one gzip stream, not one member per record
    paused: int | None = None  # offset of the next record, when the pass read its budget
    failed: Problem | None = None  # None when the stop was the damage already reported


def _read_from(
    fh: Any,
    state: _ReadState,
    wants: Callable[[RecordHead], bool],
    limit: int,
    arc: bool,
    skip: int = 0,
    size: int | None = None,
    budget: int | None = None,
) -> Iterator[Record | Problem]:
    """warcio's pass from the file's position: at most `budget` records (then `paused`)."""
    iterator = _Iterator(fh, arc2warc=arc)
    flagged: int | None = None  # offset of the last record found damaged, if the last one was
    # A record cut short is held back until it is known whether anything follows it: in a
    # plain file one whose declared length runs past the end swallowed every record after it,
    # and the pass must stop there to look for the next record boundary (`read_archive`).
    held: Problem | None = None
    try:
        for record in iterator:
            if held is not None:  # records follow it (its gzip member ended early)
                yield held
                held = None
            state.records += 1
            if state.records <= skip:
                continue
            offset = iterator.offset
            if budget is not None and state.records > budget and record.rec_type:
                state.paused = offset
                return
            head = _head(record, offset, arc)
            wanted = wants(head)
            big = head.length > limit + 65536
            raw = record.raw_stream.read(limit + 1) if wanted and not big else None
            errors = iterator.err_count
            iterator.read_to_end()
            problem = _damage(record, head, iterator.err_count > errors)
            if problem is not None:
                flagged = offset
                if _cut_short(record):
                    held = problem
                else:
                    yield problem
            else:
                flagged = None
                yield payload_record(head, raw, limit, wanted and big)
        if held is not None:  # the file ended inside it: truncated, or a length that lies
            state.stopped = True
            state.resume_after = max(held.offset, state.resume_after)
            state.failed = held
            return
        if size is not None and flagged is None and 0 <= iterator.offset < size:
            tail = size - iterator.offset
            yield Problem("truncated", iterator.offset, f"file ends inside a record ({tail} bytes)")
    except _READ_ERRORS as err:
        if held is not None:
            yield held
        if "non-chunked gzip" in str(err):
            state.stopped = state.whole_gzip = True
            return
        at = iterator.offset if iterator.damage_at is None else iterator.damage_at
        at = flagged if flagged is not None else at
        state.resume_after = max(at, state.resume_after)
        state.stopped = True
        if flagged is None:
            state.failed = Problem("corrupt", at, _unreadable(err))


def _unreadable(err: Exception) -> str:
    """What a read that failed with `err` met, in words."""
    if isinstance(err, LongLineError):
        return str(err)
    if isinstance(err, (ArchiveLoadFailed, StatusAndHeadersParserException)):
        return "no record header where a record should start"
    if isinstance(err, (zlib.error, EOFError, OSError)):
        return "data that cannot be decompressed or read"
    return "a record header that cannot be read"


def _damage(record: Any, head: RecordHead, ran_on: bool) -> Problem | None:
    """What is wrong with a record read to its end, if anything."""
    if not head.type:  # warcio's stand-in for a header it could not read: the file ends there
        return Problem("truncated", head.offset, "record header cut short")
    if _cut_short(record):
        return Problem("truncated", head.offset, f"{head.type} {head.url}: cut short")
    if ran_on:
        detail = f"{head.type} {head.url}: does not end at its declared length"
        return Problem("bad_length", head.offset, detail)
    return None


def _cut_short(record: Any) -> bool:
    """Whether the record's block ended before its declared length, read to its end."""
    return bool(getattr(record.raw_stream, "limit", 0) > 0)


def _after_stop(failed: Problem | None, found: int | None) -> Problem | None:
    """The problem a pass stopped at, judged by whether a record follows it (`found`): a
    record cut short by the end of the file, with records after it, lied about its length."""
    if failed is None:
        return None
    if found is None and failed.kind != "truncated":  # no record after it: a truncated tail
        return Problem("truncated", failed.offset, f"file ends: {failed.detail}")
    if found is not None and failed.kind == "truncated":
        what = failed.detail.removesuffix(": cut short")
        detail = f"{what}: declared length runs past the end of the file"
        return Problem("bad_length", failed.offset, detail)
    return failed


def _skipped(
    fh: BinaryIO, failed: Problem | None, found: int | None, gzipped: bool
) -> Problem | None:
    """`failed` with how much reading skipped after it to `found`, the next record (and, in a
    plain file, whether the damage starts with NUL bytes: a hole)."""
    if failed is None or found is None or found <= failed.offset:
        return failed
    detail = failed.detail
    if not gzipped and os.pread(fh.fileno(), len(_NUL_RUN), failed.offset) == _NUL_RUN:
        detail = "NUL bytes where a record should start"
    skipped = found - failed.offset
    detail = f"{detail}; {skipped} bytes skipped to the next record"
    return Problem(failed.kind, failed.offset, detail)


class _WholeGzip(io.RawIOBase):
    """The decompressed bytes of a gzipped file that may be cut short or damaged: it ends
    where the good data ends, where `gzip.open` raises and drops what its last read had
    decompressed (a file cut in half lost every record of that read). Members follow one
    another, as in `gzip`."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        self._pending = b""
        self._done = False
        self.produced = 0  # bytes unpacked so far
        self.cut_short = False  # the file ended, or broke, inside a gzip member
        self._fed = False  # the current member has had input

    def close(self) -> None:
        self._raw.close()
        super().close()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._pending and not self._done:
            self._pending = self._more()
        size = min(len(buffer), len(self._pending))
        buffer[:size] = self._pending[:size]
        self.produced += size
        self._pending = self._pending[size:]
        return size

    def _more(self) -> bytes:
        if self._inflate.eof:  # the next member, if any, starts in what the last one left
            rest = self._inflate.unused_data
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
            self._fed = False
            if rest:
                return self._inflate_bytes(rest)
        chunk = self._raw.read(65536)
        if not chunk:
            self._done = True
            self.cut_short = self._fed and not self._inflate.eof
            return b""
        return self._inflate_bytes(chunk)

    def _inflate_bytes(self, chunk: bytes) -> bytes:
        self._fed = True
        try:
            return self._inflate.decompress(chunk)
        except zlib.error:  # damage: the stream ends here
            self._done = self.cut_short = True
            return b""


def _read_whole_gzip(
    path: Path, skip: int, wants: Callable[[RecordHead], bool], limit: int, kind: str
) -> Iterator[Record | Problem]:
    """A file gzipped whole (one stream, which the WARC standard does not allow but tools
    write): read as one decompressed stream; offsets are then positions in that stream, and
    damage ends the file. The first `skip` records were handed on already."""
    whole = _WholeGzip(open(path, "rb"))  # noqa: SIM115 - closed with the stream below
    with io.BufferedReader(whole) as stream:
        state = _ReadState(0)
        yield from _read_from(stream, state, wants, limit, arc=kind == "arc", skip=skip)
        if state.failed is not None:
            yield state.failed
        elif whole.cut_short:
            at = whole.produced
            yield Problem("truncated", at, f"the gzip stream ends early ({at} bytes unpacked)")


def _next_boundary(fh: BinaryIO, position: int, gzipped: bool, kind: str) -> int | None:
    """Offset of the first record start at or after `position`, or None at the end of file."""
    needle = _GZIP_MAGIC if gzipped else (b"WARC/1." if kind == "warc" else b"\n")
    while True:
        fh.seek(position)
        chunk = fh.read(_SCAN_CHUNK + 16)
        if not chunk:
            return None
        at = chunk.find(needle)
        while at != -1 and at < _SCAN_CHUNK:
            candidate = position + at
            if _starts_record(fh, candidate, gzipped, kind):
                return candidate if gzipped or kind == "warc" else candidate + 1
            at = chunk.find(needle, at + 1)
        if len(chunk) <= _SCAN_CHUNK:
            return None
        position += _SCAN_CHUNK


def _starts_record(fh: BinaryIO, offset: int, gzipped: bool, kind: str) -> bool:
    fh.seek(offset)
    head = fh.read(4096)
    if gzipped:
        try:
            head = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
        except zlib.error:
            return False
    elif kind == "warc":
        # A version line at the start of a line, or one that opens a header: a record
        # written after garbage that did not end its line (a hole, a torn write) still counts.
        if _WARC_HEAD.match(head):
            return True
        if offset > 0:
            fh.seek(offset - 1)
            if fh.read(1) != b"\n":
                return False
        return head.startswith(b"WARC/1.")
    else:
        head = head[1:]  # the newline before an ARC record line
    if kind == "warc":
        return head.startswith(b"WARC/")
    return bool(_ARC_LINE.match(head.split(b"\n", 1)[0] + b"\n"))
