"""What the site pass reads and writes beside its pages' trees: the pages, stored or held, and
each page's result and node rows as they are made.

`PassPage` is one page as a job carries it: its bytes, or where they are stored in a `pages`
file (`StoredBytes` reads them there, a row group at a time within a small budget, and the node
hashes stored beside them). `stored_items` lists the pages a crawl stored of a site without
their bytes. `ResultRecords` keeps each page's result (`PageResult`) in a file as it is made,
read back one page at a time (`site_rows`); `NodeRows` writes a site's `nodes` rows to a
staging file as the streamed pass makes them. None of these holds the site at once.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import pickle
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from newscrawl.crawl.items import PageItem, WarcOrigin
from newscrawl.crawl.parsepool import return_freed_memory
from newscrawl.html.tree import PageError
from newscrawl.storage.writer import closed_files
from newscrawl.template.node_records import PageNodes
from newscrawl.template.node_summary import SUMMARY_COLUMN, PageHashes, read_summary
from newscrawl.template.node_table import nodes_schema, nodes_table
from newscrawl.template.sitelevel import RawPage

if TYPE_CHECKING:
    import pyarrow as pa

    from newscrawl.site.site_job import SitePassResult

__all__ = [
    "NodeRows",
    "PageResult",
    "PassPage",
    "ResultRecords",
    "StoredBytes",
    "StoredRef",
    "context_item",
    "give_back_memory",
    "let_go",
    "pass_page",
    "raw_of",
    "site_rows",
    "stored_items",
    "work_item",
]

NODE_ROWS_AT_ONCE = 65_536  # node rows the streamed pass holds before it writes them
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # a job's pages need no fetch time
_PAGE_COLUMNS = ("url", "final_url", "fetched_at", "status", "content_type", "headers", "html")
_WARC_COLUMNS = ("warc_file", "warc_offset", "warc_record_id", "warc_date")


@dataclass(frozen=True, slots=True)
class PassPage:
    """What the site pass reads of one page: its bytes (or where they are stored: row `row`
    of the `pages` file `stored`, `size` bytes, read by the pass when it needs them), where
    they came from, and whether it is an earlier crawl's page (`context`: it shapes the
    template, gets no result)."""

    final_url: str
    html: bytes
    content_type: str = ""
    content_language: str | None = None  # the Content-Language header (page metadata)
    context: bool = False
    stored: str = ""
    row: int = -1
    size: int = 0

    @property
    def nbytes(self) -> int:
        """The page's bytes, held or stored."""
        return self.size if self.stored else len(self.html)


def pass_page(item: PageItem, stored: StoredRef | None = None) -> PassPage:
    """The job's view of a buffered or stored page; with `stored`, its bytes are read from
    there by the pass (the item holds none)."""
    language = item.headers.get("content-language")
    if stored is None:
        return PassPage(item.final_url, item.html, item.content_type, language, item.context)
    path, row, size = stored
    return PassPage(item.final_url, b"", item.content_type, language, item.context, path, row, size)


# Where a stored page's bytes are: (pages file, row, bytes).
StoredRef = tuple[str, int, int]
# The bytes of stored pages a pass keeps read at once (row groups of `pages` files); the row
# group read last is kept whatever its size.
READ_BYTES = 16 << 20


class StoredBytes:
    """The bytes of stored pages (`PassPage.stored`), and the node hashes stored beside them,
    read a row group at a time; the row groups read last are kept while they hold at most
    `budget` bytes (the one read last whatever its size)."""

    def __init__(self, budget: int = READ_BYTES) -> None:
        self.budget = budget
        self._starts: dict[str, list[int]] = {}
        self._columns: dict[str, set[str]] = {}
        self._groups: dict[tuple[str, int, str], list[Any]] = {}
        self._sizes: dict[tuple[str, int, str], int] = {}

    def html(self, page: PassPage) -> bytes:
        """The page's bytes (held, or read from its file)."""
        if not page.stored:
            return page.html
        found = self._value(page, "html")
        return found if isinstance(found, bytes) else b""

    def summary(self, page: PassPage) -> PageHashes | None:
        """The node hashes stored beside the page's bytes; None when there are none (a page
        held, not stored; a file written before they were stored; a page over their bound)."""
        if not page.stored:
            return None
        if SUMMARY_COLUMN not in self._names(page.stored):
            return None
        return read_summary(self._value(page, SUMMARY_COLUMN))

    def _value(self, page: PassPage, column: str) -> Any:
        group, offset = self._locate(page.stored, page.row)
        rows = self._groups.get((page.stored, group, column))
        if rows is None:
            rows = self._read(page.stored, group, column)
        return rows[offset]

    def _names(self, path: str) -> set[str]:
        names = self._columns.get(path)
        if names is None:
            import pyarrow.parquet as pq

            names = set(pq.read_schema(path).names)
            self._columns[path] = names
        return names

    def _locate(self, path: str, row: int) -> tuple[int, int]:
        starts = self._starts.get(path)
        if starts is None:
            import pyarrow.parquet as pq

            meta = pq.read_metadata(path)
            starts, total = [], 0
            for group in range(meta.num_row_groups):
                starts.append(total)
                total += meta.row_group(group).num_rows
            starts.append(total)
            self._starts[path] = starts
        if not 0 <= row < starts[-1]:
            raise PageError(f"row {row} not in {path}")
        import bisect

        group = bisect.bisect_right(starts, row) - 1
        return group, row - starts[group]

    def _read(self, path: str, group: int, column: str) -> list[Any]:
        import pyarrow.parquet as pq

        with pq.ParquetFile(path) as source:
            rows = source.read_row_group(group, columns=[column]).column(0).to_pylist()
        size = sum(len(found) for found in rows if found)
        evicted = False
        while self._groups and sum(self._sizes.values()) + size > self.budget:
            oldest = next(iter(self._groups))
            del self._groups[oldest], self._sizes[oldest]
            evicted = True
        if evicted:
            give_back_memory()
        self._groups[(path, group, column)] = rows
        self._sizes[(path, group, column)] = size
        return rows

    def resolved(self, pages: tuple[PassPage, ...]) -> tuple[PassPage, ...]:
        """The pages with their bytes held (what the passes that hold every page read)."""
        return tuple(
            dataclasses.replace(page, html=self.html(page), stored="", row=-1, size=0)
            if page.stored
            else page
            for page in pages
        )


