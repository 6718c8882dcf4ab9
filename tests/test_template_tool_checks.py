"""The template tools refuse bad input clearly: damaged Parquet files in pages and nodes
datasets, hand-edited model files, models for other features or boxes in `models compare`;
and `train --hold-back` and `models compare` report the same nodes (found by a hostile probe)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from newscrawl.models.template_model import ModelError, load_model

from newscrawl.cli import main

SITES = {f"s{i}.example.org": 6 for i in range(4)}


def truncate(folder: Path, which: int = 0) -> Path:
    """Cut a Parquet file under `folder` in half, as a full disk or a bad copy would: the first
    (whose schema pyarrow reads) or another (`which`: its index, sorted by name)."""
    file = sorted(folder.rglob("*.parquet"))[which]
    data = file.read_bytes()
    file.write_bytes(data[: len(data) // 2])
    return file


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A crawl's pages dataset of 4 small sites, its SiteLevel nodes, and a model trained on
    them with one site held back."""
    from test_sitelevel import write_pages

    root = tmp_path_factory.mktemp("template-tools")
    pages = write_pages(root / "pages", SITES)
    nodes, model = root / "nodes", root / "model.json"
    assert main(["sitelevel", str(pages), "--out", str(nodes), "-q"]) == 0
    argv = ["train", str(nodes), "--out", str(model), "-q", "--hold-back", "--holdout", "0.25"]
    assert main(argv) == 0
    return {"root": root, "pages": pages, "nodes": nodes, "model": model}


def one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


# -- 1. a damaged file in a pages dataset -------------------------------------------------------


