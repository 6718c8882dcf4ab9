"""Reading WARC/ARC files (good and damaged) and writing them, without Scrapy."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from warc_helpers import (
    html_page,
    member_offsets,
    relength,
    relength_member,
    small_captures,
    write_warc,
)

from newscrawl.lab.synthetic_warc import Capture, demo_captures, write_ccnews_warc
from newscrawl.scale.ingest_spider import wanted
from newscrawl.storage.warc_reader import archive_files, read_archive
from newscrawl.storage.warc_records import Problem, Record
from newscrawl.storage.warc_writer import Exchange, WarcFileWriter, recover_open_files

LIMIT = 1 << 20


def read(path: Path, limit: int = LIMIT) -> tuple[list[Record], list[Problem]]:
    """The file's records and problems; FastWARC (where the file is sound) and warcio alone
    must give the same."""
    entries = list(read_archive(path, wanted, limit))
    assert entries == list(read_archive(path, wanted, limit, fast=False))
    records: list[Record] = []
    problems: list[Problem] = []
    for entry in entries:
        (problems if isinstance(entry, Problem) else records).append(entry)
    return records, problems


def pages(records: list[Record]) -> list[str]:
    return [r.head.url for r in records if r.payload is not None]


def test_ccnews_shaped_file_gives_every_record_and_decoded_html(tmp_path: Path) -> None:
    captures = [
        *small_captures(3),
        Capture("https://news.example/gz.html", html_page(10), content_encoding="gzip"),
        Capture("https://news.example/chunked.html", html_page(11), chunked=True),
        Capture(
            "https://news.example/both.html", html_page(12), content_encoding="gzip", chunked=True
        ),
        Capture("https://news.example/logo.png", b"\x89PNG....", "image/png"),
        Capture("https://news.example/gone.html", b"<html>gone</html>", status=404),
    ]
    path = write_warc(tmp_path / "CC-NEWS-20240501000000-00001.warc.gz", captures, revisit_every=2)
    records, problems = read(path)
    assert problems == []
    kinds = [r.head.type for r in records]
    assert kinds.count("warcinfo") == 1
    assert kinds.count("request") == kinds.count("response") == kinds.count("metadata") == 8
    assert kinds.count("revisit") == 4
    by_url = {r.head.url: r for r in records if r.payload is not None}
    assert set(by_url) == {c.url for c in captures[:6]}
    for n, name in ((10, "gz"), (11, "chunked"), (12, "both")):
        assert by_url[f"https://news.example/{name}.html"].payload == html_page(n)
    response = by_url["https://news.example/story/0.html"].head
    assert response.record_id and response.record_id.startswith("<urn:uuid:")
    assert response.date is not None and response.date.year == 2024
    offsets = {url: offset for kind, url, offset in member_offsets(path) if kind == "response"}
    assert response.offset == offsets[response.url]


def test_brotli_and_zstd_bodies_are_decoded(tmp_path: Path) -> None:
    # The crawl asks servers for br and zstd and `--warc` keeps bodies as sent; warcio's br
    # reader fails on Brotli 1.2 and it has no zstd, so both used to be lost on ingest.
    captures = [
        Capture("https://news.example/br.html", html_page(20), content_encoding="br"),
        Capture("https://news.example/zstd.html", html_page(21), content_encoding="zstd"),
        Capture(
            "https://news.example/brc.html", html_page(22), content_encoding="br", chunked=True
        ),
    ]
    path = write_warc(tmp_path / "compressed.warc.gz", captures)
    records, problems = read(path)  # both readers
    assert problems == []
    by_url = {r.head.url: r.payload for r in records if r.payload is not None}
    assert by_url == {c.url: c.body for c in captures}


def test_brotli_and_zstd_bombs_stop_at_the_limit(tmp_path: Path) -> None:
    huge = b"<html><body><p>" + b"x" * 300_000 + b"</p></body></html>"
    captures = [Capture(f"https://news.example/{kind}.html", huge, content_encoding=kind)
                for kind in ("br", "zstd")]  # fmt: skip
    problems = read(write_warc(tmp_path / "bombs.warc.gz", captures), limit=100_000)[1]
    assert [p.kind for p in problems] == ["too_large", "too_large"]


@pytest.mark.parametrize("gzipped", [True, False])
def test_fastwarc_reads_the_sound_stretches_and_warcio_the_damage(
    tmp_path: Path, gzipped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from newscrawl.storage import warc_reader as reader

    heads: list[int] = []
    warcio_head = reader._head
    monkeypatch.setattr(reader, "_head", lambda *a: heads.append(a[1]) or warcio_head(*a))
    name = "f.warc.gz" if gzipped else "f.warc"
    path = write_warc(tmp_path / name, small_captures(30), gzip=gzipped)
    data = bytearray(path.read_bytes())
    records, problems = read(path)
    assert problems == [] and len(pages(records)) == 30
    heads.clear()
    list(read_archive(path, wanted, LIMIT))
    assert heads == [records[-1].head.offset]  # warcio: the last record only
    responses = [o for kind, _, o in member_offsets(path) if kind == "response"]
    at = responses[10]
    data[at + 2 : at + 60] = b"\0" * 58  # damage in the eleventh page's record
    path.write_bytes(bytes(data))
    heads.clear()
    entries = list(read_archive(path, wanted, LIMIT))
    assert [e.kind for e in entries if isinstance(e, Problem)] == ["corrupt"]
    assert len([e for e in entries if isinstance(e, Record) and e.payload]) == 29
    # warcio: from the record before the damage to a few after it, then the last record
    assert len(heads) <= reader._REFERENCE_RECORDS + 1
    assert heads[-1] == records[-1].head.offset and max(heads[:-1]) < responses[13]


def test_plain_whole_gzip_and_arc_files(tmp_path: Path) -> None:
    plain = write_warc(tmp_path / "a.warc", small_captures(3), gzip=False)
    assert len(pages(read(plain)[0])) == 3
    whole = tmp_path / "whole.warc.gz"  # one gzip stream: not per record, but it happens
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    records, problems = read(whole)
    assert problems == [] and len(pages(records)) == 3
    # cut short: every record the kept bytes hold whole is read, and the cut is reported
    ten = write_warc(tmp_path / "ten.warc", small_captures(10), gzip=False)
    packed = gzip.compress(ten.read_bytes())
    cut = tmp_path / "cut.warc.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    held = zlib.decompressobj(31).decompress(packed[: len(packed) // 2])
    records, problems = read(cut)
    whole_pages = [
        url
        for kind, url, offset in member_offsets(ten)
        if kind == "metadata" and offset < len(held)
    ]  # a response is whole when the metadata record after it starts in the kept bytes
    assert pages(records) == whole_pages and len(whole_pages) >= 2
    assert [p.kind for p in problems] == ["truncated"]

    body = html_page(1)
    http = b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + body
    desc = b"1 0 Test\nURL IP-address Archive-date Content-type Archive-length\n"
    head = b"filedesc://a.arc 0.0.0.0 20050614070144 text/plain %d\n%s\n" % (len(desc), desc)
    line = b"http://old.example/a.html 192.0.2.1 20050614070159 text/html %d\n" % len(http)
    (tmp_path / "a.arc").write_bytes(head + line + http + b"\n")
    (tmp_path / "a.arc.gz").write_bytes(gzip.compress(head) + gzip.compress(line + http + b"\n"))
    for name in ("a.arc", "a.arc.gz"):
        records, problems = read(tmp_path / name)
        assert problems == []
        [page] = [r for r in records if r.payload is not None]
        assert page.payload == body and page.head.record_id is None
        assert page.head.date is not None and page.head.date.year == 2005


def test_corrupt_gzip_member_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    path = write_warc(tmp_path / "c.warc.gz", small_captures(6))
    data = path.read_bytes()
    responses = [o for kind, _, o in member_offsets(path) if kind == "response"]
    broken = bytearray(data)
    broken[responses[2] + 40 : responses[2] + 90] = b"\0" * 50
    path.write_bytes(bytes(broken))
    records, problems = read(path)
    assert [p.kind for p in problems] == ["corrupt"]
    assert problems[0].offset == responses[2]
    assert len(pages(records)) == 5  # every other page is still read


def test_declared_length_that_lies_either_way(tmp_path: Path) -> None:
    path = write_warc(tmp_path / "l.warc.gz", small_captures(6))
    data = path.read_bytes()
    found = member_offsets(path)
    bounds = [o for _, _, o in found] + [len(data)]
    member = {url: (o, bounds[i + 1]) for i, (kind, url, o) in enumerate(found)
              if kind == "response"}  # fmt: skip
    data = relength_member(data, *member["https://news.example/story/3.html"], +5000)
    data = relength_member(data, *member["https://news.example/story/1.html"], -40)
    path.write_bytes(data)
    records, problems = read(path)
    assert sorted(p.kind for p in problems) == ["bad_length", "truncated"]
    assert len(pages(records)) == 4

    plain = write_warc(tmp_path / "l.warc", small_captures(6), gzip=False)
    text = plain.read_bytes()
    response = text.index(b"WARC-Type: response", text.index(b"story/2.html"))  # story 3
    at = text.rindex(b"WARC/1.0", 0, response)
    plain.write_bytes(text[:at] + relength(text[at:], +500))
    records, problems = read(plain)
    assert [p.kind for p in problems] == ["bad_length"]
    assert pages(records) == [f"https://news.example/story/{i}.html" for i in (0, 1, 2, 4, 5)]


def lie_past_the_end(tmp_path: Path) -> tuple[Path, int]:
    """A plain WARC of 12 pages (with revisit, image and metadata records) whose 10th response
    (story 9) declares 200,000 bytes more than it has, past the end of the file; and that
    record's offset."""
    captures = [
        *small_captures(12),
        Capture("https://news.example/logo.png", b"\x89PNG....", "image/png"),
    ]
    path = write_warc(tmp_path / "lie_eof.warc", captures, gzip=False, revisit_every=3)
    text = path.read_bytes()
    response = text.index(b"WARC-Type: response", text.index(b"story/9.html") - 200)
    at = text.rindex(b"WARC/1.0", 0, response)
    assert text.index(b"story/9.html", at) < text.index(b"WARC/1.0", at + 1)  # story 9's own
    path.write_bytes(text[:at] + relength(text[at:], +200_000))
    assert at + 200_000 > len(text)
    return path, at


