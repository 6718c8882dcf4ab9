"""The site-level template methods beside SiteLevel: Site Style Tree, pagelets, entropy.

Each gets a small generated site where its defining behaviour shows: a style-tree node shared
by every page, a pagelet repeated across pages, a block of entropy 0. Then what all four share:
one score per node of every page, the subtree rule, duplicates counted once.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from newscrawl.cli import main
from newscrawl.extractors.template_filter import pruned_dom
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site, words
from newscrawl.template import entropy, pagelets, sst
from newscrawl.template.sitemethods import (
    SITE_METHODS,
    check_site_method,
    new_site_method,
    range_min,
    site_masks,
    site_scores,
    threshold_of,
)

NAV = "".join(f'<li><a href="/s{i}">Section {name}</a></li>' for i, name in enumerate("ABCDEF"))


def _prose(rng: random.Random, sentences: int = 4) -> str:
    return " ".join(" ".join(words(rng, 12)).capitalize() + "." for _ in range(sentences))


def _page(i: int, extra: str = "") -> str:
    """A shared menu and footer, a per-page article with one inline link."""
    rng = random.Random(i)
    return (
        f'<html><head><title>Story {i}</title></head><body><ul id="nav">{NAV}</ul>'
        f'<div id="story"><h1>{" ".join(words(rng, 5))}</h1><p>{_prose(rng)}</p>'
        f'<p>{_prose(rng)} <a href="/x{i}">{" ".join(words(rng, 2))}</a>.</p></div>{extra}'
        '<div id="foot">Copyright Example Daily, all rights reserved</div></body></html>'
    )


def _site(n: int = 6, extra: str = "") -> list[Dom]:
    return [parse_html(_page(i, extra), url=f"https://example.org/{i}") for i in range(n)]


def _node(dom: Dom, element_id: str) -> int:
    return next(i for i, el in enumerate(dom.elements) if el.get("id") == element_id)


def _template(method: str, dom: Dom, mask: np.ndarray, element_id: str) -> bool:
    return bool(mask[_node(dom, element_id)])


# -- Site Style Tree -----------------------------------------------------------------------


def test_sst_a_style_node_shared_by_every_page_is_noise() -> None:
    doms = _site(6)
    tree = sst.SiteStyleTree()
    for dom in doms:
        tree.add(dom)
    tree.importance()
    nav = [tree.node(i, _node(dom, "nav")) for i, dom in enumerate(doms)]
    assert all(n is nav[0] for n in nav)  # one element node of the SST for every page's menu
    assert nav[0].pages == 6 and len(nav[0].styles) == 1  # one style, seen on all 6 pages
    assert nav[0].comp == pytest.approx(0.0)  # same children, same words: no importance
    # The story's element keeps its style too, but its text differs on every page: the text
    # nodes below it are important, so the story is not noise.
    story = _node(doms[0], "story")
    assert tree.node(0, story).comp > nav[0].comp
    scores = tree.page_scores(0)
    assert scores[_node(doms[0], "nav")] == pytest.approx(1.0)
    assert scores[story] < 0.1 < sst.SSTConfig().threshold


def test_sst_presentation_entropy_and_content_entropy() -> None:
    # A box whose children differ from page to page is important even with repeated words,
    # and a text repeated word for word on all pages is not.
    boxes = ["<b>Tip</b>", "<i>Tip</i>", "<u>Tip</u>", "<em>Tip</em>"]
    doms = [
        parse_html(_page(i, f'<div id="box">{boxes[i]}</div>'), url=f"https://e.org/{i}")
        for i in range(4)
    ]
    scores = sst.site_scores(doms)
    box = _node(doms[0], "box")
    foot = _node(doms[0], "foot")
    assert scores[0][box] < 0.5  # four styles on four pages: presentation entropy 1
    assert scores[0][foot] == pytest.approx(1.0)


def test_sst_leaves_a_one_page_site_alone() -> None:
    (scores,) = sst.site_scores(_site(1))
    assert not (scores >= sst.SSTConfig().threshold).any()


# -- pagelets ------------------------------------------------------------------------------


def test_pagelets_split_where_a_child_holds_k_links() -> None:
    dom = _site(1)[0]
    found = pagelets.pagelets(dom, k=3)
    # <body> has a child with 6 links (the menu), so it is split; the menu, whose items hold
    # one link each, is a pagelet, and so is the story with its single inline link.
    assert dom.body not in found
    assert _node(dom, "nav") in found and _node(dom, "story") in found
    assert _node(dom, "foot") in found
    assert pagelets.pagelets(dom, k=8) == [0]  # no child holds 8 links: the page is one


def test_pagelets_a_repeated_pagelet_is_template() -> None:
    doms = _site(5)
    masks = site_masks("pagelets", doms)
    for dom, mask in zip(doms, masks, strict=True):
        assert _template("pagelets", dom, mask, "nav") and _template("pagelets", dom, mask, "foot")
        assert not _template("pagelets", dom, mask, "story")
    # Two pages are enough (the local algorithm), one is not.
    assert site_masks("pagelets", doms[:2])[0][_node(doms[0], "nav")]
    assert not site_masks("pagelets", doms[:1])[0].any()


def test_pagelets_fingerprint_is_stable_and_ignores_case() -> None:
    assert pagelets.fingerprint("Home News Sport") == pagelets.fingerprint("home  news\nSPORT")
    assert pagelets.fingerprint("a b c d e f g h i j k l") != pagelets.fingerprint("a b c d")
    assert pagelets.fingerprint("...") == ()
    assert len(pagelets.fingerprint(" ".join(str(i) for i in range(40)))) == 8


# -- entropy -------------------------------------------------------------------------------


def test_entropy_of_terms() -> None:
    pages = [Counter({"home": 1, "alpha": 2}), Counter({"home": 1, "beta": 1})]
    h = entropy.term_entropy(pages)
    assert h["home"] == pytest.approx(1.0)  # evenly over both pages
    assert h["alpha"] == 0.0 and h["beta"] == 0.0  # on one page only


def test_entropy_a_block_of_entropy_zero_is_informative() -> None:
    # Each page has a block whose every term is on that page only (entropy 0), and a story
    # whose made-up words recur now and then across pages.
    unique = [f'<div id="own">{" ".join(f"term{i}x{j}" for j in range(8))}</div>' for i in range(6)]
    doms = [parse_html(_page(i, unique[i]), url=f"https://e.org/{i}") for i in range(6)]
    scores = entropy.site_scores(doms)
    own, story, foot = (_node(doms[0], name) for name in ("own", "story", "foot"))
    assert scores[0][own] == 0.0  # the lowest score there is
    assert 0.0 < scores[0][story] < 0.5
    assert scores[0][foot] == pytest.approx(1.0)  # its terms evenly on all 6 pages
    masks = site_masks("entropy", doms)
    assert masks[0][foot] and masks[0][_node(doms[0], "nav")] and not masks[0][story]


def test_entropy_h0_is_chosen_at_the_flattest_step() -> None:
    blocks = [(0.05, frozenset("ab")), (0.15, frozenset("cd")), (0.85, frozenset("xyz"))]
    # counts for 0.1 .. 0.9: 2, 4, 4, 4, 4, 4, 4, 4, 7 -> the first flat step starts at 0.2
    assert entropy.choose_h0(blocks, entropy.EntropyConfig().steps) == pytest.approx(0.2)


def test_entropy_literal_table_blocks() -> None:
    # With the paper's <table> blocks, a page laid out with divs is one block: nothing repeats
    # enough to be redundant on average, so nothing is cut.
    config = entropy.EntropyConfig(block_tags=("table",), h0=0.5)
    scores = entropy.site_scores(_site(6), config)
    assert all((s < 0.5).all() for s in scores)


# -- what all four share -------------------------------------------------------------------


@pytest.mark.parametrize("method", SITE_METHODS)
def test_every_method_scores_every_node_of_every_page(method: str) -> None:
    site = synthetic_site("news.example.org", 8, seed=2)
    doms = [parse_html(html, url=url) for url, html in site]
    scores = site_scores(method, doms)
    masks = site_masks(method, doms)
    assert len(scores) == len(masks) == len(doms)
    for dom, score, mask in zip(doms, scores, masks, strict=True):
        assert score.shape == (len(dom),) and mask.dtype == bool
        assert ((score >= 0) & (score <= 1)).all()
        assert not mask[: dom.body + 1].any()  # never <html>, <head> or <body>
        # the subtree rule: text below a template node is template text
        for node in np.flatnonzero(mask):
            for piece in range(dom.piece_start[node], dom.piece_end[node]):
                assert mask[dom.piece_owner[piece]] or not dom.piece_text[piece].strip()
        kept, _, _ = pruned_dom(dom, mask)
        assert kept.text(kept.body)  # the article survives
        assert "Copyright" not in kept.text(kept.body)  # the shared footer does not


@pytest.mark.parametrize("method", SITE_METHODS)
def test_a_page_served_twice_counts_once(method: str) -> None:
    doms = _site(5)
    twice = [*doms, parse_html(_page(0), url="https://example.org/0?again")]
    scores = site_scores(method, twice)
    story = _node(doms[0], "story")
    threshold = threshold_of(method)
    assert scores[0][story] < threshold and scores[-1][story] < threshold


@pytest.mark.parametrize("method", SITE_METHODS)
def test_a_site_learnt_page_by_page_scores_later_pages_without_learning(method: str) -> None:
    doms = _site(8)
    state = new_site_method(method)
    for dom in doms[:6]:
        state.add(dom)
    batch = site_scores(method, doms[:6])
    for index in range(6):  # the same as the whole site at once
        assert np.array_equal(state.page_scores(index), batch[index])
    for dom in doms[6:]:  # pages past a cap: scored by what the six pages taught
        mask = state.peek_mask(dom)
        assert mask[_node(dom, "nav")] and mask[_node(dom, "foot")]
        assert not mask[_node(dom, "story")]
    assert len(state) == 6


def test_pagelets_learn_as_pages_come() -> None:
    doms = _site(3)
    state = new_site_method("pagelets")
    state.add(doms[0])
    assert not state.page_mask(0).any()  # one page: nothing repeats yet
    state.add(doms[1])
    assert state.page_mask(0)[_node(doms[0], "nav")]


def test_unknown_method_names_the_choices() -> None:
    assert check_site_method(" SST ") == "sst"
    with pytest.raises(ValueError, match="sitelevel, sst, pagelets, entropy"):
        check_site_method("vips")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=1, max_size=40), st.data())
def test_range_min_matches_slicing(values: list[float], data: st.DataObject) -> None:
    array = np.asarray(values)
    n = len(values)
    starts = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=10))
    stops = [data.draw(st.integers(s + 1, n)) for s in starts]
    got = range_min(array, np.asarray(starts), np.asarray(stops))
    want = [array[s:e].min() for s, e in zip(starts, stops, strict=True)]
    assert got.tolist() == want


# -- the comparison: newscrawl bench template-eval --methods -----------------------------------


def test_bench_compares_the_methods(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from test_template_evaluation import write_dataset

    data = write_dataset(tmp_path / "gen", ["a.example.org", "b.example.org"], pages=6)
    out = tmp_path / "methods.json"
    methods = "sitelevel,sst,pagelets,entropy"
    args = ["bench", "template-eval", str(data), "--methods", methods, "--after", "cetd-tpc"]
    assert main([*args, "--json", str(out), "-q"]) == 0
    text = capsys.readouterr().out
    assert "2 multi-page sites, 12 pages" in text and "cetd-tpc, then the filter trims it" in text
    for method in SITE_METHODS:
        assert f"| {method} | " in text
    figures = json.loads(out.read_text())
    rows = {row["method"]: row for row in figures["methods"]}
    # On generated sites every method cuts the shared template: the filter alone beats the
    # whole page, and no site's pages were lost.
    for method in SITE_METHODS:
        assert rows[method]["filter_pooled"] > rows["(none)"]["filter_pooled"]
        assert rows[method]["trim_pooled"] >= rows["(none)"]["trim_pooled"] - 0.01
        assert rows[method]["sitepass_pooled"] >= rows["(none)"]["sitepass_pooled"] - 0.01
    assert [s["pages"] for s in figures["sites"]] == [6, 6]


def test_bench_refuses_an_unknown_method(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from test_template_evaluation import write_dataset

    data = write_dataset(tmp_path / "gen", ["a.example.org", "b.example.org"])
    assert main(["bench", "template-eval", str(data), "--methods", "vips", "-q"]) == 2
    assert "unknown method 'vips'" in capsys.readouterr().err


def test_deboiler_cleans_a_generated_site() -> None:
    pytest.importorskip("deboiler")
    from newscrawl.evaluation.site_method_scores import deboiler_html

    urls = [f"https://example.org/{i}" for i in range(5)]
    cleaned = deboiler_html(urls, [_page(i) for i in range(5)])
    for i, html in enumerate(cleaned):
        dom = parse_html(html)
        text = dom.text(dom.body)
        assert "Copyright Example Daily" not in text
        assert parse_html(_page(i)).text(_node(parse_html(_page(i)), "story")) in text


# -- the template filter with each method (`-e template --site-method`) --------------------------

MODEL = Path(__file__).resolve().parents[1] / "models" / "default_template_model.json"


@pytest.mark.parametrize("method", SITE_METHODS)
def test_template_filter_cuts_the_site_template_it_is_handed(method: str) -> None:
    from newscrawl.extractors.template_filter import TemplateConfig, TemplateExtractor
    from newscrawl.site.site_context import extract_in_site, learn_site
    from newscrawl.template.sitelevel import RawPage

    extractor = TemplateExtractor(TemplateConfig(model=str(MODEL), site_method=method))
    pages = [RawPage(f"https://example.org/{i}", _page(i).encode()) for i in range(6)]
    context = learn_site(pages, [method])
    assert context is not None and context.template(method) is not None
    assert learn_site(pages[:4], [method]) is None  # under SiteLevel's minimum of pages
    # a page outside the learnt ones is scored by what they taught
    for i, dom in enumerate(_site(7)):
        alone = extractor.extract(dom).text
        text = extract_in_site(extractor, dom, context).text
        assert "Section A" in alone  # no context: the site's menu stays
        assert "Section A" not in text and "Copyright Example" not in text
        assert parse_html(_page(i)).text(_node(parse_html(_page(i)), "story")) in text
        assert extract_in_site(extractor, dom, context).text == text  # no state kept


def test_template_filter_refuses_an_unknown_method() -> None:
    from newscrawl.extractors.template_filter import build_template_extractor

    with pytest.raises(ValueError, match="unknown site method 'vips'"):
        build_template_extractor("template", str(MODEL), site_method="vips")


@pytest.mark.parametrize("method", ["sst", "entropy"])
def test_evaluate_site_method(method: str, tmp_path: Path) -> None:
    from test_template_evaluation import write_dataset

    from newscrawl.extractors import build_extractors

    assert build_extractors(["template"], str(MODEL), method)["template"].site_method == method
    data = write_dataset(tmp_path / "gen", ["a.example.org"], pages=6)
    out = tmp_path / "report.json"
    args = ["evaluate", str(data), "-e", "template", "--model", str(MODEL), "--no-progress"]
    assert main([*args, "--site-method", method, "--json", str(out)]) == 0
    (dataset,) = json.loads(out.read_text())["datasets"]
    assert dataset["extractors"]["template"]["shingle"]["f1"] > 0.9
    with pytest.raises(SystemExit):
        main([*args, "--site-method", "vips"])


def test_study_evaluation_trains_on_another_methods_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    from test_template_evaluation import write_dataset

    from newscrawl.training.template_sites import load_site, site_groups

    data = write_dataset(tmp_path / "gen", [f"s{i}.example.org" for i in range(3)])
    dataset, site, ids = site_groups([data])[0]
    hashed = load_site(dataset, site, ids, 200)
    styled = load_site(dataset, site, ids, 200, "sst")
    assert any(
        not np.array_equal(a.sitelevel, b.sitelevel)
        for a, b in zip(hashed.pages, styled.pages, strict=True)
    )
    args = ["bench", "template-eval", str(data), "--folds", "3", "--no-extraction", "-q"]
    assert main([*args, "--site-method", "pagelets"]) == 0
    assert "everything template" in capsys.readouterr().out


# -- where a site stage runs: sitelevel command, site pass, extract, crawl setting ----------------


def test_run_sitelevel_labels_by_the_chosen_method() -> None:
    from newscrawl.template.sitelevel import RawPage, run_sitelevel

    raws = [RawPage(f"https://example.org/{i}", _page(i)) for i in range(6)]
    hashed = run_sitelevel("example.org", raws, geometry="flow")
    styled = run_sitelevel("example.org", raws, geometry="flow", method="sst")
    doms = [parse_html(raw.html) for raw in sorted(raws, key=lambda raw: raw.url)]
    assert hashed.labels is not None and styled.labels is not None
    for label, mask in zip(styled.labels, site_masks("sst", doms), strict=True):
        assert np.array_equal(label, mask)  # the method's labels, not SiteLevel's
    assert any(not np.array_equal(a, b) for a, b in zip(hashed.labels, styled.labels, strict=True))
    with pytest.raises(ValueError, match="unknown site method"):
        run_sitelevel("example.org", raws, method="vips")


def test_sitelevel_command_site_method(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import pyarrow.dataset as ds
    from test_template_evaluation import write_dataset

    data = write_dataset(tmp_path / "gen", ["a.example.org"], pages=6)
    labels = {}
    for method in ("sitelevel", "pagelets"):
        out = tmp_path / method
        assert main(["sitelevel", str(data), "--out", str(out), "-q", "--site-method", method]) == 0
        table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
        labels[method] = table.column("label").to_numpy()
    assert len(labels["sitelevel"]) == len(labels["pagelets"])
    assert 0 < labels["pagelets"].mean() < 1
    assert not np.array_equal(labels["sitelevel"], labels["pagelets"])


@pytest.mark.parametrize("method", ["entropy", "pagelets"])
def test_extract_site_pass_by_each_method(
    method: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    for i in range(6):
        (folder / f"{i}.html").write_text(_page(i), encoding="utf-8")
    args = ["extract", str(folder), "-e", "cetd-tpc", "-f", "jsonl", "--site-from", "dir"]
    assert main([*args, "--site-method", method]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(records) == 6 and all(r["text"] for r in records)
    with pytest.raises(SystemExit):
        main([*args, "--site-method", "vips"])


def test_crawl_site_method_setting() -> None:
    import argparse

    from newscrawl.commands import crawl
    from newscrawl.commands.cli_options import option_settings

    parser = argparse.ArgumentParser()
    crawl.add_arguments(parser)
    args = parser.parse_args(["sites.txt", "--site-method", "entropy"])
    assert option_settings(args)["NEWSCRAWL_SITE_METHOD"] == "entropy"
    assert "NEWSCRAWL_SITE_METHOD" not in option_settings(parser.parse_args(["sites.txt"]))
