"""A crawl's identity and what it already wrote: what makes resuming safe after any stop.

A crawl has an id (``NEWSCRAWL_CRAWL_ID``, or the one remembered in JOBDIR, or a new one) and
writes to ``NEWSCRAWL_OUT/<dataset>/crawl=<id>/site=<name>/``. Its state lives in
``NEWSCRAWL_OUT/.newscrawl/<id>/state.json``: "running" while it runs, "paused" after Ctrl-C,
"finished" at the end.

Resuming, the completed Parquet files are the truth: the pages they hold are not fetched
again (ReplayMiddleware serves them from the stored HTML so their links are still followed) and
no writer writes a row twice. A site whose site pass ran on part of its pages because the crawl
was stopped (Ctrl-C, SIGTERM) is marked partial (``<id>/partial/<site>``): a resumed crawl
deletes its `articles` and `nodes` files at the start and runs its site pass again over every
stored page, so `nodes` covers every stored page after any stop.

Scrapy's JOBDIR (scheduler queue, seen-request filter) is kept after a clean pause; after a
kill (state still "running") or a stop by a full disk (reason "disk full") it is torn - its
queue files and seen filter are written lazily, and fetched pages may not have been stored -
so it is cleared and the crawl restarts from the site list, replaying what was stored.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import weakref
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from scrapy import signals

from newscrawl.crawl.extensions.diskfull import DISK_FULL_REASON, DISK_FULL_STAT, write_atomic
from newscrawl.storage.writer import (
    closed_files,
    fsync_path,
    new_run_id,
    read_column,
    read_columns,
    remove_torn_files,
)

if TYPE_CHECKING:
    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["CrawlState", "CrawlStateExtension", "crawl_state", "crawl_statuses"]

logger = logging.getLogger(__name__)
STATE_DIR = ".newscrawl"
# every dataset a crawl writes (`versions` and `duplicates`: runs after the first):
# torn files are cleared from each on resume, and workers and ingests publish each
DATASETS = ("articles", "pages", "nodes", "versions", "duplicates")
_CRAWL_ID_FILE = "newscrawl_crawl_id.txt"
_JOBDIR_FILES = ("requests.queue", "requests.seen", "spider.state")


@dataclass(slots=True)
class StoredPage:
    """Where a stored page's row is: its file and row number."""

    path: Path
    row: int


@dataclass(slots=True)
class CrawlState:
    """Identity, output folders and stored rows of one crawl."""

    out: Path
    crawl_id: str
    jobdir: Path | None = None
    unclean: bool = False
    _pages: dict[str, StoredPage] | None = field(default=None, repr=False)
    _articles: set[str] | None = field(default=None, repr=False)
    _site_pages: Counter[str] | None = field(default=None, repr=False)

    @property
    def state_dir(self) -> Path:
        return self.out / STATE_DIR / self.crawl_id

    def dataset_root(self, dataset: str) -> Path:
        return self.out / dataset

    def partition(self, site: str) -> dict[str, str]:
        return {"crawl": self.crawl_id, "site": site}

    @property
    def resumed(self) -> bool:
        return bool(self.stored_pages) or bool(self.stored_articles)

    @property
    def stored_pages(self) -> dict[str, StoredPage]:
        """url and final_url of every page in this crawl's complete `pages` files."""
        if self._pages is None:
            self._load_pages()
        assert self._pages is not None
        return self._pages

    @property
    def site_pages(self) -> Counter[str]:
        """Pages already stored, per site (what counts against the page cap on resume)."""
        if self._site_pages is None:
            self._load_pages()
        assert self._site_pages is not None
        return self._site_pages

    @property
    def stored_articles(self) -> set[str]:
        """final_url of every row of this crawl's complete `articles` files (but those of
        partial sites, which are written again)."""
        if self._articles is None:
            self._articles = set()
            root = self.dataset_root("articles")
            partial = self.partial_sites()
            for _, parts, values in read_column(root, "final_url", {"crawl": self.crawl_id}):
                if parts.get("site", "") not in partial:
                    self._articles.update(values)
        return self._articles

    # -- partial sites -------------------------------------------------------------------------

    def _partial_marker(self, site: str) -> Path:
        return self.state_dir / "partial" / quote(site, safe="")

    def partial_sites(self) -> set[str]:
        """Sites whose site pass saw only part of their pages (the crawl was stopped)."""
        folder = self.state_dir / "partial"
        if not folder.is_dir():
            return set()
        return {unquote(path.name) for path in folder.iterdir() if not path.name.startswith(".")}

    def mark_partial(self, site: str) -> None:
        """Before a site pass over part of a site's pages: its rows are to be rewritten."""
        marker = self._partial_marker(site)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        fsync_path(marker.parent)

    def clear_partial(self, site: str) -> None:
        """Delete a partial site's `articles` and `nodes` files of this crawl, then its mark:
        the site is pending again (stored pages, no rows), what a resumed crawl rebuilds."""
        marker = self._partial_marker(site)
        for dataset in ("articles", "nodes"):
            for path in closed_files(self.dataset_root(dataset), self.partition(site)):
                path.unlink(missing_ok=True)
        marker.unlink(missing_ok=True)

    def _load_pages(self) -> None:
        per_site: Counter[str] = Counter()
        root = self.dataset_root("pages")
        files = list(read_columns(root, ["final_url", "url"], {"crawl": self.crawl_id}))
        for _, parts, columns in files:
            per_site[parts.get("site", "")] += len(columns["final_url"])
        # A page is found by its final URL first, then by the URL that redirected to it.
        pages: dict[str, StoredPage] = {}
        for column in ("final_url", "url"):
            for path, _, columns in files:
                for row, url in enumerate(columns[column]):
                    pages.setdefault(url, StoredPage(path, row))
        self._pages, self._site_pages = pages, per_site

    # -- state file ----------------------------------------------------------------------------

    def read_status(self) -> dict[str, Any]:
        try:
            return json.loads((self.state_dir / "state.json").read_text())
        except (OSError, ValueError):
            return {}

    def write_status(self, status: str, **extra: Any) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        data = {
            **self.read_status(),
            "crawl_id": self.crawl_id,
            "status": status,
            "updated": datetime.now(UTC).isoformat(timespec="seconds"),
            **extra,
        }
        write_atomic(self.state_dir / "state.json", json.dumps(data, indent=1))


