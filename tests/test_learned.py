"""The learned extractor: model file, predictor, features, training, fallback, shipped model."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import numpy as np
import pytest

from newscrawl.cli import main
from newscrawl.extractors import get_extractor
from newscrawl.extractors.blockmodel.block_features import FEATURES, block_features
from newscrawl.extractors.blockmodel.blocks import split_blocks
from newscrawl.extractors.blockmodel.model import (
    ExtractorModel,
    ModelFileError,
    TreeEnsemble,
    bundled_extractor_model,
    load_extractor_model,
)
from newscrawl.extractors.blockmodel.recall_guard import GuardParams
from newscrawl.extractors.blockmodel.stacking import CONTEXT_FEATURES
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site
from newscrawl.training.gold_labels import block_gold_share
from newscrawl.training.learned_train import (
    TrainParams,
    _labels_weights,
    assign_folds,
    crossval_scores,
    dataset_weights,
    fit_model,
    hold_out_folds,
)
from newscrawl.training.learned_trainset import build_training_set

ARTICLE = """<html><head><title>Harbour bridge reopens after repairs | Daily Example</title></head>
<body>
<div class="site-header"><a href="/">Daily Example</a>
 <ul class="main-nav"><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li>
 <li><a href="/weather">Weather</a></li><li><a href="/culture">Culture</a></li></ul></div>
<div class="content"><article>
 <h1>Harbour bridge reopens after repairs</h1>
 <p class="byline">By A. Writer, 3 May 2024</p>
 <p>The harbour bridge reopened on Monday morning after eight months of repairs, and the first
 buses crossed it shortly after six o'clock, the city transport office said.</p>
 <p>Engineers replaced the worn steel joints and resurfaced the whole deck, which had been closed
 to heavy traffic since a routine inspection found cracks in the supports last autumn.</p>
 <p>Shop owners on both sides of the water said the closure had cost them customers, and several
 of them welcomed the reopening with discounts for the rest of the week.</p>
</article>
<div class="related"><h3>Related</h3><ul><li><a href="/a">Ferry timetable changes</a></li>
<li><a href="/b">New cycle lanes planned</a></li><li><a href="/c">Council budget vote</a></li></ul>
</div></div>
<div class="footer">Copyright 2024 Daily Example. <a href="/privacy">Privacy</a>
<a href="/terms">Terms</a> <a href="/contact">Contact</a></div>
</body></html>"""

FORUM = """<html><head><title>Best way to store winter tyres? - Garage Talk Forum</title>
<script
type="application/ld+json">{"@context":"https://schema.org","@type":"DiscussionForumPosting"}</script></head>
<body><div class="header"><a href="/">Garage Talk</a> <a href="/forums">Forums</a> <a
href="/login">Log in</a> <a href="/register">Register</a></div>
<ul class="breadcrumb"><li><a href="/">Home</a></li><li><a href="/f/tyres">Wheels and
tyres</a></li></ul>
<h1>Best way to store winter tyres?</h1>
<div class="thread">
<div class="message"><div class="message-user"><a href="/u/1">roadrunner</a> Joined 2019</div>
<div class="message-body">I just swapped to my summer set and I am wondering how everyone stores
the winter tyres. Stacked flat in the garage, hung on the wall, or standing upright? They are
mounted on steel rims.</div></div>
<div class="message"><div class="message-user"><a href="/u/2">mechanic_mo</a> Joined 2015</div>
<div class="message-body">Mounted on rims you can stack them flat or hang them. Clean them first,
let them dry completely and keep them away from sunlight and the boiler, ozone from electric motors
also ages rubber.</div></div>
<div class="message"><div class="message-user"><a href="/u/3">lisa_k</a> Joined 2021</div>
<div class="message-body">I put mine in large tyre bags and stack them on a pallet so they are not
sitting on the cold concrete floor. Five winters so far and they still look fine.</div></div>
</div>
<div class="similar"><h3>Similar threads</h3><ul><li><a href="/t/1">Tyre pressure in
winter</a></li><li><a href="/t/2">All-season tyres worth it?</a></li></ul></div>
<div class="footer">Garage Talk community. <a href="/terms">Terms</a> <a
href="/privacy">Privacy</a></div></body></html>
"""


def synthetic_dataset(root: Path, sites: int = 4, pages: int = 5) -> Path:
    """A dataset folder of generated sites; gold is each article's headline and paragraphs."""
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    meta = []
    for s in range(sites):
        host = f"site{s}.example.org"
        for i, (url, html) in enumerate(synthetic_site(host, pages=pages, seed=s)):
            page_id = f"s{s}p{i}"
            tree = lxml.html.fromstring(html)
            article = tree.xpath('//div[contains(@class, "-article")]')[0]
            parts = [article.xpath("string(h1)")]
            parts += [p.text_content() for p in article.xpath("p[not(contains(@class, 'byline'))]")]
            (root / "html" / f"{page_id}.html").write_text(html, encoding="utf-8")
            (root / "gold" / f"{page_id}.txt").write_text("\n".join(parts), encoding="utf-8")
            kind = "article" if i % 2 == 0 else "forum"  # a page type to group figures by
            meta.append({"id": page_id, "url": url, "site": host, "page_type": kind})
    lines = "".join(json.dumps(m) + "\n" for m in meta)
    (root / "meta.jsonl").write_text(lines, encoding="utf-8")
    return root


