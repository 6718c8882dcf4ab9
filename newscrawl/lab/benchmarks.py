"""Benchmarks, run as ``newscrawl bench NAME``: one module per benchmark.

A benchmark module ``newscrawl/lab/bench_NAME.py`` defines a docstring (its --help text), ``HELP``
(one line), ``add_arguments(parser)`` and ``run(args) -> int``, like a command module, and keeps
heavy imports inside ``run``. `available` finds the modules present, so adding a benchmark is
adding its file; the name on the command line is NAME with "_" written as "-".
"""

from __future__ import annotations

import pkgutil

import newscrawl.lab

__all__ = ["available"]

PREFIX = "bench_"


def available() -> dict[str, str]:
    """Benchmark name -> module name, for every benchmark module of the lab, sorted by name."""
    modules = sorted(
        m.name for m in pkgutil.iter_modules(newscrawl.lab.__path__) if m.name.startswith(PREFIX)
    )
    return {name.removeprefix(PREFIX).replace("_", "-"): name for name in modules}
