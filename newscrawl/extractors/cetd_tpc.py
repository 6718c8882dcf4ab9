"""CETD-TPC: text block density x tag path coverage (Liu, Hu, Wu, 2018).

Every element v roots a block blk(v). Two features score it:

* TBD(v), the text block density: the sum over v's children c of
  (CN_c - LCN_c + 1) / (TN_c - LTN_c + 1), with CN/LCN the characters (all / inside links) and
  TN/LTN the tags (all / `<a>`) of blk(c). Dense, link-poor children add up.
* CTPC(v), the content tag path coverage: the share of the page's content text nodes that lie in
  blk(v). A text node's tag path is the tag sequence from the root to its element; TPR(p), the
  text to tag path ratio, is the total text length of the text nodes on path p divided by their
  number; content text nodes are those whose path has TPR > tau.

The output is the whole text of the block with the largest TDTPC = TBD x CTPC (the paper's
`cntT.text`). Everything is linear: subtree sums are the `Dom`'s O(1) measures, tag paths are
interned incrementally (a node's path id is a function of its parent's id and its tag), and
nothing recurses.

How tau is defined. The paper (section 3, steps 3-5) says only that tau is "the empirical
threshold of the CEPR algorithm" (Wu et al., CIKM 2013, its reference [22]); it states no value
and no formula. CEPR, like CETR before it, does not use a constant: its threshold is derived from
each page as tau = lambda x sigma, sigma being the standard deviation of the path ratios of the
page's text nodes (CEPR takes it on its Gaussian-smoothed ETPR histogram; CETD-TPC thresholds
plain TPR, so here sigma is the standard deviation of TPR over the text nodes, each text node
contributing its path's TPR). `tau_lambda` is lambda; 1.0 (one standard deviation) is the
default, and F1 on the development sets is flat between 1.0 and 1.5. tau is capped just below
the largest TPR, so that a page always has content nodes.

Readings and deviations where the paper leaves room (each is a knob of `CETDTPCConfig`; the
literal variant is `text_child_tags=0, tpr_link_text=True, coverage_by_chars=False`):

* Text children (`text_children`, `text_child_tags`). The sum runs over "the children" of v; in
  a DOM (and in Jsoup, which the authors used) text nodes are children too, and without them a
  block whose text sits directly in it (`<div>text<br>text</div>`) would score zero. A text
  child has no tags of its own; it is counted as one node (denominator 1 + 1), so that
  `<div>text</div>` and `<div><p>text</p></div>` get the same density. With a denominator of 1
  a block of bare text outscored the same text in paragraphs two to one.
* Link text in TPR (`tpr_link_text=False`, a deviation). TBD already discounts link characters;
  TPR, as written, counts them, so lists of long linked headlines ("related articles") became
  content paths and pulled the coverage towards the whole page. TPR here counts the characters
  outside links.
* Coverage weight (`coverage_by_chars=True`, a deviation). Definition 6 counts content nodes;
  here each content node weighs its length, so that a sidebar of many short content nodes
  cannot outweigh a few long article paragraphs.
* Coverage is counted inside the block: containNodes(P1 & P2) is read as the content nodes of
  blk(v), so that a sidebar sharing the article's paths does not inherit the article's coverage.

Each deviation was measured against the literal reading, on its own and together
(docs/experiments.md, "Readings of the papers").
"""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt

import numpy as np

from newscrawl.extractors.extractor_base import Extraction
from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom

__all__ = ["CETDTPC", "CETDTPCConfig", "content_pieces", "path_ids", "text_block_density"]


@dataclass(frozen=True, slots=True)
class CETDTPCConfig:
    """Parameters of CETD-TPC; the module docstring gives the reading behind each one.

    tau_lambda: tau = tau_lambda x standard deviation of TPR over the page's text nodes (CEPR).
    text_children: text nodes count as children in TBD's sum.
    text_child_tags: the tag count TN given to a text child (0 = literally no tags).
    tpr_link_text: TPR counts characters inside links (the paper's literal definition).
    coverage_by_chars: CTPC weighs each content node by its length instead of counting it.
    """

    tau_lambda: float = 1.0
    text_children: bool = True
    text_child_tags: float = 1.0
    tpr_link_text: bool = False
    coverage_by_chars: bool = True


def path_ids(dom: Dom) -> list[int]:
    """An interned tag-path id per node (`Dom.path_ids`)."""
    return dom.path_ids


def text_block_density(
    dom: Dom, text_children: bool = True, text_child_tags: float = 1.0
) -> list[float]:
    """TBD(v) for every node: the sum of its children's (CN - LCN + 1) / (TN - LTN + 1)."""
    return _text_block_density(dom, text_children, text_child_tags).tolist()


_PieceArrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def _piece_arrays(dom: Dom) -> _PieceArrays:
    """Each text piece's length, owner and whether it is in a link, as arrays made once."""
    count = len(dom.piece_text)
    return (
        np.fromiter(map(len, dom.piece_text), dtype=np.int64, count=count),
        np.asarray(dom.piece_owner, dtype=np.int64),
        np.asarray(dom.piece_in_link, dtype=bool),
    )


