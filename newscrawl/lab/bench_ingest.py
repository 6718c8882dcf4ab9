"""Ingest speed and memory: `newscrawl ingest` against parse + extraction of the same pages.

Writes CC-NEWS-shaped WARCs of the demo web (warcinfo; request, response and metadata per
capture; revisits) into a temporary folder, then, each in a child process pinned to one core:

1. extraction only: every HTML page parsed as the ingest parses it and run through the crawl's
   extractors (NEWSCRAWL_EXTRACTORS: the default extractor, CETD-TPC where it finds nothing);
2. `newscrawl ingest` of the WARC with the site pass / SiteLevel off (reading, decoding, one
   parse, extraction, article flag, metadata, Parquet): the like-for-like figure;
3. `newscrawl ingest` with every pipeline of a crawl (SiteLevel and the site pass on);

The ratio of (2) to parse + extraction is given two ways:

- within the ingest: the ingest times its own parse (with the freeing of the tree) and
  extraction page by page (the summary's ``extract_seconds``), so their share of its time is
  the ingest's speed over parse + extraction measured at the same moments. The machine's speed
  drifts by 15-30% from one run to the next (other jobs on the same cores); measured this way
  the drift cancels, and the figure is steady to about 0.02 from run to run;
- across processes: (1) and (2) alternate `--repeat` times, each round's ratio comparing two
  runs made seconds apart; the median of the rounds and the fastest run of each side are given,
  as a check on the first figure, with the drift above as its error.

The demo web's pages are small (8 KB of HTML), so the ingest's work per page (a row in two
datasets, metadata, the article flag) weighs more against their parse and extraction than it
does on pages of ordinary size: `--heavy-pages` repeats the comparison on generated pages of
realistic size (85 KB, some 300 links). Last, the peak RSS of ingests over inputs of several
sizes, every pipeline on (--sizes, in MB of WARC: the same pages plus 1 MB filler responses -
images, and pages captured again, whose payloads are read and then skipped as repeats - so
memory can be seen not to grow with input).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from newscrawl.lab._bench_args import (
    make_folder,
    new_or_folder,
    nonnegative_int,
    positive_int,
    positive_ints,
)

HELP = "ingest records/s and pages/s beside extraction-only speed; peak memory by input size"

# The ingest's own parse (with the record's URL and Content-Type) and extractor chain (the
# NEWSCRAWL_EXTRACTORS of the settings, the primary first), so the two sides differ by what the
# ingest does around them.
_EXTRACT_ONLY = """
import gc, json, sys, time
from newscrawl import settings
from newscrawl.storage.warc_records import Record
from newscrawl.storage.warc_reader import read_archive
from newscrawl.scale.ingest_spider import wanted
from newscrawl.html.parse import parse_html
from newscrawl.extractors import DEFAULT_EXTRACTOR
from newscrawl.pipelines.extraction import load_extractors
pages = [(r.payload, r.head.url, r.head.header("content-type"))
         for r in read_archive(sys.argv[1], wanted, 10 << 20)
         if isinstance(r, Record) and r.payload is not None]
primary = settings.NEWSCRAWL_PRIMARY_EXTRACTOR or DEFAULT_EXTRACTOR
names = [primary, *(n for n in settings.NEWSCRAWL_EXTRACTORS if n != primary)]
extractors = load_extractors(names, {})
def run():
    for html, url, content_type in pages:
        dom = parse_html(html, url, content_type)
        for extractor in extractors.values():
            if extractor.extract(dom).text:
                break
