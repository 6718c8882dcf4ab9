"""Scheduled crawls (issue 13), end to end: real Scrapy in child processes crawling the demo web
over real HTTP on 127.0.0.x, run after run into the same folder, as cron would; what each run
fetched is counted on the demo server's own request log.

Runs, in order, on one server (one port, so the sites keep their names): day 0; day 0 again
(nothing changed); day 1 (new articles, an updated article, an AMP duplicate, valley-courier
redesigned). Beside them, the day-1 web crawled from scratch, then again with --full.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
from crawl_helpers import FAST_CRAWL

from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.demo.server import DemoServer, Request
from newscrawl.demo.web import REDESIGNED, DemoWeb, build_demo_web
from newscrawl.gold.metric import aggregate, score_page
from newscrawl.html.urls import canonical_url

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = (*FAST_CRAWL, "DOWNLOAD_TIMEOUT=5", "LOG_LEVEL=INFO")
FULL_SITE = "harbor-gazette"


@dataclass
class Run:
    """One `newscrawl crawl` run: its exit status, output, requests and summary."""

    process: subprocess.CompletedProcess[str]
    requests: list[Request]
    summary: dict


def crawl(server: DemoServer, sites: Path, out: Path, *extra: str) -> Run:
    before = len(server.requests)
    command = crawl_command(sites, out, SETTINGS, extra)
    process = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert process.returncode == 0, process.stderr[-3000:]
    newest = max(out.glob(".newscrawl/*/summary.json"), key=lambda p: p.stat().st_mtime)
    return Run(process, server.requests[before:], json.loads(newest.read_text()))


def rows(out: Path, dataset: str, crawl_id: str | None = None) -> pd.DataFrame:
    if not (out / dataset).is_dir():
        return pd.DataFrame(columns=["final_url", "crawl", "is_article", "text", "stage"])
    frame = pd.read_parquet(out / dataset)
    frame["crawl"] = frame["crawl"].astype(str)
    return frame if crawl_id is None else frame[frame.crawl == crawl_id]


def gold_urls(server: DemoServer, web: DemoWeb) -> dict:
    return {
        canonical_url(server.url_for(site.name, path)): article
        for site in web.sites
        for path, article in site.articles.items()
    }


def f1(frame: pd.DataFrame, gold: dict) -> float:
    found = frame[frame.final_url.isin(gold)]
    assert len(found) == len(gold)
    texts = zip(found.final_url, found.text, strict=True)
    return aggregate(score_page(gold[url].text, text or "") for url, text in texts).f1


@dataclass
class Scenario:
    server: DemoServer
    out: Path
    fresh: Path
    day0: Run
    again: Run
    day1: Run
    scratch: Run
    full: Run
    gold0: dict
    gold1: dict
    web0: DemoWeb
    web1: DemoWeb


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    base = tmp_path_factory.mktemp("incremental")
    out, fresh = base / "corpus", base / "scratch"
    web0, web1 = build_demo_web(4), build_demo_web(4, day=1)
    with DemoServer(web0, port=0) as server:
        sites = server.write_site_list(base / "sites.csv")
        day0 = crawl(server, sites, out)
        again = crawl(server, sites, out)
        server.set_web(web1)
        day1 = crawl(server, sites, out)
        scratch = crawl(server, sites, fresh)
        one = server.write_site_list(base / "one.csv", [FULL_SITE])  # --full costs a whole site
        full = crawl(server, one, fresh, "--full")
        gold0, gold1 = gold_urls(server, web0), gold_urls(server, web1)
        yield Scenario(
            server, out, fresh, day0, again, day1, scratch, full, gold0, gold1, web0, web1
        )


def paths(run: Run) -> list[str]:
    return [request.path for request in run.requests]


def test_an_unchanged_rerun_fetches_only_listing_pages_and_writes_nothing(
    scenario: Scenario,
) -> None:
    first, again = scenario.day0, scenario.again
    not_modified = sum(r.status == 304 for r in again.requests)
    print(
        f"requests: day 0 {len(first.requests)}, unchanged rerun {len(again.requests)} "
        f"({len(again.requests) / len(first.requests):.1%}; {not_modified} answered 304)"
    )
    assert len(again.requests) <= 0.2 * len(first.requests), paths(again)
    article_paths = {p for site in scenario.web0.sites for p in site.articles}
    assert not article_paths & set(paths(again)), "no stored article is fetched again"
    assert sum(r.status == 304 for r in again.requests) >= 6  # home pages, sitemaps, feeds
    crawl_id = again.summary["crawl_id"]
    for dataset in ("articles", "versions", "duplicates", "pages"):
        assert rows(scenario.out, dataset, crawl_id).empty, dataset
    assert again.summary["articles_written"] == 0
    assert again.summary["status"] == "ok"
    # every stored article is unchanged, though the 304s kept this run from reaching them
    stored = rows(scenario.out, "articles", first.summary["crawl_id"])
    per_site = stored[stored.is_article].groupby("site").size().to_dict()
    found = {name: s["incremental"]["unchanged"] for name, s in again.summary["sites"].items()}
    assert found == per_site


def test_day_one_fetches_only_new_changed_and_listing_pages(scenario: Scenario) -> None:
    web0, web1 = scenario.web0, scenario.web1
    fetched = set(paths(scenario.day1))
    counts = {k: 0 for k in ("new", "changed", "unchanged", "not_modified", "duplicates")}
    for site in scenario.day1.summary["sites"].values():
        for name in counts:
            counts[name] += site["incremental"][name]
    print(
        f"requests: day 1 {len(scenario.day1.requests)} "
        f"({len(scenario.day1.requests) / len(scenario.day0.requests):.1%} of day 0's); {counts}"
    )
    for old, new in zip(web0.sites, web1.sites, strict=True):
        unchanged = {p for p, a in old.articles.items() if new.articles[p].text == a.text}
        added = set(new.articles) - set(old.articles)
        changed = set(old.articles) - unchanged
        assert not unchanged & fetched, f"{old.name}: unchanged articles fetched again"
        assert added <= fetched, f"{old.name}: every new article is fetched"
        assert changed <= fetched, f"{old.name}: the sitemap's lastmod brings the update"
    for request in scenario.day1.requests:  # everything else lists articles (or is the AMP view)
        kind = _page_kind(web0, web1, request.path)
        assert kind in ("new", "changed", "amp", "listing", "home", "discovery", "about"), request


def _page_kind(old: DemoWeb, web: DemoWeb, path: str) -> str:
    for site, before in zip(web.sites, old.sites, strict=True):
        if "outputType=amp" in path:
            return "amp"
        if path in site.articles:
            if path not in before.articles:
                return "new"
            same = before.articles[path].text == site.articles[path].text
            return "unchanged" if same else "changed"
    for site in web.sites:
        page = site.pages.get(path) or site.pages.get(path.split("?")[0])
        if page is not None and page.kind != "article":
            return {"robots": "discovery", "feed": "discovery", "sitemap": "discovery"}.get(
                page.kind, page.kind
            )
    return "unknown"


def test_each_article_once_across_runs(scenario: Scenario) -> None:
    articles = rows(scenario.out, "articles")
    assert not articles.final_url.duplicated().any(), "DIR/articles has each page once"
    day1 = scenario.day1.summary["crawl_id"]
    new_gold = set(scenario.gold1) - set(scenario.gold0)
    written = articles[articles.crawl == day1]
    assert set(written[written.is_article].final_url) == new_gold
    assert not set(written.final_url) & set(scenario.gold0), "no old article written again"
    stored = articles[articles.final_url.isin(scenario.gold1)]
    assert len(stored) == len(scenario.gold1), "every gold article of day 1 is there, once"


def test_changed_article_is_a_version_and_amp_view_a_duplicate(scenario: Scenario) -> None:
    day1 = scenario.day1.summary["crawl_id"]
    versions = rows(scenario.out, "versions", day1)
    changed = versions[versions.is_article]
    assert len(changed) == 3  # one updated article per site
    assert changed.repeat_reason.eq("changed").all()
    assert changed.text.str.contains("Correction: an earlier version").all()
    duplicates = rows(scenario.out, "duplicates", day1)
    assert len(duplicates) == 3 and duplicates.repeat_reason.eq("canonical").all()
    assert duplicates.final_url.str.contains("outputType=amp").all()
    assert set(duplicates.repeat_of) <= set(scenario.gold0)
    for site in scenario.day1.summary["sites"].values():
        counts = site["incremental"]
        assert counts["changed"] == 1 and counts["duplicates"] == 1
        assert counts["unchanged"] >= 40 and counts["new"] in (2, 3)


def test_the_redesigned_site_is_flagged_and_the_others_are_not(scenario: Scenario) -> None:
    sites = scenario.day1.summary["sites"]
    flagged = {name for name, site in sites.items() if site["incremental"]["redesigned"]}
    assert flagged == {REDESIGNED[0]}
    assert "REDESIGNED" in scenario.day1.process.stdout
    for name, site in sites.items():
        unseen = site["incremental"]["template_unseen_pct"]
        print(f"{name}: {unseen}% of the new pages' template unseen before")
        assert (unseen >= 50) == (name == REDESIGNED[0])


def test_the_small_increment_is_cleaned_with_the_site_template(scenario: Scenario) -> None:
    """Day 1's new articles: a few a site, yet cut by the site pass (the stored pages carry the
    template), as well as a crawl of the whole day-1 web from scratch cuts them."""
    new_gold = {u: a for u, a in scenario.gold1.items() if u not in scenario.gold0}
    day1 = scenario.day1.summary["crawl_id"]
    increment = rows(scenario.out, "articles", day1)
    increment = increment[increment.final_url.isin(new_gold)]
    assert increment.stage.eq("site").all()
    scratch = rows(scenario.fresh, "articles", scenario.scratch.summary["crawl_id"])
    ours, full = f1(increment, new_gold), f1(scratch, new_gold)
    print(f"new articles, shingle F1: incremental {ours:.3f}, crawl from scratch {full:.3f}")
    assert ours >= full - 0.005


def test_full_fetches_everything_again_and_still_writes_each_article_once(
    scenario: Scenario,
) -> None:
    scratch, full = scenario.scratch, scenario.full
    host = scenario.server.site_urls[FULL_SITE].split("//", 1)[1]
    before = [r for r in scratch.requests if r.host == host]
    assert len(full.requests) >= 0.9 * len(before)
    assert not any(r.status == 304 for r in full.requests), "no conditional requests"
    crawl_id = full.summary["crawl_id"]
    assert rows(scenario.fresh, "articles", crawl_id).empty
    assert rows(scenario.fresh, "duplicates", crawl_id).empty
    articles = len(scenario.web1.site(FULL_SITE).articles)
    unchanged = full.summary["sites"][FULL_SITE]["incremental"]["unchanged"]
    assert unchanged >= articles - 1  # fetched again, same text: not written


def test_retrain_on_the_last_crawl_and_compare_with_the_previous_model(
    scenario: Scenario, tmp_path: Path
) -> None:
    nodes = scenario.out / "nodes"
    day0, day1 = scenario.day0.summary["crawl_id"], scenario.day1.summary["crawl_id"]
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    newscrawl = [sys.executable, "-m", "newscrawl.cli"]
    sources = ((old, [str(nodes / f"crawl={day0}")]), (new, [str(nodes), "--last", "1"]))
    for target, source in sources:
        done = subprocess.run(
            [*newscrawl, "train", *source, "--out", str(target), "--hold-back", "-q"],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    model = json.loads(new.read_text())
    assert model["provenance"]["crawls"] == [day1], "the model records its training crawls"
    held = model["metrics"]["holdout"]["site_names"]
    assert held and not set(held) & set(model["training_sites"])
    compare = [*newscrawl, "models", "compare", str(new), str(old), str(nodes)]
    done = subprocess.run(compare, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    print(done.stdout)
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"held-back sites ({len(held)}")
    assert [line.split()[0] for line in lines[2:4]] == ["new", "old"]
    assert all(line.split()[5] == "0" for line in lines[2:4]), "neither model saw those sites"
    assert "new vs old: template F1" in done.stdout