def _text_block_density(
    dom: Dom, text_children: bool, text_child_tags: float, pieces: _PieceArrays | None = None
) -> np.ndarray:
    """`text_block_density` as an array: every term from prefix sums at once, then summed per
    node by `np.bincount`, which adds in array order - children in id order, then text
    pieces - as the per-node loop of the definition does, so each sum is that loop's float."""
    count = len(dom.tag)
    start, stop, chars, link_chars = dom.subtree_arrays
    node = np.arange(count)
    parent, end, _ = dom.node_arrays
    links = dom.link_tags_prefix
    text = (chars[stop] - chars[start]) - (link_chars[stop] - link_chars[start])
    tags = (end - node) - (links[end] - links[node])
    child = parent >= 0
    owners, terms = [parent[child]], [((text + 1) / (tags + 1))[child]]
    if text_children:
        weight = 1.0 / (text_child_tags + 1.0)
        lengths, piece_owners, in_link = pieces or _piece_arrays(dom)
        owners.append(piece_owners)
        terms.append(np.where(in_link, 1.0, lengths + 1.0) * weight)
    return np.bincount(np.concatenate(owners), np.concatenate(terms), minlength=count)


def content_pieces(
    dom: Dom, paths: list[int], tau_lambda: float = 1.0, link_text: bool = False
) -> list[bool]:
    """Per text piece: is its path's TPR above tau = tau_lambda x sigma(TPR over pieces)?

    `link_text=False` leaves characters inside links out of TPR's numerator.
    """
    return _content_mask(paths, _piece_arrays(dom), tau_lambda, link_text).tolist()


def _content_mask(
    paths: list[int], pieces: _PieceArrays, tau_lambda: float, link_text: bool
) -> np.ndarray:
    """`content_pieces` as a boolean array (`pieces`: `_piece_arrays`). A path's text
    and piece counts are whole numbers, exact as floats, and its TPR their one division, so
    each ratio is the float the per-piece sums give; the mean and sigma are summed in piece
    order, as Python floats."""
    lengths, owners, in_link = pieces
    piece_paths = np.asarray(paths, dtype=np.int64)[owners]
    counted = lengths if link_text else np.where(in_link, 0, lengths)
    total = np.bincount(piece_paths, weights=counted)
    count = np.bincount(piece_paths)
    ratios = total[piece_paths] / count[piece_paths]
    values = ratios.tolist()
    mean = sum(values) / len(values)
    sigma = sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    # A threshold at or above every ratio (one dominant path and a large lambda) would leave no
    # content node and no coverage at all: keep at least the path(s) with the top ratio.
    tau = min(tau_lambda * sigma, max(values) - 1e-9)
    return ratios > tau


class CETDTPC:
    """Pick the block with the largest text block density x content tag path coverage."""

    name = "cetd-tpc"
    Config = CETDTPCConfig

    def __init__(self, config: CETDTPCConfig | None = None) -> None:
        self.config = config or CETDTPCConfig()

    def extract(self, dom: Dom) -> Extraction:
        title = page_title(dom)
        if not dom.piece_text:
            return Extraction.empty(self.name, title)
        best = self.best_block(dom)
        text = dom.text(best) if best >= 0 else ""
        if not text:
            return Extraction.empty(self.name, title)
        pieces = tuple(range(dom.piece_start[best], dom.piece_end[best]))
        return Extraction(
            title=title, text=text, node_ids=(best,), extractor=self.name, pieces=pieces
        )

    def select(self, dom: Dom) -> tuple[int, ...]:
        """The `node_ids` of `extract`, without its title and text (a block with text)."""
        if not dom.piece_text:
            return ()
        best = self.best_block(dom)
        has_text = best >= 0 and dom.piece_end[best] > dom.piece_start[best]
        return (best,) if has_text else ()

    def best_block(self, dom: Dom) -> int:
        """The node with the largest TDTPC, or -1 when no block scores above zero."""
        paths = path_ids(dom)
        config = self.config
        pieces = _piece_arrays(dom)
        content = _content_mask(paths, pieces, config.tau_lambda, config.tpr_link_text)
        weights = np.where(content, pieces[0], 0) if config.coverage_by_chars else content
        # content weight of the pieces before each index: whole numbers
        prefix = np.concatenate([[0], np.cumsum(weights, dtype=np.int64)])
        total = int(prefix[-1])
        if not total:
            return -1
        tbd = _text_block_density(dom, config.text_children, config.text_child_tags, pieces)
        weight = prefix.astype(np.float64)
        start, stop = dom.subtree_arrays[:2]
        # the loop's `density * covered / total`, left to right, for every node at once
        score = tbd * (weight[stop] - weight[start]) / total
        best = int(np.argmax(score))  # the first of equal scores, as a strict `>` scan keeps
        return best if score[best] > 0.0 else -1
