"""Crawl throughput on the demo web: pages/s and peak memory, with the site pass and without.

The demo web is served from this process on 127.0.0.x (with --copies K, K renamed copies of each
of its sites, for a bigger crawl); each variant is a real `newscrawl crawl` in a child process,
no politeness delays, writing Parquet to a temporary folder. Variants:

  site-pass     every stage: raw pages as they arrive; per complete site, the site pass
                (SiteLevel node records and labels, extraction with every configured
                extractor, article flag, the site's template out of the text) and its articles
  no-sitelevel  no site pass (NEWSCRAWL_SITELEVEL off): extraction and article flag page by
                page, in the worker processes of NEWSCRAWL_SITEPASS_WORKERS
  no-extraction fetch, parse (the spider needs links), write raw pages and bare article rows
  inline-parse  site-pass with the spider's parse on the reactor thread (NEWSCRAWL_PARSE_WORKERS
                0), as before the parse pool: the pool's before/after in one run
  no-sitelevel-inline  the same for no-sitelevel
  no-sitelevel-thread  no-sitelevel with extraction on the reactor thread
                (NEWSCRAWL_SITEPASS_WORKERS 0), as before extraction went to the workers
  thread-pass   site-pass with the site pass in a thread of the crawl process
                (NEWSCRAWL_SITEPASS_WORKERS 0), as before the site pass pool: its before/after
  whole-pass    site-pass with no site's pass split over the workers
                (NEWSCRAWL_SITEPASS_SPLIT_PAGES 0), as before the split: its before/after
  all-sites     site-pass with every site of the list crawled at once (NEWSCRAWL_MAX_ACTIVE_SITES
                0), as before that limit: its memory beside site-pass at --copies 32
  heavy-page    site-pass with one more site whose home page links to 9.9 MB of "<p>a"
                (2.5 million elements) and three small pages: the huge page is refused by the
                node budget; "other pages/s" counts the demo sites' pages only, to set beside
                site-pass
  docs-site     site-pass on one site of real-world page weight instead of the demo web: 200
                generated documentation pages of about 86 KB and 310 links each
                (`newscrawl.lab.synthetic_docsite`)
  docs-no-sitelevel, docs-no-extraction, docs-thread-pass, docs-whole-pass  the same site
                as no-sitelevel, no-extraction, thread-pass and whole-pass
  heavy-site    site-pass on one site of element-heavy pages instead of the demo web:
                --heavy-pages pages (default 200) of about 95,000 elements and 1.6 MB each
                (`newscrawl.lab.synthetic_heavysite`); its figure to read is the process tree's peak
                beside the page count

pages/s is HTML pages written per second of crawl (spider open to close); peak memory is the
crawl process's maximum resident set, worker MB the largest of its parse-pool workers', pass
MB the largest of its site pass workers' (0: the site pass ran in a thread), tree MB the
largest sum of the resident sets of the crawl process and all its children at one moment
(sampled every 0.1 s). With
--repeat K the variants run round by round (each once a round) and medians are reported.
With --site DIR a real static site (a folder, e.g. a Debian -doc package's HTML) is crawled
instead, beside a plain Scrapy spider in the same run (newscrawl/lab/_real_site.py); --startup
measures a crawl's first seconds on a one-page site instead. Both take --repeat and --against.
With --against DIR each variant is also crawled by the newscrawl checkout in DIR (an earlier
commit: `git worktree add DIR COMMIT`) in the same rounds, labelled "(against)", and the
ratio of this tree's pages/s to that tree's is printed: a before/after measured in one run.
Memory over crawl sizes: the same command with --copies 4, 16, 32. The demo server runs in
this process and shares the machine's cores with the crawl, so the figures are a floor for what
a real network allows.
"""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from newscrawl.lab._bench_args import name_list, positive_int

__all__ = ["HELP", "add_arguments", "run"]

HELP = "crawl pages/s and peak memory on the demo web, with the site pass and without"

