"""The crawl records each page's charset decision in its `articles` row (issue 10), and reads
pages as `extract` reads them."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from crawl_helpers import FAST_CRAWL
from newscrawl.pipelines.extraction import ExtractionPipeline
from newscrawl.pipelines.parquet import ParquetWriterPipeline
from site_server import Answer, serve_site
from test_encoding import french_article_bytes

from newscrawl.cli import main
from newscrawl.crawl.crawl_process import crawl_command
from newscrawl.crawl.items import PageItem
from newscrawl.storage.schemas import ARTICLES_SCHEMA

ROOT = Path(__file__).resolve().parents[1]

PAGE = (
    "<html><head><meta charset='utf-8'><title>Русский заголовок</title></head>"
    "<body><p>Москва - столица России, крупнейший по численности населения город страны.</p>"
    "</body></html>"
)


def item(html: bytes, content_type: str = "text/html") -> PageItem:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return PageItem(
        url="http://s/a",
        final_url="http://s/a",
        site="s",
        crawl="c",
        fetched_at=now,
        status=200,
        content_type=content_type,
        html=html,
    )


def test_articles_rows_carry_the_encoding_decision() -> None:
    pipeline = ExtractionPipeline(None, {}, "", keep_all=False)  # type: ignore[arg-type]
    page = pipeline.fill(item(PAGE.encode("cp1251"), "text/html; charset=utf-8"))
    assert page.title == "Русский заголовок"
    assert (page.encoding, page.encoding_source) == ("cp1251", "detected")
    writer = object.__new__(ParquetWriterPipeline)
    row = writer.row(page)
    assert (row["encoding"], row["encoding_source"]) == ("cp1251", "detected")
    assert ARTICLES_SCHEMA.field("encoding").type == pa.string()
    assert ARTICLES_SCHEMA.field("encoding_source").nullable


def test_unparsable_page_has_no_encoding() -> None:
    pipeline = ExtractionPipeline(None, {}, "", keep_all=False)  # type: ignore[arg-type]
    page = pipeline.fill(item(b"%PDF-1.4 binary"))
    assert page.error and page.error.startswith("parse:")
    row = object.__new__(ParquetWriterPipeline).row(page)
    assert (row["encoding"], row["encoding_source"]) == (None, None)


def _article_site(path: str) -> Answer:
    """The French article (UTF-8 with a Latin-1 footer) at /, served with no charset."""
    if path == "/":
        return "text/html", french_article_bytes()
    if path == "/robots.txt":
        return "text/plain", b"User-agent: *\nAllow: /\n"
    return None


@pytest.mark.slow
def test_a_crawled_utf8_page_with_latin1_strays_is_stored_as_utf8(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with serve_site(_article_site) as site:
        command = crawl_command(f"{site.origin}/", out, FAST_CRAWL, ["--max-pages", "3"])
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = pq.read_table(out / "articles", columns=["title", "text", "encoding"]).to_pylist()
    assert len(rows) == 1
    assert rows[0]["title"] == "Le plan de circulation approuvé"
    assert rows[0]["encoding"] == "utf-8"
    assert "Le conseil municipal a approuvé mardi" in rows[0]["text"]


def test_extract_reads_a_utf8_page_with_latin1_strays_as_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "article.html"
    path.write_bytes(french_article_bytes())
    assert main(["extract", "-f", "jsonl", str(path)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["title"] == "Le plan de circulation approuvé"
    assert "après trois mois de débats" in record["text"]
