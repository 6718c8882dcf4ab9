"""Options several `newscrawl` commands share (crawl, worker, demo, ingest; enqueue, worker,
status) and the Scrapy settings they ask for. The CLI layer: commands import it, nothing else."""

from __future__ import annotations

import argparse
from pathlib import Path

__all__ = [
    "add_allow_private_argument",
    "add_extractor_model_argument",
    "add_max_pages_argument",
    "add_redis_arguments",
    "add_settings_arguments",
    "add_warc_argument",
    "extractor_model_error",
    "nonnegative_int",
    "option_settings",
    "positive_int",
]


def positive_int(value: str) -> int:
    """An argparse type: a whole number of at least 1 (worker processes, jobs)."""
    return _whole_number(value, 1)


def nonnegative_int(value: str) -> int:
    """An argparse type: a whole number of at least 0 (0 meaning "none" or "no cap" where the
    help says so)."""
    return _whole_number(value, 0)


def _whole_number(value: str, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if number < minimum:
        raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {number}")
    return number


def add_extractor_model_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--extractor-model",
        default=None,
        metavar="FILE",
        help="the learned extractor's model (from `newscrawl models build --out DIR`) instead "
        "of the shipped one; also NEWSCRAWL_EXTRACTOR_MODEL=FILE",
    )


def extractor_model_error(args: argparse.Namespace) -> str | None:
    """Apply --extractor-model (see `newscrawl.extractors.learned.use_extractor_model`); why
    it cannot be used, or None."""
    path = getattr(args, "extractor_model", None)
    if path is None:
        return None
    from newscrawl.extractors.learned import use_extractor_model

    try:
        args.extractor_model = use_extractor_model(path)
    except ValueError as err:
        return str(err)
    return None


def add_max_pages_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-pages",
        type=int,
        default=None,
        metavar="N",
        help="HTML pages per site, 0 for no cap (default: MAX_PAGES_PER_SITE = 200)",
    )


def add_warc_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--warc",
        type=Path,
        default=None,
        metavar="DIR",
        help="also write every fetched response as WARC/1.1 to DIR (NEWSCRAWL_WARC_DIR)",
    )


def add_allow_private_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-private",
        default=None,
        metavar="NETS",
        help='fetch these non-public networks anyway ("loopback", CIDRs, or '
        '"true" for all); default: refuse all',
    )


def add_settings_arguments(
    parser: argparse.ArgumentParser, log_level: str | None, log_help: str
) -> None:
    """--site-method, --set NAME=VALUE (repeatable) and --log-level."""
    from newscrawl.template.sitemethods import SITE_METHODS

    parser.add_argument(
        "--site-method",
        default=None,
        choices=SITE_METHODS,
        help="what labels each site's template nodes in the site pass "
        "(NEWSCRAWL_SITE_METHOD; default: sitelevel)",
    )
    parser.add_argument(
        "--set",
        "-s",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any Scrapy or NEWSCRAWL_* setting (repeatable)",
    )
    parser.add_argument("--log-level", default=log_level, metavar="LEVEL", help=log_help)


def option_settings(args: argparse.Namespace) -> dict[str, object]:
    """The settings the shared options ask for (those the command has); --set comes last, so
    it wins. Raises ValueError for a malformed --set."""
    from newscrawl.crawl.crawl_process import parse_set_options

    values: dict[str, object] = {}
    if getattr(args, "max_pages", None) is not None:
        values["MAX_PAGES_PER_SITE"] = args.max_pages
    if getattr(args, "allow_private", None) is not None:
        values["NEWSCRAWL_ALLOW_PRIVATE"] = args.allow_private
    if getattr(args, "warc", None) is not None:
        values["NEWSCRAWL_WARC_DIR"] = str(args.warc)
    if getattr(args, "site_method", None) is not None:
        values["NEWSCRAWL_SITE_METHOD"] = args.site_method
    if args.log_level:
        values["LOG_LEVEL"] = args.log_level.upper()
    values.update(parse_set_options(args.set))
    return values


def add_redis_arguments(parser: argparse.ArgumentParser) -> None:
    """--redis and --run, shared by enqueue, worker and status."""
    parser.add_argument(
        "--redis", required=True, metavar="URL", help="Redis server, e.g. redis://host:6379/0"
    )
    parser.add_argument(
        "--run",
        default="default",
        help="run id: a namespace for the queue, so several crawls can share one Redis",
    )
