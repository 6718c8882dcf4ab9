"""Run a benchmark: `newscrawl bench NAME ...`, NAME being a benchmark of the lab
(`newscrawl.lab.benchmarks.available`).

`newscrawl bench NAME --help` describes each benchmark and its options.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from types import ModuleType
from typing import NoReturn

__all__ = ["HELP", "add_arguments", "run"]

HELP = "run a benchmark (extract, crawl, ...)"


class _OneLineErrors(argparse.ArgumentParser):
    """A benchmark's parser whose usage errors are one line on stderr (exit status 2), not the
    usage block: a bad option reads as the one thing to fix."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _load(module_name: str) -> ModuleType | str:
    """The benchmark module, or why it cannot be imported (one broken benchmark must not take
    the whole command line down with it)."""
    try:
        return import_module(f"newscrawl.lab.{module_name}")
    except Exception as err:
        return f"{type(err).__name__}: {err}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from newscrawl.lab.benchmarks import available

    sub = parser.add_subparsers(
        dest="bench", metavar="NAME", required=True, parser_class=_OneLineErrors
    )
    for name, module_name in available().items():
        module = _load(module_name)
        if isinstance(module, str):
            broken = sub.add_parser(name, help=f"(unavailable: {module})")
            broken.set_defaults(bench_module=module_name, bench_error=module)
            continue
        bench = sub.add_parser(
            name,
            help=module.HELP,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(bench)
        bench.set_defaults(bench_module=module_name, bench_error=None)


def run(args: argparse.Namespace) -> int:
    if args.bench_error is not None:
        print(f"newscrawl bench {args.bench}: cannot load: {args.bench_error}", file=sys.stderr)
        return 2
    module = import_module(f"newscrawl.lab.{args.bench_module}")
    return int(module.run(args) or 0)
