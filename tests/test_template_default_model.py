"""The shipped template model: flow geometry, provenance, the configuration check, per-page
smoothed scores, the deterministic rebuild and the site-grouped cross-validation, on small
generated dataset folders (no dev page is copied)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from newscrawl.models.template_model import ModelError, check_model, load_model

from newscrawl.extractors.template_filter import TemplateConfig, TemplateExtractor
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site
from newscrawl.template.geometry import PROVIDERS, FlowGeometry, get_geometry_provider
from newscrawl.template.node_features import FEATURES
from newscrawl.template.template_scoring import smoothed_scores
from newscrawl.training.template_default import DATASETS, build_default_template_model

PAGE = (
    "<html><head><title>T</title></head><body><div class=nav><a href='/'>Home</a> "
    "<a href='/b'>World</a></div><article><h1>Headline</h1><p>"
    + "word " * 400
    + "</p><p>Second paragraph.</p></article><footer>Footer text</footer></body></html>"
)


def test_flow_geometry_boxes() -> None:
    assert "flow" in PROVIDERS and isinstance(get_geometry_provider("flow"), FlowGeometry)
    dom = parse_html(PAGE)
    boxes = get_geometry_provider("flow").boxes(dom)
    assert boxes.shape == (len(dom), 4)
    assert not boxes[1 : dom.body].any()  # <head> and its content are not rendered
    tags = dom.tag
    p1, p2, footer = tags.index("p"), len(tags) - 1 - tags[::-1].index("p"), tags.index("footer")
    assert boxes[p1, 1] < boxes[p2, 1] < boxes[footer, 1]  # reading order
    assert boxes[p1, 3] > 5 * boxes[p2, 3]  # 400 words wrap over many lines
    assert boxes[dom.body, 3] == pytest.approx(boxes[:, 1].max() + boxes[footer, 3])
    assert boxes[tags.index("a"), 2] < 100  # a short inline element: its text's width
    empty = parse_html("<html><body><img src=x></body></html>")
    assert get_geometry_provider("flow").boxes(empty)[:, 3].sum() == 0


def test_shipped_model_provenance() -> None:
    model = load_model()
    assert model.features == FEATURES and model.geometry == "flow"
    prov = model.provenance
    assert set(prov["datasets"]) == set(DATASETS)
    assert all(c["pages"] > 0 and c["sites"] > 0 for c in prov["datasets"].values())
    assert prov["geometry"] == "flow" and prov["features"] == list(FEATURES)
    assert {"numpy", "scikit-learn", "lxml"} <= set(prov["libraries"])
    assert "newscrawl.training.template_default" in prov["command"]
    assert 0.5 <= model.threshold <= 1.0
    assert not any(s.endswith(".example.org") for s in model.training_sites)


def test_mismatched_geometry_or_features_is_a_model_error(tmp_path: Path) -> None:
    model = load_model()
    with pytest.raises(ModelError, match="'flow' geometry, but this run uses 'static'"):
        TemplateExtractor(TemplateConfig(geometry="static"), model=model)
    with pytest.raises(ModelError, match="features"):
        check_model(replace(model, features=FEATURES[:-1]), FEATURES, "flow")
    other = replace(model, geometry="static")
    path = other.save(tmp_path / "static.json")
    with pytest.raises(ModelError, match="geometry"):
        TemplateExtractor(TemplateConfig(geometry="flow"), model=load_model(path))
    TemplateExtractor(TemplateConfig(geometry="flow"), model=model)  # matching: fine
    old = json.loads(path.read_text())
    del old["geometry"]  # files from before the geometry was recorded were static
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert load_model(tmp_path / "old.json").geometry == "static"


def test_smoothed_scores_per_node() -> None:
    model = load_model()
    dom = parse_html(PAGE)
    scores = smoothed_scores(dom, model)
    assert scores.shape == (len(dom),) and np.isfinite(scores).all()
    assert ((scores >= 0) & (scores <= 1)).all() and not scores[: dom.body].any()
    parent = np.asarray(dom.parent)
    inside = parent >= dom.body
    assert (scores[parent[inside]] <= scores[inside] + 1e-9).all()  # isotonic on the tree
    mask = TemplateExtractor(TemplateConfig(), model=model).template_mask(dom)
    assert (mask == (scores >= model.threshold)).all()  # the filter thresholds the same scores
    assert smoothed_scores(parse_html("<html><body></body></html>"), model).shape == (2,)


def write_datasets(root: Path, pages: int = 4) -> Path:
    """Six dataset folders of generated pages; gold = the article's paragraphs."""
    for k, name in enumerate(DATASETS):
        folder = root / name
        (folder / "html").mkdir(parents=True)
        (folder / "gold").mkdir()
        meta = []
        for s in range(2):
            host = f"{name}{s}.example.org"
            for i, (url, html) in enumerate(synthetic_site(host, pages=pages, seed=k * 7 + s)):
                page_id = f"{s}-{i}"
                dom = parse_html(html, url=url)
                article = next(
                    n for n, el in enumerate(dom.elements) if "-article" in (el.get("class") or "")
                )
                gold = "\n\n".join(
                    dom.text(n) for n in range(article, dom.end[article]) if dom.tag[n] == "p"
                )
                (folder / "html" / f"{page_id}.html").write_text(html, encoding="utf-8")
                (folder / "gold" / f"{page_id}.txt").write_text(gold, encoding="utf-8")
                meta.append({"id": page_id, "url": url, "site": host})
        (folder / "meta.jsonl").write_text("\n".join(json.dumps(m) for m in meta) + "\n")
    return root


def test_default_model_rebuild_is_deterministic(tmp_path: Path) -> None:
    data = write_datasets(tmp_path / "data")
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    build_default_template_model(data, first)
    build_default_template_model(data, second)
    assert first.read_bytes() == second.read_bytes()
    model = load_model(first)
    assert model.geometry == "flow" and model.provenance["datasets"]["daniel"]["pages"] == 8
    assert model.provenance["datasets"]["daniel"]["sites"] == 2
    url, html = synthetic_site("fresh.example.org", pages=1, seed=99)[0]
    dom = parse_html(html, url=url)
    assert smoothed_scores(dom, model).shape == (len(dom),)
    with pytest.raises(ValueError, match="no such dataset folder"):
        build_default_template_model(tmp_path / "nowhere", tmp_path / "c.json")


def test_crossval_reports_per_dataset(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from newscrawl.training.template_crossval import main

    data = write_datasets(tmp_path / "data", pages=3)
    out = tmp_path / "cv.json"
    argv = [str(data), "--folds", "3", "-q", "--json", str(out), "--datasets", *DATASETS[:3]]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "NCE" in text and "everything-is-template" in text and "cleaneval_dev" in text
    result = json.loads(out.read_text())
    assert set(result["datasets"]) == set(DATASETS[:3])
    row = result["datasets"]["cleaneval_dev"]
    assert row["pages"] == 6 and row["all_template"]["recall"] == 1.0
    assert main([str(tmp_path / "nowhere"), "-q"]) == 2


def test_reduced_tree_smoothing_matches_the_full_program() -> None:
    from newscrawl.template.isotonic import smooth_scores
    from newscrawl.template.template_scoring import RESOLUTION, smooth_page

    rng = np.random.default_rng(3)
    for _ in range(30):
        n = int(rng.integers(2, 200))
        parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
        raw = rng.random(n)
        raw[rng.random(n) < 0.5] = np.nan  # unscored wrappers and leaves
        full = np.nan_to_num(smooth_scores(parent, raw, c=0.01, resolution=RESOLUTION))
        assert np.allclose(smooth_page(parent, raw, 0, 0.01), full)
