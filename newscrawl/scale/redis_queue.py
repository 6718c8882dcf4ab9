"""The Redis site queue shared by crawl workers: one site is one unit of work, held under a lease.

Keys of a run live under ``newscrawl:{RUN}:`` (the braces make them one Redis Cluster hash slot,
so the Lua scripts below may touch them all):

A site is known by its name (the output folder name of
`newscrawl.crawl.discovery.site_lists.SiteSpec`); what a
worker needs to crawl it (start URL, page cap) is its payload, a JSON text.

- ``queue``    LIST of site names waiting, popped from the left (FIFO);
- ``seen``     SET of every site ever enqueued in the run, so enqueueing twice crawls once;
- ``specs``    HASH site -> payload;
- ``leased``   ZSET site -> lease deadline (Redis server time, seconds);
- ``owner``    HASH site -> id of the worker holding the lease;
- ``attempts`` HASH site -> how many times it was leased;
- ``done``     HASH site -> JSON record of the worker that finished it;
- ``failed``   HASH site -> reason;
- ``workers``  HASH worker -> server time of its last heartbeat (for `newscrawl status`);
- ``worker_leases`` HASH worker -> the lease it runs with: a worker silent longer is dead.

Every state change is one Lua script, so two workers can never lease the same site and a lease is
either renewed by its owner or reclaimed, never both. Deadlines use the Redis server's clock
(``TIME``), so workers on machines with skewed clocks still agree on who is late.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.exceptions

__all__ = [
    "DEFAULT_LEASE_SECONDS",
    "DEFAULT_MAX_ATTEMPTS",
    "DEFAULT_RUN",
    "Lease",
    "QueueStatus",
    "RedisRefused",
    "RedisUnavailable",
    "SiteQueue",
    "check_positive",
    "check_redis",
    "check_redis_url",
    "check_run_id",
    "connect",
    "retry_redis",
    "run_missing_message",
    "safe_url",
]

logger = logging.getLogger(__name__)

DEFAULT_RUN = "default"
DEFAULT_LEASE_SECONDS = 300.0
# A site whose lease expired this many times is marked failed: it keeps killing workers.
DEFAULT_MAX_ATTEMPTS = 3

# Errors that mean "Redis is not there right now" (down, restarting, still loading its data).
UNAVAILABLE_ERRORS: tuple[type[Exception], ...] = (
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    redis.exceptions.BusyLoadingError,
    redis.exceptions.TryAgainError,
    ConnectionError,
    OSError,
)

KEY_NAMES = (
    "queue", "seen", "specs", "leased", "owner", "attempts", "done", "failed", "workers",
    "worker_leases",
)  # fmt: skip

_NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

# KEYS: queue leased owner attempts failed; ARGV: max_attempts, now
# Put every site whose lease deadline passed back at the head of the queue (or fail it).
_RECLAIM = """
local expired = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
local max_attempts = tonumber(ARGV[1])
for _, site in ipairs(expired) do
  redis.call('ZREM', KEYS[2], site)
  redis.call('HDEL', KEYS[3], site)
  local tries = tonumber(redis.call('HGET', KEYS[4], site) or '0')
  if tries >= max_attempts then
    redis.call('HSET', KEYS[5], site, 'lease expired ' .. tries .. ' times (worker died?)')
  else
    redis.call('LPUSH', KEYS[1], site)
  end
end
"""

# KEYS: queue leased owner attempts failed workers done specs worker_leases
# ARGV: max_attempts, worker, lease_seconds
LEASE_SCRIPT = (
    _NOW
    + _RECLAIM
    + """
redis.call('HSET', KEYS[6], ARGV[2], now)
redis.call('HSET', KEYS[9], ARGV[2], ARGV[3])
local site = redis.call('LPOP', KEYS[1])
-- a site finished late by a worker whose lease had expired is not crawled again
while site and redis.call('HEXISTS', KEYS[7], site) == 1 do
  site = redis.call('LPOP', KEYS[1])
end
if not site then return false end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), site)
redis.call('HSET', KEYS[3], site, ARGV[2])
local attempt = redis.call('HINCRBY', KEYS[4], site, 1)
return {site, attempt, redis.call('HGET', KEYS[8], site) or ''}
"""
)

# KEYS: queue leased owner attempts failed; ARGV: max_attempts
RECLAIM_SCRIPT = _NOW + _RECLAIM + "return #expired\n"

# KEYS: leased owner workers worker_leases; ARGV: worker, lease_seconds, site...
# Returns the sites this worker no longer owns (its lease was reclaimed while it was away, or
# another worker finished the site).
RENEW_SCRIPT = (
    _NOW
    + """
