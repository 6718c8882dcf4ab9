"""Show a crawl run on Redis: how many sites are queued, leased, done and failed, and which.

Each site is counted once, in the furthest state it reached; a worker whose last heartbeat is
older than its lease is shown as dead (a worker that stops cleanly leaves the list).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from newscrawl.commands.cli_options import add_redis_arguments

HELP = "show the Redis crawl queue"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_redis_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--counts", action="store_true", help="print only the counts, not the sites"
    )


def run(args: argparse.Namespace) -> int:
    import json

    from newscrawl.scale.redis_queue import (
        RedisRefused,
        RedisUnavailable,
        SiteQueue,
        check_redis,
        retry_redis,
    )

    try:
        queue = SiteQueue.from_url(args.redis, args.run)
        check_redis(queue.client, args.redis, give_up_after=5)
        status = retry_redis(queue.status, "read the queue status", give_up_after=5)
        known = queue.exists() or bool(status.workers)
        runs = [] if known else queue.runs()
    except (ValueError, RedisRefused) as exc:  # the command line is wrong: waiting cannot help
        print(f"status: {exc}", file=sys.stderr)
        return 2
    except RedisUnavailable as exc:
        print(f"status: {exc}", file=sys.stderr)
        return 1
    if not known:  # a mistyped --run would read as an empty run
        listed = ", ".join(runs) if runs else "none"
        print(f"status: no sites were ever enqueued in run {args.run!r} (runs: {listed})",
              file=sys.stderr)  # fmt: skip
        return 1
    if args.json:
        print(json.dumps(as_dict(status), indent=2, sort_keys=True))
    else:
        print(render(status, counts_only=args.counts))
    return 0


def as_dict(status: Any) -> dict[str, Any]:
    return {
        "run": status.run,
        "counts": status.counts,
        "drained": status.drained,
        "queued": status.queued,
        "leased": {
            site: {"worker": worker, "seconds_left": round(left, 1)}
            for site, (worker, left) in status.leased.items()
        },
        "done": status.done,
        "failed": status.failed,
        "workers": {w: round(ago, 1) for w, ago in status.workers.items()},
        "dead_workers": list(status.dead),
    }


def render(status: Any, *, counts_only: bool = False) -> str:
    counts = status.counts
    lines = [f"run {status.run}: " + ", ".join(f"{n} {state}" for state, n in counts.items())]
    if counts_only:
        return lines[0]
    if status.queued:
        lines.append(f"queued ({counts['queued']}):")
        lines.extend(f"  {site}" for site in status.queued)
    if status.leased:
        lines.append(f"leased ({counts['leased']}):")
        for site, (worker, left) in sorted(status.leased.items()):
            note = f"lease ends in {left:.0f}s" if left >= 0 else "lease EXPIRED"
            lines.append(f"  {site}  by {worker}, {note}")
    if status.done:
        lines.append(f"done ({counts['done']}):")
        for site, record in sorted(status.done.items()):
            extra = ", ".join(f"{k} {v}" for k, v in sorted(record.items()) if k != "worker")
            lines.append(
                f"  {site}  by {record.get('worker', '?')}" + (f" ({extra})" if extra else "")
            )
    if status.failed:
        lines.append(f"failed ({counts['failed']}):")
        lines.extend(f"  {site}  {reason}" for site, reason in sorted(status.failed.items()))
    if status.workers:
        lines.append("workers (last heartbeat):")
        for worker, ago in sorted(status.workers.items()):
            lines.append(_worker_line(worker, ago, worker in status.dead))
    return "\n".join(lines)


def _worker_line(worker: str, ago: float, dead: bool) -> str:
    return f"  {worker}  {ago:.0f}s ago" + ("  DEAD (silent longer than its lease)" if dead else "")
