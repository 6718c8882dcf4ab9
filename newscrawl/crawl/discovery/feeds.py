"""Page discovery from robots.txt, sitemaps and RSS/Atom feeds - parsed safely.

Sitemaps are read by Scrapy's own sitemap reader (`scrapy.utils.sitemap.Sitemap`, which
never resolves entities) once the checks below have passed; each listed page keeps its
``<lastmod>``, and each feed item its date, so an incremental crawl can tell what changed and
fetch the newest first.

XML from the open web can be hostile: "billion laughs" entity expansion, external entities that
read local files or reach the network, gigabyte gzip bombs. Sitemaps and feeds never need a
DTD, so a document that declares entities is refused outright (`UnsafeXmlError`), the parser
never resolves entities nor loads DTDs nor touches the network, libxml2's huge-tree mode stays
off, and gzip bodies are decompressed up to a size limit.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from operator import itemgetter

import lxml.etree
from scrapy.utils.sitemap import Sitemap
from w3lib.encoding import read_bom

from newscrawl.html.decoding import sniff_wide
from newscrawl.html.tree import mib

__all__ = [
    "SitemapLinks",
    "UnsafeXmlError",
    "feed_entries",
    "feed_links",
    "newest_first",
    "parse_date",
    "parse_feed",
    "parse_sitemap",
    "robots_sitemaps",
    "xml_text",
]

MAX_XML_BYTES = 50 * 1024 * 1024  # the sitemap protocol's own limit for one file
_ENTITY_DECL = re.compile(r"<!ENTITY", re.IGNORECASE)
_XML_DECL_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_EBCDIC_XML = b"\x4c\x6f\xa7\x94"
_ROBOTS_SITEMAP = re.compile(r"^\s*sitemap\s*:\s*(\S+)", re.IGNORECASE | re.MULTILINE)
_FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")


class UnsafeXmlError(ValueError):
    """An XML document refused: it declares entities (`kind` "unsafe_xml"), inflates past the
    size limit ("decompression_bomb"), is over it ("too_large") or is broken gzip
    ("broken_compression"); `kind` is the crawl summary's."""

    def __init__(self, message: str, kind: str = "unsafe_xml") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class SitemapLinks:
    """What a sitemap lists: pages (a urlset) or more sitemaps (a sitemap index), and the
    ``<lastmod>`` of those that give one."""

    pages: list[str]
    sitemaps: list[str]
    lastmod: dict[str, datetime] = field(default_factory=dict)


def _parser() -> lxml.etree.XMLParser:
    return lxml.etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        recover=True,
        remove_comments=True,
        remove_pis=True,
    )


def _gunzip(body: bytes, max_bytes: int) -> bytes:
    """Decompress a gzip body, refusing one that inflates past `max_bytes`."""
    with gzip.GzipFile(fileobj=io.BytesIO(body)) as stream:
        data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise UnsafeXmlError(f"gzip body inflates past {mib(max_bytes)}", "decompression_bomb")
    return data


def _root(body: bytes, max_bytes: int = MAX_XML_BYTES) -> lxml.etree._Element | None:
    return _checked(body, max_bytes)[0]


def _checked(
    body: bytes, max_bytes: int = MAX_XML_BYTES
) -> tuple[lxml.etree._Element | None, bytes]:
    """The parsed root (None: not XML) and the decompressed body, once the body passed the
    safety checks (raises UnsafeXmlError otherwise)."""
    if body[:2] == b"\x1f\x8b":
        try:
            body = _gunzip(body, max_bytes)
        except (OSError, EOFError) as err:
            raise UnsafeXmlError(f"broken gzip body: {err}", "broken_compression") from None
    if len(body) > max_bytes:
        raise UnsafeXmlError(f"XML body is over {mib(max_bytes)}", "too_large")
    if _ENTITY_DECL.search(xml_text(body)):
        raise _entities_refused()
    try:
        root = lxml.etree.fromstring(body, parser=_parser())
    except lxml.etree.XMLSyntaxError:
        return None, body
    # In any encoding the check above did not read, the parser's own view of the DTD decides.
    dtd = root.getroottree().docinfo.internalDTD if root is not None else None
    if dtd is not None and any(True for _ in dtd.iterentities()):
        raise _entities_refused()
    return root, body


def _entities_refused() -> UnsafeXmlError:
    return UnsafeXmlError("document declares XML entities (refused: entity expansion attack)")


def xml_text(body: bytes) -> str:
    """The decoded text of an XML document, as the XML spec finds its encoding: a byte-order
    mark, else UTF-16/32 from the NUL pattern of ``<?xml``, else the declaration's
    ``encoding``, else UTF-8. Bytes the encoding cannot map become U+FFFD."""
    bom_codec, bom = read_bom(body[:4])
    if bom_codec and bom:
        return body[len(bom) :].decode(bom_codec, "replace")
    codec = sniff_wide(body[:4096])
    if codec is None:
        head = body[:1024]
        if head.startswith(_EBCDIC_XML):  # "<?xm" in EBCDIC: read the declaration in cp037
            head = head.decode("cp037").encode("ascii", "replace")
        match = _XML_DECL_ENCODING.match(head)
        codec = match.group(1).decode("ascii") if match else "utf-8"
    try:
        return body.decode(codec, "replace")
    except LookupError:
        return body.decode("utf-8", "replace")


