"""Extract the title and main text of saved pages.

Each PATH is a page file, a directory, an http(s) URL, or - for standard input. A URL is
fetched first, with the crawl's guards: non-public addresses (loopback, private networks) are
refused unless --allow-private allows them, redirects are checked hop by hop, and a body over
the crawl's size limit or not HTML is refused (`newscrawl.crawl.fetch`). A directory is searched
recursively for *.html and *.htm files; a directory holding none of those is taken to hold only
pages, and all its (non-hidden) files are read. Pages are extracted by the site pass's worker
processes (`newscrawl.site.site_pool.SitePassPool`, the crawl's) when there are more than a few
(see --jobs); the output keeps the order of the input and streams as pages are done. A page that
cannot be extracted (binary, empty, ...) is reported on stderr as one line (and as an object with
an "error" key in jsonl output); the exit status is non-zero only when a PATH does not exist, no
page at all could be extracted, or a worker process died (said on stderr; the pages after those
written are not extracted).

Pages are grouped into sites (--site-from; default url), and the site reaches the extractors, so
the template filter (--model) learns each site's own template even from pages saved without their
URL. All pages of one site are extracted by one worker, in input order, so the output is the same
for every --jobs. With a page-level extractor, a site of at least five pages goes through the
crawl's site pass (`newscrawl.site.slot_cut`): its pages are extracted, then the site's
template is cut out of each page's text - what a crawl writes for the same pages (--no-site-pass:
page by page). An input of one site of at least SPLIT_PAGES pages has its pass split over the
jobs instead (`split_site_records`), with the same records. A meta.jsonl beside the pages, or
above a folder named html (the layout of `newscrawl evaluate` datasets), gives each page (by
file stem) its url and, with --site-from meta, its site.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import logging
import os
import sys
from collections.abc import Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import TYPE_CHECKING, Any

from newscrawl.commands.cli_options import (
    add_allow_private_argument,
    add_extractor_model_argument,
    extractor_model_error,
    positive_int,
)
from newscrawl.crawl.fetch import is_page_url
from newscrawl.evaluation.site_groups import (
    HEAD_BYTES,
    SITE_FROM,
    SiteError,
    in_order,
    keeps_site_state,
    site_for,
    site_tasks,
)
from newscrawl.extractors import (
    DEFAULT_EXTRACTOR,
    EXTRACTORS,
    TEMPLATE,
    Extractor,
    build_extractor,
)
from newscrawl.extractors.markdown import MarkdownOptions
from newscrawl.gold.dataset import read_meta
from newscrawl.gold.pagefiles import STDIN, find_pages, not_found_reason
from newscrawl.site.saved_pages import (
    PLAIN,
    Item,
    RecordFields,
    extract_page,
    pass_records,
    raw_pages,
    read_stdin,
    site_pass_records,
    site_records,
)
from newscrawl.site.site_context import site_methods
from newscrawl.site.site_split import joined, page_runs, parts_context, template_pages
from newscrawl.site.slot_cut import SitePassConfig, finish_site_pass
from newscrawl.template.sitelevel import RawPage, SiteLevelRun, site_order
from newscrawl.template.sitemethods import SITE_METHODS

if TYPE_CHECKING:  # the worker pool is imported when it is used: -j 1 does without it
    from newscrawl.site.saved_jobs import SavedSettings
    from newscrawl.site.site_pool import SitePassPool

__all__ = [
    "HELP",
    "Item",
    "add_arguments",
    "extract_all",
    "extract_page",
    "page_items",
    "run",
]

HELP = "extract title and main text from saved pages"
# Below this many pages a process pool costs more to start than it saves.
POOL_THRESHOLD = 8
# One site of at least this many pages has its site pass split over --jobs processes.
SPLIT_PAGES = 48
WORKER_DIED = (
    "a worker process died (killed, out of memory?): the pages after those written were not "
    "extracted"
)

META_FILE = "meta.jsonl"
FORMATS = ("text", "markdown", "jsonl", "json")
DEFAULT_SITE_FROM = "url"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="page file, directory, http(s) URL, or -"
    )
    parser.add_argument(
        "-e",
        "--extractor",
        default=DEFAULT_EXTRACTOR,
        choices=sorted([*EXTRACTORS, TEMPLATE]),
        metavar="NAME",
        help=f"extractor: {', '.join(sorted(EXTRACTORS))}, or {TEMPLATE} (the template filter "
        f"alone, needs --model) (default: {DEFAULT_EXTRACTOR})",
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="template model file (from `newscrawl train`): cut the site template out of each "
        "page, then run the extractor on what is left",
    )
    add_extractor_model_argument(parser)
    parser.add_argument(
        "-f",
        "--format",
        default="text",
        choices=FORMATS,
        help="text: title, blank line, text per page, with a '==> PATH <==' line before each "
        "page when there are several; markdown: the Markdown of the same text (headings, "
        "lists, tables, code, quotes), with the same '==>' lines; jsonl: one JSON object per "
        "page with path, title, text, extractor (and error for a page that failed); json: one "
        "JSON object per page (a line each) with path, url, title, text, markdown, comments, "
        "date, author, language, page_type, extractor (and error)",
    )
    parser.add_argument(
        "--links",
        action="store_true",
        help="markdown and json: write links as [text](href) (default: their text only)",
    )
    parser.add_argument(
        "--images",
        action="store_true",
        help="markdown and json: write the images among the text as ![alt](src) (default: none)",
    )
    parser.add_argument(
        "-j",
        "--jobs",
        type=positive_int,
        default=None,
        metavar="N",
        help=f"worker processes (default: one per CPU for more than {POOL_THRESHOLD} pages, "
        "else 1); all pages of a site go to one worker, the output is the same for every N",
    )
    parser.add_argument(
        "--site-from",
        default=DEFAULT_SITE_FROM,
        choices=SITE_FROM,
        help="how pages group into sites (the template filter learns each site's template): "
        "url: host of the page's URL (meta.jsonl url, og:url or canonical link); dir: the "
        "page's folder (its path: a/2024 and b/2024 are two); meta: meta.jsonl 'site' (falls "
        "back to url); none: no sites "
        f"(default: {DEFAULT_SITE_FROM})",
    )
    parser.add_argument(
        "--no-site-pass",
        dest="site_pass",
        action="store_false",
        help="extract every page on its own (default: a site of at least five pages goes "
        "through the crawl's site pass: its template is cut out of each page's text)",
    )
    parser.add_argument(
        "--site-method",
        default="sitelevel",
        choices=SITE_METHODS,
        help="how each site's own template nodes are learnt: SiteLevel hashes, Site Style "
        "Tree, pagelets or block entropy; the template filter (--model) cuts them, the site "
        "pass only with cut_sitelevel on (default: %(default)s)",
    )
    add_allow_private_argument(parser)


# -- extracting -----------------------------------------------------------------------------------


def _splittable(
    extractor: Extractor,
    items: list[Item],
    tasks: list[list[int]],
    jobs: int,
    fields: RecordFields = PLAIN,
) -> bool:
    """Whether the input is one large site whose pass may be split over the jobs: the site's
    template, if the extractor reads one, by SiteLevel's hashes (what the parts compute), and
    no page metadata asked for (the parts return only what the slot decisions read)."""
    if (
        fields.metadata
        or fields.comments
        or jobs <= 1
        or len(tasks) != 1
        or len(tasks[0]) < SPLIT_PAGES
        or not items[tasks[0][0]].site
    ):
        return False
    return site_methods([extractor]) <= {"sitelevel"}


def split_site_records(
    extractor: Extractor,
    items: list[tuple[int, Item]],
    jobs: int,
    settings: SavedSettings,
) -> list[tuple[int, dict[str, Any]]]:
    """`site_pass_records` of one site with its work split over `jobs` processes, the same
    records: the split of the crawl's site pass (`newscrawl.site.site_split`), its parts
    run by the site pass's workers (`SitePassPool`) built from `settings`."""
    from newscrawl.site.saved_jobs import SavedHashPart, SavedPassPart
    from newscrawl.site.site_pool import SitePassPool

    fields = settings.fields
    readable = list(raw_pages(items))
    if len(readable) < SitePassConfig().min_pages:
        return site_pass_records(extractor, items, fields=fields)
    raws = [raw for _, raw in readable]
    site = items[0][1].site
    ordered = site_order(raws)
    pool = SitePassPool(jobs, settings)
    try:
        context = None
        if site_methods([extractor]):
            learnt = page_runs(template_pages(raws), jobs, _bytes)
            hashed = pool.all_of(SavedHashPart(site, part) for part in learnt)
            context = parts_context(result.hashes for result in hashed)
        runs = page_runs(ordered, jobs, _bytes)
        parts = pool.all_of(SavedPassPart(site, part, context) for part in runs)
    finally:
        pool.close()  # stopped already when a part failed
    found = (choice for part in parts for choice in part.choices)
    seen, choices, errors = joined(ordered, found)
    by_raw = {id(raw): index for index, raw in readable}
    run_pass = finish_site_pass(SiteLevelRun(site, errors=errors), seen, choices)
    return pass_records(extractor, items, run_pass, by_raw, fields)


