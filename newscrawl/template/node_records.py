"""Compact per-page node records: what the template stage keeps of a page once it is parsed.

A crawl buffers up to ~200 pages per site before SiteLevel can label them, so the buffer must not
hold lxml trees. `PageNodes` keeps one numpy array per measure, indexed by the `Dom`'s preorder
node id: structure (parent, subtree end, depth, tag id), the counts the features need (text,
words, links, intra-site links, HTML characters), the node's content hash and its box. About
70 bytes a node: 200 pages of 3,000 nodes take about 40 MB.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from hashlib import blake2b
from urllib.parse import urlsplit

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.html.urls import host_site, site_of

__all__ = [
    "TAGS",
    "PageNodes",
    "is_intra_site",
    "node_hashes",
    "page_kind",
    "site_kind",
]

# Tag ids stored per node (0 = any other tag). Order is part of the nodes dataset: append only.
_TAG_NAMES = """
    html head body div span p a ul ol li table tbody thead tfoot tr td th h1 h2 h3 h4 h5 h6 img
    br hr form input button label nav header footer aside main article section figure
    figcaption blockquote pre code em strong b i u small font center dl dt dd time title meta
    link picture source video audio cite abbr sup sub caption iframe address
"""
TAGS: tuple[str, ...] = ("", *_TAG_NAMES.split())
_TAG_ID = {tag: i for i, tag in enumerate(TAGS)}
_BLOG_HOSTS = ("wordpress.com", "typepad.com", "tumblr.com", "livejournal.com", "substack.com")
_BLOG_ENGINES = ("wordpress", "blogger", "typepad", "movable type", "tumblr", "ghost")


def page_kind(url: str | None, generator: str = "") -> str:
    """Return "blog" or "news": the split of the study's training sites (20 blogs, 20 news sites).

    A heuristic, for sites nobody classified: "blog" in the host or path, a blog host
    (blogspot, wordpress.com, typepad, ...) or a blog engine in <meta name="generator">.
    """
    lowered = (url or "").lower()
    if "blog" in lowered or any(host in lowered for host in _BLOG_HOSTS):
        return "blog"
    generator = generator.lower()
    return "blog" if any(engine in generator for engine in _BLOG_ENGINES) else "news"


def is_intra_site(href: str, site: str) -> bool:
    """True when a link stays on `site`: relative links, and absolute ones to it or a subdomain.

    The two hosts also match when one is a subdomain of the other (news.example.org and
    example.org), since sites spread their sections over subdomains. Links with another
    scheme (mailto:, javascript:, tel:) do not stay.
    """
    href = href.strip()
    head = href[:12].lower()
    if head.startswith(("http://", "https://", "//")):
        host = href.split("//", 1)[1].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
        if host.isascii() and "@" not in host and "[" not in host and "\\" not in host:
            # the common case, without urlsplit (costly on link-heavy pages): a plain host,
            # maybe with a port
            host = host_site(host.split(":", 1)[0])
            return bool(site) and (
                host == site or host.endswith("." + site) or site.endswith("." + host)
            )
        try:
            host = urlsplit(href if head[0] != "/" else "http:" + href).hostname or ""
        except ValueError:  # a malformed address (e.g. a bad IPv6 literal)
            return False
        host = host_site(host)
        return bool(site) and (
            host == site or host.endswith("." + site) or site.endswith("." + host)
        )
    first = href.split("/", 1)[0]
    return ":" not in first  # relative (or empty, or #fragment): on the page's own host


def node_hashes(dom: Dom) -> np.ndarray:
    """A 64-bit content hash per node, Merkle style: equal hashes mean equal subtrees.

    A node's hash covers its tag, the text it owns directly (its text and its children's tails)
    and its children's hashes in order, so it stands for the whole subtree's tags and visible
    text. That is what SiteLevel needs (it hashes node *content*): a menu, sidebar box or
    footer repeated across a site's pages hashes to the same value on each page, while an article
    body - its text differs - gets a value seen once.

    Attributes are left out on purpose. Templates mark the current page in their own markup
    (class="active", aria-current, per-page ids, session tokens in hrefs), so with attributes
    in the hash the same menu stops colliding from page to page. On the development sites,
    adding id/class lowered the F of SiteLevel labels against gold-derived labels by 0.2-0.5
    points and adding href/src by 2-5 points. blake2b with an 8-byte digest is stable across
    processes and runs (Python's hash() is salted per process).

    Computed once per Dom and kept on it, read-only: the site pass reads a page's hashes for
    SiteLevel, the site's template and the learned extractor's template features.
    """
    found: np.ndarray | None = getattr(dom, "_node_hashes", None)
    if found is None:
        found = _node_hashes(dom)
        found.flags.writeable = False
        dom._node_hashes = found  # type: ignore[attr-defined]
    return found


def _node_hashes(dom: Dom) -> np.ndarray:
    count = len(dom)
    own_text: list[list[str] | None] = [None] * count  # most nodes own no text
    for owner, text in zip(dom.piece_owner, dom.piece_text, strict=True):
        texts = own_text[owner]
        if texts is None:
            own_text[owner] = [text]
        else:
            texts.append(text)
    digests: list[bytes] = [b""] * count
    tags, children, join = dom.tag, dom.children, b"".join
    for node in range(count - 1, -1, -1):  # children have larger ids: they are hashed first
        texts = own_text[node]
        owned = "\x03".join(texts) if texts is not None else ""
        data = f"{tags[node]}\x02{owned}\x02".encode("utf-8", "surrogatepass")
        kids = children[node]
        if kids:
            data += join([digests[c] for c in kids])
        digests[node] = blake2b(data, digest_size=8).digest()
    return np.frombuffer(join(digests), dtype="<u8").copy()


def _subtree_sums(dom: Dom) -> dict[str, np.ndarray]:
    """Per-node subtree counts as numpy prefix-sum differences (what `Dom` gives one node at a
    time, for all nodes at once)."""
    lengths = np.fromiter((len(t) for t in dom.piece_text), np.int64, len(dom.piece_text))
    words = np.fromiter((len(t.split()) for t in dom.piece_text), np.int64, len(dom.piece_text))
    in_link = np.asarray(dom.piece_in_link, dtype=bool)
    start = np.asarray(dom.piece_start, dtype=np.int64)
    stop = np.asarray(dom.piece_end, dtype=np.int64)

    def over_pieces(values: np.ndarray) -> np.ndarray:
        prefix = np.concatenate(([0], np.cumsum(values)))
        return (prefix[stop] - prefix[start]).astype(np.int32)

    is_link = np.fromiter((t == "a" for t in dom.tag), bool, len(dom))
    link_prefix = np.concatenate(([0], np.cumsum(is_link)))
    end = np.asarray(dom.end, dtype=np.int64)
    return {
        "text_len": over_pieces(lengths),
        "words": over_pieces(words),
        "link_chars": over_pieces(np.where(in_link, lengths, 0)),
        "link_words": over_pieces(np.where(in_link, words, 0)),
        "links": (link_prefix[end] - link_prefix[: len(dom)]).astype(np.int32),
    }


def _intra_links(dom: Dom, site: str) -> np.ndarray:
    """Intra-site <a href> count per subtree, from a prefix sum over the preorder ids."""
    count = len(dom)
    marks = np.zeros(count + 1, dtype=np.int32)
    seen: dict[str, bool] = {}
    for node, href in dom.href.items():
        if dom.elements[node].get("href") is None:
            continue  # a named anchor, not a link
        if href not in seen:
            seen[href] = is_intra_site(href, site)
        marks[node + 1] = seen[href]
    prefix = np.cumsum(marks)
    end = np.asarray(dom.end, dtype=np.int64)
    return (prefix[end] - prefix[:count]).astype(np.int32)


@dataclass(slots=True, eq=False)
class PageNodes:
    """One page's nodes as parallel numpy arrays, indexed by the `Dom`'s preorder node id.

    Subtree measures (`text_len`, `words`, `link_words`, `link_chars`, `links`, `intra_links`,
    `html_len`) count the whole subtree. `boxes` is float32 (n, 4): x, y, width, height in px.
    """

    url: str
    site: str
    kind: str  # "news" or "blog" (page_kind)
    parent: np.ndarray  # int32, -1 for the root
    end: np.ndarray  # int32: the subtree of i is ids [i, end[i])
    depth: np.ndarray  # int16
    tag: np.ndarray  # uint8, index into TAGS
    text_len: np.ndarray  # int32 visible characters
    words: np.ndarray  # int32
    link_words: np.ndarray  # int32 words inside <a>
    link_chars: np.ndarray  # int32 characters inside <a>
    links: np.ndarray  # int32 <a> elements
    intra_links: np.ndarray  # int32 <a href> staying on the site
    html_len: np.ndarray  # int32 characters of HTML
    hash: np.ndarray  # uint64 content hash (node_hashes)
    boxes: np.ndarray  # float32 (n, 4)
    geometry: str = "static"  # the provider the boxes came from (recorded in `nodes`)

    @classmethod
    def from_dom(
        cls,
        dom: Dom,
        url: str | None = None,
        *,
        site: str | None = None,
        boxes: np.ndarray | None = None,
        geometry: str = "flow",
        html: bytes | str | None = None,
        hashes: bool = True,
    ) -> PageNodes:
        """Records of every node of `dom`.

        `site` (host without "www.") decides which links are intra-site; it defaults to the
        host of `url`. `boxes` are taken as given (e.g. from a rendered page); without them the
        `geometry` provider computes them from the DOM (a rendering provider also uses `html`);
        either way `geometry` names where they came from.
        `hashes=False` leaves the content hashes at 0 (scoring needs none; SiteLevel does).
        """
        url = url if url is not None else (dom.url or "")
        site = site if site is not None else site_of(url)
        count = len(dom)
        if boxes is None:
            from newscrawl.template.geometry import get_geometry_provider

            boxes = get_geometry_provider(geometry).boxes(dom, html=html, url=url or None)
        boxes = np.asarray(boxes, dtype=np.float32).reshape(count, 4)
        sums = _subtree_sums(dom)
        return cls(
            url=url,
            site=site,
            kind=page_kind(url, dom.meta.get("generator", "")),
            parent=np.asarray(dom.parent, dtype=np.int32),
            end=np.asarray(dom.end, dtype=np.int32),
            depth=np.asarray(dom.depth, dtype=np.int16),
            tag=np.fromiter((_TAG_ID.get(t, 0) for t in dom.tag), dtype=np.uint8, count=count),
            **sums,
            intra_links=_intra_links(dom, site),
            html_len=np.asarray(dom.html_len, dtype=np.int32),
            hash=node_hashes(dom) if hashes else np.zeros(count, dtype=np.uint64),
            boxes=boxes,
            geometry=geometry,
        )

    def __len__(self) -> int:
        return len(self.parent)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (what buffering this page costs)."""
        return sum(
            getattr(self, f.name).nbytes
            for f in fields(self)
            if isinstance(getattr(self, f.name), np.ndarray)
        )

    @property
    def area(self) -> np.ndarray:
        """width x height of each node's box, px²."""
        return self.boxes[:, 2] * self.boxes[:, 3]


def site_kind(pages: Sequence[PageNodes]) -> str:
    """The kind most of the site's pages have ("blog" or "news"; ties go to "news")."""
    blogs = sum(page.kind == "blog" for page in pages)
    return "blog" if blogs * 2 > len(pages) else "news"
