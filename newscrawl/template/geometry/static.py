"""The ``static`` provider: boxes from a block-layout model of the DOM, no browser."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.template.geometry.layout import StaticLayout
from newscrawl.template.geometry.stylesheet import StaticConfig


class StaticGeometry:
    """Boxes from a block-layout model of the DOM: deterministic, no browser, O(nodes).

    The model, in the order it is computed:

    * The window is 1280 px wide. ``<html>`` spans it; ``<body>`` has Chrome's 8 px margin.
    * Block elements (div, p, li, h1..., and inline elements that contain blocks) take their
      parent's content width minus their margins and stack vertically; vertical margins of
      adjacent siblings collapse to the larger one, as in CSS. Lists indent by 40 px.
    * Text and inline elements flow in lines inside their block: a character is 0.42 em wide,
      a line 1.15 em tall (16 px body text, headings larger); lines wrap at the block's width.
      An inline element's box covers its characters (its first to last line when it wraps).
      ``<br>`` ends a line. Images, inputs, buttons and video are atoms of their markup size
      (``width``/``height`` attributes or inline-style px) or a default size; an atom taller
      than the line makes the line taller.
    * Tables shrink to fit their content unless given a width; a row's cells share its width
      in proportion to their preferred (single-line) widths, and all cells of a row are as
      tall as its tallest.
    * Two typical page layouts that the default stylesheet cannot know are assumed: an
      ``<aside>`` (or an element whose class or id says sidebar/rail/secondary) sits in a
      column of at most 300 px beside its neighbouring block, and a list inside ``<nav>`` (or
      with nav/menu in its class or id) whose items are all short lays its items out in a row.
    * ``<head>`` and its content, elements with ``hidden`` or ``display:none`` in their inline
      style, and ``<input type=hidden>`` are not rendered: zero boxes.

    The page's stylesheets are ignored, so a real page's boxes differ (a styled page is usually
    narrower and uses more columns); use the ``chromium`` provider when that matters.
    """

    name = "static"
    Config: ClassVar[type[StaticConfig]] = StaticConfig

    def __init__(self, config: StaticConfig | None = None) -> None:
        self.config = config or StaticConfig()

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray:
        """Boxes of every node; `html` and `url` are not needed by this model."""
        if len(dom) == 0:
            return np.zeros((0, 4))
        return StaticLayout(dom, self.config).run()