# -- the model file and its predictor -------------------------------------------------------


def _fitted(seed: int = 0):
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(seed)
    rows = rng.normal(size=(3000, 6))
    labels = (rows[:, 0] + rows[:, 1] * rows[:, 2] > 0).astype(int)
    model = HistGradientBoostingClassifier(max_iter=30, max_depth=5, random_state=0)
    return model.fit(rows, labels), rows


@pytest.mark.slow
def test_tree_export_predicts_exactly_what_sklearn_predicts() -> None:
    model, rows = _fitted()
    ensemble = TreeEnsemble.from_sklearn(model)
    expected = model.predict_proba(rows)[:, 1]
    assert np.abs(ensemble.predict(rows) - expected).max() < 1e-12
    again = TreeEnsemble.from_json(json.loads(json.dumps(ensemble.to_json())))
    assert np.abs(again.predict(rows) - expected).max() < 1e-12
    assert len(ensemble.predict(rows[:0])) == 0


@pytest.mark.compiled
def test_compiled_tree_walk_scores_exactly_as_the_numpy_walk() -> None:
    """The C walk and the numpy walk reach the same leaves and sum them alike: identical
    scores, bit for bit, on the shipped model's two stages and on rows of every size (the C
    walk takes 16 rows at a time, then the rest one by one)."""
    from newscrawl.extractors.blockmodel import model as model_module

    assert model_module.COMPILED_WALK  # under CI: pip must have built the extension
    shipped = load_extractor_model(bundled_extractor_model())
    rng = np.random.default_rng(7)
    for stage in shipped.stages:
        width = int(stage.feature.max()) + 1
        for n in (1, 15, 16, 17, 40, 333):
            # features at typical scales, with exact ties on thresholds and non-finite values
            rows = rng.normal(scale=3.0, size=(n, width))
            rows[:, ::5] = rng.choice(stage.threshold[np.isfinite(stage.threshold)], (n, 1))
            rows[0, :3] = [np.nan, np.inf, -np.inf]
            compiled = stage.raw(rows)
            assert np.array_equal(compiled, stage.raw(rows, compiled=False))
            single = rows.astype(np.float32)  # stage one's rows come as float32
            assert np.array_equal(stage.raw(single), stage.raw(single, compiled=False))
    model, rows = _fitted()
    ensemble = TreeEnsemble.from_sklearn(model)
    assert np.array_equal(ensemble.raw(rows), ensemble.raw(rows, compiled=False))


@pytest.mark.compiled
def test_compiled_tree_walk_refuses_arrays_that_do_not_fit() -> None:
    from newscrawl.extractors.blockmodel._treewalk import leaf_values

    model, rows = _fitted()
    ensemble = TreeEnsemble.from_sklearn(model)
    children, feature, roots = ensemble._walk
    out = np.empty((len(rows), len(roots)))
    args = (children, ensemble.value, ensemble.depth, out)
    with pytest.raises(ValueError, match="do not fit"):  # a feature past the row's width
        leaf_values(rows[:, :3].copy(), 3, roots, feature, ensemble.threshold, *args)
    with pytest.raises(TypeError, match="8-byte"):  # int32 indexes
        leaf_values(rows, 6, roots.astype(np.int32), feature, ensemble.threshold, *args)
    bad = children.copy()
    bad[5] = len(feature) + 10  # a child index out of range: refused, not followed
    with pytest.raises(ValueError, match="do not fit"):
        leaf_values(rows, 6, roots, feature, ensemble.threshold, bad, *args[1:])
    for compiled in (True, False):  # rows narrower than the trees read: refused by both walks
        with pytest.raises(ValueError):
            ensemble.raw(rows[:, :3].copy(), compiled=compiled)


