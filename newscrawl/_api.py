"""newscrawl's Python API: what `newscrawl/__init__.py` exports (see docs/python.md).

Importing this module is cheap: Scrapy, scikit-learn, numpy and pyarrow are imported by the
functions that need them, on their first call.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from newscrawl.site.site_job import SitePasser
    from newscrawl.site.site_store import PageResult, PassPage

__all__ = [
    "Article",
    "CrawlSummary",
    "crawl",
    "extract",
    "extract_site",
    "read_articles",
]


@dataclass(frozen=True, slots=True)
class Article:
    """One page as newscrawl extracted it: the fields of a row of a crawl's `articles` dataset.

    `text` is the main text, one paragraph a line ("" when none was found), and `markdown` the
    same selection as Markdown (headings, lists, tables, code); `comments` the page's comment
    thread, apart from the text; `page_type` one of article, listing, forum, product,
    collection, service, documentation; `date` the
    publication time (UTC) when the page gives one; `is_article` says whether the page is an
    article rather than an index, tag or home page, and `why` gives the evidence; `extractor`
    names the extractor whose text this is. `error` says why a page could not be extracted
    (not a page, too large, ...); its other fields are then empty."""

    url: str | None
    title: str = ""
    text: str = ""
    markdown: str = ""
    date: datetime | None = None
    author: str | None = None
    language: str | None = None
    page_type: str = ""
    is_article: bool = False
    why: str = ""
    extractor: str = ""
    comments: str = ""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class CrawlSummary:
    """What a crawl did, from the summary it writes beside its output.

    `status` is "ok" (every site reached), "partial" (some sites failed: their start page
    could not be fetched; `failed_sites` names them) or "failed" (the crawl did not finish, or
    every site failed). `pages` and `articles` count the whole crawl; `sites` has the counts
    per site and `errors` the errors by kind; `raw` is the whole summary as written."""

    crawl_id: str
    out: Path
    status: str
    pages: int
    articles: int
    failed_sites: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    errors: Mapping[str, int] = field(default_factory=dict)
    sites: Mapping[str, Any] = field(default_factory=dict)
    raw: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether the crawl finished and reached every site."""
        return self.status == "ok"


class HasUrlAndHtml(Protocol):
    """A page object `extract_site` takes: its URL and its HTML (str or bytes)."""

    url: str | None
    html: str | bytes


Page = tuple[str | None, str | bytes] | HasUrlAndHtml

# -- one page -------------------------------------------------------------------------------------


def extract(
    html: str | bytes,
    url: str | None = None,
    *,
    content_type: str | None = None,
    extractor: str | None = None,
    links: bool = False,
    images: bool = False,
) -> Article:
    """Extract one page: its title, main text, metadata and article flag, as a crawl does.

    `html` is the page as text, or as the bytes a server sent: bytes are decoded as the crawl
    decodes them (byte order mark, then the charset `content_type` - the Content-Type header -
    or the page declares, then detection). `url` is the page's address; it helps the date and
    the article flag. `extractor` picks one extractor by name (default: the crawl's chain, the
    learned extractor with its fallback). `links` and `images`: the Markdown writes the
    selection's links as ``[text](href)`` and its images as ``![alt](src)`` (by default the
    links' text only, and no images). A page that cannot be extracted (empty, binary, over
    the size limit) gives an Article whose `error` says why."""
    from newscrawl.site.site_job import PageJob

    _, page = _pass_page((url, html), content_type)
    passer = _passer(extractor, bool(links), bool(images))
    result = passer.run_page(PageJob(page, _site_of(url))).pages[0]
    return _article(url, result)


def _page_data(html: object) -> str | bytes:
    if isinstance(html, str | bytes):
        return html
    if isinstance(html, bytearray | memoryview):
        return bytes(html)
    raise TypeError(f"html must be str or bytes, not {type(html).__name__}")


@functools.lru_cache(maxsize=8)
def _passer(extractor: str | None, links: bool = False, images: bool = False) -> SitePasser:
    """The crawl's extractor chain (or one extractor), built once per process; its Markdown
    writes links and images as `links` and `images` say."""
    from newscrawl import settings as defaults
    from newscrawl.extractors import DEFAULT_EXTRACTOR, EXTRACTORS
    from newscrawl.pipelines.extraction import ExtractionSettings
    from newscrawl.site.site_job import SitePasser

    if extractor is None:
        names = tuple(defaults.NEWSCRAWL_EXTRACTORS)
        primary = defaults.NEWSCRAWL_PRIMARY_EXTRACTOR or DEFAULT_EXTRACTOR
    elif extractor in EXTRACTORS:
        names, primary = (extractor,), extractor
    else:
        known = ", ".join(sorted(EXTRACTORS))
        raise ValueError(f"unknown extractor {extractor!r} (known: {known})")
    budgets = {k: v for k, v in defaults.NEWSCRAWL_EXTRACTOR_MAX_NODES.items() if k in names}
    chosen = ExtractionSettings(names, {}, primary, False, budgets, links=links, images=images)
    return SitePasser(chosen.build())