def test_a_plain_record_whose_length_runs_past_the_end_loses_no_other_record(
    tmp_path: Path,
) -> None:
    # It used to swallow every record after it and end the file as "truncated ... cut short":
    # 9 of 12 pages were read.
    path, at = lie_past_the_end(tmp_path)
    records, problems = read(path)
    assert [(p.kind, p.offset) for p in problems] == [("bad_length", at)]
    assert "story/9.html" in problems[0].detail
    assert pages(records) == [f"https://news.example/story/{i}.html" for i in range(12) if i != 9]
    kinds = [r.head.type for r in records]
    assert kinds.count("revisit") == 4 and kinds.count("metadata") == 13

    # cut short by the end of the file with nothing after it, it is still a truncated tail
    cut = tmp_path / "cut.warc"
    cut.write_bytes(path.read_bytes()[: at + 300])
    records, problems = read(cut)
    assert [(p.kind, p.offset) for p in problems] == [("truncated", at)]
    assert len(pages(records)) == 9


def test_truncated_file_keeps_every_complete_record(tmp_path: Path) -> None:
    path = write_warc(tmp_path / "t.warc.gz", small_captures(6))
    data = path.read_bytes()
    last = [o for kind, _, o in member_offsets(path) if kind == "response"][-1]
    path.write_bytes(data[: last + 200])
    records, problems = read(path)
    assert len(pages(records)) == 5
    assert [p.kind for p in problems] == ["truncated"]


