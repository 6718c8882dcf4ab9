"""Memory stays flat over a long site list: only NEWSCRAWL_MAX_ACTIVE_SITES sites are crawled at
once, the next starting when one is written. A real `newscrawl crawl` against the demo web on
loopback; the order is read from the demo server's request log, not from timings."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pandas as pd
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


def test_one_active_site_means_one_site_after_another(demo: DemoServer, tmp_path: Path) -> None:
    sites = demo.write_site_list(tmp_path / "sites.csv")
    out = tmp_path / "out"
    before = len(demo.requests)
    command = crawl_command(sites, out, (*FAST_CRAWL, "NEWSCRAWL_MAX_ACTIVE_SITES=1"))
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]

    hosts = [r.host for r in demo.requests[before:]]
    order = list(dict.fromkeys(hosts))  # hosts by their first request
    assert len(order) == len(demo.site_urls)
    for earlier, later in pairwise(order):
        last = max(i for i, host in enumerate(hosts) if host == earlier)
        assert last < hosts.index(later), f"{later} started before {earlier} was done"
    articles = pd.read_parquet(out / "articles")
    assert set(articles.site.astype(str)) == set(demo.site_urls)
    assert not articles.final_url.duplicated().any()
