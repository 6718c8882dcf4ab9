"""The study's six node features (seven numbers), computed for all nodes of a page at once.

Chakrabarti, Kumar and Punera list: closeness to the page margins (two numbers: distance to
the top and to the left), links per word, fraction of the text inside anchors, mean anchor
size, fraction of the links that stay on the site, and fraction of the node's HTML characters
that are visible text.

Readings taken where the study is silent:
- distances are divided by the page's height and width (`relative=True`, the default), so a
  footer sits near 1.0 whether the page is 2,000 or 20,000 px tall; `relative=False` gives px;
- mean anchor size is in words (words inside links / links);
- a ratio with an empty denominator is 0 (no words, no links, no text).
"""

from __future__ import annotations

import numpy as np

from newscrawl.template.node_records import PageNodes

__all__ = ["FEATURES", "node_features"]

FEATURES: tuple[str, ...] = (
    "top",
    "left",
    "links_per_word",
    "anchor_text",
    "anchor_size",
    "intra_links",
    "visible_html",
)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = num.astype(np.float64)
    den = den.astype(np.float64)
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def node_features(page: PageNodes, relative: bool = True) -> np.ndarray:
    """float32 (n, 7) matrix, columns in `FEATURES` order."""
    x = page.boxes[:, 0].astype(np.float64)
    y = page.boxes[:, 1].astype(np.float64)
    width = float(np.max(page.boxes[:, 0] + page.boxes[:, 2])) if len(page) else 0.0
    height = float(np.max(page.boxes[:, 1] + page.boxes[:, 3])) if len(page) else 0.0
    if relative:
        x = x / width if width > 0 else np.zeros_like(x)
        y = y / height if height > 0 else np.zeros_like(y)
    columns = (
        y,
        x,
        _ratio(page.links, page.words),
        np.minimum(_ratio(page.link_chars, page.text_len), 1.0),
        _ratio(page.link_words, page.links),
        _ratio(page.intra_links, page.links),
        np.minimum(_ratio(page.text_len, page.html_len), 1.0),
    )
    return np.column_stack(columns).astype(np.float32) if len(page) else np.zeros((0, 7), "f4")
