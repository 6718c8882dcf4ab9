"""`newscrawl worker`, `enqueue`, `status` and `merge` refuse what cannot work, in one line and
with exit 2, instead of waiting forever or printing a traceback: a run Redis does not know, a
Redis that is down, refuses us or is no Redis, a bad database in the URL, durations that are
not finite positive numbers. A real redis-server on loopback; workers are real processes."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from newscrawl.cli import main
from newscrawl.scale.redis_queue import (
    RedisRefused,
    RedisUnavailable,
    SiteQueue,
    check_redis,
    connect,
)
from newscrawl.scale.redis_server import LocalRedis, free_port

pytestmark = pytest.mark.redis

# What a worker that checks at start needs at most: the interpreter and Scrapy's imports (several
# workers side by side on a small machine), plus the wait for a Redis that is down.
WORKER_TIMEOUT = 20.0


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedis]:
    with LocalRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


def worker_command(redis_url: str, run: str, out: Path, *extra: str) -> list[str]:
    return [
        sys.executable, "-m", "newscrawl.cli", "worker",
        "--redis", redis_url, "--run", run, "--out", str(out),
        "--allow-private", "loopback", "--log-level", "INFO",
        "-s", "AUTOTHROTTLE_ENABLED=False", "-s", "NEWSCRAWL_EXTRACTORS=nce",
        "-s", "LOGSTATS_INTERVAL=0",
        *extra,
    ]  # fmt: skip


def run_workers(
    commands: list[list[str]], timeout: float = WORKER_TIMEOUT
) -> list[tuple[int, str]]:
    """Run the worker commands side by side; (exit status, stderr) of each. A worker still
    running after `timeout` is killed and fails the test: it would have waited forever."""
    started = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for c in commands
    ]
    deadline = time.monotonic() + timeout
    results = []
    for process, command in zip(started, commands, strict=True):
        try:
            _, err = process.communicate(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            for other in started:
                other.kill()
                other.wait(10)
            raise AssertionError(f"still running after {timeout}s: {command[3:9]}") from None
        results.append((process.returncode, err))
    return results


def one_line(err: str) -> str:
    """The one line a refused command prints (nothing else: no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err[-2000:]
    return lines[0]


class NotRedis:
    """A TCP server that answers every connection like a web server."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = int(self.sock.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self.sock.close()


# -- in-process: the checks themselves --------------------------------------------------------


def test_check_redis_gives_up_within_its_budget() -> None:
    client = connect(f"redis://127.0.0.1:{free_port()}/0")
    started = time.monotonic()
    with pytest.raises(RedisUnavailable, match="Redis unavailable"):
        check_redis(client, "redis://x", give_up_after=1.2)
    # backoff 0.5 s then 1 s: without capping the last wait it takes 1.5 s or more
    assert time.monotonic() - started < 1.45


def test_check_redis_refuses_what_waiting_cannot_fix(redis_server: LocalRedis) -> None:
    out_of_range = redis_server.url[:-1] + "99"
    with pytest.raises(RedisRefused, match="DB index is out of range"):
        check_redis(connect(out_of_range), out_of_range, give_up_after=1)
    with pytest.raises(ValueError, match="must be a number, not 'abc'"):
        connect(redis_server.url[:-1] + "abc")
    fake = NotRedis()
    try:
        url = f"redis://127.0.0.1:{fake.port}/0"
        with pytest.raises(RedisRefused, match="does not answer like a Redis server"):
            check_redis(connect(url), url, give_up_after=1)
    finally:
        fake.close()


def test_queue_refuses_a_lease_that_is_not_finite(redis_server: LocalRedis) -> None:
    client = connect(redis_server.url)
    for lease in (float("nan"), float("inf"), 0.0):
        with pytest.raises(ValueError, match="finite number above 0"):
            SiteQueue(client, "nums", lease_seconds=lease)


def test_enqueue_and_status_refuse_a_bad_database(
    redis_server: LocalRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    for db, said in (("99", "DB index is out of range"), ("abc", "must be a number")):
        url = redis_server.url[:-1] + db
        assert main(["enqueue", "a.test", "--redis", url, "--run", "db"]) == 2
        assert said in one_line(capsys.readouterr().err)
        assert main(["status", "--redis", url, "--run", "db"]) == 2
        assert said in one_line(capsys.readouterr().err)


def test_enqueue_counts_a_site_given_twice_once(
    redis_server: LocalRedis, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    SiteQueue.from_url(redis_server.url, "twice").clear()
    sites = tmp_path / "sites.txt"
    sites.write_text("http://a.test/\nhttp://b.test/\nhttp://c.test/\n")
    args = [str(sites), "http://a.test/", "--redis", redis_server.url, "--run", "twice"]
    assert main(["enqueue", *args]) == 0
    assert "enqueued 3 new site(s) of 3" in capsys.readouterr().out
    assert main(["enqueue", *args]) == 0
    assert "enqueued 0 new site(s) of 3" in capsys.readouterr().out


def test_merge_argument_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = tmp_path / "out"
    (out / "articles" / "crawl=r" / "site=a").mkdir(parents=True)
    pq.write_table(pa.table({"x": [1]}), out / "articles" / "crawl=r" / "site=a" / "p.parquet")
    into = str(tmp_path / "merged")
    refused = {
        "--rows-per-file must be at least 1": ["--into", into, "--rows-per-file", "0"],
        "no such dataset": ["--into", into, "--dataset", "bogus"],
        "merge into a folder outside it": ["--into", str(out / "merged")],
    }
    for said, args in refused.items():
        assert main(["merge", str(out), *args]) == 2
        assert said in one_line(capsys.readouterr().err)
    assert main(["merge", str(out), "--into", into]) == 0


# -- worker processes refused at start ---------------------------------------------------------


@pytest.mark.slow
def test_worker_refuses_at_start(redis_server: LocalRedis, tmp_path: Path) -> None:
    """Each of these waited forever, crashed with a traceback or exited 1 before."""
    locked = LocalRedis(tmp_path / "locked").start()
    fake = NotRedis()
    try:
        redis.Redis.from_url(locked.url).config_set("requirepass", "secret")
        out = tmp_path / "out"
        url = redis_server.url
        SiteQueue.from_url(url, "known").enqueue(["a.test"])
        cases = {
            "run zz is not in Redis at": (url, "zz"),
            "DB index is out of range": (url[:-1] + "99", "known"),
            "must be a number, not 'abc'": (url[:-1] + "abc", "known"),
            "refused the login": (f"redis://:wrong@127.0.0.1:{locked.port}/0", "known"),
            "does not answer like a Redis server": (f"redis://127.0.0.1:{fake.port}/0", "known"),
            "Redis unavailable while trying to reach": (
                f"redis://127.0.0.1:{free_port()}/0",
                "known",
            ),
        }
        # a Redis that is down gets 2 s to come up here, not the default 10 s
        wait = ("-s", "NEWSCRAWL_REDIS_START_WAIT=2")
        commands = [worker_command(u, run, out, *wait) for u, run in cases.values()]
        numbers = {
            "--lease must be a finite number above 0, not nan": ("--lease", "nan"),
            "--lease must be a finite number above 0, not inf": ("--lease", "inf"),
            "--poll must be a finite number above 0, not -1.0": ("--poll", "-1"),
        }
        commands += [worker_command(url, "known", out, *extra) for extra in numbers.values()]
        results = run_workers(commands)
    finally:
        fake.close()
        locked.stop()
    for said, (code, err) in zip([*cases, *numbers], results, strict=True):
        assert code == 2, (said, err[-2000:])
        assert said in err.splitlines()[-1], err[-2000:]
        assert "Traceback" not in err
    assert "secret" not in "".join(err for _, err in results)
    zz = results[0][1].splitlines()[-1]
    assert zz.endswith("enqueue it first, or Redis lost its data (turn persistence on)")


# -- a run that vanishes from Redis while the worker runs ---------------------------------------


@pytest.fixture(scope="module")
def demo() -> Iterator[object]:
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    with DemoServer(build_demo_web(), port=0) as server:
        yield server


def enqueue_demo(url: str, run: str, demo: object, sites: int | None = None) -> SiteQueue:
    """Enqueue the demo web's sites (the first `sites` of them) as run `run`."""
    from newscrawl.scale.sitelist import read_site_specs, site_payload

    queue = SiteQueue.from_url(url, run)
    urls = list(demo.site_urls.values())[:sites]  # type: ignore[attr-defined]
    queue.enqueue([(spec.name, site_payload(spec)) for spec in read_site_specs(urls)])
    return queue


def start_logged(command: list[str], log: Path) -> subprocess.Popen[bytes]:
    """The command started with its stdout and stderr into `log`."""
    with log.open("wb") as handle:
        return subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT)


