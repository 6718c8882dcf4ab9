"""Stored pages, grouped by site, as the SiteLevel stage reads them.

Two kinds of source: a crawl's `pages` Parquet dataset (columns url, final_url, site, status,
content_type, html, ...) and a dataset folder in the development-data layout (html/ID.html and
meta.jsonl giving each page's url and site). A first, cheap pass counts the pages of each site
(only the site column is read) so small sites are never read; the second pass streams the
pages and hands a site's raw pages (`RawPage`) over as soon as all of them are in, for
`newscrawl.template.sitelevel.run_sitelevel` - the one SiteLevel stage, which the crawl's site
pass and the Dask stage run too, and which takes a site's pages in URL order (final URL, else
URL; with more than `max_pages` pages, the first pass keeps the `max_pages` smallest URLs, so
the pages used do not depend on how the dataset happens to be split into files).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from newscrawl.gold.dataset import read_meta
from newscrawl.html.urls import site_of
from newscrawl.template.sitelevel import RawPage

__all__ = ["SitePages", "SourceError", "dataset_files", "parquet_rows", "read_sources"]

_HTML_SUFFIXES = (".html", ".htm")


class SourceError(ValueError):
    """A PAGES argument that is neither a pages dataset nor a dataset folder."""


@dataclass(frozen=True, slots=True)
class _Raw:
    """One stored page before parsing."""

    site: str
    url: str
    html: bytes
    content_type: str | None = None


class _Folder:
    """A dataset folder: html/ID.html, meta.jsonl."""

    def __init__(self, path: Path) -> None:
        self.path = path
        meta, _ = read_meta(path / "meta.jsonl")
        self.files: list[tuple[Path, str, str]] = []  # (html file, site, url)
        for file in sorted((path / "html").iterdir()):
            if file.suffix.lower() not in _HTML_SUFFIXES:
                continue
            record = meta.get(file.stem, {})
            url = str(record.get("url") or "")
            site = str(record.get("site") or site_of(url))
            self.files.append((file, site, url))

    def sites(self) -> Iterator[tuple[str, str]]:
        for _, site, url in self.files:
            yield site, url

    def pages(self) -> Iterator[_Raw]:
        for file, site, url in self.files:
            yield _Raw(site, url, file.read_bytes())


def dataset_files(path: Path) -> list[Path]:
    """The files pyarrow reads as the Parquet dataset at `path`: the file itself, or every file
    under the folder but hidden ones (a name starting with "." or "_", as a writer's temporary
    files do), sorted."""
    if not path.is_dir():
        return [path]
    files = (p for p in path.rglob("*") if p.is_file())
    return sorted(p for p in files if not _hidden(p.relative_to(path)))


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "_")) for part in relative.parts)


def parquet_rows(path: Path) -> int:
    """The rows of the Parquet dataset at `path` (a file or a folder), from each file's footer;
    a SourceError naming the first file that is not readable Parquet (a truncated file,
    another kind of file). A dataset is read whole or refused, by name: a damaged file never
    silently costs a site its pages."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 0
    for file in dataset_files(path):
        try:
            rows += pq.read_metadata(file).num_rows
        except (pa.ArrowException, OSError) as err:
            reason = str(err).splitlines()[0] if str(err) else type(err).__name__
            raise SourceError(f"{file}: not a readable Parquet file ({reason})") from None
    return rows


