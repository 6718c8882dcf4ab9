"""Saved pages on disk: the files a path names, in a stable order (what `newscrawl extract` and
the `newscrawl bench` commands read)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from newscrawl.gold.dataset import natural_key

__all__ = ["PAGE_SUFFIXES", "STDIN", "dataset_pages", "find_pages", "not_found_reason"]

PAGE_SUFFIXES = (".html", ".htm")
STDIN = "-"  # standard input, as a path argument


def _walk_files(root: Path, broken: list[Path]) -> Iterator[Path]:
    """Non-hidden regular files under `root`, in a stable (sorted) order (a FIFO or a device
    is no page: reading one would block or never end). Symbolically linked folders are
    followed, as `find -L` does (a corpus often links its parts in), each real folder once, so
    a link back up the tree is no loop; links to nothing are added to `broken`."""
    seen: set[tuple[int, int]] = set()
    for folder, dirs, files in os.walk(root, followlinks=True):
        try:
            info = os.stat(folder)
        except OSError:
            dirs[:] = []
            continue
        if (info.st_dev, info.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files, key=natural_key):
            path = Path(folder, name)
            if name.startswith("."):
                continue
            if path.is_file():
                yield path
            elif path.is_symlink() and not path.exists():
                broken.append(path)


def _directory_pages(root: Path) -> tuple[list[Path], list[Path]]:
    """The folder's pages (its *.html/*.htm, else all its files), and its links to nothing
    named like a page (said, not skipped in silence)."""
    broken: list[Path] = []
    files = list(_walk_files(root, broken))
    pages = [f for f in files if f.suffix.lower() in PAGE_SUFFIXES]
    return pages or files, [b for b in broken if b.suffix.lower() in PAGE_SUFFIXES]


def find_pages(paths: Iterable[str]) -> tuple[list[str], list[str]]:
    """Page paths in input order (a folder's ``*.html``/``*.htm``, else all its files), and the
    arguments that name neither a regular file nor a folder, with a folder's links to nothing
    named like a page (`not_found_reason` says which)."""
    found: list[str] = []
    missing: list[str] = []
    for arg in paths:
        path = Path(arg)
        if arg == STDIN or path.is_file():
            found.append(arg)
        elif path.is_dir():
            pages, broken = _directory_pages(path)
            found.extend(map(str, pages))
            missing.extend(map(str, broken))
        else:
            missing.append(arg)
    return found, missing


def not_found_reason(arg: str) -> str:
    """Why `find_pages` left `arg` out: it names nothing, or something that is not a page."""
    path = Path(arg)
    if not os.path.lexists(path):
        return "no such file or directory"
    if not path.exists():
        return "a broken symbolic link"
    return "not a regular file or a folder"


def dataset_pages(root: Path) -> list[str]:
    """The pages of a dataset folder (its html/) or of any folder, in the dataset's numbering
    ("dev2" before "dev10")."""
    html = root / "html"
    found, _ = find_pages([str(html if html.is_dir() else root)])
    return sorted(found, key=lambda p: natural_key(Path(p).name))
