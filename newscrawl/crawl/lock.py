"""One run at a time per output folder: the lock a scheduled crawl takes on DIR.

Two runs into one DIR would fetch the same pages and race to write the same sites, so
`newscrawl crawl` holds ``DIR/.newscrawl/lock`` for the whole run. The lock is an advisory
``flock`` on that file: the kernel drops it when its process ends, however it ends, so a run
killed with SIGKILL (or a crashed machine) never leaves a lock behind that blocks the next run.
The file also says who holds it (pid, host, start time, command), for the message the next run
prints while it is held; a file left by a dead holder is reported as recovered and taken over.

`newscrawl crawl` takes the lock before Scrapy starts (so a busy folder costs nothing and
exits 75); the site spider takes it too, so ``scrapy crawl site`` is covered. Within one process
the lock is re-entrant: the spider's acquire inside `newscrawl crawl` is a no-op.

flock works on local disks; on NFS it needs a server with lock support (NFSv4 has it).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import IO, Any

__all__ = ["LOCK_BUSY_EXIT", "DirLock", "LockBusyError", "take_run_lock"]

# Exit status of a run that found DIR locked (EX_TEMPFAIL: "try again later").
LOCK_BUSY_EXIT = 75
_LOCK_NAME = "lock"
_HELD: dict[Path, DirLock] = {}  # lock files this process holds, by resolved path


class LockBusyError(RuntimeError):
    """Another run holds the folder's lock."""


class DirLock:
    """``with DirLock(out):`` holds the run lock of output folder `out` (see the module)."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.path = Path(out) / ".newscrawl" / _LOCK_NAME
        self.file: IO[str] | None = None
        self.recovered: dict[str, Any] | None = None  # what a dead holder left in the file
        self.nested = False  # this process held the lock already: nothing to take or release

    def acquire(self) -> DirLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.resolve() in _HELD:
            self.nested = True
            return self
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _read_holder(handle)
            handle.close()
            raise LockBusyError(_busy_message(self.path, holder)) from None
        self.recovered = _read_holder(handle) or None  # the holder died without cleaning up
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(_holder()))
        handle.flush()
        self.file = handle
        _HELD[self.path.resolve()] = self
        return self

    def release(self) -> None:
        if self.file is None:
            return
        _HELD.pop(self.path.resolve(), None)
        self.file.seek(0)
        self.file.truncate()  # an empty file: a clean end, nothing to recover
        self.file.flush()
        fcntl.flock(self.file.fileno(), fcntl.LOCK_UN)
        self.file.close()
        self.file = None

    def __enter__(self) -> DirLock:
        return self if self.file is not None or self.nested else self.acquire()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _holder() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
    }


def _read_holder(handle: IO[str]) -> dict[str, Any]:
    handle.seek(0)
    try:
        found = json.loads(handle.read() or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _busy_message(path: Path, holder: dict[str, Any]) -> str:
    who = (
        f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, "
        f"started {holder.get('started', '?')}"
        if holder
        else "another process"
    )
    return (
        f"{path.parent.parent} is locked by another run ({who}); two runs into one folder never "
        f"overlap - this run does nothing. The lock ends with that process, however it ends."
    )


def take_run_lock(out: str | os.PathLike[str], command: str) -> DirLock | int:
    """The run lock of `out` for a command's whole run, or the exit status to end with after
    one line on stderr (prefixed `command`) saying why: LOCK_BUSY_EXIT while another run holds
    it, 1 when the folder cannot be locked. A lock a dead run left is taken over, and said."""
    try:
        lock = DirLock(out).acquire()
    except LockBusyError as err:
        print(f"{command}: {err}", file=sys.stderr)
        return LOCK_BUSY_EXIT
    except OSError as err:
        print(f"{command}: cannot lock {out}: {err}", file=sys.stderr)
        return 1
    if lock.recovered:
        print(
            f"{command}: the last run (pid {lock.recovered.get('pid', '?')}, started "
            f"{lock.recovered.get('started', '?')}) ended without releasing its lock; taken over",
            file=sys.stderr,
        )
    return lock
