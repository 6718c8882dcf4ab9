"""The end-of-crawl summary: pages fetched per site, articles written, errors by kind.

Logged when the spider closes and written to ``NEWSCRAWL_OUT/.newscrawl/<crawl>/summary.json``
(the `newscrawl crawl` and `newscrawl demo` commands print it from there).

Pages and articles, per site and in total (``pages``, ``articles``), count the whole crawl: a
resumed run includes what earlier runs of the crawl stored. What this run itself did is
``pages_fetched`` (pages not stored before; ``pages_per_s`` is their rate), ``articles_written``
and ``rows_written``; ``resumed`` gives the pages and articles stored before it started.

An incremental run (earlier crawls in the same folder) also says per site what it found
(``incremental``): new articles, changed (a new version written to `versions`), unchanged
(stored articles not fetched again, or fetched with the same text), ``not_modified`` (304
answers to conditional requests), duplicates, ``refetched`` (stored listing pages fetched again)
and ``redesigned`` (the site's template changed: its site pass used only pages of the new
design). ``status`` is "ok", "partial" (some sites failed) or "failed" (the crawl did not
finish, or every site failed); `newscrawl crawl` exits 0, 3 and 1 for them. A site fails when
it yields no page at all: its start page could not be fetched (a network error, an HTTP error,
robots.txt disallows it, not HTML), or the crawl finished without one page of it fetched or
revalidated; its ``failure`` says why.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

from scrapy import signals

from newscrawl.crawl.errors import KINDS, SAMPLES_PER_KIND, ErrorReport, error_report
from newscrawl.crawl.extensions.diskfull import (
    DISK_FULL_REASON,
    DISK_FULL_STAT,
    DROPPED,
    disk_full_message,
    is_disk_full,
    write_atomic,
)
from newscrawl.crawl.extensions.state import CrawlState, crawl_state
from newscrawl.storage.writer import read_columns

if TYPE_CHECKING:
    from pathlib import Path

    from scrapy import Spider
    from scrapy.crawler import Crawler

__all__ = ["CrawlSummary", "format_summary", "kind_lines", "read_summary", "run_summary"]

logger = logging.getLogger(__name__)
# Kinds that are the crawler declining, not the web failing.
SKIP_KINDS = (
    "robots_disallowed",
    "offsite",
    "cap_reached",
    "trap",
    "private_address",
    "redirect_scheme",
    "not_html",
    "unsafe_xml",
    "decompression_bomb",
    "too_large",
    "after_cap",
)


def _site_stat(stats: dict[str, Any], site: str, name: str) -> int:
    return int(stats.get(f"newscrawl/site/{site}/{name}", 0))


# Per-site counters of an incremental run (stats newscrawl/site/<name>/<counter>).
INCREMENTAL_COUNTERS = (
    "changed",
    "unchanged",
    "not_modified",
    "duplicates",
    "refetched",
    "redesigned",
)


def _incremental(stats: dict[str, Any], site: str) -> dict[str, int]:
    found = {name: _site_stat(stats, site, name) for name in INCREMENTAL_COUNTERS}
    found["unchanged"] += _site_stat(stats, site, "unchanged_fetched")
    # stored articles not found changed, whether this run reached them or not
    stored = _site_stat(stats, site, "stored_articles") - found["changed"]
    found["unchanged"] = max(found["unchanged"], stored)
    # the share of the new pages' template never seen on the stored ones (a redesign: >= 50)
    found["template_unseen_pct"] = _site_stat(stats, site, "template_unseen_pct")
    return {"new": _site_stat(stats, site, "articles"), **found}


def _site_failure(
    stats: dict[str, Any], site: str, errors: Counter[str] | dict[str, int], finished: bool
) -> str:
    """Why the site failed, or "" when it did not. A site fails when nothing of it was reached
    (no page fetched or revalidated) and either the crawl finished or its start page failed
    for a reason that fails a site (an unfinished crawl had no chance at a site it did not
    start). A site whose home page fails but whose sitemap works is not failed."""
    reached = ("pages", "refetched", "not_modified", "unchanged")
    if any(_site_stat(stats, site, name) for name in reached):
        return ""
    if not (finished or _site_stat(stats, site, "failed")):
        return ""
    start = stats.get(f"newscrawl/site/{site}/start_failure")
    if start:
        return f"no page: {start}"
    found = sorted(errors.items(), key=lambda kv: -kv[1])
    kinds = ", ".join(f"{KINDS.get(kind, kind)} {count}" for kind, count in found)
    return f"no page fetched ({kinds})" if kinds else "no page fetched"


def crawl_status(reason: str, sites: dict[str, dict[str, Any]]) -> str:
    """ "ok", "partial" (some sites failed) or "failed" (not finished, or every site failed)."""
    failed = sum(bool(site.get("failed")) for site in sites.values())
    if reason != "finished" or (sites and failed == len(sites)):
        return "failed"
    return "partial" if failed else "ok"


def _internal_errors(stats: dict[str, Any]) -> dict[str, int]:
    """Exceptions in newscrawl's own callbacks and pipelines (bugs, not the web's fault)."""
    found = {"spider_exception": int(stats.get("spider_exceptions/count", 0) or 0)}
    found["log_error"] = int(stats.get("log_count/ERROR", 0) or 0)
    return {k: v for k, v in found.items() if v}


def stored_articles_per_site(state: CrawlState) -> Counter[str]:
    """Rows flagged `is_article` per site in the crawl's complete `articles` files."""
    found: Counter[str] = Counter()
    root = state.dataset_root("articles")
    for _, parts, columns in read_columns(root, ["is_article"], {"crawl": state.crawl_id}):
        found[parts.get("site", "")] += sum(bool(flag) for flag in columns["is_article"])
    return found


