"""The documentation dataset builder: gold text from a generator's markup, and the folder it
writes, read back by the evaluation's own reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from newscrawl.cli import main
from newscrawl.gold.dataset import read_dataset
from newscrawl.gold.docs_generators import page_gold
from newscrawl.gold.docsdata import utf8_page

FIXTURES = Path(__file__).parent / "fixtures" / "docs"


def _gold(path: Path) -> tuple[str, str, str]:
    found = page_gold(utf8_page(path.read_bytes()))
    assert found is not None
    generator, title, gold = found
    return generator.name, title, gold


def test_sphinx_gold_keeps_the_body_and_drops_navigation() -> None:
    name, title, gold = _gold(FIXTURES / "sphinx" / "api.html")
    assert name == "sphinx"
    assert title == "Widget API — Fakelib 1.0 documentation"
    blocks = gold.split("\n\n")
    assert blocks[0] == "Widget API"  # the permalink mark is gone
    assert "The Widget class draws a widget on a canvas." in blocks
    assert "class Widget(size, colour='red')" in blocks  # the dt signature, no [source]
    assert "Make a widget of the given size." in blocks
    assert "Sizes are measured in pixels." in blocks
    assert "Option | Meaning" in blocks and "size | width of the widget" in blocks
    assert "w = Widget(3)\nw.draw()" in gold  # code keeps its lines, without line numbers
    assert "More widgets" in blocks  # a toctree inside the body is the page's text
    for junk in (
        "¶",
        "[source]",
        "Navigation",
        "previous chapter",
        "Quick search",
        "Go",
        "Copyright",
        "Table of Contents",
        "1\n2",
    ):
        assert junk not in gold


def test_docbook_gold_drops_header_and_footer_and_reads_latin1() -> None:
    name, title, gold = _gold(FIXTURES / "docbook" / "ch01.html")
    assert name == "docbook"
    assert title == "Chapter 1. Getting started"
    blocks = gold.split("\n\n")
    assert blocks[:3] == ["Chapter 1. Getting started", "Table of Contents", "1.1. Installing"]
    assert "This chapter explains how to install the café tool on a fresh system." in blocks
    assert "# apt-get install cafe\n# cafe --version" in blocks
    assert "--quiet" in blocks and "Print nothing but errors." in blocks
    assert "Naïve users should read the whole chapter first." in blocks
    for junk in ("Prev", "Next", "Home", "Fake Handbook", "Chapter 2"):
        assert junk not in gold


def test_utf8_page_rewrites_the_declared_charset() -> None:
    text = utf8_page((FIXTURES / "docbook" / "ch01.html").read_bytes())
    assert "charset=utf-8" in text and "ISO-8859-1" not in text and "café" in text
    assert not text.lstrip().startswith("<?xml")


def test_a_page_no_generator_wrote_has_no_gold() -> None:
    assert page_gold("<html><body><p>Plain page, no generator.</p></body></html>") is None
    assert page_gold("") is None


def test_build_writes_a_dataset_evaluate_reads(tmp_path: Path, capsys) -> None:
    out = tmp_path / "docs"
    code = main(
        [
            "data",
            "docs",
            f"fakelib={FIXTURES / 'sphinx'}",
            f"fakebook={FIXTURES / 'docbook'}",
            "--out",
            str(out),
            "-q",
        ]
    )
    assert code == 0
    data = read_dataset(out)
    # genindex is an index, tiny.html is under the word minimum, broken.html is not HTML
    assert data.ids == ["fakebook-0001", "fakelib-0001"]
    for page in data:
        assert page.gold.rstrip("\n") == page_gold(page.html.decode("utf-8"))[2]
        assert page.meta["page_type"] == "documentation"
    assert data.meta["fakelib-0001"]["site"] == "fakelib"
    assert data.meta["fakelib-0001"]["url"] == "https://fakelib.example.org/en/latest/api.html"
    assert data.meta["fakebook-0001"]["generator"] == "docbook"
    assert data.meta["fakebook-0001"]["url"] is None
    stats = json.loads((out / "stats.json").read_text())
    assert stats["pages"] == 2 and stats["sites"] == 2
    readme = (out / "README.md").read_text()
    assert "## Gold conventions" in readme and "| fakelib |" in readme
    capsys.readouterr()
    assert main(["evaluate", str(out), "-e", "nce", "--no-progress"]) == 0
    assert "nce" in capsys.readouterr().out


def test_rebuild_replaces_the_dataset_without_stale_pages(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    assert (
        main(
            [
                "data",
                "docs",
                f"a={FIXTURES / 'sphinx'}",
                f"b={FIXTURES / 'docbook'}",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    assert main(["data", "docs", f"b={FIXTURES / 'docbook'}", "--out", str(out), "-q"]) == 0
    assert sorted(p.name for p in (out / "html").iterdir()) == ["b-0001.html"]
    assert sorted(p.name for p in (out / "gold").iterdir()) == ["b-0001.txt"]


def test_bad_sources_and_outputs_are_one_line_errors(tmp_path: Path, capsys) -> None:
    out = tmp_path / "docs"
    assert main(["data", "docs", str(tmp_path / "missing"), "--out", str(out)]) == 2
    assert "no such folder" in capsys.readouterr().err
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    assert main(["data", "docs", str(FIXTURES / "docbook"), "--out", str(other)]) == 2
    assert "not a dataset folder" in capsys.readouterr().err
    assert (other / "keep.txt").read_text() == "mine"
    # a folder with no page of a known generator leaves an existing dataset as it was
    assert main(["data", "docs", f"b={FIXTURES / 'docbook'}", "--out", str(out), "-q"]) == 0
    empty = tmp_path / "empty"
    shutil.copytree(FIXTURES / "sphinx", empty)
    for page in empty.glob("*.html"):
        page.unlink()
    assert main(["data", "docs", str(empty), "--out", str(out), "-q"]) == 2
    assert "no page with gold text" in capsys.readouterr().err
    assert sorted(p.name for p in (out / "html").iterdir()) == ["b-0001.html"]


@pytest.mark.parametrize("per_site", ["0", "-3"])
def test_per_site_must_be_positive(tmp_path: Path, per_site: str, capsys) -> None:
    args = ["data", "docs", str(FIXTURES / "docbook"), "--out", str(tmp_path / "d")]
    assert main([*args, "--per-site", per_site]) == 2
    assert "--per-site" in capsys.readouterr().err


# Small pages of the other generators: (html, generator, text kept, text left out)
_PAGES = [
    (
        '<html><head><meta name="generator" content="Doxygen 1.9.4"></head><body>'
        '<div class="header"><div class="summary"><a href="#pub-methods">Public Methods</a></div>'
        '<div class="headertitle"><div class="title">Foo Class Reference</div>'
        '<div class="ingroups"><a href="g.html">Widgets</a> » <a href="f.html">foo()</a></div>'
        "</div></div>"
        '<div class="contents"><h2 class="memtitle"><span class="permalink"><a href="#a1">◆</a>'
        '</span>run()</h2><p>Runs the foo until it stops. <a href="#details">More...</a></p>'
        "</div></body></html>",
        "doxygen",
        ["Foo Class Reference", "run()", "Runs the foo until it stops."],
        ["Public Methods", "◆", "More...", "Widgets"],
    ),
    (
        '<html><head><meta name="Generator" content="texi2any"></head><body>'
        '<div class="chapter" id="Intro"><table class="header"><tr><td><a href="Top.html">'
        '[Top]</a></td><td><a href="c.html">[Contents]</a></td></tr></table>'
        "<h2>1 Intro</h2><p>The shell reads commands.</p></div><hr>"
        "<p>This document was generated using texi2any.</p></body></html>",
        "texinfo",
        ["1 Intro", "The shell reads commands."],
        ["[Top]", "[Contents]", "generated"],
    ),
    (
        '<html><head><meta name="generator" content="rustdoc"></head><body>'
        '<nav class="sidebar">Methods new push</nav><main><section id="main-content">'
        '<div class="main-heading"><h1>Struct <a href="#">Stack</a></h1>'
        '<span class="out-of-band"><a class="srclink" href="s.html">source</a></span></div>'
        '<details class="rustdoc-toggle top-doc" open><summary class="hideme">'
        "<span>Expand description</span></summary><p>A last-in first-out stack.</p>"
        '</details><details class="rustdoc-toggle"><summary><h3>impl Any for T</h3></summary>'
        "<p>Hidden until opened.</p></details></section></main></body></html>",
        "rustdoc",
        ["Struct Stack", "A last-in first-out stack.", "impl Any for T"],
        ["Methods new", "source", "Expand description", "Hidden until opened."],
    ),
    (
        "<html><head><!-- Book generated using mdBook --></head><body>"
        '<nav id="sidebar">1. Getting Started</nav><div id="page-wrapper"><div id="content">'
        "<main><h1>Hello</h1><pre><code>"
        '<span class="boring">#![allow(unused)]\n</span>fn main() {}</code></pre></main>'
        '<nav class="nav-wrapper"><a href="next.html">Next chapter</a></nav>'
        "</div></div></body></html>",
        "mdbook",
        ["Hello", "fn main() {}"],
        ["Getting Started", "allow", "Next chapter"],
    ),
]


@pytest.mark.parametrize(("html", "name", "kept", "dropped"), _PAGES)
def test_other_generators_keep_the_body_only(
    html: str, name: str, kept: list[str], dropped: list[str]
) -> None:
    found = page_gold(html)
    assert found is not None
    generator, _, gold = found
    assert generator.name == name
    for text in kept:
        assert text in gold.split("\n\n")
    for text in dropped:
        assert text not in gold


def test_stub_pages_that_differ_in_their_title_only_count_once(tmp_path: Path) -> None:
    page = (FIXTURES / "sphinx" / "api.html").read_text(encoding="utf-8")
    site = tmp_path / "site"
    site.mkdir()
    (site / "a.html").write_text(page, encoding="utf-8")
    (site / "b.html").write_text(page.replace("<h1>Widget API", "<h1>Old widget API"))
    (site / "c.html").write_text(page.replace("draws a", "paints a"), encoding="utf-8")
    out = tmp_path / "docs"
    assert main(["data", "docs", str(site), "--out", str(out), "-q"]) == 0
    paths = sorted(r["path"] for r in map(json.loads, (out / "meta.jsonl").open()))
    assert len(paths) == 2 and "c.html" in paths


def test_debian_set_names_the_packages_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from newscrawl.gold import docsdata

    absent = "newscrawl-test-absent-doc"
    monkeypatch.setattr(docsdata, "DEBIAN_SOURCES", ((absent, absent),))
    assert main(["data", "docs", "--debian", "--out", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err
    assert "apt-get install" in err and absent in err
    assert not (tmp_path / "d").exists()
    assert main(["data", "docs", "--out", str(tmp_path / "d")]) == 2
    assert "--debian" in capsys.readouterr().err


def test_the_gold_finds_generators_by_the_marks_extraction_reads() -> None:
    # an mdBook page whose head comment is gone: its scripts (book.js, path_to_root) mark it
    html = (
        '<html><head><script src="book.js"></script></head><body>'
        '<script>var path_to_root = "";</script><nav id="sidebar">1. Getting Started</nav>'
        '<div id="page-wrapper"><div id="content"><main><h1>Hello</h1>'
        "<p>Cargo builds the crate.</p></main></div></div></body></html>"
    )
    found = page_gold(html)
    assert found is not None and found[0].name == "mdbook"
    assert found[2].split("\n\n") == ["Hello", "Cargo builds the crate."]
