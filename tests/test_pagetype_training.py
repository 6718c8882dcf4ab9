"""Training the page type model on whole datasets of one kind (news as article), from several
data folders, and from a features cache of more datasets than the run needs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from newscrawl.cli import main
from newscrawl.extractors.blockmodel.block_features import FEATURES
from newscrawl.extractors.blockmodel.pagetype import page_weights
from newscrawl.training.learned_crossval import held_out_kinds
from newscrawl.training.learned_trainset import (
    build_training_set,
    cache_serves,
    load_training_set,
    page_type_labels,
    save_training_set,
)
from tests.test_guard_pagetype import _one_page_set
from tests.test_learned import synthetic_dataset


def _untyped(folder: Path, sites: int, pages: int) -> Path:
    """A synthetic dataset whose meta gives no page_type (as a news dataset's)."""
    synthetic_dataset(folder, sites=sites, pages=pages)
    meta = folder / "meta.jsonl"
    lines = [json.loads(line) for line in meta.read_text().splitlines()]
    meta.write_text("".join(json.dumps({**m, "page_type": None}) + "\n" for m in lines))
    return folder


def _source(*folders: Path, trafilatura: bool = False) -> dict[str, object]:
    return {"datasets": [str(f) for f in folders], "limit": None, "trafilatura": trafilatura}


def test_a_features_cache_of_more_datasets_serves_the_pages_of_fewer(tmp_path: Path) -> None:
    one = synthetic_dataset(tmp_path / "one", sites=2, pages=2)
    two = synthetic_dataset(tmp_path / "two", sites=3, pages=2)
    path = tmp_path / "set.npz"
    save_training_set(build_training_set([one, two]), path, _source(one, two))
    alone = build_training_set([two])
    back = load_training_set(path, _source(two))
    for name in ("features", "groups", "share", "tokens", "page"):
        assert np.array_equal(getattr(back, name), getattr(alone, name)), name
    assert (back.page_ids, back.page_site, back.page_dataset) == (
        alone.page_ids,
        alone.page_site,
        alone.page_dataset,
    )
    assert (back.texts, back.gold, back.peers, back.page_type) == (
        alone.texts,
        alone.gold,
        alone.peers,
        alone.page_type,
    )
    assert back.datasets == alone.datasets == {"two": 6}
    # another order, a dataset it lacks, or trafilatura's texts it lacks: other pages
    for wanted in (_source(two, one), _source(two, tmp_path / "three"),
                   _source(two, trafilatura=True)):  # fmt: skip
        assert not cache_serves(_source(one, two), wanted)
        with pytest.raises(ValueError, match="built from other pages"):
            load_training_set(path, wanted)
    assert cache_serves(_source(one, two, trafilatura=True), _source(one))


def test_a_large_dataset_of_one_type_does_not_crowd_out_a_few_pages_of_it() -> None:
    # one dataset: balanced classes (each type's pages weigh the same in total)
    labels = ["article"] * 6 + ["forum"] * 2
    alone = page_weights(labels, ["w"] * 8)
    assert np.allclose(alone, page_weights(labels))
    assert np.allclose(alone, [8 / (2 * 6)] * 6 + [8 / (2 * 2)] * 2)
    # 2 documentation pages of a benchmark beside 98 of a documentation dataset: at power 1
    # each dataset's share of the type is half, at 0.5 the benchmark's pages weigh 7 times more
    # each than the dataset's; every type still weighs the same in total
    kinds = ["documentation"] * 100 + ["article"] * 4
    names = ["bench"] * 2 + ["docs"] * 98 + ["bench"] * 4
    even = page_weights(kinds, names, power=1.0)
    assert even[:2].sum() == pytest.approx(even[2:100].sum())
    half = page_weights(kinds, names, power=0.5)
    assert half[0] / half[2] == pytest.approx(7.0)
    assert half[:100].sum() == pytest.approx(half[100:].sum())
    none = page_weights(kinds, names, power=0.0)
    assert np.allclose(none, page_weights(kinds))


@pytest.mark.slow
def test_whole_datasets_labelled_train_the_routing_page_types() -> None:
    # d0's pages are typed forum in their meta, d1's have no type: labelled article whole,
    # the two types are told apart by one column, and every page is typed by a model that
    # never saw its site (or, holding out datasets, its dataset: d1 is then typed by a model
    # of forum pages alone, so it keeps the type a model of both datasets gives it)
    pages = 48
    rows = np.zeros((pages, len(FEATURES)), dtype=np.float32)
    rows[:, FEATURES.index("tokens_log")] = 3.0
    rows[pages // 2 :, FEATURES.index("seed_nce")] = 1.0
    data = _one_page_set(rows[:1], ["x"], "x")
    data.features = rows
    data.page = np.arange(pages, dtype=np.int32)
    data.page_ids = [f"p{i}" for i in range(pages)]
    data.page_site = [f"s{i}" for i in range(pages)]
    data.page_dataset = ["d0"] * (pages // 2) + ["d1"] * (pages // 2)
    data.page_type = ["forum"] * (pages // 2) + [""] * (pages // 2)
    labels = page_type_labels(data, {"d1": "article", "d0": "product"})
    truth = ["forum"] * (pages // 2) + ["article"] * (pages // 2)
    assert labels == truth  # a meta page_type wins over its dataset's
    found = held_out_kinds(data, ["site", "dataset"], labels)
    assert found["site"] == truth and found["dataset"] == truth


@pytest.mark.slow
def test_models_build_trains_page_types_on_datasets_labelled_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = synthetic_dataset(tmp_path / "data" / "typed", sites=5, pages=6)
    news = _untyped(tmp_path / "more" / "news", sites=5, pages=6)
    out = tmp_path / "out"
    argv = ["models", "build", str(typed.parent), str(news), "--only", "page-type", "-q"]
    argv += ["--out", str(out)]
    assert main([*argv, "--page-type", "news=article"]) == 0
    printed = capsys.readouterr().out
    assert "news: accuracy" in printed and "typed: accuracy" in printed
    provenance = json.loads((out / "page_type_model.json").read_text())["provenance"]
    assert provenance["trained_on"]["pages"] == 60  # 30 typed pages and 30 news pages
    assert set(provenance["crossval"]["by_dataset"]) == {"news", "typed"}
    assert provenance["crossval"]["by_dataset"]["news"]["recall"] == {
        "article": provenance["crossval"]["by_dataset"]["news"]["accuracy"]
    }
    assert "--page-type news=article" in provenance["command"]
    assert str(news) in provenance["command"]
    # without the label, the news pages are not parsed for the page type model at all
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    plain = json.loads((tmp_path / "plain" / "page_type_model.json").read_text())
    assert plain["provenance"]["trained_on"]["pages"] == 30


def test_page_type_labels_that_name_no_dataset_or_no_type_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    typed = synthetic_dataset(tmp_path / "data" / "typed", sites=2, pages=2)
    argv = ["models", "build", str(typed.parent), "--only", "page-type", "-q"]
    argv += ["--out", str(tmp_path / "out")]
    assert main([*argv, "--page-type", "nosuch=article"]) == 2
    assert "--page-type names no dataset given: nosuch (datasets: typed)" in (
        capsys.readouterr().err
    )
    for wrong in ("typed=blog", "typed", "=article"):
        with pytest.raises(SystemExit) as stop:
            main([*argv, "--page-type", wrong])
        assert stop.value.code == 2
        assert "NAME=TYPE expected" in capsys.readouterr().err
    twice = synthetic_dataset(tmp_path / "more" / "typed", sites=2, pages=2)
    assert main([*argv[:3], str(twice), *argv[3:]]) == 2
    assert "two datasets called typed" in capsys.readouterr().err
    assert main(["models", "crossval", str(typed), "--page-type", "news=article", "-q"]) == 2
    assert "--page-type names no dataset given: news" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
