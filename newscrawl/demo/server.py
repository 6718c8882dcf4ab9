"""Serve the demo web over real HTTP, one loopback address per site.

Every site gets its own address in 127.0.0.0/8 (Linux routes the whole block to the loopback
interface with no set-up) and all sites share one port, so each is a distinct host to a crawler -
distinct robots.txt, distinct politeness slot, distinct offsite domain - exactly like real sites.

The server is a threaded `http.server`: a slow response never blocks the others. It records every
request as ``(host, path, status)`` so tests can check what a crawler fetched (e.g. that it never
asked for a path robots.txt disallows).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import socketserver
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from newscrawl.demo.web import DemoArticle, DemoPage, DemoSite, DemoWeb

__all__ = ["DemoServer", "Request", "serve_pages"]

_NOT_FOUND = (
    b"<!DOCTYPE html><html><head><title>404 Not Found</title></head>"
    b"<body><h1>Not Found</h1><p>The page you asked for is not here.</p></body></html>"
)
_PORT_ATTEMPTS = 30
logger = logging.getLogger(__name__)


class Request(NamedTuple):
    """One logged request. `host` is "127.0.0.N:PORT"; `status` 0 means no response was sent."""

    host: str
    path: str
    status: int


@dataclass
class _SiteState:
    """What the handler of one listening address needs."""

    site: DemoSite
    base: bytes
    owner: DemoServer
    faults: object | None = None  # a `faults.FaultSite` when this is the fault site
    extra: dict[bytes, bytes] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server_version = "newscrawl-demo/1.0"
    protocol_version = "HTTP/1.1"
    timeout = 30  # seconds an idle kept-alive connection may hold its thread

    @property
    def state(self) -> _SiteState:
        return self.server.state  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: object) -> None:
        """Stay quiet: the request log is `DemoServer.requests`."""

    def do_GET(self) -> None:
        self._serve(head_only=False)

    def do_HEAD(self) -> None:
        self._serve(head_only=True)

    def record(self, status: int) -> None:
        self.state.owner.record(
            self.state.base.decode("ascii").split("//", 1)[1], self.path, status
        )

    def _serve(self, head_only: bool) -> None:
        faults = self.state.faults
        if faults is not None and faults.handle(self, head_only):  # type: ignore[attr-defined]
            return
        page = self.lookup(self.path)
        if page is None:
            self.send_body(404, "text/html; charset=utf-8", _NOT_FOUND, head_only)
            return
        if self._not_modified(page):
            self.record(304)
            self.send_response(304)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_body(
            page.status, page.content_type, self.fill(page.body), head_only, page.headers
        )

    def lookup(self, raw_path: str) -> DemoPage | None:
        """The page at the exact path and query, else at the path with the query dropped."""
        pages = self.state.site.pages
        page = pages.get(raw_path)
        if page is None:
            page = pages.get(urlsplit(raw_path).path)
        return page

    def fill(self, body: bytes) -> bytes:
        body = body.replace(b"{{BASE}}", self.state.base)
        for key, value in self.state.extra.items():
            body = body.replace(key, value)
        return body

    def _not_modified(self, page: DemoPage) -> bool:
        since = self.headers.get("If-Modified-Since")
        modified = page.headers.get("Last-Modified")
        if not since or not modified:
            return False
        try:
            return parsedate_to_datetime(modified) <= parsedate_to_datetime(since)
        except (TypeError, ValueError):
            return False

    def send_head(
        self,
        status: int,
        content_type: str,
        length: int,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Status line and headers; the body (of `length` bytes) is the caller's to write."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(length))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()

    def send_body(
        self,
        status: int,
        content_type: str,
        body: bytes,
        head_only: bool,
        headers: dict[str, str] | None = None,
        *,
        logged: bool = False,
    ) -> None:
        """A whole response; `logged` when the request was recorded already."""
        if not logged:
            self.record(status)
        try:
            self.send_head(status, content_type, len(body), headers)
            if not head_only:
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up; nothing to tell it


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64

    def __init__(self, address: tuple[str, int], state: _SiteState) -> None:
        self.state = state
        self.open_sockets: set[socket.socket] = set()
        self._sockets_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._sockets_lock:
            self.open_sockets.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._sockets_lock:
            self.open_sockets.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        """End kept-alive connections too, so nothing is served after `DemoServer.stop`."""
        with self._sockets_lock:
            sockets = list(self.open_sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def server_bind(self) -> None:
        """Bind without `HTTPServer`'s reverse DNS lookup of the address (it can stall)."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: object, client_address: object) -> None:
        """Clients that hang up mid-response are normal here (timeouts, resets, size caps);
        anything else is a bug in the demo server and is logged."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            logger.exception("demo server failed on a request from %s", client_address)


class DemoServer:
    """Serve a `DemoWeb`, each site on its own 127.0.0.N address and one shared port.

    With ``faults=True`` a fault site (see `newscrawl.demo.faults`) is served too, under the
    name "faults", plus an unlisted trap host (`trap_url`) that the fault site links to.
    """

    def __init__(
        self,
        web: DemoWeb,
        port: int = 0,
        hosts: list[str] | None = None,
        *,
        faults: bool = False,
        slow_seconds: float = 5.0,
        huge_bytes: int = 30_000_000,
    ) -> None:
        self.web = web
        self.requests: list[Request] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._servers: list[_Server] = []
        self.sites: list[DemoSite] = list(web.sites)
        self.fault_site = None
        if faults:
            from newscrawl.demo.faults import FaultSite

            self.fault_site = FaultSite(web.seed, self.stopping, slow_seconds, huge_bytes)
            self.sites.append(self.fault_site.site)
        count = len(self.sites) + (1 if faults else 0)
        self.hosts = list(hosts) if hosts else [f"127.0.0.{n}" for n in range(1, count + 1)]
        if len(self.hosts) < count:
            raise ValueError(f"need {count} host addresses, got {len(self.hosts)}")
        self.port = self._bind(port)
        self.site_urls = {
            site.name: f"http://{host}:{self.port}"
            for site, host in zip(self.sites, self.hosts, strict=False)
        }
        self.trap_url = f"http://{self.hosts[len(self.sites)]}:{self.port}" if faults else ""

    # -- set-up --------------------------------------------------------------------------

    def _states(self, port: int) -> list[tuple[str, _SiteState]]:
        states: list[tuple[str, _SiteState]] = []
        for site, host in zip(self.sites, self.hosts, strict=False):
            base = f"http://{host}:{port}".encode("ascii")
            faults = self.fault_site if site is getattr(self.fault_site, "site", None) else None
            states.append((host, _SiteState(site, base, self, faults)))
        if self.fault_site is not None:
            trap_host = self.hosts[len(self.sites)]
            trap_base = f"http://{trap_host}:{port}".encode("ascii")
            states.append((trap_host, _SiteState(self.fault_site.trap, trap_base, self)))
            states[len(self.sites) - 1][1].extra[b"{{TRAP}}"] = trap_base
        return states

    def _bind(self, port: int) -> int:
        """Bind every address on one port; with port 0, retry until a port is free on all."""
        last_error: OSError | None = None
        for _ in range(_PORT_ATTEMPTS if port == 0 else 1):
            candidate = port or _free_port(self.hosts[0])
            servers: list[_Server] = []
            try:
                for host, state in self._states(candidate):
                    servers.append(_Server((host, candidate), state))
            except OSError as err:
                last_error = err
                for server in servers:
                    server.server_close()
                continue
            self._servers = servers
            return candidate
        raise OSError(f"could not bind the demo web to one port on {self.hosts}: {last_error}")

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> DemoServer:
        for server in self._servers:
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.1},
                name=f"demo-{server.server_address[0]!s}",
                daemon=True,
            )
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes handlers sleeping in slow fault endpoints
        for server in self._servers:
            if self._threads:
                server.shutdown()
            server.server_close()
            server.drop_connections()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()

    def __enter__(self) -> DemoServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def set_web(self, web: DemoWeb) -> None:
        """Serve `web` from now on, on the same addresses and port (the demo web of a later
        day: `build_demo_web(seed, day=N)`); its sites must have the same names."""
        served = {state.site.name: server for server in self._servers if (state := server.state)}
        for site in web.sites:
            if site.name not in served:
                raise ValueError(f"the served web has no site named {site.name!r}")
        for site in web.sites:
            served[site.name].state.site = site
        fault = [self.fault_site.site] if self.fault_site is not None else []
        self.web, self.sites = web, [*web.sites, *fault]

    # -- queries -------------------------------------------------------------------------

    def record(self, host: str, path: str, status: int) -> None:
        with self._lock:
            self.requests.append(Request(host, path, status))

    def url_for(self, site_name: str, path: str) -> str:
        return self.site_urls[site_name] + path

    def gold(self) -> dict[str, DemoArticle]:
        """Absolute URL -> gold article, for every served site."""
        return {
            self.url_for(site.name, path): article
            for site in self.sites
            for path, article in site.articles.items()
        }

    def write_site_list(
        self,
        path: str | Path,
        names: list[str] | None = None,
        caps: dict[str, int] | None = None,
    ) -> Path:
        """A site-list CSV of the served sites (or of `names`) for `newscrawl crawl`, with a
        page cap per site where `caps` gives one."""
        caps = caps or {}
        rows = [
            f"{self.site_urls[name]}/,{name},{caps.get(name, '')}\n"
            for name in names or self.site_urls
        ]
        path = Path(path)
        path.write_text("url,name,max_pages\n" + "".join(rows))
        return path

    def requests_for(self, site_name: str) -> list[Request]:
        netloc = self.site_urls[site_name].split("//", 1)[1]
        with self._lock:
            return [r for r in self.requests if r.host == netloc]

    def site_of(self, url: str) -> DemoSite | None:
        netloc = urlsplit(url).netloc
        for site in self.sites:
            if self.site_urls[site.name].endswith("//" + netloc):
                return site
        return None


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class _PagesServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64  # the default 5 drops connections a crawl opens at once: 1 s retries


@contextlib.contextmanager
def serve_pages(host: str, page: Callable[[str], bytes | None]) -> Iterator[str]:
    """Serve on `host` (a free port) the HTML `page(path)` gives for each GET, 404 where it
    gives None; yields the start URL. For the benchmarks' single generated sites."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # kept-alive connections, as a real server's

        def do_GET(self) -> None:
            body = page(self.path.split("#", 1)[0])
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = _PagesServer((host, 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