def build_summary(
    crawler: Crawler,
    reason: str,
    elapsed: float,
    stored: tuple[Counter[str], Counter[str]] | None = None,
) -> dict[str, Any]:
    """The summary; `stored` is (pages, articles) per site stored before the run started."""
    stats = crawler.stats.get_stats() if crawler.stats else {}
    if stats.get(DISK_FULL_STAT):
        reason = DISK_FULL_REASON  # stopped as Ctrl-C stops a crawl, for this reason
    report = error_report(crawler)
    state = crawl_state(crawler)
    stored_pages, stored_articles = stored or (Counter(), Counter())
    spider = crawler.spider
    names = list(getattr(spider, "sites", {}) or report.by_site)
    sites: dict[str, dict[str, Any]] = {}
    for name in names:
        errors = dict(report.by_site.get(name, {}))
        failure = _site_failure(stats, name, errors, reason == "finished")
        sites[name] = {
            "pages": _site_stat(stats, name, "pages"),
            "articles": stored_articles[name] + _site_stat(stats, name, "articles"),
            "rows": _site_stat(stats, name, "rows"),
            "errors": errors,
            "incremental": _incremental(stats, name),
            "failed": bool(failure),
            "failure": failure,
        }
    pages = sum(s["pages"] for s in sites.values())
    fetched = max(pages - sum(stored_pages[name] for name in names), 0)
    return {
        "crawl_id": state.crawl_id,
        "out": str(state.out),
        "reason": reason,
        "status": crawl_status(reason, sites),
        "failed_sites": sorted(name for name, site in sites.items() if site["failed"]),
        "incremental": any(
            site["incremental"][name] for site in sites.values() for name in INCREMENTAL_COUNTERS
        ),
        "elapsed_s": round(elapsed, 2),
        "pages": pages,
        "articles": sum(s["articles"] for s in sites.values()),
        "pages_fetched": fetched,
        "pages_per_s": round(fetched / elapsed, 2) if elapsed > 0 else 0.0,
        "resumed": {
            "pages": sum(stored_pages[name] for name in names),
            "articles": sum(stored_articles[name] for name in names),
        },
        "articles_written": int(stats.get("newscrawl/written/articles_true", 0)),
        "rows_written": {
            "articles": int(stats.get("newscrawl/written/articles", 0)),
            "pages": int(stats.get("newscrawl/written/pages", 0)),
            "nodes": int(stats.get("newscrawl/written/nodes", 0)),
        },
        # "No space left on device: PATH" when a full disk stopped the crawl
        "disk_full": str(stats.get(DISK_FULL_STAT, "") or ""),
        "replayed": int(stats.get("newscrawl/replayed", 0)),
        "skipped_as_written": int(stats.get("newscrawl/written/skipped", 0)),
        "requests": int(stats.get("downloader/request_count", 0)),
        "errors": {**dict(report.counts), **_internal_errors(stats)},
        "samples": {k: list(v) for k, v in report.samples.items()},
        "links": {
            key.rsplit("/", 1)[-1]: int(value)
            for key, value in stats.items()
            if key.startswith("newscrawl/links/")
        },
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        # the largest of the crawl's child processes (the parse pool's workers, ended by now)
        "peak_rss_workers_mb": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
        ),
        # the largest site pass worker's, as its jobs said (the forkserver's children)
        "peak_rss_sitepass_mb": float(stats.get("newscrawl/sitepass/peak_rss_mb", 0) or 0),
        # site passes split over the workers (NEWSCRAWL_SITEPASS_SPLIT_PAGES)
        "site_passes_split": int(stats.get("newscrawl/sitepass/split_sites", 0)),
        "sites": sites,
    }


