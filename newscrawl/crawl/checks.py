"""Settings a crawl is started with, checked before anything is fetched.

A typo in an option must stop the command with one clear line, not run a crawl that writes no
text (an unknown extractor) or end in a traceback halfway (a bad network, log level or number).
`check_settings` reads only the values the user gave (options and ``--set``): the project's own
settings are known to be good. An optional component a value names (chromium geometry and the
Playwright it drives, a Scrapy class path such as scrapy-playwright's download handler) must be
there now: a crawl would otherwise fetch, and only then fail page by page or site by site.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "EXTRAS",
    "check_components",
    "check_crawl_id",
    "check_settings",
    "known_settings",
    "setting_list",
]

logger = logging.getLogger(__name__)

# Settings read with a default in the code that reads them, not in newscrawl.settings: the
# distributed worker's, the ingest's, the WARC writer's file prefix, and scrapy-redis's URL.
_READ_ELSEWHERE = frozenset(
    {
        "NEWSCRAWL_INGEST_OPEN_BYTES",
        "NEWSCRAWL_INGEST_OPEN_PAGES",
        "NEWSCRAWL_INGEST_OPEN_SITES",
        "NEWSCRAWL_INGEST_OUT",
        "NEWSCRAWL_LEASE_SECONDS",
        "NEWSCRAWL_MAX_ATTEMPTS",
        "NEWSCRAWL_OUT_ROOT",
        "NEWSCRAWL_PARQUET_SYNC_FOLDERS",
        "NEWSCRAWL_POLL_SECONDS",
        "NEWSCRAWL_REDIS_MAX_BACKOFF",
        "NEWSCRAWL_REDIS_START_WAIT",
        "NEWSCRAWL_RUN",
        "NEWSCRAWL_WARC_PREFIX",
        "NEWSCRAWL_WORKER_FOREVER",
        "NEWSCRAWL_WORKER_ID",
        "REDIS_URL",
    }
)
_OURS = "NEWSCRAWL_"
# The optional packages a command or setting may need, and the extra that installs each.
EXTRAS = {
    "redis": "distributed",
    "scrapy_redis": "distributed",
    "dask": "distributed",
    "distributed": "distributed",
    "playwright": "render",
    "trafilatura": "bench",
    "pandas": "bench",
}
# Scrapy settings that are dicts of components (class paths) without a <NAME>_BASE of defaults.
_COMPONENT_DICTS = frozenset({"ADDONS"})
_CLASS_PATH = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


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

    _check_names(values)
    settings = Settings(values)
    _check_extractors(settings)
    _check_typed(settings, values)
    _check_ranges(settings, values)
    if "NEWSCRAWL_SITE_METHOD" in values:
        from newscrawl.template.sitemethods import check_site_method

        check_site_method(str(values["NEWSCRAWL_SITE_METHOD"]))
    _check_learned_model(settings)
    check_components(values)
    if "NEWSCRAWL_ALLOW_PRIVATE" in values:
        _check_allow_private(values["NEWSCRAWL_ALLOW_PRIVATE"])
    if "LOG_LEVEL" in values and not _is_log_level(values["LOG_LEVEL"]):
        known = "CRITICAL, ERROR, WARNING, INFO, DEBUG"
        raise ValueError(f"log level {values['LOG_LEVEL']!r} is not one of {known}")
    if "MAX_PAGES_PER_SITE" in values and settings.getint("MAX_PAGES_PER_SITE") < 0:
        raise ValueError("the page cap (--max-pages, MAX_PAGES_PER_SITE) must be 0 or more")
    warc = values.get("NEWSCRAWL_WARC_DIR")
    if warc:
        _check_warc_dir(Path(str(warc)))
    if values.get("NEWSCRAWL_CRAWL_ID"):
        check_crawl_id(str(values["NEWSCRAWL_CRAWL_ID"]))


def known_settings() -> frozenset[str]:
    """Every setting name Scrapy or newscrawl reads."""
    from scrapy.settings import default_settings

    from newscrawl import settings as ours

    names = {n for module in (default_settings, ours) for n in dir(module) if n.isupper()}
    return frozenset(names) | _READ_ELSEWHERE


def _check_names(values: Mapping[str, Any]) -> None:
    """A NEWSCRAWL_ name the project does not read is a typo (the prefix is ours), and stops the
    command; any other unknown name only gets a warning, as a third-party middleware or
    extension may read it."""
    from newscrawl.extractors.learned import MODEL_ENV

    known = known_settings()
    for name in values:
        if name in known:
            continue
        if name == MODEL_ENV:
            raise ValueError(
                f"{name} is read from the environment, not from the settings: run "
                f"`{name}=FILE newscrawl ...`"
            )
        hint = _closest(name, known)
        if name.startswith(_OURS):
            raise ValueError(f"unknown setting {name}{hint}: newscrawl reads no such setting")
        logger.warning("setting %s is not one Scrapy or newscrawl reads%s", name, hint)


def _closest(name: str, known: frozenset[str]) -> str:
    """A hint naming the known setting most like `name` ("" when none is). Our names are
    compared without their shared prefix, which would make any two of them look alike."""
    if name.startswith(_OURS):
        ours = {n.removeprefix(_OURS): n for n in known if n.startswith(_OURS)}
        close = difflib.get_close_matches(name.removeprefix(_OURS), ours, n=1, cutoff=0.75)
        close = [ours[c] for c in close]
    else:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.8)
    return f" (did you mean {close[0]}?)" if close else ""


def check_components(values: Mapping[str, Any]) -> None:
    """Raise ValueError, with one line naming the setting (and the pip extra that installs a
    missing package), when a component `values` names cannot be loaded: NEWSCRAWL_GEOMETRY's
    browser and its driver, and every class path of Scrapy's component settings (middlewares,
    pipelines, extensions, download handlers, scheduler, queues...)."""
    if "NEWSCRAWL_GEOMETRY" in values:
        from newscrawl.template.geometry import GeometryError, check_geometry

        try:
            check_geometry(str(values["NEWSCRAWL_GEOMETRY"]))
        except GeometryError as err:
            raise ValueError(str(err)) from None
    for name, value in values.items():
        for path in _class_paths(name, value):
            _load_component(name, path)


def _class_paths(name: str, value: Any) -> list[str]:
    """The class paths `value` names when `name` is a Scrapy component setting (a dict of
    components, or one class path); disabled (None) entries and objects are not paths."""
    from scrapy.settings import BaseSettings, default_settings

    default = getattr(default_settings, name, None)
    if hasattr(default_settings, f"{name}_BASE") or name in _COMPONENT_DICTS:
        try:
            found = BaseSettings({name: value}).getdict(name)
        except (TypeError, ValueError):
            raise ValueError(f"{name}={value!r}: not a JSON object") from None
        # {path: order} for middlewares and the like, {scheme: path} for download handlers
        paths = [v if isinstance(v, str) else k for k, v in found.items() if v is not None]
        return [p for p in paths if isinstance(p, str) and _CLASS_PATH.fullmatch(p)]
    named = value.strip() if isinstance(value, str) else ""
    one_class = isinstance(default, str) and _CLASS_PATH.fullmatch(default)
    return [named] if one_class and _CLASS_PATH.fullmatch(named) else []


def _load_component(name: str, path: str) -> None:
    from scrapy.utils.misc import load_object

    try:
        load_object(path)
    except ModuleNotFoundError as err:
        missing = err.name or path
        extra = EXTRAS.get(missing.split(".")[0])
        hint = f": pip install 'newscrawl[{extra}]'" if extra else ""
        raise ValueError(f"{name} names {path}, but there is no module {missing}{hint}") from None
    except (ImportError, NameError, ValueError) as err:  # no such name in the module
        raise ValueError(f"{name} names {path}, which cannot be loaded ({err})") from None


def _check_extractors(settings: Any) -> None:
    from newscrawl.extractors import EXTRACTORS
    from newscrawl.settings import NEWSCRAWL_EXTRACTORS

    names = setting_list(settings, "NEWSCRAWL_EXTRACTORS")
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


def setting_list(settings: Any, name: str) -> list[str]:
    """A list setting, given as a list, as comma-separated text or as a JSON list (as
    docs/settings.md and ``settings.py`` write it): Scrapy's `getlist` alone would split
    '["learned", "cetd-tpc"]' at its comma."""
    value = settings.get(name)
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            found = json.loads(value)
        except ValueError:
            raise ValueError(f"{name}={value!r}: not a JSON list of names") from None
        if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
            raise ValueError(f"{name}={value!r}: not a JSON list of names")
        return [v.strip() for v in found if v.strip()]
    return [v.strip() for v in settings.getlist(name) if v.strip()]


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


def _check_ranges(settings: Any, values: Mapping[str, Any]) -> None:
    """Numbers the crawl cannot run with: a negative site limit would start no site at all."""
    for name, low in _LOWEST.items():
        if name in values and settings.getfloat(name) < low:
            raise ValueError(f"{name}={values[name]!r}: must be {low} or more")
    if "NEWSCRAWL_EXTRACTOR_MAX_NODES" in values:
        for extractor, budget in settings.getdict("NEWSCRAWL_EXTRACTOR_MAX_NODES").items():
            if not isinstance(budget, int | float) or isinstance(budget, bool) or budget < 0:
                raise ValueError(
                    f"NEWSCRAWL_EXTRACTOR_MAX_NODES: {extractor!r} needs a number of elements "
                    f"(0 for no budget), not {budget!r}"
                )


# The lowest value each number setting accepts (-1 where it means one per core).
_LOWEST = {
    "NEWSCRAWL_MAX_ACTIVE_SITES": 0,
    "NEWSCRAWL_MAX_PAGE_NODES": 1,
    "NEWSCRAWL_MAX_QUEUED_PER_SITE": 0,
    "NEWSCRAWL_PARSE_WORKERS": -1,
    "NEWSCRAWL_SITEPASS_WORKERS": -1,
    "NEWSCRAWL_SITEPASS_SPLIT_PAGES": 0,
    "NEWSCRAWL_SITELEVEL_MAX_BYTES": 0,
    "NEWSCRAWL_FLUSH_SECONDS": 0,
    "NEWSCRAWL_FLUSH_ROWS": 0,
    "NEWSCRAWL_PARQUET_ROW_GROUP_ROWS": 1,
    "NEWSCRAWL_PARQUET_ROW_GROUP_BYTES": 1,
    "NEWSCRAWL_PARQUET_FILE_ROWS": 1,
    "NEWSCRAWL_PARQUET_FILE_SECONDS": 0,
    "NEWSCRAWL_WARC_MAX_BYTES": 1,
    "NEWSCRAWL_RETRY_AFTER_MAX": 0,
}


def _check_learned_model(settings: Any) -> None:
    """A learned extractor's model named by the user (its config or NEWSCRAWL_EXTRACTOR_MODEL)
    must load: the crawl would otherwise fall back to CETD-TPC with only a warning in the log.
    The shipped model is the project's and not checked here."""
    from newscrawl.extractors.learned import MODEL_ENV, check_extractor_model

    names = setting_list(settings, "NEWSCRAWL_EXTRACTORS")
    if names and "learned" not in names:
        return
    named = settings.getdict("NEWSCRAWL_EXTRACTOR_CONFIG").get("learned") or {}
    path = named.get("model") if isinstance(named, dict) else None
    source = "NEWSCRAWL_EXTRACTOR_CONFIG learned model"
    if not path and os.environ.get(MODEL_ENV):
        path, source = os.environ[MODEL_ENV], MODEL_ENV
    if not path:
        return
    try:
        check_extractor_model(str(path))
    except (OSError, ValueError) as err:
        raise ValueError(f"{source} {path}: {err}") from None


