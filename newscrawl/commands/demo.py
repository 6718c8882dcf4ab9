"""Crawl the bundled demo web end to end, with no network: the quickest way to see newscrawl work.

Serves the demo web (three generated news and blog sites with known gold text; with --faults also
a site of broken pages) on 127.0.0.x, crawls it with the real Scrapy pipeline into DIR, prints
the crawl summary and scores the written articles against the gold text (shingle F1).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from newscrawl.demo.web import DemoArticle

__all__ = ["HELP", "add_arguments", "gold_report", "run"]

HELP = "crawl the bundled demo web end to end (no network needed)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        "-o",
        type=Path,
        default=Path("demo-out"),
        metavar="DIR",
        help="output folder (default: ./demo-out)",
    )
    parser.add_argument(
        "--faults",
        action="store_true",
        help="also serve and crawl the fault site (errors, traps, attacks)",
    )
    parser.add_argument(
        "--max-pages",
        type=int,
        default=None,
        metavar="N",
        help="HTML pages per site (default: 200)",
    )
    parser.add_argument("--seed", type=int, default=4, help="demo web seed (default: 4)")
    parser.add_argument(
        "--set",
        "-s",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any Scrapy or NEWSCRAWL_* setting (repeatable)",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        metavar="LEVEL",
        help="Scrapy log level (default: WARNING; the summary is printed)",
    )


def gold_report(out: Path, crawl_id: str, gold: dict[str, DemoArticle]) -> dict[str, Any]:
    """How the crawl's articles compare with the demo gold: coverage, flags, shingle F1."""
    import pyarrow.dataset as ds

    from newscrawl.crawl.urls import canonical_url
    from newscrawl.evaluation.metric import aggregate, score_page

    root = out / "articles"
    if not root.is_dir():
        return {
            "gold_articles": len(gold),
            "found": 0,
            "duplicates": 0,
            "flagged_article": 0,
            "other_pages_flagged_article": 0,
            "precision": 0.0,
            "recall": 0.0,
            "f1": 0.0,
        }
    table = (
        ds.dataset(root, format="parquet", partitioning="hive")
        .to_table(
            filter=ds.field("crawl") == crawl_id,
            columns=["final_url", "is_article", "text"],
        )
        .to_pylist()
    )
    gold_by_url = {canonical_url(url): article for url, article in gold.items()}
    found = [row for row in table if row["final_url"] in gold_by_url]
    seen = {row["final_url"] for row in found}
    scores = aggregate(score_page(gold_by_url[r["final_url"]].text, r["text"] or "") for r in found)
    return {
        "gold_articles": len(gold_by_url),
        "found": len(seen),
        "duplicates": len(found) - len(seen),
        "flagged_article": sum(1 for r in found if r["is_article"]),
        "other_pages_flagged_article": sum(
            1 for r in table if r["final_url"] not in gold_by_url and r["is_article"]
        ),
        "precision": scores.precision,
        "recall": scores.recall,
        "f1": scores.f1,
    }


def run(args: argparse.Namespace) -> int:
    from newscrawl.crawl.runner import FAST_LOCAL, crawl_settings, parse_set_options, run_crawl
    from newscrawl.crawl.summary import format_summary
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    try:
        extra = parse_set_options(args.set)
    except ValueError as err:
        print(f"newscrawl demo: {err}", file=sys.stderr)
        return 2
    overrides: dict[str, object] = {
        **FAST_LOCAL,
        "LOG_LEVEL": args.log_level.upper(),
        "DOWNLOAD_TIMEOUT": 3,
        "RETRY_TIMES": 1,
    }
    if args.max_pages is not None:
        overrides["MAX_PAGES_PER_SITE"] = args.max_pages
    overrides.update(extra)
    args.out.mkdir(parents=True, exist_ok=True)
    with DemoServer(
        build_demo_web(args.seed), port=0, faults=args.faults, slow_seconds=5.0
    ) as server:
        sites = args.out / "demo-sites.csv"
        sites.write_text(
            "url,name\n" + "".join(f"{url}/,{name}\n" for name, url in server.site_urls.items())
        )
        print(
            f"demo web: {len(server.site_urls)} sites on 127.0.0.x port {server.port}",
            file=sys.stderr,
        )
        settings = crawl_settings(args.out, None, overrides)
        summary = run_crawl(str(sites), settings)
        gold = server.gold()
    if summary is None:
        print("newscrawl demo: the crawl ended without a summary", file=sys.stderr)
        return 1
    print(format_summary(summary))
    report = gold_report(args.out, summary["crawl_id"], gold)
    print(
        f"gold: {report['found']}/{report['gold_articles']} demo articles written "
        f"({report['duplicates']} duplicates), {report['flagged_article']} flagged as "
        f"articles, {report['other_pages_flagged_article']} other pages flagged as articles"
    )
    print(
        f"text vs gold: shingle precision {report['precision']:.3f}, recall "
        f"{report['recall']:.3f}, F1 {report['f1']:.3f}"
    )
    print(f'open it: pandas.read_parquet("{args.out}/articles")')
    return 0 if summary.get("reason") == "finished" else 1
