"""A small web site served on 127.0.0.1 from a thread of the test process, for crawl tests."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["Answer", "SiteServer", "serve_site"]

# What the site answers for a path (with its query): (content type, body), or None for a 404.
Answer = tuple[str, bytes] | None


class SiteServer:
    """Serves `answer(path)` for every GET; `requested` lists the paths asked for, in order."""

    def __init__(self, answer: Callable[[str], Answer]) -> None:
        self.requested: list[str] = []
        self.answer = answer
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.requested.append(self.path)
                found = site.answer(self.path)
                if found is None:
                    self.send_error(404)
                    return
                content_type, body = found
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"


@contextmanager
def serve_site(answer: Callable[[str], Answer]) -> Iterator[SiteServer]:
    """A running `SiteServer`, shut down on exit."""
    served = SiteServer(answer)
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()
