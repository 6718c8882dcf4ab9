"""Fetch one page over HTTP(S) with the crawl's guards: what `newscrawl extract URL` reads.

The crawl's address guard (`newscrawl.crawl.middlewares.private`) decides every hop: the host's
addresses
are resolved and the request is refused when any of them is not public - loopback, private,
link-local - unless `allow_private` (the crawl's NEWSCRAWL_ALLOW_PRIVATE, --allow-private)
allows it; the connection then goes to the very address that was checked, so a name that
resolves differently the second time cannot slip through. Redirects are followed up to the
crawl's REDIRECT_MAX_TIMES, each one checked again, and only to http(s). A body over the crawl's
DOWNLOAD_MAXSIZE (declared or read) is refused, as is a response whose declared type is not
HTML. Every refusal is a `FetchError` with a one-line message.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from newscrawl import settings as crawl_defaults

__all__ = ["FetchError", "FetchedPage", "fetch_page", "is_page_url"]

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_CHUNK = 64 * 1024


class FetchError(Exception):
    """A page that could not be fetched, or that the crawl's guards refuse."""


@dataclass(frozen=True, slots=True)
class FetchedPage:
    """The page a URL led to: its address after redirects, body and Content-Type."""

    url: str
    final_url: str
    body: bytes
    content_type: str
    status: int


def is_page_url(arg: str) -> bool:
    """Whether a command-line argument is an http(s) URL rather than a path."""
    return arg.lower().startswith(("http://", "https://"))


def fetch_page(
    url: str,
    *,
    allow_private: Any = False,
    max_bytes: int = crawl_defaults.DOWNLOAD_MAXSIZE,
    timeout: float = crawl_defaults.DOWNLOAD_TIMEOUT,
    max_redirects: int = crawl_defaults.REDIRECT_MAX_TIMES,
) -> FetchedPage:
    """GET `url`, following redirects; raises `FetchError` (see the module docstring)."""
    from newscrawl.crawl.middlewares.private import AddressPolicy, parse_allow_private

    try:
        policy = AddressPolicy(parse_allow_private(allow_private))
    except ValueError as err:
        raise FetchError(f"--allow-private: {err}") from None
    current = url
    for _ in range(max_redirects + 1):
        response, connection = _request(current, policy, timeout)
        try:
            location = response.getheader("location")
            if response.status in _REDIRECTS and location:
                current = urljoin(current, location.strip())
                continue
            if response.status >= 400:
                raise FetchError(f"HTTP {response.status} {response.reason}".strip())
            content_type = response.getheader("content-type") or ""
            _check_html(content_type)
            body = _read_body(response, max_bytes)
            return FetchedPage(url, current, body, content_type, response.status)
        finally:
            connection.close()
    raise FetchError(f"more than {max_redirects} redirects")


def _request(
    url: str, policy: Any, timeout: float
) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise FetchError(f"not a URL: {url} ({err})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise FetchError(f"not an http(s) URL: {url}")
    address = _checked_address(url, parts.hostname, policy)
    connection: http.client.HTTPConnection
    if scheme == "https":
        connection = _PinnedHTTPS(parts.hostname, address, port or 443, timeout)
    else:
        connection = _PinnedHTTP(parts.hostname, address, port or 80, timeout)
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    headers = {
        "User-Agent": crawl_defaults.USER_AGENT,
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8",
        "Accept-Encoding": "gzip, deflate",
    }
    try:
        connection.request("GET", path, headers=headers)
        return connection.getresponse(), connection
    except (OSError, http.client.HTTPException) as err:
        connection.close()
        raise FetchError(f"cannot fetch {url}: {err}") from None


def _checked_address(url: str, host: str, policy: Any) -> str:
    """The address to connect to: the URL's own, or the first the host resolves to, once the
    crawl's guard has passed every address of the host."""
    from newscrawl.crawl.middlewares.private import _resolve, literal_address

    literal = literal_address(url)
    addresses = [literal] if literal is not None else _resolve(host)
    if not addresses:
        raise FetchError(f"cannot resolve {host}")
    refused = policy.refused_among(addresses)
    if refused is not None:
        raise FetchError(
            f"refused non-public address {refused} for {url} (allow it with --allow-private)"
        )
    return str(addresses[0])


class _PinnedHTTP(http.client.HTTPConnection):
    """An HTTP connection to the address the guard checked (the Host header is the name)."""

    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout)
        self.address = address

    def connect(self) -> None:
        self.sock = socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    """An HTTPS connection to the checked address; the certificate is verified for the name."""

    def __init__(self, host: str, address: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self.address = address

    def connect(self) -> None:
        sock = socket.create_connection((self.address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)  # type: ignore[attr-defined]


def _check_html(content_type: str) -> None:
    kind = content_type.split(";", 1)[0].strip().lower()
    if kind not in ("", "text/html", "application/xhtml+xml", "application/html"):
        raise FetchError(f"not an HTML page (Content-Type {kind})")


def _too_large(max_bytes: int) -> FetchError:
    return FetchError(f"the page is larger than the crawl's limit of {max_bytes:,} bytes")


def _read_body(response: http.client.HTTPResponse, max_bytes: int) -> bytes:
    """The body, decompressed, refused once over `max_bytes` (declared or as read)."""
    declared = response.getheader("content-length")
    if declared and declared.strip().isdigit() and int(declared) > max_bytes:
        raise _too_large(max_bytes)
    encoding = (response.getheader("content-encoding") or "").strip().lower()
    inflate = None
    if encoding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflate = zlib.decompressobj()
    body = bytearray()
    try:
        while chunk := response.read(_CHUNK):
            if inflate is not None:
                chunk = inflate.decompress(chunk, max_bytes + 1 - len(body))
            body += chunk
            if len(body) > max_bytes:
                raise _too_large(max_bytes)
    except (OSError, http.client.HTTPException, zlib.error) as err:
        raise FetchError(f"cannot read the page: {err}") from None
    return bytes(body)
