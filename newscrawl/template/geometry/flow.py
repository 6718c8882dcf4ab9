"""The ``flow`` provider: boxes from text flow alone, no layout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.template.geometry.stylesheet import BLOCK_LEVEL_TAGS


@dataclass(frozen=True, slots=True)
class FlowConfig:
    """The numbers of the flow model (the static model's window, font and character width)."""

    viewport_width: float = 1280.0
    margin: float = 8.0  # <body>'s margin
    line_height: float = 18.4  # px: 16 px text x 1.15
    char_width: float = 6.72  # px: 0.42 em of 16 px text
    indent: float = 4.0  # px of x per nesting level below <body>
    max_indent_levels: int = 40


class FlowGeometry:
    """Boxes from text flow alone: no layout, O(nodes + text runs), vectorised with numpy.

    * Text runs rendered on one line (the Dom's `piece_line`: same block, no <br> between)
      form a line group; a group takes ceil(characters x char width / available width) lines,
      at least one, where the available width is the window less the margins and the
      indentation of the group's block. A run gets the share of its group's lines that its
      characters are.
    * A node's y is the lines of all runs before its first run, its height the lines of its
      own runs (x line height); its x is 8 px + 4 px per level of nesting below <body> (at
      most 40 levels); its width the width left at that x, or for an inline element the width
      of its characters when they fit on one line.
    * Nodes with no visible text (images, empty wrappers, <head>) have zero height.

    It knows no CSS and no columns: a sidebar lies below the article (where it is in the
    source). What it keeps is what the template classifiers use most: position in reading
    order, and how much text a node holds.
    """

    name = "flow"
    Config: ClassVar[type[FlowConfig]] = FlowConfig

    def __init__(self, config: FlowConfig | None = None) -> None:
        self.config = config or FlowConfig()

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray:
        """Boxes of every node; `html` and `url` are not needed by this model."""
        count = len(dom)
        out = np.zeros((count, 4))
        if count == 0:
            return out
        cfg = self.config
        body = dom.body
        depth = np.asarray(dom.depth, dtype=np.float64)
        levels = np.clip(depth - depth[body], 0, cfg.max_indent_levels)
        x = cfg.margin + cfg.indent * levels
        avail = np.maximum(cfg.viewport_width - cfg.margin - x, 10 * cfg.char_width)
        start = np.asarray(dom.piece_start, dtype=np.int64)
        stop = np.asarray(dom.piece_end, dtype=np.int64)
        pieces = len(dom.piece_text)
        if pieces:
            length = np.fromiter(map(len, dom.piece_text), np.float64, pieces)
            line = np.asarray(dom.piece_line, dtype=np.int64)
            # piece_line never decreases: groups are runs of equal values
            first = np.concatenate(([True], line[1:] != line[:-1]))
            group = np.cumsum(first) - 1
            chars = np.bincount(group, weights=length)
            block = np.asarray(dom.piece_block, dtype=np.int64)[first]
            width = avail[np.maximum(block, 0)]
            lines = np.maximum(1.0, np.ceil(chars * cfg.char_width / width))
            share = np.divide(length, chars[group], out=np.zeros(pieces), where=chars[group] > 0)
            prefix = np.concatenate(([0.0], np.cumsum(lines[group] * share)))
            run_chars = np.concatenate(([0.0], np.cumsum(length)))
            y = prefix[start] * cfg.line_height
            height = (prefix[stop] - prefix[start]) * cfg.line_height
            text_width = (run_chars[stop] - run_chars[start]) * cfg.char_width
        else:
            y = height = text_width = np.zeros(count)
        is_block = np.fromiter((t in BLOCK_LEVEL_TAGS for t in dom.tag), bool, count)
        width = np.where(is_block, avail, np.minimum(avail, text_width))
        shown = height > 0
        out[:, 0] = np.where(shown, x, 0.0)
        out[:, 1] = np.where(shown, y, 0.0)
        out[:, 2] = np.where(shown, width, 0.0)
        out[:, 3] = height
        return out
