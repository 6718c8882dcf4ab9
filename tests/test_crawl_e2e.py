"""End to end: real Scrapy, in a child process, crawling the demo web over real HTTP on 127.0.0.x,
checked through the Parquet files it leaves (and the demo server's own request log)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from importlib.util import find_spec
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web
from newscrawl.gold.metric import aggregate, score_page
from newscrawl.html.urls import canonical_url

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
FAST = [*FAST_CRAWL, "DOWNLOAD_TIMEOUT=2", "LOG_LEVEL=INFO"]
MIN_F1 = 0.8  # the primary extractor scored 0.90-0.95 on the demo web (printed with -s)


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


@pytest.fixture(scope="module")
def fault_web() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0, faults=True, slow_seconds=4.0) as server:
        yield server


def newscrawl_crawl(
    sites: Path, out: Path, *settings: str, extra: tuple[str, ...] = (), timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    command = crawl_command(sites, out, (*FAST, *settings), extra)
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def summary_of(out: Path) -> dict:
    found = sorted(out.glob(".newscrawl/*/summary.json"), key=lambda p: p.stat().st_mtime)
    assert found, "no summary written"
    return json.loads(found[-1].read_text())


def read(out: Path, dataset: str) -> pd.DataFrame:
    for path in out.rglob("*.parquet"):  # every file must open, whatever happened
        pq.read_table(path)
    return pd.read_parquet(out / dataset)


def gold_by_url(server: DemoServer, sites: list[str] | None = None) -> dict:
    return {
        canonical_url(url): article
        for url, article in server.gold().items()
        if sites is None or server.site_of(url).name in sites
    }


def shingle_f1(articles: pd.DataFrame, gold: dict) -> float:
    rows = articles[articles.final_url.isin(gold)]
    scores = aggregate(
        score_page(gold[u].text, t or "") for u, t in zip(rows.final_url, rows.text, strict=True)
    )
    print(
        f"\nshingle vs gold: P {scores.precision:.3f} R {scores.recall:.3f} "
        f"F1 {scores.f1:.3f} over {scores.pages} articles"
    )
    return scores.f1


# ---------------------------------------------------------------------------- the demo web


def test_scrapy_crawl_of_the_demo_web_writes_every_article_once(
    demo: DemoServer, tmp_path: Path
) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv")
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "scrapy",
        "crawl",
        "site",
        "-a",
        f"sites={sites}",
        "-s",
        f"NEWSCRAWL_OUT={out}",
        "-s",
        "NEWSCRAWL_CRAWL_ID=e2e",
    ]
    for setting in FAST:
        command += ["-s", setting]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "newscrawl summary" in result.stderr

    articles, pages = read(out, "articles"), read(out, "pages")
    gold = gold_by_url(demo)
    assert not articles.final_url.duplicated().any()
    assert set(gold) <= set(articles.final_url)
    is_gold = articles.final_url.isin(gold)
    assert articles[is_gold].is_article.all(), articles[is_gold & ~articles.is_article]
    wrongly = articles[~is_gold & articles.is_article]
    assert wrongly.empty, wrongly[["final_url", "article_reason"]]
    assert articles.article_reason.str.len().gt(0).all()
    # the default (learned) extractor tells every page's kind: WCXB's seven types
    kinds = {"article", "listing", "forum", "product", "collection", "service", "documentation"}
    assert set(articles.page_type.dropna()) <= kinds and articles[is_gold].page_type.notna().all()
    assert articles[is_gold].published.notna().all()
    assert articles[is_gold].title.str.len().gt(0).all()
    # each site marks its dates and authors its own way, traps included (demo/themes.py)
    rows = articles[is_gold]
    for url, title, author, when in zip(
        rows.final_url, rows.title, rows.author, rows.published, strict=True
    ):
        assert (title, author) == (gold[url].title, gold[url].author), url
        assert when.date() == gold[url].published.date(), url
    assert (articles.crawl.astype(str) == "e2e").all()
    assert shingle_f1(articles, gold) >= MIN_F1

    assert set(pages.final_url) == set(articles.final_url)
    assert pages.html.map(len).gt(0).all()
    assert pages.headers.map(lambda h: dict(h).get("content-type", "")).str.contains("html").all()

    disallowed = [r for r in demo.requests if r.path.startswith(("/private/", "/search"))]
    assert disallowed == []
    summary = summary_of(out)
    assert summary["errors"].get("robots_disallowed", 0) >= 3
    assert {name: s["pages"] for name, s in summary["sites"].items()} == (
        articles.groupby(articles.site.astype(str)).size().to_dict()
    )
    if find_spec("newscrawl.template.geometry") is not None:  # the template stage is wired in
        nodes = pd.read_parquet(out / "nodes")
        assert set(nodes.site.astype(str)) == set(demo.site_urls)


def test_robots_txt_holds_for_requests_that_wait_for_it(demo: DemoServer, tmp_path: Path) -> None:
    """Start pages that robots.txt disallows are queued before robots.txt arrives; each must
    still be checked against it (Scrapy's own middleware let all but the first through)."""
    base = demo.site_urls["harbor-gazette"]
    sites = tmp_path / "sites.csv"
    sites.write_text(
        f"url,name\n{base}/private/staff/,staff\n{base}/search?q=harbour,search\n"
        f"{base}/private/staff/?page=2,staff2\n"
    )
    before = len(demo.requests)
    result = newscrawl_crawl(sites, tmp_path / "out")
    fetched = [r.path for r in demo.requests[before:]]
    assert "/robots.txt" in fetched
    assert not [p for p in fetched if p.startswith(("/private/", "/search"))]
    summary = summary_of(tmp_path / "out")
    assert summary["errors"]["robots_disallowed"] == 3
    # The three share a host: the first to read its sitemap gets the pages listed there, the
    # others none, and a site that gives no page fails (status 3; 1 if none gave a page).
    failed = [site for site in summary["sites"].values() if site["failed"]]
    assert {site["failure"] for site in failed} == {"no page: robots.txt disallows the start page"}
    assert all(site["pages"] for site in summary["sites"].values() if not site["failed"])
    assert result.returncode == (1 if len(failed) == 3 else 3), result.stderr[-3000:]


def test_page_cap_per_site_is_never_exceeded(demo: DemoServer, tmp_path: Path) -> None:
    sites = demo.write_site_list(
        tmp_path / "sites.csv", ["valley-courier", "field-notes"], caps={"field-notes": 5}
    )
    out = tmp_path / "out"
    result = newscrawl_crawl(sites, out, extra=("--max-pages", "12"))
    assert result.returncode == 0, result.stderr[-3000:]
    counts = read(out, "articles").groupby("site", observed=True).size().to_dict()
    assert counts == {"valley-courier": 12, "field-notes": 5}
    summary = summary_of(out)
    assert summary["sites"]["valley-courier"]["pages"] == 12
    assert "valley-courier" in result.stdout and "12" in result.stdout


def test_private_and_loopback_addresses_are_refused_by_default(
    demo: DemoServer, tmp_path: Path
) -> None:
    url = demo.site_urls["harbor-gazette"]
    before = len(demo.requests_for("harbor-gazette"))
    command = [
        sys.executable,
        "-m",
        "newscrawl.cli",
        "crawl",
        url,
        "--out",
        str(tmp_path),
        "--set",
        "AUTOTHROTTLE_ENABLED=False",
        "--set",
        "DOWNLOAD_DELAY=0",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    summary = summary_of(tmp_path)
    assert summary["pages"] == 0
    assert summary["errors"]["private_address"] >= 2  # robots.txt and the home page
    assert len(demo.requests_for("harbor-gazette")) == before  # not one request reached it
    assert "refused private address" in result.stdout
    # the site could not be crawled as configured: it failed, and the user is told why
    assert result.returncode == 1 and summary["failed_sites"]
    assert "--allow-private loopback" in result.stderr


# ---------------------------------------------------------------------------- faults


def test_faults_are_reported_and_no_good_page_is_lost(
    fault_web: DemoServer, tmp_path: Path
) -> None:
    sites = fault_web.write_site_list(tmp_path / "sites.csv", ["faults"])
    out = tmp_path / "out"
    result = newscrawl_crawl(sites, out, "DOWNLOAD_TIMEOUT=1.5")
    assert result.returncode == 0, result.stderr[-3000:]

    errors = summary_of(out)["errors"]
    for kind in (
        "http_5xx",
        "http_4xx",
        "timeout",
        "connection_reset",
        "redirect_loop",
        "too_large",
        "too_many_nodes",  # 9.9 MB of <p>a: refused before a tree is built
        "not_html",
        "robots_disallowed",
        "trap",
    ):
        assert errors.get(kind, 0) >= 1, (kind, errors)
    assert errors["unsafe_xml"] >= 2  # the billion-laughs sitemap and the XXE feed
    assert errors["private_address"] >= 5  # three links, two redirects
    samples = " ".join(summary_of(out)["samples"]["private_address"])
    for target in ("10.0.0.1", "192.168.1.1", "169.254.169.254", "/go/metadata", "/go/router"):
        assert target in samples

    articles = read(out, "articles")
    gold = gold_by_url(fault_web, ["faults"])
    assert len(gold) == 7 and set(gold) <= set(articles.final_url)
    assert not articles.final_url.duplicated().any()
    assert articles[articles.final_url.isin(gold)].is_article.all()
    assert shingle_f1(articles, gold) >= MIN_F1
    mislabelled = articles[articles.final_url.str.contains("mislabelled")]
    for url, text in zip(mislabelled.final_url, mislabelled.text, strict=True):
        assert score_page(gold[url].text, text).recall > 0.95  # decoded right despite the lie
    stored = set(read(out, "pages").final_url.map(lambda u: u.rsplit("/", 1)[-1]))
    assert not stored & {"huge.html", "many-nodes.html", "binary.html", "500", "reset", "slow"}

    faults_host = fault_web.site_urls["faults"].split("//")[1]
    trap_host = fault_web.trap_url.split("//")[1]
    assert not [r for r in fault_web.requests if r.host == trap_host]
    paths = [r.path for r in fault_web.requests if r.host == faults_host]
    assert not [p for p in paths if p.startswith("/private/")]
    assert paths.count("/busy/article.html") >= 2  # a 503 with Retry-After, then the page
    months = [p for p in paths if re.fullmatch(r"/calendar/\d+/\d+/", p)]
    assert len(months) <= 2 * 12  # the trap is cut after a run of same-shaped links


# ---------------------------------------------------------------------------- kill and resume


def test_sigkill_then_resume_gives_every_article_exactly_once(
    demo: DemoServer, tmp_path: Path
) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv")
    out = tmp_path / "out"
    settings = (
        *FAST,
        "CONCURRENT_REQUESTS_PER_DOMAIN=2",
        "DOWNLOAD_DELAY=0.05",
        "NEWSCRAWL_PARQUET_ROW_GROUP_ROWS=2",
        "NEWSCRAWL_PARQUET_FILE_ROWS=4",
    )
    command = crawl_command(sites, out, settings)
    child = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(out.glob("articles/**/part-*.parquet"))) < 6:
            assert child.poll() is None, "the crawl ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.1)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    before = read(out, "articles")  # every file left behind opens
    assert 0 < len(before) < len(gold_by_url(demo))

    result = newscrawl_crawl(sites, out, extra=("--resume",))
    assert result.returncode == 0, result.stderr[-3000:]
    summary = summary_of(out)
    assert summary["replayed"] > 0  # stored pages were served from the corpus, not refetched
    articles, pages = read(out, "articles"), read(out, "pages")
    gold = gold_by_url(demo)
    assert set(gold) <= set(articles.final_url)
    assert not articles.final_url.duplicated().any()
    assert not pages.final_url.duplicated().any()
    assert set(pages.final_url) == set(articles.final_url)
    assert articles.crawl.nunique() == 1
    assert not list(out.rglob("*.tmp"))
    state = json.loads(next(out.glob(".newscrawl/*/state.json")).read_text())
    assert state["status"] == "finished"
    nodes = pd.read_parquet(out / "nodes")  # every site labelled, once
    assert set(nodes.site.astype(str)) == set(demo.site_urls)
    assert not nodes.duplicated(["url", "node"]).any()


def test_resume_labels_a_full_site_whose_nodes_were_lost(demo: DemoServer, tmp_path: Path) -> None:
    """A site that had all its pages stored when the crawl was killed, but not its nodes file:
    resuming fetches none of its pages again, so its labels come from the stored pages."""
    sites = demo.write_site_list(tmp_path / "sites.csv", ["field-notes"], caps={"field-notes": 8})
    out = tmp_path / "out"
    first = newscrawl_crawl(sites, out, extra=("--crawl-id", "full"))
    assert first.returncode == 0, first.stderr[-3000:]
    labelled = pd.read_parquet(out / "nodes")
    assert set(labelled.site.astype(str)) == {"field-notes"}
    shutil.rmtree(out / "nodes")  # as if killed between the last page and the nodes file

    result = newscrawl_crawl(sites, out, extra=("--crawl-id", "full"))
    assert result.returncode == 0, result.stderr[-3000:]
    written = summary_of(out)["rows_written"]
    assert written["pages"] == 0 and written["nodes"] > 0  # no page again, only its labels
    assert list(out.glob("nodes/crawl=full/site=field-notes/part-*.parquet"))
    nodes = pd.read_parquet(out / "nodes")
    assert len(nodes) == len(labelled) and nodes.label.sum() == labelled.label.sum()
    assert len(read(out, "articles")) == 8


def test_ctrl_c_pauses_and_resume_continues_from_jobdir(demo: DemoServer, tmp_path: Path) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv")
    out = tmp_path / "out"
    command = crawl_command(
        sites, out, (*FAST, "CONCURRENT_REQUESTS_PER_DOMAIN=2", "DOWNLOAD_DELAY=0.05")
    )
    before = len(demo.requests)
    child = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120
        while len([r for r in demo.requests[before:] if r.path.endswith(".html")]) < 20:
            assert child.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        child.send_signal(signal.SIGINT)  # Scrapy's graceful stop: JOBDIR keeps the queue
    finally:
        child.wait(timeout=60)
    state = json.loads(next(out.glob(".newscrawl/*/state.json")).read_text())
    assert state["status"] == "paused"
    assert list(out.glob(".newscrawl/*/job/requests.queue"))

    result = newscrawl_crawl(sites, out, extra=("--resume",))
    assert result.returncode == 0, result.stderr[-3000:]
    articles = read(out, "articles")
    assert set(gold_by_url(demo)) <= set(articles.final_url)
    assert not articles.final_url.duplicated().any()
    fetched = [r.path for r in demo.requests[before:]]
    assert not [p for p in fetched if p.startswith(("/private/", "/search"))]


# ---------------------------------------------------------------------------- newscrawl demo


def test_newscrawl_demo_serves_crawls_and_prints_a_summary(tmp_path: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "newscrawl.cli",
        "demo",
        "--out",
        str(tmp_path),
        "--max-pages",
        "8",
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    for expected in (
        "harbor-gazette",
        "valley-courier",
        "field-notes",
        "articles written",
        "shingle precision",
        "markdown vs gold Markdown",
        "pandas.read_parquet",
    ):
        assert expected in result.stdout
    articles = pd.read_parquet(tmp_path / "articles")
    assert len(articles) == 3 * 8
    # the site pass (every site here has its 8 pages through it) renders the Markdown of the
    # text it writes, whichever way it goes over the site
    passed = articles[(articles.stage == "site") & (articles.text.str.len() > 0)]
    assert len(passed) and (passed.markdown.str.len() > 0).all()
