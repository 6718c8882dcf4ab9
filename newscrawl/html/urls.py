"""URL identity: canonical form, which site a URL belongs to, and crawler-trap shapes.

A crawl must fetch each page once however sites spell its links, so every URL the spider sees is
put in one canonical form (w3lib's, which Scrapy's fingerprints also use, plus default ports and
dot segments removed and tracking parameters dropped). A site is a host without "www." (and a
port when it is not the scheme's default); its subdomains belong to it, other hosts do not.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urljoin, urlsplit, urlunsplit

from w3lib.url import canonicalize_url, url_query_cleaner

__all__ = [
    "IGNORED_EXTENSIONS",
    "SiteScope",
    "absolute_url",
    "canonical_link",
    "canonical_url",
    "full_canonical_url",
    "has_ignored_extension",
    "host_site",
    "is_far_date_url",
    "site_of",
    "trap_reason",
    "url_shape",
    "usable_host",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}
# Query parameters that only say where a click came from: the same page either way.
_TRACKING = re.compile(
    r"^(utm_\w+|fbclid|gclid|dclid|gbraid|wbraid|msclkid|mc_cid|mc_eid|yclid|igshid|_hsenc|"
    r"_hsmi|mkt_tok|oly_anon_id|oly_enc_id|vero_id|_ga|_gl)$",
    re.IGNORECASE,
)
# File types that are never pages (Scrapy's list, plus feeds and fonts that pages link to).
IGNORED_EXTENSIONS = frozenset(
    {
        "7z",
        "7zip",
        "bz2",
        "rar",
        "tar",
        "gz",
        "xz",
        "zip",
        "mng",
        "pct",
        "bmp",
        "gif",
        "jpg",
        "jpeg",
        "png",
        "pst",
        "psp",
        "tif",
        "tiff",
        "ai",
        "drw",
        "dxf",
        "eps",
        "ps",
        "svg",
        "cdr",
        "ico",
        "webp",
        "avif",
        "mp3",
        "wma",
        "ogg",
        "wav",
        "ra",
        "aac",
        "mid",
        "au",
        "aiff",
        "3gp",
        "asf",
        "asx",
        "avi",
        "mov",
        "mp4",
        "mpg",
        "qt",
        "rm",
        "swf",
        "wmv",
        "m4a",
        "m4v",
        "flv",
        "webm",
        "xls",
        "xlsm",
        "xlsx",
        "ppt",
        "pptx",
        "pps",
        "doc",
        "docx",
        "odt",
        "ods",
        "odp",
        "css",
        "pdf",
        "exe",
        "bin",
        "rss",
        "dmg",
        "iso",
        "apk",
        "jar",
        "sh",
        "js",
        "json",
        "msi",
        "woff",
        "woff2",
        "ttf",
        "otf",
        "eot",
        "txt",
        "csv",
    }
)
# A URL already in canonical form for the common case: http(s), a lower-case host of letters,
# digits, dots and hyphens, no port, user, query or fragment, a path of unreserved characters
# (which w3lib neither quotes nor unquotes) without dot segments. canonical_url gives such a URL
# back as it is (a "/" added to an empty path): tests check it against the full rules on random
# URLs. It spares the full parse for most archived pages' URLs (and SiteScope.of its host).
_PLAIN_URL = re.compile(r"https?://(?P<host>[a-z0-9][a-z0-9.-]*)(?P<path>/[A-Za-z0-9._~/-]*)?")
_DIGITS = re.compile(r"\d+")
# A year and a month, as calendars put them in paths and queries: 2031/04, 1850-12, 2031_04.
_URL_YEAR = re.compile(r"(?<!\d)([1-9][0-9]{3})[-/_.](0[1-9]|1[0-2])(?!\d)")


def canonical_url(url: str) -> str:
    """One spelling per page: lower-case scheme and host, no default port, no fragment, dot
    segments resolved, tracking parameters dropped, query arguments sorted."""
    if (plain := _PLAIN_URL.fullmatch(url)) is not None and "/." not in url:
        return url if plain.group("path") else url + "/"
    return full_canonical_url(url)


def full_canonical_url(url: str) -> str:
    """`canonical_url` by the full rules, for every URL (what its shortcut must agree with)."""
    parts = urlsplit(url.strip())
    if parts.query:
        parts = urlsplit(_without_tracking(urlunsplit(parts)))
    scheme = parts.scheme.lower()
    netloc = parts.netloc.lower()
    if parts.port is not None and parts.port == _DEFAULT_PORTS.get(scheme):
        netloc = netloc.rsplit(":", 1)[0]
    path = parts.path or "/"
    if "/." in path:
        path = urlsplit(urljoin(f"{scheme}://{netloc}/", path)).path
    return canonicalize_url(urlunsplit((scheme, netloc, path, parts.query, "")))


def absolute_url(base: str, href: str) -> str | None:
    """`href` on a page whose base URL is `base`, joined and in canonical form; None when it is
    not an http(s) URL or cannot be parsed (`http://[::1`, a port out of range or not a
    number, `http://[]/`): one malformed link on a page names no page, and the page's other
    links are read as usual."""
    try:
        url = urljoin(base, href)
        if urlsplit(url).scheme not in ("http", "https"):
            return None
        return canonical_url(url)
    except ValueError:
        return None


def canonical_link(link_elements: Iterable[tuple[str, str, str]], base: str) -> str | None:
    """The page's ``<link rel="canonical">`` (given each <link>'s rel, type, href) in canonical
    form - AMP and print views point to the article's own URL there -, or None."""
    for rel, _, href in link_elements:
        if "canonical" in rel.lower().split() and href and (url := absolute_url(base, href)):
            return url
    return None


