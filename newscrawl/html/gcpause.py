"""Garbage-collector pauses for work that builds many long-lived objects at once.

A site pass keeps a site's parsed pages (`Dom`s: lists and element proxies) alive while it
works, and CPython's cyclic collector walks the live containers again each time enough new ones
have been made, which is work without gain (its cost: docs/experiments.md). A site pass makes no
reference cycles, so reference counting frees all it drops; a cycle it does make (an
exception's traceback) waits for the next collection after it.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection inside the block (the collector's state is put back
    after it, as it was; nothing is collected on the way out)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
