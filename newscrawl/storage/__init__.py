"""Parquet output: explicit schemas and a crash-safe, partitioned dataset writer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from newscrawl.storage.schemas import ARTICLES_SCHEMA, PAGES_SCHEMA
    from newscrawl.storage.writer import ParquetDatasetWriter, closed_files, read_column

__all__ = ["ARTICLES_SCHEMA", "PAGES_SCHEMA", "ParquetDatasetWriter", "closed_files", "read_column"]

# Imported on first use: the writer needs pyarrow.dataset, which imports pandas (slow to
# import), and extracting a page (`newscrawl extract`) reaches this package only for node records.
_HOMES = {
    "ARTICLES_SCHEMA": "schemas",
    "PAGES_SCHEMA": "schemas",
    "ParquetDatasetWriter": "writer",
    "closed_files": "writer",
    "read_column": "writer",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{home}"), name)
