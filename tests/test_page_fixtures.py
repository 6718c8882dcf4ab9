"""Hand-written pages of each kind, with expected text: the shipped extractor on each, so a
rebuilt model or a changed feature that loses a kind of page shows at once, by name.

`tests/fixtures/pages` is a dataset in the evaluation layout (`html/`, `gold/`, `meta.jsonl`
with must-have and must-not snippets), written for the project, not taken from any corpus:
`newscrawl evaluate tests/fixtures/pages --by page_type` scores every extractor on it. Each
page's `min_f1` is a little under what the shipped model scores, so it fails on a regression
and not on noise; a page that scores low today (the product page drops its specifications)
says so in its floor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from newscrawl.cli import main
from newscrawl.evaluation.snippets import snippet_counts
from newscrawl.extractors import get_extractor
from newscrawl.gold.metric import f1, score_page
from newscrawl.html.parse import parse_html

PAGES = Path(__file__).parent / "fixtures" / "pages"
RECORDS = [json.loads(line) for line in (PAGES / "meta.jsonl").read_text("utf-8").splitlines()]


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_the_shipped_extractor_on_each_kind_of_page(record: dict[str, Any]) -> None:
    page = (PAGES / "html" / f"{record['id']}.html").read_bytes()
    gold = (PAGES / "gold" / f"{record['id']}.txt").read_text("utf-8")
    extraction = get_extractor("learned").extract(parse_html(page, record["url"]))
    assert extraction.extractor == "learned"  # scored by the model, not its fallback
    score = score_page(gold, extraction.text)
    assert f1(score.precision, score.recall) >= record["min_f1"]
    snippets = snippet_counts(extraction.text, record)
    assert snippets.kept == snippets.wanted, "a must-have phrase is missing"
    assert snippets.left_out == snippets.unwanted, "a must-not phrase is in the text"


def test_the_undeclared_polish_page_is_read_in_windows_1250() -> None:
    page = (PAGES / "html" / "polish_news_cp1250.html").read_bytes()
    assert b"charset" not in page.lower()  # no declaration: its lang attribute decides
    dom = parse_html(page)
    assert (dom.encoding, dom.encoding_source) == ("cp1250", "default")


def test_evaluate_reads_the_fixtures_as_a_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    assert main(["evaluate", str(PAGES), "-e", "learned", "--json", str(report)]) == 0
    capsys.readouterr()
    (dataset,) = json.loads(report.read_text())["datasets"]
    learned = dataset["extractors"]["learned"]
    assert (dataset["pages"], learned["errors"]) == (len(RECORDS), 0)
    assert learned["shingle"]["f1"] >= 0.9
