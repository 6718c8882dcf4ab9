"""Publishing a finished site's staged partitions: one rename, first attempt wins."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from newscrawl.scale.shards import (
    abandoned_partitions,
    dataset_names,
    merge,
    publish_partition,
    staging_root,
)


def stage(out: Path, worker: str, site: str, urls: list[str]) -> Path:
    folder = staging_root(out, worker) / "articles" / "crawl=r1" / f"site={site}"
    folder.mkdir(parents=True)
    pq.write_table(pa.table({"final_url": urls}), folder / f"part-{worker}.parquet")
    return folder


def test_first_published_attempt_wins(tmp_path: Path) -> None:
    first = stage(tmp_path, "w1", "a.test", ["http://a.test/1", "http://a.test/2"])
    second = stage(tmp_path, "w2", "a.test", ["http://a.test/1", "http://a.test/2"])
    assert publish_partition(first, tmp_path, "articles", "r1", "a.test")
    assert not publish_partition(second, tmp_path, "articles", "r1", "a.test")
    assert not second.exists() and not first.exists()
    published = tmp_path / "articles" / "crawl=r1" / "site=a.test"
    assert [p.name for p in published.iterdir()] == ["part-w1.parquet"]


def test_merge_compacts_and_reports_abandoned_sites(tmp_path: Path) -> None:
    out = tmp_path / "out"
    for n, site in enumerate(["a.test", "b.test"]):
        folder = stage(out, f"w{n}", site, [f"http://{site}/{i}" for i in range(3)])
        publish_partition(folder, out, "articles", "r1", site)
    stage(out, "dead", "c.test", ["http://c.test/1"])  # a worker that died mid-site
    assert dataset_names(out) == ["articles"]
    assert [p.name for p in abandoned_partitions(out)] == ["site=c.test"]
    assert merge(out, tmp_path / "merged") == {"articles": 6}
    merged = pq.read_table(tmp_path / "merged" / "articles", partitioning="hive").to_pylist()
    assert sorted(row["final_url"] for row in merged) == sorted(
        f"http://{site}/{i}" for site in ("a.test", "b.test") for i in range(3)
    )
    assert {row["site"] for row in merged} == {"a.test", "b.test"}


def published(out: Path, dataset: str = "articles") -> None:
    for site in ("a.test", "b.test"):
        folder = staging_root(out, "w1") / dataset / "crawl=r1" / f"site={site}"
        folder.mkdir(parents=True)
        pq.write_table(pa.table({"final_url": [f"http://{site}/1"]}), folder / "part-w1.parquet")
        publish_partition(folder, out, dataset, "r1", site)


def test_merge_refuses_a_folder_inside_out_and_leaves_nothing_when_it_fails(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    published(out)
    (out / "notes").mkdir()
    (out / "notes" / "readme.html").write_text("<p>not a dataset</p>")
    assert dataset_names(out) == ["articles"]  # a folder without Parquet is no dataset
    with pytest.raises(ValueError, match="inside"):
        merge(out, out / "merged")
    with pytest.raises(ValueError, match="at least 1"):
        merge(out, tmp_path / "m0", rows_per_file=0)
    assert not (out / "merged").exists() and not (tmp_path / "m0").exists()
    # a dataset whose files do not read: the datasets merged before it are taken back
    published(out, "pages")
    (out / "pages" / "crawl=r1" / "site=a.test" / "part-w1.parquet").write_bytes(b"not parquet")
    with pytest.raises(ValueError, match="nothing of this merge is left"):
        merge(out, tmp_path / "m1")
    assert not (tmp_path / "m1" / "articles").exists()
    assert merge(out, tmp_path / "m2", ["articles"]) == {"articles": 2}
