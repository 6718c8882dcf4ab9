"""A small web site on 127.0.0.1 for crawl tests: fixed answers per path, every request recorded.

`RecordingServer({"/": Answer(200, b"<html>...")})` serves each path's answer (404 for any
other path) from a thread of the test's process; `requested` lists the paths asked for, in
order. An answer may also hold headers, or be a callable that writes the response itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["HTML", "Answer", "RecordingServer"]

HTML = {"Content-Type": "text/html; charset=utf-8"}


@dataclass(frozen=True)
class Answer:
    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=lambda: dict(HTML))


Respond = Callable[[BaseHTTPRequestHandler], None]


class RecordingServer:
    """Serve `pages` (path -> Answer or a callable given the request handler) on 127.0.0.1."""

    def __init__(self, pages: Mapping[str, Answer | Respond]) -> None:
        self.pages = dict(pages)
        self.requested: list[str] = []
        served = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                served.requested.append(self.path)
                answer = served.pages.get(self.path, Answer(404, b"not found"))
                if callable(answer):
                    answer(self)
                    return
                self.send_response(answer.status)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                self.wfile.write(answer.body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> RecordingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
