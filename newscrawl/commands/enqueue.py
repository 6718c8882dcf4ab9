"""Put sites on a Redis queue for `newscrawl worker` processes.

SITES are what `newscrawl crawl` takes: site-list files (one start URL per line, or a CSV with
url, name and max_pages columns), start URLs, or `-` for a list on standard input. A site is
known by its name (its host, or the CSV's name): a site already enqueued in the run is not added
again, so the command can be repeated safely, e.g. by cron with a grown list.
"""

from __future__ import annotations

import argparse
import sys

from newscrawl.cli_options import add_redis_arguments
from newscrawl.distributed.sitelist import read_site_specs, site_payload

HELP = "put sites on a Redis queue for crawl workers"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sites", nargs="+", metavar="SITES", help="site URLs, site files or -")
    add_redis_arguments(parser)


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
    entries = [(spec.name, site_payload(spec)) for spec in specs]
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
