"""Shared pytest set-up. Area-specific fixtures live beside their tests.

The markers (pyproject.toml) do the work: a test marked `redis`, `chromium` or `compiled` is
skipped, with the install line as the reason, on a machine without Debian's redis-server or
chromium or where pip found no C compiler for the tree walk - except under CI (CI set in the
environment), where .ci/setup installs them and a missing one must fail, not pass as skipped.
`slow` marks the end-to-end runs; ``pytest -m "not slow"`` leaves them out for a quick run
while developing (CI runs everything).
"""

from __future__ import annotations

import os
import shutil

import pytest

from newscrawl.extractors.blockmodel.model import COMPILED_WALK
from newscrawl.template.geometry import CHROMIUM_PATH

_NEEDS = {
    "redis": (
        lambda: shutil.which("redis-server") is not None,
        "redis-server missing (apt-get install redis-server)",
    ),
    "chromium": (
        lambda: os.path.exists(CHROMIUM_PATH),
        f"Debian's chromium is not installed at {CHROMIUM_PATH} (apt-get install chromium)",
    ),
    "compiled": (
        lambda: COMPILED_WALK,
        "the compiled tree walk was not built (a C compiler, then pip install -e . again)",
    ),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("CI"):
        return
    missing = {name: reason for name, (present, reason) in _NEEDS.items() if not present()}
    for item in items:
        for name, reason in missing.items():
            if item.get_closest_marker(name) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
