"""Parse fetched pages off Scrapy's reactor thread: the spider gets each page's links from a
pool of worker processes, so a slow or huge page never holds up the other sites' requests.

A worker decodes the page and builds its lxml tree as `newscrawl.html.parse.parse_html` does (with
the crawl's node budget: a page over it is refused before any tree is built), and sends back
only what the spider needs: the `<base>` href, the `<link>` elements and the `<a>` hrefs, in
document order, leaving out what the DOM model leaves out (scripts, styles, hidden noscripts) -
the same links as the DOM model gives, without its walk over every node. When the crawl's site
pass counts SiteLevel's node hashes, a worker builds the page's DOM instead and sends its
hashes back too (`hashed_page_links`): they are stored beside the raw page, and the site pass
reads them rather than parsing the page once more for them. No tree crosses a process boundary.

The workers start with the crawl's second page (`PARSE_WORKERS_AFTER_PAGES`), its first parsed
inline: a one-page crawl starts none, a longer one parses inline while they start.

Settings: NEWSCRAWL_PARSE_WORKERS (worker processes; -1: one per core, 0: parse inline on the
reactor thread, as before), NEWSCRAWL_MAX_PAGE_NODES (the node budget).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from twisted.internet import defer

from newscrawl.html.dom import Dom
from newscrawl.html.parse import MAX_PAGE_NODES, page_text, parse_html
from newscrawl.html.tags import SKIPPED_TAGS
from newscrawl.html.tree import page_tree, shown_noscripts

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = [
    "PageLinks",
    "ParsePool",
    "end_with",
    "future_deferred",
    "hashed_page_links",
    "links_of",
    "page_links",
    "return_freed_memory",
]

logger = logging.getLogger(__name__)

# The page whose arrival starts the workers (`ParsePool.links`); those before it are parsed inline.
PARSE_WORKERS_AFTER_PAGES = 2


@dataclass(frozen=True, slots=True)
class PageLinks:
    """What the spider follows on a page."""

    base: str | None  # the last non-empty <base href>, None when none
    link_elements: tuple[tuple[str, str, str], ...]  # (rel, type, href) of each <link>
    hrefs: tuple[str, ...]  # every <a href>, in document order
    # the page's node hashes for the site pass (`newscrawl.template.node_summary`), b"": none
    node_hashes: bytes = b""


def links_of(dom: Dom) -> PageLinks:
    """The links of a parsed page."""
    base = None
    for node in dom.nodes_by_tag.get("base", ()):
        if href := dom.elements[node].get("href"):
            base = href.strip()
    link_elements = tuple(
        (el.get("rel") or "", el.get("type") or "", (el.get("href") or "").strip())
        for el in (dom.elements[node] for node in dom.nodes_by_tag.get("link", ()))
    )
    return PageLinks(base, link_elements, tuple(dom.href.values()))


def page_links(body: bytes, url: str, content_type: str, max_nodes: int) -> PageLinks:
    """A page's links, as `links_of(parse_html(...))` gives them but from the lxml tree alone,
    without the DOM model's walk over every node (what a pool worker runs); raises `PageError`
    as `parse_html` does."""
    text = page_text(body, content_type, max_nodes=max_nodes, url=url)
    root = page_tree(text.text)
    title = root.find(".//title")
    if title is not None and "<" in (title.text or ""):  # mangled </title>: parse_html's fix
        return links_of(parse_html(body, url, content_type, max_nodes=max_nodes))
    hidden = _hidden(root)
    base, link_elements, hrefs = None, [], []
    for el in root.iter("a", "base", "link"):
        if hidden and any(ancestor in hidden for ancestor in el.iterancestors()):
            continue
        href = el.get("href")
        if el.tag == "a":
            hrefs.append(href or "")
        elif el.tag == "link":
            link_elements.append((el.get("rel") or "", el.get("type") or "", (href or "").strip()))
        elif href:
            base = href.strip()
    return PageLinks(base, tuple(link_elements), tuple(hrefs))


def hashed_page_links(body: bytes, url: str, content_type: str, max_nodes: int) -> PageLinks:
    """A page's links and its node hashes for the site pass, from its DOM (what a pool worker
    runs when the crawl stores them); raises `PageError` as `parse_html` does."""
    from newscrawl.template.node_summary import hash_summary

    dom = parse_html(body, url, content_type, max_nodes=max_nodes)
    links, large = links_of(dom), len(dom) >= TRIM_NODES
    summary = hash_summary(dom)
    del dom
    if large:
        return_freed_memory()
    return PageLinks(links.base, links.link_elements, links.hrefs, summary)


# A worker hands the memory a page's tree took back to the system after a tree of at least
# this many elements (`return_freed_memory`).
TRIM_NODES = 20_000
_TRIM: Any = None


def return_freed_memory() -> None:
    """Hand the heap memory this process has freed back to the system (the C library's
    malloc_trim), so a worker idle after a large page or site does not keep its high-water
    mark resident; nothing where the C library has no malloc_trim."""
    global _TRIM
    if _TRIM is None:
        try:
            _TRIM = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _TRIM = False
    if _TRIM:
        _TRIM(0)


def _hidden(root: Any) -> set[Any]:
    """The elements whose subtree the DOM model leaves out (scripts, styles, noscripts that do
    not hold the page's content...), outermost or not."""
    shown = shown_noscripts(root)
    return {el for el in root.iter(*SKIPPED_TAGS) if el not in shown}


class ParsePool:
    """The crawl's parse workers (none: inline). `links` returns a Deferred of (links, DOM);
    the DOM is there only when parsed inline."""

    def __init__(self, workers: int, max_nodes: int = MAX_PAGE_NODES, hashes: bool = False) -> None:
        """`hashes`: the workers also give each page's node hashes for the site pass (they
        build its DOM then, as the site pass parses it: with the default node budget only)."""
        self.workers = workers if workers >= 0 else (os.cpu_count() or 1)
        self.max_nodes = max_nodes
        self.hashes = hashes and max_nodes <= MAX_PAGE_NODES
        self._pool: ProcessPoolExecutor | None = None
        self._started = threading.Event()  # a worker of the pool has answered
        self.pages = 0  # pages given to `links`

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ParsePool:
        from newscrawl.template.node_summary import summaries_wanted

        settings = crawler.settings
        return cls(
            settings.getint("NEWSCRAWL_PARSE_WORKERS", -1),
            settings.getint("NEWSCRAWL_MAX_PAGE_NODES", MAX_PAGE_NODES),
            summaries_wanted(settings),
        )

    def links(
        self, body: bytes, url: str, content_type: str
    ) -> defer.Deferred[tuple[PageLinks, Dom | None]]:
        self.pages += 1
        if self.workers and self._pool is None and self.pages >= PARSE_WORKERS_AFTER_PAGES:
            self.start()
        if not self.workers or self._pool is None or not self._started.is_set():
            # inline too before the pool starts and while its workers are still starting
            # (the crawl's first pages): the same links, without waiting for a worker's imports
            return defer.maybeDeferred(self._inline, body, url, content_type)
        work = hashed_page_links if self.hashes else page_links
        try:
            future = self._executor().submit(work, body, url, content_type, self.max_nodes)
        except BrokenProcessPool:
            self._pool = None  # a worker died (killed for memory?): start a new pool
            self._started.set()  # and wait for it: a page is not parsed inline for ever
            future = self._executor().submit(work, body, url, content_type, self.max_nodes)
        return future_deferred(future).addCallback(lambda links: (links, None))

    def start(self) -> None:
        """Start the workers now (`links`, at the crawl's second page), so that they import
        the parser while the next pages are parsed inline, not hold up a page until then."""
        if not self.workers:
            return
        executor = self._executor()
        for _ in range(self.workers):  # the executor starts a worker per job it cannot place
            executor.submit(_ready).add_done_callback(lambda done: self._started.set())

    def _inline(self, body: bytes, url: str, content_type: str) -> tuple[PageLinks, Dom]:
        dom = parse_html(body, url, content_type, max_nodes=self.max_nodes)
        return links_of(dom), dom

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # spawn: no fork of a process that runs a reactor and threads
            context = multiprocessing.get_context("spawn")
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=context, initializer=_start, initargs=(os.getpid(),)
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)  # idle by now: quick
            self._pool = None


