"""Put sites on a Redis queue for `newscrawl worker` processes.

SITES are what `newscrawl crawl` takes: site-list files (one start URL per line, or a CSV with
url, name and max_pages columns), start URLs, or `-` for a list on standard input. A site is
known by its name (its host, or the CSV's name): a site already enqueued in the run is not added
again, so the command can be repeated safely, e.g. by cron with a grown list.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

HELP = "put sites on a Redis queue for crawl workers"


def add_redis_arguments(parser: argparse.ArgumentParser) -> None:
    """--redis and --run, shared by enqueue, worker and status."""
    parser.add_argument(
        "--redis", required=True, metavar="URL", help="Redis server, e.g. redis://host:6379/0"
    )
    parser.add_argument(
        "--run",
        default="default",
        help="run id: a namespace for the queue, so several crawls can share one Redis",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sites", nargs="+", metavar="SITES", help="site URLs, site files or -")
    add_redis_arguments(parser)


def read_site_specs(sources: list[str]) -> list[Any]:
    """`SiteSpec`s from site-list files, URLs, or stdin (`-`); raises SiteListError."""
    from newscrawl.crawl.sites import parse_sites, read_sites

    specs: list[Any] = []
    for source in sources:
        if source == "-":
            specs.extend(parse_sites(sys.stdin.read(), "<stdin>"))
        else:
            specs.extend(read_sites(source))
    return specs


def payload(spec: Any) -> str:
    """What a worker needs to crawl the site, as the queue stores it."""
    return json.dumps({"name": spec.name, "url": spec.url, "max_pages": spec.max_pages})


def run(args: argparse.Namespace) -> int:
    from newscrawl.crawl.sites import SiteListError
    from newscrawl.distributed.queue import RedisUnavailable, SiteQueue, retry_redis

    try:
        specs = read_site_specs(args.sites)
    except SiteListError as exc:
        print(f"enqueue: {exc}", file=sys.stderr)
        return 2
    if not specs:
        print("enqueue: no sites given", file=sys.stderr)
        return 2
    entries = [(spec.name, payload(spec)) for spec in specs]
    try:
        queue = SiteQueue.from_url(args.redis, args.run)
        added = retry_redis(lambda: queue.enqueue(entries), "enqueue sites", give_up_after=10)
    except ValueError as exc:
        print(f"enqueue: {exc}", file=sys.stderr)
        return 2
    except RedisUnavailable as exc:
        print(f"enqueue: {exc}", file=sys.stderr)
        return 1
    print(f"enqueued {len(added)} new site(s) of {len(entries)} on run {args.run!r}")
    return 0
