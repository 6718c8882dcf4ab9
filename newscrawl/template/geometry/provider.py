"""What every geometry provider is: boxes for a Dom's nodes, and their areas."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from newscrawl.html.dom import Dom

# flow: the boxes the shipped template model is trained on
DEFAULT_PROVIDER = "flow"


class GeometryError(RuntimeError):
    """A geometry provider that cannot work here (e.g. no chromium installed)."""


class GeometryProvider(Protocol):
    """Computes a box for every node of a Dom."""

    name: str

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray: ...
