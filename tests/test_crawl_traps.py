"""Crawler traps met breadth first: each path shape has a budget of pages, and a trap is reported.

A real `newscrawl crawl` of a site served on 127.0.0.1 whose home page links to 20 articles and
to three endless URL spaces: ``/page?id=N`` linking to ``id=N+1`` and ``id=2N+3``, a calendar
whose months link to the months before and after, and a shop whose every page links to two more
under a new session id. Crawled breadth first, each space grows wider, not deeper, so the check
on runs of same-shaped links never fired and the spaces took the page cap.
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from crawl_helpers import FAST_CRAWL
from site_server import Answer, serve_site

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.crawl.discovery.traps import ShapeBudget, carries_session, path_shape, shape_budget

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("harbour", "council", "budget", "library", "ferry")
ARTICLES = [f"/news/{a}-{b}.html" for a, b in itertools.permutations(WORDS, 2)]
_SESSIONS = itertools.count(1)


def _html(title: str, body: str, links: list[str]) -> bytes:
    anchors = " ".join(f"<a href='{link}'>{link}</a>" for link in links)
    return (
        f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}"
        f"<nav>{anchors}</nav></body></html>"
    ).encode()


def _session() -> str:
    return f"{next(_SESSIONS) * 2654435761 % 2**40:010x}"


def trap_site(path: str) -> Answer:
    """The site: home, articles and the three endless spaces."""
    url = urlsplit(path)
    html = "text/html; charset=utf-8"
    if path == "/robots.txt":
        return "text/plain", b"User-agent: *\nAllow: /\n"
    if path == "/":
        links = [*ARTICLES, "/page?id=0", "/calendar/2024/05/", f"/shop/?sid={_session()}"]
        return html, _html("Home", "<p>The front page.</p>", links)
    if path in ARTICLES:
        text = f"<article><p>{' '.join([path] * 60)} is an article.</p></article>"
        return html, _html(path, text, ["/"])
    if url.path == "/page":
        n = int(parse_qs(url.query).get("id", ["0"])[0])
        return html, _html(
            f"Page {n}", "<p>A page.</p>", [f"/page?id={n + 1}", f"/page?id={2 * n + 3}"]
        )
    if match := re.fullmatch(r"/calendar/(\d+)/(\d+)/", url.path):
        month = int(match.group(1)) * 12 + int(match.group(2)) - 1
        links = [f"/calendar/{m // 12}/{m % 12 + 1:02d}/" for m in (month - 1, month + 1)]
        return html, _html("Calendar", "<p>Nothing on this month.</p>", links)
    if url.path in ("/shop/", "/shop/cart"):
        links = [f"/shop/?sid={_session()}", f"/shop/cart?sid={_session()}"]
        return html, _html("Shop", "<p>The shop.</p>", links)
    return None


def test_path_shapes_make_the_pages_of_one_space_alike() -> None:
    assert path_shape("http://s/page?id=1") == path_shape("http://s/page?id=2&id=7")
    assert path_shape("http://s/calendar/2024/05/") == path_shape("http://s/calendar/1999/12/")
    assert path_shape("http://s/shop/?sid=9f8e7d6c5b") == path_shape("http://s/shop/?sid=a1")
    assert path_shape("http://s/a;jsessionid=0AF3/b") == path_shape("http://s/a;jsessionid=9/b")
    assert path_shape("http://s/p/5f3a9c2e1b0d/") == path_shape("http://s/p/00aa11bb22cc/")
    # articles told apart by their slugs keep shapes of their own
    assert path_shape("http://s/2024/05/a-slug/") != path_shape("http://s/2024/05/other/")
    assert path_shape("http://s/news/harbour-ferry.html") != path_shape("http://s/news/a-b.html")
    for url in ("http://s/x?sid=1", "http://s/a;jsessionid=AB/b", "http://s/(S(x1y2))/p.aspx"):
        assert carries_session(url), url
    assert not carries_session("http://s/x?side=1")
    assert [shape_budget(cap, 0.1) for cap in (0, 20, 200, 1000)] == [1000, 10, 20, 100]
    budget = ShapeBudget(2)
    for _ in range(2):
        assert not budget.spent("s/page?id")
        budget.take("s/page?id")
    assert budget.spent("s/page?id") and not budget.spent("s/other?")


@pytest.mark.slow
def test_endless_url_spaces_take_their_budget_and_are_reported(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve_site(trap_site) as site:
        command = crawl_command(f"{site.origin}/", out, FAST_CRAWL, ["--max-pages", "200"])
        done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
        requested = list(site.requested)
    assert done.returncode == 0, done.stderr[-3000:]
    budget = shape_budget(200, 0.1)
    spaces = {"page": "/page?", "calendar": "/calendar/", "shop": "/shop/"}
    fetched = {name: sum(p.startswith(start) for p in requested) for name, start in spaces.items()}
    # each shape: the page the home page links to, then its budget of pages found on its kind
    assert fetched["page"] <= budget + 1, fetched
    assert fetched["calendar"] <= budget + 1, fetched
    assert fetched["shop"] <= 2 * budget, fetched  # two shapes, every link with a session id
    assert set(ARTICLES) <= set(requested)
    summary = json.loads(next(out.glob(".newscrawl/*/summary.json")).read_text())
    assert summary["errors"]["trap"] >= 3
    samples = summary["samples"]["trap"]
    assert samples and all(f"over the budget of {budget} pages" in s for s in samples), samples
    assert done.stdout.count("crawler trap") == 1, done.stdout
