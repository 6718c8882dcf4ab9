"""Template detection after SiteLevel: features, area buckets, training, the model file, and the
template-aware extractor, on small generated sites."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from newscrawl.models.template_model import (
    FORMAT,
    BucketModel,
    ModelError,
    TemplateModel,
    bundled_model_path,
    load_model,
)

from newscrawl.cli import main
from newscrawl.extractors.template_filter import (
    TemplateConfig,
    TemplateExtractor,
    build_template_extractor,
    pruned_dom,
)
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site
from newscrawl.template.buckets import DEFAULT_BOUNDARIES, bucket_of, fit_boundaries
from newscrawl.template.node_features import FEATURES, node_features
from newscrawl.template.node_records import PageNodes, is_intra_site, site_kind
from newscrawl.template.sitelevel import label_site
from newscrawl.training.template_train import (
    NodeData,
    TrainConfig,
    TrainError,
    pages_data,
    train,
    training_rows,
)

# -- features -------------------------------------------------------------------------------

MENU = (
    '<html><body><div id="menu">Menu <a href="/home">Home</a> '
    '<a href="https://other.example.com/x">World news</a></div></body></html>'
)


def test_features_of_a_hand_checked_node() -> None:
    dom = parse_html(MENU, url="https://example.org/page")
    menu = dom.tag.index("div")
    boxes = np.zeros((len(dom), 4), dtype=np.float32)
    boxes[:] = (0, 0, 1000, 2000)  # the page: 1000 x 2000 px
    boxes[menu] = (250, 500, 500, 100)
    nodes = PageNodes.from_dom(dom, boxes=boxes)
    top, left, links_per_word, anchor_text, anchor_size, intra, visible = node_features(nodes)[menu]
    assert top == pytest.approx(500 / 2000)  # distances relative to the page size
    assert left == pytest.approx(250 / 1000)
    assert links_per_word == pytest.approx(2 / 4)  # 2 links, words: Menu Home World news
    assert anchor_text == pytest.approx(len("HomeWorld news") / len("MenuHomeWorld news"))
    assert anchor_size == pytest.approx(3 / 2)  # 3 words in 2 anchors
    assert intra == pytest.approx(1 / 2)  # /home stays, other.example.com leaves
    html = dom.html_len[menu]
    assert html == len(
        '<div id="menu">Menu <a href="/home">Home</a> '
        '<a href="https://other.example.com/x">World news</a></div>'
    )
    assert visible == pytest.approx(len("MenuHomeWorld news") / html)
    assert node_features(nodes, relative=False)[menu][:2].tolist() == [500, 250]
    assert list(FEATURES)[:2] == ["top", "left"]


def test_intra_site_links() -> None:
    assert is_intra_site("/a", "example.org")
    assert is_intra_site("story/2.html", "example.org")
    assert is_intra_site("#top", "example.org")
    assert is_intra_site("https://www.example.org/x", "example.org")
    assert is_intra_site("//news.example.org/a", "example.org")
    assert not is_intra_site("https://elsewhere.net/", "example.org")
    assert not is_intra_site("mailto:someone@example.org", "example.org")
    assert not is_intra_site("javascript:void(0)", "example.org")
    assert not is_intra_site("http://[bad", "example.org")


# -- buckets --------------------------------------------------------------------------------


def test_buckets_from_averaged_quartiles() -> None:
    a = np.array([1000, 2000, 3000, 4000, 5000, 6000])  # 1000 is below the minimum
    b = np.array([4000, 8000, 12000, 16000, 20000])
    bounds = fit_boundaries([a, b])
    qa = np.quantile(a[1:], (0.25, 0.5, 0.75))
    qb = np.quantile(b, (0.25, 0.5, 0.75))
    assert bounds == (2000.0, *(float(round(v)) for v in (qa + qb) / 2))
    assert fit_boundaries([np.array([10.0, 20.0])]) == DEFAULT_BOUNDARIES
    assert bucket_of(np.array([1999, 2000, 5182, 50000])).tolist() == [-1, 0, 1, 3]


# -- model file -----------------------------------------------------------------------------


def tiny_model() -> TemplateModel:
    bucket = BucketModel(
        mean=(0.0,) * 7,
        scale=(1.0,) * 7,
        coef=(0.0, 0.0, 0.0, 4.0, 0.0, 0.0, 0.0),
        intercept=-2.0,
    )
    return TemplateModel(FEATURES, DEFAULT_BOUNDARIES, (bucket, None, bucket, bucket))


def test_model_file_round_trip(tmp_path: Path) -> None:
    model = tiny_model()
    path = model.save(tmp_path / "m.json")
    loaded = load_model(path)
    assert loaded == model
    features = np.zeros((3, 7))
    features[:, 3] = (0.0, 1.0, 1.0)
    scores = loaded.scores(features, np.array([2500.0, 2500.0, 100.0]))
    assert scores[0] < 0.5 < scores[1] and np.isnan(scores[2])  # too small: no classifier
    assert np.isnan(loaded.scores(features, np.full(3, 6000.0))).all()  # empty bucket


def test_bad_model_files(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="no such model file"):
        load_model(tmp_path / "missing.json")
    (tmp_path / "junk.json").write_text("not json")
    with pytest.raises(ModelError, match="not a newscrawl template model"):
        load_model(tmp_path / "junk.json")
    newer = tiny_model().to_json() | {"version": 99}
    (tmp_path / "new.json").write_text(json.dumps(newer))
    with pytest.raises(ModelError, match="version 99"):
        load_model(tmp_path / "new.json")
    assert tiny_model().to_json()["format"] == FORMAT


# -- training and extraction on generated sites ---------------------------------------------


def site_data(hosts: list[str], pages: int = 8) -> NodeData:
    sites = []
    for host in hosts:
        records = [
            PageNodes.from_dom(parse_html(html, url=url), url)
            for url, html in synthetic_site(host, pages=pages)
        ]
        sites.append((host, site_kind(records), records, label_site(records)))
    return pages_data(sites)


HOLDOUT = TrainConfig(holdout=0.34)


@pytest.fixture(scope="module")
def training_data() -> NodeData:
    return site_data([f"site{i}.example.org" for i in range(6)])


@pytest.fixture(scope="module")
def trained(training_data: NodeData) -> tuple[TemplateModel, object]:
    return train(training_data, HOLDOUT)


def test_training_writes_a_model_that_loads_and_predicts(
    trained, training_data: NodeData, tmp_path: Path
) -> None:
    model, report = trained
    assert len(model.buckets) == 4 and model.boundaries[0] == 2000
    assert len(model.training_sites) == 6
    holdout = model.metrics["holdout"]
    assert holdout["sites"] == 2
    # better than calling every held-out node template (the majority class here)
    data = training_data
    rows = training_rows(data.kind, data.area, data.features, HOLDOUT.kind, HOLDOUT.min_area)
    held = rows & np.isin(data.site, holdout["site_names"])
    assert held.sum() == holdout["nodes"]
    always_template = float(data.label[held].mean())
    assert always_template > 0.5 and holdout["accuracy"] > always_template
    lines = "\n".join(report.lines())
    assert "held-out sites" in lines and "bucket" in lines
    loaded = load_model(model.save(tmp_path / "model.json"))
    assert loaded.training_sites == model.training_sites
    url, html = synthetic_site("fresh.example.org", pages=1, seed=5)[0]
    dom = parse_html(html, url=url)
    scores = TemplateExtractor(model=loaded).raw_scores(dom)
    assert scores.shape == (len(dom),) and np.nanmax(scores) <= 1


def test_training_errors() -> None:
    data = site_data(["only.example.org"], pages=5)
    with pytest.raises(TrainError, match="kind 'blogs'"):
        train(data.subset(np.flatnonzero(data.kind == "news")), TrainConfig(kind="blogs"))
    with pytest.raises(TrainError, match="unknown kind"):
        train(data, TrainConfig(kind="forums"))


def classed_text(dom: Dom, part: str) -> list[str]:
    """Lines of the elements whose class names `part` (the generated sites' -nav, -footer)."""
    nodes = [i for i, el in enumerate(dom.elements) if part in (el.get("class") or "")]
    return [line for node in nodes for line in dom.text(node).splitlines()]


def article_paragraphs(dom: Dom) -> list[str]:
    nodes = [i for i, el in enumerate(dom.elements) if "-article" in (el.get("class") or "")]
    return [dom.text(i) for i in range(nodes[0], dom.end[nodes[0]]) if dom.tag[i] == "p"][1:]


def test_template_extractor_cuts_navigation_and_footer() -> None:
    # The study's unweighted classifiers, on a page of a site they never saw.
    model, _ = train(
        site_data([f"site{i}.example.org" for i in range(6)]),
        TrainConfig(holdout=0, balanced=False),
    )
    url, html = synthetic_site("heldout.example.org", pages=2, seed=11)[1]
    dom = parse_html(html, url=url)
    filtered = TemplateExtractor(TemplateConfig(), model=model).extract(dom)
    assert filtered.extractor == "template"
    lines = filtered.text.splitlines()
    assert not set(classed_text(dom, "-nav")) & set(lines)
    assert not set(classed_text(dom, "-footer")) & set(lines)
    paragraphs = article_paragraphs(dom)
    assert sum(p in filtered.text for p in paragraphs) >= len(paragraphs) - 1
    combined = TemplateExtractor(TemplateConfig(then="nce"), model=model)
    result = combined.extract(dom)
    assert result.extractor == "template+nce" and result.text
    assert not set(classed_text(dom, "-nav")) & set(result.text.splitlines())
    assert all(0 <= i < len(dom) for i in result.node_ids)


def test_template_extractor_cuts_the_sites_template_it_is_handed(trained) -> None:
    from newscrawl.site.site_context import extract_in_site, learn_site
    from newscrawl.template.sitelevel import RawPage

    model, _ = trained
    extractor = TemplateExtractor(TemplateConfig(then="nce", order="after"), model=model)
    site = synthetic_site("learnt.example.org", pages=6, seed=4)
    context = learn_site([RawPage(url, html.encode()) for url, html in site[:5]], ["sitelevel"])
    url, html = site[5]
    dom = parse_html(html, url=url)
    before = extractor.extract(dom).text
    lines = extract_in_site(extractor, dom, context).text.splitlines()
    for part in ("-nav", "-footer", "-sidebar"):
        assert not set(classed_text(dom, part)) & set(lines), part
    assert all(p in lines for p in article_paragraphs(dom))
    assert extractor.extract(dom).text == before  # the filter learnt nothing from the pages


def test_pruned_dom_keeps_tails_head_and_inline_links() -> None:
    dom = parse_html(
        "<html><head><title>T</title></head><body><div>nav</div>tail text"
        '<p>Run <a href="/x">inline</a> on</p></body></html>'
    )
    mask = np.zeros(len(dom), dtype=bool)
    mask[dom.tag.index("div")] = True
    mask[dom.tag.index("a")] = True
    kept, ids, dropped = pruned_dom(dom, mask)
    assert kept.text(kept.body) == "tail text\nRun inline on"
    assert kept.title == "T"
    assert [dom.tag[i] for i in ids] == [t for t in dom.tag if t != "div"]
    assert dropped == [dom.tag.index("div")]


def test_template_without_a_model_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="--model"):
        build_template_extractor("template", None)
    with pytest.raises(ValueError, match="trained model"):
        TemplateExtractor()
    assert build_template_extractor("nce", None).name == "nce"


