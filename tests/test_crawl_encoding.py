"""The crawl records each page's charset decision in its `articles` row (issue 10)."""

from __future__ import annotations

from datetime import UTC, datetime

import pyarrow as pa
from newscrawl.pipelines.extraction import ExtractionPipeline
from newscrawl.pipelines.parquet import ParquetWriterPipeline

from newscrawl.crawl.items import PageItem
from newscrawl.storage.schemas import ARTICLES_SCHEMA

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
