"""Titles, publication dates and authors scored against pages whose values are known.

Pages come from LABELS files (JSON lines) and from the demo web (its articles' titles, dates
and authors are in its plans; --no-demo leaves it out). A label line names its page either by
"html" (a path relative to the labels file, with an optional "url") or by "dataset" and "id"
(the page DATA/DATASET/html/ID.html of a `newscrawl evaluate` dataset, its url from that
dataset's meta.jsonl), and gives what the page shows:

    {"dataset": "wcxb_dev", "id": "dev_0054", "title": "...", "date": "2025-12-18",
     "authors": ["Rebecca Edwards"]}

"title" and "date" (YYYY-MM-DD, the page's own day) are null where unknown and then not
scored; "authors" is a list (empty: the page names no author) or null (not scored).

Every system reads the same pages in the same run: newscrawl (the default extractor's title,
`page_metadata`'s date and authors), trafilatura (its metadata, when installed) and htmldate
(dates only; original date, extensive search). Printed per source and overall:

* title exact: the title equals the label (Unicode NFKC, whitespace collapsed);
* date right: the day equals the label's, over pages with a known date;
* authors F1: per page, F1 of the sets of names (case and accents kept, whitespace
  collapsed, compared casefolded) over pages that name authors, averaged;
* author empty: share of those pages for which the system gives no author at all;
* author extra: share of pages that name no author for which the system gives one.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["HELP", "Guess", "Labelled", "add_arguments", "read_labels", "run", "score"]

HELP = "title, date and author accuracy against pages with known values, beside trafilatura"
SYSTEMS = ("newscrawl", "trafilatura", "htmldate")


@dataclass(frozen=True, slots=True)
class Labelled:
    """One page and what it is known to show (None: not known, not scored)."""

    source: str
    name: str
    html: bytes
    url: str | None
    title: str | None
    date: str | None
    authors: tuple[str, ...] | None


@dataclass(slots=True)
class Guess:
    """What one system read from one page (None: the system does not give it)."""

    title: str | None = None
    date: str | None = None
    authors: list[str] | None = None


@dataclass(slots=True)
class Tally:
    """Running counts of one system on one source."""

    titles: int = 0
    titles_right: int = 0
    dates: int = 0
    dates_right: int = 0
    authored: int = 0
    author_f1: float = 0.0
    author_empty: int = 0
    unauthored: int = 0
    author_extra: int = 0
    misses: list[str] = field(default_factory=list)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("labels", nargs="*", type=Path, metavar="LABELS", help="label files")
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        metavar="DIR",
        help="folder of the datasets the "
        "labels name by dataset and id (default: the labels file's folder)",
    )
    parser.add_argument("--no-demo", action="store_true", help="leave the demo web out")
    parser.add_argument("--seed", type=int, default=4, help="demo web seed (default 4)")
    parser.add_argument("--misses", action="store_true", help="print each page a system got wrong")


def _normal(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def _names(authors: list[str] | tuple[str, ...]) -> set[str]:
    return {_normal(a).casefold() for a in authors if _normal(a)}


def _dataset_urls(folder: Path, cache: dict[Path, dict[str, str | None]]) -> dict[str, str | None]:
    if folder not in cache:
        urls: dict[str, str | None] = {}
        meta = folder / "meta.jsonl"
        if meta.is_file():
            for line in meta.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and "id" in record:
                    urls[str(record["id"])] = record.get("url")
        cache[folder] = urls
    return cache[folder]


def read_labels(path: Path, data: Path | None = None) -> Iterator[Labelled]:
    """The labelled pages of one labels file; a line that names no readable page is reported
    on stderr and skipped."""
    cache: dict[Path, dict[str, str | None]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            label = json.loads(line)
            if "html" in label:
                page, url = path.parent / label["html"], label.get("url")
            else:
                folder = (data or path.parent) / label["dataset"]
                page = folder / "html" / f"{label['id']}.html"
                url = label.get("url") or _dataset_urls(folder, cache).get(str(label["id"]))
            html = page.read_bytes()
        except (ValueError, KeyError, TypeError, OSError) as err:
            print(f"{path}:{number}: skipped: {err}", file=sys.stderr)
            continue
        authors = label.get("authors")
        yield Labelled(
            f"{path.parent.name}/{path.stem}",
            str(label.get("html") or label.get("id")),
            html,
            url,
            label.get("title"),
            label.get("date"),
            None if authors is None else tuple(authors),
        )


def demo_pages(seed: int) -> Iterator[Labelled]:
    """The demo web's article pages with their planned title, day and author."""
    from newscrawl.demo.web import build_demo_web

    for site in build_demo_web(seed).sites:
        for path, article in site.articles.items():
            page = site.pages.get(path)
            if page is None:
                continue
            html = page.body.replace(b"{{BASE}}", f"http://{site.name}.test".encode())
            yield Labelled(
                "demo",
                f"{site.name}{path}",
                html,
                f"http://{site.name}.test{path}",
                article.title,
                article.published.date().isoformat(),
                (article.author,),
            )


def newscrawl_guess() -> Callable[[Labelled], Guess]:
    from newscrawl.extractors import DEFAULT_EXTRACTOR, build_extractor
    from newscrawl.extractors.page_metadata import page_metadata
    from newscrawl.extractors.title import page_title
    from newscrawl.html.parse import parse_html

    extractor = build_extractor(DEFAULT_EXTRACTOR)

    def guess(page: Labelled) -> Guess:
        dom = parse_html(page.html, page.url)
        title = extractor.extract(dom).title or page_title(dom)
        found = page_metadata(dom, page.url)
        day = found.published.date().isoformat() if found.published else None
        return Guess(title, day, list(found.authors))

    return guess


