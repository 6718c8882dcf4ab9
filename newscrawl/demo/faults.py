"""The fault site: a small site whose links lead to everything that goes wrong on the real web.

`DemoServer(web, faults=True)` serves it as the site named "faults" on its own loopback address.
Its home page links to good articles (with gold, `FaultSite.site.articles`) and to these endpoints
(all listed in `FAULTS`, so a test can check that a crawl reported each one):

=================================  ==================  ===========================================
path or URL                        kind                behaviour
=================================  ==================  ===========================================
/articles/good-N.html              (good)              ordinary articles with gold text
/old/good-1                        redirect            301 to /articles/good-1.html
/error/500                         http-500            always 500 Internal Server Error
/busy/article.html                 retry-after         503 + ``Retry-After: 1`` on the first
                                                       `BUSY_FAILURES` requests (counted per
                                                       path), then 200 with a gold article
/missing.html                      not-found           404
/slow                              timeout             sleeps `slow_seconds` (5 s) before
                                                       answering; other requests go on meanwhile
/slow-body                         stalled-body        sends headers and half the body, stalls
                                                       `slow_seconds`, then the rest
/reset                             connection-reset    closes the socket with a TCP RST, no reply
/loop/a                            redirect-loop       302 to /loop/b, which 302s back to /loop/a
/huge.html                         too-large           30 MB of HTML, streamed (Content-Length
                                                       set, never held in memory)
/many-nodes.html                   too-many-nodes      9.9 MB of "<p>a" (2.5 million elements,
                                                       under the 10 MB download limit)
/binary.html                       binary              PNG magic + random bytes as text/html
/articles/mislabelled-latin1.html  wrong-charset       header and <meta> say iso-8859-1, bytes are
                                                       UTF-8; has gold
/articles/mislabelled-utf8.html    wrong-charset       header says utf-8, bytes are windows-1252;
                                                       has gold
/calendar/2024/05/                 calendar-trap       any /calendar/YYYY/MM/ links to the
                                                       previous and next month, forever
http://10.0.0.1/x                  private-link        link to a private (RFC 1918) address
http://192.168.1.1/                private-link        link to a home-router address
http://169.254.169.254/latest/...  private-link        link to the cloud metadata address
/go/metadata                       private-redirect    302 to
http://169.254.169.254/latest/meta-data
/go/router                         private-redirect    302 to http://192.168.1.1/admin
/go/file                           scheme-redirect     302 to file:///etc/passwd
/go/data                           scheme-redirect     302 to a data: URL holding a page
{{TRAP}}/trap.html                 offsite-loopback    link to another loopback host that is not
                                                       in the site list (served and logged, so a
                                                       test sees whether a crawler went there)
/private/secret.html               robots-disallowed   linked, but disallowed by robots.txt
/sitemap.xml                       xml-bomb            sitemap with a billion-laughs entity bomb
/feed.xml                          xxe                 RSS feed (linked with rel=alternate) whose
                                                       DOCTYPE declares an external entity
                                                       file:///etc/passwd
=================================  ==================  ===========================================
"""

from __future__ import annotations

import os
import random
import re
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from http.server import BaseHTTPRequestHandler
from typing import Any

from newscrawl.demo.text import StoryText, write_story
from newscrawl.demo.theme_views import block_html
from newscrawl.demo.web import DemoArticle, DemoPage, DemoSite

__all__ = ["BUSY_FAILURES", "FAULTS", "Fault", "FaultSite", "many_nodes_page"]

BUSY_FAILURES = 1
_MODIFIED = datetime(2024, 6, 1, 12, 0, tzinfo=UTC)
_CALENDAR = re.compile(r"^/calendar/(\d{1,4})/(\d{1,2})/?$")
_CHUNK = 64 * 1024
_HTML = "text/html; charset=utf-8"


@dataclass(frozen=True, slots=True)
class Fault:
    """One fault endpoint. `target` is a path on the fault site, or an absolute URL (which may
    start with the ``{{TRAP}}`` placeholder for the unlisted loopback host)."""

    target: str
    kind: str
    description: str

    def url(self, fault_base: str, trap_base: str = "") -> str:
        if self.target.startswith("{{TRAP}}"):
            return trap_base + self.target.removeprefix("{{TRAP}}")
        if self.target.startswith("http"):
            return self.target
        return fault_base + self.target