run()  # warm-up
# as the ingest does before its first file: what lives as long as the process, out of the
# garbage collector's sight
gc.collect()
gc.freeze()
started = time.perf_counter(); run(); seconds = time.perf_counter() - started
print(json.dumps({"pages": len(pages), "seconds": seconds}))
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--copies", type=positive_int, default=4, help="copies of the demo web's sites (default: 4)"
    )
    parser.add_argument(
        "--sizes",
        type=positive_ints(allow_empty=True),
        default="64,512,2048",
        metavar="MB,...",
        help="WARC sizes for the memory runs, in MB; '' for none (default: 64,512,2048)",
    )
    parser.add_argument(
        "--repeat",
        type=positive_int,
        default=5,
        help="rounds of extraction only and of the like-for-like ingest, alternating; the "
        "median of the rounds' ratios is the figure (default: 5)",
    )
    parser.add_argument(
        "--heavy-pages",
        type=nonnegative_int,
        default=300,
        help="pages of realistic size for a second speed comparison (0: none; default: 300)",
    )
    parser.add_argument(
        "--keep", type=new_or_folder, default=None, help="keep the inputs in this folder"
    )


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises SystemExit while inside, as Ctrl-C raises KeyboardInterrupt: the `with`
    blocks unwind, so the temporary folder (GBs of WARCs) is removed and subprocess.run kills
    the child it waits for. Without it SIGTERM ends the process where it stands. Only in the
    main thread, the one place Python lets a handler be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _pinned() -> dict[str, Any]:
    """Child processes on one core (the last), where the OS allows it."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not cores:
        return {}
    core = cores[-1]
    return {"preexec_fn": lambda: os.sched_setaffinity(0, {core})}


def _ingest(warc: Path, out: Path, *settings: str) -> dict:
    summary = out.parent / f"{out.name}.json"
    command = [sys.executable, "-m", "newscrawl.cli", "ingest", str(warc), "--out", str(out)]
    command += ["--quiet", "--json", str(summary)]
    for setting in settings:
        command += ["--set", setting]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, **_pinned())
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    data = json.loads(summary.read_text())
    data["wall"] = time.perf_counter() - started
    return data


def _round_ratio(base: dict, flat: dict) -> float:
    """Ingest pages/s over extraction-only pages/s, of two runs of one round (the seconds of
    both over the same pages; 0 when either took no measurable time)."""
    if not flat["file_seconds"] or not base["seconds"] or flat["pages"] != base["pages"]:
        return 0.0
    return base["seconds"] / flat["file_seconds"]


def _inputs(folder: Path, copies: int, sizes: list[int]) -> tuple[Path, list[tuple[int, Path]]]:
    from newscrawl.lab.synthetic_warc import Capture, demo_captures, write_ccnews_warc

    pages = list(demo_captures(copies=copies))
    html = [c for c in pages if c.status == 200 and c.content_type.startswith("text/html")]
    speed = folder / "speed.warc.gz"
    write_ccnews_warc(speed, pages, revisit_every=10)
    memory = []
    filler = os.urandom(1 << 20)  # incompressible, like images
    for size in sizes:
        path = folder / f"size-{size}MB.warc.gz"
        count = max(0, size - speed.stat().st_size // (1 << 20))

        def captures(count: int = count) -> object:
            yield from pages
            for n in range(count):
                if n % 2:  # an image: counted and skipped, its payload never read
                    yield Capture(f"https://img.example/{n}.jpg", filler, "image/jpeg")
                else:  # a page captured again: its 1 MB payload read, then skipped as a repeat
                    yield Capture(html[n % len(html)].url, filler)

        write_ccnews_warc(path, captures())  # type: ignore[arg-type]
        memory.append((size, path))
    return speed, memory


def _speed(warc: Path, out: Path, repeat: int) -> tuple[dict, dict, list[float], list[float]]:
    """Extraction only and the like-for-like ingest of `warc`, alternating `repeat` times: the
    fastest run of each, the rounds' ratios across processes, and the ratios within each ingest
    (its own parse and extraction time over its whole time)."""
    bases, flats = [], []
    for n in range(repeat):
        extract = subprocess.run(
            [sys.executable, "-c", _EXTRACT_ONLY, str(warc)],
            capture_output=True,
            text=True,
            check=True,
            **_pinned(),
        )
        bases.append(json.loads(extract.stdout))
        flats.append(_ingest(warc, out / f"out-flat-{n}", "NEWSCRAWL_SITELEVEL=False"))
    rounds = [_round_ratio(b, f) for b, f in zip(bases, flats, strict=True)]
    within = [f["extract_seconds"] / f["file_seconds"] for f in flats if f["file_seconds"]]
    base = min(bases, key=lambda data: data["seconds"])
    flat = min(flats, key=lambda data: data["file_seconds"])
    return base, flat, rounds, within


def _ratio_lines(base: dict, flat: dict, rounds: list[float], within: list[float]) -> list[str]:
    fastest = _round_ratio(base, flat)
    within = within or [0.0]
    return [
        "ingest (site pass off) / parse + extraction (target >= 0.80):",
        f"  within the ingest's process, page by page: {statistics.median(within):.2f} "
        f"(median of {len(within)} ingests: {_listed(within)})",
        f"  against an extraction-only process run beside it: {statistics.median(rounds):.2f} "
        f"(median of {len(rounds)} rounds: {_listed(rounds)}; fastest against fastest: "
        f"{fastest:.2f})",
    ]


def _listed(values: list[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def _heavy_warc(folder: Path, pages: int) -> Path:
    """`pages` generated documentation pages of realistic size (about 85 KB and 300 links
    each, the pages of the crawl benchmark's docs-site) on three hosts."""
    from newscrawl.lab.synthetic_docsite import docs_page
    from newscrawl.lab.synthetic_warc import Capture, write_ccnews_warc

    path = folder / "heavy.warc.gz"
    hosts = 3
    captures = (
        Capture(f"https://docs-{n % hosts}.example/docs/page-{n // hosts}.html", docs_page(n))
        for n in range(pages)
    )
    write_ccnews_warc(path, captures)
    return path


def run(args: argparse.Namespace) -> int:
    with _sigterm_unwinds():
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    sizes: list[int] = args.sizes  # positive whole numbers: checked by the parser
    with tempfile.TemporaryDirectory(prefix="newscrawl-bench-ingest-") as tmp:
        folder = args.keep or Path(tmp)
        problem = make_folder(folder)
        if problem:
            print(f"bench ingest: --keep: {problem}", file=sys.stderr)
            return 2
        print(f"writing inputs to {folder} ...", file=sys.stderr)
        speed, memory = _inputs(folder, args.copies, sizes)
        base, flat, rounds, within = _speed(speed, folder, args.repeat)
        full = _ingest(speed, folder / "out-full")
        pages = base["pages"]
        print(
            f"bench ingest: {speed.stat().st_size / 1e6:.1f} MB WARC, "
            f"{sum(full['records'].values())} records, {pages} HTML pages (the demo web: "
            f"{_mean_kb(full):.0f} KB a page), {full['articles']} articles; one process on one "
            f"core; extraction only and the ingest with the site pass off alternate "
            f"{len(rounds)} times (pages/s: the fastest of each)"
        )
        print(f"{'stage':<52}{'records/s':>10}{'pages/s':>10}{'articles/s':>12}")
        rate = pages / base["seconds"]
        print(f"{'parse + extraction (default extractor, cetd-tpc)':<52}{'':>10}{rate:>10.1f}")
        for name, data in (
            ("ingest, site pass / SiteLevel off", flat),
            ("ingest, every crawl pipeline", full),
        ):
            seconds = data["file_seconds"]
            records = sum(data["records"].values()) / seconds
            print(
                f"{name:<52}{records:>10.0f}{data['pages'] / seconds:>10.1f}"
                f"{data['articles'] / seconds:>12.1f}"
            )
        print("\n".join(_ratio_lines(base, flat, rounds, within)))
        if args.heavy_pages > 0:
            heavy = _heavy_warc(folder, args.heavy_pages)
            hbase, hflat, hrounds, hwithin = _speed(heavy, folder / "heavy", args.repeat)
            print(
                f"\nheavy pages: {hflat['pages']} generated pages of {_mean_kb(hflat):.0f} KB "
                f"({heavy.stat().st_size / 1e6:.1f} MB WARC); parse + extraction "
                f"{hbase['pages'] / hbase['seconds']:.1f} pages/s, ingest (site pass off) "
                f"{hflat['pages'] / hflat['file_seconds']:.1f} pages/s"
            )
            print("\n".join(_ratio_lines(hbase, hflat, hrounds, hwithin)))
        print(f"\n{'input MB':>9}{'records':>10}{'pages':>8}{'seconds':>9}{'peak RSS MB':>13}")
        for size, path in memory:
            data = _ingest(path, folder / f"out-{size}")
            print(
                f"{path.stat().st_size / 1e6:>9.0f}{sum(data['records'].values()):>10}"
                f"{data['pages']:>8}{data['wall']:>9.1f}{data['peak_rss_mb']:>13.0f}"
            )
    return 0


def _mean_kb(data: dict) -> float:
    """Mean HTML payload of the pages ingested, in KB."""
    return sum(f["payload_bytes"] for f in data["per_file"]) / max(1, data["pages"]) / 1000
