"""Crawl the bundled demo web end to end, with no network: the quickest way to see newscrawl work.

Serves the demo web (three generated news and blog sites with known gold text; with --faults also
a site of broken pages) on 127.0.0.x, crawls it with the real Scrapy pipeline into DIR, prints
the crawl summary and scores the articles against the gold text (shingle F1): the page-level
text each page had before its site's site pass (kept in `texts`: the demo keeps every
extractor's text) and the written text, after it; and the share of articles whose written
`markdown` is the gold Markdown of the article exactly.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from newscrawl.commands.cli_options import (
    add_max_pages_argument,
    add_settings_arguments,
    option_settings,
)

if TYPE_CHECKING:
    from newscrawl.demo.server import DemoServer
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
    add_max_pages_argument(parser)
    parser.add_argument("--seed", type=int, default=4, help="demo web seed (default: 4)")
    add_settings_arguments(
        parser, "WARNING", "Scrapy log level (default: WARNING; the summary is printed)"
    )


def gold_report(out: Path, crawl_id: str, gold: dict[str, DemoArticle]) -> dict[str, Any]:
    """How the crawl's articles compare with the demo gold: coverage, flags, shingle F1."""
    from newscrawl.gold.metric import aggregate, score_page
    from newscrawl.html.urls import canonical_url

    rows = _article_rows(out / "articles", crawl_id)
    gold_by_url = {canonical_url(url): article for url, article in gold.items()}
    found = [row for row in rows if row["final_url"] in gold_by_url]
    seen = {row["final_url"] for row in found}
    scores = aggregate(score_page(gold_by_url[r["final_url"]].text, r["text"] or "") for r in found)
    page_level = aggregate(
        score_page(gold_by_url[r["final_url"]].text, _page_level_text(r)) for r in found
    )
    return {
        "gold_articles": len(gold_by_url),
        "found": len(seen),
        "duplicates": len(found) - len(seen),
        "flagged_article": sum(1 for r in found if r["is_article"]),
        "other_pages_flagged_article": sum(
            1 for r in rows if r["final_url"] not in gold_by_url and r["is_article"]
        ),
        "precision": scores.precision,
        "recall": scores.recall,
        "f1": scores.f1,
        "site_pass_pages": sum(1 for r in found if r.get("stage") == "site"),
        "markdown_equal": sum(
            1 for r in found if (r.get("markdown") or "") == gold_by_url[r["final_url"]].markdown
        ),
        "page_level": {
            "precision": page_level.precision,
            "recall": page_level.recall,
            "f1": page_level.f1,
        },
    }


def _page_level_text(row: dict[str, Any]) -> str:
    """The text a page had before its site pass: its extractor's entry in `texts` (the demo
    keeps every extractor's text), else the written text."""
    texts = dict(row.get("texts") or ())
    return texts.get(row.get("extractor") or "", row["text"] or "")


def _article_rows(root: Path, crawl_id: str) -> list[dict[str, Any]]:
    """final_url, is_article and text of the crawl's rows (none when nothing was written)."""
    import pyarrow.dataset as ds

    if not root.is_dir():
        return []
    dataset = ds.dataset(root, format="parquet", partitioning="hive")
    columns = ["final_url", "is_article", "text", "texts", "extractor", "stage", "markdown"]
    return dataset.to_table(filter=ds.field("crawl") == crawl_id, columns=columns).to_pylist()


def run(args: argparse.Namespace) -> int:
    from newscrawl.crawl.checks import check_settings
    from newscrawl.crawl.crawl_process import FAST_LOCAL
    from newscrawl.crawl.extensions.summary import format_summary
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    try:
        overrides = {
            **FAST_LOCAL,
            "DOWNLOAD_TIMEOUT": 3,
            "RETRY_TIMES": 1,
            "NEWSCRAWL_KEEP_ALL_TEXTS": True,  # page-level texts, to score the site pass
            # each demo run is scored on its own rows: earlier demo runs in DIR play no part
            "NEWSCRAWL_HISTORY": False,
            **option_settings(args),
        }
        check_settings(overrides)
    except ValueError as err:
        print(f"newscrawl demo: {err}", file=sys.stderr)
        return 2
    if args.out.exists() and not args.out.is_dir():
        print(f"newscrawl demo: {args.out} exists and is not a folder", file=sys.stderr)
        return 2
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file on the way, /proc, no permission: one line, not a traceback
        print(f"newscrawl demo: cannot create {args.out}: {err.strerror or err}", file=sys.stderr)
        return 2
    web = build_demo_web(args.seed)
    with DemoServer(web, port=0, faults=args.faults, slow_seconds=5.0) as server:
        summary = _crawl(server, args.out, overrides)
        gold = server.gold()
    if summary is None:
        print("newscrawl demo: the crawl ended without a summary", file=sys.stderr)
        return 1
    print(format_summary(summary))
    _print_report(gold_report(args.out, summary["crawl_id"], gold))
    print(f'open it: pyarrow.parquet.read_table("{args.out}/articles") (or pandas.read_parquet)')
    return 0 if summary.get("reason") == "finished" else 1


def _crawl(server: DemoServer, out: Path, overrides: dict[str, Any]) -> dict[str, Any] | None:
    from newscrawl.crawl.crawl_process import crawl_settings, run_crawl

    sites = server.write_site_list(out / "demo-sites.csv")
    print(
        f"demo web: {len(server.site_urls)} sites on 127.0.0.x port {server.port}",
        file=sys.stderr,
    )
    return run_crawl(str(sites), crawl_settings(out, None, overrides))


def _print_report(report: dict[str, Any]) -> None:
    print(
        f"gold: {report['found']}/{report['gold_articles']} demo articles written "
        f"({report['duplicates']} duplicates), {report['flagged_article']} flagged as "
        f"articles, {report['other_pages_flagged_article']} other pages flagged as articles"
    )
    before = report["page_level"]
    print(
        f"text vs gold, page-level (before the site pass): shingle precision "
        f"{before['precision']:.3f}, recall {before['recall']:.3f}, F1 {before['f1']:.3f}"
    )
    print(
        f"text vs gold, written (after the site pass, {report['site_pass_pages']} of "
        f"{report['found']} pages): shingle precision {report['precision']:.3f}, recall "
        f"{report['recall']:.3f}, F1 {report['f1']:.3f}"
    )
    found = report["found"]
    share = report["markdown_equal"] / found if found else 0.0
    print(
        f"markdown vs gold Markdown, written: {report['markdown_equal']}/{found} articles "
        f"equal ({share:.3f})"
    )
