"""`newscrawl extract` runs its sites and the parts of a split site in the site pass's worker
pool (`SitePassPool`), with the records of one process, and ends its workers on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from newscrawl import extractors
from newscrawl.commands import extract as command
from newscrawl.lab.synthetic_docsite import docs_page
from newscrawl.site.saved_jobs import SavedHashPart, SavedPassPart, SavedSiteJob
from newscrawl.site.site_pool import Job, SitePassPool


def _sites(root: Path, sites: int, pages: int) -> list[str]:
    """`sites` folders of `pages` documentation pages each; their page files."""
    paths = []
    for site in range(sites):
        folder = root / f"site{site:02d}"
        folder.mkdir(parents=True)
        for n in range(pages):
            path = folder / f"page-{n:03d}.html"
            path.write_bytes(docs_page(site * pages + n))
            paths.append(str(path))
    return paths


@pytest.fixture
def submitted(monkeypatch: pytest.MonkeyPatch) -> list[Job]:
    """The jobs sent to any `SitePassPool`'s workers, in the order sent."""
    jobs: list[Job] = []
    submit = SitePassPool.submit

    def recorded(pool: SitePassPool, executor: ProcessPoolExecutor, job: Job) -> Future[Any]:
        jobs.append(job)
        return submit(pool, executor, job)

    monkeypatch.setattr(SitePassPool, "submit", recorded)
    return jobs


def _records(items: list[command.Item], jobs: int, **options: Any) -> list[dict[str, Any]]:
    extractor = command.build_extractor(extractors.DEFAULT_EXTRACTOR, None)
    found = command.extract_all(
        items, extractor, extractors.DEFAULT_EXTRACTOR, None, jobs, site_pass=True, **options
    )
    return list(found)


def test_sites_are_jobs_of_the_site_pass_pool(tmp_path: Path, submitted: list[Job]) -> None:
    """Three sites over -j 2: one `SavedSiteJob` each, in the site pass's workers, and the
    records (with Markdown) of -j 1."""
    paths = _sites(tmp_path, sites=3, pages=6)
    items = command.page_items(paths, "dir")
    fields = command.record_fields("markdown")
    alone = _records(items, 1, fields=fields)
    assert not submitted
    pooled = _records(items, 2, fields=fields)
    assert pooled == alone
    assert [type(job) for job in submitted] == [SavedSiteJob] * 3
    sites = [
        {item.site for _, item in job.pages} for job in submitted if isinstance(job, SavedSiteJob)
    ]
    assert sites == [{"site00"}, {"site01"}, {"site02"}]
    assert all(record["text"] and record["markdown"] for record in pooled)


def test_a_split_site_runs_its_parts_in_the_site_pass_pool(
    tmp_path: Path, submitted: list[Job]
) -> None:
    """One site of SPLIT_PAGES pages over -j 2: its template's hashes and its pages in two
    parts each, as jobs of the site pass's workers, and the records of -j 1."""
    paths = _sites(tmp_path, sites=1, pages=command.SPLIT_PAGES)
    items = command.page_items(paths, "dir")
    alone = _records(items, 1)
    pooled = _records(items, 2)
    assert pooled == alone
    kinds = [type(job) for job in submitted]
    assert kinds.count(SavedPassPart) == 2
    assert set(kinds) <= {SavedHashPart, SavedPassPart}


def _children(pids: set[int]) -> set[int]:
    """The processes whose parent is one of `pids`, from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rpartition(")")[2].split()[1]) in pids:
                found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def _extracting(root: Path) -> tuple[subprocess.Popen[str], set[int]]:
    """`newscrawl extract -j 2` of 200 sites in a process group of its own, once its workers
    (the forkserver's children) extract; the command and its workers. The sites are many so
    that a fast machine is still extracting when the test signals it."""
    _sites(root, sites=200, pages=8)
    run = subprocess.Popen(
        [sys.executable, "-m", "newscrawl.cli", "extract", "--site-from", "dir", "-j", "2",
         str(root)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )  # fmt: skip
    workers: set[int] = set()
    while run.poll() is None and len(workers) < 2:
        workers = _children(_children({run.pid}))
        time.sleep(0.05)
    assert run.poll() is None, "the pages were all extracted before the workers were seen"
    time.sleep(0.5)  # the workers into their sites
    return run, workers


def _ended(run: subprocess.Popen[str], workers: set[int]) -> str:
    """The command's stderr once it ended, and its workers too (its process group is killed
    when it does not end)."""
    try:
        _, stderr = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    deadline = time.monotonic() + 30
    while any(_running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in workers if _running(pid)], "a worker outlived the command"
    return stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_ctrl_c_ends_the_workers_and_says_interrupted(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while the workers
    extract: the command says "interrupted" and exits 130 with no worker's traceback, and no
    worker outlives it."""
    run, workers = _extracting(tmp_path / "pages")
    os.killpg(run.pid, signal.SIGINT)
    stderr = _ended(run, workers)
    assert run.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_killed_worker_is_a_clear_error(tmp_path: Path) -> None:
    """A worker killed (as the OOM killer would) while the others extract: the command says so
    on one line and exits 1, and no worker outlives it."""
    run, workers = _extracting(tmp_path / "pages")
    os.kill(min(workers), signal.SIGKILL)
    stderr = _ended(run, workers)
    assert run.returncode == 1, stderr
    assert stderr == f"newscrawl extract: {command.WORKER_DIED}\n"
