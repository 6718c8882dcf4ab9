"""Crawl workers that stop or lose their lease, and what `newscrawl status` says about them:
a real redis-server, the demo web over HTTP and real `newscrawl worker` processes."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_distributed_crawl as dc

from newscrawl.cli import main
from newscrawl.scale.redis_queue import SiteQueue
from newscrawl.scale.redis_server import LocalRedis

pytestmark = pytest.mark.redis


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedis]:
    with LocalRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def demo() -> Iterator[object]:
    """The demo web with the fault site, whose /slow answers only when the server stops."""
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web

    with DemoServer(build_demo_web(), port=0, faults=True, slow_seconds=600) as server:
        yield server


@pytest.fixture
def workers() -> Iterator[list[dc.Worker]]:
    started: list[dc.Worker] = []
    yield started
    for worker in started:
        worker.stop()


def new_queue(redis_url: str, run: str, **kwargs: float) -> SiteQueue:
    queue = SiteQueue.from_url(redis_url, run, **kwargs)  # type: ignore[arg-type]
    queue.clear()
    return queue


def enqueue(demo: object, queue: SiteQueue, *names: str) -> None:
    from newscrawl.scale.sitelist import read_site_specs, site_payload

    urls = [demo.site_urls[name] for name in names]  # type: ignore[attr-defined]
    queue.enqueue([(spec.name, site_payload(spec)) for spec in read_site_specs(urls)])


def requests_to(demo: object, site: str) -> int:
    netloc = site.replace("_", ":")
    return sum(r.host == netloc for r in demo.requests)  # type: ignore[attr-defined]


def site_size(demo: object, site: str) -> int:
    """Pages of the demo site the worker names `site` (host_port)."""
    netloc = site.replace("_", ":")
    urls = demo.site_urls  # type: ignore[attr-defined]
    name = next(n for n, url in urls.items() if url.split("//", 1)[1].rstrip("/") == netloc)
    return next(len(s.pages) for s in demo.sites if s.name == name)  # type: ignore[attr-defined]


# -- newscrawl status -------------------------------------------------------------------------


def test_status_counts_a_site_once(redis_server: LocalRedis) -> None:
    queue = new_queue(redis_server.url, "once", lease_seconds=0.3)
    queue.enqueue(["late.test", "requeued.test"])
    slow = queue.lease("slow")
    assert slow is not None and slow.site == "late.test"
    dc.wait_until(lambda: queue.reclaim() == 0 and not queue.status().leased, 10, "expiry")
    # late.test went back to the queue and another worker has it; requeued.test waits
    other = queue.lease("other")
    assert other is not None and other.site == "late.test"
    assert queue.complete("slow", "late.test", pages=3)  # the slow worker finishes it anyway
    status = queue.status()
    assert status.counts == {"queued": 1, "leased": 0, "done": 1, "failed": 0}
    assert queue.renew("other", ["late.test"]) == ["late.test"]  # other learns it is gone
    # a site finished late while it waits in the queue is not counted as queued
    again = queue.lease("third")
    assert again is not None and again.site == "requeued.test"
    dc.wait_until(lambda: queue.reclaim() == 0 and not queue.status().leased, 10, "expiry")
    assert queue.status().queued == ["requeued.test"]
    assert queue.complete("third", "requeued.test", pages=1)
    status = queue.status()
    assert status.counts == {"queued": 0, "leased": 0, "done": 2, "failed": 0}
    assert status.drained
    assert queue.lease("fourth") is None


def test_status_labels_dead_workers(
    redis_server: LocalRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    # each worker's lease is its own: silent past it means dead
    dying = new_queue(redis_server.url, "dead", lease_seconds=0.3)
    living = SiteQueue.from_url(redis_server.url, "dead", lease_seconds=600)
    dying.enqueue(["a.test"])
    assert dying.lease("dying") is not None
    living.renew("living", [])
    dc.wait_until(lambda: dying.status().workers["dying"] > 0.6, 10, "the lease to pass")
    living.renew("living", [])
    status = living.status()
    assert status.dead == ["dying"]
    assert main(["status", "--redis", redis_server.url, "--run", "dead"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines if "DEAD" in line] == ["dying"]
    assert any(line.split()[0] == "living" for line in lines)
    living.retire("living")  # a worker that stops cleanly leaves the list
    assert set(living.status().workers) == {"dying"}


# -- stopping and losing a lease ----------------------------------------------------------------


@pytest.mark.slow
def test_sigterm_hands_the_site_back_before_scrapy_stops(
    demo: object, redis_server: LocalRedis, tmp_path: Path, workers: list[dc.Worker]
) -> None:
    """A download that never ends is in flight (Scrapy's graceful stop waits for it), yet the
    site is back at the head of the queue long before its 60 s lease could have run out."""
    queue = new_queue(redis_server.url, "sigterm", lease_seconds=60)
    enqueue(demo, queue, "faults")
    slow = ("-s", "DOWNLOAD_TIMEOUT=600", "--lease", "60")
    worker = dc.Worker("stopping", redis_server.url, "sigterm", tmp_path / "out", *slow)
    workers.append(worker)
    dc.wait_until(lambda: bool(worker.crawled()), 60, "the worker to start the site")
    site = worker.crawled()[0]
    netloc = site.replace("_", ":")
    hanging = lambda: any(r.host == netloc and r.path == "/slow" for r in demo.requests)  # type: ignore[attr-defined]  # noqa: E731
    dc.wait_until(hanging, 60, "the never-ending download to be in flight")
    assert queue.status().leased[site][0] == "stopping"
    os.kill(worker.process.pid, signal.SIGTERM)
    dc.wait_until(lambda: site in queue.status().queued, 30, "the site back in the queue")
    status = queue.status()
    assert status.leased == {} and status.queued == [site]
    assert worker.process.poll() is None  # Scrapy is still waiting for the download
    lease = queue.lease("next")  # another worker takes it now, not counted as a retry
    assert lease is not None and lease.site == site and lease.attempt == 1


@pytest.mark.slow
def test_worker_that_lost_its_lease_drops_the_site(
    demo: object, redis_server: LocalRedis, tmp_path: Path, workers: list[dc.Worker]
) -> None:
    """Frozen (SIGSTOP) past its lease, the worker's site goes to another; thawed, the worker
    learns it at its next renewal, fetches nothing more of the site, publishes nothing of it
    and crawls the other sites."""
    queue = new_queue(redis_server.url, "lost", lease_seconds=dc.LEASE)
    enqueue(demo, queue, *[n for n in demo.site_urls if n != "faults"][:2])  # type: ignore[attr-defined]
    out = tmp_path / "out"
    slow = ("-s", "DOWNLOAD_DELAY=0.3", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=1")
    worker = dc.Worker("frozen", redis_server.url, "lost", out, *slow)
    workers.append(worker)
    dc.wait_until(lambda: bool(worker.crawled()), 60, "the worker to start a site")
    site = worker.crawled()[0]
    dc.wait_until(lambda: requests_to(demo, site) >= 5, 60, "the worker to be into its site")
    os.kill(worker.process.pid, signal.SIGSTOP)
    try:
        dc.wait_until(lambda: queue.status().leased[site][1] < 0, 30, "the lease to run out")
        taken = queue.lease("thief")
        assert taken is not None and taken.site == site and taken.attempt == 2
    finally:
        os.kill(worker.process.pid, signal.SIGCONT)
    stopped = f"lease of {site} lost; stopped crawling it"
    dc.wait_until(lambda: stopped in worker.text(), 60, "the worker to drop the site")
    fetched = requests_to(demo, site)
    assert f"site pass: {site}," not in worker.text()  # its buffer dropped, not extracted
    assert queue.complete("thief", site, pages=0)
    assert worker.wait() == 0
    assert requests_to(demo, site) == fetched  # not one more request once it stopped
    assert fetched < site_size(demo, site)  # the site was not crawled to the end
    assert not list(out.glob(f"*/crawl=lost/site={site}"))  # nothing of it published
    assert not list((out / "_staging").rglob(f"site={site}"))  # nor left staged
    status = queue.status()
    assert status.counts == {"queued": 0, "leased": 0, "done": 2, "failed": 0}
    assert status.done[site]["worker"] == "thief"
    assert {status.done[s]["worker"] for s in status.done if s != site} == {"frozen"}
    assert "frozen" not in status.workers  # stopped cleanly: off the list