def plain_file_with(tmp_path: Path, name: str, before: int, filler: bytes) -> tuple[Path, int]:
    """A plain WARC of 4 pages with `filler` inserted before its `before`-th response record
    (0: at the start of the file); and where the filler starts."""
    path = write_warc(tmp_path / name, small_captures(4), gzip=False)
    data = path.read_bytes()
    responses = [o for kind, _, o in member_offsets(path) if kind == "response"]
    at = responses[before - 1] if before else 0
    path.write_bytes(data[:at] + filler + data[at:])
    return path, at


ALL_PAGES = [f"https://news.example/story/{i}.html" for i in range(4)]


@pytest.mark.parametrize("hole", [50_000, 3 << 20])  # under and over the header line limit
def test_a_hole_of_nul_bytes_in_a_plain_file_loses_no_record(tmp_path: Path, hole: int) -> None:
    # The record after the hole was lost ("WARC/1.0" not at the start of a line was no record
    # boundary), and a long hole was read as one line, in time quadratic in its length.
    path, at = plain_file_with(tmp_path, "hole.warc", 2, b"\0" * hole)
    records, problems = read(path)
    assert pages(records) == ALL_PAGES
    assert [(p.kind, p.offset) for p in problems] == [("corrupt", at)]
    assert problems[0].detail == (
        f"NUL bytes where a record should start; {hole} bytes skipped to the next record"
    )
    assert [r.head.type for r in records].count("metadata") == 4  # the record before it too


