"""Write HTTP exchanges as WARC/1.1: request and response records, one gzip member each, in files
rotated by size, each opening with a warcinfo record.

File names follow the IIPC recommendation, ``PREFIX-TIMESTAMP-SERIAL-HOST-PID.warc.gz``. A file
is written under a hidden name (``.NAME.open``, which `newscrawl ingest` and other tools skip
when given a folder) and renamed once closed, so a reader never sees a torn file. Every record
is flushed to the OS as it is written: a killed process loses at most the record it was in the
middle of, and `recover_open_files` (run by the next writer on the same folder and host) cuts
such a file back to its last complete record and gives it its final name.
"""

from __future__ import annotations

import io
import json
import os
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any, BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from newscrawl.storage.writer import fsync_path

__all__ = ["Exchange", "WarcFileWriter", "WrittenRecord", "recover_open_files"]

OPEN_SUFFIX = ".open"
_HOST = socket.gethostname().split(".")[0].replace("-", "_") or "host"


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request and the response it got, as the client saw them."""

    url: str
    method: str
    request_headers: list[tuple[str, str]]
    request_body: bytes
    status: int
    response_headers: list[tuple[str, str]]
    body: bytes
    protocol: str = "HTTP/1.1"
    ip_address: str | None = None
    date: datetime | None = None


@dataclass(frozen=True, slots=True)
class WrittenRecord:
    """Where a response record went: the file's final name, its offset, its record id."""

    file: str
    offset: int
    record_id: str
    date: datetime


def _warc_date(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _request_line(exchange: Exchange) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(exchange.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return f"{exchange.method} {target} {exchange.protocol}"


def _status_line(status: int) -> str:
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = ""
    return f"{status} {phrase}".strip()


class WarcFileWriter:
    """Append exchanges to rotating WARC files in `folder`.

    `info` becomes the warcinfo record at the head of every file (software, format, settings);
    a file is closed once it holds `max_bytes` (checked after each exchange).
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        prefix: str,
        info: Mapping[str, Any],
        max_bytes: int = 1 << 30,
    ) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.info = dict(info)
        self.max_bytes = max_bytes
        self.closed: list[Path] = []
        self.records = 0
        self._serial = 0
        self._fh: BinaryIO | None = None
        self._writer: WARCWriter | None = None
        self._name = ""
        self.recovered = recover_open_files(self.folder)

    # -- files ---------------------------------------------------------------------------------

    def _open(self) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%d%H%M%S%f")[:17]
        self._serial += 1
        self._name = f"{self.prefix}-{stamp}-{self._serial:05d}-{_HOST}-{os.getpid()}.warc.gz"
        self._fh = open(self.folder / f".{self._name}{OPEN_SUFFIX}", "xb")  # noqa: SIM115
        self._writer = WARCWriter(self._fh, gzip=True, warc_version="WARC/1.1")
        fields = {key: _info_value(value) for key, value in self.info.items()}
        record = self._writer.create_warcinfo_record(self._name, fields)
        self._writer.write_record(record)
        self._fh.flush()

    def _close(self) -> None:
        if self._fh is None:
            return
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        tmp = self.folder / f".{self._name}{OPEN_SUFFIX}"
        final = self.folder / self._name
        os.replace(tmp, final)
        fsync_path(self.folder)
        self.closed.append(final)
        self._fh = self._writer = None

    def close(self) -> list[Path]:
        """Close the open file (renamed to its final name); every file this writer closed."""
        self._close()
        return list(self.closed)

    # -- records -------------------------------------------------------------------------------

    def write(self, exchange: Exchange) -> WrittenRecord:
        """Write the exchange's request and response records; where the response went."""
        if self._fh is None:
            self._open()
        assert self._fh is not None and self._writer is not None
        date = _warc_date(exchange.date or datetime.now(UTC))
        response_headers = StatusAndHeaders(
            _status_line(exchange.status), exchange.response_headers, protocol=exchange.protocol
        )
        extra = {"WARC-Date": date}
        if exchange.ip_address:
            extra["WARC-IP-Address"] = exchange.ip_address
        response = self._writer.create_warc_record(
            exchange.url,
            "response",
            payload=io.BytesIO(exchange.body),
            length=len(exchange.body),
            http_headers=response_headers,
            warc_headers_dict=extra,
        )
        request_headers = StatusAndHeaders(
            _request_line(exchange), exchange.request_headers, is_http_request=True
        )
        request = self._writer.create_warc_record(
            exchange.url,
            "request",
            payload=io.BytesIO(exchange.request_body),
            length=len(exchange.request_body),
            http_headers=request_headers,
            warc_headers_dict={"WARC-Date": date},
        )
        offset = self._fh.tell()
        self._writer.write_request_response_pair(request, response)
        self._fh.flush()
        self.records += 2
        record_id = response.rec_headers.get_header("WARC-Record-ID")
        written = WrittenRecord(
            self._name, offset, record_id, datetime.fromisoformat(date.replace("Z", "+00:00"))
        )
        if self._fh.tell() >= self.max_bytes:
            self._close()
        return written


def _info_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(name: str) -> tuple[str, int] | None:
    """(host, pid) from an open file's name, if it is one of ours."""
    stem = name.removeprefix(".").removesuffix(OPEN_SUFFIX).removesuffix(".warc.gz")
    parts = stem.rsplit("-", 2)
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])


def _complete_length(path: Path) -> int:
    """Bytes of `path` up to the end of its last complete record."""
    end = 0
    with open(path, "rb") as fh:
        iterator = ArchiveIterator(fh)
        try:
            for record in iterator:
                iterator.read_to_end()
                if record.raw_stream.limit > 0:
                    break
                end = iterator.get_record_offset() + iterator.get_record_length()
        except Exception:  # the torn tail: everything before it is kept
            pass
    return end


def recover_open_files(folder: str | os.PathLike[str], names: Iterable[Path] = ()) -> list[Path]:
    """Give the WARC files a killed writer of this host left open their final names, cut back
    to their last complete record (an empty one is deleted); returns the files recovered."""
    folder = Path(folder)
    recovered: list[Path] = []
    candidates = list(names) or sorted(folder.glob(f".*.warc.gz{OPEN_SUFFIX}"))
    for path in candidates:
        owner = _owner(path.name)
        if owner is None or owner[0] != _HOST or _pid_alive(owner[1]):
            continue  # another machine's, or a live writer's
        length = _complete_length(path)
        if length == 0:
            path.unlink(missing_ok=True)
            continue
        with open(path, "r+b") as fh:
            fh.truncate(length)
            os.fsync(fh.fileno())
        final = folder / path.name.removeprefix(".").removesuffix(OPEN_SUFFIX)
        os.replace(path, final)
        recovered.append(final)
    return recovered