def _bytes(raw: RawPage) -> int:
    return len(raw.html)


def default_jobs(pages: int) -> int:
    if pages <= POOL_THRESHOLD:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, pages))


def extract_all(
    items: list[Item],
    extractor: Extractor,
    name: str,
    model_path: str | None,
    jobs: int,
    site_pass: bool = False,
    site_method: str = "sitelevel",
    fields: RecordFields = PLAIN,
) -> Iterator[dict[str, Any]]:
    """Records in input order. Pages are extracted site by site (`site_tasks`): in this process
    with jobs <= 1, else by the site pass's workers (`SitePassPool`), each of which builds the
    extractor (`name`, `model_path`) and takes whole sites. `site_pass`: each site's pages go
    through the site pass (`site_pass_records`), which learns the site's template by
    `site_method`. `fields`: what records hold beside the text."""
    grouped = site_pass or keeps_site_state([extractor])
    tasks = site_tasks([item.site if grouped else "" for item in items], jobs)
    if site_pass and _splittable(extractor, items, tasks, jobs, fields):
        pages = [(index, items[index]) for index in tasks[0]]
        settings = _saved_settings(name, model_path, site_method, fields)
        split = split_site_records(extractor, pages, jobs, settings)
        yield from in_order(split, len(items))
        return
    if jobs <= 1 or len(tasks) <= 1:
        pairs = (
            pair
            for task in tasks
            for pair in site_records(
                extractor, [(i, items[i]) for i in task], site_pass, site_method, fields
            )
        )
        yield from in_order(pairs, len(items))
        return
    from newscrawl.site.site_pool import SitePassPool

    settings = _saved_settings(name, model_path, site_method, fields)
    yield from _pooled(tasks, items, site_pass, SitePassPool(min(jobs, len(tasks)), settings))


