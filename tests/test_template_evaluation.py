"""The template evaluation: gold-derived node labels and the cross-site run, on generated sites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from newscrawl.cli import main
from newscrawl.cli import main as cli_main
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site
from newscrawl.training.template_sites import gold_template

PAGE = (
    "<html><body><div id='nav'><a href='/'>Home</a> <a href='/w'>World</a></div>"
    "<div id='story'><h1>A headline about the river</h1><p>The river rose by two metres "
    "overnight and the town <a href='/x'>closed the bridge</a> before dawn.</p><br>"
    "<div id='share'>Share this on social media now</div></div>"
    "<div id='foot'>Copyright the daily example paper</div></body></html>"
)
GOLD = (
    "A headline about the river\n\nThe river rose by two metres overnight and the town closed "
    "the bridge before dawn."
)


def node(dom: Dom, element_id: str) -> int:
    return next(i for i, el in enumerate(dom.elements) if el.get("id") == element_id)


def test_gold_labels_content_ancestors_and_inline_parts() -> None:
    dom = parse_html(PAGE)
    template = gold_template(dom, GOLD)
    assert template[node(dom, "nav")] and template[node(dom, "foot")]
    assert template[node(dom, "share")]  # not gold, though inside the story
    assert not template[node(dom, "story")] and not template[dom.body] and not template[0]
    for i, tag in enumerate(dom.tag):
        if tag in ("h1", "p") or (tag == "a" and dom.text(i) == "closed the bridge"):
            assert not template[i], tag
        if tag == "br":
            assert not template[i]  # text-less, inside content


def test_gold_labels_of_an_empty_gold() -> None:
    dom = parse_html(PAGE)
    assert gold_template(dom, "")[dom.body :].all() or gold_template(dom, "")[node(dom, "story")]


def write_dataset(root: Path, hosts: list[str], pages: int = 5) -> Path:
    """A gold-text dataset of generated sites; the gold is each page's article paragraphs."""
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    meta = []
    for host in hosts:
        for i, (url, html) in enumerate(synthetic_site(host, pages=pages, seed=len(host))):
            page_id = f"{host}-{i}"
            dom = parse_html(html, url=url)
            story = next(
                k for k, el in enumerate(dom.elements) if "-article" in (el.get("class") or "")
            )
            (root / "html" / f"{page_id}.html").write_text(html, encoding="utf-8")
            (root / "gold" / f"{page_id}.txt").write_text(dom.text(story), encoding="utf-8")
            meta.append({"id": page_id, "url": url, "site": host})
    (root / "meta.jsonl").write_text("\n".join(json.dumps(m) for m in meta) + "\n", "utf-8")
    return root


def test_evaluation_runs_across_sites(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = write_dataset(tmp_path / "gen", [f"s{i}.example.org" for i in range(3)])
    out = tmp_path / "figures.json"
    args = [str(data), "--folds", "3", "--extractors", "nce", "--json", str(out), "-q"]
    assert cli_main(["bench", "template-eval", *args]) == 0
    text = capsys.readouterr().out
    assert "everything template" in text and "| gen | 15 | nce |" in text
    figures = json.loads(out.read_text())
    rows = {(r["kind"], r["training"], r["c"]) for r in figures["template"]}
    assert ("all", "total", 0.01) in rows and ("all", "total", None) in rows
    assert {"nce", "template+nce", "site>nce"} <= set(figures["shingle"]["gen"])


def test_evaluation_needs_two_sites(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    data = write_dataset(tmp_path / "one", ["only.example.org"])
    assert main(["bench", "template-eval", str(data), "-q"]) == 2
    assert "at least 2" in capsys.readouterr().err
    assert main(["bench", "template-eval", str(tmp_path / "missing"), "-q"]) == 2


def test_bench_template_prints_the_buffer_memory(capsys: pytest.CaptureFixture) -> None:
    assert main(["bench", "template", "--pages", "8", "--teasers", "4"]) == 0
    out = capsys.readouterr().out
    assert "peak Python memory while buffering" in out and "under 100 MB" in out


def test_the_bench_default_extractors_are_the_evaluations() -> None:
    """`bench template-eval` names its default without importing the evaluation (which every
    command line would pay for): the two must stay the same."""
    from newscrawl.lab.bench_template_eval import _SEED_EXTRACTORS
    from newscrawl.training.template_scores import DEFAULT_EXTRACTORS

    assert ",".join(DEFAULT_EXTRACTORS) == _SEED_EXTRACTORS
