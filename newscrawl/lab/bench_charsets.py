"""Charset detection on pages served in a legacy charset without saying so.

Each page of DATASET (its html/ files, or a folder of pages) is decoded, its charset
declarations (`<meta charset>` and `http-equiv` content types) are taken out, and it is written
in each codec of --codecs, characters the codec lacks as numeric character references, as a
server that sends no charset would serve it. `decode_page` (what the crawl, `extract` and
`evaluate` use) must give back the text the codec gives. Pages that are ASCII in a codec are
left out for that codec: there is nothing to detect. Prints, per codec, the pages tried, how
many were read back exactly, how many to within 1% of their characters (a charset that
differs in a few letters: ISO-8859-7 read as windows-1253 turns its capital alpha with tonos
into a pilcrow), and what the others were taken for.

Pick pages whose language the codec is for (windows-1253 for Greek pages, and so on): a
folder of Russian pages written in windows-1253 is all references and says nothing.
"""

from __future__ import annotations

import argparse
import codecs
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

__all__ = ["HELP", "add_arguments", "run"]

HELP = "how often undeclared legacy charsets (windows-1253, KOI8-R, GBK, ...) are detected"
_DEFAULT_CODECS = "cp1250,iso-8859-2,cp1251,koi8-r,cp1253,iso-8859-7,gbk,big5,shift_jis,cp1252"
_DECLARATION = re.compile(r"<meta[^>]*charset[^>]*>", re.IGNORECASE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", type=Path, metavar="DATASET", help="dataset or page folder")
    parser.add_argument(
        "--codecs",
        default=_DEFAULT_CODECS,
        metavar="A,B",
        help=f"codecs to serve the pages in (default: {_DEFAULT_CODECS})",
    )
    parser.add_argument(
        "--where",
        metavar="FIELD=VALUE",
        help="only the pages whose meta.jsonl line has FIELD equal to VALUE (e.g. language=Greek)",
    )
    parser.add_argument("-n", "--limit", type=int, default=None, metavar="N", help="first N pages")
    parser.add_argument(
        "--urls",
        action="store_true",
        help="decode each page with its meta.jsonl url, as a crawl knows it (the country "
        "domain tells the language of a page without a lang attribute)",
    )


def _records(folder: Path, where: str | None, urls: bool) -> dict[str, dict[str, Any]]:
    """The meta.jsonl records, read once for --where and --urls ({} when neither asks, or
    for --urls alone without a meta.jsonl)."""
    from newscrawl.gold.dataset import read_meta

    if not (where or urls) or not (folder / "meta.jsonl").is_file():
        return {}
    records, bad = read_meta(folder / "meta.jsonl")
    if bad and where:  # a filter over records that could not be read would drop pages silently
        raise ValueError(f"{bad} line(s) that are not page records")
    return records


def _pages(
    folder: Path, where: str | None, limit: int | None, records: dict[str, dict[str, Any]]
) -> list[Path]:
    from newscrawl.gold.pagefiles import dataset_pages

    files = [Path(p) for p in dataset_pages(folder)]
    if where:
        field, _, value = where.partition("=")
        chosen = {key for key, record in records.items() if str(record.get(field)) == value}
        files = [p for p in files if p.stem in chosen]
    return files[:limit]


def _served(page: str, codec: str) -> bytes:
    """`page` without its charset declarations, in `codec` (references for what it lacks)."""
    return _DECLARATION.sub("", page).encode(codec, "xmlcharrefreplace")


def _known(name: str) -> bool:
    try:
        codecs.lookup(name)
    except LookupError:
        return False
    return True


def _agreement(text: str, truth: str) -> float:
    """Share of `truth`'s characters that `text` has at the same place (single-byte codecs
    keep one character per byte, so places line up)."""
    if len(text) != len(truth):
        return 0.0
    return sum(map(str.__eq__, text, truth)) / max(len(truth), 1)


def _problem(args: argparse.Namespace, names: list[str]) -> str | None:
    """What makes the command line unusable, or None."""
    unknown = [name for name in names if not _known(name)]
    if unknown:
        return f"unknown codecs: {', '.join(unknown)}"
    if not args.dataset.is_dir():
        return f"{args.dataset}: not a folder"
    if args.where and "=" not in args.where:
        return "--where takes FIELD=VALUE"
    if args.where and not (args.dataset / "meta.jsonl").is_file():
        return f"--where needs {args.dataset / 'meta.jsonl'}"
    return None


def _codec_row(
    texts: list[str], codec: str, urls: list[str | None]
) -> tuple[int, int, int, Counter[str]]:
    """Pages tried, read back exactly, read back to within 1%, and what the rest were taken
    for, with `texts` served in `codec` from `urls` (None: not known)."""
    from newscrawl.html.decoding import NotHtmlError, decode_page

    tried = right = close = 0
    wrong: Counter[str] = Counter()
    for text, url in zip(texts, urls, strict=True):
        data = _served(text, codec)
        if data.isascii():
            continue
        tried += 1
        try:
            decoded = decode_page(data, url=url)
        except NotHtmlError:
            wrong["refused"] += 1
            continue
        truth = data.decode(codec)
        right += decoded.text == truth
        if _agreement(decoded.text, truth) >= 0.99:
            close += 1
        else:
            wrong[decoded.encoding] += 1
    return tried, right, close, wrong


def run(args: argparse.Namespace) -> int:
    from newscrawl.html.decoding import NotHtmlError, decode_page

    names = [c.strip() for c in args.codecs.split(",") if c.strip()]
    problem = _problem(args, names)
    if problem is None:
        try:
            records = _records(args.dataset, args.where, args.urls)
            pages = _pages(args.dataset, args.where, args.limit, records)
        except (ValueError, OSError) as err:  # a meta.jsonl line that is not JSON, unreadable
            problem = f"{args.dataset / 'meta.jsonl'}: {err}"
    if problem is None and not pages:
        chosen = f" with {args.where} in meta.jsonl" if args.where else ""
        problem = f"{args.dataset}: no pages{chosen} (nothing to measure)"
    if problem is not None:
        print(f"bench charsets: {problem}", file=sys.stderr)
        return 2
    known = {key: str(r["url"]) for key, r in records.items() if r.get("url")} if args.urls else {}
    texts, urls = [], []
    for path in pages:
        url = known.get(path.stem)
        try:  # the stored page read as the crawl reads it: with its URL where it is known
            texts.append(decode_page(path.read_bytes(), url=url).text)
        except NotHtmlError:
            continue
        urls.append(url)
    chosen = f" where {args.where}" if args.where else ""
    with_urls = f", {sum(u is not None for u in urls)} with their URLs" if args.urls else ""
    print(
        f"bench charsets: {args.dataset}{chosen} - {len(texts)} pages{with_urls},"
        " declarations taken out"
    )
    print(f"{'codec':<12} {'pages':>6} {'read back':>10} {'within 1%':>10}  taken for")
    for codec in names:
        tried, right, close, wrong = _codec_row(texts, codec, urls)
        others = ", ".join(f"{name} {count}" for name, count in wrong.most_common(4))
        print(f"{codec:<12} {tried:>6} {right:>10} {close:>10}  {others}")
    return 0
