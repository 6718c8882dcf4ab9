"""Read an evaluation dataset: pages with gold main content, in the layout of the dev datasets.

::

    NAME/html/ID.html   the page (bytes; .htm is accepted too)
    NAME/gold/ID.txt    the gold main content, UTF-8 plain text
    NAME/meta.jsonl     optional: one JSON object per page with at least "id" (url, site, ...)

Any folder in this layout works. meta.jsonl may be missing, partial or hold broken lines: a page
without a usable meta line gets ``{}``. Pages without a gold file cannot be scored; they are
skipped and counted in `Dataset.skipped`, so a report can say how many pages were left out.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

__all__ = [
    "Dataset",
    "DatasetError",
    "Page",
    "natural_key",
    "read_dataset",
    "read_gold",
    "read_meta",
]

HTML_SUFFIXES = (".html", ".htm")
_DIGITS = re.compile(r"(\d+)")


class DatasetError(ValueError):
    """The path is not a dataset folder (no html/ or no gold/ inside)."""


class Page(NamedTuple):
    """One scored page: unpacks as ``(id, html, gold, meta)``."""

    id: str
    html: bytes
    gold: str
    meta: dict[str, Any]


def natural_key(page_id: str) -> tuple:
    """Sort "dev2" before "dev10", so listings follow the dataset's numbering."""
    return tuple(int(part) if part.isdigit() else part for part in _DIGITS.split(page_id))


def read_meta(path: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """Meta objects by page id, and the number of lines that could not be used: not a JSON
    object with an id, or an id an earlier line already gave (the first line of an id counts).
    A byte-order mark before the first line is not part of it."""
    by_id: dict[str, dict[str, Any]] = {}
    bad = 0
    if not path.is_file():
        return by_id, bad
    with path.open(encoding="utf-8-sig", errors="replace") as lines:
        for line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                bad += 1
                continue
            if isinstance(record, dict) and record.get("id") is not None:
                bad += str(record["id"]) in by_id
                by_id.setdefault(str(record["id"]), record)
            else:
                bad += 1
    return by_id, bad


def _pages_by_id(html_dir: Path) -> dict[str, Path]:
    """The page files of html/ by id (file stem); two files of one id are an error, not a
    silent pick that would depend on the order the folder lists them in."""
    pages: dict[str, Path] = {}
    for path in sorted(html_dir.iterdir()):
        if path.suffix.lower() not in HTML_SUFFIXES or not path.is_file():
            continue
        if path.stem in pages:
            raise DatasetError(
                f"{html_dir}: {pages[path.stem].name} and {path.name} are both page "
                f"{path.stem!r}; keep one"
            )
        pages[path.stem] = path
    return pages


class Dataset:
    """The scorable pages of one dataset folder, read lazily in id order."""

    def __init__(self, path: str | Path, limit: int | None = None) -> None:
        self.path = Path(path)
        self.name = self.path.resolve().name
        html_dir, self.gold_dir = self.path / "html", self.path / "gold"
        if not self.path.is_dir():
            raise DatasetError(f"{self.path}: no such dataset folder")
        if not html_dir.is_dir() or not self.gold_dir.is_dir():
            raise DatasetError(f"{self.path}: not a dataset folder (needs html/ and gold/ inside)")
        html = _pages_by_id(html_dir)
        ids = sorted(html, key=natural_key)
        scorable = [i for i in ids if (self.gold_dir / f"{i}.txt").is_file()]
        #: pages that have html but no gold file, so cannot be scored
        self.skipped = len(ids) - len(scorable)
        #: gold files with no page (ids, sorted): nothing to score them against
        self.gold_only = sorted(
            (p.stem for p in self.gold_dir.glob("*.txt") if p.stem not in html), key=natural_key
        )
        if limit is not None:
            scorable = scorable[: max(limit, 0)]
        self.ids: list[str] = scorable
        self._html = html
        #: whether the folder has a meta.jsonl at all (`--site-from meta` needs one)
        self.has_meta = (self.path / "meta.jsonl").is_file()
        self.meta, self.bad_meta_lines = read_meta(self.path / "meta.jsonl")

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[Page]:
        for page_id in self.ids:
            yield self.page(page_id)

    def head(self, page_id: str, size: int) -> bytes:
        """The first `size` bytes of a page's html (to find its URL without reading it all)."""
        with self._html[page_id].open("rb") as file:
            return file.read(size)

    def page(self, page_id: str) -> Page:
        html = self._html[page_id].read_bytes()
        gold, _ = read_gold(self.gold_dir / f"{page_id}.txt")
        return Page(page_id, html, gold, self.meta.get(page_id, {}))

    def gold_not_utf8(self) -> list[str]:
        """Ids of the pages whose gold file is not UTF-8 (read with replacement characters,
        which lowers their scores: worth a warning)."""
        return [i for i in self.ids if not read_gold(self.gold_dir / f"{i}.txt")[1]]


def read_gold(path: Path) -> tuple[str, bool]:
    """A gold file's text, and whether it was clean UTF-8. A byte-order mark says UTF-8 or
    UTF-16 and is dropped; other bytes that are not UTF-8 read as U+FFFD."""
    data = path.read_bytes()
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace"), True
    try:
        return data.decode("utf-8-sig"), True
    except UnicodeDecodeError:
        return data.decode("utf-8-sig", errors="replace"), False


def read_dataset(path: str | Path, limit: int | None = None) -> Dataset:
    """Open the dataset folder at `path`; `limit` keeps only its first pages (in id order)."""
    return Dataset(path, limit)
