"""`newscrawl ingest` runs against each other and against signals: one run at a time per output
folder (the crawl's lock), files written under names of their process's own, a run stopped by
SIGTERM that says so, and no staging folder left behind."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from warc_helpers import small_captures, write_warc

from newscrawl.crawl.lock import LOCK_BUSY_EXIT, DirLock
from newscrawl.lab.synthetic_warc import demo_captures, write_ccnews_warc
from newscrawl.scale.ingest_outputs import FileReport, marker_path, read_marker, write_marker

ROOT = Path(__file__).resolve().parents[1]


def ingest_command(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "newscrawl.cli", "ingest", *map(str, args)]


def ingest(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ingest_command(*args), capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def test_an_ingest_into_a_folder_another_run_holds_exits_75_having_done_nothing(
    tmp_path: Path,
) -> None:
    # Two ingests into one folder used to run at once: one crashed renaming the other's marker
    # and the other removed its rows as "an interrupted ingest".
    archive = write_warc(tmp_path / "a.warc.gz", small_captures(3))
    out = tmp_path / "out"
    with DirLock(out):
        done = ingest(archive, "--out", out, "--json", tmp_path / "summary.json")
    assert done.returncode == LOCK_BUSY_EXIT
    [line] = done.stderr.strip().splitlines()
    assert line.startswith("ingest: ") and "is locked by another run" in line
    assert "this run does nothing" in line and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert sorted(p.name for p in out.iterdir()) == [".newscrawl"]  # only the lock's folder
    assert not (tmp_path / "summary.json").exists()


def _write_markers(out: Path) -> None:
    for _ in range(200):
        write_marker(out, "ingest", FileReport(file="f1.warc", slug="f1-abc"))


def test_processes_writing_one_marker_at_once_never_collide(tmp_path: Path) -> None:
    # The temporary file had one fixed name: a process renamed another's away under it
    # (FileNotFoundError on os.replace).
    out = tmp_path / "out"
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_write_markers, args=(out,)) for _ in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    assert [w.exitcode for w in writers] == [0, 0, 0]
    assert read_marker(out, "ingest", "f1-abc") is not None
    assert [p.name for p in marker_path(out, "ingest", "x").parent.iterdir()] == ["f1-abc.json"]


@pytest.mark.slow
def test_an_ingest_leaves_no_staging_folder(tmp_path: Path) -> None:
    archive = write_warc(tmp_path / "a.warc.gz", small_captures(3))
    out = tmp_path / "out"
    done = ingest(archive, "--out", out, "-q")
    assert done.returncode == 0, done.stderr
    assert not (out / "_staging").exists()
    assert (out / "articles").is_dir()


@pytest.mark.slow
def test_a_quiet_ingest_stopped_by_sigterm_says_so_and_a_rerun_continues(tmp_path: Path) -> None:
    # Stopped by SIGTERM, `ingest -q` exited 1 without a word.
    first = tmp_path / "a.warc.gz"
    second = tmp_path / "b.warc.gz"
    write_ccnews_warc(first, demo_captures(copies=1))
    write_ccnews_warc(second, demo_captures(seed=5, copies=6))
    out = tmp_path / "out"
    command = ingest_command(first, second, "--out", out, "-q")
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    markers = out / ".newscrawl" / "ingest" / "ingested"
    deadline = time.monotonic() + 120
    while not any(markers.glob("a-*.json")) and process.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert process.poll() is None, "the second file was done before the signal could stop it"
    process.send_signal(signal.SIGTERM)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert stdout == b""
    [line] = stderr.decode().strip().splitlines()
    assert line.startswith("ingest: stopped") and "1 of 2 files ingested" in line
    assert "run the same command again" in line
    assert not any(markers.glob("b-*.json"))
    assert not (out / "_staging").exists()

    again = ingest(first, second, "--out", out, "--json", tmp_path / "again.json")
    assert again.returncode == 0, again.stderr
    assert "already ingested in run ingest: 1 files" in again.stdout
    assert any(markers.glob("b-*.json"))
