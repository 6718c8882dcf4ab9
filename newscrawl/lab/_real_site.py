"""`newscrawl bench crawl --site DIR`: a real static site on loopback, newscrawl beside a plain
Scrapy spider in the same run.

DIR (e.g. a Debian `-doc` package's HTML folder) is served by ``python -m http.server`` on
127.0.0.1 in a process of its own. Each round crawls it four times, each crawl a child process
with the same settings (CONCURRENT_REQUESTS_PER_DOMAIN 8, no AutoThrottle, no download delay) and
the same page cap: `plain-scrapy` (`_plain_spider.py`: every in-site link followed, parsel; breadth
first, as newscrawl crawls, so both fetch the same pages), `plain-scrapy-dfs` (the same spider in
Scrapy's default order, which on a documentation site reaches other, often smaller pages: compare
its MB), `no-extraction` (newscrawl fetching, parsing for links and writing raw pages) and
`every-stage` (newscrawl with its default pipelines: the site pass and extraction).

pages/s is HTML pages over the seconds from spider open to close, MB their HTML (MB/s over
the same seconds: the order decides which pages a cap takes, and their size); `wall s` is the
child process's whole life (imports and start-up included) and `CPU s` the CPU time of the child
and the processes it waited for (its parse workers; not the site pass workers, which its forkserver
starts). A crawl that waits shows `wall s` well above `CPU s`; set it beside the plain spider's in
the same run.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "REAL_VARIANTS",
    "crawl_real_site",
    "import_seconds",
    "measure_startup",
    "print_real_site",
    "print_startup",
    "serve_folder",
]

PEER = "plain-scrapy"
PEER_DFS = "plain-scrapy-dfs"
PEERS = (PEER, PEER_DFS)
AGAINST = " (against)"  # label suffix of a crawl by the --against checkout
REAL_VARIANTS: dict[str, dict[str, Any]] = {
    PEER: {},
    PEER_DFS: {},
    "no-extraction": {
        "ITEM_PIPELINES": {
            "newscrawl.pipelines.rawpages.RawPagePipeline": 400,
            "newscrawl.pipelines.parquet.ParquetWriterPipeline": 500,
        }
    },
    "every-stage": {},
}
SHARED_SETTINGS: dict[str, Any] = {
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
    "AUTOTHROTTLE_ENABLED": False,
    "DOWNLOAD_DELAY": 0,
}
_SPIDER = Path(__file__).with_name("_plain_spider.py")


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@contextmanager
def serve_folder(folder: Path, host: str = "127.0.0.1") -> Iterator[str]:
    """`folder` served by ``python -m http.server`` in a child process; yields its base URL."""
    port = _free_port(host)
    command = [sys.executable, "-m", "http.server", str(port), "--bind", host]
    command += ["--directory", str(folder)]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"http.server did not start on {host}:{port}") from None
                time.sleep(0.05)
        yield f"http://{host}:{port}/"
    finally:
        server.terminate()
        server.wait(timeout=10)


def _timed(
    command: list[str], root: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run `command` (with `root`: from that folder, first on the import path, as the checkout
    there runs); its result, wall seconds and CPU seconds (it and its waited children)."""
    env = {**os.environ, "PYTHONPATH": str(root)} if root is not None else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=root)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, wall, cpu


def _plain(url: str, cap: int, order: str) -> dict[str, Any]:
    result, wall, cpu = _timed([sys.executable, str(_SPIDER), url, str(cap), order])
    if result.returncode != 0 or not result.stdout.strip():
        raise RuntimeError(f"plain spider failed ({result.returncode}): {result.stderr[-2000:]}")
    run = json.loads(result.stdout.strip().splitlines()[-1])
    return {
        "pages": run["pages"],
        "mb": run["bytes"] / 1e6,
        "seconds": run["elapsed_s"],
        "wall_s": wall,
        "cpu_s": cpu,
    }


def _newscrawl(
    url: str, cap: int, out: Path, overrides: dict[str, Any], root: Path | None = None
) -> dict[str, Any]:
    from newscrawl.crawl.crawl_process import crawl_command

    sites = out.with_suffix(".csv")
    sites.write_text(f"url,name,max_pages\n{url},site,{cap}\n")
    settings = [
        f"{name}={json.dumps(value) if isinstance(value, dict | list) else value}"
        for name, value in {**SHARED_SETTINGS, **overrides}.items()
    ]
    command = crawl_command(sites, out, settings, ("--fast-local", "--log-level", "WARNING"))
    result, wall, cpu = _timed(command, root)
    summaries = sorted(out.glob(".newscrawl/*/summary.json"))
    if result.returncode != 0 or not summaries:
        raise RuntimeError(f"crawl failed ({result.returncode}): {result.stderr[-2000:]}")
    summary = json.loads(summaries[-1].read_text())
    return {
        "pages": summary["pages"],
        "mb": _html_bytes(out) / 1e6,
        "seconds": summary["elapsed_s"],
        "wall_s": wall,
        "cpu_s": cpu,
    }