def _check_warc_dir(folder: Path) -> None:
    """The WARC folder exists or can be made (made now: the crawl writes there anyway)."""
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--warc {folder}: exists and is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"--warc {folder}: cannot make the folder ({err.strerror})") from None


# Settings whose text has a reader of its own (checked apart): not only true or false.
_OWN_READERS = frozenset({"NEWSCRAWL_ALLOW_PRIVATE"})
# A whole-number default does not make a whole-number setting: Scrapy reads DOWNLOAD_TIMEOUT
# (180) as a float, so numbers are checked as numbers.
_READERS = {
    bool: ("true or false (1/0, yes/no)", lambda s, n: s.getbool(n)),
    dict: ("a JSON object", lambda s, n: s.getdict(n)),
    int: ("a number", lambda s, n: s.getfloat(n)),
    float: ("a number", lambda s, n: s.getfloat(n)),
}


def _check_allow_private(value: Any) -> None:
    from newscrawl.crawl.middlewares.private import parse_allow_private

    try:
        parse_allow_private(value)
    except ValueError:
        raise ValueError(
            f"--allow-private {value!r}: not a network (give loopback, CIDRs such as "
            "10.0.0.0/8, or true)"
        ) from None


def _is_log_level(value: Any) -> bool:
    return isinstance(value, str) and value.upper() in logging.getLevelNamesMapping()
