"""Template stage costs: the memory of one site's SiteLevel buffer, and the speed of each step.

A crawl keeps every page of a domain (up to 200) as compact node records until the domain is
done, then labels them with SiteLevel. This benchmark fills such a buffer with --pages pages of
one site - generated pages with --teasers story teasers each (the default makes pages of about
2,000 nodes, the size of a real news article page), or the pages of a folder (--pages-dir,
cycled to --pages) - and prints what the buffer holds (the numpy arrays of the records), the
peak of Python memory while filling it (tracemalloc: it includes the one page being parsed) and
the process's resident-size growth. Then it times SiteLevel on the buffer and, per page,
parsing, the node records, scoring with a model (--model, or one trained here on generated
sites), smoothing and the filtered extraction.
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import time
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from newscrawl.models.template_model import TemplateModel

__all__ = ["HELP", "add_arguments", "run"]

HELP = "SiteLevel buffer memory for 200 pages of one site, and template scoring speed"
LIMIT_MB = 100.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pages",
        type=int,
        default=200,
        metavar="N",
        help="pages in the buffer (default: 200, the crawl's page cap)",
    )
    parser.add_argument(
        "--teasers",
        type=int,
        default=250,
        metavar="N",
        help="story teasers per generated page (default: 250, about 2,000 nodes)",
    )
    parser.add_argument(
        "--pages-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="use the .html pages of DIR (cycled) instead of generated ones",
    )
    parser.add_argument(
        "--model",
        default=None,
        metavar="MODEL",
        help="template model for the scoring timings (default: train one on generated sites)",
    )


def _pages(args: argparse.Namespace) -> list[tuple[str, bytes]]:
    from newscrawl.lab.synthetic_sites import synthetic_site

    if args.pages_dir is None:
        site = synthetic_site("bench.example.org", pages=args.pages, teasers=args.teasers)
        return [(url, html.encode()) for url, html in site]
    files = sorted(p for p in args.pages_dir.rglob("*") if p.suffix.lower() in (".html", ".htm"))
    if not files:
        raise ValueError(f"{args.pages_dir}: no .html pages")
    return [("", files[i % len(files)].read_bytes()) for i in range(args.pages)]


def _rss_mb() -> float:
    """Peak resident size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _buffer(pages: list[tuple[str, bytes]]) -> tuple[list, float]:
    """Fill the buffer as the crawl does (parse, record, drop the DOM); returns the buffer and
    tracemalloc's peak in MB (tracing slows Python down several times: no timing here)."""
    from newscrawl.html.parse import parse_html
    from newscrawl.template.node_records import PageNodes

    gc.collect()
    tracemalloc.start()
    buffer = []
    for url, html in pages:
        dom = parse_html(html, url=url or None)
        buffer.append(PageNodes.from_dom(dom, url, html=html))
        del dom
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return buffer, peak / 2**20


def _model(path: str | None) -> TemplateModel:
    """The model to time: the file given, or one trained here on generated sites."""
    from newscrawl.lab.synthetic_sites import synthetic_site
    from newscrawl.models.template_model import load_model
    from newscrawl.template.sitelevel import RawPage, run_sitelevel
    from newscrawl.training.template_train import TrainConfig, pages_data, train

    if path:
        return load_model(path)
    sites = []
    for k in range(6):
        host = f"train{k}.example.org"
        site = synthetic_site(host, pages=10, seed=k, teasers=20)
        run = run_sitelevel(host, [RawPage(url, html) for url, html in site])
        sites.append((host, "news", run.pages, run.labels or []))
    return train(pages_data(sites), TrainConfig(holdout=0))[0]


def _per_page(pages: list[tuple[str, bytes]], model: TemplateModel) -> dict[str, float]:
    """Mean milliseconds per page of each step of template-aware extraction."""
    import numpy as np

    from newscrawl.extractors.template_filter import TemplateConfig, TemplateExtractor, pruned_dom
    from newscrawl.html.parse import parse_html
    from newscrawl.template.node_features import node_features
    from newscrawl.template.node_records import PageNodes
    from newscrawl.template.template_scoring import smooth_page

    filt = TemplateExtractor(TemplateConfig(then="nce"), model=model)
    from newscrawl.template.geometry import get_geometry_provider

    geometry = get_geometry_provider(filt.geometry)
    steps = dict.fromkeys(("parse", "geometry", "records", "score", "smooth", "prune", "nce"), 0.0)
    sample = pages[: min(len(pages), 50)]
    for url, html in sample:
        t0 = time.perf_counter()
        dom = parse_html(html, url=url or None)
        t1 = time.perf_counter()
        boxes = geometry.boxes(dom, html=html, url=url or None)
        t1b = time.perf_counter()
        nodes = PageNodes.from_dom(dom, url, boxes=boxes, hashes=False)
        t2 = time.perf_counter()
        raw = model.scores(node_features(nodes), nodes.area)
        t3 = time.perf_counter()
        mask = smooth_page(dom.parent, raw, dom.body, filt.config.c) >= filt.threshold
        t4 = time.perf_counter()
        pruned = pruned_dom(dom, np.asarray(mask)) if not mask[dom.body] else None
        t5 = time.perf_counter()
        filt.extract_masked(dom, mask, pruned)
        t6 = time.perf_counter()
        times = (t1 - t0, t1b - t1, t2 - t1b, t3 - t2, t4 - t3, t5 - t4, t6 - t5)
        for key, seconds in zip(steps, times, strict=True):
            steps[key] += seconds
    return {key: 1000 * value / len(sample) for key, value in steps.items()}


def run(args: argparse.Namespace) -> int:
    from newscrawl.template.sitelevel import label_site

    if args.pages < 1:
        print("newscrawl bench template: --pages must be at least 1", file=sys.stderr)
        return 2
    try:
        pages = _pages(args)
    except (OSError, ValueError) as err:
        print(f"newscrawl bench template: {err}", file=sys.stderr)
        return 2
    rss_before = _rss_mb()
    buffer, peak = _buffer(pages)
    held = sum(p.nbytes for p in buffer) / 2**20
    nodes = sum(len(p) for p in buffer)
    verdict = "under" if peak < LIMIT_MB else "OVER"
    source = f"from {args.pages_dir}" if args.pages_dir else "of one generated site"
    print(
        f"buffer: {len(buffer)} pages {source}, {nodes:,} nodes "
        f"({nodes / len(buffer):,.0f} per page), {sum(len(h) for _, h in pages) / 2**20:.1f} MB "
        "of HTML"
    )
    print(f"  records held: {held:.1f} MB ({held * 2**20 / max(nodes, 1):.0f} bytes per node)")
    print(f"  peak Python memory while buffering: {peak:.1f} MB ({verdict} {LIMIT_MB:.0f} MB)")
    print(f"  process peak RSS: {rss_before:.0f} MB before, {_rss_mb():.0f} MB after")
    start = time.perf_counter()
    labels = label_site(buffer)
    share = sum(int(lab.sum()) for lab in labels) / max(nodes, 1)
    print(
        f"SiteLevel on the buffer: {time.perf_counter() - start:.2f} s, {share:.0%} of nodes "
        "template"
    )
    model = _model(args.model)
    steps = _per_page(pages, model)
    total = sum(steps.values())
    print(
        f"template-aware extraction (template+nce), ms per page: {total:.1f} "
        f"({1000 / total:.1f} pages/s)"
    )
    print("  " + ", ".join(f"{k} {v:.1f}" for k, v in steps.items()))
    return 0 if peak < LIMIT_MB else 1