def test_model_file_round_trip_is_byte_stable(tmp_path: Path) -> None:
    model, _ = _fitted()
    ensemble = TreeEnsemble.from_sklearn(model)
    saved = ExtractorModel(("a", "b"), (ensemble,), 0.4, {"command": "test"})
    saved.save(tmp_path / "one.json")
    load_extractor_model(tmp_path / "one.json").save(tmp_path / "two.json")
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()


def test_bad_model_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelFileError, match="no extractor model"):
        load_extractor_model(tmp_path / "missing.json")
    (tmp_path / "junk.json").write_text("{not json")
    with pytest.raises(ModelFileError, match="cannot read"):
        load_extractor_model(tmp_path / "junk.json")
    (tmp_path / "other.json").write_text('{"format": "something-else"}')
    with pytest.raises(ModelFileError, match="not a newscrawl extractor model"):
        load_extractor_model(tmp_path / "other.json")
    model, _ = _fitted()
    data = ExtractorModel(("a",), (TreeEnsemble.from_sklearn(model),), 0.5).to_json()
    data["stages"][0]["left"][0] = 10**9
    (tmp_path / "broken.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="out of range"):
        load_extractor_model(tmp_path / "broken.json")
    data["stages"] = []  # a model that would keep nothing of any page
    (tmp_path / "empty.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="without stages"):
        load_extractor_model(tmp_path / "empty.json")


def test_a_model_for_other_features_is_refused(tmp_path: Path) -> None:
    model, _ = _fitted()
    other = ExtractorModel(("x", "y"), (TreeEnsemble.from_sklearn(model),), 0.5)
    other.save(tmp_path / "other.json")
    with pytest.raises(ModelFileError, match="features differ"):
        get_extractor("learned", model=str(tmp_path / "other.json"))


# -- features ----------------------------------------------------------------------------------


def test_block_features_describe_the_page() -> None:
    dom = parse_html(ARTICLE)
    blocks = split_blocks(dom)
    article = dom.tag.index("article")
    rows = block_features(dom, blocks, [(article,), (), ()])
    assert rows.shape == (len(blocks), len(FEATURES)) and np.isfinite(rows).all()
    col = {name: i for i, name in enumerate(FEATURES)}
    texts = [blocks.text(dom, k) for k in range(len(blocks))]
    menu = texts.index("Sport")
    prose = next(k for k, t in enumerate(texts) if t.startswith("The harbour bridge reopened"))
    assert rows[menu, col["link_density"]] == 1.0 and rows[prose, col["link_density"]] == 0.0
    assert rows[menu, col["near_nav"]] == 1.0 and rows[prose, col["near_nav"]] == 0.0
    assert rows[prose, col["above_tag_article"]] == 1.0
    assert rows[prose, col["stop_share"]] > 0.2 > rows[menu, col["stop_share"]]
    assert rows[prose, col["seed_nce"]] == 1.0 and rows[menu, col["seed_nce"]] == 0.0
    headline = texts.index("Harbour bridge reopens after repairs")
    assert rows[headline, col["block_h1"]] == 1.0 and rows[headline, col["title_ratio"]] > 0.7


def test_the_share_of_a_block_in_the_page_summary() -> None:
    lead = "The harbour bridge reopened on Monday after four years of repairs to its deck."
    teaser = "Another town opened a new library with a reading room for children."
    page = (
        f"<html><head><meta property='og:description' content='{lead[:60]}'></head><body>"
        f"<p>{lead}</p><p>{teaser}</p><p>Bridge</p></body></html>"
    )
    dom = parse_html(page)
    blocks = split_blocks(dom)
    share = block_features(dom, blocks)[:, FEATURES.index("description_share")]
    # the summary holds the lead's first 10 of its 14 words: 8 of its 12 word trigrams
    assert share.tolist() == pytest.approx([8 / 12, 0.0, 0.0], rel=1e-6)
    bare = parse_html(page.replace("og:description", "og:title"))
    assert not block_features(bare, split_blocks(bare))[
        :, FEATURES.index("description_share")
    ].any()


def test_blocks_the_markup_hides_until_the_reader_acts() -> None:
    page = (
        "<html><body><p>Shown text of the page.</p>"
        "<div role='Dialog'><div><p>Privacy policy in a modal.</p></div></div>"
        "<dialog><p>A closed dialog.</p></dialog><dialog open><p>An open dialog.</p></dialog>"
        "<div aria-modal='true'><p>A modal box.</p></div>"
        "<section style='color: red; DISPLAY : none'><p>Styled away.</p></section>"
        "<div style='visibility:hidden'><p>Invisible.</p></div>"
        "<div role='dialog region'><p>First role a dialog.</p></div>"
        "<div role='region dialog'><p>First role a region.</p></div>"
        "<div style='--my-display: none'><p>A custom property.</p></div>"
        "<div hidden><p>A tab panel.</p></div></body></html>"
    )
    dom = parse_html(page)
    blocks = split_blocks(dom)
    rows = block_features(dom, blocks)
    texts = [blocks.text(dom, k) for k in range(len(blocks))]
    dialog = dict(zip(texts, rows[:, FEATURES.index("above_dialog")].tolist(), strict=True))
    hidden = dict(zip(texts, rows[:, FEATURES.index("above_styled_hidden")].tolist(), strict=True))
    assert [t for t, v in dialog.items() if v] == [
        "Privacy policy in a modal.",
        "A closed dialog.",
        "A modal box.",
        "First role a dialog.",
    ]
    assert [t for t, v in hidden.items() if v] == ["Styled away.", "Invisible."]
    # near_*: the block element, its parent or its grandparent (the modal's <p> is two down)
    assert rows[texts.index("Privacy policy in a modal."), FEATURES.index("near_dialog")] == 1.0


def test_blocks_against_the_headline() -> None:
    page = (
        "<html><head><title>Harbour bridge reopens | Daily</title></head><body>"
        "<p>Home / News</p><h1>Daily</h1><article><h1>Harbour bridge reopens</h1>"
        "<p>The bridge opened at dawn.</p><p>Traffic was light.</p></article></body></html>"
    )
    dom = parse_html(page)
    blocks = split_blocks(dom)
    rows = block_features(dom, blocks)
    column = {name: rows[:, FEATURES.index(name)].tolist() for name in FEATURES}
    assert [blocks.text(dom, k) for k in range(len(blocks))][2] == "Harbour bridge reopens"
    # the <h1> the title names, not the first <h1>
    assert column["headline_found"] == [1.0] * 5
    assert column["headline_side"] == [-1.0, -1.0, 0.0, 1.0, 1.0]
    assert column["headline_offset"] == pytest.approx([-0.4, -0.2, 0.0, 0.2, 0.4])
    assert column["headline_position"] == pytest.approx([0.4] * 5)
    untitled = parse_html(page.replace("<title>Harbour bridge reopens | Daily</title>", ""))
    first = block_features(untitled, split_blocks(untitled))[:, FEATURES.index("headline_found")]
    assert first.tolist() == [0.5] * 5  # no title: the first <h1>
    none = parse_html("<html><body><h2>Not a headline</h2><p>Text.</p></body></html>")
    assert not block_features(none, split_blocks(none))[:, FEATURES.index("headline_side")].any()


def test_features_of_an_empty_page() -> None:
    dom = parse_html("<html><body></body></html>")
    assert block_features(dom, split_blocks(dom)).shape == (0, len(FEATURES))


# -- training ----------------------------------------------------------------------------------


def test_folds_keep_sites_whole_and_balance_pages() -> None:
    sites = ["a"] * 5 + ["b"] * 3 + ["c"] * 3 + ["d"] * 2 + ["e"]
    folds = assign_folds(sites, 3)
    for site in set(sites):
        assert len({f for s, f in zip(sites, folds, strict=True) if s == site}) == 1
    assert sorted(np.bincount(folds).tolist()) == [4, 5, 5]


def test_dataset_power_weighs_datasets_towards_equal() -> None:
    from types import SimpleNamespace

    datasets = ["a", "a", "a", "b"]
    assert dataset_weights(datasets, 0.0).tolist() == [1.0] * 4
    equal = dataset_weights(datasets, 1.0)  # each dataset weighs the same in total
    assert equal[:3].sum() == pytest.approx(equal[3]) and equal.mean() == pytest.approx(1.0)
    data = SimpleNamespace(
        page_ids=["p0", "p1", "p2", "p3"],
        page_dataset=datasets,
        page=np.array([0, 0, 1, 2, 3]),
        tokens=np.array([3.0, 1.0, 5.0, 5.0, 5.0]),
        share=np.array([1.0, 0.0, 1.0, 1.0, 0.2]),
    )
    labels, plain = _labels_weights(data, TrainParams(dataset_power=0.0))  # type: ignore[arg-type]
    _, weighed = _labels_weights(data, TrainParams(dataset_power=1.0))  # type: ignore[arg-type]
    assert labels.tolist() == [1, 0, 1, 1, 0]
    assert plain.tolist() == [0.75, 0.25, 1.0, 1.0, 1.0]  # every page sums to 1
    assert weighed.tolist() == pytest.approx((plain * equal[data.page]).tolist())


def test_holding_out_datasets_makes_each_dataset_a_fold() -> None:
    from types import SimpleNamespace

    data = SimpleNamespace(
        page_dataset=["b", "b", "a", "c", "a", "b"], page_site=["x", "y", "z", "w", "v", "u"]
    )
    folds, count = hold_out_folds(data, 5, "dataset")  # type: ignore[arg-type]
    assert count == 3 and folds.tolist() == [0, 0, 1, 2, 1, 0]
    folds, count = hold_out_folds(data, 5, "site")  # type: ignore[arg-type]
    assert count == 5 and len(set(folds.tolist())) == 5
    with pytest.raises(ValueError, match="two datasets"):
        hold_out_folds(SimpleNamespace(page_dataset=["a"], page_site=["x"]), 5, "dataset")  # type: ignore[arg-type]


@pytest.mark.slow
def test_crossval_by_dataset_prints_and_records_the_unseen_dataset_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = synthetic_dataset(tmp_path / "one", sites=2, pages=3)
    two = synthetic_dataset(tmp_path / "two", sites=2, pages=3)
    argv = ["models", "crossval", str(one), str(two), "--hold-out", "dataset", "-q"]
    argv += ["--stages", "1", "--iterations", "10", "--json", str(tmp_path / "cv.json")]
    assert main([*argv, "--by", "page_type"]) == 0
    out = capsys.readouterr().out
    assert "learned (CV by dataset, threshold" in out and "one" in out and "two" in out
    report = json.loads((tmp_path / "cv.json").read_text())
    assert report["hold_out"] == "dataset" and set(report["f1"]["learned"]) == {"one", "two", "all"}
    # by page type: 2 sites x 3 pages x 2 datasets, pages 0 and 2 of each site "article"
    table = out.split("by page_type (every dataset pooled):\n")[1].split("\n\n")[0].splitlines()
    assert table[0].split()[:3] == ["page_type", "pages", "learned"]
    rows = {line.split()[0]: line.split()[1] for line in table[1:]}
    assert rows == {"article": "8", "forum": "4"}
    assert report["by"]["field"] == "page_type"
    assert set(report["by"]["f1"]) == {"article", "forum"}
    assert 0 <= report["by"]["f1"]["forum"]["learned"] <= 1
    # each dataset held out whole, beside the peers on the same pages, guard chosen there
    held = {(r["mode"], r["unit"]): r for r in report["held_out"]}
    assert set(held) == {("dataset", "one"), ("dataset", "two"), ("dataset", "all")}
    assert set(held["dataset", "one"]["f1"]) == {"learned", "default", "nce", "mss",
                                                 "cetd-tpc", "trafilatura"}  # fmt: skip
    assert held["dataset", "one"]["pages"] == 6 and "agree" in report["guard"]
    assert "held out whole (threshold" in out and "dataset: one" in out
    assert main(["models", "crossval", str(one), "--hold-out", "dataset", "-q"]) == 2
    assert "--hold-out dataset needs at least 2 datasets" in capsys.readouterr().err
    # a features cache: written by the first run, read by the next, the same figures
    cache = ["--features-cache", str(tmp_path / "pages.npz")]
    assert main([*argv, *cache]) == 0
    first = capsys.readouterr().out
    assert main([*argv, *cache]) == 0
    assert capsys.readouterr().out == first and (tmp_path / "pages.npz").is_file()
    # the shipped model's guard instead of the grid's best (the default as it ships)
    assert main([*argv, *cache, "--guard", "shipped"]) == 0
    shipped = load_extractor_model(bundled_extractor_model()).guard
    expected = GuardParams.from_json(shipped).to_json()
    assert json.loads((tmp_path / "cv.json").read_text())["guard"] == expected
    said = ", ".join(f"{k} {expected[k]:g}" for k in ("agree", "kept", "floor"))
    assert f"guard {said})" in capsys.readouterr().out
    other = ["models", "crossval", str(two), str(one), "--hold-out", "dataset", "-q", *cache]
    assert main(other) == 2  # the same folders in another order are other pages
    assert "built from other pages" in capsys.readouterr().err


def test_models_refuse_what_cannot_be_cross_validated_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Too few sites to fold, an option out of range (said before any page is parsed), a
    folder without the template model's datasets: one line naming what is wrong, status 2,
    and no model file written or replaced."""
    two_sites = synthetic_dataset(tmp_path / "data" / "gen", sites=2, pages=3)
    assert main(["models", "crossval", str(two_sites), "-q", "--iterations", "5"]) == 2
    err = capsys.readouterr().err
    assert "needs pages of at least 3 sites; these 6 pages have 2 (--stages 1 needs two)" in err
    for option, value in (("--folds", "1"), ("--iterations", "0"), ("--min-samples-leaf", "0")):
        with pytest.raises(SystemExit) as stop:
            main(["models", "crossval", str(two_sites), option, value])
        assert stop.value.code == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert lines == [f"error: {option} must be {'2' if option == '--folds' else '1'} or more, "
                         f"not {value}"]  # fmt: skip
    out = tmp_path / "out"
    argv = ["models", "build", str(tmp_path / "data"), "--out", str(out), "-q"]
    assert main(argv) == 2  # the template model's six datasets are not there
    assert "--only extractor builds the extractor model" in capsys.readouterr().err
    assert main([*argv, "--only", "extractor", "--iterations", "5"]) == 2  # two sites
    assert "nothing written" in capsys.readouterr().err
    assert not out.exists()


SMALL = TrainParams(iterations=15, max_leaf_nodes=7, max_depth=4, min_samples_leaf=5, folds=3)


@pytest.mark.slow
def test_training_learns_generated_articles_and_cross_validates(tmp_path: Path) -> None:
    data = build_training_set([synthetic_dataset(tmp_path / "gen")])
    assert data.sites == 4 and set(data.peers) == {"nce", "mss", "cetd-tpc"}
    scores, stage1 = crossval_scores(data, SMALL)
    assert scores.shape == data.share.shape
    labels = data.share >= 0.5
    heavy = data.tokens > 5
    accuracy = ((scores >= 0.5) == labels)[heavy].mean()
    assert accuracy > 0.9
    model = fit_model(data, SMALL, 0.5, {"command": "test"})
    assert len(model.stages) == 2
    reused = fit_model(data, SMALL, 0.5, {"command": "test"}, stage1_oof=stage1)
    assert reused.to_json() == model.to_json()  # the folds' stage-1 scores are the same ones
    assert model.features == tuple(FEATURES)
    # stage 2 reads the block features plus the context of stage 1's scores
    assert model.stages[1].feature.max() < len(FEATURES) + len(CONTEXT_FEATURES)


@pytest.mark.slow
def test_models_build_is_deterministic(tmp_path: Path) -> None:
    synthetic_dataset(tmp_path / "data" / "gen", sites=3, pages=4)
    for out in ("one", "two"):
        argv = ["models", "build", str(tmp_path / "data"), "--only", "extractor", "-q"]
        argv += ["--out", str(tmp_path / out), "--iterations", "10", "--folds", "3"]
        assert main(argv) == 0
    one = (tmp_path / "one" / "extractor_model.json").read_bytes()
    assert one == (tmp_path / "two" / "extractor_model.json").read_bytes()
    provenance = json.loads(one)["provenance"]
    assert provenance["trained_on"] == {"gen": {"pages": 12, "sites": 3}}
    assert "newscrawl models build" in provenance["command"]
    assert set(provenance["libraries"]) >= {"numpy", "scikit-learn", "lxml"}


def test_models_build_on_a_folder_without_datasets_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["models", "build", str(tmp_path), "-q"]) == 2
    assert "no dataset folders" in capsys.readouterr().err


# -- the shipped extractor ----------------------------------------------------------------------


def test_shipped_model_keeps_the_article_and_drops_the_template() -> None:
    model = load_extractor_model(bundled_extractor_model())
    assert set(model.provenance["trained_on"]) >= {"cleaneval_final", "daniel", "wcxb_dev"}
    extraction = get_extractor("learned").extract(parse_html(ARTICLE))
    assert extraction.extractor == "learned"
    assert "first buses crossed it" in extraction.text
    assert "discounts for the rest of the week" in extraction.text
    for boilerplate in ("Weather", "Privacy", "Ferry timetable", "Copyright"):
        assert boilerplate not in extraction.text
    assert extraction.title == "Harbour bridge reopens after repairs"


def test_a_page_the_model_cannot_score_falls_back_to_the_best_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import newscrawl.extractors.learned as learned

    def broken(*_: object) -> np.ndarray:
        raise RuntimeError("model failure")

    monkeypatch.setattr(learned, "score_blocks", broken)
    extraction = get_extractor("learned").extract(parse_html(ARTICLE))
    assert extraction.extractor == learned.FALLBACK == "cetd-tpc"
    assert "first buses crossed it" in extraction.text


@pytest.mark.parametrize(
    "page",
    [b"", b"\x00\x01\x02binary", b"<html><body>" + b"<div>" * 3000 + b"deep" + b"</div>" * 3000],
    ids=["empty", "binary", "deep"],
)
def test_bad_pages_give_empty_or_some_text_never_a_crash(page: bytes) -> None:
    from newscrawl.html.tree import PageError

    try:
        dom = parse_html(page)
    except PageError:
        return
    extraction = get_extractor("learned").extract(dom)
    assert extraction.extractor in {"learned", "learned+guard", "cetd-tpc"}


def test_models_build_defaults_are_the_shipped_settings() -> None:
    from newscrawl.cli import build_parser
    from newscrawl.commands.models import _command, _params

    parser, _ = build_parser()
    args = parser.parse_args(["models", "build"])
    assert _params(args) == TrainParams()
    assert _command(args) == "newscrawl models build ../shared/data"
    # another model to try: the settings reach the classifier and the recorded command
    argv = ["models", "crossval", "d", "--stages", "1", "--max-leaf-nodes", "63"]
    tried = _params(parser.parse_args([*argv, "--learning-rate", "0.1"]))
    assert (tried.stages, tried.max_leaf_nodes, tried.learning_rate) == (1, 63, 0.1)
    args = parser.parse_args(["models", "build", "--max-depth", "12", "--folds", "3"])
    assert _command(args) == "newscrawl models build ../shared/data --folds 3 --max-depth 12"
    tried = _params(parser.parse_args([*argv, "--l2-regularization", "10"]))
    assert tried.l2_regularization == 10.0
    with pytest.raises(SystemExit):
        _params(parser.parse_args(["models", "build", "--stages", "3"]))
    with pytest.raises(SystemExit):
        _params(parser.parse_args(["models", "build", "--l2-regularization", "-1"]))


def test_extract_says_when_the_text_comes_from_the_fallback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import newscrawl.extractors.learned as learned

    def broken(*_: object) -> np.ndarray:
        raise RuntimeError("model failure")

    page = tmp_path / "page.html"
    page.write_text(ARTICLE, encoding="utf-8")
    assert main(["extract", "-j", "1", str(page)]) == 0
    assert "fell back" not in capsys.readouterr().err
    monkeypatch.setattr(learned, "score_blocks", broken)
    assert main(["extract", "-j", "1", str(page)]) == 0
    out, err = capsys.readouterr()
    assert "first buses crossed it" in out
    assert "text by cetd-tpc (the learned extractor fell back)" in err
    assert main(["extract", "-j", "1", "-f", "jsonl", str(page)]) == 0
    assert json.loads(capsys.readouterr().out)["extractor"] == "cetd-tpc"


def test_shipped_model_keeps_every_post_of_a_forum_thread() -> None:
    extraction = get_extractor("learned").extract(parse_html(FORUM))
    assert extraction.extractor == "learned"
    for post in ("how everyone stores the winter tyres", "ozone from electric motors", "pallet"):
        assert post in extraction.text
    for boilerplate in ("Similar threads", "All-season tyres", "Register", "Privacy"):
        assert boilerplate not in extraction.text


def test_short_block_is_content_only_where_it_joins_the_gold() -> None:
    gold = "New features in all Categories: Emoji! Faster search for every user."
    texts = [
        "Categories",
        "New features in all Categories:",
        "Emoji!",
        "Faster search for every user.",
        "Emoji!",
    ]
    shares = block_gold_share(gold, texts)
    assert shares[0] == 0.0  # a menu word the gold holds elsewhere
    assert shares[1:4] == [1.0, 1.0, 1.0]
    assert shares[4] == 0.0  # the same word again, after the text it belongs to


def test_group_columns_count_and_average_each_blocks_group() -> None:
    """The stacking context's per-group mean (token-weighted), max and size of the scores,
    checked against the plain definition on random pages, groups of -1 (none) included."""
    from newscrawl.extractors.blockmodel.stacking import _group_columns

    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        group = rng.integers(-1, 6, n).astype(np.int32)
        score, weight = rng.random(n), rng.random(n) + 0.1
        got = _group_columns(score, weight, group)
        assert got.shape == (n, 3)
        for k in range(n):
            same = group == group[k]
            mean = (score[same] * weight[same]).sum() / weight[same].sum()
            assert got[k, 0] == pytest.approx(mean)
            assert got[k, 1] == score[same].max()
            assert got[k, 2] == pytest.approx(np.log1p(same.sum()))


def test_a_rebuilt_extractor_model_is_used_with_extractor_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--extractor-model FILE` (extract, evaluate, reextract) makes a rebuilt model the learned
    extractor's, in worker processes too; either kind of model given as the other is refused
    in one line that says which option takes it."""
    from newscrawl.extractors.learned import MODEL_ENV

    monkeypatch.setenv(MODEL_ENV, "")  # restored (unset) after the test, whatever main() set
    page = tmp_path / "page.html"
    page.write_text(ARTICLE, encoding="utf-8")
    data = json.loads(bundled_extractor_model().read_text(encoding="utf-8"))
    data["threshold"] = 0.9999  # a model that keeps (almost) nothing: its use shows
    data["guard"] = {"agree": 2.0}  # its recall guard off (the file's settings are read)
    strict = tmp_path / "strict.json"
    strict.write_text(json.dumps(data), encoding="utf-8")
    assert main(["extract", "-j", "1", "-f", "jsonl", str(page)]) == 0
    shipped = json.loads(capsys.readouterr().out)["text"]
    assert "first buses crossed it" in shipped
    for jobs in ("1", "2"):
        monkeypatch.setenv(MODEL_ENV, "")
        argv = ["extract", "-j", jobs, "-f", "jsonl", "--extractor-model", str(strict)]
        assert main([*argv, str(page), str(page)]) == 0
        texts = [json.loads(line)["text"] for line in capsys.readouterr().out.splitlines()]
        assert texts == ["", ""], jobs
    assert main(["extract", "--model", str(strict), str(page)]) == 2
    assert "give it to the learned extractor with --extractor-model" in capsys.readouterr().err
    template = Path(__file__).parent.parent / "models" / "default_template_model.json"
    assert main(["extract", "--extractor-model", str(template), str(page)]) == 2
    assert "extractor model" in capsys.readouterr().err


def test_crossval_warns_when_pages_cannot_be_grouped_by_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from newscrawl.commands.models import _warn_without_sites

    bare = synthetic_dataset(tmp_path / "bare", sites=2, pages=2)
    (bare / "meta.jsonl").unlink()
    kept = synthetic_dataset(tmp_path / "kept", sites=2, pages=2)
    _warn_without_sites([bare, kept])
    err = capsys.readouterr().err
    assert f"no meta.jsonl in {bare}:" in err and str(kept) not in err
    assert "each page is a site of its own" in err


def test_a_training_set_file_reads_back_whole_and_refuses_other_pages(tmp_path: Path) -> None:
    from newscrawl.training.learned_trainset import load_training_set, save_training_set

    data = build_training_set([synthetic_dataset(tmp_path / "one", sites=2, pages=2)])
    path = tmp_path / "set.npz"
    save_training_set(data, path, {"datasets": ["one"]})
    back = load_training_set(path, {"datasets": ["one"]})
    assert np.array_equal(back.features, data.features) and back.texts == data.texts
    assert (back.page_ids, back.page_site, back.gold) == (data.page_ids, data.page_site, data.gold)
    assert back.peers == data.peers and back.datasets == data.datasets
    with pytest.raises(ValueError, match="built from other pages"):
        load_training_set(path, {"datasets": ["two"]})
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a training set file"):
        load_training_set(tmp_path / "junk.npz")
