"""Scale-out: crawl throughput with 1 and 2 Redis-fed workers, re-extraction rate with 1 and 2
Dask workers, and the scaling ratio of each.

Everything runs on this machine: a throwaway redis-server on a free loopback port, the demo web
served over HTTP on 127.0.0.x, and `newscrawl worker` processes. Each demo site is enqueued
--copies times under different names (a site list with a name column), so there are more sites
than workers. Crawl rate = pages stored / wall time from starting the workers to the last one
exiting (process start-up included, as in real use). Politeness is off (no download delay, no
AutoThrottle): the server is local and the point is the crawler's own cost.

The batch half re-extracts the `pages` stored by the 1-worker crawl with one Dask task per site,
first in this process, then on a LocalCluster of 1 and of 2 single-threaded worker processes
(cluster start-up not timed), and checks each run matches the in-process one row for row.
The ratio is bounded by the machine: on 2 cores shared with anything else, expect < 2.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from newscrawl.lab._bench_args import (
    make_folder,
    new_or_folder,
    nonnegative_int,
    positive_int,
    positive_ints,
)

__all__ = ["HELP", "add_arguments", "run"]

HELP = "crawl and re-extraction throughput with 1 and 2 workers, and the scaling ratio"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--copies",
        type=positive_int,
        default=4,
        metavar="K",
        help="enqueue each demo site K times (4)",
    )
    parser.add_argument(
        "--max-pages",
        type=nonnegative_int,
        default=60,
        metavar="N",
        help="page cap per site, 0 for no cap (60)",
    )
    parser.add_argument(
        "--workers",
        type=positive_ints(),
        default="1,2",
        metavar="LIST",
        help="crawl worker counts to time (1,2)",
    )
    parser.add_argument(
        "--dask-workers",
        type=positive_ints(),
        default="1,2",
        metavar="LIST",
        help="Dask worker counts to time (1,2)",
    )
    parser.add_argument(
        "--extractor",
        type=_extractor,
        default="nce",
        help="extractor of the re-extraction stage (nce)",
    )
    parser.add_argument(
        "--keep", type=new_or_folder, metavar="DIR", help="keep the crawl output in DIR"
    )


def _extractor(value: str) -> str:
    """An argparse type: a registered extractor, checked before redis and the demo web start
    (the re-extraction stage, which builds it, comes after the crawls)."""
    from newscrawl.extractors import EXTRACTORS

    if value not in EXTRACTORS:
        known = ", ".join(EXTRACTORS)
        raise argparse.ArgumentTypeError(f"unknown extractor {value!r} (known: {known})")
    return value


def run(args: argparse.Namespace) -> int:
    from newscrawl.scale.redis_server import LocalRedis, redis_server_binary

    if redis_server_binary() is None:
        print("bench scale: redis-server not found (apt-get install redis-server)", file=sys.stderr)
        return 2
    crawl_counts: list[int] = args.workers  # positive whole numbers: checked by the parser
    dask_counts: list[int] = args.dask_workers
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    with tempfile.TemporaryDirectory(prefix="newscrawl-scale-") as tmp:
        root = args.keep or Path(tmp)
        problem = make_folder(root)
        if problem:
            print(f"bench scale: --keep: {problem}", file=sys.stderr)
            return 2
        with LocalRedis(Path(tmp) / "redis") as redis, DemoServer(build_demo_web()) as demo:
            sites = _site_list(demo.site_urls, args.copies, root / "sites.csv")
            print(f"demo web: {len(demo.site_urls)} sites x {args.copies} copies = {sites} sites, "
                  f"cap {args.max_pages} pages; redis {redis.url}")  # fmt: skip
            crawl = {n: _crawl(n, redis.url, root, args) for n in crawl_counts}
        first = min(crawl_counts)
        _report("crawl", crawl, "pages")
        pages = root / f"crawl-{first}" / "pages"
        if not pages.is_dir():  # a crawl that stored nothing: say so, not FileNotFoundError
            print(f"bench scale: the {first}-worker crawl stored no pages", file=sys.stderr)
            return 1
        batch = _batch(pages, root, dask_counts, args.extractor)
        _report("re-extraction", batch, "pages")
    return 0


def _site_list(urls: dict[str, str], copies: int, path: Path) -> int:
    lines = ["url,name"]
    for name, url in urls.items():
        lines.extend(f"{url}/,{name}-{copy}" for copy in range(copies))
    path.write_text("\n".join(lines) + "\n")
    return len(lines) - 1


def _crawl(n: int, redis_url: str, root: Path, args: argparse.Namespace) -> tuple[float, int]:
    """Crawl the site list with `n` workers; (seconds, pages stored)."""
    from newscrawl.scale.redis_queue import SiteQueue

    run_id = f"scale{n}"
    out = root / f"crawl-{n}"
    queue = SiteQueue.from_url(redis_url, run_id)
    queue.clear()
    base = [sys.executable, "-m", "newscrawl.cli"]
    subprocess.run(
        [*base, "enqueue", str(root / "sites.csv"), "--redis", redis_url, "--run", run_id],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    command = [
        *base, "worker", "--redis", redis_url, "--run", run_id, "--out", str(out),
        "--max-pages", str(args.max_pages), "--allow-private", "loopback", "--poll", "0.3",
        "--log-level", "WARNING", "-s", "DOWNLOAD_DELAY=0", "-s", "AUTOTHROTTLE_ENABLED=False",
        "-s", "LOGSTATS_INTERVAL=0",
    ]  # fmt: skip
    started = time.perf_counter()
    logs = [(root / f"crawl-{n}-worker{i}.log").open("wb") for i in range(n)]
    workers = [
        subprocess.Popen([*command, "--worker-id", f"w{i}"], stdout=log, stderr=log)
        for i, log in enumerate(logs)
    ]
    codes = [worker.wait() for worker in workers]
    seconds = time.perf_counter() - started
    for log in logs:
        log.close()
    status = queue.status()
    if any(codes) or status.failed or status.queued:
        print(f"  crawl with {n} worker(s): exit codes {codes}, {status.counts}", file=sys.stderr)
    pages = sum(int(record.get("pages", 0)) for record in status.done.values())
    print(f"  crawl, {n} worker(s): {pages} pages, {len(status.done)} sites in {seconds:.1f}s")
    return seconds, pages


def _batch(
    pages: Path, root: Path, counts: list[int], extractor: str
) -> dict[int, tuple[float, int]]:
    from newscrawl.scale.dask_stages import (
        ReExtract,
        dask_client,
        read_output,
        run_stage,
        warm_up,
    )

    stage = ReExtract(extractor)
    reference = run_stage(stage, pages, root / "reextract-0")
    expected = read_output(root / "reextract-0").to_pylist()
    print(f"  re-extraction in this process: {reference.summary()}")
    results: dict[int, tuple[float, int]] = {}
    for n in counts:
        with dask_client("local", n_workers=n) as client:
            assert client is not None
            warm_up(client, stage)
            report = run_stage(stage, pages, root / f"reextract-{n}", client=client)
        same = read_output(root / f"reextract-{n}").to_pylist() == expected
        print(f"  re-extraction, {n} Dask worker(s): {report.summary()}; "
              f"{'matches' if same else 'DIFFERS FROM'} the in-process run")  # fmt: skip
        results[n] = (report.seconds, report.rows)
    return results


def _report(what: str, results: dict[int, tuple[float, int]], unit: str) -> None:
    base_n = min(results)
    base_seconds, base_count = results[base_n]
    base_rate = base_count / base_seconds if base_seconds else 0.0
    for n, (seconds, count) in sorted(results.items()):
        rate = count / seconds if seconds else 0.0
        ratio = rate / base_rate if base_rate else 0.0
        print(f"{what}: {n} worker(s) {rate:.1f} {unit}/s, scaling ratio {ratio:.2f}x "
              f"vs {base_n}")  # fmt: skip