def _saved_settings(
    name: str, model_path: str | None, site_method: str, fields: RecordFields
) -> SavedSettings:
    """What the workers build: the extractor, and this process's log level."""
    from newscrawl.site.saved_jobs import SavedSettings

    level = logging.getLogger().getEffectiveLevel()
    return SavedSettings.of(name, model_path, site_method, fields, level)


def _pooled(
    tasks: list[list[int]], items: list[Item], site_pass: bool, pool: SitePassPool
) -> Iterator[dict[str, Any]]:
    """The records of the tasks' pages in input order, each task a job of `pool`; its workers
    are ended at once when the records are not all taken (an error, Ctrl-C)."""
    from newscrawl.site.saved_jobs import SavedSiteJob

    jobs = (SavedSiteJob(tuple((i, items[i]) for i in task), site_pass) for task in tasks)
    finished = False
    try:
        pairs = (pair for result in pool.each(jobs) for pair in result.records)
        yield from in_order(pairs, len(items))
        finished = True
    finally:
        if finished:
            pool.close()
        else:
            pool.stop()


# -- sites ----------------------------------------------------------------------------------------


class _MetaFiles:
    """meta.jsonl objects of page files: beside the page, or above a folder named html."""

    def __init__(self) -> None:
        self._by_folder: dict[Path, dict[str, dict[str, Any]] | None] = {}
        self.found = False  # some page has a meta.jsonl

    def _folder_meta(self, folder: Path) -> dict[str, dict[str, Any]] | None:
        if folder not in self._by_folder:
            meta = None
            for candidate in (folder, folder.parent if folder.name == "html" else None):
                if candidate is not None and (candidate / META_FILE).is_file():
                    meta, _ = read_meta(candidate / META_FILE)
                    break
            self._by_folder[folder] = meta
        return self._by_folder[folder]

    def of(self, path: Path) -> dict[str, Any] | None:
        """The page's meta object ({} when its meta.jsonl has no line for it); None: no file."""
        meta = self._folder_meta(path.parent)
        if meta is None:
            return None
        self.found = True
        return meta.get(path.stem, {})


