"""The recall guard: the learned selection never throws away a container the seeds agree on.

The boosted trees learned the gold conventions of their training pages. On a page unlike them
(an API reference, a table of contents) they can keep a small part of a main text that NCE, one
of their own seed features, finds whole. The guard looks at one page's blocks after scoring:

* NCE's selection is the *container* (the blocks of the subtrees NCE picked);
* it is *confirmed* when another seed (MSS or CETD-TPC) selected at least `agree` of the
  container's tokens: two extractors built on different ideas point at the same region;
* it *acts* when the learned selection keeps less than `kept` of the container's tokens: it
  then adds back the container's blocks that the trees scored at least `floor` (the blocks the
  trees are sure are boilerplate, such as a menu or a share bar inside the container, stay
  out; `floor` 0 adds the whole container).

The guard of a page a documentation generator marked (`MARKED_DOCS_GUARD`) has a container
of its own: CETD-TPC's selection, plus NCE's blocks that lie under no navigation mark (a
`nav`, `aside`, `header` or `footer` element, a dialog, or a class or id word of the nav,
side, header or footer groups, anywhere above the block). Every block of it is added beside
the trees' selection: on a short documentation page NCE's selection takes in the sidebar,
while CETD-TPC's keeps the body even where a theme holds it inside such a word.

It reads only the block feature rows (the seeds' selections and token counts are columns) and
the scores, so cross-validation applies it to out-of-fold scores exactly as extraction does to
the shipped model's, and `models build` chooses its settings there (`crossval.choose_guard`),
on datasets and page types held out whole. `Extraction.extractor` says ``learned+guard`` when
it acted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass

import numpy as np

from newscrawl.extractors.blockmodel.block_features import FEATURES

__all__ = [
    "DOCS_GUARD",
    "DOCUMENTATION",
    "GUARD_GRID",
    "MARKED_DOCS_GUARD",
    "GuardParams",
    "docs_container",
    "guard_selection",
    "routed_guard",
]

_NCE = FEATURES.index("seed_nce")
_OTHERS = (FEATURES.index("seed_mss"), FEATURES.index("seed_cetd-tpc"))
_CETD = FEATURES.index("seed_cetd-tpc")
_TOKENS = FEATURES.index("tokens_log")
# The block features that say a block lies under a navigation mark (see the module docstring).
_NAVIGATION = [
    FEATURES.index(f"above_{mark}")
    for mark in (
        "nav",
        "side",
        "header",
        "footer",
        "tag_nav",
        "tag_aside",
        "tag_header",
        "tag_footer",
        "dialog",
    )
]


@dataclass(frozen=True, slots=True)
class GuardParams:
    """When the guard acts and what it adds back (see the module docstring); `agree` above 1
    turns it off. A model file's own settings (`ExtractorModel.guard`, which `models build`
    chooses by cross-validation holding out whole datasets and page types: `choose_guard`)
    replace these defaults, which act only where the trees kept under half of a container
    two seeds agree on, and add back only blocks the trees did not all but rule out."""

    agree: float = 0.5
    kept: float = 0.5
    floor: float = 0.1
    min_tokens: int = 30  # a container of fewer tokens is no evidence of a main text
    # The documentation guard's container instead (`docs_container`), added whole.
    docs: bool = False

    def to_json(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, object] | None) -> GuardParams:
        """The settings a model file records (defaults for what it leaves out)."""
        if not data:
            return cls()
        known = {k: float(v) for k, v in data.items() if k in cls.__dataclass_fields__}  # type: ignore[arg-type]
        if "min_tokens" in known:
            known["min_tokens"] = int(known["min_tokens"])
        if "docs" in known:
            known["docs"] = bool(known["docs"])
        return cls(**known)  # type: ignore[arg-type]


OFF = GuardParams(agree=2.0)

# The settings cross-validation tries (`choose_guard`), OFF among them.
GUARD_GRID: tuple[GuardParams, ...] = (
    OFF,
    *(
        GuardParams(agree=a, kept=k, floor=f)
        for a in (0.3, 0.5, 0.7)
        for k in (0.3, 0.5, 0.7, 0.85)
        for f in (0.0, 0.05, 0.1, 0.2)
    ),
)


# The page type whose pages get the documentation guard.
DOCUMENTATION = "documentation"
# The guard of a page the page type model calls documentation: API references, tables of
# contents and definition lists are main text the trees, trained mostly on news, learn to
# drop. On such a page the text NCE selects is kept whole beside the trees' selection: no
# other seed need agree (agree 0), it acts whatever share the trees kept (kept above 1), and
# every block of NCE's selection comes back (floor 0). Chosen on the out-of-sample scores of
# half the documentation sites (docs/experiments.md).
DOCS_GUARD = GuardParams(agree=0.0, kept=1.01, floor=0.0)
# The guard of a page a documentation generator marked: the documentation container
# (`docs_container`) kept whole beside the trees' selection, whatever share of it the trees
# kept and whatever they scored its blocks (docs/experiments.md, "The documentation sites
# still under their best seed"). Only on marked pages: on pages of other kinds that the page
# type model calls documentation, CETD-TPC's selection can take in far more than the text.
MARKED_DOCS_GUARD = GuardParams(agree=0.0, kept=1.01, floor=0.0, docs=True)


def routed_guard(
    kind: str,
    scores: np.ndarray,
    threshold: float,
    guard: GuardParams,
    docs_guard: GuardParams = DOCS_GUARD,
) -> GuardParams:
    """The guard of a page of type `kind` whose blocks scored `scores`: `docs_guard` on
    documentation; none where the trees kept nothing of any other page (no main text is an
    answer there); else `guard`. What the learned extractor applies, and what cross-validation
    applies to out-of-fold scores to measure it."""
    if kind == DOCUMENTATION:
        return docs_guard
    if not (scores >= threshold).any():
        return OFF
    return guard


def guard_selection(
    rows: np.ndarray, scores: np.ndarray, threshold: float, params: GuardParams
) -> tuple[np.ndarray, bool]:
    """The kept blocks of one page (rows: its block features; scores: the model's) after the
    guard, and whether the guard added any."""
    kept = scores >= threshold
    if params.agree > 1 or not len(rows):
        return kept, False
    if params.docs:
        added = docs_container(rows) & ~kept
        return kept | added, bool(added.any())
    weight = np.expm1(rows[:, _TOKENS].astype(np.float64))
    container = rows[:, _NCE] > 0.5
    total = float(weight[container].sum())
    if total < params.min_tokens:
        return kept, False
    confirmed = container & ((rows[:, _OTHERS[0]] > 0.5) | (rows[:, _OTHERS[1]] > 0.5))
    if float(weight[confirmed].sum()) < params.agree * total:
        return kept, False
    if float(weight[container & kept].sum()) >= params.kept * total:
        return kept, False
    added = container & ~kept & (scores >= params.floor)
    if not added.any():
        return kept, False
    return kept | added, True


def docs_container(rows: np.ndarray) -> np.ndarray:
    """Per block (rows: one page's block features), whether it is in the documentation guard's
    container: CETD-TPC selected it, or NCE did and no navigation mark lies above it."""
    cetd = rows[:, _CETD] > 0.5
    navigation = (rows[:, _NAVIGATION] > 0.5).any(axis=1)
    return cetd | ((rows[:, _NCE] > 0.5) & ~navigation)


def grid_outcomes(
    pages: Iterable[tuple[np.ndarray, np.ndarray]],
    threshold: float,
    grid: tuple[GuardParams, ...],
    score_text: Callable[[int, np.ndarray], tuple[float, float]],
    route: Callable[[int, np.ndarray, GuardParams], GuardParams] | None = None,
) -> dict[GuardParams, list[tuple[float, float]]]:
    """Per setting of `grid`, each page's (precision, recall) after the guard; `pages` yields
    each page's (rows, scores), `score_text(page, kept)` scores a selection against the gold,
    `route(page, scores, setting)` gives the guard a page gets under a setting (default: the
    setting itself). A selection seen before on the same page is scored once."""
    out: dict[GuardParams, list[tuple[float, float]]] = {g: [] for g in grid}
    for page, (rows, scores) in enumerate(pages):
        seen: dict[bytes, tuple[float, float]] = {}
        for params in grid:
            applied = route(page, scores, params) if route is not None else params
            kept, _ = guard_selection(rows, scores, threshold, applied)
            key = np.packbits(kept).tobytes()
            if key not in seen:
                seen[key] = score_text(page, kept)
            out[params].append(seen[key])
    return out