def test_sitelevel_refuses_a_pages_dataset_with_a_truncated_file(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = shutil.copytree(work["pages"], tmp_path / "pages")
    damaged = truncate(pages, -1)
    capsys.readouterr()
    assert main(["sitelevel", str(pages), "--out", str(tmp_path / "nodes"), "-q"]) == 2
    err = one_line_error(capsys)
    assert str(damaged) in err and "not a readable Parquet file" in err
    assert not list((tmp_path / "nodes").rglob("*.parquet"))  # no site written short


def test_reextract_refuses_a_pages_dataset_with_a_truncated_file(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = shutil.copytree(work["pages"], tmp_path / "pages")
    damaged = truncate(pages, -1)  # not the first: pyarrow's schema pass never opens it
    capsys.readouterr()
    assert main(["reextract", str(pages), "--out", str(tmp_path / "out")]) == 2
    assert str(damaged) in one_line_error(capsys)


# -- 2. compare: a model for other features or boxes ---------------------------------------------


def edited(model: Path, to: Path, **changes: Any) -> Path:
    data = json.loads(model.read_text())
    data.update(changes)
    to.write_text(json.dumps(data))
    return to


def test_compare_refuses_a_model_for_other_features(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = work["model"]
    features = ["bogus", *json.loads(model.read_text())["features"][1:]]
    bogus = edited(model, tmp_path / "bogus.json", features=features)
    capsys.readouterr()
    assert main(["models", "compare", str(bogus), str(model), str(work["nodes"])]) == 2
    err = one_line_error(capsys)
    assert "model features" in err and "differ" in err and str(bogus) in err
    assert main(["models", "compare", str(model), str(bogus), str(work["nodes"])]) == 2
    assert f"OLD {bogus}" in one_line_error(capsys)


def test_compare_refuses_a_model_for_another_geometry(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = work["model"]
    assert load_model(model).geometry == "flow"  # what `sitelevel` boxes are by default
    static = edited(model, tmp_path / "static.json", geometry="static")
    capsys.readouterr()
    assert main(["models", "compare", str(static), str(model), str(work["nodes"])]) == 2
    err = one_line_error(capsys)
    assert "'static' geometry" in err and "'flow'" in err and str(static) in err


# -- 3. compare scores the nodes train's held-out report scored ----------------------------------


def test_compare_agrees_with_the_held_out_report_of_train(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model, report = work["model"], tmp_path / "compare.json"
    argv = ["models", "compare", str(model), str(model), str(work["nodes"]), "--json", str(report)]
    assert main(argv) == 0
    holdout = load_model(model).metrics["holdout"]
    compared = json.loads(report.read_text())
    assert compared["sites"] == holdout["site_names"]
    assert compared["nodes"] == holdout["nodes"]
    new = compared["models"][0]
    for figure in ("accuracy", "precision", "recall", "f1"):
        assert new[figure] == pytest.approx(holdout[figure])


# -- 4. hand-edited model files ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"options": {"threshold": None}}, "options.threshold"),
        ({"options": {"threshold": "high"}}, "options.threshold"),
        ({"options": {"threshold": float("nan")}}, "options.threshold"),
        ({"options": {"threshold": 2.0}}, "options.threshold"),
        ({"options": {"threshold": 0}}, "options.threshold"),
        ({"options": {"threshold": True}}, "options.threshold"),
        ({"options": {"min_area": -1}}, "options.min_area"),
        ({"boundaries": "reversed"}, "boundaries"),
        ({"geometry": "svg"}, "geometry"),
    ],
)
def test_a_hand_edited_model_file_is_refused_when_loaded(
    work: dict[str, Path], tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    data = json.loads(work["model"].read_text())
    if change.get("boundaries") == "reversed":
        change = {"boundaries": data["boundaries"][::-1]}
    if "options" in change:
        change = {"options": {**data["options"], **change["options"]}}
    path = edited(work["model"], tmp_path / "edited.json", **change)
    with pytest.raises(ModelError) as refused:
        load_model(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: {field}") and "\n" not in message


def test_a_hand_edited_model_is_refused_by_extract(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from newscrawl.lab.synthetic_sites import synthetic_site

    data = json.loads(work["model"].read_text())
    model = edited(
        work["model"], tmp_path / "m.json", options={**data["options"], "threshold": None}
    )
    page = tmp_path / "page.html"
    page.write_text(synthetic_site("x.example.org", pages=1)[0][1], encoding="utf-8")
    capsys.readouterr()
    assert main(["extract", "-e", "template", "--model", str(model), str(page)]) == 2
    err = one_line_error(capsys)
    assert str(model) in err and "options.threshold" in err


def test_legacy_and_shipped_model_files_still_load(work: dict[str, Path], tmp_path: Path) -> None:
    data = json.loads(work["model"].read_text())
    del data["geometry"]  # written before models recorded it: static boxes
    data["options"].pop("threshold", None)
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = load_model(tmp_path / "old.json")
    assert old.geometry == "static" and old.threshold == 0.5
    assert 0 < load_model().threshold <= 1  # the bundled default model


# -- 5. train --hold-back describes the final fit ------------------------------------------------


def test_hold_back_report_and_metrics_describe_the_final_fit(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "m.json"
    argv = ["train", str(work["nodes"]), "--out", str(model), "-q", "--holdout", "0.25"]
    capsys.readouterr()
    assert main([*argv, "--hold-back"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    held_back = load_model(model)
    metrics = held_back.metrics
    assert metrics["sites"] == len(held_back.training_sites) == len(SITES) - 1
    assert metrics["held_back"] == metrics["holdout"]["sites"] == 1
    assert metrics["nodes"] == sum(bucket["nodes"] for bucket in metrics["buckets"])
    assert metrics["nodes"] == sum(b.nodes for b in held_back.buckets if b is not None)
    expected = f"trained on {metrics['nodes']:,} nodes of 3 sites (1 held-out site held back);"
    assert header.startswith(expected)
    # refitted on every site, the model describes them all
    assert main(argv) == 0
    assert "held back" not in capsys.readouterr().out
    every = load_model(model).metrics
    assert every["sites"] == len(SITES) and every["held_back"] == 0
    assert every["nodes"] == metrics["nodes"] + metrics["holdout"]["nodes"]


# -- 6. train names what is wrong with its NODES ---------------------------------------------


def test_train_says_a_nodes_folder_is_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "emptynodes"
    empty.mkdir()
    assert main(["train", str(empty), "--out", str(tmp_path / "m.json"), "-q"]) == 2
    err = one_line_error(capsys)
    assert f"{empty}: holds no nodes rows" in err and "column" not in err


def test_train_and_compare_name_a_truncated_nodes_file(
    work: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes = shutil.copytree(work["nodes"], tmp_path / "nodes")
    damaged = truncate(nodes)
    capsys.readouterr()
    assert main(["train", str(nodes), "--out", str(tmp_path / "m.json"), "-q"]) == 2
    assert str(damaged) in one_line_error(capsys)
    model = str(work["model"])
    assert main(["models", "compare", model, model, str(nodes)]) == 2
    assert str(damaged) in one_line_error(capsys)
