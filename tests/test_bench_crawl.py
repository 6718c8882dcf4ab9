"""`newscrawl bench crawl --against DIR`: the same variant crawled by another newscrawl checkout
in the same run, as a before/after of a change (real crawls of the demo web on loopback)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[1]


def bench(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "newscrawl.cli", "bench", "crawl", "--copies", "1",
               "--variants", "no-extraction", *map(str, args)]  # fmt: skip
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, cwd=cwd
    )


def test_against_crawls_each_variant_with_the_other_checkout_too() -> None:
    # this checkout against itself, named relative to where the bench starts
    done = bench("--against", ROOT.name, cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {line.split()[0] + (" (against)" if "(against)" in line else ""): line.split()
            for line in done.stdout.splitlines() if line.startswith("no-extraction")}  # fmt: skip
    assert set(rows) == {"no-extraction", "no-extraction (against)"}
    assert rows["no-extraction"][1] == rows["no-extraction (against)"][2]  # the same pages
    ratio = [line for line in done.stdout.splitlines() if line.startswith("this tree /")]
    assert len(ratio) == 1 and float(ratio[0].rsplit(":", 1)[1]) > 0


def test_against_a_folder_without_newscrawl_is_refused(tmp_path: Path) -> None:
    # not silently this checkout's crawl again (the installed newscrawl is on the path too)
    done = bench("--against", tmp_path)
    assert done.returncode == 2
    assert "not a newscrawl checkout" in done.stderr and "Traceback" not in done.stderr


def test_a_checkout_whose_crawl_fails_stops_the_bench_with_its_error(tmp_path: Path) -> None:
    (tmp_path / "newscrawl").mkdir()
    (tmp_path / "newscrawl" / "cli.py").write_text("raise SystemExit('this checkout is broken')\n")
    done = bench("--against", tmp_path)
    assert done.returncode == 1
    assert "no-extraction (against): crawl failed" in done.stderr
    assert "this checkout is broken" in done.stderr  # the checkout's own code ran


def test_the_other_checkout_crawls_with_its_own_item_pipelines(tmp_path: Path) -> None:
    # pipelines/ installs as newscrawl.pipelines from this tree: the other checkout's must run
    (tmp_path / "newscrawl").symlink_to(ROOT / "newscrawl")
    (tmp_path / "models").symlink_to(ROOT / "models")
    shutil.copytree(ROOT / "pipelines", tmp_path / "pipelines")
    with (tmp_path / "pipelines" / "__init__.py").open("a") as init:
        init.write("\nraise SystemExit('the item pipelines of the other checkout')\n")
    done = bench("--against", tmp_path)
    assert done.returncode == 1
    assert "the item pipelines of the other checkout" in done.stderr


def test_a_real_static_site_is_crawled_beside_a_plain_scrapy_spider(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for n in range(12):  # a ring of pages, each linking the next two and a file off the site
        links = "".join(f'<a href="p{(n + k) % 12}.html">next</a> ' for k in (1, 2))
        body = f"<html><body><h1>Page {n}</h1><p>{'Words of the page. ' * 40}</p>{links}"
        (site / f"p{n}.html").write_text(body + '<a href="http://example.org/">out</a></body>')
    done = bench("--site", site, "--start", "p0.html", "--cap", "10")
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {line.split()[0]: line.split() for line in done.stdout.splitlines()[2:6]}
    assert set(rows) == {"plain-scrapy", "plain-scrapy-dfs", "no-extraction", "every-stage"}
    assert {row[1] for row in rows.values()} == {"10"}  # the same cap, met by each
    ratios = [line for line in done.stdout.splitlines() if "/ plain Scrapy" in line]
    values = [
        float(v) for line in ratios for v in re.findall(r"(\d+\.\d+) \((?:pages|MB)/s\)", line)
    ]
    assert len(ratios) == 4 and len(values) == 8 and all(value > 0 for value in values)


def test_a_real_site_and_the_start_up_are_measured_against_another_checkout_too(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for n in range(6):
        link = f'<a href="p{(n + 1) % 6}.html">next</a>'
        (site / f"p{n}.html").write_text(f"<html><body><p>{'Words. ' * 40}</p>{link}</body></html>")
    done = bench("--site", site, "--start", "p0.html", "--cap", "5", "--against", ROOT.name,
                 cwd=ROOT.parent)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    labels = {line.rsplit(None, 7)[0] for line in done.stdout.splitlines()[2:8]}
    assert {"every-stage", "every-stage (against)", "no-extraction (against)"} <= labels
    ratios = [line for line in done.stdout.splitlines() if line.startswith("this tree /")]
    assert len(ratios) == 2 and all(float(line.rsplit(":", 1)[1]) > 0 for line in ratios)
    done = bench("--startup", "--against", ROOT.name, cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "crawl process (one page, every stage) (against)" in done.stdout
    ratios = [line for line in done.stdout.splitlines() if line.startswith("this tree /")]
    assert len(ratios) == 2 and all(float(line.rsplit(":", 1)[1]) > 0 for line in ratios)


def test_a_site_folder_without_the_start_page_is_refused(tmp_path: Path) -> None:
    done = bench("--site", tmp_path, "--start", "nothing.html")
    assert done.returncode == 2 and "no such page" in done.stderr


def test_import_seconds_reads_the_top_level_imports_of_importtime() -> None:
    from newscrawl.lab._real_site import import_seconds

    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       100 |        100 |   _io\n"
        "import time:       200 |        300 | os\n"
        "import time:      1000 |       5000 |     numpy.core\n"
        "import time:       500 |     700000 | numpy\n"
        "a line of the program's own\n"
    )
    total, top = import_seconds(stderr)
    assert top == [("numpy", 0.7), ("os", 0.0003)]
    assert round(total, 6) == 0.7003