redis.call('HSET', KEYS[3], ARGV[1], now)
redis.call('HSET', KEYS[4], ARGV[1], ARGV[2])
local lost = {}
for i = 3, #ARGV do
  local site = ARGV[i]
  if redis.call('HGET', KEYS[2], site) == ARGV[1] then
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), site)
  else
    table.insert(lost, site)
  end
end
return lost
"""
)

# KEYS: leased owner done failed; ARGV: worker, site, status ('done'|'failed'), detail
# Returns 1 when recorded, 0 when the site was already finished (by another lease holder), or
# when a worker that lost its lease reports a failure while another worker holds the site.
# A site recorded done is no longer leased to anyone: a worker still crawling it learns at its
# next renewal that the lease is gone, and stops.
FINISH_SCRIPT = """
local worker, site = ARGV[1], ARGV[2]
local owner = redis.call('HGET', KEYS[2], site)
if redis.call('HEXISTS', KEYS[3], site) == 1 then
  if owner == worker then
    redis.call('ZREM', KEYS[1], site)
    redis.call('HDEL', KEYS[2], site)
  end
  return 0
end
if ARGV[3] ~= 'done' and owner and owner ~= worker then return 0 end
redis.call('ZREM', KEYS[1], site)
redis.call('HDEL', KEYS[2], site)
if ARGV[3] == 'done' then
  redis.call('HDEL', KEYS[4], site)
  redis.call('HSET', KEYS[3], site, ARGV[4])
else
  redis.call('HSET', KEYS[4], site, ARGV[4])
end
return 1
"""

# KEYS: queue leased owner attempts; ARGV: worker, site
# A worker that stops cleanly hands its site straight back (not counted as an attempt).
GIVE_BACK_SCRIPT = """
if redis.call('HGET', KEYS[3], ARGV[2]) ~= ARGV[1] then return 0 end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('HDEL', KEYS[3], ARGV[2])
redis.call('HINCRBY', KEYS[4], ARGV[2], -1)
redis.call('LPUSH', KEYS[1], ARGV[2])
return 1
"""

# KEYS: queue seen specs; ARGV: site, payload, site, payload...  Returns the sites new to the run.
ENQUEUE_SCRIPT = """
local added = {}
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    redis.call('RPUSH', KEYS[1], ARGV[i])
    table.insert(added, ARGV[i])
  end
end
return added
"""


def check_run_id(run: str) -> str:
    """A run id names Redis keys and the crawl=RUN folders: a plain word."""
    if not run or any(c in run for c in "{}:/\\ \t\n") or run.startswith("."):
        raise ValueError(f"run id must be a plain word (no braces, colons, slashes): {run!r}")
    return run


def check_positive(name: str, value: float) -> float:
    """A duration must be a finite number above 0: NaN slips through `value <= 0`, and an
    infinite lease could never be reclaimed."""
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number above 0, not {value}")
    return value


class RedisUnavailable(RuntimeError):
    """Redis could not be reached within the retry budget."""


class RedisRefused(RuntimeError):
    """Redis (or whatever listens there) answered, but will not serve this client as it is set
    up: a wrong password, a database index out of range, not a Redis server. Waiting cannot
    help, so nothing retries it."""


def safe_url(url: str) -> str:
    """`url` with its password masked, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def check_redis_url(url: str) -> str:
    """Refuse a Redis URL whose database is not a number: redis-py reads `/abc` as db 0."""
    path = urlsplit(url).path.strip("/")
    if path and not path.isdigit():
        where = safe_url(url)
        raise ValueError(f"{where}: the database after the port must be a number, not {path!r}")
    return url


def run_missing_message(run: str, url: str) -> str:
    return (
        f"run {run} is not in Redis at {safe_url(url)}: enqueue it first, or Redis lost its "
        "data (turn persistence on)"
    )


@dataclass(frozen=True, slots=True)
class Lease:
    """A site this worker holds; `attempt` counts leases of the site, this one included."""

    site: str
    attempt: int
    payload: str = ""


@dataclass(frozen=True, slots=True)
class QueueStatus:
    """A snapshot of a run: sites per state, with who holds the leases and why sites failed.

    Each site is in one state only, the furthest it got: done, else failed, else leased, else
    queued (a site finished late by a worker whose lease had lapsed may still sit in the queue
    list or hold a lease until then). `dead` are the workers silent longer than their lease.
    """

    run: str
    queued: list[str]
    leased: dict[str, tuple[str, float]]  # site -> (worker, seconds left on the lease)
    done: dict[str, dict[str, Any]]
    failed: dict[str, str]
    workers: dict[str, float]  # worker -> seconds since its last heartbeat
    dead: list[str] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        return {
            "queued": len(self.queued),
            "leased": len(self.leased),
            "done": len(self.done),
            "failed": len(self.failed),
        }

    @property
    def drained(self) -> bool:
        """True once the run had sites and none is waiting or being crawled."""
        return not self.queued and not self.leased and bool(self.done or self.failed)


