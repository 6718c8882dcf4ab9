"""What earlier crawls into the same output folder stored: what makes a crawl incremental.

A scheduled crawl runs into one DIR again and again. Each site's history is read from the
complete Parquet files of every *other* crawl in DIR (a resumed crawl's own rows are its
`CrawlState`'s business), lazily, the first time the site is asked about:

- `pages`: every URL fetched before (final and requested URL), with its latest fetch time and
  the validators (``ETag``, ``Last-Modified``) a conditional request sends back;
- `articles`, `versions` and `duplicates`: whether the page was an article, the hash of its
  text and the crawl that wrote it (the latest version wins);
- ``.newscrawl/<crawl>/validators-HOST-PID.json``: validators of the sitemaps and feeds (not
  stored as pages; one file per process, so crawl workers sharing a run do not overwrite each
  other's), the latest file winning.

Only a crawl that finished lends its validators. A crawl stopped before its end (paused by
Ctrl-C or SIGTERM, or killed while running) read its home pages, sitemaps and feeds but did not
follow all their links: the 304 its validators would earn next run would hide those links for
good. Its stored pages still count as stored; its listing pages are fetched in full.

The spider asks `SiteHistory.known` before it requests a page; the articles writer asks
`SiteHistory.article` and `SiteHistory.by_hash` before it writes a row (`RepeatRouter` in
``newscrawl.pipelines.parquet``); the site pass asks `context_pages` for the site's stored
pages that carry its template across runs.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import pyarrow.parquet as pq

from newscrawl.crawl.discovery.feeds import parse_date
from newscrawl.crawl.extensions.diskfull import write_atomic
from newscrawl.crawl.extensions.state import crawl_state, crawl_statuses
from newscrawl.storage.writer import read_columns

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "REPEAT_DATASETS",
    "VALIDATORS_FILE",
    "CrawlHistory",
    "SiteHistory",
    "StoredArticle",
    "StoredFetch",
    "conditional_headers",
    "crawl_history",
    "response_validators",
    "write_validators",
]

logger = logging.getLogger(__name__)
# Where a page that is not a new article goes: a changed version, or a duplicate of a stored one.
REPEAT_DATASETS = ("versions", "duplicates")
VALIDATORS_FILE = "validators"  # .newscrawl/<crawl>/validators-HOST-PID.json
_STATE_DIR = ".newscrawl"


@dataclass(frozen=True, slots=True)
class StoredFetch:
    """The latest stored fetch of a URL: when, by which crawl, and its validators."""

    crawl: str
    fetched_at: datetime | None
    etag: str | None = None
    last_modified: datetime | None = None
    #: False when the crawl that fetched it stopped before its end: its validators are not
    #: sent back (see the module docstring).
    finished: bool = True

    def changed_by(self, modified: datetime | None) -> bool:
        """True when a sitemap lastmod or feed date says the page changed after this fetch
        (compared with the server's own Last-Modified when it gave one: the same clock)."""
        if modified is None:
            return False
        before = self.last_modified or self.fetched_at
        return before is None or modified > before


@dataclass(frozen=True, slots=True)
class StoredArticle:
    """A stored `articles` row (or its latest version): what decides new, changed, duplicate."""

    url: str
    crawl: str
    is_article: bool
    content_hash: str
    fetched_at: datetime | None


def conditional_headers(fetch: StoredFetch | None) -> dict[str, str]:
    """If-None-Match / If-Modified-Since for a URL fetched before ({} when it has neither)."""
    if fetch is None or not fetch.finished:
        return {}
    headers: dict[str, str] = {}
    if fetch.etag:
        headers["If-None-Match"] = fetch.etag
    if fetch.last_modified is not None:
        headers["If-Modified-Since"] = format_datetime(fetch.last_modified, usegmt=True)
    return headers


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def _later(old: Any, new: Any) -> bool:
    """True when `new` (a StoredFetch or StoredArticle) is a later fetch than `old`."""
    if old is None:
        return True
    floor = datetime.min.replace(tzinfo=UTC)
    return (new.fetched_at or floor) >= (old.fetched_at or floor)


@dataclass(slots=True)
class SiteHistory:
    """One site's pages and articles in the other crawls of DIR."""

    site: str
    fetches: dict[str, StoredFetch] = field(default_factory=dict)
    articles: dict[str, StoredArticle] = field(default_factory=dict)
    hashes: dict[str, StoredArticle] = field(default_factory=dict)
    crawls: set[str] = field(default_factory=set)
    #: final URLs of the articles in DIR/articles (not versions or duplicates): what a run's
    #: "unchanged" counts against
    stored_articles: set[str] = field(default_factory=set)

    def known(self, url: str) -> StoredFetch | None:
        """The latest fetch of `url` whose row was written (a page fetched but never written,
        e.g. by a killed crawl, is fetched again)."""
        return self.fetches.get(url) if url in self.articles else None

    def article(self, url: str) -> StoredArticle | None:
        return self.articles.get(url)

    def by_hash(self, content_hash: str) -> StoredArticle | None:
        """The first stored article with this text (empty texts never match)."""
        return self.hashes.get(content_hash)

    def add_fetch(self, url: str, fetch: StoredFetch) -> None:
        if _later(self.fetches.get(url), fetch):
            self.fetches[url] = fetch

    def add_article(self, urls: tuple[str, ...], article: StoredArticle) -> None:
        for url in urls:
            if url and _later(self.articles.get(url), article):
                self.articles[url] = article
        if article.is_article and article.content_hash:
            old = self.hashes.get(article.content_hash)
            if old is None or (old.fetched_at or datetime.max.replace(tzinfo=UTC)) > (
                article.fetched_at or datetime.max.replace(tzinfo=UTC)
            ):
                self.hashes[article.content_hash] = article


class CrawlHistory:
    """The history of every site of DIR, read site by site on first use (see the module)."""

    def __init__(
        self, out: str | os.PathLike[str], current_crawl: str, enabled: bool = True
    ) -> None:
        self.out = Path(out)
        self.current = current_crawl
        self.enabled = enabled  # False: a crawl that stands alone (NEWSCRAWL_HISTORY off)
        self._sites: dict[str, SiteHistory] = {}
        self._validators: dict[str, dict[str, str]] | None = None
        self._stopped: set[str] | None = None

    def site(self, name: str) -> SiteHistory:
        history = self._sites.get(name)
        if history is None:
            history = self._sites[name] = self._load(name)
        return history

    def has_site(self, name: str) -> bool:
        return bool(self.site(name).articles)

    # -- loading -------------------------------------------------------------------------------

    def _rows(
        self, dataset: str, site: str, columns: list[str]
    ) -> Iterator[tuple[str, Path, dict[str, list[Any]]]]:
        """(crawl, file, columns) of each complete file of `dataset` for `site` in the other
        crawls."""
        root = self.out / dataset
        if not self.enabled or not root.is_dir():
            return
        for folder in sorted(root.glob("crawl=*")):
            crawl = unquote(folder.name.partition("=")[2])  # as partition_dir quoted it
            if crawl == self.current or not (folder / f"site={site}").is_dir():
                continue
            for path, _, values in read_columns(root, columns, {"crawl": crawl, "site": site}):
                yield crawl, path, values

    def stopped_crawls(self) -> set[str]:
        """The other crawls of DIR that stopped before their end: paused, or killed while
        running (their ``state.json``; a crawl without one, such as an ingest, counts as
        finished)."""
        if self._stopped is None:
            statuses = crawl_statuses(self.out) if self.enabled else {}
            self._stopped = {
                crawl
                for crawl, data in statuses.items()
                if data.get("status") in ("paused", "running") and crawl != self.current
            }
        return self._stopped

    def _load(self, site: str) -> SiteHistory:
        history = SiteHistory(site)
        columns = ["url", "final_url", "fetched_at", "headers"]
        stopped = self.stopped_crawls()
        for crawl, _, rows in self._rows("pages", site, columns):
            history.crawls.add(crawl)
            for url, final, fetched, headers in zip(
                rows["url"], rows["final_url"], rows["fetched_at"], rows["headers"], strict=True
            ):
                found = dict(headers or ())
                fetch = StoredFetch(
                    crawl,
                    _aware(fetched),
                    found.get("etag"),
                    parse_date(found.get("last-modified")),
                    finished=crawl not in stopped,
                )
                history.add_fetch(final, fetch)
                history.add_fetch(url, fetch)
        for dataset in ("articles", *REPEAT_DATASETS):
            self._load_articles(history, dataset, site)
        return history

    def _load_articles(self, history: SiteHistory, dataset: str, site: str) -> None:
        columns = ["url", "final_url", "fetched_at", "is_article", "content_hash"]
        for crawl, _, rows in self._rows(dataset, site, columns):
            for url, final, fetched, flag, digest in zip(
                rows["url"],
                rows["final_url"],
                rows["fetched_at"],
                rows["is_article"],
                rows["content_hash"],
                strict=True,
            ):
                article = StoredArticle(final, crawl, bool(flag), digest or "", _aware(fetched))
                history.add_article((final, url), article)
                if flag and dataset == "articles":
                    history.stored_articles.add(final)

    # -- sitemaps and feeds --------------------------------------------------------------------

    def validators(self, url: str) -> dict[str, str]:
        """Conditional-request headers for a sitemap or feed fetched by an earlier crawl."""
        if self._validators is None:
            self._validators = self._read_validators()
        found = self._validators.get(url) or {}
        return {k: v for k, v in found.items() if k in ("If-None-Match", "If-Modified-Since")}

    def feeds(self) -> list[str]:
        """Feeds read by earlier crawls (every site's; the spider keeps those in scope)."""
        if self._validators is None:
            self._validators = self._read_validators()
        return sorted(url for url, found in self._validators.items() if found.get("kind") == "feed")

    def _read_validators(self) -> dict[str, dict[str, str]]:
        if not self.enabled:
            return {}
        skipped = {self.current, *self.stopped_crawls()}
        files = [
            p
            for p in (self.out / _STATE_DIR).glob(f"*/{VALIDATORS_FILE}-*.json")
            if p.parent.name not in skipped
        ]
        merged: dict[str, dict[str, str]] = {}
        for path in sorted(files, key=lambda p: p.stat().st_mtime):  # the latest crawl wins
            try:
                merged.update(json.loads(path.read_text()))
            except (OSError, ValueError) as err:
                logger.warning("ignoring %s: %s", path, err)
        return merged

    # -- the template carried across runs ------------------------------------------------------

    def context_pages(self, site: str, exclude: set[str], limit: int) -> list[dict[str, Any]]:
        """Up to `limit` of the site's stored pages from other crawls (the latest version of
        each URL, newest first; URLs in `exclude` left out): rows of the `pages` dataset."""
        if limit <= 0:
            return []
        latest: dict[str, tuple[datetime, Path, int]] = {}
        floor = datetime.min.replace(tzinfo=UTC)
        for _, path, rows in self._rows("pages", site, ["final_url", "fetched_at", "status"]):
            for row, (url, fetched, status) in enumerate(
                zip(rows["final_url"], rows["fetched_at"], rows["status"], strict=True)
            ):
                moment = _aware(fetched) or floor
                if status == 200 and url not in exclude and moment >= latest.get(url, (floor,))[0]:
                    latest[url] = (moment, path, row)
        chosen = sorted(latest.values(), key=lambda t: t[0], reverse=True)[:limit]
        return _read_rows(chosen)


def _read_rows(chosen: list[tuple[datetime, Path, int]]) -> list[dict[str, Any]]:
    """The full `pages` rows at (file, row) positions, each file read once."""
    by_file: dict[Path, list[int]] = {}
    for _, path, row in chosen:
        by_file.setdefault(path, []).append(row)
    rows: list[dict[str, Any]] = []
    for path, wanted in by_file.items():
        try:
            table = pq.read_table(path).take(sorted(wanted))
        except (OSError, ValueError) as err:  # unreadable: the site pass goes without it
            logger.warning("cannot read %s: %s", path, err)
            continue
        rows.extend(table.to_pylist())
    return rows


def write_validators(history: CrawlHistory, validators: dict[str, dict[str, str]]) -> Path | None:
    """Save this process's sitemap and feed validators where the next run looks (atomically)."""
    if not validators:
        return None
    folder = history.out / _STATE_DIR / history.current
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{VALIDATORS_FILE}-{socket.gethostname()}-{os.getpid()}.json"
    write_atomic(folder / name, json.dumps(validators, indent=1, sort_keys=True))
    return folder / name


def response_validators(headers: Any) -> dict[str, str]:
    """The conditional-request headers that echo a response's ETag and Last-Modified."""
    found: dict[str, str] = {}
    etag = headers.get("ETag")
    modified = headers.get("Last-Modified")
    if etag:
        found["If-None-Match"] = etag.decode("latin-1") if isinstance(etag, bytes) else etag
    if modified:
        text = modified.decode("latin-1") if isinstance(modified, bytes) else modified
        found["If-Modified-Since"] = text
    return found


_HISTORIES: weakref.WeakKeyDictionary[Any, CrawlHistory] = weakref.WeakKeyDictionary()


def crawl_history(crawler: Crawler) -> CrawlHistory:
    """The crawl's one CrawlHistory: earlier crawls of the folder NEWSCRAWL_HISTORY_DIR (a crawl
    worker's corpus root), else of NEWSCRAWL_OUT; none with NEWSCRAWL_HISTORY off."""
    history = _HISTORIES.get(crawler)
    if history is None:
        state = crawl_state(crawler)
        folder = crawler.settings.get("NEWSCRAWL_HISTORY_DIR") or state.out
        enabled = crawler.settings.getbool("NEWSCRAWL_HISTORY", True)
        history = _HISTORIES[crawler] = CrawlHistory(folder, state.crawl_id, enabled)
        for crawl in sorted(history.stopped_crawls()):
            logger.warning(
                "crawl %s in %s stopped before its end: this run fetches the home pages, "
                "sitemaps and feeds it read in full (--resume continues a stopped crawl instead)",
                crawl,
                folder,
            )
    return history