_NO_EXTRACTION = {
    "newscrawl.pipelines.rawpages.RawPagePipeline": 400,
    "newscrawl.pipelines.parquet.ParquetWriterPipeline": 500,
}
_NO_SITELEVEL = {"NEWSCRAWL_SITELEVEL": False}
VARIANTS: dict[str, dict[str, Any]] = {
    "site-pass": {},
    "no-sitelevel": _NO_SITELEVEL,
    "no-extraction": {"ITEM_PIPELINES": _NO_EXTRACTION},
    "inline-parse": {"NEWSCRAWL_PARSE_WORKERS": 0},
    "thread-pass": {"NEWSCRAWL_SITEPASS_WORKERS": 0},
    "no-sitelevel-inline": {**_NO_SITELEVEL, "NEWSCRAWL_PARSE_WORKERS": 0},
    "no-sitelevel-thread": {**_NO_SITELEVEL, "NEWSCRAWL_SITEPASS_WORKERS": 0},
    "all-sites": {"NEWSCRAWL_MAX_ACTIVE_SITES": 0},
    "heavy-page": {},
    "docs-site": {},
    "docs-no-sitelevel": _NO_SITELEVEL,
    "docs-no-extraction": {"ITEM_PIPELINES": _NO_EXTRACTION},
    "docs-thread-pass": {"NEWSCRAWL_SITEPASS_WORKERS": 0},
    "whole-pass": {"NEWSCRAWL_SITEPASS_SPLIT_PAGES": 0},
    "docs-whole-pass": {"NEWSCRAWL_SITEPASS_SPLIT_PAGES": 0},
    "heavy-site": {},
}
_DOCS_VARIANTS = (
    "docs-site",
    "docs-no-sitelevel",
    "docs-no-extraction",
    "docs-thread-pass",
    "docs-whole-pass",
)
# (variant, its baseline, what the ratio says), printed when both ran
_RATIOS = (
    ("site-pass", "inline-parse", "parse pool / inline parse"),
    ("no-sitelevel", "no-sitelevel-inline", "parse pool / inline parse"),
    ("site-pass", "thread-pass", "site pass in processes / in a thread"),
    ("no-sitelevel", "no-sitelevel-thread", "extraction in processes / on the reactor thread"),
    ("docs-site", "docs-thread-pass", "site pass in processes / in a thread"),
    ("site-pass", "whole-pass", "site passes split when alone / never split"),
    ("docs-site", "docs-whole-pass", "site pass split over the workers / whole"),
    ("site-pass", "no-extraction", "every stage / no extraction"),
    ("docs-site", "docs-no-extraction", "every stage / no extraction"),
)
DEFAULT_VARIANTS = ("site-pass", "no-sitelevel", "no-extraction")
HEAVY_SITE = "heavy"
_BEFORE = " (against)"  # label suffix of a variant crawled by the --against checkout


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-r",
        "--repeat",
        type=positive_int,
        default=1,
        metavar="K",
        help="rounds of crawls, each variant once a round; medians reported (default: 1)",
    )
    parser.add_argument(
        "--copies",
        type=positive_int,
        default=4,
        metavar="K",
        help="copies of each demo site to serve (default: 4, ~940 pages)",
    )
    parser.add_argument(
        "--variants",
        type=name_list(VARIANTS),
        default=",".join(DEFAULT_VARIANTS),
        metavar="A,B",
        help=f"variants to run, of {', '.join(VARIANTS)} (default: {','.join(DEFAULT_VARIANTS)})",
    )
    parser.add_argument(
        "--against",
        type=_checkout,
        metavar="DIR",
        help="a checkout of an earlier newscrawl (e.g. `git worktree add DIR COMMIT`): each "
        "variant (with --site and --startup too: each newscrawl crawl) is also crawled with "
        "that code, in the same rounds, and the ratio printed",
    )
    parser.add_argument(
        "--site",
        type=_folder,
        metavar="DIR",
        help="crawl this real static site instead (a folder served by python -m http.server on "
        "127.0.0.1): plain-scrapy, no-extraction and every-stage, and their ratios",
    )
    parser.add_argument(
        "--start",
        default="index.html",
        metavar="PATH",
        help="with --site: the page the crawls start from, a path in DIR (default: index.html)",
    )
    parser.add_argument(
        "--cap",
        type=positive_int,
        default=200,
        metavar="N",
        help="with --site: pages per crawl (default: 200)",
    )
    parser.add_argument(
        "--heavy-pages",
        type=positive_int,
        default=200,
        metavar="N",
        help="pages of the heavy-site variant's site (default: 200)",
    )
    parser.add_argument(
        "--startup",
        action="store_true",
        help="measure a crawl's first seconds instead: per kind of process (crawl, parse "
        "worker, site pass worker), wall and CPU seconds and what its imports take "
        "(python -X importtime), on a one-page site",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


def _folder(value: str) -> Path:
    """An argparse type: an existing folder."""
    if not Path(value).is_dir():
        raise argparse.ArgumentTypeError(f"{value}: not a folder")
    return Path(value)


def _checkout(value: str) -> str:
    """An argparse type: a folder holding a newscrawl checkout. Checked before anything runs:
    without its code on the path the installed newscrawl would crawl instead, unnoticed."""
    if not (Path(value) / "newscrawl" / "cli.py").is_file():
        raise argparse.ArgumentTypeError(f"{value}: not a newscrawl checkout")
    return value


def _web(copies: int) -> Any:
    from newscrawl.demo.web import DemoWeb, build_demo_web

    web = build_demo_web()
    if copies <= 1:
        return web
    sites = [
        dataclasses.replace(site, name=f"{site.name}-{k}")
        for k in range(1, copies + 1)
        for site in web.sites
    ]
    return DemoWeb(sites, web.seed)


def _crawl(
    sites: Path, out: Path, overrides: dict[str, Any], tree: str | None = None
) -> dict[str, Any]:
    """One `newscrawl crawl` in a child process; with `tree`, the newscrawl checkout there
    crawls instead of this one, all of it (`_import_root`)."""
    from newscrawl.crawl.crawl_process import crawl_command

    settings = [
        f"{name}={json.dumps(value) if isinstance(value, dict | list) else value}"
        for name, value in overrides.items()
    ]
    command = crawl_command(sites, out, settings, ("--fast-local", "--log-level", "WARNING"))
    root = str(_import_root(tree)) if tree else None
    env = {**os.environ, "PYTHONPATH": root} if root else None
    with tempfile.TemporaryFile("w+") as errors:
        child = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=errors, text=True, env=env, cwd=root
        )
        peak = tree_peak_mb(child)
        errors.seek(0)
        stderr = errors.read()
    summaries = sorted(out.glob(".newscrawl/*/summary.json"))
    if child.returncode != 0 or not summaries:
        raise RuntimeError(f"crawl failed ({child.returncode}): {stderr[-2000:]}")
    return {**json.loads(summaries[-1].read_text()), "tree_peak_mb": peak}


