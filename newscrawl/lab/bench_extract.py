"""Extraction speed: pages/s of parsing alone, of each extractor (parse + extractor), of the
default extractor with the Markdown of its selection (what a crawl writes with
NEWSCRAWL_MARKDOWN on), of all
extractors together (one parse + every extractor, as the crawl pipeline runs them) and of
trafilatura's `bare_extraction` (default options) on the same pages, in the same run. The
default (learned) extractor's line includes the three seed extractors it runs for its features;
its speed ratio against trafilatura is printed last.

Everything runs in this one process on the same page bytes, read into memory first, so disk reads
are not timed; a stage is timed by the process's CPU time (--clock cpu, the default: the figure
other jobs on the machine do not move) or by the wall clock (--clock wall). Several datasets give a
table each, one after the other. Pages that cannot be parsed are left out of every stage. Each
stage first runs on a few pages to warm up (imports, caches), then all stages are timed in turn
over all pages, --repeat times; the table gives the median of the repeats. trafilatura is an
optional extra (pip install 'newscrawl[bench]'); without it its line says so and the rest still
runs.

The Markdown's cost is also printed as a share of the default extractor's: each page is parsed
and extracted, then rendered, the two timed apart in CPU time of this process, page after page
(so a machine whose load changes during the run weighs on both alike), over every repeat.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from newscrawl.extractors import DEFAULT_EXTRACTOR
from newscrawl.lab._bench_args import positive_int

if TYPE_CHECKING:
    from newscrawl.extractors.extractor_base import Extractor

__all__ = ["HELP", "add_arguments", "run"]

HELP = "pages/s of parsing, each extractor, all extractors together, and trafilatura"
WARMUP_PAGES = 10

# A stage turns one page's bytes into nothing of interest; it may raise (counted, not fatal).
Stage = Callable[[bytes], object]


def _parse_extract(extractor: Extractor, data: bytes) -> object:
    from newscrawl.html.parse import parse_html

    return extractor.extract(parse_html(data))


def _parse_extract_markdown(extractor: Extractor, data: bytes) -> object:
    from newscrawl.extractors.markdown import page_markdown
    from newscrawl.html.parse import parse_html

    dom = parse_html(data)
    return page_markdown(dom, extractor.extract(dom))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "dataset",
        metavar="DATASET",
        type=Path,
        nargs="+",
        help="dataset folder (its html/ pages are used; gold is not needed) or a folder of "
        "pages; several: a table each, in turn (e.g. CleanEval's pages beside WCXB's)",
    )
    parser.add_argument(
        "-n",
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="use only the first N pages",
    )
    parser.add_argument(
        "-r",
        "--repeat",
        type=positive_int,
        default=3,
        metavar="K",
        help="timed runs per stage; the median is reported (default: 3)",
    )
    parser.add_argument(
        "-e",
        "--extractor",
        default=None,
        metavar="A,B,...",
        help="comma-separated extractors (default: all registered)",
    )
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="time each stage by this process's CPU time (default: steady on a machine other "
        "jobs keep busy) or by the wall clock",
    )


@dataclass(slots=True)
class Timing:
    """Seconds of each timed run of one stage, and how many pages raised in it."""

    label: str
    runs: list[float] = field(default_factory=list)
    errors: int = 0
    note: str = ""

    def pages_per_second(self, pages: int) -> float | None:
        if not self.runs:
            return None
        median = statistics.median(self.runs)
        return pages / median if median > 0 else None


def _load_pages(paths: Sequence[str]) -> tuple[list[bytes], int]:
    """Bytes of every page that parses, and the number of pages left out."""
    from newscrawl.html.parse import parse_html
    from newscrawl.html.tree import PageError

    pages, left_out = [], 0
    for path in paths:
        try:
            data = Path(path).read_bytes()
            parse_html(data)
        except (OSError, PageError):
            left_out += 1
            continue
        pages.append(data)
    return pages, left_out


def _stages(names: Sequence[str]) -> dict[str, Stage]:
    from newscrawl.extractors import build_extractor
    from newscrawl.html.parse import parse_html

    extractors = [build_extractor(name) for name in names]
    stages: dict[str, Stage] = {"parse": parse_html}
    for extractor in extractors:
        stages[f"parse + {extractor.name}"] = functools.partial(_parse_extract, extractor)
        if extractor.name == DEFAULT_EXTRACTOR:
            stages[_with_markdown(extractor.name)] = functools.partial(
                _parse_extract_markdown, extractor
            )

    def all_together(data: bytes) -> None:
        dom = parse_html(data)
        for extractor in extractors:
            extractor.extract(dom)

    stages[f"parse + all ({', '.join(names)})"] = all_together
    return stages


def _with_markdown(name: str) -> str:
    return f"parse + {name} + markdown"


def markdown_share(extractor: Extractor, pages: Sequence[bytes], repeat: int) -> float | None:
    """CPU seconds of the Markdown of `extractor`'s selection over those of parsing and
    extracting, each page timed both ways in turn (None: nothing could be timed)."""
    from newscrawl.extractors.markdown import page_markdown
    from newscrawl.html.parse import parse_html

    extracting = rendering = 0.0
    clock = time.process_time
    for _ in range(repeat):
        for data in pages:
            start = clock()
            try:
                dom = parse_html(data)
                extraction = extractor.extract(dom)
            except Exception:  # counted in the stage table; nothing to render
                continue
            middle = clock()
            with contextlib.suppress(Exception):
                page_markdown(dom, extraction)
            extracting += middle - start
            rendering += clock() - middle
    return rendering / extracting if extracting else None


def _trafilatura() -> tuple[Stage | None, str]:
    """trafilatura's bare_extraction and its label, or None and why it is missing."""
    try:
        import logging

        import trafilatura
    except ImportError as err:  # also lxml without html_clean, which trafilatura 2 needs
        return None, f"not measured: cannot import trafilatura ({err})"
    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)  # per-page chatter off
    version = getattr(trafilatura, "__version__", "?")
    return trafilatura.bare_extraction, f"trafilatura {version} bare_extraction"


