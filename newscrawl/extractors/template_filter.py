"""Template-aware extraction: cut a site's template out of a page, then extract.

The trained, area-bucketed classifiers score every node of the page, isotonic smoothing makes
the scores respect the tree ("a node is template iff all its children are"), and the nodes with
a smoothed score s' >= 0.5 are template. A page whose site's template the caller hands over
(`extract(dom, template=...)`, learnt from the site's pages by `site.site_context.learn_site`)
also loses the nodes that template marks: what a single-page extractor cannot know. The filter
learns nothing from the pages it sees, so its output is a function of the page and that
context alone. What is left is either the answer
itself (the filter alone, `--extractor template`) or what a page-level extractor reads
(`--extractor nce --model M`: NCE on what the filter keeps; `order="after"` instead runs NCE on
the whole page and removes the template lines from its answer, which suits extractors that
need the noise around the content to find it).

The filter works on a pruned copy of the page's element tree, turned into a new `Dom` (no
re-parse: the copy is taken from the parsed tree), so every page-level extractor runs on it
unchanged. <head> is never dropped (titles and meta tags live there). When the filter would
drop the whole body, the page is handed on unfiltered: a model that sees no content anywhere
is wrong about this page, and the page-level extractor alone is the better answer.
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from newscrawl.extractors.extractor_base import Extraction, Extractor
from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom
from newscrawl.html.tags import BLOCK_TAGS
from newscrawl.html.tree import drop_tree
from newscrawl.html.urls import site_of
from newscrawl.models.template_model import TemplateModel, check_model, load_model
from newscrawl.site.site_template import TemplateHashes
from newscrawl.template.node_features import FEATURES
from newscrawl.template.node_records import PageNodes
from newscrawl.template.sitelevel import SiteLevelConfig, label_page
from newscrawl.template.sitemethods import DEFAULT_SITE_METHOD, SiteMethod, check_site_method
from newscrawl.template.template_scoring import raw_scores, smooth_page

__all__ = [
    "TemplateConfig",
    "TemplateExtractor",
    "build_template_extractor",
    "mask_from_scores",
    "pruned_dom",
    "trim_lines",
]

NAME = "template"


@dataclass(frozen=True, slots=True)
class TemplateConfig:
    """`model`: model file (required). `then`: page-level extractor combined with the filter ("" =
    the filter alone). `order`: "before" runs `then` on the page the filter leaves; "after" runs
    it on the whole page and then removes the template lines from its answer (None: the
    model's own choice, made by cross-validation for the shipped model; "before" for others).
    `c`: smoothing penalty (the paper's 0.01). `threshold`: s' at or above it is template
    (None: the model's own, chosen by cross-validation for the shipped model; 0.5 for others).
    `geometry`: the box provider ("": the model's; another than the model's is a `ModelError`).
    `smooth=False` thresholds the raw classifier scores (for the evaluation). `site_method`:
    which site template the filter reads when the caller hands one over - "sitelevel" (its
    hashes), "sst", "pagelets" or "entropy" (`newscrawl.template.sitemethods`)."""

    model: str = ""
    then: str = ""
    order: str | None = None
    c: float = 0.01
    threshold: float | None = None
    smooth: bool = True
    geometry: str = ""
    site_method: str = DEFAULT_SITE_METHOD


class TemplateExtractor:
    """Drops template nodes, then returns the rest or runs a page-level extractor on it."""

    name: ClassVar[str] = NAME
    Config = TemplateConfig
    uses_site_template: ClassVar[bool] = True  # callers that know the site hand its template

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
        self.geometry = (self.config.geometry or model.geometry).strip().lower()
        check_model(model, FEATURES, self.geometry)
        self.model = model
        self.threshold = (
            model.threshold if self.config.threshold is None else float(self.config.threshold)
        )
        self.inner: Extractor | None = None
        if self.config.then and self.config.then != NAME:
            from newscrawl.extractors import get_extractor

            self.inner = get_extractor(self.config.then)
        self.order = self.config.order or str(model.options.get("order") or "before")
        if self.order not in ("before", "after"):
            raise ValueError(f"order must be 'before' or 'after', not {self.order!r}")
        self.label = f"{NAME}+{self.config.then}" if self.inner else NAME
        self.sitelevel = SiteLevelConfig()
        self.site_method = check_site_method(self.config.site_method)

    # -- scoring --------------------------------------------------------------------------------

    def raw_scores(self, dom: Dom, page: PageNodes | None = None) -> np.ndarray:
        """Classifier score per node; NaN for nodes no bucket covers (too small, invisible)."""
        return raw_scores(dom, self.model, page or self._page(dom))

    def _page(self, dom: Dom, hashes: bool = False) -> PageNodes:
        """The page's node records (content hashes only when SiteLevel's template needs them)."""
        return PageNodes.from_dom(dom, dom.url, geometry=self.geometry, hashes=hashes)

    def template_mask(
        self,
        dom: Dom,
        page: PageNodes | None = None,
        template: TemplateHashes | SiteMethod | None = None,
    ) -> np.ndarray:
        """bool per node: template. The classifiers' verdict (smoothed unless `smooth=False`),
        and the nodes the site's `template` marks when the caller knows it; <head> never is."""
        page = page or self._page(dom, hashes=isinstance(template, TemplateHashes))
        mask = mask_from_scores(
            dom.parent,
            self.raw_scores(dom, page),
            dom.body,
            self.config.c,
            self.threshold,
            self.config.smooth,
        )
        if isinstance(template, TemplateHashes):
            config = self.sitelevel
            mask |= label_page(page, template.hashes, config.html_share, config.share_of)
        elif template is not None:
            mask |= template.mask_of(dom)
        mask[: dom.body] = False
        return mask

    # -- extraction -----------------------------------------------------------------------------

    def extract(self, dom: Dom, template: TemplateHashes | SiteMethod | None = None) -> Extraction:
        """The page less its template nodes (or a page-level extractor's answer on that);
        `template`: the site's template by `site_method`, when the caller knows the site."""
        if not len(dom):
            return self.extract_masked(dom, np.zeros(0, bool))
        return self.extract_masked(dom, self.template_mask(dom, template=template))

    def extract_masked(
        self, dom: Dom, mask: np.ndarray, pruned: tuple[Dom, np.ndarray, list[int]] | None = None
    ) -> Extraction:
        """The extraction once the template nodes (`mask`) are known; `pruned` is
        `pruned_dom(dom, mask)` when the caller already has it."""
        if not len(dom) or mask[dom.body]:
            return self._unfiltered(dom)
        if self.inner is not None and self.order == "after":
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
        """The page-level extractor's answer on the whole page, less the lines of template
        nodes (`trim_lines`)."""
        assert self.inner is not None
        chosen = self.inner.extract(dom)
        gone = _in_subtrees(dom, dropped)
        return Extraction(
            title=chosen.title,
            text=trim_lines(dom, chosen.text, dropped, gone),
            node_ids=tuple(i for i in chosen.node_ids if not gone[i]),
            extractor=self.label,
        )

    def _unfiltered(self, dom: Dom) -> Extraction:
        if self.inner is not None:
            inner = self.inner.extract(dom)
            return Extraction(inner.title, inner.text, inner.node_ids, self.label, inner.pieces)
        body = dom.body if len(dom) else 0
        text = dom.text(body) if len(dom) else ""
        pieces = tuple(range(dom.piece_start[body], dom.piece_end[body])) if text else ()
        return Extraction(page_title(dom), text, (body,) if text else (), self.label, pieces)


def page_site(dom: Dom) -> str:
    """The site a page belongs to: `dom.site` when the caller set it (`--site-from`; "" = no
    site), else the host (without "www.") of its URL, else of its og:url or canonical link; ""
    when none is known."""
    if dom.site is not None:
        return dom.site
    if dom.url:
        return site_of(dom.url)
    for key in ("og:url", "twitter:url"):
        if dom.meta.get(key, "").startswith(("http://", "https://")):
            return site_of(dom.meta[key])
    for node, tag in enumerate(dom.tag):
        if tag == "link" and (dom.elements[node].get("rel") or "").lower() == "canonical":
            return site_of(dom.elements[node].get("href") or "")
        if tag == "body":
            break
    return ""


def trim_lines(dom: Dom, text: str, dropped: Sequence[int], gone: np.ndarray | None = None) -> str:
    """`text`, an extractor's answer on `dom`, less the lines that lie in the subtrees rooted at
    `dropped` (`gone`: `_in_subtrees(dom, dropped)` when the caller has it).

    Extractors return text, one block a line, and not always as whole subtrees (MSS picks
    text runs), so the filter works on lines: the answer's lines are matched, in document
    order, to the page's lines, and a line all of whose text lies in dropped subtrees is
    removed. A line that matches no page line (an extractor may join or trim text) stays.
    """
    gone = _in_subtrees(dom, dropped) if gone is None else gone
    page_lines = _page_lines(dom, gone)
    position: dict[str, list[int]] = {}
    for index, (key, _) in enumerate(page_lines):
        position.setdefault(key, []).append(index)
    lines, cursor = [], 0
    for line in text.splitlines():
        spots = position.get(_line_key(line), [])
        at = bisect_left(spots, cursor)
        if at < len(spots):
            cursor = spots[at] + 1
            if page_lines[spots[at]][1]:
                continue  # a template line
        lines.append(line)
    return "\n".join(lines)


def _line_key(line: str) -> str:
    return " ".join(line.split())


def _in_subtrees(dom: Dom, roots: Sequence[int]) -> np.ndarray:
    """bool per node: inside (or at) one of the subtrees rooted at `roots`."""
    cut = np.zeros(len(dom) + 1, dtype=np.int64)
    for root in roots:
        cut[root] += 1
        cut[dom.end[root]] -= 1
    return np.cumsum(cut)[: len(dom)] > 0


def _page_lines(dom: Dom, gone: np.ndarray) -> list[tuple[str, bool]]:
    """The body's text as `Dom.text` splits it into lines: (line key, every piece of the line
    is in a dropped subtree)."""
    body = dom.body
    lines: list[tuple[str, bool]] = []
    start = dom.piece_start[body]
    for stop in range(start + 1, dom.piece_end[body] + 1):
        if stop < dom.piece_end[body] and dom.piece_block[stop] == dom.piece_block[start]:
            continue
        text = dom.pieces_text(range(start, stop))
        dropped = all(gone[dom.piece_owner[k]] for k in range(start, stop))
        lines.extend((_line_key(line), dropped) for line in text.splitlines())
        start = stop
    return lines


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
        mask = smooth_page(parent, scores, body, c) >= threshold
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
        drop_tree(twin_of[dom.elements[node]])
    kept = Dom(twin, url=dom.url)
    ids = np.fromiter((original_id[e] for e in kept.elements), dtype=np.int64, count=len(kept))
    return kept, ids, dropped


def build_template_extractor(
    name: str, model_path: str | None, site_method: str = DEFAULT_SITE_METHOD
) -> Extractor:
    """What `--extractor NAME --model MODEL [--site-method METHOD]` means.

    With a model: "template" is the filter alone, any page-level name runs that extractor on
    what the filter keeps; the site's own template is learnt by `site_method`. Without one:
    "template" is an error that says what is missing, any other name is the page-level
    extractor as it is.
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
    config = TemplateConfig(model=str(model_path), then=then, site_method=site_method)
    return TemplateExtractor(config)