def format_summary(summary: dict[str, Any]) -> str:
    """The summary as a few lines of plain text."""
    resumed = summary.get("resumed") or {}
    rate = f"{summary['pages_per_s']:.1f}/s"
    articles = summary.get("articles", summary["articles_written"])
    counts = (
        f"{summary['pages']} pages, {articles} articles in the whole crawl"
        if resumed.get("pages")
        else f"{summary['pages']} pages ({rate}), {articles} articles written"
    )
    lines = [
        f"crawl {summary['crawl_id']} ({summary['reason']}) in {summary['elapsed_s']:.1f} s: "
        f"{counts}, peak memory {summary['peak_rss_mb']:.0f} MB",
    ]
    if summary.get("disk_full"):
        lines.append(f"stopped: disk full ({summary['disk_full']})")
    if resumed.get("pages") or summary.get("replayed"):
        lines.append(
            f"resumed: {resumed.get('pages', 0)} pages and {resumed.get('articles', 0)} "
            f"articles stored before this run; this run fetched "
            f"{summary.get('pages_fetched', 0)} new pages ({rate}) and wrote "
            f"{summary['articles_written']} articles; "
            f"{summary.get('replayed', 0)} stored pages replayed, not fetched again"
        )
    width = max([len(n) for n in summary["sites"]] + [4])
    lines.append(f"  {'site':<{width}}  pages  articles  errors")
    for name, site in summary["sites"].items():
        errors = sum(c for k, c in site["errors"].items() if k not in SKIP_KINDS)
        failed = "  FAILED" if site.get("failed") else ""
        lines.append(
            f"  {name:<{width}}  {site['pages']:>5}  {site['articles']:>8}  {errors:>6}{failed}"
        )
    failures = [(n, s.get("failure")) for n, s in summary["sites"].items() if s.get("failed")]
    if failures:
        lines.append("failed sites:")
        lines += [f"  {name}: {why or 'no page fetched'}" for name, why in failures]
    if summary.get("incremental"):
        lines += _incremental_lines(summary["sites"], width)
    problems = {k: v for k, v in summary["errors"].items() if k not in SKIP_KINDS}
    skipped = {k: v for k, v in summary["errors"].items() if k in SKIP_KINDS}
    for title, group in (("errors", problems), ("refused or skipped", skipped)):
        lines += kind_lines(title, group, summary["samples"], KINDS, (36, 5))
    if not problems and not skipped:
        lines.append("no errors")
    lines.append(f"output: {summary['out']}")
    return "\n".join(lines)