def _time_stage(
    stage: Stage, pages: Sequence[bytes], timing: Timing, clock: Callable[[], float]
) -> None:
    errors = 0
    start = clock()
    for data in pages:
        try:
            stage(data)
        except Exception:  # a failing page still cost its time; count it and go on
            errors += 1
    timing.runs.append(clock() - start)
    timing.errors = max(timing.errors, errors)


def _warm_up(stages: dict[str, Stage], pages: Sequence[bytes]) -> None:
    for stage in stages.values():
        for data in pages[:WARMUP_PAGES]:
            with contextlib.suppress(Exception):  # errors are counted in the timed runs
                stage(data)


def _report(
    timings: list[Timing], pages: int, ours: str, theirs: str, share: float | None = None
) -> list[str]:
    width = max(len(t.label) for t in timings)
    lines = [f"{'stage'.ljust(width)}  {'pages/s':>9}  {'ms/page':>8}  errors"]
    speed = {}
    for timing in timings:
        pps = timing.pages_per_second(pages)
        speed[timing.label] = pps
        if pps is None:
            lines.append(f"{timing.label.ljust(width)}  {'-':>9}  {'-':>8}  {timing.note}")
            continue
        lines.append(f"{timing.label.ljust(width)}  {pps:9.1f}  {1000 / pps:8.2f}  {timing.errors}")
    default = f"parse + {DEFAULT_EXTRACTOR}"
    if share is not None:
        lines.append(f"markdown cost, share of {default}'s CPU time: {100 * share:.1f}%")
    for label in dict.fromkeys((default, ours)):
        mine, reference = speed.get(label), speed.get(theirs)
        if mine and reference:
            ratio = mine / reference
            lines.append(f"speed ratio, {label} vs trafilatura: {ratio:.2f}x")
    return lines


def run(args: argparse.Namespace) -> int:
    from newscrawl.extractors import extractor_names

    missing = [str(folder) for folder in args.dataset if not folder.is_dir()]
    if missing:
        print(f"newscrawl bench extract: {', '.join(missing)}: no such folder", file=sys.stderr)
        return 2
    try:
        names = extractor_names(args.extractor)
        _stages(names)  # an unknown or broken extractor is refused before any page is read
    except (ValueError, ImportError) as err:
        print(f"newscrawl bench extract: {err}", file=sys.stderr)
        return 2
    for n, dataset in enumerate(args.dataset):
        if n:
            print()
        code = _bench_dataset(args, dataset, names)
        if code:
            return code
    return 0


def _bench_dataset(args: argparse.Namespace, dataset: Path, names: list[str]) -> int:
    """The table of one dataset's pages."""
    from newscrawl.gold.pagefiles import dataset_pages

    stages = _stages(names)
    paths = dataset_pages(dataset)[: args.limit]
    pages, left_out = _load_pages(paths)
    if not pages:
        print(f"newscrawl bench extract: no parseable pages in {dataset}", file=sys.stderr)
        return 2
    ours = list(stages)[-1]
    traf, traf_label = _trafilatura()
    if traf is not None:
        stages[traf_label] = traf
    timings = {label: Timing(label) for label in stages}
    if traf is None:
        timings["trafilatura"] = Timing("trafilatura", note=traf_label)
        print(
            f"note: trafilatura {traf_label}; install the benchmark extra: "
            "pip install 'newscrawl[bench]'",
            file=sys.stderr,
        )
    from newscrawl.extractors.blockmodel.model import COMPILED_WALK

    size = sum(map(len, pages)) / 1e6
    walk = "compiled" if COMPILED_WALK else "numpy (no C compiler when pip installed newscrawl)"
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(
        f"bench extract: {dataset} - {len(pages)} pages ({size:.1f} MB, "
        f"{size * 1000 / len(pages):.0f} KB a page), {left_out} unparseable left out; one "
        f"process; {args.clock} time, median of {args.repeat} runs after warm-up; "
        f"tree walk: {walk}",
        flush=True,
    )
    _warm_up(stages, pages)
    for _ in range(args.repeat):
        for label, stage in stages.items():
            _time_stage(stage, pages, timings[label], clock)
    share = None
    if DEFAULT_EXTRACTOR in names:
        from newscrawl.extractors import build_extractor

        share = markdown_share(build_extractor(DEFAULT_EXTRACTOR), pages, args.repeat)
    for line in _report(list(timings.values()), len(pages), ours, traf_label, share):
        print(line)
    return 0
