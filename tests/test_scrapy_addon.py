"""newscrawl in a user's own Scrapy project: a project of its own (scrapy.cfg, settings.py, a
spider) built in a temp folder, `scrapy crawl` against the demo web on 127.0.0.1, and the
Parquet articles newscrawl's add-on wrote."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import newscrawl
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web
from newscrawl.html.urls import SiteScope

ROOT = Path(__file__).resolve().parents[1]

SETTINGS = """\
BOT_NAME = "myproject"
SPIDER_MODULES = ["myproject.spiders"]
ROBOTSTXT_OBEY = False
LOG_LEVEL = "INFO"
ADDONS = {"newscrawl.addon.NewscrawlAddon": 0}
NEWSCRAWL_OUT = "corpus"
NEWSCRAWL_SITEPASS_WORKERS = 0
DOWNLOADER_MIDDLEWARES = {"newscrawl.crawl.middlewares.private.PrivateAddressMiddleware": 10}
NEWSCRAWL_ALLOW_PRIVATE = "loopback"
"""

SPIDER = '''\
from urllib.parse import urlsplit

import scrapy


class PagesSpider(scrapy.Spider):
    """Follows the links of one site; keeps its HTML pages (every third one as an item)."""

    name = "pages"

    def __init__(self, start="", limit="20", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [start]
        self.host = urlsplit(start).netloc
        self.limit = int(limit)
        self.kept = 0

    def parse(self, response):
        if not response.headers.get("Content-Type", b"").startswith(b"text/html"):
            return
        if self.kept >= self.limit:
            return
        self.kept += 1
        if self.kept % 3 == 0:
            yield {"url": response.url, "body": response.body, "status": response.status}
        else:
            yield response
        for href in response.css("a::attr(href)").getall():
            url = response.urljoin(href)
            if urlsplit(url).netloc == self.host:
                yield scrapy.Request(url, callback=self.parse)
'''


def write_project(folder: Path) -> None:
    package = folder / "myproject"
    (package / "spiders").mkdir(parents=True)
    (folder / "scrapy.cfg").write_text("[settings]\ndefault = myproject.settings\n")
    (package / "__init__.py").write_text("")
    (package / "settings.py").write_text(SETTINGS)
    (package / "spiders" / "__init__.py").write_text("")
    (package / "spiders" / "pages.py").write_text(textwrap.dedent(SPIDER))


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


def test_a_users_own_project_writes_newscrawls_parquet(demo: DemoServer, tmp_path: Path) -> None:
    write_project(tmp_path)
    start = demo.site_urls["harbor-gazette"] + "/"
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    command = [sys.executable, "-m", "scrapy", "crawl", "pages", "-a", f"start={start}"]
    result = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = tmp_path / "corpus"
    articles = newscrawl.read_articles(out).to_pylist()
    pages = pq.read_table(out / "pages").to_pylist()
    assert len(articles) == len(pages) == 20
    assert {row["site"] for row in articles} == {SiteScope.of(start).name}
    assert {row["stage"] for row in articles} == {"site"}  # the site pass ran
    assert sum(row["is_article"] for row in articles) >= 10
    assert all(row["text"] for row in articles if row["is_article"])
    # the rows are what newscrawl's API gives for the same pages
    again = newscrawl.extract_site([(row["final_url"], row["html"]) for row in pages])
    by_url = {row["final_url"]: row["text"] for row in articles}
    assert [a.text for a in again] == [by_url[row["final_url"]] for row in pages]
    assert (out / ".newscrawl").is_dir()
