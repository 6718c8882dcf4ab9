"""Page-level extractors, one module each, looked up by name."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from newscrawl.extractors.base import Extraction, Extractor

__all__ = ["DEFAULT_EXTRACTOR", "EXTRACTORS", "Extraction", "Extractor", "get_extractor"]

# name -> "module:class"; modules are imported only when asked for.
EXTRACTORS: dict[str, str] = {
    "nce": "newscrawl.extractors.nce:NCE",
    "mss": "newscrawl.extractors.mss:MSS",
    "cetd-tpc": "newscrawl.extractors.cetd_tpc:CETDTPC",
    "learned": "newscrawl.extractors.learned:Learned",
}
# The extractor with the best site-grouped cross-validated shingle F1 (README's quality table).
DEFAULT_EXTRACTOR = "learned"


def get_extractor(name: str, **config: Any) -> Extractor:
    """Build the extractor called `name`; keyword arguments override its config defaults.

    Each extractor class has a `Config` dataclass attribute and takes an instance of it.
    """
    try:
        target = EXTRACTORS[name]
    except KeyError:
        known = ", ".join(EXTRACTORS)
        raise ValueError(f"unknown extractor {name!r} (known: {known})") from None
    module, cls_name = target.split(":")
    cls = getattr(import_module(module), cls_name)
    return cls(cls.Config(**config)) if config else cls()