class _Parquet:
    """A crawl's `pages` dataset: only successful HTML responses are read."""

    def __init__(self, path: Path) -> None:
        import pyarrow as pa
        import pyarrow.dataset as ds

        from newscrawl.storage.datasets import open_parquet

        parquet_rows(path)  # refuses a damaged file by name
        try:
            self.dataset = open_parquet(path, ("crawl", "site"))
        except (pa.ArrowInvalid, OSError) as err:
            raise SourceError(f"{path}: not a pages dataset: {err}") from None
        names = set(self.dataset.schema.names)
        if "html" not in names or not names & {"url", "site"}:
            raise SourceError(f"{path}: not a pages dataset (needs html and url or site columns)")
        self.path = path
        self.names = names
        self.filter = ds.field("status") == 200 if "status" in names else None

    def _scan(self, columns: list[str]) -> Iterator[dict[str, list]]:
        import pyarrow as pa

        wanted = [c for c in columns if c in self.names]
        try:
            scanner = self.dataset.scanner(columns=wanted, filter=self.filter, batch_size=256)
            for batch in scanner.to_batches():
                yield batch.to_pydict()
        except (pa.ArrowInvalid, OSError) as err:
            raise SourceError(f"{self.path}: cannot read pages: {err}") from None

    @staticmethod
    def _url(rows: dict[str, list], i: int) -> str:
        final_url = rows["final_url"][i] if "final_url" in rows else None
        return str(final_url or (rows["url"][i] if "url" in rows else None) or "")

    @classmethod
    def _site(cls, rows: dict[str, list], i: int) -> str:
        site = rows["site"][i] if "site" in rows else None
        return str(site or site_of(cls._url(rows, i)))

    def sites(self) -> Iterator[tuple[str, str]]:
        for rows in self._scan(["site", "url", "final_url"]):
            for i in range(len(next(iter(rows.values()), []))):
                yield self._site(rows, i), self._url(rows, i)

    def pages(self) -> Iterator[_Raw]:
        columns = ["site", "url", "final_url", "html", "content_type"]
        for rows in self._scan(columns):
            for i, html in enumerate(rows["html"]):
                content_type = rows["content_type"][i] if "content_type" in rows else None
                if html is None:
                    continue
                if isinstance(html, str):
                    html = html.encode("utf-8", "surrogatepass")
                yield _Raw(self._site(rows, i), self._url(rows, i), html, content_type)


def _open(path: str | Path) -> _Folder | _Parquet:
    path = Path(path)
    if not path.exists():
        raise SourceError(f"{path}: no such file or directory")
    if path.is_dir() and (path / "html").is_dir():
        return _Folder(path)
    return _Parquet(path)


@dataclass(slots=True)
class SitePages:
    """Iterate (site, [RawPage, ...]) over the sites with enough pages; counts what it skips."""

    sources: list[_Folder | _Parquet]
    expected: dict[str, int]
    pages: int  # pages that will be read
    min_pages: int
    skipped_sites: int = 0
    skipped_pages: int = 0
    chosen: dict[str, Counter[str]] = field(default_factory=dict)  # URLs of capped sites
    buffers: dict[str, list[RawPage]] = field(default_factory=dict)

    def __iter__(self) -> Iterator[tuple[str, list[RawPage]]]:
        expected = dict(self.expected)
        chosen = {site: Counter(urls) for site, urls in self.chosen.items()}
        for source in self.sources:
            for raw in source.pages():
                if expected.get(raw.site, 0) <= 0:
                    continue  # a small site, or a site already past its page cap
                wanted = chosen.get(raw.site)
                if wanted is not None:
                    if wanted[raw.url] <= 0:
                        continue  # past the site's `max_pages` smallest URLs
                    wanted[raw.url] -= 1
                page = RawPage(raw.url, raw.html, raw.content_type)
                self.buffers.setdefault(raw.site, []).append(page)
                expected[raw.site] -= 1
                if expected[raw.site] == 0:
                    yield raw.site, self.buffers.pop(raw.site)
        # pages counted in the first pass but without HTML leave a site short of its count
        for site in list(self.buffers):
            yield site, self.buffers.pop(site)


def read_sources(
    paths: Sequence[str | Path],
    min_pages: int = 5,
    max_pages: int | None = 200,
) -> SitePages:
    """Open every PAGES source and count pages per site; iterate the result to parse them."""
    if not paths:
        raise SourceError("no pages given")
    sources = [_open(p) for p in paths]
    urls: dict[str, list[str]] = {}
    for source in sources:
        for site, url in source.sites():
            urls.setdefault(site, []).append(url)
    counts = {site: len(site_urls) for site, site_urls in urls.items()}
    cap = max_pages if max_pages and max_pages > 0 else None
    expected = {s: min(n, cap) if cap else n for s, n in counts.items() if s and n >= min_pages}
    small = {s: n for s, n in counts.items() if s not in expected}
    chosen = {s: sorted(urls[s])[:cap] for s in expected if cap and counts[s] > cap}
    return SitePages(
        sources=sources,
        expected=expected,
        pages=sum(expected.values()),
        min_pages=min_pages,
        skipped_sites=len(small),
        skipped_pages=sum(small.values()),
        chosen={site: Counter(site_urls) for site, site_urls in chosen.items()},
    )
