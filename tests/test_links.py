"""Link resolution: the remembered answers are the ones a fresh join and canonicalisation give."""

from __future__ import annotations

import random
from urllib.parse import urljoin, urlsplit

from newscrawl.crawl.discovery.links import LinkResolver
from newscrawl.html.urls import absolute_url, canonical_link, canonical_url

HREFS = [
    "/docs/page-1.html",
    "/docs/page-1.html#section-2",
    " /docs/page-1.html ",
    "/docs/../docs/page-2.html?b=2&a=1",
    "page-3.html",
    "../up.html",
    "?q=1",
    "//cdn.example.org/x.html",
    "https://Example.org/A",
    "HTTPS://example.org/b",
    "http:relative.html",
    "#top",
    "",
    "   ",
    "mailto:me@example.org",
    "JavaScript:void(0)",
    "ftp://example.org/file",
    "/tel:123",
    # no host and no path: urljoin takes the page's own path (and query) for these
    "//",
    "//?x=1",
    "//#a",
    "http://",
    "https://?q=1",
    "HTTP://#f",
    "http:///root.html",
    "///root.html",
    # tabs and line breaks are dropped by urljoin: "/\t/" reads as "//"
    "/\t/",
    "/\n/?y=2",
    "/docs/\npage-4.html",
]
BASES = [
    "http://example.org/docs/index.html",
    "https://example.org/a/b/",
    "http://other.net/",
    "http://example.org/other/page.html?p=1",  # the first one's host, another path
]


def reference(base: str, href: str) -> str | None:
    href = href.strip()
    skipped = ("javascript:", "mailto:", "tel:", "data:", "ftp:", "file:", "#")
    if not href or href.lower().startswith(skipped):
        return None
    url = urljoin(base, href)
    return canonical_url(url) if urlsplit(url).scheme in ("http", "https") else None


def test_resolved_links_match_a_fresh_resolution_on_every_base_and_repeat() -> None:
    resolver = LinkResolver()
    for _ in range(2):  # the second round comes from what the resolver remembers
        for base in BASES:
            expected = [u for u in (reference(base, h) for h in HREFS) if u is not None]
            assert list(resolver.resolve(base, HREFS)) == expected
    # page-independent hrefs are remembered per scheme and host, relative paths per folder;
    # a query or fragment alone, never (urljoin keeps the page's own path for those)
    remembered = set(resolver.remembered)
    assert ("http://example.org", "/docs/page-1.html") in remembered
    assert ("http://example.org/docs/", "page-3.html") in remembered
    assert ("http://example.org/other/", "../up.html") in remembered
    assert not any(href in ("?q=1", "http:relative.html") for _, href in remembered)
    assert {origin for origin, _ in resolver.remembered} == {
        "http://example.org",
        "https://example.org",
        "http://other.net",
        "http://example.org/docs/",
        "https://example.org/a/b/",
        "http://other.net/",
        "http://example.org/other/",
    }


def test_a_relative_link_is_resolved_once_per_folder() -> None:
    resolver = LinkResolver()
    hrefs = ["../api/a.html", "b.html", "./c/", "?page=2"]
    first = list(resolver.resolve("http://example.org/docs/one.html", hrefs))
    resolver.remembered[("http://example.org/docs/", "b.html")] = "http://example.org/x"
    later = list(resolver.resolve("http://example.org/docs/two.html?v=1", hrefs))
    assert first[1] == "http://example.org/docs/b.html"
    assert later[1] == "http://example.org/x"  # what the folder's first page resolved it to
    assert later[0] == "http://example.org/api/a.html" and later[2] == "http://example.org/docs/c/"
    assert later[3] == "http://example.org/docs/two.html?page=2"  # the page's own path


def test_memory_is_bounded() -> None:
    resolver = LinkResolver(max_remembered=5)
    hrefs = [f"/p{n}.html" for n in range(50)]
    assert len(list(resolver.resolve("http://example.org/", hrefs))) == 50
    assert len(resolver.remembered) == 5
    resolver.clear()
    assert not resolver.remembered


PIECES = [
    "/",
    "//",
    "http:",
    "https:",
    "HTTP:",
    "?",
    "#",
    "a",
    "b.html",
    "..",
    ".",
    ";p",
    "\t",
    "\n",
    " ",
    "x.org",
    ":8080",
    "@",
    "%2F",
    "q=1&utm_source=z",
    "\x01",
    "[",
    "mailto:",
]


def test_random_hrefs_match_a_fresh_resolution() -> None:
    rng = random.Random(9)
    resolver = LinkResolver()
    bases = [
        *BASES,
        "https://example.org/a/b/c.html?z=1",
        "https://example.org/a/b/d;p=1.html#f",  # the same folder, a page of its own
        "http://example.org/docs/other.html?x=2",
        "http://example.org:8080/d/",
        "http://example.org",
        "http://example.org?q=3",
    ]
    hrefs = ["".join(rng.choices(PIECES, k=rng.randint(1, 6))) for _ in range(3000)]
    for _ in range(2):
        for base in bases:
            for href in hrefs:
                assert resolved(resolver, base, href) == expected(base, href)


def resolved(resolver: LinkResolver, base: str, href: str) -> list[str]:
    return list(resolver.resolve(base, [href]))


def expected(base: str, href: str) -> list[str]:
    try:
        return [u for u in [reference(base, href)] if u]
    except ValueError:  # urljoin refuses a bad port or an unclosed "[": no page, no error
        return []


BAD_HREFS = [
    "http://[::1",
    "//[::1",
    "http://host:99999/",
    "http://127.0.0.1:8740:80/",
    "http://[]/",
]


def test_a_malformed_href_is_skipped_and_the_links_after_it_are_read() -> None:
    """One href urllib cannot parse (an unclosed IPv6 bracket, a port out of range or not a
    number, an empty bracketed host) names no page; it must not end the page's links."""
    base = "http://example.org/news/"
    for bad in BAD_HREFS:
        hrefs = ["/a.html", bad, "/b.html"]
        found = list(LinkResolver().resolve(base, hrefs))
        assert found == ["http://example.org/a.html", "http://example.org/b.html"], bad
        assert absolute_url(base, bad) is None
    links = [("canonical", "", "http://[::1/"), ("canonical", "", "/story.html")]
    assert canonical_link(links, base) == "http://example.org/story.html"