def _site_of(url: str | None) -> str:
    from urllib.parse import urlsplit

    try:
        return (urlsplit(url or "").hostname or "").removeprefix("www.")
    except ValueError:
        return ""


def _article(url: str | None, result: PageResult) -> Article:
    fields = result.fields
    return Article(
        url=url,
        title=fields.get("title") or "",
        text=fields.get("text") or "",
        markdown=fields.get("markdown") or "",
        date=fields.get("published"),
        author=fields.get("author"),
        language=fields.get("language"),
        is_article=bool(fields.get("is_article")),
        why=fields.get("article_reason") or "",
        extractor=fields.get("extractor") or "",
        page_type=fields.get("page_type") or "",
        comments=fields.get("comments") or "",
        error=fields.get("error"),
    )


# -- one site -------------------------------------------------------------------------------------


def extract_site(
    pages: Iterable[Page],
    *,
    site: str | None = None,
    extractor: str | None = None,
    links: bool = False,
    images: bool = False,
) -> list[Article]:
    """Extract one site's pages together, through the site pass, as a crawl writes them.

    `pages` are (url, html) pairs, or objects with `url` and `html` (or `body`, as a Scrapy
    response has) attributes; html as in `extract`. The site pass learns the site's template
    (the navigation, footers and teasers its pages share) from all of them and cuts it out of
    each page's text; a site of fewer than five pages is extracted page by page. `site` names
    the site (default: the host of the first URL); `extractor`, `links` and `images` as in
    `extract`. The Articles come back in input order."""
    from newscrawl.site.site_job import PageJob, SitePassJob

    given = [_pass_page(page) for page in pages]
    if not given:
        return []
    name = site if site is not None else next((_site_of(u) for u, _ in given if u), "")
    name = name or "site"
    passer = _passer(extractor, bool(links), bool(images))
    job = SitePassJob(name, "", tuple(page for _, page in given))
    result = passer.run(job).pages
    articles = []
    for index, (url, page) in enumerate(given):
        found = result.get(index)
        if found is None:  # the pass did not reach it (it did not parse): alone, as a crawl does
            found = passer.run_page(PageJob(page, name)).pages[0]
        articles.append(_article(url, found))
    return articles


def _pass_page(page: Page, content_type: str | None = None) -> tuple[str | None, PassPage]:
    """A page as the site pass reads it: text goes in as UTF-8 bytes that say so."""
    from newscrawl.site.site_store import PassPage

    url: object
    html: object
    if isinstance(page, tuple):
        if len(page) != 2:
            raise TypeError("a page must be a (url, html) pair")
        url, html = page
    else:
        url = getattr(page, "url", None)
        html = getattr(page, "html", None)
        if html is None:
            html = getattr(page, "body", None)
    if url is not None and not isinstance(url, str):
        raise TypeError(f"a page's url must be str or None, not {type(url).__name__}")
    address = url if isinstance(url, str) else None
    data = _page_data(html)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if isinstance(data, str):
        content_type = "text/html; charset=utf-8"
    return address, PassPage(address or "", raw, content_type or "")


# -- crawling -------------------------------------------------------------------------------------


def crawl(
    sites: str | os.PathLike[str] | Sequence[str],
    out: str | os.PathLike[str],
    *,
    crawl_id: str | None = None,
    resume: bool = False,
    **settings: Any,
) -> CrawlSummary:
    """Crawl `sites` into the folder `out`, as `newscrawl crawl SITES --out OUT` does, and wait.

    `sites` is a site-list file (txt or csv), a string of URLs separated by commas, or a list
    of start URLs. `settings` are crawl settings by name (docs/settings.md), e.g.
    ``MAX_PAGES_PER_SITE=50`` or ``NEWSCRAWL_ALLOW_PRIVATE="loopback"``. The crawl runs in a
    process of its own (Scrapy's Twisted reactor cannot be started twice in one process), so
    `crawl` can be called again. `resume`: go on with the last unfinished crawl in `out` (or
    `crawl_id`). Raises ValueError for a bad site list or setting, RuntimeError when another
    run holds `out` or the crawl ended without a summary. Its log goes to the caller's stderr.
    Ctrl-C stops the crawl as it stops `newscrawl crawl` (resume it with `resume=True`)."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{folder} exists and is not a folder")
    with tempfile.TemporaryDirectory(prefix="newscrawl-crawl-") as scratch:
        job = (_site_list(sites, Path(scratch)), str(folder), crawl_id, resume, settings)
        summary = _in_child(job, Path(scratch))
    return CrawlSummary(
        crawl_id=str(summary.get("crawl_id", "")),
        out=folder,
        status=str(summary.get("status", "failed")),
        pages=int(summary.get("pages", 0)),
        articles=int(summary.get("articles", 0)),
        failed_sites=tuple(summary.get("failed_sites") or ()),
        elapsed_s=float(summary.get("elapsed_s", 0.0)),
        errors=dict(summary.get("errors") or {}),
        sites=dict(summary.get("sites") or {}),
        raw=summary,
    )


def _site_list(sites: str | os.PathLike[str] | Sequence[str], scratch: Path) -> str:
    """`sites` as the crawl's spider takes them: a path or a string of URLs."""
    if isinstance(sites, str | os.PathLike):
        return os.fspath(sites)
    urls = [str(url).strip() for url in sites]
    if not urls:
        raise ValueError("no sites to crawl")
    path = scratch / "sites.txt"
    path.write_text("".join(f"{url}\n" for url in urls), encoding="utf-8")
    return str(path)


