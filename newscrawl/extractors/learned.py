"""The learned extractor: boosted trees decide, block by block, what is main text.

Every text block of the page (`newscrawl.extractors.blockmodel.blocks`) gets a feature row
(`newscrawl.extractors.blockmodel.block_features`: text statistics, link density, tag path, class/id
tokens,
position, neighbours, and the selections of the three seed extractors NCE, MSS and CETD-TPC);
the shipped model (`models/extractor_model.json`, trained on real pages with gold text, see
docs/extraction.md) scores the rows in stages, the later stage seeing its neighbours' earlier
scores so the kept blocks form a coherent article; blocks scoring at least the model's
threshold are the text.
Each page gets a type: documentation when a documentation generator marked it
(`newscrawl.extractors.doc_generator`), else the page type model's. A marked page's blocks are
scored without its site's template: a documentation site repeats its member tables from page to
page, so the template would mark them as boilerplate. Then the recall guard
(`newscrawl.extractors.blockmodel.recall_guard`), routed by the type, checks the selection
against a container of seed blocks (NCE's that another seed agrees with; NCE's whole on a page
typed documentation; CETD-TPC's and NCE's outside navigation on a marked page): where the trees
kept little of it, the container's blocks they did not score as boilerplate come back, and
`Extraction.extractor` says ``learned+guard``.

When the model cannot score a page (a bug, a page with no blocks), the page falls back to the
best seed extractor, CETD-TPC, and `Extraction.extractor` says so: every text records which
extractor produced it.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from newscrawl.extractors.blockmodel.block_features import FEATURES, block_features, block_groups
from newscrawl.extractors.blockmodel.block_scoring import score_blocks
from newscrawl.extractors.blockmodel.blocks import Blocks, split_blocks
from newscrawl.extractors.blockmodel.model import (
    ExtractorModel,
    ModelFileError,
    bundled_extractor_model,
    load_extractor_model,
)
from newscrawl.extractors.blockmodel.pagetype import (
    PageTypeModel,
    bundled_page_type_model,
    load_page_type_model,
)
from newscrawl.extractors.blockmodel.recall_guard import (
    DOCS_GUARD,
    MARKED_DOCS_GUARD,
    OFF,
    GuardParams,
    guard_selection,
    routed_guard,
)
from newscrawl.extractors.blockmodel.seeds import seed_extractions, seed_extractors, seed_selections
from newscrawl.extractors.blockmodel.stacking import CONTEXT_FEATURES
from newscrawl.extractors.doc_generator import generated_documentation, page_type
from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom
from newscrawl.html.gcpause import paused_gc
from newscrawl.site.site_template import SITE_FEATURES, TemplateHashes

__all__ = [
    "FALLBACK",
    "GUARDED",
    "MODEL_ENV",
    "Learned",
    "LearnedConfig",
    "check_extractor_model",
    "use_extractor_model",
]

# The seed extractor with the best cross-validated F1 (docs/extraction.md, Quality).
FALLBACK = "cetd-tpc"
# What `Extraction.extractor` says when the recall guard added blocks to the trees' selection.
GUARDED = "learned+guard"
# A model file to use instead of the shipped one when the config names none: what
# `--extractor-model` sets, so worker processes (extract -j, evaluate -j, a local Dask
# cluster, a crawl's site pass workers) read the same model.
MODEL_ENV = "NEWSCRAWL_EXTRACTOR_MODEL"


@dataclass(frozen=True, slots=True)
class LearnedConfig:
    """`model`: a model file (None: the shipped one); `threshold`: None keeps the model's own;
    `guard`: False keeps the trees' selection as it is (no recall guard)."""

    model: str | None = None
    threshold: float | None = None
    guard: bool = True


def _model(path: str) -> ExtractorModel:
    """The model file, checked against the features this code computes (read anew by each
    extractor, so a model rebuilt on disk is what the next extractor reads)."""
    model = load_extractor_model(path)
    model.check_features(FEATURES, CONTEXT_FEATURES)
    return model