def _local(tag: object) -> str:
    return lxml.etree.QName(tag).localname.lower() if isinstance(tag, str) else ""


def _texts(root: lxml.etree._Element, parent: str, child: str) -> list[str]:
    """Text of every <child> directly inside a <parent>, any namespace."""
    found = []
    for el in root.iter():
        if _local(el.tag) != parent:
            continue
        for sub in el:
            if _local(sub.tag) == child and sub.text and sub.text.strip():
                found.append(sub.text.strip())
    return found


def parse_sitemap(body: bytes, max_bytes: int = MAX_XML_BYTES) -> SitemapLinks:
    """Page and sitemap URLs listed by a sitemap or sitemap index (plain or gzip), with their
    ``<lastmod>`` where given.

    A text sitemap (one URL per line, which the protocol also allows) works too.
    """
    root, body = _checked(body, max_bytes)
    if root is None:
        text = body.decode("utf-8", "replace")
        lines = [ln.strip() for ln in text.splitlines()]
        return SitemapLinks([ln for ln in lines if ln.startswith(("http://", "https://"))], [])
    try:  # handed over re-serialised (UTF-8): Scrapy's reader misses UTF-32 and EBCDIC
        entries = [e for e in Sitemap(lxml.etree.tostring(root)) if e.get("loc")]
    except (lxml.etree.XMLSyntaxError, StopIteration):
        entries = []
    urls = [entry["loc"] for entry in entries]
    lastmod = {e["loc"]: d for e in entries if (d := parse_date(e.get("lastmod"))) is not None}
    if _local(root.tag) == "sitemapindex":
        return SitemapLinks([], urls, lastmod)
    return SitemapLinks(urls, [], lastmod)


def parse_feed(body: bytes, max_bytes: int = MAX_XML_BYTES) -> list[str]:
    """Item links of an RSS 0.9x/1.0/2.0 or Atom feed."""
    return [url for url, _ in feed_entries(body, max_bytes)]


# Where a feed item says when it was written or last changed (RSS 2.0, Dublin Core, Atom).
_ITEM_DATES = ("updated", "modified", "pubdate", "date", "published", "issued")


def _entry_date(entry: lxml.etree._Element) -> datetime | None:
    """The newest date an item or entry gives (its last change, else its publication)."""
    found = [
        d
        for sub in entry
        if _local(sub.tag) in _ITEM_DATES and (d := parse_date(sub.text)) is not None
    ]
    return max(found) if found else None


def feed_entries(body: bytes, max_bytes: int = MAX_XML_BYTES) -> list[tuple[str, datetime | None]]:
    """(link, date) of each item of an RSS 0.9x/1.0/2.0 or Atom feed, in feed order."""
    root = _root(body, max_bytes)
    if root is None:
        return []
    entries: list[tuple[str, datetime | None]] = []
    for el in root.iter():
        kind = _local(el.tag)
        if kind == "item":
            links = [s.text.strip() for s in el if _local(s.tag) == "link" and s.text]
            links = links or [
                s.text.strip()
                for s in el
                if _local(s.tag) == "guid" and s.get("isPermaLink", "true") == "true" and s.text
            ]
        elif kind == "entry":
            links = [
                s.get("href").strip()
                for s in el
                if _local(s.tag) == "link"
                and s.get("rel", "alternate") == "alternate"
                and s.get("href")
            ]
        else:
            continue
        date = _entry_date(el)
        entries.extend((link, date) for link in links[:1] if link)
    return entries


def parse_date(text: str | None) -> datetime | None:
    """A sitemap (W3C datetime) or feed (RFC 822 or ISO 8601) date as an aware UTC datetime;
    None when there is none or it does not parse. A date without a zone is taken as UTC."""
    text = (text or "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        try:
            moment = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def robots_sitemaps(text: str) -> list[str]:
    """The Sitemap: URLs of a robots.txt."""
    return [m.group(1) for m in _ROBOTS_SITEMAP.finditer(text)]


def feed_links(link_elements: list[tuple[str, str, str]]) -> list[str]:
    """hrefs of feed <link rel="alternate" type="..."> elements, given (rel, type, href)."""
    return [
        href
        for rel, type_, href in link_elements
        if "alternate" in rel.lower().split()
        and type_.lower().split(";")[0].strip() in _FEED_TYPES
        and href
    ]


def newest_first(
    entries: Iterable[tuple[str, datetime | None]],
) -> list[tuple[str, datetime | None]]:
    """Sitemap or feed entries (url, date) newest first, undated ones last, ties in the listed
    order (so a page cap takes a site's latest pages)."""
    floor = datetime.min.replace(tzinfo=UTC)
    dated = sorted(((url, date or floor) for url, date in entries), key=itemgetter(1))
    return [(url, None if date == floor else date) for url, date in reversed(dated)]
