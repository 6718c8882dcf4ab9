"""Scheduled crawls (issue 13), the parts: the run lock, exit statuses, sitemap and feed dates,
what a stored fetch says about change, and the redesign test on the demo web's real pages."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from newscrawl.crawl.discovery.feeds import feed_entries, parse_date, parse_sitemap
from newscrawl.crawl.extensions.summary import crawl_status
from newscrawl.crawl.history import StoredFetch, conditional_headers
from newscrawl.crawl.lock import LOCK_BUSY_EXIT, DirLock, LockBusyError
from newscrawl.demo.web import REDESIGNED, build_demo_web
from newscrawl.site.carry import is_redesign
from newscrawl.template.sitelevel import RawPage, run_sitelevel

ROOT = Path(__file__).resolve().parents[1]

# -- the lock ---------------------------------------------------------------------------------


def test_a_second_run_into_a_locked_folder_is_refused_with_a_clear_message(
    tmp_path: Path,
) -> None:
    busy = rf"is locked by another run \(pid {os.getpid()} "
    with DirLock(tmp_path):
        assert DirLock(tmp_path).acquire().nested  # re-entrant within one process
        command = [sys.executable, "-m", "newscrawl.cli", "crawl", "http://127.0.0.1:9/"]
        done = subprocess.run(
            [*command, "--out", str(tmp_path)], capture_output=True, text=True, cwd=ROOT
        )
        assert done.returncode == LOCK_BUSY_EXIT == 75
        assert re.search(busy, done.stderr) and "Traceback" not in done.stderr
        scrapy = [
            sys.executable,
            "-m",
            "scrapy",
            "crawl",
            "site",
            "-a",
            "sites=http://127.0.0.1:9/",
        ]
        done = subprocess.run(
            [*scrapy, "-s", f"NEWSCRAWL_OUT={tmp_path}"], capture_output=True, text=True, cwd=ROOT
        )
        # the spider's own lock: one line and the lock-busy status, no traceback
        assert done.returncode == LOCK_BUSY_EXIT and re.search(busy, done.stderr)
        assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr
    with DirLock(tmp_path) as lock:  # released at the end of the with block
        assert lock.recovered is None


def test_a_killed_runs_lock_is_recovered(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from newscrawl.crawl.lock import DirLock; "
            "lock = DirLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LockBusyError, match=f"pid {holder.pid}"):
            DirLock(tmp_path).acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    lock = DirLock(tmp_path).acquire()
    try:
        assert lock.recovered is not None and lock.recovered["pid"] == holder.pid
    finally:
        lock.release()


# -- exit statuses ----------------------------------------------------------------------------


def test_crawl_status_tells_ok_partial_and_failed_apart() -> None:
    ok, failed = {"failed": False}, {"failed": True}
    assert crawl_status("finished", {"a": ok, "b": ok}) == "ok"
    assert crawl_status("finished", {"a": ok, "b": failed}) == "partial"
    assert crawl_status("finished", {"a": failed, "b": failed}) == "failed"
    assert crawl_status("shutdown", {"a": ok}) == "failed"


@pytest.mark.slow
def test_a_crawl_with_an_unreachable_site_exits_partly_failed(tmp_path: Path) -> None:
    from crawl_helpers import FAST_CRAWL

    from newscrawl.crawl.crawl_process import crawl_command
    from newscrawl.demo.server import DemoServer

    with DemoServer(build_demo_web(4), port=0) as server:
        sites = tmp_path / "sites.csv"
        dead = f"http://127.0.0.9:{server.port}/"  # nothing listens there
        good = server.site_urls["harbor-gazette"] + "/"
        sites.write_text(f"url,name,max_pages\n{good},good,5\n{dead},dead,5\n")
        command = crawl_command(sites, tmp_path / "out", (*FAST_CRAWL, "DOWNLOAD_TIMEOUT=3"))
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 3, done.stderr[-2000:]
    assert "partial (failed sites: dead)" in done.stderr
    assert "FAILED" in done.stdout


# -- what sitemaps, feeds and stored fetches say ------------------------------------------------


def test_sitemaps_and_feeds_give_their_dates() -> None:
    urlset = (
        b'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        b"<url><loc>http://s/a</loc><lastmod>2024-06-29</lastmod></url>"
        b"<url><loc>http://s/b</loc></url></urlset>"
    )
    links = parse_sitemap(urlset)
    assert links.pages == ["http://s/a", "http://s/b"]
    assert links.lastmod == {"http://s/a": datetime(2024, 6, 29, tzinfo=UTC)}
    rss = (
        b"<rss><channel><item><link>http://s/1</link>"
        b"<pubDate>Sat, 29 Jun 2024 10:00:00 GMT</pubDate></item>"
        b"<item><link>http://s/2</link></item></channel></rss>"
    )
    assert feed_entries(rss) == [
        ("http://s/1", datetime(2024, 6, 29, 10, tzinfo=UTC)),
        ("http://s/2", None),
    ]
    atom = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><link href="http://s/3"/>'
        b"<published>2024-06-01T00:00:00Z</published><updated>2024-06-02T08:00:00+02:00</updated>"
        b"</entry></feed>"
    )
    assert feed_entries(atom) == [("http://s/3", datetime(2024, 6, 2, 6, tzinfo=UTC))]
    assert parse_date("yesterday") is None and parse_date("") is None


def test_a_stored_fetch_changes_only_when_a_later_date_says_so() -> None:
    modified = datetime(2024, 6, 20, 9, 30, tzinfo=UTC)
    fetch = StoredFetch("c1", datetime(2026, 1, 1, tzinfo=UTC), '"abc"', modified)
    assert not fetch.changed_by(None)
    assert not fetch.changed_by(datetime(2024, 6, 20, tzinfo=UTC))  # lastmod is a day: same
    assert fetch.changed_by(datetime(2024, 6, 21, tzinfo=UTC))  # the server's clock, not ours
    assert conditional_headers(fetch) == {
        "If-None-Match": '"abc"',
        "If-Modified-Since": "Thu, 20 Jun 2024 09:30:00 GMT",
    }
    assert conditional_headers(StoredFetch("c1", None)) == {}


# -- the redesign test ------------------------------------------------------------------------


def _pages(site, paths):  # type: ignore[no-untyped-def]
    raws = [RawPage(f"http://demo{path}", site.pages[path].body) for path in paths]
    return run_sitelevel(site.name, raws).pages


@pytest.mark.parametrize("name", ["harbor-gazette", REDESIGNED[0], "field-notes"])
def test_only_the_redesigned_demo_site_looks_redesigned(name: str) -> None:
    before, after = build_demo_web(4).site(name), build_demo_web(4, day=1).site(name)
    stored = [p.path for p in before.html_pages]  # a crawl stored them all
    new = [p for p in after.articles if p not in before.articles]
    listings = [p.path for p in after.html_pages if p.kind in ("home", "listing")]
    redesigned, share = is_redesign(_pages(after, new + listings[:6]), _pages(before, stored))
    assert redesigned == (name == REDESIGNED[0]), share
    # a small day: one new article and three listing pages fetched again, whose "latest" boxes
    # changed text (content hashes called half of a small template new without a redesign)
    small, share = is_redesign(_pages(after, new[:1] + listings[:3]), _pages(before, stored))
    assert small == (name == REDESIGNED[0]), share
    assert share > 0.8 if small else share < 0.2


# -- bad input: a clear message and status 2, never a traceback ----------------------------------


def test_retraining_and_comparison_refuse_bad_input_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from newscrawl.cli import main

    nodes = tmp_path / "nodes"
    nodes.mkdir()
    assert main(["train", str(nodes), "--last", "0", "--out", str(tmp_path / "m.json")]) == 2
    assert "--last needs a positive number of crawls" in capsys.readouterr().err
    assert main(["train", str(nodes), "--last", "2", "--out", str(tmp_path / "m.json")]) == 2
    assert "no crawl=ID folders" in capsys.readouterr().err
    missing = str(tmp_path / "missing.json")
    assert main(["models", "compare", missing, missing, str(nodes)]) == 2
    assert "no such model file" in capsys.readouterr().err
    assert main(["serve-demo", "--day", "-1"]) == 2
    assert "--day must be 0 or more" in capsys.readouterr().err
    pages = tmp_path / "pages"  # html where nodes datasets were expected
    pages.mkdir()
    (pages / "a.html").write_text("<html><body><p>Not a nodes dataset.</p></body></html>")
    assert main(["train", str(pages), "--out", str(tmp_path / "m.json")]) == 2
    assert "NODES must be `nodes` datasets" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["sitelevel", str(pages), "--min-pages", "-3", "--out", str(tmp_path / "n")])


@pytest.mark.slow
def test_a_run_after_a_stopped_crawl_reads_its_listing_pages_in_full(tmp_path: Path) -> None:
    """A crawl stopped early (here by Scrapy's page count) followed part of its home page's
    links; the next scheduled run, without --resume, must not take the stopped crawl's
    validators (a 304 on the home page would hide the rest of the site for good)."""
    import pandas as pd
    from crawl_helpers import FAST_CRAWL

    from newscrawl.crawl.crawl_process import crawl_command
    from newscrawl.demo.server import DemoServer
    from newscrawl.html.urls import canonical_url

    web = build_demo_web(4)
    site = web.sites[0]
    out = tmp_path / "out"
    with DemoServer(web, port=0) as server:
        sites = server.write_site_list(tmp_path / "sites.csv", [site.name])
        gold = {canonical_url(server.url_for(site.name, path)) for path in site.articles}

        def crawl(*settings: str) -> subprocess.CompletedProcess[str]:
            command = crawl_command(sites, out, settings)
            return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)

        first = crawl(*FAST_CRAWL, "CLOSESPIDER_PAGECOUNT=20", "CONCURRENT_REQUESTS=1")
        states = list(out.glob(".newscrawl/*/state.json"))
        assert len(states) == 1 and '"paused"' in states[0].read_text(), first.stderr[-2000:]
        stored = set(pd.read_parquet(out / "articles").final_url)
        # the stopped run wrote its home page (whose validators the next run would send back)
        # and part of the articles, which pages it reached first being the scheduler's choice
        assert canonical_url(server.url_for(site.name, "/")) in stored, sorted(stored)
        assert len(stored & gold) < len(gold)  # stopped part way
        done = crawl(*FAST_CRAWL)
    assert done.returncode == 0, done.stderr[-3000:]
    articles = pd.read_parquet(out / "articles")
    assert gold <= set(articles.final_url), len(gold - set(articles.final_url))
    assert not articles.final_url[articles.final_url.isin(gold)].duplicated().any()
    assert "stopped before its end" in done.stderr


def test_resume_takes_the_last_stopped_crawl_unless_a_later_one_finished(tmp_path: Path) -> None:
    import json

    from newscrawl.crawl.crawl_process import latest_unfinished

    def state(crawl: str, status: str, updated: str) -> None:
        folder = tmp_path / ".newscrawl" / crawl
        folder.mkdir(parents=True)
        (folder / "state.json").write_text(json.dumps({"status": status, "updated": updated}))

    assert latest_unfinished(tmp_path) is None
    state("a", "finished", "2026-11-01T06:15:00+00:00")
    state("b", "running", "2026-11-02T06:15:40+00:00")  # killed
    assert latest_unfinished(tmp_path) == "b"
    state("c", "paused", "2026-11-03T06:16:00+00:00")
    assert latest_unfinished(tmp_path) == "c"
    state("d", "finished", "2026-11-04T06:20:00+00:00")  # the next day's run took over
    assert latest_unfinished(tmp_path) is None
