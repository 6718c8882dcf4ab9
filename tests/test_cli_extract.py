"""`newscrawl extract`: inputs, formats, errors, the process pool, and the real command line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from newscrawl import extractors
from newscrawl.cli import main
from newscrawl.extractors import DEFAULT_EXTRACTOR, Extraction
from newscrawl.extractors.blockmodel.pagetype import PAGE_TYPES
from newscrawl.html.dom import Dom


class Paragraphs:
    """A throwaway extractor for these tests: the text of every <p>, in order."""

    name: ClassVar[str] = "paras"

    def extract(self, dom: Dom) -> Extraction:
        ids = tuple(i for i, tag in enumerate(dom.tag) if tag == "p")
        text = "\n".join(dom.text(i) for i in ids)
        if "explode" in text:
            raise RuntimeError("asked to explode")
        return Extraction(title=dom.title, text=text, node_ids=ids, extractor=self.name)


@pytest.fixture(autouse=True)
def paras(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extractors.EXTRACTORS, "paras", f"{__name__}:Paragraphs")


def page(title: str, *paragraphs: str) -> bytes:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f"<html><head><title>{title}</title></head><body><div>Menu Home</div>{body}</body></html>"
    ).encode()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["extract", "--extractor", "paras", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_one_file_as_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "a.html", page("Headline", "First paragraph.", "Second one."))
    code, out, err = run_cli(capsys, str(path))
    assert code == 0
    assert out == "Headline\n\nFirst paragraph.\nSecond one.\n"
    assert err == ""


def test_directory_is_searched_recursively_for_pages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "site" / "b.htm", page("B", "bee"))
    write(tmp_path / "site" / "deep" / "c.HTML", page("C", "sea"))
    write(tmp_path / "site" / "a.html", page("A", "ay"))
    write(tmp_path / "site" / "notes.txt", b"not a page")
    write(tmp_path / "site" / ".hidden" / "x.html", page("X", "hidden"))
    code, out, _ = run_cli(capsys, str(tmp_path / "site"))
    assert code == 0
    site = tmp_path / "site"
    assert out == (
        f"==> {site / 'a.html'} <==\nA\n\nay\n\n"
        f"==> {site / 'b.htm'} <==\nB\n\nbee\n\n"
        f"==> {site / 'deep' / 'c.HTML'} <==\nC\n\nsea\n"
    )


def test_linked_folders_are_followed_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "store" / "2024" / "a.html", page("A", "ay"))
    write(tmp_path / "corpus" / "b.html", page("B", "bee"))
    (tmp_path / "corpus" / "old").symlink_to(tmp_path / "store")  # a part linked in
    (tmp_path / "store" / "2024" / "up").symlink_to(tmp_path / "store")  # a loop
    code, out, _ = run_cli(capsys, "--format", "jsonl", str(tmp_path / "corpus"))
    assert code == 0
    titles = [json.loads(line)["title"] for line in out.splitlines()]
    assert titles == ["B", "A"]  # the linked folder read, the loop not followed round


def test_a_link_to_nothing_in_a_folder_is_said_not_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "site" / "a.html", page("A", "ay"))
    (tmp_path / "site" / "gone.html").symlink_to(tmp_path / "nowhere.html")
    (tmp_path / "site" / "notes.txt").symlink_to(tmp_path / "nowhere.txt")  # not a page: quiet
    code, out, err = run_cli(capsys, str(tmp_path / "site"))
    assert out == "A\n\nay\n"  # the page that is there
    assert (
        err.strip()
        == f"newscrawl extract: {tmp_path / 'site' / 'gone.html'}: a broken symbolic link"
    )
    assert code == 1  # not every page could be read


def test_a_newline_in_a_file_name_cannot_break_the_text_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "site" / "a\n==> forged <==.html", page("A", "ay"))
    write(tmp_path / "site" / "b.html", page("B", "bee"))
    code, out, _ = run_cli(capsys, str(tmp_path / "site"))
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("==> ")]
    assert headers == [
        f"==> {tmp_path / 'site'}/a\\n==> forged <==.html <==",
        f"==> {tmp_path / 'site' / 'b.html'} <==",
    ]
    code, out, _ = run_cli(capsys, "--format", "jsonl", str(tmp_path / "site"))
    assert json.loads(out.splitlines()[0])["path"].endswith("a\n==> forged <==.html")


def test_directory_without_html_files_reads_all_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "dump" / "page10", page("Ten", "ten"))
    write(tmp_path / "dump" / "page9", page("Nine", "nine"))
    code, out, _ = run_cli(capsys, "--format", "jsonl", str(tmp_path / "dump"))
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["title"] for r in records] == ["Nine", "Ten"]  # natural order: 9 before 10


def test_jsonl_records_and_bad_pages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.html", page("Good", "Fine text."))
    binary = write(tmp_path / "binary.html", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    empty = write(tmp_path / "empty.html", b"")
    raising = write(tmp_path / "raising.html", page("Bad", "please explode"))
    code, out, err = run_cli(
        capsys, "-f", "jsonl", str(good), str(binary), str(empty), str(raising)
    )
    assert code == 0  # some pages were extracted
    records = [json.loads(line) for line in out.splitlines()]
    assert records[0] == {
        "path": str(good),
        "title": "Good",
        "text": "Fine text.",
        "extractor": "paras",
        "page_type": None,  # an extractor that cannot tell the page's kind says so
    }
    assert [r["path"] for r in records] == [str(good), str(binary), str(empty), str(raising)]
    assert [("error" in r) for r in records] == [False, True, True, True]
    assert "binary" in records[1]["error"]
    assert "empty" in records[2]["error"]
    assert records[3]["error"] == "extractor failed: RuntimeError: asked to explode"
    lines = err.splitlines()
    assert len(lines) == 3  # one clear line per bad page, no traceback
    assert (
        lines[2]
        == f"newscrawl extract: {raising}: extractor failed: RuntimeError: asked to explode"
    )
    assert "Traceback" not in err


def test_exit_status_when_nothing_is_extracted_or_a_path_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = write(tmp_path / "b.html", b"\x00\x01\x02 binary")
    code, out, err = run_cli(capsys, str(binary))
    assert (code, out) == (1, "")
    assert "binary" in err
    good = write(tmp_path / "good.html", page("Good", "text"))
    code, out, err = run_cli(capsys, str(tmp_path / "missing.html"), str(good))
    assert code == 1
    assert out == "Good\n\ntext\n"  # the other pages are still extracted
    assert f"{tmp_path / 'missing.html'}: no such file or directory" in err
    code, out, err = run_cli(capsys, str(tmp_path / "nothing-here"))
    assert code == 1


def test_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(page("From stdin", "piped text")))
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, _ = run_cli(capsys, "-f", "jsonl", "-")
    assert code == 0
    assert json.loads(out) == {
        "path": "-",
        "title": "From stdin",
        "text": "piped text",
        "extractor": "paras",
        "page_type": None,  # an extractor that cannot tell the page's kind says so
    }


def test_pool_keeps_input_order_and_matches_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for n in range(40):
        write(tmp_path / "pages" / f"p{n}.html", page(f"Page {n}", f"text of page {n}"))
    write(tmp_path / "pages" / "p7.html", b"%PDF-1.4\x00 broken")
    code, pooled, pooled_err = run_cli(capsys, "-f", "jsonl", "-j", "2", str(tmp_path / "pages"))
    assert code == 0
    code, single, single_err = run_cli(capsys, "-f", "jsonl", "-j", "1", str(tmp_path / "pages"))
    assert code == 0
    assert pooled == single
    assert pooled_err == single_err
    records = [json.loads(line) for line in pooled.splitlines()]
    assert [r["path"] for r in records] == [
        str(tmp_path / "pages" / f"p{n}.html") for n in range(40)
    ]
    assert "error" in records[7]
    assert records[39]["text"] == "text of page 39"


def test_unknown_extractor_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["extract", "--extractor", "no-such-extractor", str(tmp_path)])
    assert exit_info.value.code == 2


def test_real_command_line_with_the_default_extractor(tmp_path: Path) -> None:
    """The installed command in its own process, with a pool and the default extractor."""
    article = " ".join(["The council approved the new library budget on Tuesday evening."] * 12)
    for n in range(12):
        write(tmp_path / "pages" / f"{n}.html", page(f"Story {n}", article, article))
    write(tmp_path / "pages" / "12.html", b"GIF89a\x00\x00")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "newscrawl.cli",
            "extract",
            "-f",
            "jsonl",
            "-j",
            "2",
            str(tmp_path / "pages"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) == 13
    assert {r["extractor"] for r in records} == {DEFAULT_EXTRACTOR}
    assert [r["path"] for r in records] == [
        str(tmp_path / "pages" / f"{n}.html") for n in range(13)
    ]
    assert all("error" not in r and "library budget" in r["text"] for r in records[:12])
    assert all(r["page_type"] in PAGE_TYPES for r in records[:12])  # the page's kind, too
    assert "error" in records[12]
    assert done.stderr.splitlines() == [
        f"newscrawl extract: {records[12]['path']}: {records[12]['error']}"
    ]


class _CappedStdin(io.BytesIO):
    """Standard input that fails like a huge pipe if read without a size."""

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            raise MemoryError("read all of standard input")
        return super().read(size)


def test_stdin_is_read_with_the_file_size_cap(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from newscrawl.html.parse import MAX_PAGE_BYTES

    data = page("Big", "x" * 100) + b" " * MAX_PAGE_BYTES
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(_CappedStdin(data)))
    code, out, err = run_cli(capsys, "-f", "jsonl", "-")
    assert code == 1
    assert json.loads(out)["error"] == "page is over the 16 MiB limit"
    assert err == "newscrawl extract: -: page is over the 16 MiB limit\n"
    small = _CappedStdin(page("Small", "fits"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(small))
    code, out, _ = run_cli(capsys, "-f", "jsonl", "-")
    assert (code, json.loads(out)["text"]) == (0, "fits")


def test_file_over_the_size_cap_names_its_size_in_mebibytes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from newscrawl.html.parse import MAX_PAGE_BYTES

    big = tmp_path / "big.html"
    with big.open("wb") as file:
        file.truncate(MAX_PAGE_BYTES + MAX_PAGE_BYTES // 16)  # sparse: 17 MiB
    code, out, _ = run_cli(capsys, "-f", "jsonl", str(big))
    assert code == 1
    assert json.loads(out)["error"] == "page is 17 MiB, over the 16 MiB limit"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_disk_on_stdout_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<html><body><p>" + "A sentence of the page. " * 4000 + "</p></body></html>")
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "newscrawl.cli", "extract", "-e", "nce", str(page)],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert done.stderr.strip() == "newscrawl extract: cannot write: No space left on device"
