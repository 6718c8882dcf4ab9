"""Page-level extractors, one module each, looked up by name."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from newscrawl.extractors.extractor_base import Extraction, Extractor

__all__ = [
    "DEFAULT_EXTRACTOR",
    "EXTRACTORS",
    "TEMPLATE",
    "Extraction",
    "Extractor",
    "build_extractor",
    "build_extractors",
    "extractor_names",
    "get_extractor",
]

# name -> "module:class"; modules are imported only when asked for.
EXTRACTORS: dict[str, str] = {
    "nce": "newscrawl.extractors.nce:NCE",
    "mss": "newscrawl.extractors.mss:MSS",
    "cetd-tpc": "newscrawl.extractors.cetd_tpc:CETDTPC",
    "learned": "newscrawl.extractors.learned:Learned",
}
# The extractor with the best site-grouped cross-validated shingle F1 (docs/extraction.md, Quality).
DEFAULT_EXTRACTOR = "learned"
# The template filter (newscrawl.extractors.template_filter): a name of its own, built from a model.
TEMPLATE = "template"


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


def build_extractor(
    name: str, model_path: str | None = None, site_method: str = "sitelevel"
) -> Extractor:
    """The extractor every page goes through, built once per process.

    `model_path` is where a trained template model plugs in (the --model option), learning each
    site's template by `site_method` (--site-method); without one the page-level extractor
    `name` is used as it is.
    """
    if model_path is not None or name == TEMPLATE:
        from newscrawl.extractors.template_filter import build_template_extractor

        return build_template_extractor(name, model_path, site_method)
    return get_extractor(name)


def build_extractors(
    names: list[str], model: str | None, site_method: str = "sitelevel"
) -> dict[str, Extractor]:
    """A fresh extractor per name (each dataset, and each worker process, gets its own)."""
    return {name: build_extractor(name, model, site_method) for name in names}


def extractor_names(option: str | None) -> list[str]:
    """Registered extractor names from a comma-separated option (None: all of them)."""
    if option is None:
        return list(EXTRACTORS)
    names = [n.strip() for n in option.split(",") if n.strip()]
    unknown = [n for n in names if n not in EXTRACTORS and n != TEMPLATE]
    if unknown or not names:
        raise ValueError(
            f"unknown extractor {', '.join(unknown) or repr(option)} "
            f"(known: {', '.join(EXTRACTORS)})"
        )
    return names
