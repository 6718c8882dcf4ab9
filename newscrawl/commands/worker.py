"""Run a crawl worker: lease sites from a Redis queue and crawl each one whole.

Start any number of workers, on any number of machines, against one Redis and one output root
(a shared disk when the machines differ). Each worker crawls one site at a time with newscrawl's
site spider and pipelines, publishes the finished site under OUT/DATASET/crawl=RUN/site=NAME/
and records it as done. A worker renews its lease while it crawls; a worker that dies loses its
lease after --lease seconds and the site goes to another worker. SIGTERM (docker stop) or
Ctrl-C hands the site back to the queue at once, then the worker stops; a worker that finds its
lease gone (it was out of touch longer than --lease) drops that site and takes the next. The
worker exits once the run has no site queued or leased (or waits for more with --forever,
which also waits for a run not enqueued yet). A Redis that refuses the worker's login, at start
or mid-run (a password changed), stops it with status 2: waiting cannot fix that.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from newscrawl.commands.cli_options import (
    add_allow_private_argument,
    add_max_pages_argument,
    add_redis_arguments,
    add_settings_arguments,
    add_warc_argument,
    option_settings,
)

HELP = "run a Redis-fed crawl worker"
# A Redis that is down when the worker starts may take this long to come up (as `enqueue`
# waits); an outage that starts mid-crawl is waited out without limit instead.
START_WAIT_SECONDS = 10.0
# A run enqueued by the same script that starts the workers may land a moment after them.
RUN_GRACE_SECONDS = 2.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_redis_arguments(parser)
    parser.add_argument("--out", required=True, metavar="DIR", help="shared output root")
    parser.add_argument(
        "--lease",
        type=float,
        default=300.0,
        metavar="SECONDS",
        help="lease of a site: a worker silent this long loses it (default: 300)",
    )
    parser.add_argument(
        "--max-attempts",
        type=int,
        default=3,
        metavar="N",
        help="a site whose lease ran out N times is marked failed (default: 3)",
    )
    add_max_pages_argument(parser)
    parser.add_argument("--worker-id", default=None, help="default: host-pid-random")
    parser.add_argument(
        "--forever", action="store_true", help="keep waiting for new sites once the run is done"
    )
    parser.add_argument(
        "--poll", type=float, default=1.0, metavar="SECONDS", help="wait between empty polls"
    )
    add_allow_private_argument(parser)
    add_warc_argument(parser)
    parser.add_argument(
        "--full",
        action="store_true",
        help="fetch every page again (default: incremental against earlier runs in OUT)",
    )
    add_settings_arguments(parser, "INFO", "Scrapy log level (default: INFO)")


def settings_for(args: argparse.Namespace, worker: str) -> dict[str, object]:
    """The Scrapy settings a worker runs with, on top of newscrawl's project settings."""
    from newscrawl.scale.shards import staging_root

    settings: dict[str, object] = {
        "REDIS_URL": args.redis,
        "NEWSCRAWL_RUN": args.run,
        "NEWSCRAWL_CRAWL_ID": args.run,
        "NEWSCRAWL_OUT_ROOT": args.out,
        "NEWSCRAWL_OUT": str(staging_root(args.out, worker)),
        # incremental like `newscrawl crawl`: earlier runs are in OUT, not in the staging folder
        "NEWSCRAWL_HISTORY_DIR": str(args.out),
        "NEWSCRAWL_INCREMENTAL": not args.full,
        "NEWSCRAWL_WORKER_ID": worker,
        "NEWSCRAWL_LEASE_SECONDS": args.lease,
        "NEWSCRAWL_MAX_ATTEMPTS": args.max_attempts,
        "NEWSCRAWL_POLL_SECONDS": args.poll,
        "NEWSCRAWL_WORKER_FOREVER": args.forever,
        "NEWSCRAWL_REDIS_MAX_BACKOFF": min(30.0, max(args.lease / 3, 1.0)),
        "DUPEFILTER_CLASS": "newscrawl.scale.worker_identity.SiteDupeFilter",
    }
    return {**settings, **option_settings(args)}


