"""Put sites on a Redis queue for `newscrawl worker` processes.

SITES are what `newscrawl crawl` takes: site-list files (one start URL per line, or a CSV with
url, name and max_pages columns), start URLs, or `-` for a list on standard input. A site is
known by its name (its host, or the CSV's name): a site already enqueued in the run is not added
again, so the command can be repeated safely, e.g. by cron with a grown list.
"""

from __future__ import annotations

import argparse
import sys

from newscrawl.commands.cli_options import add_redis_arguments
from newscrawl.scale.sitelist import read_site_specs, site_payload

HELP = "put sites on a Redis queue for crawl workers"
# how long a Redis that is down may take to come back before enqueue gives up
WAIT_SECONDS = 10.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("sites", nargs="+", metavar="SITES", help="site URLs, site files or -")
    add_redis_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from newscrawl.crawl.discovery.site_lists import SiteListError
    from newscrawl.scale.redis_queue import (
        RedisRefused,
        RedisUnavailable,
        SiteQueue,
        check_redis,
        retry_redis,
    )

    try:
        specs = read_site_specs(args.sites)
    except SiteListError as exc:
        print(f"enqueue: {exc}", file=sys.stderr)
        return 2
    if not specs:
        print("enqueue: no sites given", file=sys.stderr)
        return 2
    entries = [(spec.name, site_payload(spec)) for spec in specs]
    # a site given twice (in a file and as a URL) is one site: the first payload wins
    sites = len({name for name, _ in entries})
    try:
        queue = SiteQueue.from_url(args.redis, args.run)
        check_redis(queue.client, args.redis, give_up_after=WAIT_SECONDS)
        added = retry_redis(
            lambda: queue.enqueue(entries), "enqueue sites", give_up_after=WAIT_SECONDS
        )
    except (ValueError, RedisRefused) as exc:
        print(f"enqueue: {exc}", file=sys.stderr)
        return 2
    except RedisUnavailable as exc:
        print(f"enqueue: {exc}", file=sys.stderr)
        return 1
    print(f"enqueued {len(added)} new site(s) of {sites} on run {args.run!r}")
    return 0