# -- the command ----------------------------------------------------------------------------


@pytest.mark.slow
def test_sitelevel_then_train_commands(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from test_sitelevel import write_folder

    folder = write_folder(tmp_path / "data", {f"s{i}.example.org": 6 for i in range(4)})
    nodes, model = tmp_path / "nodes", tmp_path / "model.json"
    assert main(["sitelevel", str(folder), "--out", str(nodes), "-q"]) == 0
    capsys.readouterr()
    assert main(["train", str(nodes), "--out", str(model), "-q", "--holdout", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "held-out sites (1" in out and str(model) in out
    loaded = load_model(model)
    assert len(loaded.training_sites) == 4 and loaded.metrics["nodes"] > 0
    assert main(["train", str(nodes), "--out", str(model), "--kind", "blogs", "-q"]) in (0, 2)
    # the kind `sitelevel --kind` marks is the kind `train --kind` takes
    blogs = tmp_path / "blogs"
    assert main(["sitelevel", str(folder), "--out", str(blogs), "--kind", "blog", "-q"]) == 0
    argv = ["train", str(blogs), "--out", str(model), "-q", "--holdout", "0.25", "--kind"]
    assert main([*argv, "blog"]) == 0
    assert len(load_model(model).training_sites) == 4
    assert main([*argv, "news"]) == 2
    capsys.readouterr()
    # the training set assembled site by site (on a 1-worker LocalCluster), then fitted here
    on_dask = tmp_path / "dask.json"
    argv = ["train", str(nodes), "--out", str(on_dask), "-q", "--holdout", "0.25", "--cluster"]
    assert main([*argv, "--dask-workers", "1"]) == 0
    assert load_model(on_dask).metrics["nodes"] == loaded.metrics["nodes"]
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # temp removed
    assert main(["train", str(nodes), "--out", str(model), "-q", "--max-site-nodes", "30"]) == 0
    assert load_model(model).metrics["nodes"] <= 4 * 30
    assert main(["train", str(tmp_path / "none"), "--out", str(model)]) == 2
    assert "no such file" in capsys.readouterr().err


def test_bundled_default_model_loads() -> None:
    # trained on the real dev datasets (test_template_default_model checks its provenance)
    model = load_model()
    assert model.features == FEATURES and len(model.buckets) == 4
    assert model.training_sites and all("/" in s for s in model.training_sites)


def test_extract_command_with_a_model(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _, html = synthetic_site("cli.example.org", pages=1, seed=8)[0]
    page = tmp_path / "page.html"
    page.write_text(html, encoding="utf-8")
    assert main(["extract", "--extractor", "template", str(page)]) == 2
    assert "needs a trained model" in capsys.readouterr().err
    model = str(bundled_model_path())
    assert main(["extract", "--extractor", "template", "--model", model, str(page)]) == 0
    assert capsys.readouterr().out.strip()
    assert main(["extract", "-e", "nce", "--model", model, "-f", "jsonl", str(page)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["text"] and "error" not in record
    assert main(["extract", "--model", str(tmp_path / "none.json"), str(page)]) == 2
    assert "no such model file" in capsys.readouterr().err


def test_training_reads_a_crawls_nodes_layout(tmp_path: Path) -> None:
    # A crawl writes nodes/crawl=<id>/site=<site>/part-*.parquet (partition columns in folders).
    from test_sitelevel import page, records

    from newscrawl.template.node_table import nodes_writer
    from newscrawl.template.sitelevel import SiteLevel
    from newscrawl.training.template_train import read_nodes

    with nodes_writer(tmp_path) as writer:
        for host in ("a.example.org", "b.example.org"):
            _, pages = records([page(i) for i in range(6)])
            table = SiteLevel().table(pages, crawl="c1", site=host)
            writer.write_table(table, {"crawl": "c1", "site": host})
    data = read_nodes([tmp_path])
    assert set(data.site) == {"a.example.org", "b.example.org"}
    assert len(data) == table.num_rows * 2 and data.label.any() and not data.label.all()


def test_nodes_record_their_geometry_and_training_takes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    import pyarrow.dataset as ds
    from test_sitelevel import write_folder

    folder = write_folder(tmp_path / "data", {f"s{i}.example.org": 6 for i in range(3)})
    nodes, model = tmp_path / "nodes", tmp_path / "model.json"
    argv = ["sitelevel", str(folder), "--out", str(nodes), "-q", "--geometry", "flow"]
    assert main(argv) == 0
    recorded = ds.dataset(nodes, partitioning="hive").to_table(columns=["geometry"])
    assert set(recorded.column("geometry").to_pylist()) == {"flow"}
    capsys.readouterr()
    # the model is for the provider the nodes record, without being told
    assert main(["train", str(nodes), "--out", str(model), "-q"]) == 0
    assert load_model(model).geometry == "flow"
    # told another one, training refuses rather than record the wrong provider
    assert main(["train", str(nodes), "--out", str(model), "-q", "--geometry", "static"]) == 2
    assert "came from the 'flow' geometry provider, not 'static'" in capsys.readouterr().err