def _without_tracking(url: str) -> str:
    """`url` without its tracking parameters (w3lib's cleaner, given the names that match)."""
    query = urlsplit(url).query
    names = {k for k, _ in parse_qsl(query, keep_blank_values=True) if _TRACKING.match(k)}
    if not names:
        return url
    return url_query_cleaner(url, sorted(names), remove=True, unique=False, keep_fragments=True)


def has_ignored_extension(url: str) -> bool:
    path = urlsplit(url).path.lower()
    last = path.rsplit("/", 1)[-1]
    return "." in last and last.rsplit(".", 1)[-1] in IGNORED_EXTENSIONS


def url_shape(url: str) -> str:
    """The URL with every digit run replaced by 0 and query values by their shape: pages of one
    crawler trap (a calendar's months, a session id loop) share a shape."""
    parts = urlsplit(url)
    query = "&".join(sorted(f"{k}={_DIGITS.sub('0', v)}" for k, v in parse_qsl(parts.query)))
    return f"{parts.netloc}{_DIGITS.sub('0', parts.path)}?{query}"


def is_far_date_url(
    url: str, now: datetime | None = None, years_ahead: int = 1, oldest_year: int = 1990
) -> bool:
    """True when the URL names a year-and-month more than `years_ahead` years in the future or
    before `oldest_year`: what a calendar that links to next month forever ends up producing."""
    now = now or datetime.now(UTC)
    parts = urlsplit(url)
    for match in _URL_YEAR.finditer(f"{parts.path}?{parts.query}"):
        year = int(match.group(1))
        if year > now.year + years_ahead or year < oldest_year:
            return True
    return False


def host_site(host: str | None) -> str:
    """A host name as a site: lower-cased, without "www." (what `site_of` gives for a URL)."""
    return (host or "").lower().removeprefix("www.")


# A label of a host name as sites spell them (letters, digits, hyphens, underscores: no dots,
# no spaces, no control or percent-encoded characters); Unicode names come punycoded.
_HOST_LABEL = re.compile(r"[a-z0-9_-]{1,63}")


def usable_host(host: str | None) -> bool:
    """Whether `host` (a URL's lower-cased host name, without brackets or port) names a
    machine: an IP address, or a name of labels joined by dots (one final dot allowed) that
    has a letter or digit. "", ".", "..", names with empty labels, spaces, control characters
    or percent signs are none: a site named after them would be no site."""
    if not host or len(host) > 253:
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    return all(_HOST_LABEL.fullmatch(label) for label in labels) and any(c.isalnum() for c in host)


def site_of(url: str | None) -> str:
    """The site a URL belongs to: its host without "www.", lower-cased ("" when there is none).

    newscrawl's one site identity: the crawl's site scope, SiteLevel's intra-site links and
    the site of a saved page (`--site-from url`) all read a site through it."""
    if not url:
        return ""
    try:
        return host_site(urlsplit(url).hostname)
    except ValueError:  # a malformed address (e.g. a bad IPv6 literal)
        return ""


@dataclass(frozen=True, slots=True)
class SiteScope:
    """Which URLs belong to one site: its host without "www." and its subdomains, on the same
    port (so http and https of one site match, and 127.0.0.2:8000 is not 127.0.0.3:8000)."""

    host: str
    port: int | None = None

    @classmethod
    def of(cls, url: str) -> SiteScope:
        if (plain := _PLAIN_URL.fullmatch(url)) is not None:  # no port, the host as it stands
            return cls(host=host_site(plain.group("host")))
        parts = urlsplit(url)
        host = host_site(parts.hostname)
        port = parts.port if parts.port != _DEFAULT_PORTS.get(parts.scheme.lower()) else None
        return cls(host=host, port=port)

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme.lower() not in _DEFAULT_PORTS:
            return False
        try:
            port = parts.port
        except ValueError:
            return False
        if port == _DEFAULT_PORTS[parts.scheme.lower()]:
            port = None
        host = host_site(parts.hostname)
        return port == self.port and (host == self.host or host.endswith("." + self.host))

    @property
    def name(self) -> str:
        """A name safe for a folder: the host, with "_port" when the port is not the default."""
        return self.host if self.port is None else f"{self.host}_{self.port}"


def trap_reason(url: str, same_shape_hops: int, max_hops: int) -> str | None:
    """Why `url` looks like a crawler trap, or None: more than `max_hops` links in a row to
    pages of one URL shape (`url_shape`), or a far-off date in the URL (`is_far_date_url`)."""
    if same_shape_hops > max_hops:
        return f"{same_shape_hops} same-shape hops"
    return "far-off date" if is_far_date_url(url) else None
