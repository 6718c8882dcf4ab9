"""Reading a site list: the start URLs of a crawl, one site each.

Accepted forms:

* a text file, one start URL per line (``#`` starts a comment; a bare host means https);
* a CSV file with a header naming a ``url`` column and, optionally, ``name`` (the site's name
  in the output) and ``max_pages`` (a per-site page cap);
* a comma- or whitespace-separated string of URLs (what ``-a sites=...`` and the command line
  pass when no such file exists).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from newscrawl.html.urls import SiteScope, canonical_url

__all__ = ["SiteListError", "SiteSpec", "parse_sites", "read_sites"]

_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


class SiteListError(ValueError):
    """A site list that cannot be used, with the line at fault."""


@dataclass(frozen=True, slots=True)
class SiteSpec:
    """One site to crawl: its output name, start URL, scope and optional own page cap."""

    name: str
    url: str
    max_pages: int | None = None

    @property
    def scope(self) -> SiteScope:
        return SiteScope.of(self.url)


def _start_url(raw: str, where: str) -> str:
    raw = raw.strip()
    if "://" not in raw:
        raw = "https://" + raw
    parts = urlsplit(raw)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SiteListError(f"{where}: not an http(s) URL: {raw!r}")
    return canonical_url(raw)


def _safe_name(name: str, where: str) -> str:
    safe = _SAFE_NAME.sub("-", name.strip()).strip("-.")
    if not safe:
        raise SiteListError(f"{where}: empty site name")
    return safe


def _from_csv(text: str, source: str) -> list[SiteSpec]:
    reader = csv.DictReader(io.StringIO(text))
    fields = {(f or "").strip().lower(): f for f in reader.fieldnames or []}
    if "url" not in fields:
        raise SiteListError(f"{source}: CSV site list needs a 'url' column")
    specs = []
    for number, row in enumerate(reader, start=2):
        where = f"{source}:{number}"
        raw = (row.get(fields["url"]) or "").strip()
        if not raw or raw.startswith("#"):
            continue
        url = _start_url(raw, where)
        name = (row.get(fields.get("name", ""), "") or "").strip() if "name" in fields else ""
        cap_text = (row.get(fields["max_pages"]) or "").strip() if "max_pages" in fields else ""
        try:
            cap = int(cap_text) if cap_text else None
        except ValueError:
            raise SiteListError(f"{where}: max_pages is not a number: {cap_text!r}") from None
        if cap is not None and cap < 0:
            raise SiteListError(f"{where}: max_pages must be 0 (no cap) or more, not {cap}")
        specs.append(
            SiteSpec(_safe_name(name, where) if name else SiteScope.of(url).name, url, cap)
        )
    return specs


def _from_lines(text: str, source: str) -> list[SiteSpec]:
    specs = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = re.split(r"\s#", line, maxsplit=1)[0].strip()  # "url  # comment"
        if not line or line.startswith("#"):
            continue
        url = _start_url(line.split()[0], f"{source}:{number}")
        specs.append(SiteSpec(SiteScope.of(url).name, url))
    return specs


def _unique(specs: list[SiteSpec], source: str) -> list[SiteSpec]:
    """Drop repeated start URLs; refuse two different sites under one name."""
    by_name: dict[str, SiteSpec] = {}
    for spec in specs:
        known = by_name.get(spec.name)
        if known is None:
            by_name[spec.name] = spec
        elif known.url != spec.url and known.scope != spec.scope:
            raise SiteListError(f"{source}: two sites named {spec.name!r}: {known.url}, {spec.url}")
    return list(by_name.values())


_CSV_COLUMNS = frozenset({"url", "name", "max_pages"})


def parse_sites(text: str, source: str = "<sites>") -> list[SiteSpec]:
    """Sites from the text of a site list (CSV when its first line names a url column)."""
    first = next((ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")), "")
    # a header line, not a list of URLs; a one-column CSV's header is one of its column names
    header = first.strip().strip('"').strip().lower()
    is_csv = ("," in first and "://" not in first) or header in _CSV_COLUMNS
    specs = _from_csv(text, source) if is_csv else _from_lines(text, source)
    return _unique(specs, source)


def read_sites(value: str | Path) -> list[SiteSpec]:
    """Sites from a site-list file, or from a comma/space-separated string of URLs."""
    path = Path(value)
    if path.is_file():
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as err:
            raise SiteListError(f"{path}: not UTF-8 text ({err.reason})") from None
        specs = parse_sites(text, str(path))
    else:
        text = str(value)
        if "://" not in text and ("/" in text or text.endswith((".txt", ".csv"))):
            raise SiteListError(f"no such site-list file: {value}")
        specs = parse_sites("\n".join(re.split(r"[,\s]+", text.strip())), "<arguments>")
    if not specs:
        raise SiteListError(f"{value}: no sites in the list")
    return specs