def trafilatura_guess() -> Callable[[Labelled], Guess] | None:
    try:
        from trafilatura import bare_extraction
    except ImportError:
        return None

    def guess(page: Labelled) -> Guess:
        doc = bare_extraction(
            page.html.decode("utf-8", "replace"), url=page.url, with_metadata=True
        )
        fields: dict[str, Any] = {}
        if doc is not None:
            fields = doc if isinstance(doc, dict) else doc.as_dict()
        authors = [a.strip() for a in str(fields.get("author") or "").split(";") if a.strip()]
        return Guess(str(fields.get("title") or ""), fields.get("date"), authors)

    return guess


def htmldate_guess() -> Callable[[Labelled], Guess] | None:
    try:
        from htmldate import find_date
    except ImportError:
        return None

    def guess(page: Labelled) -> Guess:
        html = page.html.decode("utf-8", "replace")
        return Guess(date=find_date(html, url=page.url, original_date=True))

    return guess


def score(tally: Tally, page: Labelled, guess: Guess) -> None:
    """Add one page's guess to the tally (a title or authors the system never gives, None, are
    not scored; a date always is)."""
    if page.title is not None and guess.title is not None:
        tally.titles += 1
        if _normal(guess.title) == _normal(page.title):
            tally.titles_right += 1
        else:
            tally.misses.append(f"{page.name}: title {guess.title!r} != {page.title!r}")
    if page.date is not None:
        tally.dates += 1
        if (guess.date or "")[:10] == page.date:
            tally.dates_right += 1
        else:
            tally.misses.append(f"{page.name}: date {guess.date} != {page.date}")
    if page.authors is not None and guess.authors is not None:
        _score_authors(tally, page, guess.authors)


def _score_authors(tally: Tally, page: Labelled, authors: list[str]) -> None:
    expected, found = _names(page.authors or ()), _names(authors)
    if not expected:
        tally.unauthored += 1
        tally.author_extra += bool(found)
        if found:
            tally.misses.append(f"{page.name}: authors {sorted(found)} where none")
        return
    tally.authored += 1
    tally.author_empty += not found
    common = len(expected & found)
    if common:
        precision, recall = common / len(found), common / len(expected)
        tally.author_f1 += 2 * precision * recall / (precision + recall)
    if expected != found:
        tally.misses.append(f"{page.name}: authors {sorted(found)} != {sorted(expected)}")


def _share(part: float, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    - "


def _row(source: str, system: str, t: Tally) -> str:
    f1 = f"{t.author_f1 / t.authored:.3f}" if t.authored else "  -  "
    return (
        f"{source:<22} {system:<12} {_share(t.titles_right, t.titles):>8} {t.titles:>5}"
        f" {_share(t.dates_right, t.dates):>8} {t.dates:>5} {f1:>8} {t.authored:>5}"
        f" {_share(t.author_empty, t.authored):>8} {_share(t.author_extra, t.unauthored):>8}"
    )


def _merged(tallies: list[Tally]) -> Tally:
    total = Tally()
    for t in tallies:
        for name in (
            "titles",
            "titles_right",
            "dates",
            "dates_right",
            "authored",
            "author_f1",
            "author_empty",
            "unauthored",
            "author_extra",
        ):
            setattr(total, name, getattr(total, name) + getattr(t, name))
    return total


def _systems() -> dict[str, Callable[[Labelled], Guess]]:
    systems: dict[str, Callable[[Labelled], Guess]] = {"newscrawl": newscrawl_guess()}
    for name, make in (("trafilatura", trafilatura_guess), ("htmldate", htmldate_guess)):
        if (made := make()) is not None:
            systems[name] = made
        else:
            print(f"{name} is not installed: left out", file=sys.stderr)
    return systems


def _pages(args: argparse.Namespace) -> Iterator[Labelled]:
    if not args.no_demo:
        yield from demo_pages(args.seed)
    for labels in args.labels:
        yield from read_labels(labels, args.data)


def run(args: argparse.Namespace) -> int:
    for labels in args.labels:
        if not labels.is_file():
            print(f"newscrawl bench metadata: no labels file {labels}", file=sys.stderr)
            return 2
    systems = _systems()
    tallies: dict[tuple[str, str], Tally] = {}
    for page in _pages(args):
        for name, guess in systems.items():
            try:
                found = guess(page)
            except Exception as err:  # one system failing on a page scores as no answer
                print(f"{name} failed on {page.name}: {err}", file=sys.stderr)
                found = Guess(None if name == "htmldate" else "", None, [])
            score(tallies.setdefault((page.source, name), Tally()), page, found)
    if not tallies:
        print("no labelled pages", file=sys.stderr)
        return 1
    print(
        f"{'source':<22} {'system':<12} {'title ok':>8} {'n':>5} {'date ok':>8} {'n':>5}"
        f" {'auth F1':>8} {'n':>5} {'no auth':>8} {'extra':>8}"
    )
    sources = sorted({source for source, _ in tallies}, key=lambda s: (s != "demo", s))
    for source in [*sources, "all"]:
        for name in systems:
            parts = [t for (s, n), t in tallies.items() if n == name and source in (s, "all")]
            print(_row(source, name, _merged(parts)))
    if args.misses:
        for (source, name), tally in sorted(tallies.items()):
            for miss in tally.misses:
                print(f"miss {name} {source} {miss}")
    return 0
