"""The `newscrawl` command: one subcommand per module of `newscrawl.commands`, plus the
commands other installed code adds through the ``newscrawl.commands`` entry-point group
(``name = "dotted.module"``; the lab's `newscrawl bench` is one).

Each command module defines `HELP` (one line), `add_arguments(parser)` and `run(args) -> int`.
Command modules keep heavy imports inside `run`, so `newscrawl extract` never loads Scrapy.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from importlib import import_module
from importlib.metadata import entry_points

__all__ = ["COMMANDS", "ENTRY_POINT_GROUP", "all_commands", "main"]

ENTRY_POINT_GROUP = "newscrawl.commands"

# command name -> (module under newscrawl.commands, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("extract", "extract title and main text from saved pages"),
    "evaluate": ("evaluate", "score extractors against gold text on datasets"),
    "crawl": ("crawl", "crawl sites and write a Parquet article corpus"),
    "ingest": ("ingest", "read WARC/ARC archives through the crawl's pipelines"),
    "demo": ("demo", "crawl the bundled demo web end to end (no network needed)"),
    "serve-demo": ("serve_demo", "serve the bundled demo web on 127.0.0.1"),
    "sitelevel": ("sitelevel_command", "label template nodes of stored pages (SiteLevel)"),
    "train": ("train", "train area-bucketed template classifiers"),
    "enqueue": ("enqueue", "put sites on a Redis queue for crawl workers"),
    "worker": ("worker", "run a Redis-fed crawl worker"),
    "status": ("status", "show the Redis crawl queue"),
    "merge": ("merge", "merge Parquet shards written by several workers"),
    "reextract": ("reextract", "extract stored pages again with another extractor or model"),
    "models": ("models", "rebuild the shipped models; cross-validate the learned extractor"),
    "settings": ("settings_command", "list the crawl's settings with their defaults"),
    "data": ("data", "build datasets of pages with gold main text (documentation sites)"),
}


def all_commands() -> dict[str, tuple[str, str | None]]:
    """Command name -> (dotted module, one-line help or None for the module's `HELP`): the
    built-in commands, then those of the entry-point group (a built-in name is never replaced)."""
    commands: dict[str, tuple[str, str | None]] = {
        name: (f"newscrawl.commands.{module}", help_text)
        for name, (module, help_text) in COMMANDS.items()
    }
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        commands.setdefault(point.name, (point.value, None))
    return commands


def build_parser(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, dict[str, str]]:
    """The command line's parser. Given the arguments to parse, only the command they name
    (if any) gets its options, so only its module is imported: a crawl's process does not
    import what `extract` or `models` need. Without `argv` every command gets its options."""
    parser = argparse.ArgumentParser(
        prog="newscrawl", description="Turn news and blog sites into clean article corpora."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands = all_commands()
    named = _named_command(argv, commands) if argv is not None else None
    modules: dict[str, str] = {}
    for name, (module_name, help_text) in commands.items():
        modules[name] = module_name
        if named is not None and name != named:
            sub.add_parser(name, help=help_text)  # never parsed: its options are not needed
            continue
        module = import_module(module_name)
        command = sub.add_parser(name, help=help_text or module.HELP, description=module.__doc__)
        module.add_arguments(command)
    return parser, modules


def _named_command(argv: list[str], commands: dict[str, tuple[str, str | None]]) -> str:
    """The command `argv` names: its first argument that is not an option ("" when none is
    a command, as for `--help`)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg if arg in commands else ""
    return ""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser, modules = build_parser(argv)
    args = parser.parse_args(argv)
    module = import_module(modules[args.command])
    try:
        return int(module.run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as err:
        if err.errno not in _DISK_FULL:
            raise
        _drop_stdout()  # what is still buffered for it would fail again at exit
        where = f" {err.filename}" if err.filename else ""
        print(f"newscrawl {args.command}: cannot write{where}: {err.strerror}", file=sys.stderr)
        return 1
    except ModuleNotFoundError as err:
        from newscrawl.crawl.checks import EXTRAS

        extra = EXTRAS.get((err.name or "").split(".")[0])
        if extra is None:
            raise
        print(
            f"newscrawl {args.command}: needs {err.name}; install it with "
            f"pip install 'newscrawl[{extra}]'",
            file=sys.stderr,
        )
        return 2


# A full disk (or quota) is the machine's state, not a bug: one line, not a traceback.
_DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def _drop_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout closed or not a real file: nothing left to flush
        pass


if __name__ == "__main__":
    sys.exit(main())
