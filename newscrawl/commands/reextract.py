"""Extract articles again from a crawl's stored pages, with another extractor or a new model.

PAGES is a crawl's `pages` dataset (OUT/pages of `newscrawl crawl` or of the workers). A site's
pages go through the crawl's site pass, as `newscrawl extract --site-from url` takes them
(--no-site-pass: page by page). Each site is one task: in this process by default, or on Dask
with --cluster (a LocalCluster of --dask-workers processes, or the scheduler at ADDRESS, whose
workers must see PAGES and --out). Rows (site, crawl, url, title, text, markdown, comments,
extractor, error) go to OUT/crawl=ID/site=NAME/: `markdown` and `comments` as the crawl writes
them (--links, --images: the Markdown with its links and images).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HELP = "extract stored pages again with another extractor or model (optionally on Dask)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.commands.cli_options import add_extractor_model_argument
    from newscrawl.extractors import DEFAULT_EXTRACTOR
    from newscrawl.scale.dask_stages import add_cluster_arguments

    parser.add_argument("pages", metavar="PAGES", help="a crawl's pages dataset")
    parser.add_argument("--out", "-o", required=True, metavar="DIR", help="an empty folder")
    parser.add_argument(
        "--extractor",
        "-e",
        default=DEFAULT_EXTRACTOR,
        help=f"extractor name (default: {DEFAULT_EXTRACTOR})",
    )
    parser.add_argument(
        "--model", default=None, help="template model file (from `newscrawl train`)"
    )
    parser.add_argument(
        "--site", action="append", default=None, metavar="NAME", help="only this site"
    )
    parser.add_argument(
        "--no-site-pass",
        dest="site_pass",
        action="store_false",
        help="extract page by page (default: each site's pages go through the crawl's site "
        "pass, so the default extractor gives the articles the crawl wrote)",
    )
    parser.add_argument(
        "--links",
        action="store_true",
        help="the markdown column writes links as [text](href) (default: their text only)",
    )
    parser.add_argument(
        "--images",
        action="store_true",
        help="the markdown column writes the images among the text as ![alt](src)",
    )
    add_extractor_model_argument(parser)
    add_cluster_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from newscrawl.scale.dask_stages import ReExtract, dask_client, run_stage, warm_up

    out = Path(args.out)
    if out.is_dir() and any(out.rglob("*.parquet")):
        print(f"reextract: {out} already holds Parquet files; choose an empty folder",
              file=sys.stderr)  # fmt: skip
        return 2
    from newscrawl.commands.cli_options import extractor_model_error

    if (problem := extractor_model_error(args)) is not None:
        print(f"reextract: {problem}", file=sys.stderr)
        return 2
    # the learned extractor's model goes with the stage too: a remote Dask worker does not
    # share this process's environment
    options = (("model", args.extractor_model),) if args.extractor_model else ()
    if options and args.extractor != "learned":
        print("reextract: --extractor-model is the learned extractor's", file=sys.stderr)
        return 2
    stage = ReExtract(
        args.extractor, options, model=args.model, site_pass=args.site_pass,
        crawl=_crawl_of_folder(Path(args.pages)), links=args.links, images=args.images,
    )  # fmt: skip
    problem = _not_pages(Path(args.pages), stage.html_column)
    if problem is not None:
        print(f"reextract: {problem}", file=sys.stderr)
        return 2
    try:
        stage.prepare()  # a bad extractor name or model fails here, not in every task
        with dask_client(args.cluster, args.dask_workers) as client:
            if client is not None:
                warm_up(client, stage)
            report = run_stage(stage, args.pages, out, client=client, sites=args.site)
    except (ValueError, OSError) as exc:
        print(f"reextract: {exc}", file=sys.stderr)
        return 2
    missing = sorted(set(args.site or ()) - {result.site for result in report.results})
    if missing:
        print(f"reextract: no such site in {args.pages}: {', '.join(missing)}", file=sys.stderr)
    print(f"reextract: {report.summary()} -> {out}")
    if missing and not report.results:
        return 2
    return 1 if report.failed else 0


def _crawl_of_folder(pages: Path) -> str | None:
    """ID when PAGES is one crawl's partition (OUT/pages/crawl=ID): its rows carry no crawl
    column of their own, the folder name holds it."""
    name = pages.resolve().name
    return name.split("=", 1)[1] or None if name.startswith("crawl=") else None


def _not_pages(pages: Path, html_column: str) -> str | None:
    """Why PAGES is not a pages dataset to re-extract, or None when it is one."""
    import pyarrow as pa

    from newscrawl.storage.datasets import open_parquet
    from newscrawl.template.page_sources import SourceError, parquet_rows

    if not pages.is_dir():
        return f"{pages}: no such folder"
    hint = (
        f" (a crawl's output? its pages are {pages / 'pages'})"
        if (pages / "pages").is_dir()
        else ""
    )
    # a damaged file is refused by name: skipped, its pages would silently be missing
    try:
        parquet_rows(pages)
    except SourceError as exc:
        return f"{exc}{hint}"
    try:
        names = open_parquet(pages).schema.names
    except (pa.ArrowException, OSError) as exc:
        return f"{pages}: not a Parquet dataset: {exc}{hint}"
    lacking = [c for c in ("url", "site", html_column) if c not in names]
    if lacking:
        return f"{pages}: no {', '.join(lacking)} column, not a pages dataset{hint}"
    return None
