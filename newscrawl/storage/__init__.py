"""Parquet output: explicit schemas and a crash-safe, partitioned dataset writer."""

from newscrawl.storage.schemas import ARTICLES_SCHEMA, PAGES_SCHEMA
from newscrawl.storage.writer import ParquetDatasetWriter, closed_files, read_column

__all__ = ["ARTICLES_SCHEMA", "PAGES_SCHEMA", "ParquetDatasetWriter", "closed_files", "read_column"]