def _html_bytes(out: Path) -> int:
    """Bytes of HTML of the pages a crawl wrote to `out`."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    table = ds.dataset(out / "pages", format="parquet").to_table(columns=["html"])
    return int(pc.sum(pc.binary_length(table["html"])).as_py() or 0)


def crawl_real_site(
    folder: Path, start: str, cap: int, repeat: int, names: list[str], against: Path | None = None
) -> dict[str, dict[str, float]]:
    """Each of `names` (of REAL_VARIANTS) crawls `folder` served on loopback from `start`
    (a path in it), `repeat` rounds; per variant the medians of its crawls. `against`: the
    import root of another checkout, whose crawls of the newscrawl variants run in the same
    rounds, labelled with `AGAINST`."""
    labels: dict[str, tuple[str, Path | None]] = {name: (name, None) for name in names}
    if against is not None:
        labels |= {name + AGAINST: (name, against) for name in names if name not in PEERS}
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
    with serve_folder(folder) as base, tempfile.TemporaryDirectory() as tmp:
        url = base + start.lstrip("/")
        for i in range(repeat):
            for label, (name, root) in labels.items():
                if name in PEERS:
                    run = _plain(url, cap, "bfs" if name == PEER else "dfs")
                else:
                    out = Path(tmp) / f"{name}-{i}{'-against' if root else ''}"
                    run = _newscrawl(url, cap, out, REAL_VARIANTS[name], root)
                run["pages_per_s"] = run["pages"] / run["seconds"] if run["seconds"] else 0.0
                run["mb_per_s"] = run["mb"] / run["seconds"] if run["seconds"] else 0.0
                runs[label].append(run)
                print(f"{label} #{i + 1}: {run}", file=sys.stderr)
    return {
        name: {key: statistics.median(run[key] for run in done) for key in done[0]}
        for name, done in runs.items()
    }


def print_real_site(
    folder: Path, cap: int, repeat: int, results: dict[str, dict[str, float]]
) -> None:
    """The table and the ratios against the plain spider."""
    load = os.getloadavg()[0]
    print(
        f"real site {folder}: cap {cap} pages; median of {repeat} crawl(s); "
        f"{os.cpu_count()} cores, load {load:.1f}"
    )
    width = max(16, *map(len, results))
    print(
        f"{'variant':<{width}} {'pages':>6} {'MB':>6} {'seconds':>8} {'pages/s':>8} {'MB/s':>6}"
        f" {'wall s':>7} {'CPU s':>6}"
    )
    for name, row in results.items():
        print(
            f"{name:<{width}} {row['pages']:>6.0f} {row['mb']:>6.1f} {row['seconds']:>8.1f}"
            f" {row['pages_per_s']:>8.1f} {row['mb_per_s']:>6.2f} {row['wall_s']:>7.1f}"
            f" {row['cpu_s']:>6.1f}"
        )
    for peer_name, what in ((PEER, "plain Scrapy"), (PEER_DFS, "plain Scrapy, its default order")):
        peer = results.get(peer_name)
        if not peer or not peer["pages_per_s"] or not peer["mb_per_s"]:
            continue
        for name, row in results.items():
            if name not in PEERS:
                pages = row["pages_per_s"] / peer["pages_per_s"]
                mb = row["mb_per_s"] / peer["mb_per_s"]
                print(f"{name} / {what}: {pages:.2f} (pages/s), {mb:.2f} (MB/s)")
    for name, row in results.items():
        before = results.get(name + AGAINST)
        if before and before["pages_per_s"]:
            ratio = row["pages_per_s"] / before["pages_per_s"]
            print(f"this tree / --against tree ({name} pages/s): {ratio:.2f}")


# -- start-up ----------------------------------------------------------------------------------

_STARTUP_PAGE = b"<html><head><title>One page</title></head><body><p>A page.</p></body></html>"
# what each kind of process imports before its first page, run alone in a fresh interpreter
_WORKER_CODE = {
    "parse worker": (
        "from newscrawl.crawl.parsepool import page_links\n"
        "page_links(b'<p>warm</p>', 'http://x/', 'text/html', 100)"
    ),
    "site pass worker (extractor chain built)": (
        "from newscrawl.extractors import build_extractor\n"
        "from newscrawl.html.parse import parse_html\n"
        "for name in ('learned', 'cetd-tpc'):\n"
        "    build_extractor(name).extract(parse_html(b'<p>warm</p>'))"
    ),
}


def import_seconds(stderr: str) -> tuple[float, list[tuple[str, float]]]:
    """From ``python -X importtime`` output: the seconds of all imports (the sum of the
    top-level ones' cumulative times) and the top-level imports, largest first."""
    top: list[tuple[str, float]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if name.startswith(" ") and not name.startswith("  "):  # top level: no indentation
            top.append((name.strip(), int(cumulative) / 1e6))
    top.sort(key=lambda item: -item[1])
    return sum(seconds for _, seconds in top), top


def _startup_row(
    label: str, command: list[str], imports: bool = True, root: Path | None = None
) -> dict[str, Any]:
    """One process's wall and CPU seconds and, with `imports`, what its imports take (its
    children would print theirs too: a crawl with workers is timed without); `root` as in
    `_timed`."""
    flags = ["-X", "importtime"] if imports else []
    result, wall, cpu = _timed([sys.executable, *flags, *command], root)
    if result.returncode != 0:
        raise RuntimeError(f"{label} failed ({result.returncode}): {result.stderr[-2000:]}")
    total, top = import_seconds(result.stderr) if imports else (None, [])
    return {"label": label, "wall_s": wall, "cpu_s": cpu, "import_s": total, "top": top[:4]}


_STARTUP_CRAWLS: tuple[tuple[str, list[str]], ...] = (
    ("crawl process (one page, every stage)", []),
    ("one process (workers off)", ["NEWSCRAWL_PARSE_WORKERS=0", "NEWSCRAWL_SITEPASS_WORKERS=0"]),
)


def measure_startup(against: Path | None = None, repeat: int = 1) -> list[dict[str, Any]]:
    """A crawl's first seconds, per kind of process: a one-page site crawled with every stage
    (its wall, CPU and spider open-to-close seconds), the same crawl with every stage in the
    one process (workers off: what a crawl imports, all processes together), and each kind
    of worker's imports and start, alone. `against`: the import root of another checkout,
    whose crawls run beside these, labelled with `AGAINST`; `repeat`: rounds of the crawls,
    medians reported."""
    from newscrawl.crawl.crawl_process import crawl_command

    trees = [("", None)] + ([(AGAINST, against)] if against is not None else [])
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        site.mkdir()
        (site / "index.html").write_bytes(_STARTUP_PAGE)
        with serve_folder(site) as base:
            for _ in range(repeat):
                for index, (label, extra) in enumerate(_STARTUP_CRAWLS):
                    for suffix, root in trees:
                        out = Path(tmp) / f"out-{len(runs)}-{sum(map(len, runs.values()))}"
                        sites = out.with_suffix(".csv")
                        sites.write_text(f"url,name,max_pages\n{base}index.html,site,1\n")
                        command = crawl_command(
                            sites, out, extra, ("--fast-local", "--log-level", "ERROR")
                        )
                        row = _startup_row(label + suffix, command[1:], bool(index), root)
                        summary = json.loads(
                            next(out.glob(".newscrawl/*/summary.json")).read_text()
                        )
                        runs.setdefault(row["label"], []).append(
                            {**row, "crawl_s": summary["elapsed_s"]}
                        )
    rows = [_median_row(done) for done in runs.values()]
    for label, code in _WORKER_CODE.items():
        rows.append({**_startup_row(label, ["-c", code]), "crawl_s": None})
    return rows


def _median_row(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run's row with the medians of its measures over `runs`."""
    row = dict(runs[0])
    for key in ("wall_s", "cpu_s", "import_s", "crawl_s"):
        if row[key] is not None:
            row[key] = statistics.median(run[key] for run in runs)
    return row


def print_startup(rows: list[dict[str, Any]], repeat: int = 1) -> None:
    """The start-up table: per process, wall and CPU seconds, import seconds, the largest
    imports, and for the crawls the seconds from spider open to close (medians of `repeat`);
    then, for a crawl also run by another checkout, this tree's wall seconds over that one's."""
    load = os.getloadavg()[0]
    print(f"start-up: {os.cpu_count()} cores, load {load:.1f}; crawls: median of {repeat}")
    width = max(42, *(len(row["label"]) for row in rows))
    print(
        f"{'process':<{width}} {'wall s':>7} {'CPU s':>6} {'imports s':>9} {'crawl s':>8}  largest"
    )
    for row in rows:
        crawl = f"{row['crawl_s']:>8.2f}" if row["crawl_s"] is not None else f"{'':>8}"
        imported = f"{row['import_s']:>9.2f}" if row["import_s"] is not None else f"{'-':>9}"
        largest = ", ".join(f"{name} {seconds:.2f}" for name, seconds in row["top"])
        print(
            f"{row['label']:<{width}} {row['wall_s']:>7.2f} {row['cpu_s']:>6.2f}"
            f" {imported} {crawl}  {largest}"
        )
    by_label = {row["label"]: row for row in rows}
    for row in rows:
        before = by_label.get(row["label"] + AGAINST)
        if before is not None and before["wall_s"]:
            ratio = row["wall_s"] / before["wall_s"]
            print(f"this tree / --against tree ({row['label']}, wall s): {ratio:.2f}")