def _read_head(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read(HEAD_BYTES)


def _site_folder(path: Path) -> Path:
    """The folder `--site-from dir` groups a page (an absolute path) by: its parent, but a
    dataset's (NAME/html/ID.html) when the parent is named html, as `evaluate` groups it."""
    parent = path.parent
    return parent.parent if parent.name == "html" and parent.parent.name else parent


def _folder_names(paths: list[Path]) -> dict[Path, str]:
    """A site name for each of the pages' folders (`_site_folder`): its path below the
    folders' common folder, so site1/2024/ and site2/2024/ are two sites; a folder's own name
    when it is the only one."""
    folders = {_site_folder(path) for path in paths}
    if not folders:
        return {}
    common = Path(os.path.commonpath([str(f) for f in folders]))
    return {f: f.name if f == common else str(f.relative_to(common)) for f in folders}


def page_items(paths: list[str], site_from: str, stdin: bytes | None = None) -> list[Item]:
    """The inputs with their meta url and site under `site_from`.

    Raises `SiteError` when `site_from` is "meta" and no page has a meta.jsonl.
    """
    metas = _MetaFiles()
    items = []
    names = _folder_names([Path(os.path.abspath(p)) for p in paths if p != STDIN])
    for label in paths:
        if label == STDIN:
            data = stdin if stdin is not None else b""
            site = site_for(site_from, head=functools.partial(bytes, data))
            items.append(Item(label, data, None, site))
            continue
        path = Path(os.path.abspath(label))
        meta = metas.of(path) or {}
        url, content_type = meta.get("url"), meta.get("content_type")
        site = site_for(
            site_from,
            meta=meta,
            folder=names[_site_folder(path)],
            head=functools.partial(_read_head, label),
        )
        url = url if isinstance(url, str) and url else None
        content_type = content_type if isinstance(content_type, str) and content_type else None
        items.append(Item(label, None, url, site, content_type))
    if site_from == "meta" and not metas.found:
        raise SiteError(
            f"--site-from meta: no {META_FILE} beside the pages (looked in each page's folder, "
            f"and above a folder named html); use --site-from url, dir or none"
        )
    return items


def url_items(urls: list[str], site_from: str, allow_private: str | None) -> list[Item]:
    """The pages the URLs lead to (`newscrawl.crawl.fetch`), labelled by URL; a URL that cannot be
    fetched is said on stderr and left out."""
    from newscrawl.crawl.fetch import FetchError, fetch_page

    items = []
    for url in urls:
        try:
            page = fetch_page(url, allow_private=allow_private or False)
        except FetchError as err:
            print(f"newscrawl extract: {url}: {err}", file=sys.stderr)
            continue
        mode = "url" if site_from == "dir" else site_from  # a URL has no folder
        site = site_for(mode, meta={"url": page.final_url})
        items.append(Item(url, page.body, page.final_url, site, page.content_type or None))
    return items


def in_argument_order(
    args: list[str], counts: list[int], files: list[Item], fetched: list[Item]
) -> list[Item]:
    """The pages in the order of the arguments: `counts` pages of `files` for each argument
    that is not a URL, in turn, and each fetched URL's page where the URL was given."""
    if not fetched:
        return files
    by_url = {item.label: item for item in fetched}
    rest = iter(files)
    sizes = iter(counts)
    ordered: list[Item] = []
    for arg in args:
        if not is_page_url(arg):
            ordered += itertools.islice(rest, next(sizes, 0))
        elif arg in by_url:
            ordered.append(by_url[arg])
    return ordered


# -- output ---------------------------------------------------------------------------------------


def _write_text(record: dict[str, Any], header: bool, first: bool) -> None:
    out = sys.stdout
    if not first:
        out.write("\n")
    if header:
        out.write(f"==> {shown_path(record['path'])} <==\n")
    out.write(f"{record['title']}\n\n{record['text']}\n")


def _write_markdown(record: dict[str, Any], header: bool, first: bool) -> None:
    out = sys.stdout
    if not first:
        out.write("\n")
    if header:
        out.write(f"==> {shown_path(record['path'])} <==\n")
    out.write(f"{record.get('markdown', '')}\n")


def record_fields(output: str, links: bool = False, images: bool = False) -> RecordFields:
    """What the records of an output format hold beside the text."""
    markdown = MarkdownOptions(links, images) if output in ("markdown", "json") else None
    return RecordFields(markdown, metadata=output == "json")


_JSON_KEYS = (
    "path", "url", "title", "text", "markdown", "comments", "date", "author", "language",
    "page_type", "extractor",
)  # fmt: skip


def _write_json(record: dict[str, Any]) -> None:
    ordered = {key: record.get(key) for key in _JSON_KEYS}
    if "error" in record:
        ordered["error"] = record["error"]
    sys.stdout.write(json.dumps(ordered, ensure_ascii=False) + "\n")


def shown_path(path: str) -> str:
    """`path` for a line of text output: control characters (a newline in a file name would
    break the `==> PATH <==` line) written as escapes; jsonl keeps the name as it is."""
    if path.isprintable():
        return path
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in path)


