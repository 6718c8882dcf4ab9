"""Kill and resume: a real `newscrawl crawl` child process against the demo web on loopback,
stopped at several points (SIGKILL, Ctrl-C), then resumed; checked through the files on disk
and the demo server's request log. No timing is asserted: the crawl is stopped when enough
files are on disk, whenever that is."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web
from newscrawl.html.urls import canonical_url

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
# slow enough to be stopped part-way; a site's pages reach a closed file every 3 pages
SLOW = (
    *FAST_CRAWL,
    "DOWNLOAD_TIMEOUT=2",
    "CONCURRENT_REQUESTS_PER_DOMAIN=2",
    "DOWNLOAD_DELAY=0.05",
    "NEWSCRAWL_FLUSH_ROWS=3",
)


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


def start(sites: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    """The crawl in a process group of its own (with its worker processes), as a terminal
    runs it."""
    command = crawl_command(sites, out, SLOW, extra)
    return subprocess.Popen(
        command,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def page_files(out: Path) -> int:
    return len(list(out.glob("pages/**/part-*.parquet")))


def stop_when(
    child: subprocess.Popen[bytes], files: int, out: Path, sig: signal.Signals, group: bool = False
) -> None:
    """Send `sig` once `out` holds `files` closed pages files (`group`: to the crawl's whole
    process group, as a terminal's Ctrl-C does); wait for the child to end."""
    try:
        deadline = time.monotonic() + 180
        while page_files(out) < files:
            assert child.poll() is None, "the crawl ended before it could be stopped"
            assert time.monotonic() < deadline, "the crawl made no progress"
            time.sleep(0.05)
        if group:
            os.killpg(child.pid, sig)
        else:
            os.kill(child.pid, sig)
    finally:
        child.wait(timeout=120)


def read(out: Path, dataset: str) -> pd.DataFrame:
    for path in out.rglob("*.parquet"):  # every file on disk opens, whatever happened
        pq.read_table(path)
    if not list(out.glob(f"{dataset}/**/*.parquet")):
        return pd.DataFrame({"final_url": [], "url": []})
    return pd.read_parquet(out / dataset)


def fetched_paths(server: DemoServer, since: int) -> set[tuple[str, str]]:
    """(host, path) of the page requests the demo server answered after request `since`."""
    return {(r.host, r.path) for r in server.requests[since:]}


def host_path(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.netloc, parts.path or "/"


def check_complete(server: DemoServer, out: Path) -> None:
    """Every page once in `pages` and `articles`, every gold article there, every stored page
    labelled in `nodes` exactly once."""
    articles, pages = read(out, "articles"), read(out, "pages")
    gold = {canonical_url(url) for url in server.gold()}
    assert gold <= set(articles.final_url)
    assert not articles.final_url.duplicated().any()
    assert not pages.final_url.duplicated().any()
    assert set(pages.final_url) == set(articles.final_url)
    nodes = pd.read_parquet(out / "nodes", columns=["url", "node"])
    assert set(nodes.url) == set(pages.final_url)
    assert not nodes.duplicated(["url", "node"]).any()
    assert not list(out.rglob("*.tmp"))
    assert not list(out.glob(".newscrawl/*/partial/*"))


def test_sigkill_at_several_points_loses_only_unflushed_pages(
    demo: DemoServer, tmp_path: Path
) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv")
    out = tmp_path / "out"
    stored_before: list[tuple[set[str], int]] = []  # pages on disk at a kill, requests by then
    child = start(sites, out)
    for target in (3, 12):  # first kill early, the second after the first resume got going
        stop_when(child, target, out, signal.SIGKILL)
        assert child.returncode == -signal.SIGKILL
        pages = read(out, "pages")  # readable after a SIGKILL: complete files only
        assert not pages.final_url.duplicated().any()
        stored_before.append((set(pages.final_url), len(demo.requests)))
        child = start(sites, out, "--resume")
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr.decode()[-3000:]

    check_complete(demo, out)
    assert len(stored_before[0][0]) >= 3 * 3  # 3 files of 3 pages were on disk at the first kill
    for stored, requests in stored_before:
        again = fetched_paths(demo, requests) & {host_path(url) for url in stored}
        assert not again, f"stored pages fetched again after the kill: {sorted(again)[:5]}"


def test_ctrl_c_then_resume_labels_every_page(demo: DemoServer, tmp_path: Path) -> None:
    """Ctrl-C writes the incomplete sites from what they have, marked partial; the resumed
    crawl writes them again from all their pages, so `nodes` covers every page. The SIGINT
    goes to the crawl's process group, its parse and site pass workers too, as in a
    terminal."""
    sites = demo.write_site_list(tmp_path / "sites.csv")
    out = tmp_path / "out"
    child = start(sites, out)
    stop_when(child, 6, out, signal.SIGINT, group=True)
    assert child.returncode == 1  # paused, not finished
    summary = json.loads(next(out.glob(".newscrawl/*/summary.json")).read_text())
    assert summary["errors"].keys() <= {"robots_disallowed"}  # no page lost to a worker
    paused = read(out, "articles")
    assert len(paused) > 0 and list(out.glob(".newscrawl/*/partial/*"))
    assert set(pd.read_parquet(out / "nodes", columns=["url"]).url) == set(paused.final_url)

    child = start(sites, out, "--resume")
    _, stderr = child.communicate(timeout=300)
    assert child.returncode == 0, stderr.decode()[-3000:]
    check_complete(demo, out)
