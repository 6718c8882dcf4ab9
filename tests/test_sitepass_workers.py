"""The site pass in worker processes (NEWSCRAWL_SITEPASS_WORKERS): the same rows as in a thread,
split over the workers or whole, and no page lost when a worker dies.

Real crawls of the demo web over real HTTP on 127.0.0.x, in child processes, checked through
the Parquet files they leave. A worker is killed by a test-only extension of the crawl
(`sitepass_killer`: the worker given the named site gets a SIGKILL instead, as from the OOM
killer). No timing is asserted."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from crawl_helpers import FAST_CRAWL
from newscrawl.pipelines.extraction import ExtractionSettings
from sitepass_killer import SETTING, SitePassKiller

from newscrawl import settings as defaults
from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import build_demo_web
from newscrawl.extractors import DEFAULT_EXTRACTOR
from newscrawl.lab.synthetic_docsite import docs_page
from newscrawl.site.site_job import PassSettings, SitePasser, SitePassJob, SitePassResult
from newscrawl.site.site_split import (
    finish_shards,
    hash_shard,
    hash_shards,
    pass_shard,
    pass_shards,
    shard_context,
)
from newscrawl.site.site_store import PassPage
from newscrawl.site.slot_cut import PAGE_STAGE, SITE_STAGE

ROOT = Path(__file__).resolve().parents[1]
# every extractor's text kept, so the comparison covers the whole chain; one crawl id for all
SETTINGS = (
    *FAST_CRAWL,
    "DOWNLOAD_TIMEOUT=5",
    "NEWSCRAWL_KEEP_ALL_TEXTS=1",
    "NEWSCRAWL_CRAWL_ID=same",
    "LOG_LEVEL=INFO",
)
KILLED = "valley-courier"


# -- a split pass, in this process ---------------------------------------------------------------


@pytest.fixture(scope="module")
def passer() -> SitePasser:
    """The crawl's default extractor chain, as a site pass worker builds it."""
    chain = ExtractionSettings(tuple(defaults.NEWSCRAWL_EXTRACTORS), {}, DEFAULT_EXTRACTOR, True)
    return SitePasser.from_settings(PassSettings(chain))


def split_pass(passer: SitePasser, job: SitePassJob, parts: int) -> SitePassResult:
    """What `SitePassPool.run_split` computes, its parts run one after the other here."""
    context = shard_context([hash_shard(shard) for shard in hash_shards(job, parts)])
    passed = [pass_shard(passer, shard) for shard in pass_shards(job, parts, context)]
    return finish_shards(job, passed)


def docs_job(pages: int, broken: bool = False) -> SitePassJob:
    """A documentation site's pages (out of URL order), and a body that does not parse."""
    found = [
        PassPage(f"http://docs.test/p{n}.html", docs_page(n), "text/html")
        for n in reversed(range(pages))
    ]
    if broken:
        found.insert(
            2,
            PassPage("http://docs.test/blob.html", b"\x89PNG\r\n\x1a\n" + bytes(256), "text/html"),
        )
    return SitePassJob("docs.test", "c", tuple(found))


@pytest.mark.parametrize(("pages", "parts"), [(14, 2), (14, 3), (3, 2)])
def test_a_split_pass_gives_the_rows_of_the_whole_pass(
    passer: SitePasser, pages: int, parts: int
) -> None:
    job = docs_job(pages, broken=True)
    whole, split = passer.run(job), split_pass(passer, job, parts)
    assert split.pages.keys() == whole.pages.keys() and len(whole.pages) == pages
    for index, row in whole.pages.items():
        assert split.pages[index].fields == row.fields
        assert split.pages[index].extras == row.extras
    assert (split.ran, split.template, split.recorded) == (
        whole.ran,
        whole.template,
        whole.recorded,
    )
    if pages >= 5:  # SiteLevel's labels and the slot decisions need five pages
        assert whole.template and {row.fields["stage"] for row in whole.pages.values()} == {
            SITE_STAGE
        }
        assert whole.nodes is not None and split.nodes is not None
        assert split.nodes.equals(whole.nodes)
    else:
        assert whole.nodes is None and split.nodes is None


# -- crawls --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[DemoServer]:
    with DemoServer(build_demo_web(4), port=0) as server:
        yield server


