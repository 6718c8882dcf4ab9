"""The seed extractors whose selections the learned extractor reads as features: NCE, MSS and
CETD-TPC with their default configs, run on the page (a seed that fails costs its features,
not the page)."""

from __future__ import annotations

from collections.abc import Sequence

from newscrawl.extractors.extractor_base import Extraction, Extractor
from newscrawl.html.dom import Dom

__all__ = [
    "SEEDS",
    "seed_extractions",
    "seed_extractors",
    "seed_selections",
]

SEEDS = ("nce", "mss", "cetd-tpc")


def seed_extractors() -> list[Extractor]:
    """NCE, MSS and CETD-TPC with their default configs, built once per caller."""
    from newscrawl.extractors import get_extractor

    return [get_extractor(name) for name in SEEDS]


def seed_extractions(dom: Dom, seeds: Sequence[Extractor] | None = None) -> list[Extraction]:
    """What NCE, MSS and CETD-TPC (`seeds`, default: fresh ones) extract from `dom`, in that
    order (empty when one fails)."""
    found = []
    for name, extractor in zip(SEEDS, seeds or seed_extractors(), strict=True):
        try:
            found.append(extractor.extract(dom))
        except Exception:  # a seed bug costs one feature, not the page
            found.append(Extraction.empty(name))
    return found


def seed_selections(dom: Dom, seeds: Sequence[Extractor] | None = None) -> list[tuple[int, ...]]:
    """The `node_ids` of `seed_extractions` (what the features read), from each seed's `select`
    where it has one: the same ids without building titles and texts nobody reads."""
    found: list[tuple[int, ...]] = []
    for extractor in seeds or seed_extractors():
        select = getattr(extractor, "select", None)
        try:
            found.append(select(dom) if select is not None else extractor.extract(dom).node_ids)
        except Exception:  # a seed bug costs one feature, not the page
            found.append(())
    return found
