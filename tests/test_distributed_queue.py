"""The Redis site queue against a real redis-server: leases, reclaim, renew, done/failed, status."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from newscrawl.scale.redis_queue import SiteQueue
from newscrawl.scale.redis_server import LocalRedis

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with LocalRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url


@pytest.fixture
def queue(redis_url: str, request: pytest.FixtureRequest) -> Iterator[SiteQueue]:
    q = SiteQueue.from_url(redis_url, run=request.node.name.replace("[", "_").replace("]", ""))
    q.clear()
    yield q
    q.clear()


def test_run_id_is_checked(redis_url: str) -> None:
    with pytest.raises(ValueError):
        SiteQueue.from_url(redis_url, run="a{b}")


def test_enqueue_is_idempotent_and_fifo(queue: SiteQueue) -> None:
    assert queue.enqueue(["a.test", ("b.test", '{"url": "http://b.test/"}'), "a.test"]) == [
        "a.test",
        "b.test",
    ]
    assert queue.enqueue([("b.test", "other payload"), "c.test"]) == ["c.test"]
    leases = [queue.lease("w1"), queue.lease("w1"), queue.lease("w2")]
    assert [lease.site for lease in leases if lease] == ["a.test", "b.test", "c.test"]
    assert leases[1] is not None and leases[1].payload == '{"url": "http://b.test/"}'
    assert queue.lease("w2") is None
    status = queue.status()
    assert status.counts == {"queued": 0, "leased": 3, "done": 0, "failed": 0}
    assert status.leased["c.test"][0] == "w2"
    assert set(status.workers) == {"w1", "w2"}


def test_concurrent_leases_never_share_a_site(queue: SiteQueue) -> None:
    sites = [f"s{i}.test" for i in range(200)]
    queue.enqueue(sites)
    got: dict[str, list[str]] = {}

    def drain(worker: str) -> None:
        mine = got.setdefault(worker, [])
        while (lease := queue.lease(worker)) is not None:
            mine.append(lease.site)

    threads = [threading.Thread(target=drain, args=(f"w{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [site for mine in got.values() for site in mine]
    assert len(everything) == 200
    assert len(set(everything)) == 200


def test_expired_lease_is_reclaimed_then_failed_after_max_attempts(redis_url: str) -> None:
    queue = SiteQueue.from_url(redis_url, run="expiry", lease_seconds=0.3, max_attempts=2)
    queue.clear()
    queue.enqueue(["x.test"])
    first = queue.lease("dead-worker")
    assert first is not None and first.attempt == 1
    assert queue.lease("other") is None  # still leased
    time.sleep(0.4)
    second = queue.lease("other")
    assert second is not None and second.site == first.site and second.attempt == 2
    time.sleep(0.4)
    assert queue.lease("third") is None  # two expired leases: failed, not requeued
    status = queue.status()
    assert "expired 2 times" in status.failed["x.test"]
    assert status.drained
    queue.clear()


def test_renew_keeps_a_live_lease_and_reports_lost_ones(redis_url: str) -> None:
    queue = SiteQueue.from_url(redis_url, run="renew", lease_seconds=0.5)
    queue.clear()
    queue.enqueue(["a.test", "b.test"])
    a = queue.lease("w1")
    b = queue.lease("w1")
    assert a and b
    for _ in range(4):
        time.sleep(0.2)
        assert queue.renew("w1", [a.site]) == []
    # a was renewed past its first deadline; b was not and gets reclaimed by w2
    again = queue.lease("w2")
    assert again is not None and again.site == b.site
    assert queue.renew("w1", [a.site, b.site]) == [b.site]
    queue.clear()


def test_complete_and_fail(queue: SiteQueue) -> None:
    queue.enqueue(["a.test", "b.test"])
    a = queue.lease("w1")
    b = queue.lease("w1")
    assert a and b
    assert queue.complete("w1", a.site, pages=3, articles=2)
    assert not queue.complete("w2", a.site)  # second finisher is told it was a duplicate
    assert queue.fail("w1", b.site, "start page unreachable")
    status = queue.status()
    assert status.done[a.site] == {"worker": "w1", "pages": 3, "articles": 2}
    assert status.failed == {b.site: "start page unreachable"}
    assert status.counts == {"queued": 0, "leased": 0, "done": 1, "failed": 1}
    assert status.drained and queue.is_drained()
    assert queue.enqueue(["a.test"]) == []  # done in this run: not crawled twice


def test_late_finisher_site_is_not_leased_again(redis_url: str) -> None:
    queue = SiteQueue.from_url(redis_url, run="late", lease_seconds=0.2)
    queue.clear()
    queue.enqueue(["a.test"])
    assert queue.lease("slow")
    time.sleep(0.3)
    assert queue.reclaim() == 1  # back in the queue
    assert queue.complete("slow", "a.test")  # ... but the slow worker did finish it
    assert queue.lease("other") is None
    assert queue.is_drained()
    queue.clear()


def test_restart_with_persistence_keeps_the_queue(tmp_path: Path) -> None:
    with LocalRedis(tmp_path, persist=True) as server:
        queue = SiteQueue.from_url(server.url, run="persist")
        queue.enqueue(["a.test", "b.test"])
        assert queue.lease("w1")
        server.kill()
        server.start()
        status = queue.status()
        assert status.queued == ["b.test"]
        assert list(status.leased) == ["a.test"]


def test_give_back_requeues_at_the_head(queue: SiteQueue) -> None:
    queue.enqueue(["a.test", "b.test"])
    a = queue.lease("w1")
    assert a is not None
    assert not queue.give_back("w2", a.site)  # not w2's lease
    assert queue.give_back("w1", a.site)
    again = queue.lease("w2")
    assert again is not None and again.site == "a.test" and again.attempt == 1


@pytest.mark.slow
def test_enqueue_and_status_commands(
    redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from newscrawl.cli import main

    sites = tmp_path / "sites.csv"
    sites.write_text("url,name,max_pages\nhttp://a.test/,alpha,7\nb.test,,\n")
    base = ["--redis", redis_url, "--run", "cli"]
    SiteQueue.from_url(redis_url, "cli").clear()
    assert main(["enqueue", str(sites), *base]) == 0
    assert main(["enqueue", "http://a.test/", "c.test", *base]) == 0  # a.test is "a.test" here
    assert "enqueued 2 new site(s) of 2" in capsys.readouterr().out
    assert main(["enqueue", "ftp://x.test/", *base]) == 2
    assert "not an http(s) URL" in capsys.readouterr().err
    queue = SiteQueue.from_url(redis_url, "cli")
    lease = queue.lease("w1")
    assert lease is not None and json.loads(lease.payload) == {
        "name": "alpha",
        "url": "http://a.test/",
        "max_pages": 7,
    }
    assert main(["status", *base, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["counts"] == {"queued": 3, "leased": 1, "done": 0, "failed": 0}
    assert shown["leased"]["alpha"]["worker"] == "w1"
    assert main(["status", *base]) == 0
    text = capsys.readouterr().out
    assert text.startswith("run cli: 3 queued, 1 leased, 0 done, 0 failed")
    assert "alpha  by w1, lease ends in" in text
    assert main(["status", "--redis", "redis://127.0.0.1:1/0", "--run", "cli"]) == 1
    capsys.readouterr()
    assert main(["status", "--redis", redis_url, "--run", "clj"]) == 1
    assert "no sites were ever enqueued in run 'clj' (runs: " in capsys.readouterr().err
