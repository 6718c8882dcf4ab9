"""How saved pages group into sites offline (`--site-from`), and site-grouped parallel work.

An extractor that keeps per-site state (the template filter learns each site's own template from
the site's pages it has seen) needs to know which pages belong together, and a page saved to disk
often carries no URL. The modes of ``--site-from``:

* ``url``: the host (lower-cased, without "www.") of the page's URL: a dataset's meta ``url``,
  else the page's ``og:url`` / ``twitter:url`` meta tag, else its ``<link rel=canonical>``
  (read from the first `HEAD_BYTES` of the page, before ``<body``);
* ``dir``: the name of the folder the page file is in (in an evaluation dataset, whose pages all
  sit in ``html/``, the dataset's folder name: the whole dataset is one site);
* ``meta``: the ``site`` of the page's line in a dataset's ``meta.jsonl``; a page without one
  falls back to ``url``;
* ``none``: no sites; every page stands alone.

The site found is handed to the extractors as `newscrawl.html.dom.Dom.site` ("" for no site), which
`newscrawl.extractors.template_filter.page_site` prefers over the page's own URL.

Parallel runs are made deterministic by `site_tasks`: all pages of one site form one task,
processed in input order by one worker, so a site's state never depends on how many workers
there are or which other sites a worker saw; pages without a site are independent and are
packed into small tasks. `in_order` turns results that arrive task by task back into input
order. An extractor whose class declares ``keeps_site_state = False`` (its output for a page
depends on that page alone) lets a site's pages be spread over workers too (`keeps_site_state`).
"""

from __future__ import annotations

import html
import multiprocessing
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from newscrawl.html.urls import site_of

__all__ = [
    "HEAD_BYTES",
    "SITE_FROM",
    "SiteError",
    "head_site",
    "in_order",
    "keeps_site_state",
    "run_tasks",
    "site_for",
    "site_tasks",
]

SITE_FROM = ("url", "dir", "meta", "none")
# How much of a page is read to find its og:url / canonical link (they sit in <head>).
HEAD_BYTES = 256 * 1024
# Pages without a site are packed at most this many to a task.
MAX_LOOSE_CHUNK = 32

_TAG = re.compile(r"<(meta|link|body)\b([^>]*)>", re.IGNORECASE)
_ATTR = re.compile(r"""([^\s=/>"']+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))""")
_URL_META_KEYS = ("og:url", "twitter:url")

T = TypeVar("T")
R = TypeVar("R")


class SiteError(ValueError):
    """A --site-from mode that cannot work on these inputs (e.g. meta without meta.jsonl)."""


def _attributes(raw: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for match in _ATTR.finditer(raw):
        name = match.group(1).lower()
        value = next((g for g in match.groups()[1:] if g is not None), "")
        out.setdefault(name, html.unescape(value).strip())
    return out


def head_site(data: bytes) -> str:
    """The site named in a page's head: the host of its og:url / twitter:url meta tag, else of
    its canonical link ("" when neither gives an http(s) URL). Reads at most `HEAD_BYTES`."""
    head = data[:HEAD_BYTES]
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = head.decode("utf-16", errors="replace")
    else:
        text = head.decode("utf-8", errors="replace")
    metas: dict[str, str] = {}
    canonical: str | None = None
    for match in _TAG.finditer(text):
        tag = match.group(1).lower()
        if tag == "body":
            break
        attrs = _attributes(match.group(2))
        if tag == "meta":
            key = attrs.get("property") or attrs.get("name") or attrs.get("itemprop")
            if key and "content" in attrs:
                metas.setdefault(key.strip().lower(), attrs["content"])
        elif canonical is None and attrs.get("rel", "").lower() == "canonical":
            canonical = attrs.get("href", "")
    for key in _URL_META_KEYS:
        if metas.get(key, "").startswith(("http://", "https://")):
            return site_of(metas[key])
    if canonical and canonical.startswith(("http://", "https://", "//")):
        return site_of(canonical)
    return ""


def site_for(
    mode: str,
    *,
    meta: Mapping[str, Any] | None = None,
    folder: str = "",
    head: Callable[[], bytes] | None = None,
) -> str:
    """The site of one page under `mode` (one of `SITE_FROM`); "" for no site.

    `meta`: the page's meta.jsonl object (if any); `folder`: the name that `dir` uses; `head`:
    reads the start of the page (called only when the URL must come from the page itself).
    """
    if mode not in SITE_FROM:
        raise ValueError(f"--site-from must be one of {', '.join(SITE_FROM)}, not {mode!r}")
    meta = meta or {}
    if mode == "none":
        return ""
    if mode == "dir":
        return folder
    if mode == "meta":
        site = meta.get("site")
        if isinstance(site, str) and site.strip():
            return site.strip()
    url = meta.get("url")
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        site = site_of(url)
        if site:
            return site
    if head is None:
        return ""
    try:
        return head_site(head())
    except OSError:
        return ""  # an unreadable page: its extraction reports the error


def keeps_site_state(extractors: Iterable[object]) -> bool:
    """Whether any of `extractors` may keep per-site state (what `site_tasks` must respect):
    true unless every one declares ``keeps_site_state = False``."""
    return any(getattr(e, "keeps_site_state", True) for e in extractors)


def site_tasks(sites: Sequence[str], jobs: int) -> list[list[int]]:
    """Indexes of the pages grouped into tasks: all pages of a site in one task, in input order;
    pages without a site ("") in chunks of consecutive pages. Tasks are ordered by their first
    page, so the whole plan depends on the input alone, never on `jobs` but for chunk sizes of
    site-less pages (which share no state)."""
    by_site: dict[str, list[int]] = {}
    loose = [i for i, site in enumerate(sites) if not site]
    for index, site in enumerate(sites):
        if site:
            by_site.setdefault(site, []).append(index)
    chunk = max(1, min(MAX_LOOSE_CHUNK, len(loose) // (max(jobs, 1) * 4)))
    tasks = list(by_site.values())
    tasks.extend(loose[i : i + chunk] for i in range(0, len(loose), chunk))
    tasks.sort(key=lambda task: task[0])
    return tasks


def in_order(pairs: Iterable[tuple[int, R]], count: int) -> Iterator[R]:
    """Results that arrive as (index, result) in any order, yielded in index order 0..count-1
    as soon as each is due."""
    waiting: dict[int, R] = {}
    due = 0
    for index, result in pairs:
        waiting[index] = result
        while due in waiting:
            yield waiting.pop(due)
            due += 1
    if due != count:
        raise RuntimeError(f"{count - due} results never arrived")


def run_tasks(
    tasks: Sequence[T],
    work: Callable[[T], list[tuple[int, R]]],
    jobs: int,
    initializer: Callable[..., None] | None = None,
    initargs: tuple[Any, ...] = (),
) -> Iterator[tuple[int, R]]:
    """(index, result) pairs of every task: in this process, task by task, when `jobs` <= 1 or
    there is one task; else from a pool of `jobs` processes, each task whole in one process,
    handed out in task order (results come back as tasks finish: see `in_order`).

    In this process `initializer(*initargs)` is not called: the caller has set things up."""
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            yield from work(task)
        return
    processes = min(jobs, len(tasks))
    with multiprocessing.Pool(processes, initializer=initializer, initargs=initargs) as pool:
        for results in pool.imap_unordered(work, tasks, chunksize=1):
            yield from results