# the PageItem fields the pass fills, copied back onto the crawl's items
_FILLED = (
    "title",
    "text",
    "markdown",
    "comments",
    "extractor",
    "stage",
    "texts",
    "node_ids",
    "is_article",
    "article_reason",
    "page_type",
    "language",
    "encoding",
    "encoding_source",
    "published",
    "author",
    "content_hash",
    "error",
)


@dataclass(slots=True)
class PageResult:
    """One page after the pass: the article row's fields (`_FILLED`, by name) and the
    evidence the article flag read (`extras`)."""

    fields: dict[str, Any]
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, item: PageItem) -> PageResult:
        return cls({name: getattr(item, name) for name in _FILLED}, dict(item.extras))

    def apply(self, item: PageItem) -> None:
        for name, value in self.fields.items():
            setattr(item, name, value)
        item.extras.update(self.extras)


_BLANK = PageItem(url="", final_url="", site="", crawl="", fetched_at=_EPOCH, status=0)


def let_go(item: PageItem) -> None:
    """The item's filled fields back to a new item's (their values are kept elsewhere)."""
    for name in _FILLED:
        setattr(item, name, copy.copy(getattr(_BLANK, name)))
    item.extras = {}


class ResultRecords:
    """Pages' results (`PageResult`) written to a file one after the other as they are made,
    by their index in the job (`at`: index -> offset), and read back one at a time."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file
        self.at: dict[int, int] = {}

    @classmethod
    def to_file(cls, path: str) -> ResultRecords:
        """Records in a new file at `path` (its folder made when missing), left in place."""
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        return cls(open(path, "w+b"))

    @classmethod
    def temporary(cls, folder: str = "") -> ResultRecords:
        """Records in an unnamed temporary file (in `folder`, default the system's), gone
        once closed."""
        if folder:
            os.makedirs(folder, exist_ok=True)
        return cls(tempfile.TemporaryFile(dir=folder or None))

    def __enter__(self) -> ResultRecords:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add(self, index: int, page: PageResult) -> None:
        self.file.seek(0, os.SEEK_END)
        self.at[index] = self.file.tell()
        pickle.dump(page, self.file, pickle.HIGHEST_PROTOCOL)

    def get(self, index: int) -> PageResult:
        """The result of page `index` (KeyError: none written)."""
        self.file.seek(self.at[index])
        page = pickle.load(self.file)
        if not isinstance(page, PageResult):
            raise TypeError(f"not a page's result at offset {self.at[index]}")
        return page

    def clear(self) -> None:
        """Forget every record written."""
        self.file.seek(0)
        self.file.truncate()
        self.at = {}

    def close(self) -> None:
        self.file.close()


class NodeRows:
    """A site's `nodes` rows as the streamed pass makes them, page by page: written to a
    staging file in `staging` (`path`) a row group at a time, or, without a folder, kept
    for one table (`table`). No file is left behind when the pass fails."""

    def __init__(self, crawl: str, site: str, kind: str, staging: str = "") -> None:
        self.crawl, self.site, self.kind, self.staging = crawl, site, kind, staging
        self.path = ""
        self.table: pa.Table | None = None
        self.rows = 0
        self._held: list[pa.Table] = []
        self._held_rows = 0
        self._writer: Any = None

    def __enter__(self) -> NodeRows:
        return self

    def add(self, page: int, records: PageNodes, labels: np.ndarray) -> None:
        """One page's rows (`page`: its number in the site)."""
        table = nodes_table([records], [labels], self.crawl, self.site, self.kind, page)
        self._held.append(table)
        self._held_rows += table.num_rows
        self.rows += table.num_rows
        if self.staging and self._held_rows >= NODE_ROWS_AT_ONCE:
            self._flush()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._held:
            return
        if self._writer is None:
            os.makedirs(self.staging, exist_ok=True)
            handle, self.path = tempfile.mkstemp(".parquet", "nodes-", self.staging)
            os.close(handle)
            self._writer = pq.ParquetWriter(self.path, nodes_schema(), compression="zstd")
        self._writer.write_table(pa.concat_tables(self._held), row_group_size=NODE_ROWS_AT_ONCE)
        self._held, self._held_rows = [], 0

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        import pyarrow as pa

        if exc_type is not None:
            if self._writer is not None:
                self._writer.close()
            if self.path:
                os.unlink(self.path)
            self.path = ""
            return
        if self.staging:
            self._flush()
            if self._writer is not None:
                self._writer.close()
        elif self._held:
            self.table = pa.concat_tables(self._held)
        self._held = []


def raw_of(page: PassPage) -> RawPage:
    """The page as the site-level stages read it (its bytes held)."""
    return RawPage(page.final_url, page.html, page.content_type or None)


def work_item(page: PassPage, site: str) -> PageItem:
    """A PageItem for the pass to fill (the fields extraction and the flag read)."""
    headers = {"content-language": page.content_language} if page.content_language else {}
    return PageItem(
        url=page.final_url,
        final_url=page.final_url,
        site=site,
        crawl="",
        fetched_at=_EPOCH,
        status=200,
        content_type=page.content_type,
        headers=headers,
        html=page.html,
        context=page.context,
    )


def site_rows(items: list[PageItem], result: SitePassResult | None) -> Iterator[PageItem]:
    """The site's own items (not `context`) in URL order, each with its result from the
    pass's results file (when it has one) set as it is handed out, and its text and the
    other filled fields let go of once the caller is done with it: one page's result is
    held at a time."""
    own = sorted(
        (pair for pair in enumerate(items) if not pair[1].context),
        key=lambda pair: pair[1].final_url,
    )
    path = result.results_file if result is not None else ""
    with contextlib.ExitStack() as stack:
        records = None
        if path:
            records = stack.enter_context(ResultRecords(open(path, "rb")))  # noqa: SIM115
            records.at = result.result_at if result is not None else {}
        for index, item in own:
            if records is not None and index in records.at:
                records.get(index).apply(item)
            yield item
            let_go(item)


def context_item(row: dict[str, Any], site: str) -> PageItem:
    """A page an earlier crawl stored, for the site's template only (`context`)."""
    item = _stored_item(row, site, str(row.get("crawl") or ""))
    item.context = True
    return item


def stored_items(state: Any, site: str, refs: dict[str, StoredRef] | None = None) -> list[PageItem]:
    """PageItems of the site's pages in this crawl's complete `pages` files (with the WARC
    record each came from, when the files say). With `refs`, the items hold no bytes: where
    each page's are (file, row, size) goes into `refs` by its final URL, read a row group at
    a time."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    items: list[PageItem] = []
    for path in closed_files(state.dataset_root("pages"), state.partition(site)):
        with pq.ParquetFile(path) as source:
            names = set(source.schema_arrow.names)
            columns = [c for c in (*_PAGE_COLUMNS, *_WARC_COLUMNS) if c in names]
            first = 0
            for group in range(source.num_row_groups):
                table = source.read_row_group(group, columns=columns)
                sizes = pc.binary_length(table.column("html")).to_pylist()
                if refs is not None:
                    table = table.drop_columns(["html"])
                for offset, row in enumerate(table.to_pylist()):
                    if sizes[offset] is None:
                        continue
                    if refs is not None:
                        row["html"] = b""
                        refs.setdefault(
                            row["final_url"], (str(path), first + offset, sizes[offset])
                        )
                    items.append(_stored_item(row, site, state.crawl_id))
                first += table.num_rows
                del table, sizes
                give_back_memory()  # the group's bytes: not kept resident for the next
    return items


def give_back_memory() -> None:
    """Hand the memory Arrow's pool and the C library's heap hold freed back to the system,
    so a process that reads a site's stored files a row group at a time keeps one group's
    worth resident, not the high-water mark of every group it read."""
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    return_freed_memory()


def _stored_item(row: dict[str, Any], site: str, crawl: str) -> PageItem:
    warc = None
    if row.get("warc_file"):
        warc = WarcOrigin(
            row["warc_file"], row["warc_offset"], row["warc_record_id"], row["warc_date"]
        )
    return PageItem(
        url=row["url"],
        final_url=row["final_url"],
        site=site,
        crawl=crawl,
        fetched_at=row["fetched_at"],
        status=row["status"],
        content_type=row["content_type"] or "",
        headers=dict(row["headers"] or ()),
        html=row["html"],
        replayed=True,
        warc=warc,
    )
