"""The dataset reader, `newscrawl evaluate` and `newscrawl bench extract` on small datasets."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from newscrawl import extractors
from newscrawl.cli import main
from newscrawl.evaluation import DatasetError, read_dataset
from newscrawl.extractors import Extraction
from newscrawl.html.dom import Dom
from newscrawl.lab.benchmarks import available


class Paragraphs:
    """A throwaway extractor: the text of every <p>."""

    name: ClassVar[str] = "paras"

    def extract(self, dom: Dom) -> Extraction:
        ids = tuple(i for i, tag in enumerate(dom.tag) if tag == "p")
        text = "\n".join(dom.text(i) for i in ids)
        return Extraction(title=dom.title, text=text, node_ids=ids, extractor=self.name)


class Fragile(Paragraphs):
    """Like Paragraphs, but raises on pages that mention "five"."""

    name: ClassVar[str] = "fragile"

    def extract(self, dom: Dom) -> Extraction:
        extraction = super().extract(dom)
        if "five" in extraction.text:
            raise KeyError("five")
        return extraction


@pytest.fixture(autouse=True)
def throwaway_extractors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extractors.EXTRACTORS, "paras", f"{__name__}:Paragraphs")
    monkeypatch.setitem(extractors.EXTRACTORS, "fragile", f"{__name__}:Fragile")


def write(path: Path, data: bytes | str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)


def html(*paragraphs: str) -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return f"<html><body><div>Menu Home About Contact Us</div>{body}</body></html>"


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """Three scorable pages with hand-computed shingle scores for `Paragraphs`.

    p1: output = gold                                  -> P 1.0, R 1.0
    p2: output has 5 shingles, gold is 1 of them       -> P 0.2, R 1.0
    p10: binary, cannot be parsed: empty output        -> P 0.0, R 0.0
    """
    root = tmp_path / "tiny"
    write(root / "html" / "p1.html", html("alpha beta gamma delta epsilon"))
    write(root / "gold" / "p1.txt", "alpha beta gamma delta epsilon\n")
    write(root / "html" / "p2.html", html("one two three four", "five six seven eight"))
    write(root / "gold" / "p2.txt", "one two three four")
    write(root / "html" / "p10.html", b"\x00\x01\x02\x03 binary")
    write(root / "gold" / "p10.txt", "some gold text here")
    write(root / "html" / "orphan.html", html("no gold for this page"))
    write(root / "gold" / "lost.txt", "gold whose page is missing")
    write(
        root / "meta.jsonl",
        '{"id": "p1", "url": "http://example.org/a", "site": "example.org"}\n'
        "{broken json\n"
        '{"id": "p2", "url": null}\n',
    )
    return root


def test_reader_yields_pages_in_id_order_and_counts_pages_without_gold(dataset: Path) -> None:
    data = read_dataset(dataset)
    assert data.name == "tiny"
    assert data.ids == ["p1", "p2", "p10"]
    assert data.skipped == 1
    assert data.bad_meta_lines == 1
    page_id, page_html, gold, meta = next(iter(data))
    assert page_id == "p1"
    assert page_html.startswith(b"<html>")
    assert gold == "alpha beta gamma delta epsilon\n"
    assert meta["url"] == "http://example.org/a"
    assert [p.meta for p in data][2] == {}  # p10 has no meta line
    assert read_dataset(dataset, limit=2).ids == ["p1", "p2"]


def test_reader_without_meta_and_on_wrong_folders(tmp_path: Path, dataset: Path) -> None:
    (dataset / "meta.jsonl").unlink()
    assert all(page.meta == {} for page in read_dataset(dataset))
    with pytest.raises(DatasetError, match="no such dataset folder"):
        read_dataset(tmp_path / "absent")
    (tmp_path / "plain").mkdir()
    with pytest.raises(DatasetError, match="needs html/ and gold/"):
        read_dataset(tmp_path / "plain")
    write(dataset / "html" / "p2.htm", html("a second copy of page p2"))
    with pytest.raises(DatasetError, match=r"p2\.htm and p2\.html are both page 'p2'"):
        read_dataset(dataset)


def test_evaluate_table_and_json_report(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "report.json"
    code = main(
        ["evaluate", str(dataset), "-e", "paras,fragile", "--json", str(report_path), "--per-page"]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == [
        "dataset",
        "extractor",
        "pages",
        "errors",
        "P",
        "R",
        "F1",
        "token",
        "F1",
        "word",
        "F1",
        "pages/s",
    ]
    paras_row = next(line.split() for line in lines if " paras " in line)
    # P = (1 + 0.2 + 0) / 3, R = (1 + 1 + 0) / 3, F1 = 2PR / (P + R) = 0.5
    assert paras_row[:7] == ["tiny", "paras", "3", "1", "0.400", "0.667", "0.500"]
    fragile_row = next(line.split() for line in lines if " fragile " in line)
    assert fragile_row[:7] == ["tiny", "fragile", "3", "2", "0.333", "0.333", "0.333"]
    assert any(line.startswith("tiny") and "(parse only)" in line for line in lines)
    assert "WARNING: tiny: extractor fragile RAISED on 1 pages" in out
    assert "first: p2: KeyError: 'five'" in out
    assert "WARNING: tiny: 1 pages could not be parsed" in out
    assert "WARNING: tiny: 1 pages without gold were skipped" in out
    assert "WARNING: tiny: 1 gold files have no page in html/ (first: lost)" in out
    assert "WARNING: tiny: 1 meta.jsonl lines are not JSON objects with an id, or repeat" in out

    report = json.loads(report_path.read_text())
    (tiny,) = report["datasets"]
    assert (tiny["pages"], tiny["skipped_without_gold"]) == (3, 1)
    assert (tiny["gold_without_page"], tiny["bad_meta_lines"]) == (["lost"], 1)
    assert list(tiny["parse_errors"]) == ["p10"]
    paras = tiny["extractors"]["paras"]
    assert paras["shingle"] == pytest.approx({"precision": 0.4, "recall": 2 / 3, "f1": 0.5})
    # tokens: p1 exact; p2 4 of 8 output tokens are gold: P 0.5, R 1; p10 empty: 0, 0
    assert paras["token"]["precision"] == pytest.approx(0.5)
    assert paras["token"]["recall"] == pytest.approx(2 / 3)
    assert paras["pages_per_second"] > 0
    # WCXB's word F1: the mean of the per-page F1s (1, 2/3, 0), not the F1 of the means
    assert paras["word_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert paras_row[8] == f"{(1 + 2 / 3) / 3:.3f}"
    assert [p["word_f1"] for p in paras["per_page"]] == pytest.approx([1, 2 / 3, 0])
    assert [p["id"] for p in paras["per_page"]] == ["p1", "p2", "p10"]
    assert paras["per_page"][1]["tp_fp_fn"] == pytest.approx([0.2, 0.8, 0.0])
    assert tiny["extractors"]["fragile"]["errors_by_page"] == {"p2": "KeyError: 'five'"}
    assert tiny["parse_pages_per_second"] > 0


def test_several_datasets_get_pooled_rows(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    write(other / "html" / "x.html", html("lorem ipsum dolor sit amet"))
    write(other / "gold" / "x.txt", "lorem ipsum dolor sit amet")
    assert main(["evaluate", str(dataset), str(other), "-e", "paras", "--limit", "2"]) == 0
    out, _ = capsys.readouterr()
    rows = {tuple(line.split()[:2]): line.split() for line in out.splitlines()[2:] if line}
    # tiny limited to p1, p2: P (1 + 0.2) / 2; all: (1 + 0.2 + 1) / 3
    assert rows[("tiny", "paras")][4] == "0.600"
    assert rows[("other", "paras")][4:7] == ["1.000", "1.000", "1.000"]
    assert rows[("all", "paras")][2] == "3"
    assert rows[("all", "paras")][4] == "0.733"
    assert "no extractor raised on any page" in out


def test_evaluate_reports_bad_arguments(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(tmp_path / "absent")]) == 2
    assert "no such dataset folder" in capsys.readouterr().err
    assert main(["evaluate", str(dataset), "-e", "paras,nope"]) == 2
    assert "unknown extractor nope" in capsys.readouterr().err
    assert main(["evaluate", str(dataset), "-e", "paras", "--by", "colour", "--no-progress"]) == 0
    assert "WARNING: no page's meta.jsonl has a 'colour' field" in capsys.readouterr().out
    listed = tmp_path / "listed"
    shutil.copytree(dataset, listed)
    (listed / "meta.jsonl").write_text('{"id": "p1", "tags": ["a", "b"]}\n{"id": "p2"}\n')
    assert main(["evaluate", str(listed), "-e", "paras", "--by", "tags", "--no-progress"]) == 0
    assert "WARNING: 'tags' holds lists or objects in meta.jsonl" in capsys.readouterr().out
    with pytest.raises(SystemExit) as stopped:
        main(["evaluate", str(dataset), "-j", "0"])
    assert stopped.value.code == 2
    assert "-j/--jobs: must be at least 1, not 0" in capsys.readouterr().err
    empty = tmp_path / "empty"
    (empty / "html").mkdir(parents=True)
    (empty / "gold").mkdir()
    assert main(["evaluate", str(empty)]) == 2
    assert "no pages with gold" in capsys.readouterr().err
    again = f"{dataset}/../{dataset.name}"  # the same folder by another path
    assert main(["evaluate", str(dataset), again, "-e", "paras"]) == 2
    assert f"dataset given twice: {again}" in capsys.readouterr().err


def _trafilatura_works() -> bool:
    try:
        import trafilatura  # noqa: F401
    except ImportError:
        return False
    return True


def test_bench_extract(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "extract" in available()
    code = main(["bench", "extract", str(dataset), "-e", "paras,fragile", "--repeat", "2"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "3 pages" in out and "1 unparseable left out" in out  # orphan counts: gold not needed
    stages = {line.split("  ")[0].strip(): line.split() for line in out.splitlines()[2:]}
    assert {"parse", "parse + paras", "parse + fragile", "parse + all (paras, fragile)"} <= set(
        stages
    )
    assert float(stages["parse"][1]) > 0
    assert stages["parse + fragile"][-1] == "1"  # errors: the page with "five"
    if _trafilatura_works():
        assert any(label.startswith("trafilatura") for label in stages)
        assert "speed ratio, parse + all (paras, fragile) vs trafilatura: " in out
    else:
        assert "trafilatura" in err and "newscrawl[bench]" in err


def test_bench_dispatcher_lists_benchmarks() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "newscrawl.cli", "bench", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    for name in available():
        assert name in done.stdout


def test_fail_under_is_a_quality_gate(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # paras scores F1 0.5 on the tiny dataset (see the table test): 0.49 passes, 0.51 fails
    assert main(["evaluate", str(dataset), "-e", "paras", "--fail-under", "0.49"]) == 0
    assert "pooled shingle F1 0.5000 over 3 pages, floor 0.4900: ok" in capsys.readouterr().out
    assert main(["evaluate", str(dataset), "-e", "paras", "--fail-under", "0.51"]) == 3
    assert "BELOW THE FLOOR" in capsys.readouterr().out


def test_snippets_and_figures_by_a_meta_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """WCXB-style meta: snippets that must and must not appear, and a page type to group by."""
    root = tmp_path / "typed"
    write(root / "html" / "a.html", html("alpha beta, gamma delta epsilon"))
    write(root / "gold" / "a.txt", "alpha beta gamma delta epsilon")
    write(root / "html" / "b.html", html("one two three four"))
    write(root / "gold" / "b.txt", "one two three four\nnine ten eleven twelve")
    write(root / "html" / "c.html", html("zeta eta theta iota"))
    write(root / "gold" / "c.txt", "zeta eta theta iota")
    meta = [
        # punctuation and spacing do not decide a snippet; "Menu Home" is outside every <p>
        {
            "id": "a",
            "page_type": "article",
            "with_snippets": ["beta gamma", "alpha  beta"],
            "without_snippets": ["Menu Home"],
        },
        # "nine ten" is gold the extractor misses; "two three" is kept though it is unwanted
        {
            "id": "b",
            "page_type": "forum",
            "with_snippets": ["nine ten", "one"],
            "without_snippets": ["two three", "Contact Us"],
        },
        {"id": "c"},  # no type, no snippets
    ]
    write(root / "meta.jsonl", "".join(json.dumps(m) + "\n" for m in meta))
    report_path = tmp_path / "report.json"
    args = ["evaluate", str(root), "-e", "paras", "--by", "page_type", "--json", str(report_path)]
    code = main(args)
    out, _ = capsys.readouterr()
    assert code == 0
    lines = [line.split() for line in out.splitlines()]
    # b misses the gold's second line: 1 of its 5 shingles, R = (1 + 0.2 + 1) / 3
    assert lines[2][:7] == ["typed", "paras", "3", "0", "1.000", "0.733", "0.846"]
    # kept 3 of the 4 must-have snippets; left out 2 of the 3 must-not ones; c has none
    assert ["typed", "paras", "2", "75.0%", "66.7%"] in lines
    groups = {line[0]: line[2:] for line in lines[-4:-1]}  # the last line: no extractor raised
    assert groups["article"] == ["1", "1.000", "1.000", "1.000", "1.000", "100.0%", "100.0%"]
    assert groups["forum"] == ["1", "1.000", "0.200", "0.333", "0.667", "50.0%", "50.0%"]
    assert groups["-"] == ["1", "1.000", "1.000", "1.000", "1.000", "-", "-"]
    report = json.loads(report_path.read_text())
    (typed,) = report["datasets"]
    assert typed["extractors"]["paras"]["snippets"] == {
        "kept": 3, "wanted": 4, "left_out": 2, "unwanted": 3
    }  # fmt: skip
    assert report["by"]["field"] == "page_type"
    assert list(report["by"]["groups"]) == ["article", "forum", "-"]
    forum = report["by"]["groups"]["forum"]["paras"]
    assert forum["pages"] == 1
    assert forum["shingle"]["recall"] == pytest.approx(0.2)
    assert forum["word_f1"] == pytest.approx(2 / 3)  # word bags: P 1, R 4/8


def test_evaluate_refuses_what_it_cannot_honour_before_the_run(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for floor in ("nan", "2", "-1"):
        with pytest.raises(SystemExit) as stopped:
            main(["evaluate", str(dataset), "-e", "paras", "--fail-under", floor])
        assert stopped.value.code == 2
        assert "--fail-under: must be from 0 to 1" in capsys.readouterr().err
    report = tmp_path / "no" / "such" / "report.json"
    assert main(["evaluate", str(dataset), "-e", "paras", "--json", str(report)]) == 2
    assert "cannot write" in capsys.readouterr().err
    assert main(["evaluate", str(dataset), "-e", "paras", "--per-page"]) == 2
    assert "give --json FILE" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["evaluate", str(dataset), "-n", "-1"])


def test_meta_and_gold_files_as_editors_save_them(
    dataset: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a byte-order mark on meta.jsonl; an id given twice (the first line counts)
    meta = '{"id": "p1", "url": "http://example.org/a"}\n{"id": "p1", "url": "http://x.org/"}\n'
    (dataset / "meta.jsonl").write_bytes(b"\xef\xbb\xbf" + meta.encode())
    data = read_dataset(dataset)
    assert data.meta["p1"]["url"] == "http://example.org/a" and data.bad_meta_lines == 1
    # gold in UTF-16 with its mark reads right; gold in Latin-1 is warned about
    (dataset / "gold" / "p1.txt").write_text("alpha beta gamma delta epsilon\n", encoding="utf-16")
    assert next(iter(read_dataset(dataset))).gold == "alpha beta gamma delta epsilon\n"
    (dataset / "gold" / "p2.txt").write_bytes("one two three café".encode("latin-1"))
    assert read_dataset(dataset).gold_not_utf8() == ["p2"]
    assert main(["evaluate", str(dataset), "-e", "paras", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "1 gold files are not UTF-8 (first: p2)" in err
    assert "or repeat an earlier line's id" in out


def test_snippets_given_as_one_string_are_one_phrase() -> None:
    from newscrawl.evaluation.snippets import snippet_counts

    text = "The council voted on Tuesday.\nShare this"
    meta = {"with_snippets": "council voted", "without_snippets": ["Share this", 3, "Log in"]}
    counts = snippet_counts(text, meta)
    assert (counts.kept, counts.wanted) == (1, 1)
    assert (counts.left_out, counts.unwanted) == (1, 2)  # the number is no phrase


def test_bench_extract_gives_a_table_per_dataset(
    dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other"
    write(other / "html" / "x.html", html("one two three four five six"))
    code = main(["bench", "extract", str(dataset), str(other), "-e", "paras", "-r", "1",
                 "--clock", "wall"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    heads = [line for line in out.splitlines() if line.startswith("bench extract: ")]
    assert [line.split(" - ")[0] for line in heads] == [
        f"bench extract: {dataset}",
        f"bench extract: {other}",
    ]
    assert "1 pages" in heads[1] and "wall time" in heads[1]
    assert main(["bench", "extract", str(dataset), str(tmp_path / "none"), "-e", "paras"]) == 2
