"""Bad options of `newscrawl bench ...` and `newscrawl demo` are refused up front: one line on
stderr, exit status 2, no traceback, before any demo web, server, crawl or input is set up.
And `bench ingest` stopped by SIGTERM removes its temporary folder, as it does on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BAD_BENCH = {
    "crawl": [
        ["-r", "0", "--variants", "no-extraction"],
        ["--variants", ""],
        ["--variants", " , "],
        ["--variants", "site-pass,bogus"],
        ["--copies", "0"],
        ["--copies", "-1"],
        ["--against", "{dir}"],
    ],
    "smooth": [
        ["-c", "-1"],
        ["-c", "nan"],
        ["-c", "inf"],
        ["--resolution", "-4"],
        ["--resolution", "0"],
        ["--nodes", "0"],
        ["--repeat", "0"],
        ["--naive-nodes", "-1"],
    ],
    "extract": [
        ["{dir}", "-n", "-3"],
        ["{dir}", "-n", "0"],
        ["{dir}", "-r", "0"],
        ["{dir}", "-r", "-1"],
    ],
    "scale": [
        ["--copies", "0"],
        ["--max-pages", "-1"],
        ["--extractor", "bogus"],
        ["--keep", "{file}"],
        ["--workers", "a,b"],
        ["--workers", ""],
        ["--dask-workers", "0"],
    ],
    "ingest": [
        ["--sizes", "abc"],
        ["--sizes", "0"],
        ["--sizes", "-5"],
        ["--repeat", "0"],
        ["--heavy-pages", "-1"],
        ["--copies", "0"],
        ["--keep", "{file}"],
        ["--keep", "{file}/sub"],
    ],
}
BAD_DEMO = [
    ["--out", "{file}/sub"],
    ["--out", "{file}"],
    ["--out", "/proc/newscrawl-demo-x"],
]


def run_cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`python -m newscrawl.cli ARGS`, "{file}" and "{dir}" standing for a regular file and an
    empty folder under tmp_path; TMPDIR there too, so nothing is left in /tmp if it went on."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    folder = tmp_path / "folder"
    folder.mkdir(exist_ok=True)
    argv = [a.replace("{file}", str(afile)).replace("{dir}", str(folder)) for a in args]
    env = {**os.environ, "TMPDIR": str(folder)}
    command = [sys.executable, "-m", "newscrawl.cli", *argv]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def assert_refused(done: subprocess.CompletedProcess[str], command: str) -> None:
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    # "newscrawl bench NAME: error: ..." from the parser, "bench NAME: ..." from the bench
    assert len(lines) == 1 and f"{command}: " in lines[0], done.stderr
    assert done.stdout == ""  # nothing started: no banner, no table


@pytest.mark.parametrize(
    ("name", "args"),
    [(name, args) for name, cases in BAD_BENCH.items() for args in cases],
    ids=lambda value: value if isinstance(value, str) else " ".join(value) or "''",
)
def test_bad_bench_options_are_one_line_and_exit_2(
    name: str, args: list[str], tmp_path: Path
) -> None:
    done = run_cli(["bench", name, *args], tmp_path)
    assert_refused(done, f"bench {name}")
    assert not any((tmp_path / "folder").iterdir())  # no temporary folder, no inputs written


@pytest.mark.parametrize("args", BAD_DEMO, ids=" ".join)
def test_bad_demo_out_is_one_line_and_exit_2(args: list[str], tmp_path: Path) -> None:
    if args[1].startswith("/proc/") and not Path("/proc/self").is_dir():
        pytest.skip("no /proc here")
    done = run_cli(["demo", *args], tmp_path)
    assert_refused(done, "newscrawl demo")
    if args[1].endswith("/sub") or args[1].startswith("/proc/"):
        assert "cannot create" in done.stderr


def test_the_usual_bench_options_still_parse() -> None:
    # the defaults go through the same validators (strings, as on the command line)
    from newscrawl.cli import build_parser

    parser, _ = build_parser()
    crawl = parser.parse_args(["bench", "crawl"])
    assert crawl.variants == ["site-pass", "no-sitelevel", "no-extraction"]
    scale = parser.parse_args(["bench", "scale", "--workers", "1, 2,"])
    assert scale.workers == [1, 2] and scale.dask_workers == [1, 2] and scale.max_pages == 60
    ingest = parser.parse_args(["bench", "ingest", "--sizes", "", "--heavy-pages", "0"])
    assert ingest.sizes == [] and ingest.heavy_pages == 0
    assert parser.parse_args(["bench", "ingest"]).sizes == [64, 512, 2048]
    smooth = parser.parse_args(["bench", "smooth", "-c", "0", "--naive-nodes", "0"])
    assert smooth.c == 0.0 and smooth.naive_nodes == 0 and smooth.resolution is None


@pytest.mark.slow
def test_sigterm_removes_the_ingest_bench_temporary_folder(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    command = [sys.executable, "-m", "newscrawl.cli", "bench", "ingest", "--copies", "1",
               "--sizes", "64", "--repeat", "1", "--heavy-pages", "0"]  # fmt: skip
    bench = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        folders: list[Path] = []
        # wait until the bench is writing its inputs into the folder
        while not any(folder.iterdir() for folder in folders):
            assert bench.poll() is None, bench.stderr.read() if bench.stderr else ""
            assert time.monotonic() < deadline, "no temporary folder with inputs in 60 s"
            time.sleep(0.1)
            folders = list(tmp_path.glob("newscrawl-bench-ingest-*"))
        bench.send_signal(signal.SIGTERM)
        _, err = bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()
    assert bench.returncode == 128 + signal.SIGTERM, err[-3000:]
    assert "Traceback" not in err
    assert folders and not any(folder.exists() for folder in folders)