def check_numbers(args: argparse.Namespace) -> None:
    """ValueError unless --lease and --poll are finite and above 0, --max-attempts at least 1."""
    from newscrawl.scale.redis_queue import check_positive

    check_positive("--lease", args.lease)
    check_positive("--poll", args.poll)
    if args.max_attempts < 1:
        raise ValueError(f"--max-attempts must be at least 1, not {args.max_attempts}")


def start_log() -> logging.Logger:
    """Where the start checks warn: stderr, before Scrapy sets up logging."""
    log = logging.getLogger("newscrawl.worker.start")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("worker: %(message)s"))
        log.addHandler(handler)
        log.propagate = False
    return log


def check_queue(args: argparse.Namespace, wait: float = START_WAIT_SECONDS) -> None:
    """Refuse to start against a Redis that cannot serve the run: unreachable for `wait`
    seconds (RedisUnavailable; `-s NEWSCRAWL_REDIS_START_WAIT=SECONDS`), refusing us
    (RedisRefused), or without the run (LookupError) - instead of polling it forever. A
    --forever worker (a service started before anything is enqueued) waits for the run."""
    from newscrawl.scale.redis_queue import (
        SiteQueue,
        check_redis,
        retry_redis,
        run_missing_message,
        safe_url,
    )

    queue = SiteQueue.from_url(args.redis, args.run, lease_seconds=args.lease)
    log = start_log()
    check_redis(queue.client, args.redis, give_up_after=wait, log=log)
    deadline = time.monotonic() + RUN_GRACE_SECONDS
    told = False
    while not retry_redis(queue.exists, "check the run", log=log):
        if args.forever:
            if not told:
                log.warning("run %s is not in Redis at %s yet: waiting for `newscrawl "
                            "enqueue` (--forever)", args.run, safe_url(args.redis))  # fmt: skip
                told = True
            time.sleep(args.poll)
            continue
        if time.monotonic() >= deadline:
            raise LookupError(run_missing_message(args.run, args.redis))
        time.sleep(0.2)
    if told:
        log.warning("run %s enqueued: starting", args.run)


def run(args: argparse.Namespace) -> int:
    import os

    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "newscrawl.settings")
    from scrapy.crawler import CrawlerProcess
    from scrapy.utils.project import get_project_settings

    from newscrawl.crawl.checks import check_settings
    from newscrawl.scale.redis_queue import (
        RedisRefused,
        RedisUnavailable,
        check_run_id,
        run_missing_message,
    )
    from newscrawl.scale.worker_identity import worker_id
    from newscrawl.scale.worker_spider import REDIS_REFUSED_STAT, RUN_MISSING_STAT, RedisSiteSpider

    try:
        check_numbers(args)
        check_run_id(args.run)
        worker = args.worker_id or worker_id()
        overrides = settings_for(args, worker)
        check_settings(overrides)
        # a --set value comes as text, a default as a number: str() reads both
        wait = float(str(overrides.get("NEWSCRAWL_REDIS_START_WAIT", START_WAIT_SECONDS)))
        check_queue(args, wait)
    except (ValueError, LookupError, RedisRefused, RedisUnavailable) as exc:
        print(f"worker: {exc}", file=sys.stderr)
        return 2
    settings = get_project_settings()
    settings.setdict(overrides, priority="cmdline")
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(RedisSiteSpider)
    process.crawl(crawler)
    process.start()
    stats = crawler.stats
    refused = stats.get_value(REDIS_REFUSED_STAT) if stats is not None else None
    if refused:  # waiting cannot help, as at start
        print(f"worker: {refused}", file=sys.stderr)
        return 2
    if stats is not None and stats.get_value(RUN_MISSING_STAT):
        print(f"worker: {run_missing_message(args.run, args.redis)}", file=sys.stderr)
        return 1
    reason = stats.get_value("finish_reason") if stats else None
    return 0 if reason == "finished" else 1
