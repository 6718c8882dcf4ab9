"""Benchmarks, run as ``newscrawl bench NAME``: one module per benchmark.

A benchmark module ``newscrawl/bench/NAME.py`` defines a docstring (its --help text), ``HELP``
(one line), ``add_arguments(parser)`` and ``run(args) -> int``, like a command module, and keeps
heavy imports inside ``run``. `available` finds the modules present, so adding a benchmark is
adding its file; the name on the command line is the module name with "_" written as "-".
"""

from __future__ import annotations

import pkgutil

__all__ = ["available"]


def available() -> dict[str, str]:
    """Benchmark name -> module name, for every module in this package, sorted by name."""
    modules = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))
    return {name.replace("_", "-"): name for name in modules}
