"""argparse `type=` validators the benchmarks share, so a bad option is refused while the command
line is parsed: one line and exit status 2, before any demo web, server or input is set up.

The leading "_" keeps this module out of `newscrawl.lab.benchmarks.available()`: it is not a
benchmark.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterable
from pathlib import Path

from newscrawl.commands.cli_options import nonnegative_int, positive_int

__all__ = [
    "make_folder",
    "name_list",
    "new_or_folder",
    "nonnegative_float",
    "nonnegative_int",
    "positive_int",
    "positive_ints",
]


def nonnegative_float(value: str) -> float:
    """A finite number of at least 0 (float() alone lets "nan", "inf" and "-1" through)."""
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, not {value!r}")
    return number


def positive_ints(allow_empty: bool = False) -> Callable[[str], list[int]]:
    """A type for a comma-separated list of whole numbers of at least 1 ("1,2"); with
    `allow_empty`, "" is an empty list (e.g. no memory runs)."""

    def parse(value: str) -> list[int]:
        parts = [part.strip() for part in value.split(",") if part.strip()]
        if not parts and not allow_empty:
            raise argparse.ArgumentTypeError("give at least one number")
        try:
            return [positive_int(part) for part in parts]
        except argparse.ArgumentTypeError as err:
            raise argparse.ArgumentTypeError(f"{value!r}: {err}") from None

    return parse


def name_list(known: Iterable[str]) -> Callable[[str], list[str]]:
    """A type for a comma-separated, non-empty list of names out of `known` (read when the
    option is parsed, so a registry filled later still counts)."""

    def parse(value: str) -> list[str]:
        names = [part.strip() for part in value.split(",") if part.strip()]
        choices = list(known)
        unknown = [name for name in names if name not in choices]
        if unknown or not names:
            what = f"unknown: {', '.join(unknown)}" if unknown else "give at least one"
            raise argparse.ArgumentTypeError(f"{what} (known: {', '.join(choices)})")
        return names

    return parse


def new_or_folder(value: str) -> Path:
    """A folder to write into: one that exists, or a path with nothing there yet (an existing
    file would only fail later, after the setup, with FileExistsError)."""
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} exists and is not a folder")
    return path


def make_folder(path: Path) -> str | None:
    """Create `path` (and its parents); None when it is there, else why it cannot be."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file on the way, /proc, no permission: one line, not a traceback
        return f"cannot create {path}: {err.strerror or err}"
    return None
