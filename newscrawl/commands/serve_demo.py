"""Serve the bundled demo web (two news sites and a blog, optionally the fault site) over HTTP.

Each site gets its own loopback address (127.0.0.1, 127.0.0.2, ...) on one shared port, so a
crawler sees distinct hosts. Serves until Ctrl-C.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from newscrawl.demo.server import DemoServer

HELP = "serve the bundled demo web on 127.0.0.1"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=0, help="port shared by all sites (default: any free port)"
    )
    parser.add_argument("--seed", type=int, default=4, help="seed of the generated web")
    parser.add_argument(
        "--day",
        type=int,
        default=0,
        metavar="N",
        help="serve the web as it is on day N: new articles each day, an article updated and "
        "an AMP duplicate from day 1, one site redesigned from day 1 (default: 0)",
    )
    parser.add_argument(
        "--faults", action="store_true", help="also serve the fault site (errors, traps, bombs)"
    )
    parser.add_argument(
        "--slow-seconds",
        type=float,
        default=5.0,
        help="how long the fault site's /slow endpoint hangs",
    )


def run(args: argparse.Namespace) -> int:
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    if threading.current_thread() is threading.main_thread():
        # started from a script's background job, SIGINT arrives ignored: Ctrl-C must still stop
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if args.day < 0:
        print("newscrawl serve-demo: --day must be 0 or more", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print("newscrawl serve-demo: --port must be 0 (any free port) to 65535", file=sys.stderr)
        return 2
    web = build_demo_web(args.seed, day=args.day)
    try:
        server = DemoServer(web, port=args.port, faults=args.faults, slow_seconds=args.slow_seconds)
    except OSError as err:  # the port is taken, or not ours to bind
        print(f"newscrawl serve-demo: cannot serve on port {args.port}: {err}", file=sys.stderr)
        return 1
    with server:
        try:  # Ctrl-C may come while the URLs are still being printed
            _print_urls(server)
            threading.Event().wait()
        except KeyboardInterrupt:
            print("stopped", flush=True)
    return 0


def _print_urls(server: DemoServer) -> None:
    for site in server.sites:
        print(
            f"{site.name:16} {server.site_urls[site.name]}/  "
            f"({len(site.pages)} pages, {len(site.articles)} articles)",
            flush=True,
        )
    if server.trap_url:
        print(f"{'(trap host)':16} {server.trap_url}/", flush=True)
    print("Serving; press Ctrl-C to stop.", flush=True)
