"""Label the template nodes of stored pages with SiteLevel and write a `nodes` dataset.

Each PAGES is a crawl's `pages` Parquet dataset (a file or a folder) or a dataset folder in the
development-data layout (html/ID.html and meta.jsonl with each page's "site"). Pages are grouped
by site; each site with at least --min-pages pages is labelled on its own (a node is template
when its content hash occurs on at least --p of the site's pages, or when --share of its text is
template) and written to the `nodes` dataset at --out, which `newscrawl train` reads. Sites with
fewer pages are skipped and counted. This is the stage a crawl runs per domain, so models can be
retrained without crawling again. The dataset is laid out as a crawl writes it,
NODES/crawl=<--crawl>/site=<name>/ ("offline" when --crawl is not given).

--site-method labels them by another site-level method instead (Site Style Tree, pagelets or
block entropy: `newscrawl.template.sitemethods`); --p and --share are SiteLevel's.

With --cluster, the sites of one pages dataset are labelled on Dask, one task per site; the
nodes written are the same as without it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from newscrawl.commands.cli_options import positive_int

if TYPE_CHECKING:
    from newscrawl.template.sitelevel import SiteLevelConfig

__all__ = ["HELP", "add_arguments", "run"]

HELP = "label template nodes of stored pages (SiteLevel)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.scale.dask_stages import add_cluster_arguments
    from newscrawl.template.sitemethods import SITE_METHODS

    parser.add_argument(
        "pages",
        nargs="+",
        metavar="PAGES",
        help="a crawl's pages dataset, or a dataset folder (html/ + meta.jsonl)",
    )
    parser.add_argument(
        "--out", "-o", required=True, metavar="NODES", help="folder of the nodes dataset to write"
    )
    parser.add_argument(
        "--p",
        type=float,
        default=0.10,
        metavar="SHARE",
        help="a hash on at least this share of a site's pages is template (default: 0.10)",
    )
    parser.add_argument(
        "--share",
        type=float,
        default=0.85,
        metavar="SHARE",
        help="a node at least this share template is template (default: 0.85)",
    )
    parser.add_argument(
        "--share-of",
        default="text",
        choices=("text", "html"),
        help="what --share measures: visible text (default) or HTML characters (the literal "
        "reading of the study, which marks article wrappers template)",
    )
    parser.add_argument(
        "--min-pages",
        type=positive_int,
        default=5,
        metavar="N",
        help="skip sites with fewer pages (default: 5)",
    )
    parser.add_argument(
        "--max-pages",
        type=int,
        default=200,
        metavar="N",
        help="use at most N pages per site, as the study did (default: 200)",
    )
    parser.add_argument(
        "--geometry",
        default="flow",
        choices=("static", "chromium", "flow"),
        help="how node boxes are computed (default: flow; train with the same --geometry)",
    )
    parser.add_argument(
        "--kind",
        choices=("news", "blog"),
        default=None,
        help="mark every site as news or blog (default: guessed per site)",
    )
    parser.add_argument(
        "--crawl",
        default="offline",
        metavar="ID",
        help="value of the crawl column (default: offline)",
    )
    parser.add_argument(
        "--overwrite", action="store_true", help="replace a nodes dataset already at --out"
    )
    parser.add_argument(
        "--site-method",
        default="sitelevel",
        choices=SITE_METHODS,
        help="what labels the template nodes (default: %(default)s)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    add_cluster_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from newscrawl.template.sitelevel import SiteLevelConfig

    if not 0 < args.p <= 1 or not 0 < args.share <= 1:
        print("newscrawl sitelevel: --p and --share must be in (0, 1]", file=sys.stderr)
        return 2
    config = SiteLevelConfig(
        p=args.p, html_share=args.share, share_of=args.share_of, min_pages=max(1, args.min_pages)
    )
    if args.cluster is not None:
        return _run_on_dask(args, config)
    return _run_here(args, config)


def _run_here(args: argparse.Namespace, config: SiteLevelConfig) -> int:
    """Label site after site in this process, streaming the pages."""
    from tqdm import tqdm

    from newscrawl.template.node_table import nodes_writer
    from newscrawl.template.page_sources import SourceError, read_sources
    from newscrawl.template.sitelevel import run_sitelevel

    try:
        sites = read_sources(args.pages, min_pages=config.min_pages, max_pages=args.max_pages)
    except SourceError as err:
        print(f"newscrawl sitelevel: {err}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if not _clear(out, args.overwrite):
        return 2
    crawl = args.crawl or "offline"
    written = nodes = errors = 0
    with (
        nodes_writer(out) as writer,
        tqdm(total=sites.pages, unit="page", desc="sitelevel", disable=args.quiet) as bar,
    ):
        for site, pages in sites:
            run = run_sitelevel(
                site, pages, config=config, geometry=args.geometry, method=args.site_method
            )
            bar.update(len(pages))
            errors += run.errors
            rows = run.write(writer, crawl, kind=args.kind)
            if not rows:  # pages lost to parse errors can leave a site short
                sites.skipped_sites += 1
                continue
            written += 1
            nodes += rows
    print(
        f"{written} sites, {nodes:,} nodes -> {out}; skipped {sites.skipped_sites} sites with "
        f"fewer than {config.min_pages} pages ({sites.skipped_pages} pages)"
        + (f"; {errors} pages could not be parsed" if errors else ""),
        file=sys.stderr,
    )
    return 0 if written else 1


def _run_on_dask(args: argparse.Namespace, config: SiteLevelConfig) -> int:
    """One Dask task per site of one pages dataset (SiteLevelStage: the same nodes as
    `_run_here`)."""
    from tqdm import tqdm

    from newscrawl.scale.dask_stages import SiteLevelStage, dask_client, run_stage, warm_up
    from newscrawl.template.page_sources import SourceError, parquet_rows

    source = Path(args.pages[0])
    if len(args.pages) != 1 or (source / "html").is_dir() or not source.exists():
        print(
            "newscrawl sitelevel: --cluster takes one existing pages Parquet dataset",
            file=sys.stderr,
        )
        return 2
    try:
        parquet_rows(source)  # a damaged file is refused by name, as without --cluster
    except SourceError as err:
        print(f"newscrawl sitelevel: {err}", file=sys.stderr)
        return 2
    stage = SiteLevelStage(
        p=config.p,
        html_share=config.html_share,
        share_of=config.share_of,
        min_pages=config.min_pages,
        max_pages=args.max_pages if args.max_pages > 0 else None,
        geometry=args.geometry,
        kind=args.kind,
        crawl=args.crawl or "offline",
        method=args.site_method,
    )
    out = Path(args.out)
    if not _clear(out, args.overwrite):
        return 2
    try:
        with (
            dask_client(args.cluster, args.dask_workers) as client,
            tqdm(unit="site", desc="sitelevel", disable=args.quiet) as bar,
        ):
            if client is not None:
                warm_up(client, stage)
            report = run_stage(stage, source, out, client=client, progress=lambda _: bar.update())
    except (OSError, ValueError) as err:  # not a pages dataset, no scheduler at the address
        print(f"newscrawl sitelevel: {err}", file=sys.stderr)
        return 2
    print(f"{report.summary()} -> {out}", file=sys.stderr)
    return 0 if any(result.rows for result in report.results) else 1


def _clear(out: Path, overwrite: bool) -> bool:
    """Make room for the dataset: refuse to mix into an existing one unless told to replace it."""
    if out.exists() and not out.is_dir():
        print(f"newscrawl sitelevel: {out} is a file, not a folder", file=sys.stderr)
        return False
    old = sorted(out.rglob("*.parquet")) if out.is_dir() else []
    if old and not overwrite:
        print(
            f"newscrawl sitelevel: {out} already holds a dataset; use --overwrite to replace "
            "it or choose another folder",
            file=sys.stderr,
        )
        return False
    for path in old:
        path.unlink()
    return True
