"""Settings a crawl is started with, checked before anything is fetched.

A typo in an option must stop the command with one clear line, not run a crawl that writes no
text (an unknown extractor) or end in a traceback halfway (a bad network, log level or number).
`check_settings` reads only the values the user gave (options and ``--set``): the project's own
settings are known to be good.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["check_crawl_id", "check_settings"]


def check_crawl_id(crawl_id: str) -> str:
    """`crawl_id` when it is a plain name (it names a folder under OUT/state): not empty, at
    most 128 characters, no slash, backslash, space or control character, not starting with
    a dot. ValueError otherwise, so no id can name a folder outside OUT."""
    if (
        not crawl_id
        or len(crawl_id) > 128
        or crawl_id.startswith(".")
        or any(c in "/\\" or c.isspace() or not c.isprintable() for c in crawl_id)
    ):
        raise ValueError(
            f"crawl id {crawl_id!r} is not a plain name (no slash, backslash or space, not "
            "starting with a dot, at most 128 characters)"
        )
    return crawl_id


def check_settings(values: Mapping[str, Any]) -> None:
    """Raise ValueError, with a message naming the setting, for the first bad value of
    `values` (the settings a command was asked for)."""
    from scrapy.settings import Settings

    settings = Settings(values)
    _check_extractors(settings)
    _check_typed(settings, values)
    if "NEWSCRAWL_ALLOW_PRIVATE" in values:
        _check_allow_private(values["NEWSCRAWL_ALLOW_PRIVATE"])
    if "LOG_LEVEL" in values and not _is_log_level(values["LOG_LEVEL"]):
        known = "CRITICAL, ERROR, WARNING, INFO, DEBUG"
        raise ValueError(f"log level {values['LOG_LEVEL']!r} is not one of {known}")
    if "MAX_PAGES_PER_SITE" in values and settings.getint("MAX_PAGES_PER_SITE") < 0:
        raise ValueError("the page cap (--max-pages, MAX_PAGES_PER_SITE) must be 0 or more")
    warc = values.get("NEWSCRAWL_WARC_DIR")
    if warc and Path(str(warc)).exists() and not Path(str(warc)).is_dir():
        raise ValueError(f"--warc {warc}: exists and is not a folder")
    if values.get("NEWSCRAWL_CRAWL_ID"):
        check_crawl_id(str(values["NEWSCRAWL_CRAWL_ID"]))


def _check_extractors(settings: Any) -> None:
    from newscrawl.extractors import EXTRACTORS
    from newscrawl.settings import NEWSCRAWL_EXTRACTORS

    names = settings.getlist("NEWSCRAWL_EXTRACTORS")
    unknown = [name for name in names if name not in EXTRACTORS]
    if unknown:
        raise ValueError(
            f"unknown extractor {unknown[0]!r} (known: {', '.join(sorted(EXTRACTORS))})"
        )
    primary = settings.get("NEWSCRAWL_PRIMARY_EXTRACTOR")
    chosen = names or NEWSCRAWL_EXTRACTORS
    if primary and primary not in chosen:
        raise ValueError(
            f"primary extractor {primary!r} is not among the extractors ({', '.join(chosen)})"
        )


def _check_typed(settings: Any, values: Mapping[str, Any]) -> None:
    """A value given as text for a setting whose default is a bool or a number must read as
    one (what Scrapy's `getbool`/`getint`/`getfloat` will do with it later)."""
    from scrapy.settings import default_settings

    from newscrawl import settings as project

    for name, value in values.items():
        if not isinstance(value, str) or name in _OWN_READERS:
            continue
        default = getattr(project, name, getattr(default_settings, name, None))
        kind, read = _READERS.get(type(default), (None, None))
        if read is None:
            continue
        try:
            read(settings, name)
        except (TypeError, ValueError):
            raise ValueError(f"{name}={value!r}: not {kind}") from None


# Settings whose text has a reader of its own (checked apart): not only true or false.
_OWN_READERS = frozenset({"NEWSCRAWL_ALLOW_PRIVATE"})
# A whole-number default does not make a whole-number setting: Scrapy reads DOWNLOAD_TIMEOUT
# (180) as a float, so numbers are checked as numbers.
_READERS = {
    bool: ("true or false (1/0, yes/no)", lambda s, n: s.getbool(n)),
    int: ("a number", lambda s, n: s.getfloat(n)),
    float: ("a number", lambda s, n: s.getfloat(n)),
}


def _check_allow_private(value: Any) -> None:
    from newscrawl.crawl.private import parse_allow_private

    try:
        parse_allow_private(value)
    except ValueError:
        raise ValueError(
            f"--allow-private {value!r}: not a network (give loopback, CIDRs such as "
            "10.0.0.0/8, or true)"
        ) from None


def _is_log_level(value: Any) -> bool:
    return isinstance(value, str) and value.upper() in logging.getLevelNamesMapping()
