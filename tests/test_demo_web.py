"""The demo web: deterministic pages with exact gold, served over real HTTP on 127.0.0.x, plus
the fault site whose endpoints misbehave on purpose."""

from __future__ import annotations

import hashlib
import http.client
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from urllib.parse import urljoin, urlsplit

import lxml.etree
import pytest

from newscrawl.demo.faults import BUSY_FAILURES, FAULTS, huge_chunks
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import DemoSite, DemoWeb, build_demo_web
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError

BASE = "http://example.test"
SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
ATOM_NS = "{http://www.w3.org/2005/Atom}"


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def web() -> DemoWeb:
    return build_demo_web(4)


@pytest.fixture(scope="module")
def links(web: DemoWeb) -> dict[str, set[str]]:
    """Site name -> every same-site path its HTML pages link to (parsed once per module)."""
    return {site.name: linked_paths(site) for site in web.sites}


@pytest.fixture(scope="module")
def server(web: DemoWeb) -> Iterator[DemoServer]:
    with DemoServer(web, faults=True, slow_seconds=3.0) as running:
        yield running


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # surface 3xx as HTTPError so tests see Location


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def fetch(
    url: str, method: str = "GET", timeout: float = 5.0, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, method=method, headers=headers or {})
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def filled(site: DemoSite, path: str) -> bytes:
    return site.pages[path].body.replace(b"{{BASE}}", BASE.encode())


def xml(site: DemoSite, path: str) -> lxml.etree._Element:
    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True)
    return lxml.etree.fromstring(filled(site, path), parser=parser)


def sitemap_paths(site: DemoSite) -> set[str]:
    """Paths of every <loc> reachable from /sitemap.xml, following a sitemap index."""
    found: set[str] = set()
    todo = ["/sitemap.xml"]
    while todo:
        root = xml(site, todo.pop())
        locs = [
            urlsplit(el.text).path + (f"?{q}" if (q := urlsplit(el.text).query) else "")
            for el in root.iter(f"{SITEMAP_NS}loc")
        ]
        if root.tag == f"{SITEMAP_NS}sitemapindex":
            todo += locs
        else:
            assert root.tag == f"{SITEMAP_NS}urlset"
            found.update(locs)
    return found


def feed_paths(site: DemoSite) -> set[str]:
    root = xml(site, site.feed)
    if root.tag == f"{ATOM_NS}feed":
        hrefs = [
            link.get("href")
            for entry in root.iter(f"{ATOM_NS}entry")
            for link in entry.iter(f"{ATOM_NS}link")
        ]
    else:
        assert root.tag == "rss"
        hrefs = [item.findtext("link") for item in root.iter("item")]
    return {urlsplit(h).path for h in hrefs}