def _write_jsonl(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


def run(args: argparse.Namespace) -> int:
    model_path = getattr(args, "model", None)
    urls = [arg for arg in args.paths if is_page_url(arg)]
    found = [find_pages([arg]) for arg in args.paths if not is_page_url(arg)]
    paths = [path for pages, _ in found for path in pages]
    missing = [arg for _, absent in found for arg in absent]
    for arg in missing:
        print(f"newscrawl extract: {arg}: {not_found_reason(arg)}", file=sys.stderr)
    if not paths and not urls:
        if not missing:
            print("newscrawl extract: no pages found", file=sys.stderr)
        return 1
    try:
        if (problem := extractor_model_error(args)) is not None:
            raise ValueError(problem)
        site_method = getattr(args, "site_method", "sitelevel")
        extractor = build_extractor(args.extractor, model_path, site_method)
    except (ValueError, ImportError) as err:
        print(f"newscrawl extract: {err}", file=sys.stderr)
        return 2
    stdin = read_stdin() if STDIN in paths else None
    try:
        items = page_items(paths, getattr(args, "site_from", DEFAULT_SITE_FROM), stdin)
    except SiteError as err:
        print(f"newscrawl extract: {err}", file=sys.stderr)
        return 2
    fetched = url_items(urls, getattr(args, "site_from", DEFAULT_SITE_FROM), args.allow_private)
    missing += [url for url in urls if url not in {item.label for item in fetched}]
    items = in_argument_order(args.paths, [len(pages) for pages, _ in found], items, fetched)
    if not items:
        return 1
    jobs = args.jobs if args.jobs is not None else default_jobs(len(items))
    header = len(items) > 1
    site_pass = getattr(args, "site_pass", True) and model_path is None
    site_pass = site_pass and args.extractor != TEMPLATE
    fields = record_fields(
        args.format, getattr(args, "links", False), getattr(args, "images", False)
    )
    records = extract_all(
        items, extractor, args.extractor, model_path, jobs, site_pass, site_method, fields
    )
    try:
        done = _write_records(records, args, extractor, header)
    except BrokenProcessPool:
        sys.stdout.flush()
        print(f"newscrawl extract: {WORKER_DIED}", file=sys.stderr)
        return 1
    return 0 if done and not missing else 1


def _write_records(
    records: Iterator[dict[str, Any]], args: argparse.Namespace, extractor: Extractor, header: bool
) -> int:
    """Each record written as `args.format` asks, a page's error and a fallback said on
    stderr; how many pages were extracted."""
    done = 0
    for record in records:
        if "error" in record:
            print(f"newscrawl extract: {shown_path(record['path'])}: {record['error']}",
                  file=sys.stderr)  # fmt: skip
        elif record["extractor"] == getattr(extractor, "fallback", None) and args.format in (
            "text",
            "markdown",
        ):
            # jsonl says it in the record; plain text says it here, once per page
            fallback = f"text by {record['extractor']} (the {extractor.name} extractor fell back)"
            print(f"newscrawl extract: {shown_path(record['path'])}: {fallback}", file=sys.stderr)
        if args.format == "jsonl":
            _write_jsonl(record)
        elif args.format == "json":
            _write_json(record)
        elif "error" not in record and args.format == "markdown":
            _write_markdown(record, header, first=done == 0)
        elif "error" not in record:
            _write_text(record, header, first=done == 0)
        done += "error" not in record
    sys.stdout.flush()
    return done
