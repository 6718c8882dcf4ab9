"""File-name-safe names for what names output files (a site, a WARC file): readable, and made
unique by a digest of what they stand for, so two names that read alike never collide."""

from __future__ import annotations

import hashlib
import re

__all__ = ["slug"]


def slug(text: str, key: str, *, unsafe: str, limit: int, fallback: str) -> str:
    """`text` with each run of characters matching `unsafe` as "_", cut to `limit` characters,
    without "_" or "." at either end (`fallback` when nothing is left), then "-" and 8 hex
    digits of `key`'s blake2b digest."""
    readable = re.sub(unsafe, "_", text)[:limit].strip("_.") or fallback
    digest = hashlib.blake2b(key.encode("utf-8"), digest_size=4).hexdigest()
    return f"{readable}-{digest}"
