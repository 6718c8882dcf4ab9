"""Never fetch private, loopback, link-local or otherwise non-public addresses (SSRF guard).

A page can link to, and a server can redirect to, ``http://169.254.169.254/`` or
``http://10.0.0.1/admin``; a crawler that follows those pokes at the network it runs in. This
downloader middleware runs first in the chain, so it sees every request the crawl sends:
links, redirects (the redirect middleware hands new requests back to the scheduler, and they
come through here again) and robots.txt fetches. It resolves the host name (every address, IPv4
and IPv6) and refuses the request if any address is not public. Once connected it checks the
address the response actually came from, which catches a name that resolved differently the
second time (DNS rebinding).

Setting ``NEWSCRAWL_ALLOW_PRIVATE``: False (default) refuses every non-public address; True
allows all; a list of networks (or a comma-separated string; "loopback" stands for 127.0.0.0/8
and ::1) allows just those, which is how the demo and the tests reach their servers on 127.0.0.x
while private links in their pages stay refused.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet import threads

from newscrawl.crawl.errors import refuse

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

__all__ = ["AddressPolicy", "PrivateAddressMiddleware", "literal_address", "parse_allow_private"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
_ALIASES = {"loopback": ("127.0.0.0/8", "::1/128")}
_CACHE_SIZE = 10_000


def parse_allow_private(value: Any) -> bool | tuple[Network, ...]:
    """The setting's value as True/False or a tuple of allowed networks."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("", "0", "false", "no", "off"):
            return False
        if text in ("1", "true", "yes", "on"):
            return True
        value = [v for v in text.replace(" ", ",").split(",") if v]
    if isinstance(value, int):
        return bool(value)
    networks: list[Network] = []
    for item in value:
        for name in _ALIASES.get(str(item).lower(), (str(item),)):
            networks.append(ipaddress.ip_network(name, strict=False))
    return tuple(networks)


class AddressPolicy:
    """Decides whether an address may be fetched."""

    def __init__(self, allow: bool | tuple[Network, ...] = False) -> None:
        self.allow_all = allow is True
        self.allowed: tuple[Network, ...] = allow if isinstance(allow, tuple) else ()

    def refuses(self, address: IPAddress) -> bool:
        if self.allow_all:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        if any(address in net for net in self.allowed if net.version == address.version):
            return False
        return not address.is_global or address.is_multicast

    def refused_among(self, addresses: Iterable[IPAddress]) -> IPAddress | None:
        return next((a for a in addresses if self.refuses(a)), None)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def literal_address(url: str) -> IPAddress | None:
    """The address a URL names without DNS: an IP literal, or loopback for "localhost"."""
    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return ipaddress.ip_address("127.0.0.1")
    return _literal(host)


def _resolve(host: str) -> list[IPAddress]:
    """Every address the system resolver gives for `host` (blocking: run in a thread)."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    found: list[IPAddress] = []
    for info in infos:
        try:
            found.append(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
        except ValueError:
            continue
    return found


class PrivateAddressMiddleware:
    """Downloader middleware: refuse requests and responses to non-public addresses."""

    def __init__(self, crawler: Crawler, policy: AddressPolicy) -> None:
        self.crawler = crawler
        self.policy = policy
        self._verdicts: dict[str, IPAddress | None] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PrivateAddressMiddleware:
        allow = parse_allow_private(crawler.settings.get("NEWSCRAWL_ALLOW_PRIVATE", False))
        return cls(crawler, AddressPolicy(allow))

    async def process_request(self, request: Request) -> None:
        if self.policy.allow_all:
            return
        host = urlparse_cached(request).hostname or ""
        address = literal_address(request.url)
        if address is not None:
            bad = address if self.policy.refuses(address) else None
        else:
            bad = await self._refused_for_name(host)
        if bad is not None:
            raise self._refusal(request, bad)

    def process_response(self, request: Request, response: Response) -> Response:
        address = getattr(response, "ip_address", None)
        if address is not None and not self.policy.allow_all and self.policy.refuses(address):
            raise self._refusal(request, address)
        return response

    async def _refused_for_name(self, host: str) -> IPAddress | None:
        if host in self._verdicts:
            return self._verdicts[host]
        addresses = await maybe_deferred_to_future(threads.deferToThread(_resolve, host))
        verdict = self.policy.refused_among(addresses)
        if len(self._verdicts) >= _CACHE_SIZE:
            self._verdicts.clear()
        self._verdicts[host] = verdict
        return verdict

    def _refusal(self, request: Request, address: IPAddress) -> Exception:
        message = f"refused non-public address {address}"
        if request.meta.get("redirect_urls"):
            message += f" (redirect from {request.meta['redirect_urls'][0]})"
        return refuse(
            self.crawler, "private_address", request.url, request.meta.get("site", ""), message
        )