FAULTS: tuple[Fault, ...] = (
    Fault("/old/good-1", "redirect", "301 to a good article"),
    Fault("/error/500", "http-500", "always answers 500"),
    Fault(
        "/busy/article.html",
        "retry-after",
        f"503 with Retry-After: 1 for the first {BUSY_FAILURES} request(s), then a gold article",
    ),
    Fault("/missing.html", "not-found", "404"),
    Fault("/slow", "timeout", "sleeps slow_seconds before answering"),
    Fault("/slow-body", "stalled-body", "headers and half a body, then a stall"),
    Fault("/reset", "connection-reset", "TCP reset without any response"),
    Fault("/loop/a", "redirect-loop", "/loop/a -> /loop/b -> /loop/a ..."),
    Fault("/huge.html", "too-large", "30 MB of streamed HTML"),
    Fault("/many-nodes.html", "too-many-nodes", "9.9 MB of <p>a: 2.5 million elements"),
    Fault("/binary.html", "binary", "PNG bytes served as text/html"),
    Fault(
        "/articles/mislabelled-latin1.html", "wrong-charset", "declared iso-8859-1, bytes are UTF-8"
    ),
    Fault(
        "/articles/mislabelled-utf8.html", "wrong-charset", "declared utf-8, bytes are windows-1252"
    ),
    Fault("/calendar/2024/05/", "calendar-trap", "endless previous/next month links"),
    Fault("http://10.0.0.1/x", "private-link", "link to an RFC 1918 address"),
    Fault("http://192.168.1.1/", "private-link", "link to a router address"),
    Fault("http://169.254.169.254/latest/meta-data", "private-link", "link to cloud metadata"),
    Fault("/go/metadata", "private-redirect", "302 to http://169.254.169.254/latest/meta-data"),
    Fault("/go/router", "private-redirect", "302 to http://192.168.1.1/admin"),
    Fault("/go/file", "scheme-redirect", "302 to file:///etc/passwd"),
    Fault("/go/data", "scheme-redirect", "302 to a data: URL holding a page"),
    Fault("{{TRAP}}/trap.html", "offsite-loopback", "link to an unlisted loopback host"),
    Fault("/private/secret.html", "robots-disallowed", "linked but disallowed by robots.txt"),
    Fault("/sitemap.xml", "xml-bomb", "billion-laughs entity expansion in the sitemap"),
    Fault("/feed.xml", "xxe", "external entity file:///etc/passwd in the RSS feed"),
)

_REDIRECTS = {
    "/old/good-1": (301, "/articles/good-1.html"),
    "/loop/a": (302, "/loop/b"),
    "/loop/b": (302, "/loop/a"),
    "/go/metadata": (302, "http://169.254.169.254/latest/meta-data"),
    "/go/router": (302, "http://192.168.1.1/admin"),
    "/go/file": (302, "file:///etc/passwd"),
    "/go/data": (302, "data:text/html,%3Ch1%3ENot%20from%20the%20web%3C/h1%3E"),
}

_BILLION_LAUGHS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE urlset [
  <!ENTITY lol "lol">
  <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
  <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
  <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
  <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
  <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
  <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
  <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
  <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
  <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{{BASE}}/articles/good-2.html</loc><lastmod>2024-06-01</lastmod></url>
<url><loc>{{BASE}}/bomb/&lol9;</loc></url>
</urlset>
"""

_XXE_FEED = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE rss [
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
]>
<rss version="2.0">
<channel>
<title>Fault site feed</title>
<link>{{BASE}}/</link>
<description>&xxe;</description>
<item><title>Good article 3</title><link>{{BASE}}/articles/good-3.html</link>
<description>&xxe;</description></item>
</channel>
</rss>
"""


def _html(title: str, body: str, charset: str = "utf-8", meta_charset: str | None = None) -> str:
    meta = meta_charset or charset
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="{meta}">'
        f"<title>{escape(title)}</title>"
        '<link rel="alternate" type="application/rss+xml" href="{{BASE}}/feed.xml">'
        '</head>\n<body>\n<div class="top"><a href="/">Fault site</a> | '
        '<a href="/private/secret.html">Private</a></div>\n'
        f"{body}\n"
        '<div class="bottom">The newscrawl fault site. Everything here breaks on purpose.</div>\n'
        "</body></html>\n"
    )


