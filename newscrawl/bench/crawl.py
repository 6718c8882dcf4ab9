"""Crawl throughput on the demo web: pages/s and peak memory, with the site pass and without.

The demo web is served from this process on 127.0.0.x (with --copies K, K renamed copies of each
of its sites, for a bigger crawl); each variant is a real `newscrawl crawl` in a child process,
no politeness delays, writing Parquet to a temporary folder. Variants:

  site-pass     every stage: raw pages as they arrive; per complete site, the site pass
                (SiteLevel node records and labels, extraction with every configured
                extractor, article flag, the site's template out of the text) and its articles
  no-sitelevel  no site pass: extraction and article flag inline, page by page
  no-extraction fetch, parse (the spider needs links), write raw pages and bare article rows

pages/s is HTML pages written per second of crawl (spider open to close); peak memory is the
child's maximum resident set. The demo server runs in this process and shares the machine's
cores with the crawl, so the figures are a floor for what a real network allows.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "run"]

HELP = "crawl pages/s and peak memory on the demo web, with the site pass and without"

_NO_EXTRACTION = {
    "newscrawl.pipelines.rawpages.RawPagePipeline": 400,
    "newscrawl.pipelines.parquet.ParquetWriterPipeline": 500,
}
_NO_SITELEVEL = {
    "newscrawl.pipelines.extraction.ExtractionPipeline": 100,
    "newscrawl.pipelines.classify.ArticleClassifierPipeline": 200,
    **_NO_EXTRACTION,
}
VARIANTS: dict[str, dict[str, Any]] = {
    "site-pass": {},
    "no-sitelevel": {"ITEM_PIPELINES": _NO_SITELEVEL},
    "no-extraction": {"ITEM_PIPELINES": _NO_EXTRACTION},
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-r",
        "--repeat",
        type=int,
        default=1,
        metavar="K",
        help="crawls per variant; the median is reported (default: 1)",
    )
    parser.add_argument(
        "--copies",
        type=int,
        default=4,
        metavar="K",
        help="copies of each demo site to serve (default: 4, ~940 pages)",
    )
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        metavar="A,B",
        help=f"variants to run (default: {','.join(VARIANTS)})",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")


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


def _crawl(sites: Path, out: Path, overrides: dict[str, Any]) -> dict[str, Any]:
    from newscrawl.crawl.runner import crawl_command

    settings = [
        f"{name}={json.dumps(value) if isinstance(value, dict | list) else value}"
        for name, value in overrides.items()
    ]
    command = crawl_command(sites, out, settings, ("--fast-local", "--log-level", "WARNING"))
    result = subprocess.run(command, capture_output=True, text=True)
    summaries = sorted(out.glob(".newscrawl/*/summary.json"))
    if result.returncode != 0 or not summaries:
        raise RuntimeError(f"crawl failed ({result.returncode}): {result.stderr[-2000:]}")
    return json.loads(summaries[-1].read_text())


def run(args: argparse.Namespace) -> int:
    from newscrawl.demo.server import DemoServer

    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        print(f"unknown variants: {', '.join(unknown)}", file=sys.stderr)
        return 2
    web = _web(args.copies)
    hosts = [f"127.0.0.{n}" for n in range(1, len(web.sites) + 1)]
    results: dict[str, dict[str, float]] = {}
    with DemoServer(web, port=0, hosts=hosts) as server, tempfile.TemporaryDirectory() as tmp:
        sites = server.write_site_list(Path(tmp) / "sites.csv")
        for name in names:
            runs = [
                _crawl(sites, Path(tmp) / f"{name}-{i}", VARIANTS[name]) for i in range(args.repeat)
            ]
            results[name] = {
                "pages": statistics.median(r["pages"] for r in runs),
                "seconds": statistics.median(r["elapsed_s"] for r in runs),
                "pages_per_s": statistics.median(r["pages_per_s"] for r in runs),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
            }
            print(f"{name}: {results[name]}", file=sys.stderr)
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print(f"demo web x{args.copies}: {len(web.sites)} sites; median of {args.repeat} crawl(s)")
    print(f"{'variant':<14} {'pages':>6} {'seconds':>8} {'pages/s':>8} {'peak MB':>8}")
    for name, row in results.items():
        print(
            f"{name:<14} {row['pages']:>6.0f} {row['seconds']:>8.1f} {row['pages_per_s']:>8.1f}"
            f" {row['peak_rss_mb']:>8.0f}"
        )
    return 0