def connect(url: str, *, timeout: float = 5.0) -> redis.Redis:
    """A client for `url` with short timeouts, so an outage is noticed instead of hanging;
    ValueError for a URL redis-py would misread."""
    return redis.Redis.from_url(
        check_redis_url(url),
        decode_responses=True,
        socket_timeout=timeout,
        socket_connect_timeout=min(timeout, 3.0),
        health_check_interval=15,
    )


T = TypeVar("T")


def retry_redis(
    call: Callable[[], T],
    what: str,
    *,
    give_up_after: float | None = None,
    max_delay: float = 30.0,
    log: logging.Logger = logger,
) -> T:
    """Run `call`; while Redis is unreachable, warn clearly and retry with exponential backoff.

    `give_up_after` seconds (None: never) bounds the wait, then RedisUnavailable is raised.
    """
    delay = 0.5
    started = time.monotonic()
    warned = False
    while True:
        try:
            result = call()
        except redis.exceptions.AuthenticationError:
            raise  # a ConnectionError, but a wrong password does not get right by waiting
        except UNAVAILABLE_ERRORS as exc:
            waited = time.monotonic() - started
            if give_up_after is not None and waited >= give_up_after:
                raise RedisUnavailable(f"Redis unavailable while trying to {what}: {exc}") from exc
            # the last wait ends at the budget, so giving up takes give_up_after, not up to twice
            pause = delay if give_up_after is None else min(delay, give_up_after - waited)
            log.warning(
                "Redis unavailable (%s) while trying to %s; retrying in %.1fs", exc, what, pause
            )
            warned = True
            time.sleep(pause)
            delay = min(delay * 2, max_delay)
            continue
        if warned:
            log.warning("Redis is back: %s succeeded", what)
        return result


def check_redis(
    client: redis.Redis,
    url: str,
    *,
    give_up_after: float,
    log: logging.Logger = logger,
) -> None:
    """PING the server behind `client`, retrying while it is unreachable for `give_up_after`
    seconds (then RedisUnavailable); RedisRefused when it answers but will not serve us.

    The connection's set-up (AUTH, SELECT of the database) runs with the first command, so a
    wrong password or a database out of range shows here, not in the middle of the work.
    """
    where = safe_url(url)
    try:
        retry_redis(client.ping, f"reach {where}", give_up_after=give_up_after, log=log)
    except redis.exceptions.AuthenticationError as exc:
        raise RedisRefused(f"Redis at {where} refused the login: {exc}") from exc
    except redis.exceptions.InvalidResponse as exc:
        raise RedisRefused(f"{where} does not answer like a Redis server ({exc})") from exc
    except redis.exceptions.ResponseError as exc:
        raise RedisRefused(f"Redis at {where} refused the connection: {exc}") from exc