class Learned:
    """Keep the blocks the shipped classifier scores as main text."""

    name = "learned"
    Config = LearnedConfig
    fallback = FALLBACK  # what produced the text when `Extraction.extractor` says so
    # An empty text is the model's answer (no block scored as main text: a video or listing
    # page), not a failure: the crawl's fallback extractors do not replace it. Filling such
    # pages with the best seed's text was measured and lost (docs/experiments.md).
    empty_is_answer = True

    def __init__(self, config: LearnedConfig | None = None) -> None:
        self.config = config or LearnedConfig()
        path = self.config.model or os.environ.get(MODEL_ENV) or bundled_extractor_model()
        self.model = _model(str(Path(path)))
        self.threshold = (
            self.model.threshold if self.config.threshold is None else self.config.threshold
        )
        self.seeds = seed_extractors()
        self.guard = GuardParams.from_json(self.model.guard) if self.config.guard else OFF
        self.docs_guard = DOCS_GUARD if self.config.guard else OFF
        self.marked_docs_guard = MARKED_DOCS_GUARD if self.config.guard else OFF
        self.page_types = _page_type_model()

    @property
    def uses_site_template(self) -> bool:
        """Whether the model reads the site's template (then callers that know a site's pages
        pass it; a model trained without the site features never costs that work)."""
        return set(SITE_FEATURES) <= set(self.model.features)

    def extract(self, dom: Dom, template: TemplateHashes | None = None) -> Extraction:
        """The page's main text; `template`: its site's SiteLevel template when the caller knows
        the site's pages (`sitetemplate.site_template`), else the page is read alone."""
        with paused_gc():  # many short-lived containers and arrays, no cycles among them
            return self._extract(dom, template)

    def _extract(self, dom: Dom, template: TemplateHashes | None) -> Extraction:
        title = page_title(dom)
        if not dom.piece_text:
            return Extraction.empty(self.name, title)
        # Only the seeds' node ids are features: their titles and texts are not built.
        selections = seed_selections(dom, self.seeds)
        try:
            blocks = split_blocks(dom)
            marked = generated_documentation(dom)
            rows, scores, kind = self._scored(dom, blocks, selections, template, marked)
            guard = self.marked_docs_guard if marked else self._guard_for(kind, scores)
            mask, guarded = guard_selection(rows, scores, self.threshold, guard)
            kept = np.flatnonzero(whole_structures(dom, blocks, mask))
        except Exception:  # a model or feature bug costs this page the learned text, not the page
            return _fallback(seed_extractions(dom, self.seeds), title)
        pieces = blocks.pieces_of(kept.tolist())
        text = dom.pieces_text(pieces)
        if not text:  # no main text is an answer; the page's type is still known
            return Extraction(
                title=title, text="", node_ids=(), extractor=self.name, page_type=kind
            )
        nodes = tuple(sorted({blocks.node[k] for k in kept}))
        name = GUARDED if guarded else self.name
        return Extraction(
            title=title,
            text=text,
            node_ids=nodes,
            extractor=name,
            pieces=tuple(pieces),
            page_type=kind,
        )

    def _scored(
        self,
        dom: Dom,
        blocks: Blocks,
        selections: list[tuple[int, ...]],
        template: TemplateHashes | None,
        marked: bool,
    ) -> tuple[np.ndarray, np.ndarray, str]:
        """The page's block features, their scores and the page's type. A page a
        documentation generator `marked` is documentation and its rows are built without
        `template` (its site's template holds the member tables its pages repeat); any other
        page's rows are built with it and typed by the page type model."""
        rows = block_features(dom, blocks, selections, None if marked else template)
        kind = page_type(dom, lambda: self._modelled_type(rows), marked)
        return rows, score_blocks(self.model, rows, block_groups(dom, blocks)), kind

    def _modelled_type(self, rows: np.ndarray) -> str:
        """The page type model's type of a page of block features `rows` ("" without it)."""
        return self.page_types.page_type(rows) if self.page_types is not None else ""

    def _guard_for(self, kind: str, scores: np.ndarray) -> GuardParams:
        """The recall guard of a page of type `kind`: the documentation guard on
        documentation; none where the trees kept nothing of any other page (no main text is
        an answer there, as for the fallback below), else the model's."""
        return routed_guard(kind, scores, self.threshold, self.guard, self.docs_guard)


def _page_type_model() -> PageTypeModel | None:
    """The shipped page type model; None (pages get no type) when it is missing or does not
    fit this code."""
    try:
        return load_page_type_model(bundled_page_type_model())
    except ModelFileError:
        return None


# Elements kept whole when the text around them is kept: a table of figures, a code block.
WHOLE_TAGS = ("table", "pre")
# ... unless links hold more of their text than this (a box of related stories as a table).
WHOLE_MAX_LINK_DENSITY = 0.2


def whole_structures(dom: Dom, blocks: Blocks, kept: np.ndarray) -> np.ndarray:
    """`kept` (per block) with every table of figures (`figures_table`) and every code block
    (`WHOLE_TAGS`) kept whole where the blocks just before and just after it are kept: the
    model scores a table's short cells, or a code block's lines, as it scores a page's short
    boilerplate lines, but inside the kept text they are part of it."""
    if not len(blocks):
        return kept
    kept = kept.copy()
    tables = dom.nodes_of("table")
    for node in sorted([*tables, *dom.nodes_of("pre")]):
        if dom.tag[node] == "table" and not figures_table(dom, node, tables):
            continue
        first = bisect_left(blocks.start, dom.piece_start[node])
        last = bisect_left(blocks.start, dom.piece_end[node]) - 1
        if first > last or first == 0 or last + 1 >= len(blocks):
            continue
        if kept[first : last + 1].all() or not (kept[first - 1] and kept[last + 1]):
            continue
        if dom.link_density(node) <= WHOLE_MAX_LINK_DENSITY:
            kept[first : last + 1] = True
    return kept


def figures_table(dom: Dom, node: int, tables: list[int]) -> bool:
    """Whether the table at `node` holds figures: no table inside it (a table of tables lays
    out the page), at least two rows and a row of at least two cells (`tables`: the page's
    tables, in document order)."""
    inner = bisect_left(tables, node + 1)
    if inner < len(tables) and tables[inner] < dom.end[node]:
        return False
    tags, children = dom.tag, dom.children
    rows = [n for n in range(node, dom.end[node]) if tags[n] == "tr"]
    widest = max((sum(tags[c] in ("td", "th") for c in children[r]) for r in rows), default=0)
    return len(rows) >= 2 and widest >= 2


def use_extractor_model(path: str) -> str:
    """Make the model file at `path` the learned extractor's, in this process and the worker
    processes it starts (`MODEL_ENV`); returns its absolute path. Raises ModelFileError (a
    ValueError) for a file that is no extractor model of this code's features."""
    absolute = check_extractor_model(path)  # refused now, not in every worker
    os.environ[MODEL_ENV] = absolute
    return absolute


def check_extractor_model(path: str) -> str:
    """The absolute path of the model file at `path`; ModelFileError (a ValueError) for a file
    that is no extractor model of this code's features."""
    absolute = str(Path(path).resolve())
    _model(absolute)
    return absolute


def _fallback(seeds: list[Extraction], title: str) -> Extraction:
    by_name = {s.extractor: s for s in seeds}
    chosen = by_name.get(FALLBACK) or Extraction.empty(FALLBACK, title)
    return Extraction(title, chosen.text, chosen.node_ids, FALLBACK, chosen.pieces)