def wait_for(process: subprocess.Popen[bytes], log: Path, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if time.monotonic() > deadline or process.poll() is not None:
            raise AssertionError(f"no {text!r} in the log:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)


def interrupt_a_crawl(
    demo: object,
    tmp_path: Path,
    run: str,
    extra: tuple[str, ...],
    action: Callable[[LocalRedis], None],
) -> tuple[int, str]:
    """Start a worker on the demo web against a Redis of its own, do `action` to that Redis
    once a site is being crawled, and return the worker's exit status and log."""
    server = LocalRedis(tmp_path / "redis").start()
    log = tmp_path / "worker.log"
    try:
        enqueue_demo(server.url, run, demo)
        slow = ("-s", "DOWNLOAD_DELAY=0.2", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1")
        process = start_logged(
            worker_command(server.url, run, tmp_path / "out", *extra, *slow), log
        )
        try:
            wait_for(process, log, ": crawling ", 15)
            action(server)
            code = process.wait(40)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(10)
    finally:
        server.stop()
    return code, log.read_text(errors="replace")


@pytest.mark.slow
def test_worker_stops_when_redis_loses_the_run_mid_crawl(demo: object, tmp_path: Path) -> None:
    """Redis restarted without persistence while a site is crawled: the worker says the run
    is gone and exits non-zero, instead of "lease is gone" and polling forever."""

    def restart_empty(server: LocalRedis) -> None:
        server.kill()
        server.start()  # same port, nothing kept

    code, text = interrupt_a_crawl(demo, tmp_path, "lost", ("--lease", "1.5"), restart_empty)
    assert code == 1, text[-3000:]
    assert text.splitlines()[-1].startswith("worker: run lost is not in Redis at"), text[-3000:]
    assert "gone from Redis while crawling" in text
    assert "handed back" not in text  # there is no queue to hand a site back to


@pytest.mark.slow
def test_idle_worker_stops_when_redis_loses_the_run(
    redis_server: LocalRedis, tmp_path: Path
) -> None:
    """A --forever worker polling a finished run: Redis empties, the worker stops with the
    same message and a non-zero status."""
    queue = SiteQueue.from_url(redis_server.url, "idle")
    queue.clear()
    queue.enqueue(["done.test"])
    lease = queue.lease("someone")
    assert lease is not None and queue.complete("someone", lease.site, pages=1)
    log = tmp_path / "worker.log"
    command = worker_command(
        redis_server.url, "idle", tmp_path / "out", "--forever", "--poll", "0.2"
    )
    process = start_logged(command, log)
    try:
        wait_for(process, log, "on run 'idle'", 15)
        time.sleep(0.5)
        queue.clear()  # what a restart without persistence leaves of the run
        code = process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    text = log.read_text(errors="replace")
    assert code == 1, text[-3000:]
    assert "worker: run idle is not in Redis at" in text.splitlines()[-1], text[-3000:]


@pytest.mark.slow
def test_worker_stops_when_redis_refuses_its_login_mid_run(demo: object, tmp_path: Path) -> None:
    """The Redis password changes while a site is crawled: the worker's next connection is
    refused. Waiting cannot fix that, so the worker says so in its last line and exits 2,
    instead of retrying "Redis unavailable" forever."""

    def change_password(server: LocalRedis) -> None:
        admin = redis.Redis.from_url(server.url)
        admin.config_set("requirepass", "changed")
        admin.client_kill_filter(_type="normal")  # every connection logs in again

    code, text = interrupt_a_crawl(demo, tmp_path, "auth", ("--max-pages", "8"), change_password)
    assert code == 2, text[-3000:]
    last = text.splitlines()[-1]
    assert last.startswith("worker: Redis at") and "refused the login" in last, text[-3000:]


@pytest.mark.slow
def test_a_forever_worker_waits_for_its_run_to_be_enqueued(demo: object, tmp_path: Path) -> None:
    """A worker service started before anything is enqueued: with --forever it waits for the
    run (saying so once) and crawls it once it comes; without, it refuses (tested above)."""
    server = LocalRedis(tmp_path / "redis").start()
    log = tmp_path / "worker.log"
    try:
        out = tmp_path / "out"
        command = worker_command(
            server.url, "later", out, "--forever", "--poll", "0.2", "--max-pages", "5"
        )
        process = start_logged(command, log)
        try:
            wait_for(process, log, "waiting for `newscrawl enqueue`", 15)
            time.sleep(1.0)
            assert process.poll() is None  # still waiting, not refused
            enqueue_demo(server.url, "later", demo, sites=1)
            wait_for(process, log, " done (", 40)
        finally:
            process.terminate()
            process.wait(20)
    finally:
        server.stop()
    text = log.read_text(errors="replace")
    assert text.count("waiting for `newscrawl enqueue`") == 1, text[-3000:]
    assert "run later enqueued: starting" in text
    assert list((out / "pages" / "crawl=later").glob("site=*/*.parquet")), text[-3000:]