# What a failed crawl child raises in the caller: a ValueError for bad input, else RuntimeError.
_RAISED: dict[str, type[Exception]] = {"ValueError": ValueError}


def _in_child(job: tuple[Any, ...], scratch: Path) -> dict[str, Any]:
    """`_crawl_here(*job)` in a new Python process (a fresh interpreter: it never imports the
    caller's main module, so a script without a main guard is safe); its summary."""
    import json
    import pickle
    import subprocess
    import sys

    arguments, result = scratch / "job.pickle", scratch / "result.json"
    arguments.write_bytes(pickle.dumps(job))
    command = [sys.executable, "-m", "newscrawl._api", str(arguments), str(result)]
    child = subprocess.Popen(command)
    try:
        child.wait()
    except KeyboardInterrupt:  # the child had the same Ctrl-C: let it stop cleanly first
        child.wait()
        raise
    try:
        answer = json.loads(result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise RuntimeError(f"the crawl process ended with status {child.returncode}") from None
    if "error" in answer:
        raise _RAISED.get(answer["kind"], RuntimeError)(answer["error"])
    summary: dict[str, Any] = answer["summary"]
    return summary


def _child_main(argv: list[str]) -> int:
    """The crawl child: the job from argv[0], its summary or error as JSON to argv[1]."""
    import json
    import pickle

    job = pickle.loads(Path(argv[0]).read_bytes())
    try:
        answer: dict[str, Any] = {"summary": _crawl_here(*job)}
    except (ValueError, RuntimeError) as err:
        answer = {"kind": "ValueError" if isinstance(err, ValueError) else "", "error": str(err)}
    Path(argv[1]).write_text(json.dumps(answer, default=str), encoding="utf-8")
    return 0 if "summary" in answer else 1


def _crawl_here(
    sites: str, out: str, crawl_id: str | None, resume: bool, overrides: dict[str, Any]
) -> dict[str, Any]:
    """The crawl in this process (a child of `crawl`'s caller): its summary."""
    from newscrawl.crawl.checks import check_crawl_id, check_settings
    from newscrawl.crawl.crawl_process import crawl_settings, latest_unfinished, run_crawl
    from newscrawl.crawl.discovery.site_lists import read_sites
    from newscrawl.crawl.lock import take_run_lock
    from newscrawl.template.geometry import GeometryError, check_geometry

    read_sites(sites)
    check_settings(overrides)
    if crawl_id:
        check_crawl_id(crawl_id)
    lock = take_run_lock(out, "newscrawl.crawl")
    if isinstance(lock, int):
        raise RuntimeError(f"cannot crawl into {out}: another run holds its lock")
    with lock:
        if resume and not crawl_id:
            crawl_id = latest_unfinished(Path(out))
            if crawl_id is None:
                raise ValueError(f"nothing to resume in {out}")
        settings = crawl_settings(Path(out), crawl_id, overrides)
        try:  # before any fetch, as `newscrawl crawl` checks it
            check_geometry(settings.get("NEWSCRAWL_GEOMETRY"))
        except GeometryError as err:
            raise ValueError(str(err)) from None
        summary = run_crawl(sites, settings)
    if summary is None:
        raise RuntimeError("the crawl ended without a summary (see its log)")
    return summary


def read_articles(out: str | os.PathLike[str], *, dataset: str = "articles") -> pa.Table:
    """The articles a crawl wrote to `out` as one pyarrow Table (every crawl and site in the
    folder; `crawl` and `site` are columns). ``.to_pandas()`` or ``polars.from_arrow`` convert
    it. `dataset` reads another of the crawl's datasets instead: pages, nodes, versions or
    duplicates. Raises FileNotFoundError when `out` holds no such dataset."""
    from newscrawl.storage.datasets import open_parquet

    folder = Path(out) / dataset
    if not folder.is_dir():
        raise FileNotFoundError(f"no {dataset} dataset in {out} (no {folder} folder)")
    return open_parquet(folder).to_table()


if __name__ == "__main__":
    import sys

    sys.exit(_child_main(sys.argv[1:]))