def _start(crawl_pid: int) -> None:
    """A worker's start: import the parser now rather than with the first page, and end the
    worker when the crawl is gone."""
    end_with(crawl_pid)
    parse_html(b"<p>warm</p>")


def _ready() -> None:
    """A job that does nothing: sent once per worker when the pool starts, so each starts."""


def end_with(crawl_pid: int) -> None:
    """End this worker process once the crawl process is gone (a SIGKILL gives the pool no
    chance to stop it). The crawl is the parent of a spawned worker; a forkserver's worker is
    the forkserver's child, and keeps the forkserver alive itself.

    Ctrl-C is the crawl's to handle: a terminal sends SIGINT to the whole process group, and
    a worker's KeyboardInterrupt would come back as its job's error (raised in the crawl's
    reactor, which then stops without its shutdown) or break the pool; the crawl stops its
    pools itself once it has written what it holds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch, args=(crawl_pid,), daemon=True).start()


def _watch(crawl_pid: int) -> None:
    while _alive(crawl_pid):
        time.sleep(1.0)
    os._exit(0)


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (this process's parent, or another: not a zombie)."""
    if os.getppid() == pid:
        return True
    try:
        os.kill(pid, 0)
        stat = Path(f"/proc/{pid}/stat").read_text()
    except ProcessLookupError:
        return False
    except OSError:  # not ours to signal, or no /proc: it exists
        return True
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def future_deferred(future: Future[Any]) -> defer.Deferred[Any]:
    """A Deferred that fires in the reactor thread when `future` is done."""
    from twisted.internet import reactor

    result: defer.Deferred[Any] = defer.Deferred()

    def fire(done: Future[Any]) -> None:
        error = done.exception()
        if error is not None:
            result.errback(error)
        else:
            result.callback(done.result())

    future.add_done_callback(lambda done: reactor.callFromThread(fire, done))  # type: ignore[attr-defined]
    return result
