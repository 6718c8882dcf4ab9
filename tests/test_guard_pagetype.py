"""The learned extractor's recall guard and page types: unit rules, model files, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from newscrawl.extractors.blockmodel.block_features import FEATURES
from newscrawl.extractors.blockmodel.model import ModelFileError
from newscrawl.extractors.blockmodel.pagetype import (
    PAGE_TYPES,
    PageTypeModel,
    bundled_page_type_model,
    crossval_page_types,
    fit_page_types,
    load_page_type_model,
    page_vector,
)
from newscrawl.extractors.blockmodel.recall_guard import (
    DOCS_GUARD,
    OFF,
    GuardParams,
    guard_selection,
    routed_guard,
)
from newscrawl.extractors.blockmodel.stacking import GROUPS
from newscrawl.extractors.learned import GUARDED, Learned, LearnedConfig
from newscrawl.extractors.nce import NCE
from newscrawl.html.parse import parse_html
from newscrawl.training.learned_crossval import HeldOutRun, generalisation_rows
from newscrawl.training.learned_trainset import TrainingSet
from tests.test_learned import ARTICLE, FORUM


def _rows(tokens: list[int], nce: list[int], other: list[int]) -> np.ndarray:
    rows = np.zeros((len(tokens), len(FEATURES)))
    rows[:, FEATURES.index("tokens_log")] = np.log1p(tokens)
    rows[:, FEATURES.index("seed_nce")] = nce
    rows[:, FEATURES.index("seed_cetd-tpc")] = other
    return rows


GUARD = GuardParams(agree=0.5, kept=0.5, floor=0.1, min_tokens=30)


def test_guard_completes_a_confirmed_container_the_trees_mostly_dropped() -> None:
    # blocks: menu (out of the container), four container blocks, footer
    rows = _rows([10, 40, 40, 40, 5, 10], nce=[0, 1, 1, 1, 1, 0], other=[0, 1, 1, 1, 0, 0])
    scores = np.array([0.01, 0.9, 0.3, 0.2, 0.02, 0.05])
    kept, used = guard_selection(rows, scores, 0.4, GUARD)
    # kept 40 of 125 container tokens (< 50%): the container's blocks scored >= 0.1 come back;
    # the share bar inside it (0.02) and everything outside it stay out
    assert used and kept.tolist() == [False, True, True, True, False, False]
    off, used_off = guard_selection(rows, scores, 0.4, OFF)
    assert not used_off and off.tolist() == (scores >= 0.4).tolist()


@pytest.mark.parametrize(
    ("scores", "other", "why"),
    [
        ([0.01, 0.9, 0.9, 0.3, 0.02, 0.05], [0, 1, 1, 1, 0, 0], "kept enough of the container"),
        ([0.01, 0.9, 0.3, 0.2, 0.02, 0.05], [0, 0, 0, 0, 0, 0], "no other seed agrees"),
    ],
)
def test_guard_leaves_the_selection_alone(scores: list[float], other: list[int], why: str) -> None:
    rows = _rows([10, 40, 40, 40, 5, 10], nce=[0, 1, 1, 1, 1, 0], other=other)
    kept, used = guard_selection(rows, np.array(scores), 0.4, GUARD)
    assert not used, why
    assert kept.tolist() == (np.array(scores) >= 0.4).tolist()


def test_guard_ignores_tiny_containers_and_empty_pages() -> None:
    rows = _rows([5, 5], nce=[1, 1], other=[1, 1])
    assert guard_selection(rows, np.array([0.2, 0.2]), 0.4, GUARD)[1] is False
    empty = np.zeros((0, len(FEATURES)))
    kept, used = guard_selection(empty, np.zeros(0), 0.4, GUARD)
    assert len(kept) == 0 and not used


def test_guard_settings_round_trip_and_defaults() -> None:
    assert GuardParams.from_json(GUARD.to_json()) == GUARD
    assert GuardParams.from_json(None) == GuardParams()
    assert GuardParams.from_json({"kept": 0.7}) == GuardParams(kept=0.7)


def test_an_empty_selection_stays_empty_outside_documentation() -> None:
    """A threshold so high that the trees keep nothing of an article NCE and CETD-TPC agree
    on: no main text is the trees' answer on a page that is not documentation, so the guard
    leaves it empty (it completes selections, it does not replace an empty one)."""
    strict = Learned(LearnedConfig(threshold=1.5)).extract(parse_html(ARTICLE))
    assert strict.page_type != "documentation"
    assert strict.extractor == "learned" and strict.text == ""
    plain = Learned().extract(parse_html(ARTICLE))
    assert plain.extractor == "learned"  # the trees kept the article: nothing to complete
    assert "first buses crossed it" in plain.text


def test_every_page_gets_a_page_type_from_the_shipped_model() -> None:
    model = load_page_type_model(bundled_page_type_model())
    assert set(model.classes) == set(PAGE_TYPES)
    assert model.provenance["crossval"]["accuracy"] > 0.5
    for html in (ARTICLE, FORUM):
        assert Learned().extract(parse_html(html)).page_type in PAGE_TYPES
    assert Learned().extract(parse_html(ARTICLE)).page_type == "article"


def test_page_type_model_fits_round_trips_and_refuses_bad_files(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    width = len(page_vector(np.zeros((1, len(FEATURES)))))
    vectors = rng.normal(size=(90, width))
    labels = ["forum", "product", "listing"] * 30
    for i, label in enumerate(labels):  # one column tells the types apart
        vectors[i, 5] = ("forum", "product", "listing").index(label) * 3
    model = fit_page_types(vectors, labels, {"command": "test"}, iterations=10)
    assert model.predict(vectors) == labels
    path = tmp_path / "types.json"
    model.save(path)
    again = load_page_type_model(path)
    assert again.predict(vectors) == labels
    first = path.read_bytes()
    again.save(path)
    assert path.read_bytes() == first  # the same model, the same bytes
    sites = [f"s{i}" for i in range(90)]
    predicted, figures = crossval_page_types(vectors, labels, sites, 3, iterations=10)
    assert figures["accuracy"] > 0.9 and len(predicted) == 90
    two = fit_page_types(vectors[:60], labels[:60], iterations=10)  # one ensemble, both signs
    assert two.predict(vectors[:60]) == labels[:60]
    path.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ModelFileError, match="not a newscrawl page type model"):
        load_page_type_model(path)
    path.write_text("{broken")
    with pytest.raises(ModelFileError, match="cannot read"):
        load_page_type_model(path)
    with pytest.raises(ModelFileError, match="no page type model"):
        load_page_type_model(tmp_path / "absent.json")
    assert isinstance(model, PageTypeModel)


def test_a_documentation_page_keeps_its_signatures_through_the_docs_guard() -> None:
    """The shipped page type model calls a Sphinx API page documentation; the documentation
    guard then keeps its class signature and code, which the trees alone drop."""
    html = (Path(__file__).parent / "fixtures" / "docs" / "sphinx" / "api.html").read_bytes()
    url = "https://docs.example.org/api.html"
    guarded = Learned().extract(parse_html(html, url))
    assert guarded.page_type == "documentation" and guarded.extractor == GUARDED
    assert "class Widget(size" in guarded.text and "w = Widget(3)" in guarded.text
    bare = Learned(LearnedConfig(guard=False)).extract(parse_html(html, url))
    assert "class Widget(size" not in bare.text


def test_a_generator_marked_page_is_documentation_and_keeps_nces_text() -> None:
    """The page type model types this DocBook chapter as another kind of page; the marks of
    its generator (a generator meta, the chunk's navigation header and footer) make it
    documentation, and the documentation guard keeps NCE's text beside the trees', all but
    its navigation header and footer."""
    marked = (Path(__file__).parent / "fixtures" / "docs" / "docbook" / "ch01.html").read_bytes()
    meta = b'<meta name="generator" content="DocBook XSL Stylesheets V1.79.2" />'
    assert meta in marked
    unmarked = marked.replace(meta, b"").replace(b"navheader", b"pagehead")
    modelled = Learned().extract(parse_html(unmarked))
    assert modelled.page_type not in ("", "documentation")
    typed = Learned().extract(parse_html(marked))
    assert typed.page_type == "documentation" and typed.extractor == GUARDED
    nce = set(NCE().extract(parse_html(marked)).text.splitlines())
    navigation = {"Prev", "Next", "Home", "Fake Handbook", "Chapter 2. Using it"}
    assert navigation <= nce and not navigation & set(typed.text.splitlines())
    assert nce - navigation <= set(typed.text.splitlines())
    assert "Chapter 1. Getting started" in typed.text
    assert "Chapter 1. Getting started" not in modelled.text


def test_held_out_page_types_are_documentation_where_a_generator_marked_the_page(
    tmp_path: Path,
) -> None:
    """Cross-validation types pages as extraction does: the training set records each page's
    generator mark (through its file on disk too), and a marked page is documentation in every
    hold-out mode whatever the page type models say."""
    from newscrawl.training.learned_crossval import held_out_kinds
    from newscrawl.training.learned_trainset import (
        build_training_set,
        load_training_set,
        save_training_set,
    )

    dataset = tmp_path / "mixed"
    (dataset / "html").mkdir(parents=True)
    (dataset / "gold").mkdir()
    chapter = Path(__file__).parent / "fixtures" / "docs" / "docbook" / "ch01.html"
    (dataset / "html" / "a.html").write_bytes(chapter.read_bytes())
    (dataset / "html" / "b.html").write_text(ARTICLE, encoding="utf-8")
    (dataset / "gold" / "a.txt").write_text("This chapter explains how to install", "utf-8")
    (dataset / "gold" / "b.txt").write_text("The first buses crossed it", encoding="utf-8")
    data = build_training_set([dataset])
    assert data.page_ids == ["mixed/a", "mixed/b"] and data.generated_docs == [True, False]
    path = tmp_path / "set.npz"
    save_training_set(data, path, {"datasets": ["mixed"]})
    assert load_training_set(path, {"datasets": ["mixed"]}).generated_docs == [True, False]
    kinds = held_out_kinds(data, ["site", "dataset"])
    assert [kinds["site"][0], kinds["dataset"][0]] == ["documentation", "documentation"]
    assert kinds["site"][1] == Learned().extract(parse_html(ARTICLE)).page_type != "documentation"


def _one_page_set(rows: np.ndarray, texts: list[str], gold: str) -> TrainingSet:
    return TrainingSet(
        features=rows.astype(np.float32),
        groups=np.zeros((len(rows), len(GROUPS)), dtype=np.int32),
        share=np.zeros(len(rows), dtype=np.float32),
        tokens=np.expm1(rows[:, FEATURES.index("tokens_log")]).round().astype(np.int32),
        page=np.zeros(len(rows), dtype=np.int32),
        page_ids=["docs/0"],
        page_site=["docs/a"],
        page_dataset=["docs"],
        datasets={"docs": 1},
        texts=texts,
        gold=[gold],
        peers={"nce": [gold]},
        page_type=["documentation"],
    )


def test_held_out_figures_route_the_guard_by_page_type_as_extraction_does() -> None:
    # a container NCE and CETD-TPC agree on; the trees kept 3 of its 4 blocks (above the
    # model guard's 50%, under the documentation guard's 85%), and scored the fourth low
    words = [" ".join(f"w{k}x{i}" for i in range(40)) for k in range(4)]
    rows = _rows([40, 40, 40, 40], nce=[1, 1, 1, 1], other=[1, 1, 1, 1])
    data = _one_page_set(rows, words, "\n".join(words))
    run = HeldOutRun("dataset", np.array([0.9, 0.9, 0.9, 0.01]))
    routed = generalisation_rows(data, [run], 0.4, GUARD, {"dataset": ["documentation"]})
    plain = generalisation_rows(data, [run], 0.4, GUARD, {"dataset": ["article"]})
    assert routed[0].f1["default"] == pytest.approx(1.0)  # the docs guard adds the fourth back
    assert plain[0].f1["default"] == plain[0].f1["learned"] < 0.9  # the model guard does not
    # an empty selection stays empty outside documentation, as in extraction
    empty = HeldOutRun("dataset", np.zeros(4))
    assert generalisation_rows(data, [empty], 0.4, GUARD, {"dataset": ["article"]})[0].f1[
        "default"
    ] == pytest.approx(0.0)
    assert routed_guard("article", np.zeros(4), 0.4, GUARD) == OFF
    assert routed_guard("documentation", np.zeros(4), 0.4, GUARD) == DOCS_GUARD


def test_held_out_page_types_type_every_page_in_every_mode() -> None:
    # two datasets of typed pages, the types told apart by one column; pages without a type
    # get one from a model of the typed pages
    from newscrawl.training.learned_crossval import held_out_kinds

    pages = 48  # 12 of each type in each dataset: enough for a leaf of 10
    rows = np.zeros((pages, len(FEATURES)), dtype=np.float32)
    rows[:, FEATURES.index("tokens_log")] = 3.0
    rows[pages // 2 :, FEATURES.index("seed_nce")] = 1.0
    kinds = ["article"] * (pages // 2) + ["forum"] * (pages // 2)
    data = _one_page_set(rows[:1], ["x"], "x")
    data.features = rows
    data.page = np.arange(pages, dtype=np.int32)
    data.page_ids = [f"d{i % 2}/{i}" for i in range(pages)]
    data.page_site = [f"d{i % 2}/s{i}" for i in range(pages)]
    data.page_dataset = [f"d{i % 2}" for i in range(pages)]
    data.page_type = [*kinds[:-1], ""]
    found = held_out_kinds(data, ["site", "dataset"])
    assert found["site"] == kinds and found["dataset"] == kinds


def test_the_documentation_guard_keeps_what_nce_selects_whatever_the_trees_kept() -> None:
    # NCE's container alone (no other seed agrees); the trees kept 3 of its 4 blocks (90% of
    # its tokens): on documentation the fourth comes back all the same, elsewhere not
    rows = _rows([10, 120, 120, 120, 40], nce=[0, 1, 1, 1, 1], other=[0, 0, 0, 0, 0])
    scores = np.array([0.01, 0.9, 0.9, 0.9, 0.0])
    kept, used = guard_selection(rows, scores, 0.4, DOCS_GUARD)
    assert used and kept.tolist() == [False, True, True, True, True]
    plain, used_plain = guard_selection(rows, scores, 0.4, GUARD)
    assert not used_plain and plain.tolist() == [False, True, True, True, False]


def _release_note_with_sidebar() -> str:
    """A short Sphinx page whose navigation sidebar outweighs its text."""
    entries = "".join(
        f'<li><a href="/ch{i}.html">Chapter {i}: configuring the widget store part {i}</a></li>'
        for i in range(40)
    )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>Release 8.1.2</title>'
        '<script id="documentation_options" src="_static/documentation_options.js"></script>'
        '</head><body><div class="document"><div class="body" role="main">'
        "<h1>Release 8.1.2</h1><p>This release fixes the assertion rewriting of files whose"
        " names hold a dot, and the fixture teardown order that left temporary folders behind"
        " on Windows.</p><p>Everyone on the 8.1 series should upgrade; nothing else changed in"
        " this release.</p></div>"
        f'<nav class="sphinxsidebar" role="navigation"><h3>Contents</h3><ul>{entries}</ul></nav>'
        "</div></body></html>"
    )


def test_the_documentation_guard_leaves_out_a_navigation_sidebar_nce_selected() -> None:
    """NCE's selection of this short documentation page holds its <nav> sidebar; the
    documentation guard adds back none of NCE's blocks under a navigation mark."""
    dom = parse_html(_release_note_with_sidebar(), "https://docs.example.org/8.1.2.html")
    assert "Chapter 3:" in NCE().extract(dom).text
    found = Learned().extract(dom)
    assert found.page_type == "documentation"
    assert "teardown order" in found.text and "nothing else changed" in found.text
    assert "Chapter" not in found.text and "Contents" not in found.text