class SiteQueue:
    """The sites of one run, shared by any number of workers through one Redis server."""

    def __init__(
        self,
        client: redis.Redis,
        run: str = DEFAULT_RUN,
        *,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    ) -> None:
        check_run_id(run)
        check_positive("lease_seconds", lease_seconds)
        self.client = client
        self.run = run
        self.lease_seconds = float(lease_seconds)
        self.max_attempts = int(max_attempts)
        prefix = f"newscrawl:{{{run}}}:"
        self.keys = {name: prefix + name for name in KEY_NAMES}
        self._lease = client.register_script(LEASE_SCRIPT)
        self._reclaim = client.register_script(RECLAIM_SCRIPT)
        self._renew = client.register_script(RENEW_SCRIPT)
        self._finish = client.register_script(FINISH_SCRIPT)
        self._enqueue = client.register_script(ENQUEUE_SCRIPT)
        self._give_back = client.register_script(GIVE_BACK_SCRIPT)

    def runs(self) -> list[str]:
        """The runs this Redis holds sites of (by their `seen` sets), sorted."""
        found = self.client.scan_iter(match="newscrawl:{*}:seen", count=1000)
        names = {key.split("{", 1)[1].rsplit("}", 1)[0] for key in found}
        return sorted(names)

    def exists(self) -> bool:
        """Whether any site was ever enqueued in this run."""
        return bool(self.client.exists(self.keys["seen"]))

    @classmethod
    def from_url(cls, url: str, run: str = DEFAULT_RUN, **kwargs: Any) -> SiteQueue:
        return cls(connect(url), run, **kwargs)

    def _k(self, *names: str) -> list[str]:
        return [self.keys[name] for name in names]

    def enqueue(self, sites: Iterable[str | tuple[str, str]]) -> list[str]:
        """Add sites to the run, each a name or a (name, payload) pair; returns the names that
        were new (a site already enqueued in the run, even if done, is not queued again)."""
        pairs: dict[str, str] = {}
        for site in sites:
            name, payload = (site, site) if isinstance(site, str) else site
            if not name:
                raise ValueError("empty site name")
            pairs.setdefault(name, payload)
        if not pairs:
            return []
        args = [part for pair in pairs.items() for part in pair]
        return [str(s) for s in self._enqueue(keys=self._k("queue", "seen", "specs"), args=args)]

    def lease(self, worker: str) -> Lease | None:
        """Reclaim expired leases, then pop the next site and lease it to `worker` (None: empty)."""
        keys = self._k(
            "queue", "leased", "owner", "attempts", "failed", "workers", "done", "specs",
            "worker_leases",
        )  # fmt: skip
        got = self._lease(keys=keys, args=[self.max_attempts, worker, self.lease_seconds])
        if not got:
            return None
        site, attempt, payload = got
        return Lease(site=str(site), attempt=int(attempt), payload=str(payload))

    def reclaim(self) -> int:
        """Return expired leases to the queue now; how many expired."""
        keys = self._k("queue", "leased", "owner", "attempts", "failed")
        return int(self._reclaim(keys=keys, args=[self.max_attempts]))

    def renew(self, worker: str, sites: Iterable[str]) -> list[str]:
        """Push back the deadlines of `worker`'s leases; returns the sites it no longer holds."""
        args: list[str | float] = [worker, self.lease_seconds, *sites]
        keys = self._k("leased", "owner", "workers", "worker_leases")
        return [str(s) for s in self._renew(keys=keys, args=args)]

    def complete(self, worker: str, site: str, **record: Any) -> bool:
        """Record `site` as done; False if it had already been finished by another lease holder."""
        detail = json.dumps({"worker": worker, **record}, sort_keys=True)
        keys = self._k("leased", "owner", "done", "failed")
        return bool(self._finish(keys=keys, args=[worker, site, "done", detail]))

    def fail(self, worker: str, site: str, reason: str) -> bool:
        """Record `site` as failed (not retried in this run) unless it is already done."""
        keys = self._k("leased", "owner", "done", "failed")
        return bool(self._finish(keys=keys, args=[worker, site, "failed", reason]))

    def give_back(self, worker: str, site: str) -> bool:
        """Return a leased site to the head of the queue now (a worker stopping cleanly)."""
        keys = self._k("queue", "leased", "owner", "attempts")
        return bool(self._give_back(keys=keys, args=[worker, site]))

    def retire(self, worker: str) -> None:
        """Take a worker that stops cleanly off the list of workers."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.hdel(self.keys["workers"], worker)
            pipe.hdel(self.keys["worker_leases"], worker)
            pipe.execute()

    def status(self) -> QueueStatus:
        """A consistent snapshot of the run (one MULTI/EXEC transaction)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.time()
            pipe.lrange(self.keys["queue"], 0, -1)
            pipe.zrange(self.keys["leased"], 0, -1, withscores=True)
            for name in ("owner", "done", "failed", "workers", "worker_leases"):
                pipe.hgetall(self.keys[name])
            (secs, micros), queued, leased, owner, done, failed, seen, leases = pipe.execute()
        now = secs + micros / 1e6
        done = {site: _json_or_text(value) for site, value in done.items()}
        failed = {site: reason for site, reason in failed.items() if site not in done}
        finished = done.keys() | failed.keys()
        held = {
            site: (owner.get(site, "?"), deadline - now)
            for site, deadline in leased
            if site not in finished
        }
        ago = {worker: now - float(beat) for worker, beat in seen.items()}
        return QueueStatus(
            run=self.run,
            queued=list(dict.fromkeys(s for s in queued if s not in finished and s not in held)),
            leased=held,
            done=done,
            failed=failed,
            workers=ago,
            dead=sorted(w for w, t in ago.items() if t > float(leases.get(w, self.lease_seconds))),
        )

    def is_drained(self) -> bool:
        """True once the run had sites and none is queued or leased (cheap: three counts)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.llen(self.keys["queue"])
            pipe.zcard(self.keys["leased"])
            pipe.scard(self.keys["seen"])
            queued, leased, seen = pipe.execute()
        return seen > 0 and queued == 0 and leased == 0

    def clear(self) -> None:
        """Delete every key of the run (start it over)."""
        self.client.delete(*self.keys.values())


def _json_or_text(value: str) -> dict[str, Any]:
    try:
        parsed = json.loads(value)
    except ValueError:
        return {"detail": value}
    return parsed if isinstance(parsed, dict) else {"detail": parsed}
