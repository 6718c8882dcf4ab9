"""Redis-fed crawl workers end to end: a real redis-server, the demo web over HTTP, and
`newscrawl worker` processes that crash, lose Redis and still leave every article once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from newscrawl.crawl.discovery.site_lists import SiteSpec
from newscrawl.scale.redis_queue import SiteQueue
from newscrawl.scale.redis_server import LocalRedis, free_port
from newscrawl.scale.sitelist import read_site_specs, site_payload

pytestmark = [
    pytest.mark.redis,
    pytest.mark.slow,
]

LEASE = 4.0
WORKER_TIMEOUT = 120.0


@pytest.fixture(scope="module")
def demo() -> Iterator[object]:
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    with DemoServer(build_demo_web(), port=0) as server:
        yield server


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedis]:
    with LocalRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


class Worker:
    """A `newscrawl worker` subprocess with its log in a file."""

    def __init__(self, name: str, redis_url: str, run: str, out: Path, *extra: str) -> None:
        self.name = name
        self.log = out.parent / f"{run}-{name}.log"
        command = [
            sys.executable, "-m", "newscrawl.cli", "worker",
            "--redis", redis_url, "--run", run, "--out", str(out),
            "--worker-id", name, "--lease", str(LEASE), "--poll", "0.3",
            "--allow-private", "loopback", "--log-level", "INFO",
            "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "DOWNLOAD_DELAY=0",
            "-s", "NEWSCRAWL_EXTRACTORS=nce", "-s", "LOGSTATS_INTERVAL=0",
            *extra,
        ]  # fmt: skip
        self.handle = self.log.open("wb")
        self.process = subprocess.Popen(command, stdout=self.handle, stderr=subprocess.STDOUT)

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def crawled(self) -> list[str]:
        return re.findall(rf"worker {re.escape(self.name)}: crawling (\S+)", self.text())

    def wait(self, timeout: float = WORKER_TIMEOUT) -> int:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            tail = self.text()[-3000:]
            raise AssertionError(f"worker {self.name} did not finish:\n{tail}") from None
        self.handle.close()
        return code

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self.handle.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.handle.close()


@pytest.fixture
def workers() -> Iterator[list[Worker]]:
    started: list[Worker] = []
    yield started
    for worker in started:
        worker.stop()


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def enqueue_demo(demo: object, redis_url: str, run: str) -> SiteQueue:
    queue = SiteQueue.from_url(redis_url, run)
    queue.clear()
    urls = list(demo.site_urls.values())  # type: ignore[attr-defined]
    specs = read_site_specs(urls)
    assert queue.enqueue([(spec.name, site_payload(spec)) for spec in specs]) == [
        s.name for s in specs
    ]
    return queue


def articles(out: Path) -> list[dict[str, object]]:
    """The articles dataset of the shared output root, read as any reader would."""
    from newscrawl.storage.datasets import open_parquet

    table = open_parquet(out / "articles").to_table(columns=["site", "final_url", "is_article"])
    return table.to_pylist()


def check_exactly_once(out: Path, demo: object) -> None:
    """Every page once in `articles` and `pages`; every gold article once; merge agrees."""
    rows = articles(out)
    urls = Counter(str(row["final_url"]) for row in rows)
    assert max(urls.values()) == 1, [u for u, n in urls.items() if n > 1][:5]
    gold = demo.gold()  # type: ignore[attr-defined]
    found = [url for url in urls if url in gold]
    assert sorted(found) == sorted(gold), f"missing: {sorted(set(gold) - set(found))[:5]}"
    from newscrawl.storage.datasets import open_parquet

    pages = open_parquet(out / "pages").to_table(columns=["final_url"]).column(0).to_pylist()
    assert Counter(pages) == urls
    from newscrawl.cli import main

    merged = out.parent / f"{out.name}-merged"
    assert main(["merge", str(out), "--into", str(merged)]) == 0
    merged_urls = ds.dataset(merged / "articles", partitioning="hive").to_table()
    assert Counter(merged_urls.column("final_url").to_pylist()) == urls


def test_two_workers_share_the_sites(
    demo: object, redis_server: LocalRedis, tmp_path: Path, workers: list[Worker]
) -> None:
    queue = enqueue_demo(demo, redis_server.url, "two")
    out = tmp_path / "out"
    workers += [Worker(name, redis_server.url, "two", out) for name in ("w1", "w2")]
    assert [worker.wait() for worker in workers] == [0, 0]
    crawled = Counter(site for worker in workers for site in worker.crawled())
    status = queue.status()
    assert set(crawled) == set(status.done) and len(status.done) == 3
    assert all(n == 1 for n in crawled.values()), crawled  # every site by exactly one worker
    assert status.counts == {"queued": 0, "leased": 0, "done": 3, "failed": 0}
    assert {record["worker"] for record in status.done.values()} <= {"w1", "w2"}
    check_exactly_once(out, demo)


def test_killed_worker_site_is_finished_by_the_other(
    demo: object, redis_server: LocalRedis, tmp_path: Path, workers: list[Worker]
) -> None:
    queue = enqueue_demo(demo, redis_server.url, "kill")
    out = tmp_path / "out"
    # slow, and closing a Parquet file every 4 rows: the victim dies with complete files staged
    slow = ("-s", "DOWNLOAD_DELAY=0.1", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1")
    small_files = ("-s", "NEWSCRAWL_PARQUET_ROW_GROUP_ROWS=2")
    small_files += ("-s", "NEWSCRAWL_PARQUET_FILE_ROWS=4")
    victim = Worker("victim", redis_server.url, "kill", out, *slow, *small_files)
    workers.append(victim)
    wait_until(lambda: bool(victim.crawled()), 60, "the first worker to start a site")
    site = victim.crawled()[0]
    netloc = site.replace("_", ":")
    requested = lambda: sum(r.host == netloc for r in demo.requests)  # type: ignore[attr-defined]  # noqa: E731
    before = requested()
    staged = lambda: list((out / "_staging" / "victim").rglob("part-*.parquet"))  # noqa: E731
    wait_until(
        lambda: requested() >= before + 8 and bool(staged()),
        60,
        "the victim to be well into its site, with complete files staged",
    )
    victim.kill()  # SIGKILL mid-site: no clean-up, the lease is simply no longer renewed
    assert queue.status().leased[site][0] == "victim"
    assert staged(), "the victim should have left complete files of its unfinished site"

    survivor = Worker("survivor", redis_server.url, "kill", out)
    workers.append(survivor)
    assert survivor.wait() == 0
    status = queue.status()
    assert status.counts == {"queued": 0, "leased": 0, "done": 3, "failed": 0}
    assert status.done[site]["worker"] == "survivor" and status.done[site]["attempt"] == 2
    assert sorted(survivor.crawled()) == sorted(status.done)
    check_exactly_once(out, demo)


def test_redis_restart_mid_crawl(demo: object, tmp_path: Path, workers: list[Worker]) -> None:
    """Redis killed with SIGKILL and restarted on the same port (append-only file, fsync on
    every write, so the queue survives): workers warn, wait, and carry on."""
    server = LocalRedis(tmp_path / "redis", persist=True).start()
    try:
        queue = enqueue_demo(demo, server.url, "restart")
        out = tmp_path / "out"
        slow = ("-s", "DOWNLOAD_DELAY=0.05")
        workers += [Worker(n, server.url, "restart", out, *slow) for n in ("r1", "r2")]
        wait_until(lambda: any(w.crawled() for w in workers), 60, "a worker to start a site")
        server.kill()
        wait_until(
            lambda: all("Redis unavailable" in w.text() for w in workers), 30, "both to notice"
        )
        time.sleep(1.0)
        server.start()
        assert [worker.wait() for worker in workers] == [0, 0]
        assert all("Redis is back" in w.text() for w in workers)
        status = queue.status()
        assert status.counts == {"queued": 0, "leased": 0, "done": 3, "failed": 0}
        check_exactly_once(out, demo)
    finally:
        server.stop()


def test_worker_waits_for_redis_to_come_up(
    demo: object, tmp_path: Path, workers: list[Worker]
) -> None:
    server = LocalRedis(tmp_path / "redis")
    worker = Worker("early", server.url, "late", tmp_path / "out")
    workers.append(worker)
    wait_until(lambda: "Redis unavailable" in worker.text(), 30, "a clear warning")
    assert worker.process.poll() is None  # still waiting, not crashed
    server.start()
    try:
        queue = enqueue_demo(demo, server.url, "late")
        # and a site where nothing answers: failed, with a reason, not "done"
        dead = f"http://127.0.0.9:{free_port('127.0.0.9')}/"
        assert queue.enqueue([("dead", site_payload(SiteSpec("dead", dead)))]) == ["dead"]
        assert worker.wait() == 0
        assert len(worker.crawled()) == 4
        status = queue.status()
        assert status.counts == {"queued": 0, "leased": 0, "done": 3, "failed": 1}
        assert "no HTML page fetched" in status.failed["dead"]
    finally:
        server.stop()


def test_workers_crawl_incrementally_across_runs(
    demo: object, redis_server: LocalRedis, tmp_path: Path, workers: list[Worker]
) -> None:
    """A scheduled run of workers into the same OUT (a new --run each time) fetches only what
    may be new, like `newscrawl crawl` (issue 13): the unchanged demo web costs its home pages,
    robots.txt, sitemaps and feeds, and no article row is written twice."""
    out = tmp_path / "out"
    fetched = []
    for run in ("day0", "day0-again"):
        enqueue_demo(demo, redis_server.url, run)
        before = len(demo.requests)  # type: ignore[attr-defined]
        worker = Worker(f"w-{run}", redis_server.url, run, out)
        workers.append(worker)
        assert worker.wait() == 0
        fetched.append(len(demo.requests) - before)  # type: ignore[attr-defined]
    assert fetched[1] <= 0.2 * fetched[0], fetched
    assert not list((out / "articles").glob("crawl=day0-again/**/*.parquet"))
    check_exactly_once(out, demo)
    from newscrawl.demo.web import build_demo_web

    demo.set_web(build_demo_web(day=1))  # type: ignore[attr-defined]
    try:
        enqueue_demo(demo, redis_server.url, "day1")
        worker = Worker("w-day1", redis_server.url, "day1", out)
        workers.append(worker)
        assert worker.wait() == 0
    finally:
        demo.set_web(build_demo_web())  # type: ignore[attr-defined]
    new = {r["final_url"] for r in articles(out)} - set(demo.gold())  # type: ignore[attr-defined]
    assert len(new) >= 8, "the day's new articles are published"
    for dataset in ("versions", "duplicates"):  # published from the staging folder too
        assert list((out / dataset).glob("crawl=day1/site=*/part-*.parquet")), dataset