def tree_peak_mb(child: subprocess.Popen[str], every: float = 0.1) -> float:
    """Wait for `child`; the largest sum of the resident sets of it and all its descendants
    seen at one moment (sampled every `every` seconds), in MB."""
    import psutil

    peak = 0
    try:
        process = psutil.Process(child.pid)
    except psutil.NoSuchProcess:
        child.wait()
        return 0.0
    while child.poll() is None:
        total = 0
        try:
            members = [process, *process.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for member in members:
            try:
                total += member.memory_info().rss
            except psutil.NoSuchProcess:  # ended between the listing and the reading
                continue
        peak = max(peak, total)
        try:
            child.wait(every)
        except subprocess.TimeoutExpired:
            continue
    child.wait()
    return peak / (1 << 20)


def _import_root(tree: str) -> Path:
    """The checkout in `tree` as a folder to crawl from (first on the import path, and the
    working directory) so that all of `newscrawl` comes from it: its newscrawl/, and its
    pipelines/ and models/ as newscrawl.pipelines and newscrawl.models. The install maps those
    two (pyproject's package-dir) to this tree's folders, so PYTHONPATH=tree alone ran the
    other checkout's crawl with this tree's item pipelines. Made once a run, of links: the
    checkout's top-level entries, and a newscrawl/ package of links holding the two."""
    root = _IMPORT_ROOTS.get(tree)
    if root is None:
        root = Path(tempfile.mkdtemp(prefix="newscrawl-against-"))
        for entry in Path(tree).iterdir():
            if entry.name != "newscrawl":
                (root / entry.name).symlink_to(entry)
        package = root / "newscrawl"
        package.mkdir()
        for entry in (Path(tree) / "newscrawl").iterdir():
            (package / entry.name).symlink_to(entry)
        for folder in ("pipelines", "models"):
            source = Path(tree) / folder
            if source.is_dir() and not (package / folder).exists():
                (package / folder).symlink_to(source)
        _IMPORT_ROOTS[tree] = root
        atexit.register(shutil.rmtree, root, True)
    return root


_IMPORT_ROOTS: dict[str, Path] = {}


def _heavy_body(path: str) -> bytes | None:
    """The heavy site: four pages, one of them 9.9 MB of "<p>a"."""
    from newscrawl.demo.faults import many_nodes_page

    if path == "/":
        links = "".join(f'<a href="/page-{n}.html">page {n}</a> ' for n in range(1, 4))
        return f'<html><body><a href="/huge.html">huge</a> {links}</body></html>'.encode()
    if path == "/huge.html":
        return many_nodes_page()
    if path.startswith("/page-"):
        return (
            b"<html><body><article><p>" + b"A small page. " * 50 + b"</p></article></body></html>"
        )
    return None


def _row(runs: list[dict[str, Any]]) -> dict[str, float]:
    """A variant's figures: medians of its crawls (peak memory: the largest)."""
    other = [
        (r["pages"] - r.get("sites", {}).get(HEAVY_SITE, {}).get("pages", 0)) / r["elapsed_s"]
        for r in runs
    ]
    return {
        "pages": statistics.median(r["pages"] for r in runs),
        "seconds": statistics.median(r["elapsed_s"] for r in runs),
        "pages_per_s": statistics.median(r["pages_per_s"] for r in runs),
        "other_pages_per_s": statistics.median(other),
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
        "workers_mb": max(r.get("peak_rss_workers_mb", 0) for r in runs),
        "sitepass_mb": max(r.get("peak_rss_sitepass_mb", 0) for r in runs),
        "refused_nodes": max(r.get("errors", {}).get("too_many_nodes", 0) for r in runs),
        "tree_mb": max(r.get("tree_peak_mb", 0) for r in runs),
    }


def run(args: argparse.Namespace) -> int:
    if args.startup:
        return _run_startup(args)
    if args.site is not None:
        return _run_real_site(args)
    from newscrawl.demo.server import DemoServer, serve_pages
    from newscrawl.lab.synthetic_docsite import DOCS_PAGES, DOCS_SITE, docs_site
    from newscrawl.lab.synthetic_heavysite import HEAVY_SITE_NAME, heavy_site

    names: list[str] = args.variants  # known and at least one: checked by the parser
    web = _web(args.copies)
    hosts = [f"127.0.0.{n}" for n in range(1, len(web.sites) + 4)]
    results: dict[str, dict[str, float]] = {}
    with (
        DemoServer(web, port=0, hosts=hosts[:-3]) as server,
        serve_pages(hosts[-3], _heavy_body) as heavy,
        docs_site(hosts[-2]) as docs,
        heavy_site(hosts[-1], args.heavy_pages) as heavy_start,
        tempfile.TemporaryDirectory() as tmp,
    ):
        sites = server.write_site_list(Path(tmp) / "sites.csv")
        with_heavy = Path(tmp) / "sites-heavy.csv"
        with_heavy.write_text(sites.read_text() + f"{heavy},{HEAVY_SITE},\n")
        docs_only = Path(tmp) / "sites-docs.csv"
        docs_only.write_text(f"url,name,max_pages\n{docs},{DOCS_SITE},{DOCS_PAGES}\n")
        heavy_only = Path(tmp) / "sites-heavy-site.csv"
        cap = args.heavy_pages + 1  # its pages and its home page
        heavy_only.write_text(f"url,name,max_pages\n{heavy_start},{HEAVY_SITE_NAME},{cap}\n")
        lists = {
            "heavy-page": with_heavy,
            "heavy-site": heavy_only,
            **dict.fromkeys(_DOCS_VARIANTS, docs_only),
        }
        # label -> (variant, checkout that crawls it: None for this one)
        trees: dict[str, tuple[str, str | None]] = {name: (name, None) for name in names}
        if args.against:
            against = str(Path(args.against).resolve())  # the crawl starts in that folder
            trees.update({f"{name}{_BEFORE}": (name, against) for name in names})
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label in trees}
        for i in range(args.repeat):  # round by round, so a change in load hits every variant
            for label, (name, tree) in trees.items():
                listed = lists.get(name, sites)
                out = Path(tmp) / f"{name}-{i}{'-before' if tree else ''}"
                try:
                    runs[label].append(_crawl(listed, out, VARIANTS[name], tree))
                except RuntimeError as err:
                    print(f"bench crawl: {label}: {err}", file=sys.stderr)
                    return 1
                print(f"{label} #{i + 1}: {_row(runs[label][-1:])}", file=sys.stderr)
        results = {label: _row(runs[label]) for label in trees}
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"demo web x{args.copies}: {len(web.sites)} sites; median of {args.repeat} crawl(s)")
    if "heavy-site" in results:
        heavy_row = results["heavy-site"]
        print(
            f"heavy site: {heavy_row['pages']:.0f} pages of ~95k elements written,"
            f" process tree peak {heavy_row['tree_mb']:.0f} MB"
        )
    width = max([19, *map(len, results)])
    print(f"{'variant':<{width}} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'peak MB':>8}", end="")
    print(f" {'worker MB':>9} {'pass MB':>8} {'tree MB':>8}", end="")
    print(f" {'other pages/s':>14} {'refused':>8}" if "heavy-page" in results else "")
    for name, row in results.items():
        print(
            f"{name:<{width}} {row['pages']:>6.0f} {row['seconds']:>8.1f}"
            f" {row['pages_per_s']:>8.1f}"
            f" {row['peak_rss_mb']:>8.0f} {row['workers_mb']:>9.0f} {row['sitepass_mb']:>8.0f}"
            f" {row['tree_mb']:>8.0f}",
            end="",
        )
        extra = f" {row['other_pages_per_s']:>14.1f} {row['refused_nodes']:>8.0f}"
        print(extra if "heavy-page" in results else "")
    _ratios(results)
    return 0


