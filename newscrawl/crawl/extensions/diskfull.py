"""A full disk (or an exhausted quota) stops the crawl, and says so in one line.

Whatever write meets it first - a Parquet file, the request queue, the state or summary file -
its error reaches the log. `DiskFullExtension` watches the log for it: the first record about
a full disk becomes one line without a traceback (``disk full: No space left on device:
PATH``), later ones (every pipeline and signal handler meets the same disk) are dropped, the
crawl is stopped as Ctrl-C stops it, its reason is ``disk full`` (resumable with ``--resume``
once there is space, as after a kill: from its complete Parquet files) and the summary's
``disk_full`` holds the line. `write_atomic` writes a small file so
that no temporary file stays behind when it cannot; `remove_temporary_files` clears what a
writer left half-written.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from scrapy import signals

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "DISK_FULL_REASON",
    "DISK_FULL_STAT",
    "DROPPED",
    "DiskFullExtension",
    "DiskFullFilter",
    "disk_full_message",
    "is_disk_full",
    "remove_temporary_files",
    "write_atomic",
]

logger = logging.getLogger(__name__)

DISK_FULL_REASON = "disk full"
DISK_FULL_STAT = "newscrawl/disk_full"
DROPPED = "newscrawl_dropped"  # set on a log record the filter dropped
_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
_WORDS = ("No space left on device", "Disk quota exceeded")


def is_disk_full(exc: BaseException | None) -> bool:
    """Whether `exc` (or an exception it was raised from) says the disk or quota is full."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and (
            exc.errno in _ERRNOS or any(word in str(exc) for word in _WORDS)
        ):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def disk_full_message(exc: BaseException) -> str:
    """`exc` as "No space left on device: PATH" (the path when the error names one)."""
    words = os.strerror(exc.errno) if isinstance(exc, OSError) and exc.errno in _ERRNOS else ""
    words = words or next((w for w in _WORDS if w in str(exc)), str(exc))
    path = getattr(exc, "filename", None)
    return f"{words}: {path}" if path else words


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a hidden temporary file renamed over it: a reader sees the
    old file or the new one. When the write fails (a full disk) the temporary file is removed
    and the error raised."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_text(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_temporary_files(out: Path, crawl_id: str) -> int:
    """Delete the hidden temporary files of crawl `crawl_id` in `out` (its Parquet files still
    open, its state files): what a crawl stopped by a full disk could not finish. Only for a
    crawl that no longer runs. Returns how many were deleted."""
    from newscrawl.crawl.extensions.state import DATASETS, STATE_DIR
    from newscrawl.storage.writer import remove_torn_files

    count = sum(remove_torn_files(out / name, {"crawl": crawl_id}) for name in DATASETS)
    folder = out / STATE_DIR / crawl_id
    if folder.is_dir():
        for path in folder.glob(".*.tmp"):
            path.unlink(missing_ok=True)
            count += 1
    return count


class DiskFullFilter(logging.Filter):
    """On the log's handlers: the first record about a full disk is kept as one line (no
    traceback) and passed to `on_full`; later ones are dropped. An error that names no file
    (pyarrow's) is said to be about `where`."""

    def __init__(self, on_full: Callable[[str], None], where: str = "") -> None:
        super().__init__()
        self.on_full = on_full
        self.where = where
        self.first: logging.LogRecord | None = None
        self.dropped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record is self.first:  # the same record, met by the next handler
            return True
        text = _disk_full_text(record)
        if text is None:
            return True
        if self.first is not None:
            self.dropped += 1
            setattr(record, DROPPED, True)  # for handlers this filter is not on
            return False
        self.first = record
        if ": " not in text and self.where:
            text = f"{text}: {self.where}"
        record.msg, record.args = "disk full: %s", (text,)
        record.levelno, record.levelname = logging.ERROR, "ERROR"
        record.exc_info = record.exc_text = record.stack_info = None
        self.on_full(text)
        return True


def _disk_full_text(record: logging.LogRecord) -> str | None:
    """What `record` says about a full disk ("No space left on device: PATH"), else None."""
    exc = record.exc_info[1] if record.exc_info else None
    if exc is not None and is_disk_full(exc):
        while exc is not None and not isinstance(exc, OSError):
            exc = exc.__cause__ or exc.__context__
        return disk_full_message(exc) if exc is not None else _WORDS[0]
    if record.levelno < logging.WARNING:
        return None
    try:
        message = record.getMessage()
    except (TypeError, ValueError):
        return None
    return next((word for word in _WORDS if word in message), None)


class DiskFullExtension:
    """Extension: stop the crawl at the first full-disk error, with one line in the log and
    the error in the stats (`DISK_FULL_STAT`) for the summary."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        out = crawler.settings.get("NEWSCRAWL_OUT") or ""
        self.filter = DiskFullFilter(self._full, f"writing under {out}" if out else "")
        self.handlers: list[logging.Handler] = []
        crawler.signals.connect(self._add_filter, signal=signals.spider_opened)
        crawler.signals.connect(self._remove_filter, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DiskFullExtension:
        return cls(crawler)

    def _add_filter(self) -> None:
        """On the log's handlers as the crawl runs (the crawler replaces Scrapy's own handler
        after the extensions are made)."""
        self.handlers = list(logging.getLogger().handlers)
        for handler in self.handlers:
            handler.addFilter(self.filter)

    def _remove_filter(self) -> None:
        for handler in self.handlers:
            handler.removeFilter(self.filter)
        if self.filter.dropped and self.crawler.stats is not None:
            self.crawler.stats.set_value("newscrawl/disk_full_repeats", self.filter.dropped)

    def _full(self, text: str) -> None:
        if self.crawler.stats is not None:
            self.crawler.stats.set_value(DISK_FULL_STAT, text)
        from twisted.internet import reactor

        # the record may come from a worker thread; the engine lives on the reactor's
        reactor.callFromThread(self._stop)  # type: ignore[attr-defined]

    def _stop(self) -> None:
        """Stop as Ctrl-C does (the sites left are incomplete: their site pass marks them
        partial); the stats say why."""
        from scrapy.utils.defer import deferred_from_coro

        if not self.crawler.crawling:
            return  # stopping already
        stopping = deferred_from_coro(self.crawler.stop_async())
        stopping.addErrback(lambda failure: None)  # the engine logs its own close failures