@pytest.mark.parametrize(
    "junk",
    [
        b"WARC/1.0 " + b"x" * (3 << 20),  # a version line that never ends
        b"WARC/1.0\r\nWARC-Type: response\r\nX-Note: " + b"x" * (3 << 20),  # a header line
    ],
    ids=["version-line", "header-line"],
)
def test_a_header_line_over_the_limit_is_damage_read_past(tmp_path: Path, junk: bytes) -> None:
    # The second used to be read as a response without a URL and reported as the raw text
    # "AttributeError: 'NoneType' object has no attribute 'startswith'"; the first swallowed
    # the record after it; both in time quadratic in the line's length.
    path, _ = plain_file_with(tmp_path, "line.warc", 0, junk)
    records, problems = read(path)
    assert pages(records) == ALL_PAGES
    assert records[0].head.type == "warcinfo"
    assert [(p.kind, p.offset) for p in problems] == [("corrupt", 0)]
    expected = f"a header line longer than 1 MiB; {len(junk)} bytes skipped to the next record"
    assert problems[0].detail == expected


def test_damage_is_described_in_words(tmp_path: Path) -> None:
    # A response without a URL was reported as "AttributeError: 'NoneType' object has no
    # attribute 'startswith'" by warcio; FastWARC reads it as a record, as warcio now does.
    header = b"WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 5\r\n\r\nhello\r\n\r\n"
    path, _ = plain_file_with(tmp_path, "nouri.warc", 0, header)
    records, problems = read(path)
    assert pages(records) == ALL_PAGES and problems == []
    assert (records[0].head.type, records[0].head.url, records[0].head.length) == (
        "response",
        "",
        5,
    )
    garbage = b"\x00\x01 not a header \xff\r\n\r\n"
    path, at = plain_file_with(tmp_path, "garbage.warc", 3, garbage)
    records, problems = read(path)
    assert pages(records) == ALL_PAGES
    assert [(p.kind, p.offset) for p in problems] == [("corrupt", at)]
    assert problems[0].detail == (
        f"no record header where a record should start; {len(garbage)} bytes skipped to the"
        " next record"
    )