def _article_html(
    story: StoryText,
    published: datetime,
    author: str,
    charset: str = "utf-8",
    meta_charset: str | None = None,
) -> str:
    paragraphs = "\n".join(block_html(block) for block in story.blocks)
    body = (
        f'<article><h1>{escape(story.title)}</h1><p class="byline">By {escape(author)}, '
        f'<time datetime="{published.isoformat()}">{published:%d %B %Y}</time></p>\n'
        f'<div class="text">\n{paragraphs}\n</div></article>\n'
        '<div class="links">See also: <a href="/articles/good-1.html">good 1</a> '
        '<a href="/articles/good-2.html">good 2</a></div>'
    )
    return _html(story.title, body, charset, meta_charset)


# The gold articles: (path, charset of the bytes, charset the header declares when it lies).
_ARTICLE_PLANS: tuple[tuple[str, str, str | None], ...] = (
    *((f"/articles/good-{n}.html", "utf-8", None) for n in range(1, 5)),
    ("/busy/article.html", "utf-8", None),
    ("/articles/mislabelled-latin1.html", "utf-8", "iso-8859-1"),
    ("/articles/mislabelled-utf8.html", "windows-1252", "utf-8"),
)


def many_nodes_page(size: int = 9_900_000) -> bytes:
    """`size` bytes of "<p>a" in a page: millions of elements in a page under 10 MB."""
    head, tail = b"<html><body>", b"</body></html>"
    return head + b"<p>a" * ((size - len(head) - len(tail)) // 4) + tail


def _fault_article(
    rng: random.Random, index: int, path: str, charset: str, declared: str | None
) -> tuple[DemoPage, DemoArticle]:
    """One gold article of the fault site, encoded in `charset`, declared as `declared`."""
    story = write_story(rng, "news", "city", accented=declared is not None)
    published = datetime(2024, 5, 1 + index * 3, 8, 15, tzinfo=UTC)
    author = f"Fault Desk {index + 1}"
    meta_charset = "iso-8859-1" if declared == "iso-8859-1" else None
    html = _article_html(story, published, author, declared or charset, meta_charset)
    if declared == "utf-8":  # the lie is in the header only; no <meta> to contradict
        html = html.replace('<meta charset="utf-8">', "")
    codec = "cp1252" if charset == "windows-1252" else charset
    content_type = f"text/html; charset={declared or charset}"
    page = DemoPage.dated(path, html.encode(codec), content_type, published, "article")
    article = DemoArticle(
        path, story.title, story.gold, published, author, "Faults", (), "link", charset
    )
    return page, article


class FaultSite:
    """Static pages and gold of the fault site, plus the per-request misbehaviour."""

    def __init__(
        self,
        seed: int,
        stopping: threading.Event,
        slow_seconds: float = 5.0,
        huge_bytes: int = 30_000_000,
    ) -> None:
        self.stopping = stopping
        self.slow_seconds = slow_seconds
        self.huge_bytes = huge_bytes
        self.counts: dict[str, int] = {}
        self._lock = threading.Lock()
        self._binary = b"\x89PNG\r\n\x1a\n" + random.Random(f"{seed}/binary").randbytes(50_000)
        self.site = self._build(random.Random(f"{seed}/faults"))
        self.trap = _trap_site()
        self.endpoints = self._endpoint_table()

    # -- static part ---------------------------------------------------------------------

    def _build(self, rng: random.Random) -> DemoSite:
        pages: dict[str, DemoPage] = {}
        articles: dict[str, DemoArticle] = {}
        for index, plan in enumerate(_ARTICLE_PLANS):
            page, article = _fault_article(rng, index, *plan)
            pages[page.path], articles[page.path] = page, article
        pages["/"] = self._home()
        pages["/private/secret.html"] = _page(
            "/private/secret.html",
            _html("Secret", "<p>Robots may not read this.</p>"),
            kind="private",
        )
        pages["/robots.txt"] = _page(
            "/robots.txt",
            "User-agent: *\nDisallow: /private/\n\nSitemap: {{BASE}}/sitemap.xml\n",
            "text/plain; charset=utf-8",
            "robots",
        )
        pages["/sitemap.xml"] = _page(
            "/sitemap.xml", _BILLION_LAUGHS, "application/xml; charset=utf-8", "sitemap"
        )
        pages["/feed.xml"] = _page(
            "/feed.xml", _XXE_FEED, "application/rss+xml; charset=utf-8", "feed"
        )
        return DemoSite(
            "faults",
            "news",
            pages,
            articles,
            ["/private/"],
            title="Fault site",
            theme="faults",
            feed="/feed.xml",
        )

    def _home(self) -> DemoPage:
        good = "".join(
            f'<li><a href="/articles/good-{n}.html">Good article {n}</a></li>' for n in range(1, 5)
        )
        faults = "".join(
            f'<li><a href="{escape(f.target)}">{escape(f.kind)}: {escape(f.description)}</a></li>'
            for f in FAULTS
            if f.kind not in ("xml-bomb", "xxe")
        )
        body = (
            f"<h1>Fault site</h1>\n<h2>Good pages</h2><ul>{good}</ul>\n"
            f"<h2>Bad pages</h2><ul>{faults}</ul>"
        )
        return _page("/", _html("Fault site", body), kind="home")

    # -- dynamic part --------------------------------------------------------------------

    def handle(self, handler: BaseHTTPRequestHandler, head_only: bool) -> bool:
        """Serve `handler.path` if it is a misbehaving endpoint; False lets the static pages
        answer."""
        path = handler.path.split("?", 1)[0]
        h: Any = handler
        if path in _REDIRECTS:
            status, location = _REDIRECTS[path]
            h.record(status)
            h.send_head(status, _HTML, 0, {"Location": location})
            return True
        endpoint = self.endpoints.get(path)
        if endpoint is not None:
            return endpoint(h, head_only)
        match = _CALENDAR.match(path)
        if match:
            return self._calendar(h, int(match.group(1)), int(match.group(2)), head_only)
        return False

    def _endpoint_table(self) -> dict[str, Callable[[Any, bool], bool]]:
        """Path -> handler(h, head_only) -> served (False: let the static page answer)."""
        return {
            "/error/500": self._error,
            "/busy/article.html": self._busy,
            "/reset": self._connection_reset,
            "/slow": self._slow,
            "/slow-body": self._slow_body,
            "/huge.html": self._huge,
            "/binary.html": self._binary_page,
            "/many-nodes.html": self._many_nodes,
        }

    def _count(self, path: str) -> int:
        with self._lock:
            self.counts[path] = self.counts.get(path, 0) + 1
            return self.counts[path]

    def _error(self, h: Any, head_only: bool) -> bool:
        body = b"<html><body><h1>Internal Server Error</h1></body></html>"
        h.send_body(500, _HTML, body, head_only)
        return True

    def _busy(self, h: Any, head_only: bool) -> bool:
        """503 with Retry-After for the first requests, then False: the static gold article."""
        if self._count("/busy/article.html") > BUSY_FAILURES:
            return False
        body = b"<html><body><h1>Busy, try again</h1></body></html>"
        h.send_body(503, _HTML, body, head_only, {"Retry-After": "1"})
        return True

    def _connection_reset(self, h: Any, head_only: bool) -> bool:
        h.record(0)
        _reset(h)
        return True

    def _binary_page(self, h: Any, head_only: bool) -> bool:
        h.send_body(200, _HTML, self._binary, head_only)
        return True

    def _many_nodes(self, h: Any, head_only: bool) -> bool:
        h.send_body(200, _HTML, many_nodes_page(), head_only)
        return True

    def _slow(self, h: Any, head_only: bool) -> bool:
        h.record(200)  # logged now: the client may give up before the answer
        if self.stopping.wait(self.slow_seconds):
            h.close_connection = True
            return True
        body = b"<html><body><h1>Finally</h1><p>This page took its time.</p></body></html>"
        h.send_body(200, _HTML, body, head_only, logged=True)
        return True

    def _slow_body(self, h: Any, head_only: bool) -> bool:
        h.record(200)
        body = ("<html><body>" + "<p>Trickle.</p>" * 200 + "</body></html>").encode()
        half = len(body) // 2
        try:
            h.send_head(200, _HTML, len(body))
            if head_only:
                return True
            h.wfile.write(body[:half])
            h.wfile.flush()
            if self.stopping.wait(self.slow_seconds):
                h.close_connection = True
                return True
            h.wfile.write(body[half:])
        except (BrokenPipeError, ConnectionResetError):
            h.close_connection = True
        return True

    def _huge(self, h: Any, head_only: bool) -> bool:
        h.record(200)
        try:
            h.send_head(200, _HTML, self.huge_bytes)
            if not head_only:
                for chunk in huge_chunks(self.huge_bytes):
                    if self.stopping.is_set():
                        break
                    h.wfile.write(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        h.close_connection = True
        return True

    def _calendar(self, h: Any, year: int, month: int, head_only: bool) -> bool:
        if not (1 <= year <= 9999 and 1 <= month <= 12):
            return False
        prev_y, prev_m = (year, month - 1) if month > 1 else (year - 1, 12)
        next_y, next_m = (year, month + 1) if month < 12 else (year + 1, 1)
        links = []
        if prev_y >= 1:
            links.append(f'<a rel="prev" href="/calendar/{prev_y}/{prev_m:02d}/">Previous</a>')
        if next_y <= 9999:
            links.append(f'<a rel="next" href="/calendar/{next_y}/{next_m:02d}/">Next</a>')
        body = _html(
            f"Events {year}-{month:02d}",
            f"<h1>Events in {year}-{month:02d}</h1><p>No events.</p><p>{' | '.join(links)}</p>",
        )
        h.send_body(200, _HTML, h.fill(body.encode()), head_only)  # {{BASE}} like any page
        return True


def huge_chunks(total: int) -> Iterator[bytes]:
    """Exactly `total` bytes of valid-looking HTML, produced one 64 KB chunk at a time."""
    head = b"<!DOCTYPE html><html><head><title>Huge page</title></head><body>\n"
    tail = b"</body></html>\n"
    unit = b"<p>" + b"This page never ends. " * 40 + b"</p>\n"
    units_per_chunk = max(1, _CHUNK // len(unit))
    block = unit * units_per_chunk
    remaining = total - len(head) - len(tail)
    if remaining < 0:
        yield (head + tail)[:total]
        return
    yield head
    while remaining >= len(block):
        yield block
        remaining -= len(block)
    while remaining >= len(unit):
        yield unit
        remaining -= len(unit)
    yield b" " * remaining + tail


def _page(path: str, text: str, content_type: str = _HTML, kind: str = "page") -> DemoPage:
    return DemoPage.dated(path, text.encode("utf-8"), content_type, _MODIFIED, kind)


def _trap_site() -> DemoSite:
    """The unlisted host: anything fetched here means a crawler left its allowed sites."""
    page = _html("Trap", "<h1>Off-site trap</h1><p>A crawler should never get here.</p>")
    pages = {
        "/": _page("/", page, kind="home"),
        "/trap.html": _page("/trap.html", page, kind="page"),
        "/robots.txt": _page(
            "/robots.txt", "User-agent: *\nDisallow:\n", "text/plain; charset=utf-8", "robots"
        ),
    }
    return DemoSite("trap", "news", pages, {}, [], title="Trap", theme="faults")


def _reset(handler: BaseHTTPRequestHandler) -> None:
    """Drop the connection with a TCP RST: linger 0, then close the descriptor ourselves
    (detached, so the handler's own clean-up cannot send a FIN first)."""
    sock: socket.socket = handler.connection
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    os.close(sock.detach())
    handler.close_connection = True