def _ratios(results: dict[str, dict[str, float]]) -> None:
    """The ratios to quote: the parse pool against the inline parse, the site pass in
    processes against in a thread, the demo sites' pace beside a huge page against without
    it."""
    for name, row in results.items():
        if f"{name}{_BEFORE}" in results:
            ratio = row["pages_per_s"] / results[f"{name}{_BEFORE}"]["pages_per_s"]
            print(f"this tree / --against tree ({name} pages/s): {ratio:.2f}")
    for pool, before, what in _RATIOS:
        if pool in results and before in results:
            ratio = results[pool]["pages_per_s"] / results[before]["pages_per_s"]
            print(f"{what} ({pool} pages/s): {ratio:.2f}")
    base = results.get("site-pass")
    if base is None:
        return
    if "heavy-page" in results:
        ratio = results["heavy-page"]["other_pages_per_s"] / base["pages_per_s"]
        print(f"demo sites' pages/s beside the 9.9 MB page / without it: {ratio:.2f}")


def _run_real_site(args: argparse.Namespace) -> int:
    from newscrawl.lab._real_site import REAL_VARIANTS, crawl_real_site, print_real_site

    if not (args.site / args.start).is_file():
        print(f"bench crawl: {args.site / args.start}: no such page", file=sys.stderr)
        return 2
    try:
        against = _import_root(args.against) if args.against else None
        names = list(REAL_VARIANTS)
        results = crawl_real_site(args.site, args.start, args.cap, args.repeat, names, against)
    except RuntimeError as err:
        print(f"bench crawl: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print_real_site(args.site, args.cap, args.repeat, results)
    return 0


def _run_startup(args: argparse.Namespace) -> int:
    from newscrawl.lab._real_site import measure_startup, print_startup

    try:
        against = _import_root(args.against) if args.against else None
        rows = measure_startup(against, args.repeat)
    except RuntimeError as err:
        print(f"bench crawl: {err}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print_startup(rows, args.repeat)
    return 0