@pytest.fixture(scope="module")
def sites(demo: DemoServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo.write_site_list(tmp_path_factory.mktemp("list") / "sites.csv")


def run_crawl(
    sites: Path, out: Path, workers: int, kill: str = "", *settings: str
) -> tuple[dict, str]:
    """A crawl with NEWSCRAWL_SITEPASS_WORKERS=`workers` (and `settings`), the worker of `kill`
    killed by `SitePassKiller`; its summary and its log."""
    settings = (*SETTINGS, *settings, f"NEWSCRAWL_SITEPASS_WORKERS={workers}")
    if kill:
        killer = f"{SitePassKiller.__module__}.{SitePassKiller.__name__}"
        extensions = json.dumps({**defaults.EXTENSIONS, killer: 0})
        settings = (*settings, f"EXTENSIONS={extensions}", f"{SETTING}={kill}")
    path = os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    result = subprocess.run(
        crawl_command(sites, out, settings),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    (summary,) = out.glob(".newscrawl/*/summary.json")
    return json.loads(summary.read_text()), result.stderr


def crawl(sites: Path, out: Path, workers: int, kill: str = "") -> dict:
    """A crawl with the site pass in `workers` processes (0: a thread); its summary."""
    return run_crawl(sites, out, workers, kill)[0]


def articles(out: Path) -> pd.DataFrame:
    """The articles rows, in URL order, without the fetch time (the one column that differs
    from crawl to crawl)."""
    rows = pd.read_parquet(out / "articles").drop(columns=["fetched_at"])
    rows["texts"] = rows["texts"].map(lambda texts: sorted(texts) if texts is not None else None)
    return rows.sort_values("final_url").reset_index(drop=True)


def nodes(out: Path) -> pd.DataFrame:
    rows = pd.read_parquet(out / "nodes")
    rows["site"] = rows["site"].astype(str)  # a partition column: categories of what is there
    return rows.sort_values(["site", "url", "node"]).reset_index(drop=True)


def assert_same_rows(out: Path, expected: Path) -> None:
    """The crawl in `out` wrote the articles and nodes of the one in `expected`."""
    pd.testing.assert_frame_equal(articles(out), articles(expected))
    pd.testing.assert_frame_equal(nodes(out), nodes(expected))


@pytest.fixture(scope="module")
def in_thread(sites: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("thread") / "out"
    crawl(sites, out, workers=0)
    return out


@pytest.mark.slow
def test_the_pass_in_processes_writes_the_rows_of_the_pass_in_a_thread(
    sites: Path, in_thread: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = crawl(sites, out, workers=2)
    expected, got = articles(in_thread), articles(out)
    assert len(got) >= 200 and set(got.stage) == {SITE_STAGE}
    pd.testing.assert_frame_equal(got, expected)
    pd.testing.assert_frame_equal(nodes(out), nodes(in_thread))
    assert "sitepass_worker_lost" not in summary["errors"]


@pytest.mark.slow
def test_a_killed_worker_loses_no_page_and_its_site_is_passed_again(
    sites: Path, in_thread: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = crawl(sites, out, workers=2, kill=KILLED)
    # the death broke the pool: the site passed beside it (if any) failed too, and was retried
    assert 1 <= summary["errors"]["sitepass_worker_lost"] <= 2
    lost = summary["samples"]["sitepass_worker_lost"]
    assert any(sample.startswith(f"{KILLED} (attempt 1") for sample in lost)
    assert not any("page by page" in sample for sample in lost)
    assert_same_rows(out, in_thread)
    assert not list(out.rglob("results-*"))  # the killed pass's results file is removed


@pytest.mark.slow
def test_a_site_whose_workers_keep_dying_is_extracted_page_by_page(
    sites: Path, in_thread: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary = crawl(sites, out, workers=2, kill=f"{KILLED}:always")
    assert 2 <= summary["errors"]["sitepass_worker_lost"] <= 3  # its own two, one beside it
    lost = summary["samples"]["sitepass_worker_lost"]
    gave_up = f"{KILLED} (attempt 2: its worker process died; extracted page by page)"
    assert [sample for sample in lost if "page by page" in sample] == [gave_up]
    got, expected = articles(out), articles(in_thread)
    killed = got.site.astype(str) == KILLED
    assert killed.any() and set(got[killed].stage) == {PAGE_STAGE}
    assert list(got.final_url) == list(expected.final_url)  # every page, each once
    assert got[killed].text.str.len().gt(0).all()
    # the other sites are as the thread wrote them; the killed one has no nodes
    others = ~killed
    pd.testing.assert_frame_equal(got[others], expected[others])
    assert KILLED not in set(nodes(out).site)
    expected_nodes = nodes(in_thread)
    kept = expected_nodes[expected_nodes.site != KILLED].reset_index(drop=True)
    pd.testing.assert_frame_equal(nodes(out), kept)


# one site at a time, so each site's pass runs alone and is split over the two workers
SPLIT = ("NEWSCRAWL_SITEPASS_SPLIT_PAGES=5", "NEWSCRAWL_MAX_ACTIVE_SITES=1")


@pytest.mark.slow
def test_split_passes_write_the_rows_of_the_pass_in_a_thread(
    sites: Path, in_thread: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary, _ = run_crawl(sites, out, 2, "", *SPLIT)
    assert summary["site_passes_split"] == len(summary["sites"]) == 3
    assert_same_rows(out, in_thread)
    # and never split: the same rows again
    whole = tmp_path / "whole"
    summary, _ = run_crawl(sites, whole, 2, "", "NEWSCRAWL_SITEPASS_SPLIT_PAGES=0")
    assert summary["site_passes_split"] == 0
    pd.testing.assert_frame_equal(articles(whole), articles(in_thread))


@pytest.mark.slow
def test_a_worker_killed_in_a_split_pass_loses_no_page(
    sites: Path, in_thread: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary, _ = run_crawl(sites, out, 2, KILLED, *SPLIT)
    # the split pass failed as a whole; the site was passed again, whole, in a worker alone
    assert summary["errors"]["sitepass_worker_lost"] == 1
    (sample,) = summary["samples"]["sitepass_worker_lost"]
    assert sample.startswith(f"{KILLED} (attempt 1") and "tried again alone" in sample
    assert summary["site_passes_split"] == 2  # the other two sites'
    assert_same_rows(out, in_thread)


@pytest.mark.slow
def test_a_split_pass_whose_part_fails_is_passed_whole(
    sites: Path, in_thread: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary, log = run_crawl(sites, out, 2, f"{KILLED}:split-error", *SPLIT)
    assert f"split site pass of {KILLED} failed (RuntimeError" in log
    assert "sitepass_worker_lost" not in summary["errors"]
    assert summary["site_passes_split"] == 2
    assert_same_rows(out, in_thread)


# -- without the site pass: each page extracted in the workers ----------------------------------

PAGE_LEVEL = "NEWSCRAWL_SITELEVEL=False"


def page_level_crawl(sites: Path, out: Path, workers: int, kill: str = "") -> tuple[dict, str]:
    """A crawl without the site pass, its pages extracted in `workers` processes (0: on the
    reactor thread); its summary and its log."""
    return run_crawl(sites, out, workers, kill, PAGE_LEVEL)


@pytest.fixture(scope="module")
def page_level_inline(sites: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("inline") / "out"
    page_level_crawl(sites, out, workers=0)
    return out


@pytest.mark.slow
def test_pages_extracted_in_processes_are_the_pages_extracted_inline(
    sites: Path, page_level_inline: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    summary, log = page_level_crawl(sites, out, workers=2)
    expected, got = articles(page_level_inline), articles(out)
    assert len(got) >= 200 and set(got.stage) == {PAGE_STAGE}
    assert got.is_article.sum() > 100 and got.text.str.len().gt(0).all()
    pd.testing.assert_frame_equal(got, expected)
    assert "extract_worker_lost" not in summary["errors"] and "tried again alone" not in log


@pytest.mark.slow
def test_a_page_whose_extraction_workers_die_is_kept_without_text(
    sites: Path, page_level_inline: Path, tmp_path: Path
) -> None:
    expected = articles(page_level_inline)
    once, always = expected.final_url[3], expected.final_url[7]
    # one death: the pages in flight are tried again alone, one at a time; none loses its text
    summary, log = page_level_crawl(sites, tmp_path / "once", workers=2, kill=once)
    assert f"extraction of {once}: a worker died; tried again alone" in log
    assert "extract_worker_lost" not in summary["errors"]
    pd.testing.assert_frame_equal(articles(tmp_path / "once"), expected)
    # a page whose own worker dies again is written without text, and the summary names it
    summary, _ = page_level_crawl(sites, tmp_path / "always", workers=2, kill=f"{always}:always")
    got = articles(tmp_path / "always")
    assert list(got.final_url) == list(expected.final_url)  # every page, each once
    lost = got.final_url == always
    assert got[lost].text.tolist() == [""]
    assert got[lost].error.tolist() == ["extraction: its worker process died twice"]
    pd.testing.assert_frame_equal(got[~lost], expected[~lost])
    assert summary["errors"]["extract_worker_lost"] == 1
    assert summary["samples"]["extract_worker_lost"] == [
        f"{always} (its worker died twice: no text)"
    ]