@pytest.mark.slow
def test_bench_warc_damage_reads_every_record_past_the_damage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from newscrawl.cli import main

    assert main(["bench", "warc-damage", "--sizes", "2", "--repeat", "1"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == {"base", "sound-2", "hole-2", "line-2"}
    for kind in ("hole-2", "line-2"):  # every record of the base file, and the damage
        assert rows[kind][2:4] == [rows["base"][2], "1"], rows
        assert float(rows[kind][6]) > 0  # seconds beside the sound file of the same size


def test_not_a_warc_and_an_enormous_record(tmp_path: Path) -> None:
    text = tmp_path / "notes.warc.gz"
    text.write_bytes(gzip.compress(b"hello, this is not an archive\n" * 50))
    assert [p.kind for p in read(text)[1]] == ["not_warc"]
    html = tmp_path / "page.warc"
    html.write_bytes(b"<html><body>a page saved by hand</body></html>")
    assert [p.kind for p in read(html)[1]] == ["not_warc"]

    huge = b"<html><body>" + b"<p>" + b"x" * 300_000 + b"</p></body></html>"
    captures = [*small_captures(2), Capture("https://news.example/huge.html", huge),
                Capture("https://news.example/bomb.html", huge, content_encoding="gzip"),
                *small_captures(2, "other.example")]  # fmt: skip
    path = write_warc(tmp_path / "big.warc.gz", captures)
    records, problems = read(path, limit=100_000)
    assert [p.kind for p in problems] == ["too_large", "too_large"]
    assert len(pages(records)) == 4


def test_archive_files_walks_folders_and_skips_hidden(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/x.warc.gz", "a/b/y.arc", "a/.z.warc.gz.open", "a/readme.txt", "a/w.warc"):
        (tmp_path / name).write_bytes(b"")
    found = archive_files([tmp_path / "a", tmp_path / "a" / "w.warc"])
    assert [p.relative_to(tmp_path).as_posix() for p in found] == [
        "a/b/y.arc",
        "a/w.warc",
        "a/x.warc.gz",
    ]


def _exchange(n: int) -> Exchange:
    return Exchange(
        url=f"https://news.example/{n}.html",
        method="GET",
        request_headers=[("User-Agent", "newscrawl-test")],
        request_body=b"",
        status=200,
        response_headers=[("Content-Type", "text/html")],
        body=html_page(n, 400),
        ip_address="192.0.2.7",
    )


def test_writer_rotates_files_each_opening_with_warcinfo(tmp_path: Path) -> None:
    writer = WarcFileWriter(tmp_path, "newscrawl-t", {"software": "newscrawl", "x": [1]}, 4000)
    written = [writer.write(_exchange(n)) for n in range(5)]
    files = writer.close()
    assert len(files) >= 2 and all(f.name.endswith(".warc.gz") for f in files)
    assert not list(tmp_path.glob(".*"))
    for path in files:
        records, problems = read(path)
        assert problems == [] and records[0].head.type == "warcinfo"
    first = {r.head.url: r for r in read(files[0])[0] if r.payload is not None}
    assert first[written[0].file and _exchange(0).url].head.offset == written[0].offset
    assert first[_exchange(0).url].head.record_id == written[0].record_id
    assert first[_exchange(0).url].payload == _exchange(0).body


def test_a_killed_writers_file_is_cut_to_its_last_record_and_named(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from newscrawl.storage.warc_writer import WarcFileWriter, Exchange\n"
        "w = WarcFileWriter(sys.argv[1], 'newscrawl-k', {'software': 'newscrawl'})\n"
        "for n in range(3):\n"
        "    w.write(Exchange(f'https://k.example/{n}', 'GET', [], b'', 200,"
        " [('Content-Type', 'text/html')], b'<html>' + b'k' * 5000 + b'</html>'))\n"
        "w._fh.write(b'\\x1f\\x8b\\x08\\x00 torn record'); w._fh.flush()\n"
        "os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=False)
    [left] = list(tmp_path.glob(".*.open"))
    assert recover_open_files(tmp_path) and not left.exists()
    [final] = list(tmp_path.glob("newscrawl-k-*.warc.gz"))
    records, problems = read(final)
    assert problems == [] and len(pages(records)) == 3


@pytest.mark.parametrize("copies", [1])
def test_demo_captures_cover_the_demo_web(tmp_path: Path, copies: int) -> None:
    path = tmp_path / "demo.warc.gz"
    write_ccnews_warc(path, demo_captures(copies=copies, html_only=True))
    records, problems = read(path)
    assert problems == [] and len(pages(records)) > 200
    assert os.path.getsize(path) > 100_000