def kind_lines(
    title: str,
    counts: dict[str, int],
    examples: dict[str, list[str]],
    names: dict[str, str],
    widths: tuple[int, int],
) -> list[str]:
    """A report's section: `title`, then each kind (most first; ties in the order of `counts`)
    by its name, its count and its first example, in columns of `widths`; none when empty."""
    if not counts:
        return []
    lines = [f"{title}:"]
    for kind, count in sorted(counts.items(), key=lambda kv: -kv[1]):
        example = (examples.get(kind) or [""])[0]
        lines.append(f"  {names.get(kind, kind):<{widths[0]}} {count:>{widths[1]}}  e.g. {example}")
    return lines


def _incremental_lines(sites: dict[str, Any], width: int) -> list[str]:
    """The per-site table of an incremental run."""
    lines = [
        "incremental (earlier crawls in this folder):",
        f"  {'site':<{width}}    new  changed  unchanged    304  duplicates  refetched",
    ]
    for name, site in sites.items():
        c = site.get("incremental") or {}
        flag = "  REDESIGNED" if c.get("redesigned") else ""
        lines.append(
            f"  {name:<{width}}  {c.get('new', 0):>5}  {c.get('changed', 0):>7}  "
            f"{c.get('unchanged', 0):>9}  {c.get('not_modified', 0):>5}  "
            f"{c.get('duplicates', 0):>10}  {c.get('refetched', 0):>9}{flag}"
        )
    return lines


# The summary of each crawl this process ran, by crawl id: what `newscrawl crawl` prints even
# when a full disk kept it from summary.json.
_RUN_SUMMARIES: dict[str, dict[str, Any]] = {}


def run_summary(crawl_id: str) -> dict[str, Any] | None:
    """The summary of crawl `crawl_id` as this process last built it (None if it did not)."""
    return _RUN_SUMMARIES.get(crawl_id)


def read_summary(out: str | os.PathLike[str], crawl_id: str) -> dict[str, Any] | None:
    from pathlib import Path

    path = Path(out) / ".newscrawl" / crawl_id / "summary.json"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


class ErrorSamples(logging.Handler):
    """A log handler keeping the first lines of the first errors logged, as the examples of
    the summary's "errors logged" (and of "exception in a spider callback")."""

    def __init__(self, report: ErrorReport) -> None:
        super().__init__(logging.ERROR)
        self.report = report

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, DROPPED, False):
            return  # not shown, not counted
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = str(record.msg)
        lines = message.strip().splitlines() or [record.levelname]
        text = lines[0] if len(lines[0]) <= 300 else lines[0][:297] + "..."
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {str(exc)[:200]}"
        kinds = ["log_error"]
        if message.startswith("Spider error processing"):
            kinds.append("spider_exception")
        for kind in kinds:
            samples = self.report.samples[kind]
            if len(samples) < SAMPLES_PER_KIND:
                samples.append(text)


class CrawlSummary:
    """Extension: build, log and store the summary when the spider closes."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.started = time.monotonic()
        self.stored: tuple[Counter[str], Counter[str]] = (Counter(), Counter())
        self.errors = ErrorSamples(error_report(crawler))
        crawler.signals.connect(self.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(self.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(self._stop_samples, signal=signals.engine_stopped)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CrawlSummary:
        return cls(crawler)

    def _stop_samples(self) -> None:
        logging.getLogger().removeHandler(self.errors)

    def spider_opened(self, spider: Spider) -> None:
        logging.getLogger().addHandler(self.errors)
        self.started = time.monotonic()
        state = crawl_state(self.crawler)
        self.stored = (Counter(state.site_pages), stored_articles_per_site(state))

    def spider_closed(self, spider: Spider, reason: str) -> Path:
        elapsed = time.monotonic() - self.started
        summary = build_summary(self.crawler, reason, elapsed, self.stored)
        state = crawl_state(self.crawler)
        _RUN_SUMMARIES[state.crawl_id] = summary
        path = state.state_dir / "summary.json"
        try:
            state.state_dir.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(summary, indent=1, default=str))
        except OSError as err:
            if not is_disk_full(err):
                raise
            summary["disk_full"] = summary["disk_full"] or disk_full_message(err)
            logger.error("summary not written: %s", disk_full_message(err))
        logger.info("newscrawl summary\n%s", format_summary(summary))
        return path