def linked_paths(site: DemoSite) -> set[str]:
    """Every path an <a href> on an HTML page of the site points to (same host only)."""
    found: set[str] = set()
    for page in site.html_pages:
        dom = parse_html(page.body, content_type=page.content_type)
        for href in dom.href.values():
            if href.startswith("#"):
                continue  # a fragment link leads back to the page itself
            parts = urlsplit(urljoin(BASE + page.path, href.replace("{{BASE}}", BASE)))
            if parts.netloc == urlsplit(BASE).netloc:
                found.add(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found


# ---------------------------------------------------------------------------- the web itself


def test_same_seed_same_bytes_other_seed_other_text(web: DemoWeb) -> None:
    again = build_demo_web(4)
    for site, twin in zip(web.sites, again.sites, strict=True):
        assert site.pages.keys() == twin.pages.keys()
        assert all(site.pages[p].body == twin.pages[p].body for p in site.pages)
        assert site.articles == twin.articles
    other = build_demo_web(5)
    assert [a.text for a in other.sites[0].articles.values()] != [
        a.text for a in web.sites[0].articles.values()
    ]


def _digest(web: DemoWeb) -> str:
    digest = hashlib.sha256()
    for site in web.sites:
        for path in sorted(site.pages):
            digest.update(path.encode() + b"\0" + site.pages[path].body)
    return digest.hexdigest()


def test_same_bytes_in_another_process_with_another_hash_seed(web: DemoWeb) -> None:
    code = (
        "from tests.test_demo_web import _digest\n"
        "from newscrawl.demo.web import build_demo_web\n"
        "print(_digest(build_demo_web(4)))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    )
    assert out.stdout.strip() == _digest(web)


def test_sites_are_big_enough_and_mostly_articles(web: DemoWeb) -> None:
    assert len(web.sites) >= 3
    assert {s.kind for s in web.sites} == {"news", "blog"}
    for site in web.sites:
        html = site.html_pages
        articles = [p for p in html if p.kind == "article"]
        assert len(html) >= 60, site.name
        assert len(articles) > len(html) / 2
        assert set(site.articles) == {p.path for p in articles}
        assert {"home", "listing", "about", "robots", "feed", "sitemap"} <= {
            p.kind for p in site.pages.values()
        }
        lengths = sorted(len(a.text) for a in site.articles.values())
        assert lengths[-1] > 4 * lengths[0], "article lengths should vary"


def test_each_site_has_its_own_template(web: DemoWeb) -> None:
    markers = {
        "table": b'class="storytext"',
        "div": b'class="story-body"',
        "html5": b'class="entry-content"',
    }
    for site in web.sites:
        for page in site.html_pages:
            if page.kind == "article":
                assert markers[site.theme] in page.body
                others = [m for theme, m in markers.items() if theme != site.theme]
                assert not any(m in page.body for m in others)


def test_gold_text_is_what_the_article_page_shows(web: DemoWeb) -> None:
    for site in web.sites:
        for path, article in site.articles.items():
            page = site.pages[path]
            dom = parse_html(page.body, content_type=page.content_type)
            shown = " ".join(dom.text(dom.body).split())
            paragraphs = article.text.split("\n\n")
            assert all(p and p == " ".join(p.split()) for p in paragraphs)
            assert "{" not in article.text and "}" not in article.text  # grammar fully expanded
            for paragraph in paragraphs:
                assert paragraph in shown, (site.name, path, paragraph)
            assert article.title in shown
            assert article.author in shown
            # the body is not the whole page: boxes, comments and menus are outside the gold
            assert len(article.text) < 0.9 * len(shown)


def test_gold_markdown_has_the_structures_and_the_gold_words(web: DemoWeb) -> None:
    """Every article's gold Markdown holds its gold text's words in order; across the web
    there are tables with and without a header, numbered lists, code blocks and headings."""
    from test_markdown import words

    seen: set[str] = set()
    for site in web.sites:
        for article in site.articles.values():
            assert words(article.markdown) == words(article.text, markdown=False)
            markdown = article.markdown
            seen.update(
                kind
                for kind, mark in (
                    ("header", "| Place |"), ("headless", "|  |"), ("ol", "\n1. "),
                    ("code", "```\ndef plan():\n    first"), ("blank", "\n\n    return"),
                    ("heading", "## "),
                )
                if mark in markdown
            )  # fmt: skip
    assert seen == {"header", "headless", "ol", "code", "blank", "heading"}


def test_comment_threads_are_not_gold(web: DemoWeb) -> None:
    threads = 0
    for site in web.sites:
        for path, article in site.articles.items():
            body = site.pages[path].body
            if b'class="comment' in body or b'class="chead"' in body:
                threads += 1
                assert "wrote on" not in article.text and "says:" not in article.text
    assert threads >= 30


def test_some_pages_are_windows_1252_and_decode(web: DemoWeb) -> None:
    legacy = [a for s in web.sites for a in s.articles.values() if a.charset == "windows-1252"]
    assert len(legacy) >= 5
    site = web.site("harbor-gazette")
    for article in legacy:
        page = site.pages[article.path]
        assert page.content_type == "text/html; charset=windows-1252"
        assert b"charset=windows-1252" in page.body[:300]
        with pytest.raises(UnicodeDecodeError):
            page.body.decode("utf-8")
        accented = [p for p in article.text.split("\n\n") if not p.isascii()]
        assert accented
        dom = parse_html(page.body, content_type=page.content_type)
        assert accented[0] in " ".join(dom.text(dom.body).split())


def test_robots_disallow_paths_that_pages_link_to(web: DemoWeb, links: dict[str, set[str]]) -> None:
    for site in web.sites:
        robots = site.pages["/robots.txt"].body.decode()
        for prefix in site.disallowed:
            assert f"Disallow: {prefix}" in robots
        assert "Sitemap: {{BASE}}/sitemap.xml" in robots
        linked = links[site.name]
        for prefix in site.disallowed:
            assert any(p.startswith(prefix) for p in linked), (site.name, prefix)


def test_sitemap_and_feed_only_articles(web: DemoWeb, links: dict[str, set[str]]) -> None:
    for site in web.sites:
        in_sitemap, in_feed, linked = sitemap_paths(site), feed_paths(site), links[site.name]
        only_sitemap, only_feed = site.discovered_by("sitemap"), site.discovered_by("feed")
        assert len(only_sitemap) >= 3 and len(only_feed) >= 3
        for path in only_sitemap:
            assert path in in_sitemap and path not in in_feed and path not in linked
        for path in only_feed:
            assert path in in_feed and path not in in_sitemap and path not in linked
        for path in site.discovered_by("link"):
            assert path in linked
        home = site.pages["/"].body
        assert b'rel="alternate"' in home and site.feed.encode() in home
        assert in_sitemap <= set(site.pages), "sitemap lists only pages that exist"


# ---------------------------------------------------------------------------- real HTTP


def test_each_site_is_its_own_loopback_host(server: DemoServer, web: DemoWeb) -> None:
    hosts = {urlsplit(url).hostname for url in server.site_urls.values()}
    assert len(hosts) == len(web.sites) + 1  # + the fault site
    assert all(h.startswith("127.0.0.") for h in hosts)
    assert len({urlsplit(url).port for url in server.site_urls.values()}) == 1
    for site in web.sites:
        status, headers, body = fetch(server.url_for(site.name, "/"))
        assert status == 200
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        assert "Last-Modified" in headers
        assert b"{{BASE}}" not in body
        assert f'href="{server.site_urls[site.name]}{site.feed}"'.encode() in body


def test_gold_urls_serve_their_articles(server: DemoServer) -> None:
    gold = server.gold()
    assert len(gold) == sum(len(s.articles) for s in server.sites)
    for url in list(gold)[::25]:
        status, headers, body = fetch(url)
        assert status == 200
        dom = parse_html(body, url=url, content_type=headers["Content-Type"])
        shown = " ".join(dom.text(dom.body).split())
        assert gold[url].text.split("\n\n")[0] in shown
        assert f'<link rel="canonical" href="{url}">'.encode() in body


def test_head_404_query_fallback_and_conditional_get(server: DemoServer, web: DemoWeb) -> None:
    site = web.sites[1]
    url = server.url_for(site.name, "/robots.txt")
    status, headers, body = fetch(url, method="HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    assert fetch(server.url_for(site.name, "/no/such/page"))[0] == 404
    assert fetch(server.url_for(site.name, "/search?q=anything"))[0] == 200
    modified = fetch(url)[1]["Last-Modified"]
    assert fetch(url, headers={"If-Modified-Since": modified})[0] == 304


def test_request_log_records_host_path_status(server: DemoServer, web: DemoWeb) -> None:
    site = web.sites[2]
    fetch(server.url_for(site.name, "/private/"))
    fetch(server.url_for(site.name, "/nothing-here"))
    log = server.requests_for(site.name)
    netloc = urlsplit(server.site_urls[site.name]).netloc
    assert (netloc, "/private/", 200) in log
    assert (netloc, "/nothing-here", 404) in log


def test_two_servers_at_once_get_different_ports(web: DemoWeb) -> None:
    with DemoServer(web) as one, DemoServer(web) as two:
        assert one.port != two.port
        assert fetch(one.url_for("field-notes", "/"))[0] == 200
        assert fetch(two.url_for("field-notes", "/"))[0] == 200


# ---------------------------------------------------------------------------- the fault site


def fault(server: DemoServer, path: str, **kwargs: object) -> tuple[int, dict[str, str], bytes]:
    return fetch(server.url_for("faults", path), **kwargs)  # type: ignore[arg-type]


def test_fault_home_links_every_endpoint(server: DemoServer) -> None:
    status, _, body = fault(server, "/")
    assert status == 200
    hrefs = set(parse_html(body).href.values())
    base, trap = server.site_urls["faults"], server.trap_url
    for item in FAULTS:
        if item.kind in ("xml-bomb", "xxe"):
            continue  # found through robots.txt and <link rel="alternate">
        target = item.url(base, trap)
        assert target.removeprefix(base) in hrefs or target in hrefs, item
    assert b"{{" not in body
    assert {f.kind for f in FAULTS} >= {
        "http-500",
        "retry-after",
        "timeout",
        "connection-reset",
        "redirect-loop",
        "too-large",
        "binary",
        "wrong-charset",
        "calendar-trap",
        "private-link",
        "private-redirect",
        "offsite-loopback",
        "xml-bomb",
        "xxe",
    }


def test_500_and_404(server: DemoServer) -> None:
    assert fault(server, "/error/500")[0] == 500
    assert fault(server, "/missing.html")[0] == 404


def test_503_with_retry_after_then_success(server: DemoServer) -> None:
    for _ in range(BUSY_FAILURES):
        status, headers, _ = fault(server, "/busy/article.html")
        assert status == 503 and headers["Retry-After"] == "1"
    status, headers, body = fault(server, "/busy/article.html")
    assert status == 200
    gold = server.gold()[server.url_for("faults", "/busy/article.html")]
    dom = parse_html(body, content_type=headers["Content-Type"])
    assert gold.text.split("\n\n")[0] in " ".join(dom.text(dom.body).split())


def test_redirect_loop_and_private_redirects(server: DemoServer) -> None:
    status, headers, _ = fault(server, "/loop/a")
    assert status == 302 and headers["Location"] == "/loop/b"
    status, headers, _ = fault(server, "/loop/b")
    assert status == 302 and headers["Location"] == "/loop/a"
    assert fault(server, "/go/metadata")[1]["Location"].startswith("http://169.254.169.254/")
    assert fault(server, "/go/router")[1]["Location"].startswith("http://192.168.1.1/")
    assert fault(server, "/old/good-1")[1]["Location"] == "/articles/good-1.html"


def test_reset_closes_without_a_response(server: DemoServer) -> None:
    parts = urlsplit(server.site_urls["faults"])
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
    connection.request("GET", "/reset")
    with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
        connection.getresponse()
    connection.close()
    assert (parts.netloc, "/reset", 0) in server.requests


def test_binary_body_is_refused_by_the_parser(server: DemoServer) -> None:
    status, headers, body = fault(server, "/binary.html")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert body.startswith(b"\x89PNG")
    with pytest.raises(PageError):
        parse_html(body, content_type=headers["Content-Type"])


def test_wrong_charset_pages_still_decode_to_gold(server: DemoServer) -> None:
    gold = server.gold()
    for path, declared in (
        ("/articles/mislabelled-latin1.html", "iso-8859-1"),
        ("/articles/mislabelled-utf8.html", "utf-8"),
    ):
        url = server.url_for("faults", path)
        status, headers, body = fetch(url)
        assert status == 200 and headers["Content-Type"] == f"text/html; charset={declared}"
        dom = parse_html(body, content_type=headers["Content-Type"])
        shown = " ".join(dom.text(dom.body).split())
        assert not gold[url].text.isascii()
        for paragraph in gold[url].text.split("\n\n"):
            assert paragraph in shown


def test_calendar_trap_never_ends(server: DemoServer) -> None:
    path = "/calendar/2024/05/"
    for _ in range(3):
        body = fault(server, path)[2]
        assert b"{{" not in body  # its feed link is absolute like every page's
        dom = parse_html(body)
        nexts = [h for h in dom.href.values() if h.startswith("/calendar/")]
        assert len(nexts) == 2
        path = nexts[-1]
    assert path == "/calendar/2024/08/"
    assert fault(server, "/calendar/9999/12/")[0] == 200
    assert fault(server, "/calendar/2024/13/")[0] == 404


def test_slow_endpoint_does_not_block_others(server: DemoServer) -> None:
    with pytest.raises((TimeoutError, urllib.error.URLError)):
        fault(server, "/slow", timeout=0.3)
    stalled: list[BaseException] = []

    def read_stalled_body() -> None:
        try:
            fault(server, "/slow-body", timeout=1.5)
        except (TimeoutError, urllib.error.URLError) as err:
            stalled.append(err)

    worker = threading.Thread(target=read_stalled_body)
    worker.start()
    assert fault(server, "/")[0] == 200
    assert not stalled, "served while the stalled body was still being read (1.5 s to give up)"
    worker.join(timeout=5)
    assert stalled, "the stalled body should time out the reader"


def test_huge_page_headers_and_exact_stream() -> None:
    assert sum(len(c) for c in huge_chunks(30_000_000)) == 30_000_000
    small = b"".join(huge_chunks(200_000))
    assert len(small) == 200_000 and small.endswith(b"</html>\n")
    assert b"".join(huge_chunks(10)) == b"<!DOCTYPE "


def test_huge_page_is_announced_in_headers(server: DemoServer) -> None:
    status, headers, body = fault(server, "/huge.html", method="HEAD")
    assert status == 200 and headers["Content-Length"] == "30000000" and body == b""


def test_bomb_sitemap_and_xxe_feed(server: DemoServer) -> None:
    robots = fault(server, "/robots.txt")[2].decode()
    assert "Disallow: /private/" in robots and "/sitemap.xml" in robots
    sitemap = fault(server, "/sitemap.xml")[2]
    assert b"<!ENTITY lol9" in sitemap
    # A safe parser (Scrapy's sitemap settings) survives the bomb and keeps the good entry.
    safe = lxml.etree.XMLParser(resolve_entities=False, no_network=True, recover=True)
    root = lxml.etree.fromstring(sitemap, parser=safe)
    assert len(lxml.etree.tostring(root)) < 10_000  # no entity expanded
    locs = [el.text for el in root.iter(f"{SITEMAP_NS}loc")]
    assert server.url_for("faults", "/articles/good-2.html") in locs
    feed = fault(server, "/feed.xml")[2]
    assert b'SYSTEM "file:///etc/passwd"' in feed
    root = lxml.etree.fromstring(feed, parser=safe)
    assert b"root:" not in lxml.etree.tostring(root)
    assert b'rel="alternate"' in fault(server, "/")[2]


def test_trap_host_is_served_but_not_listed(server: DemoServer) -> None:
    assert server.trap_url not in server.site_urls.values()
    assert fetch(server.trap_url + "/trap.html")[0] == 200
    assert (urlsplit(server.trap_url).netloc, "/trap.html", 200) in server.requests


def test_stop_is_quick_while_a_request_hangs(web: DemoWeb) -> None:
    running = DemoServer(web, faults=True, slow_seconds=30).start()
    outcome: list[object] = []

    def wait_for_slow() -> None:
        try:
            outcome.append(fetch(running.url_for("faults", "/slow"), timeout=10))
        except (OSError, http.client.HTTPException) as err:
            outcome.append(err)

    hanging = threading.Thread(target=wait_for_slow, daemon=True)
    hanging.start()
    time.sleep(0.2)
    running.stop()  # were it to wait for the 30 s handler, the request would get its page
    hanging.join(timeout=5)
    assert outcome and not isinstance(outcome[0], tuple), "the hung request gets no page"


def test_serve_demo_command_prints_urls_and_stops_on_ctrl_c() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "newscrawl.cli", "serve-demo", "--seed", "4"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = [process.stdout.readline() for _ in range(4)]  # type: ignore[union-attr]
        assert lines[0].startswith("harbor-gazette") and "http://127.0.0." in lines[0]
        url = lines[0].split()[1]
        assert fetch(url, timeout=20)[0] == 200
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
