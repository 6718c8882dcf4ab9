"""Template-aware extraction: cut a site's template out of a page, then extract.

The trained, area-bucketed classifiers score every node of the page, isotonic smoothing makes
the scores respect the tree ("a node is template iff all its children are"), and the nodes with
a smoothed score s' >= 0.5 are dropped. What is left is either the answer itself (the filter
alone, `--extractor template`) or the page a page-level extractor then reads
(`--extractor nce --model M`: NCE on what the filter keeps).

The filter works on a pruned copy of the page's element tree, turned into a new `Dom` (no
re-parse: the copy is taken from the parsed tree), so every page-level extractor runs on it
unchanged. <head> is never dropped (titles and meta tags live there). When the filter would
drop the whole body, the page is handed on unfiltered: a model that sees no content anywhere
is wrong about this page, and the page-level extractor alone is the better answer.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from models.template_model import TemplateModel, check_features, load_model
from newscrawl.dom import BLOCK_TAGS, Dom
from newscrawl.extractors.base import Extraction, Extractor
from newscrawl.template.features import FEATURES, node_features
from newscrawl.template.records import PageNodes
from newscrawl.title import page_title

__all__ = [
    "TemplateConfig",
    "TemplateExtractor",
    "build_template_extractor",
    "mask_from_scores",
    "pruned_dom",
]

NAME = "template"


@dataclass(frozen=True, slots=True)
class TemplateConfig:
    """`model`: model file (required). `then`: page-level extractor combined with the filter ("" =
    the filter alone). `order`: "before" runs `then` on the page the filter leaves; "after" runs
    it on the whole page and then removes the template nodes from what it chose. `c`: smoothing
    penalty (the paper's 0.01). `threshold`: s' at or above it is template. `smooth=False`
    thresholds the raw classifier scores (for the evaluation)."""

    model: str = ""
    then: str = ""
    order: str = "before"
    c: float = 0.01
    threshold: float = 0.5
    smooth: bool = True
    geometry: str = "static"


class TemplateExtractor:
    """Drops template nodes, then returns the rest or runs a page-level extractor on it."""

    name: ClassVar[str] = NAME
    Config = TemplateConfig

    def __init__(
        self, config: TemplateConfig | None = None, model: TemplateModel | None = None
    ) -> None:
        self.config = config or TemplateConfig()
        if model is None:
            if not self.config.model:
                raise ValueError(
                    "the template extractor needs a trained model: give --model MODEL "
                    "(a file written by `newscrawl train`)"
                )
            model = load_model(self.config.model)
        check_features(model, FEATURES)
        self.model = model
        self.inner: Extractor | None = None
        if self.config.then and self.config.then != NAME:
            from newscrawl.extractors import get_extractor

            self.inner = get_extractor(self.config.then)
        if self.config.order not in ("before", "after"):
            raise ValueError(f"order must be 'before' or 'after', not {self.config.order!r}")
        self.label = f"{NAME}+{self.config.then}" if self.inner else NAME

    # -- scoring --------------------------------------------------------------------------------

    def raw_scores(self, dom: Dom, page: PageNodes | None = None) -> np.ndarray:
        """Classifier score per node; NaN for nodes no bucket covers (too small, invisible)."""
        page = page or PageNodes.from_dom(dom, dom.url, geometry=self.config.geometry)
        relative = bool(self.model.options.get("relative_distances", True))
        return self.model.scores(node_features(page, relative=relative), page.area)

    def template_mask(self, dom: Dom, page: PageNodes | None = None) -> np.ndarray:
        """bool per node: template. Smoothed unless `smooth=False`; <head> is never template."""
        scores = self.raw_scores(dom, page)
        return mask_from_scores(
            dom.parent, scores, dom.body, self.config.c, self.config.threshold, self.config.smooth
        )

    # -- extraction -----------------------------------------------------------------------------

    def extract(self, dom: Dom) -> Extraction:
        return self.extract_masked(dom, self.template_mask(dom) if len(dom) else np.zeros(0, bool))

    def extract_masked(
        self, dom: Dom, mask: np.ndarray, pruned: tuple[Dom, np.ndarray, list[int]] | None = None
    ) -> Extraction:
        """The extraction once the template nodes (`mask`) are known; `pruned` is
        `pruned_dom(dom, mask)` when the caller already has it."""
        if not len(dom) or mask[dom.body]:
            return self._unfiltered(dom)
        if self.inner is not None and self.config.order == "after":
            return self._filter_after(dom, pruned[2] if pruned else dropped_roots(dom, mask))
        kept, ids, dropped = pruned or pruned_dom(dom, mask)
        if self.inner is not None:
            inner = self.inner.extract(kept)
            return Extraction(
                title=inner.title,
                text=inner.text,
                node_ids=tuple(sorted({int(ids[i]) for i in inner.node_ids})),
                extractor=self.label,
            )
        return Extraction(
            title=page_title(dom),
            text=kept.text(kept.body),
            node_ids=content_roots(dom, dropped),
            extractor=self.label,
        )

    def _filter_after(self, dom: Dom, dropped: list[int]) -> Extraction:
        """The page-level extractor's answer on the whole page, less the lines of template nodes.

        Extractors return text, one block a line, and not always as whole subtrees (MSS picks
        text runs), so the filter works on lines: a line of the answer that is the text of a
        block inside a dropped subtree is removed (each such block removes one equal line).
        """
        assert self.inner is not None
        chosen = self.inner.extract(dom)
        template = Counter(
            _line_key(line) for root in dropped for line in dom.text(root).splitlines()
        )
        lines = []
        for line in chosen.text.splitlines():
            key = _line_key(line)
            if template[key] > 0:
                template[key] -= 1
            else:
                lines.append(line)
        cut = np.zeros(len(dom) + 1, dtype=np.int64)
        for root in dropped:
            cut[root] += 1
            cut[dom.end[root]] -= 1
        gone = np.cumsum(cut)[: len(dom)] > 0
        return Extraction(
            title=chosen.title,
            text="\n".join(lines),
            node_ids=tuple(i for i in chosen.node_ids if not gone[i]),
            extractor=self.label,
        )

    def _unfiltered(self, dom: Dom) -> Extraction:
        if self.inner is not None:
            inner = self.inner.extract(dom)
            return Extraction(inner.title, inner.text, inner.node_ids, self.label)
        body = dom.body if len(dom) else 0
        text = dom.text(body) if len(dom) else ""
        return Extraction(page_title(dom), text, (body,) if text else (), self.label)


def _line_key(line: str) -> str:
    return " ".join(line.split())


def mask_from_scores(
    parent: Sequence[int] | np.ndarray,
    scores: np.ndarray,
    body: int,
    c: float = 0.01,
    threshold: float = 0.5,
    smooth: bool = True,
) -> np.ndarray:
    """Template nodes from raw classifier scores (NaN: no score), smoothed or not.

    Nodes before `body` in preorder (<html>, <head> and its content) are never template.
    """
    parent = np.asarray(parent, dtype=np.int64)
    if smooth:
        from newscrawl.template.isotonic import smooth_scores, template_mask

        smoothed = smooth_scores(parent, scores, c=c)
        mask = np.asarray(template_mask(smoothed, threshold), dtype=bool)
    else:
        mask = inherit_down(parent, np.nan_to_num(scores, nan=0.0) >= threshold)
    mask[:body] = False
    return mask


def inherit_down(parent: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """A node inside a template node is template too (ids are preorder: parents come first)."""
    out = mask.copy()
    for node in range(len(out)):
        p = parent[node]
        if p >= 0 and out[p]:
            out[node] = True
    return out


def dropped_roots(dom: Dom, mask: np.ndarray) -> list[int]:
    """The outermost template nodes, whose subtrees the filter cuts out of the page.

    An inline element inside running text (a link in a paragraph whose own text is content) is
    not cut out of its sentence: the classifiers score such a link like a menu item, but it
    reads as part of the paragraph, and it goes when its paragraph goes.
    """
    parent = dom.parent
    own_text = dom.own_text_len
    roots = []
    for node in range(1, len(dom)):
        up = parent[node]
        if not mask[node] or mask[up]:
            continue  # content, or inside a template node
        if dom.tag[node] not in BLOCK_TAGS and own_text[up]:
            continue
        roots.append(node)
    return roots


def content_roots(dom: Dom, dropped: Sequence[int]) -> tuple[int, ...]:
    """The largest subtrees of <body> that lose nothing to the filter and hold text."""
    count = len(dom)
    cut = np.zeros(count + 1, dtype=np.int64)
    for node in dropped:  # mark every node of a dropped subtree
        cut[node] += 1
        cut[dom.end[node]] -= 1
    gone = np.cumsum(cut)[:count] > 0
    prefix = np.concatenate(([0], np.cumsum(gone, dtype=np.int64)))
    end = np.asarray(dom.end, dtype=np.int64)
    clean = (prefix[end] - prefix[:count]) == 0
    body = dom.body
    return tuple(
        node
        for node in range(body, dom.end[body])
        if clean[node] and (node == body or not clean[dom.parent[node]]) and dom.text_len(node)
    )


def pruned_dom(dom: Dom, mask: np.ndarray) -> tuple[Dom, np.ndarray, list[int]]:
    """The page without its template nodes: a new `Dom`, the original id of each of its nodes,
    and the original ids of the subtrees cut out (`dropped_roots`).

    The parsed element tree is deep-copied (lxml, in C) and the dropped elements are removed
    from the copy, keeping their tail text (it belongs to the parent).
    """
    root = dom.elements[0]
    twin = copy.deepcopy(root)
    twin_of = dict(zip(root.iter(), twin.iter(), strict=True))
    original_id = {twin_of[element]: node for node, element in enumerate(dom.elements)}
    dropped = dropped_roots(dom, mask)
    for node in dropped:
        twin_of[dom.elements[node]].drop_tree()
    kept = Dom(twin, url=dom.url)
    ids = np.fromiter((original_id[e] for e in kept.elements), dtype=np.int64, count=len(kept))
    return kept, ids, dropped


def build_template_extractor(name: str, model_path: str | None) -> Extractor:
    """What `--extractor NAME --model MODEL` means.

    With a model: "template" is the filter alone, any page-level name runs that extractor on
    what the filter keeps. Without one: "template" is an error that says what is missing, any
    other name is the page-level extractor as it is.
    """
    from newscrawl.extractors import get_extractor

    if model_path is None:
        if name == NAME:
            raise ValueError(
                "--extractor template needs a trained model: add --model MODEL "
                "(a file written by `newscrawl train`)"
            )
        return get_extractor(name)
    then = "" if name == NAME else name
    if then:
        get_extractor(then)  # an unknown name fails here, before the model is read
    return TemplateExtractor(TemplateConfig(model=str(model_path), then=then))
