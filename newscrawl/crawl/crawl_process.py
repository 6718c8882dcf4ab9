"""Run the site spider from Python (what `newscrawl crawl`, `newscrawl demo` and the crawl
benchmark share): project settings plus overrides, one CrawlerProcess, the summary back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from newscrawl.crawl.extensions.state import STATE_DIR, crawl_statuses
from newscrawl.storage.writer import new_run_id

if TYPE_CHECKING:
    from scrapy.settings import Settings

__all__ = [
    "FAST_LOCAL",
    "crawl_command",
    "crawl_settings",
    "latest_unfinished",
    "parse_set_options",
    "run_crawl",
]

# For servers on this machine (the demo web, tests): no politeness delays, loopback allowed.
FAST_LOCAL: dict[str, Any] = {
    "NEWSCRAWL_ALLOW_PRIVATE": "loopback",
    "AUTOTHROTTLE_ENABLED": False,
    "DOWNLOAD_DELAY": 0,
    "CONCURRENT_REQUESTS_PER_DOMAIN": 8,
}


def parse_set_options(pairs: list[str] | None) -> dict[str, str]:
    """NAME=VALUE strings (``--set``) as a dict."""
    found: dict[str, str] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ValueError(f"--set needs NAME=VALUE, got {pair!r}")
        found[name.strip()] = value
    return found


def latest_unfinished(out: Path) -> str | None:
    """Id of the most recently updated crawl in `out` that did not finish, if any, unless a
    crawl finished after it: a later run has taken over its sites, and resuming the stopped one
    would pass its sites again over pages the later run already wrote."""
    unfinished: list[tuple[str, str]] = []
    finished = ""
    for crawl, data in crawl_statuses(out).items():
        updated = str(data.get("updated", ""))  # ISO 8601 in UTC: sorts as it reads
        if data.get("status") == "finished":
            finished = max(finished, updated)
        else:
            unfinished.append((updated, crawl))
    latest = max(unfinished) if unfinished else None
    return latest[1] if latest is not None and latest[0] > finished else None


def crawl_settings(
    out: Path, crawl_id: str | None = None, overrides: dict[str, Any] | None = None
) -> Settings:
    """newscrawl's Scrapy settings with the output folder, a JOBDIR per crawl and overrides."""
    os.environ.setdefault("SCRAPY_SETTINGS_MODULE", "newscrawl.settings")
    from scrapy.utils.project import get_project_settings

    settings = get_project_settings()
    crawl_id = crawl_id or new_run_id()
    settings.set("NEWSCRAWL_OUT", str(out), priority="cmdline")
    settings.set("NEWSCRAWL_CRAWL_ID", crawl_id, priority="cmdline")
    settings.set("JOBDIR", str(out / STATE_DIR / crawl_id / "job"), priority="cmdline")
    for name, value in (overrides or {}).items():
        settings.set(name, value, priority="cmdline")
    return settings


def run_crawl(sites: str, settings: Settings) -> dict[str, Any] | None:
    """Crawl `sites` (a site-list path or URLs) in this process; its summary, if it got one
    (also when a full disk kept it from its file). After a crawl stopped by a full disk its
    half-written temporary files are deleted."""
    from scrapy.crawler import CrawlerProcess

    from newscrawl.crawl.extensions.diskfull import remove_temporary_files
    from newscrawl.crawl.extensions.summary import read_summary, run_summary

    process = CrawlerProcess(settings)
    process.crawl("site", sites=sites)
    process.start()
    out, crawl_id = Path(settings["NEWSCRAWL_OUT"]), settings["NEWSCRAWL_CRAWL_ID"]
    summary = run_summary(crawl_id) or read_summary(out, crawl_id)
    if summary is not None and summary.get("disk_full"):
        remove_temporary_files(out, crawl_id)
    return summary


def crawl_command(
    sites: str | os.PathLike[str],
    out: str | os.PathLike[str],
    settings: Iterable[str] = (),
    extra: Iterable[str] = (),
) -> list[str]:
    """argv of a `newscrawl crawl` child process (benchmarks and tests crawl in a process of
    their own, as a user would); `settings` are NAME=VALUE strings, `extra` more options."""
    command = [sys.executable, "-m", "newscrawl.cli", "crawl", str(sites), "--out", str(out)]
    command += extra
    for setting in settings:
        command += ["--set", setting]
    return command