def crawl_statuses(out: Path) -> dict[str, dict[str, Any]]:
    """The state file of every crawl in `out` (status, updated, ...), by crawl id; a file that
    cannot be read is left out."""
    found: dict[str, dict[str, Any]] = {}
    for path in (out / STATE_DIR).glob("*/state.json"):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            found[path.parent.name] = data
    return found


def _crawl_id(settings: Any, jobdir: Path | None) -> str:
    explicit = (settings.get("NEWSCRAWL_CRAWL_ID") or "").strip()
    remembered = jobdir / _CRAWL_ID_FILE if jobdir else None
    if explicit:
        crawl_id = explicit
    elif remembered is not None and remembered.is_file():
        crawl_id = remembered.read_text().strip()
    else:
        crawl_id = new_run_id()
    if remembered is not None:
        jobdir.mkdir(parents=True, exist_ok=True)  # type: ignore[union-attr]
        remembered.write_text(crawl_id)
    return crawl_id


def _clear_torn_jobdir(jobdir: Path) -> None:
    """Remove Scrapy's JOBDIR files that a killed run leaves inconsistent."""
    for name in _JOBDIR_FILES:
        path = jobdir / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def open_crawl_state(settings: Any) -> CrawlState:
    """Resolve the crawl id and recover from an unclean stop (see the module docstring)."""
    out = Path(settings.get("NEWSCRAWL_OUT") or "out")
    jobdir = Path(settings["JOBDIR"]) if settings.get("JOBDIR") else None
    state = CrawlState(out=out, crawl_id=_crawl_id(settings, jobdir), jobdir=jobdir)
    previous = state.read_status()
    # a full disk tore what was being written, JOBDIR's queue included
    disk_full = previous.get("reason") == DISK_FULL_REASON
    state.unclean = previous.get("status") == "running" or disk_full
    if state.unclean:
        logger.warning(
            "crawl %s %s; resuming from its complete Parquet files",
            state.crawl_id,
            "was stopped by a full disk"
            if disk_full
            else f"did not stop cleanly (pid {previous.get('pid')})",
        )
        if jobdir is not None:
            _clear_torn_jobdir(jobdir)
    torn = sum(
        remove_torn_files(state.dataset_root(name), {"crawl": state.crawl_id}) for name in DATASETS
    )
    if torn:
        logger.info("removed %d unfinished Parquet files of crawl %s", torn, state.crawl_id)
    for site in sorted(state.partial_sites()):
        logger.info("site %s was written from part of its pages: its site pass runs again", site)
        state.clear_partial(site)
    return state


_STATES: weakref.WeakKeyDictionary[Any, CrawlState] = weakref.WeakKeyDictionary()


def crawl_state(crawler: Crawler) -> CrawlState:
    """The crawl's one CrawlState (resolved on first use, from the crawler's settings)."""
    state = _STATES.get(crawler)
    if state is None:
        state = _STATES[crawler] = open_crawl_state(crawler.settings)
    return state


class CrawlStateExtension:
    """Resolves the crawl state before the scheduler opens JOBDIR, and records how it ends."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.state = crawl_state(crawler)
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlStateExtension:
        return cls(crawler)

    def spider_opened(self, spider: Spider) -> None:
        self.state.write_status(
            "running", pid=os.getpid(), started=datetime.now(UTC).isoformat(timespec="seconds")
        )
        logger.info("crawl id %s, writing to %s", self.state.crawl_id, self.state.out)

    def spider_closed(self, spider: Spider, reason: str) -> None:
        stats = self.crawler.stats
        if stats is not None and stats.get_value(DISK_FULL_STAT):
            reason = DISK_FULL_REASON
        self.state.write_status("finished" if reason == "finished" else "paused", reason=reason)
