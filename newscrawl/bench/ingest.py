"""Ingest speed and memory: `newscrawl ingest` against parse + extraction of the same pages.

Writes CC-NEWS-shaped WARCs of the demo web (warcinfo; request, response and metadata per
capture; revisits) into a temporary folder, then, each in a child process pinned to one core:

1. extraction only: every HTML page parsed as the ingest parses it and run through the crawl's
   extractors (NEWSCRAWL_EXTRACTORS: the default extractor, CETD-TPC where it finds nothing);
2. `newscrawl ingest` of the WARC with the site pass / SiteLevel off (reading, decoding, one
   parse, extraction, article flag, metadata, Parquet): the like-for-like figure;
3. `newscrawl ingest` with every pipeline of a crawl (SiteLevel and the site pass on);

(1) and (2) alternate `--repeat` times. Each round's ratio compares two runs made seconds
apart, so load that drifts over minutes cancels in it; the median of the rounds' ratios is the
headline figure (the other load on a shared machine comes in bursts that a single pair can
catch on one side only). The fastest run of each side is printed too. It prints records/s and
article pages/s, the ratio of (2) to (1), and the peak RSS of ingests over inputs of several
sizes, every pipeline on (--sizes, in MB of WARC: the same pages plus 1 MB filler responses -
images, and pages captured again, whose payloads are read and then skipped as repeats - so
memory can be seen not to grow with input).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HELP = "ingest records/s and pages/s beside extraction-only speed; peak memory by input size"

# The ingest's own parse (with the record's URL and Content-Type) and extractor chain (the
# NEWSCRAWL_EXTRACTORS of the settings, the primary first), so the two sides differ by what the
# ingest does around them.
_EXTRACT_ONLY = """
import json, sys, time
from newscrawl import settings
from newscrawl.warc.reader import Record, read_archive
from newscrawl.ingest.spider import wanted
from newscrawl.dom import parse_html
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
started = time.perf_counter(); run(); seconds = time.perf_counter() - started
print(json.dumps({"pages": len(pages), "seconds": seconds}))
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--copies", type=int, default=4, help="copies of the demo web's sites (default: 4)"
    )
    parser.add_argument(
        "--sizes",
        default="64,512,2048",
        metavar="MB,...",
        help="WARC sizes for the memory runs, in MB (default: 64,512,2048)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="rounds of extraction only and of the like-for-like ingest, alternating; the "
        "median of the rounds' ratios is the figure (default: 5)",
    )
    parser.add_argument("--keep", type=Path, default=None, help="keep the inputs in this folder")


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
    """Ingest pages/s over extraction-only pages/s, of two runs of one round."""
    return (flat["pages"] / flat["file_seconds"]) / (base["pages"] / base["seconds"])


def _inputs(folder: Path, copies: int, sizes: list[int]) -> tuple[Path, list[tuple[int, Path]]]:
    from newscrawl.warc.synthetic import Capture, demo_captures, write_ccnews_warc

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


def run(args: argparse.Namespace) -> int:
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    with tempfile.TemporaryDirectory(prefix="newscrawl-bench-ingest-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        print(f"writing inputs to {folder} ...", file=sys.stderr)
        speed, memory = _inputs(folder, args.copies, sizes)
        bases, flats = [], []
        for n in range(max(1, args.repeat)):
            extract = subprocess.run(
                [sys.executable, "-c", _EXTRACT_ONLY, str(speed)],
                capture_output=True,
                text=True,
                check=True,
                **_pinned(),
            )
            bases.append(json.loads(extract.stdout))
            flats.append(_ingest(speed, folder / f"out-flat-{n}", "NEWSCRAWL_SITELEVEL=False"))
        base = min(bases, key=lambda data: data["seconds"])
        flat = min(flats, key=lambda data: data["file_seconds"])
        full = _ingest(speed, folder / "out-full")
        pages = base["pages"]
        print(
            f"bench ingest: {speed.stat().st_size / 1e6:.1f} MB WARC, "
            f"{sum(full['records'].values())} records, {pages} HTML pages, "
            f"{full['articles']} articles; one process on one core; extraction only and the "
            f"ingest with the site pass off alternate {len(bases)} times (pages/s: the fastest "
            "of each)"
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
        fastest = (flat["pages"] / flat["file_seconds"]) / rate
        rounds = [_round_ratio(b, f) for b, f in zip(bases, flats, strict=True)]
        listed = ", ".join(f"{r:.2f}" for r in rounds)
        print(
            f"ingest (site pass off) / parse + extraction: {statistics.median(rounds):.2f} "
            f"(target >= 0.80; median of {len(rounds)} rounds: {listed}; fastest against "
            f"fastest: {fastest:.2f})"
        )
        print(f"{'input MB':>9}{'records':>10}{'pages':>8}{'seconds':>9}{'peak RSS MB':>13}")
        for size, path in memory:
            data = _ingest(path, folder / f"out-{size}")
            print(
                f"{path.stat().st_size / 1e6:>9.0f}{sum(data['records'].values()):>10}"
                f"{data['pages']:>8}{data['wall']:>9.1f}{data['peak_rss_mb']:>13.0f}"
            )
    return 0
