"""Reading damaged plain WARC files: time and memory beside a sound file of the same size.

Writes a plain (uncompressed) CC-NEWS-shaped WARC of the demo web into a temporary folder, and
for each size of --sizes (MB) three files of that size more:

- sound: the WARC with one more response record of that size (the peer: a file as large, read
  record by record);
- hole: the WARC with that many NUL bytes between two of its records (a torn copy, a disk
  hole);
- line: the WARC after a first header line of that size with no line end.

Each is read with `newscrawl.storage.warc_reader.read_archive` as `ingest` reads it (FastWARC where
the
file is sound, warcio around the damage). Prints, per file, the records and problems found, the
seconds (best of --repeat), the peak of the memory Python allocated while reading (traced in a
separate pass), and the seconds beside the sound file's: reading past damage should cost about
what reading as many sound bytes costs, and a bounded memory whatever its size.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from pathlib import Path

from newscrawl.lab._bench_args import positive_int, positive_ints

HELP = "reading damaged plain WARCs (NUL holes, endless header lines): time and memory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sizes",
        type=positive_ints(),
        default=[10, 30],
        metavar="MB,MB",
        help="sizes of the damage (and of the sound peer's extra record), in MB (default 10,30)",
    )
    parser.add_argument(
        "--repeat", type=positive_int, default=3, metavar="N", help="reads per file (best kept)"
    )


def _files(folder: Path, sizes: list[int]) -> list[tuple[str, int, Path]]:
    """(kind, MB, path) of the files to read: the base WARC, then sound, hole, line per size."""
    from newscrawl.lab.synthetic_warc import Capture, demo_captures, write_ccnews_warc

    captures = list(demo_captures())
    base = folder / "base.warc"
    write_ccnews_warc(base, captures, gzip=False)
    data = base.read_bytes()
    middle = data.index(b"WARC/1.0", len(data) // 2)  # a record boundary mid-file
    files = [("base", 0, base)]
    for size in sizes:
        filler = b"\0" * (size << 20)
        sound = folder / f"sound-{size}.warc"
        blob = Capture("https://filler.example/blob.bin", filler, "application/octet-stream")
        write_ccnews_warc(sound, [*captures, blob], gzip=False)
        hole = folder / f"hole-{size}.warc"
        hole.write_bytes(data[:middle] + filler + data[middle:])
        line = folder / f"line-{size}.warc"
        line.write_bytes(b"WARC/1.0 " + b"x" * (size << 20) + data)
        files += [("sound", size, sound), ("hole", size, hole), ("line", size, line)]
    return files


def _read(path: Path) -> tuple[int, int]:
    """(records, problems) of one read of `path`, as the ingest reads it."""
    from newscrawl.scale.ingest_spider import wanted
    from newscrawl.storage.warc_reader import read_archive
    from newscrawl.storage.warc_records import Problem

    records = problems = 0
    for entry in read_archive(path, wanted, 10 << 20):
        if isinstance(entry, Problem):
            problems += 1
        else:
            records += 1
    return records, problems


def _measure(path: Path, repeat: int) -> tuple[int, int, float, float]:
    """(records, problems, best seconds, peak traced MB) of reading `path`."""
    best = float("inf")
    found = (0, 0)
    for _ in range(repeat):
        started = time.perf_counter()
        found = _read(path)
        best = min(best, time.perf_counter() - started)
    tracemalloc.start()
    try:
        _read(path)
        peak = tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()
    return found[0], found[1], best, peak


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="bench-warc-damage-") as tmp:
        files = _files(Path(tmp), args.sizes)
        _read(files[0][2])  # imports and caches warmed before anything is timed
        print(f"bench warc-damage: plain WARC of the demo web, damage of {args.sizes} MB")
        print(f"{'file':<10} {'MB':>6} {'records':>8} {'problems':>8} {'seconds':>8} "
              f"{'peak MB':>8} {'time/sound':>10}")  # fmt: skip
        sound: dict[int, float] = {}
        for kind, size, path in files:
            records, problems, seconds, peak = _measure(path, args.repeat)
            if kind == "sound":
                sound[size] = seconds
            ratio = f"{seconds / sound[size]:>10.2f}" if kind in ("hole", "line") else ""
            megabytes = path.stat().st_size / 1e6
            print(f"{kind + ('' if not size else f'-{size}'):<10} {megabytes:>6.1f} {records:>8} "
                  f"{problems:>8} {seconds:>8.3f} {peak:>8.1f} {ratio}")  # fmt: skip
    return 0
