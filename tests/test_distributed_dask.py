"""Dask batch stages: re-extraction over stored pages on a 2-worker LocalCluster must match the
single-process run row for row."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from distributed import Client

from newscrawl.scale.dask_stages import (
    ReExtract,
    SiteLevelStage,
    TrainingSet,
    dask_client,
    plan_sites,
    read_output,
    run_stage,
)

SENTENCES = [
    "The harbour board met on Tuesday to discuss the new ferry timetable for the winter season.",
    "Residents of the northern district asked for more frequent crossings in the early morning.",
    "The board chair said the budget allows two extra boats but not before the spring months.",
    "A survey of three hundred commuters found that most of them travel before eight o'clock.",
    "Local shop owners welcomed the plan, saying that late ferries would bring more visitors.",
    "Engineers will inspect the old pier next week to decide whether it can take larger boats.",
]


def page(site: int, n: int) -> str:
    body = " ".join(SENTENCES[(n + k) % len(SENTENCES)] for k in range(4))
    paragraphs = "".join(f"<p>{body} Story {n} of site {site}, part {k}.</p>" for k in range(3))
    nav = "".join(f'<li><a href="/section/{k}">Section {k}</a></li>' for k in range(8))
    return (
        f"<html><head><title>Ferry story {n} - Site {site}</title></head><body>"
        f"<header><ul>{nav}</ul></header><div class='main'><h1>Ferry story {n}</h1>"
        f"<article>{paragraphs}</article></div>"
        f"<footer><a href='/about'>About site {site}</a> <a href='/contact'>Contact</a></footer>"
        "</body></html>"
    )


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pages dataset as several workers would leave it: sites spread over several shards."""
    root = tmp_path_factory.mktemp("pages")
    for shard in range(3):
        rows: dict[str, list[object]] = {"site": [], "url": [], "html": []}
        for site in range(4):
            for n in range(shard, 12, 3):
                rows["site"].append(f"site{site}.test")
                rows["url"].append(f"http://site{site}.test/story/{n}")
                rows["html"].append(page(site, n).encode())
        if shard == 0:  # a stored page that is not HTML must be reported, not crash the stage
            rows["site"].append("site0.test")
            rows["url"].append("http://site0.test/blank")
            rows["html"].append(b"")
        pq.write_table(pa.table(rows), root / f"worker{shard}.parquet")
    return root


def test_plan_maps_sites_to_their_shards(pages: Path) -> None:
    plan = plan_sites(pages)
    assert list(plan) == [f"site{i}.test" for i in range(4)]
    assert all(len(files) == 3 for files in plan.values())


@pytest.fixture(scope="module")
def cluster() -> Iterator[Client]:
    with dask_client("local", n_workers=2) as client:
        assert client is not None
        yield client


def both_ways(stage: object, dataset: Path, out: Path, client: Client) -> pa.Table:
    """Run `stage` in this process and on the cluster; the outputs must be equal row for row."""
    single = run_stage(stage, dataset, out / "single")
    spread = run_stage(stage, dataset, out / "dask", client=client)
    assert spread.workers == 2
    assert not single.failed and not spread.failed, (single.failed, spread.failed)
    assert single.rows == spread.rows > 0
    expected = read_output(out / "single")
    assert read_output(out / "dask").to_pylist() == expected.to_pylist()
    return expected


def test_reextract_on_two_dask_workers_matches_single_process(
    pages: Path, tmp_path: Path, cluster: Client
) -> None:
    expected = both_ways(ReExtract("nce"), pages, tmp_path, cluster)
    assert expected.num_rows == 4 * 12 + 1
    rows = {row["url"]: row for row in expected.to_pylist()}
    story = rows["http://site2.test/story/5"]
    assert "Story 5 of site 2" in story["text"] and "Section 3" not in story["text"]
    assert rows["http://site0.test/blank"]["error"]


def test_sitelevel_and_training_set_on_dask_match_single_process(
    pages: Path, tmp_path: Path, cluster: Client
) -> None:
    from newscrawl.training.template_train import read_nodes

    nodes = both_ways(SiteLevelStage(), pages, tmp_path / "nodes", cluster)
    assert set(nodes.column("site").to_pylist()) == {f"site{i}.test" for i in range(4)}
    labels = nodes.column("label").to_pylist()
    assert any(labels) and not all(labels)  # the shared chrome is template, stories are not
    training = both_ways(
        TrainingSet(max_nodes=50), tmp_path / "nodes" / "single", tmp_path / "train", cluster
    )
    assert training.num_rows <= 4 * 50
    data = read_nodes([tmp_path / "train" / "dask"])  # what `newscrawl train` reads
    assert len(data) == training.num_rows


def test_missing_site_column_is_a_clear_error(tmp_path: Path) -> None:
    pq.write_table(pa.table({"url": ["http://a/"]}), tmp_path / "x.parquet")
    with pytest.raises(ValueError, match="no 'site' column"):
        run_stage(ReExtract(), tmp_path, tmp_path / "out")


def test_reextract_command_on_a_scheduler_address(
    pages: Path, tmp_path: Path, cluster: Client
) -> None:
    import argparse

    from newscrawl.commands import reextract

    def command(*argv: str) -> int:
        parser = argparse.ArgumentParser()
        reextract.add_arguments(parser)
        return reextract.run(parser.parse_args([str(pages), *argv]))

    assert command("--out", str(tmp_path / "a")) == 0
    assert command("--out", str(tmp_path / "b"), "--cluster", cluster.scheduler.address) == 0
    assert read_output(tmp_path / "a").to_pylist() == read_output(tmp_path / "b").to_pylist()
    assert command("--out", str(tmp_path / "a")) == 2  # refuses to mix into earlier output
    assert command("--out", str(tmp_path / "c"), "--extractor", "nope") == 2


def test_reextract_says_what_is_wrong_with_its_input(
    pages: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from newscrawl.commands import reextract

    def command(source: Path, *argv: str) -> int:
        parser = argparse.ArgumentParser()
        reextract.add_arguments(parser)
        return reextract.run(parser.parse_args([str(source), "--out", str(tmp_path / "o"), *argv]))

    assert command(tmp_path / "absent") == 2
    assert "no such folder" in capsys.readouterr().err
    articles = tmp_path / "crawl" / "articles"
    articles.mkdir(parents=True)
    rows = pa.table({"site": ["a.test"], "url": ["http://a.test/"]})
    pq.write_table(rows, articles / "a.parquet")
    (tmp_path / "crawl" / "pages").mkdir()
    assert command(articles) == 2
    assert "no html column, not a pages dataset" in capsys.readouterr().err
    assert command(tmp_path / "crawl") == 2
    assert f"its pages are {tmp_path / 'crawl' / 'pages'}" in capsys.readouterr().err
    assert command(pages, "--site", "bogus.test") == 2
    assert "no such site in" in capsys.readouterr().err
