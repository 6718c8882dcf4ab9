"""Page geometry: an (x, y, width, height) box in CSS pixels for every node of a `Dom`.

The template classifiers (Chakrabarti, Kumar and Punera) use where a node sits on the rendered
page (distance to the top and left margins) and pick their model by node area (width x height,
px^2, buckets from 2,000 px^2 up). Three providers compute boxes, chosen by name with
`get_geometry_provider`:

``flow`` (default, `DEFAULT_PROVIDER`)
    The cheapest: no layout at all (`FlowGeometry`). A node's y is where its text starts in
    document order (lines of text before it), its x its indentation (nesting depth), its
    height the lines its text takes at the width left to it, its width that width (or its
    text's width for a short inline element); numpy over the Dom's text runs. The shipped
    template model is trained on these boxes.
``static``
    No browser: a deterministic block-layout model of the DOM (`StaticGeometry`). It knows the
    browser's default stylesheet, not the page's CSS, so it sees an unstyled page laid out in
    a 1280 px wide window.
``chromium``
    Real boxes from Debian's chromium (/usr/bin/chromium) driven through Playwright
    (`ChromiumGeometry`). The Dom is serialised with a ``data-nc-id`` attribute on every
    element, loaded with ``page.set_content`` (scripts stripped, JavaScript off, network off),
    and every element's ``getBoundingClientRect`` is read in one call.
    Elements the browser does not render get zero boxes. One browser serves many pages; use
    the class as a context manager to control its lifetime.

All return a float array of shape ``(len(dom), 4)``: x, y, width, height, in page (not
viewport) coordinates; hidden nodes (``<head>`` and its content, ``hidden``, ``display:none``)
are all zeros.
"""

from __future__ import annotations

import atexit
import os
import threading
from importlib import import_module

from newscrawl.template.geometry.chromium import (
    CHROMIUM_ARGS,
    CHROMIUM_PATH,
    ID_ATTRIBUTE,
    ChromiumGeometry,
    boxes_from_rects,
    marked_html,
)
from newscrawl.template.geometry.flow import FlowConfig, FlowGeometry
from newscrawl.template.geometry.provider import (
    DEFAULT_PROVIDER,
    GeometryError,
    GeometryProvider,
)
from newscrawl.template.geometry.static import StaticGeometry
from newscrawl.template.geometry.stylesheet import StaticConfig

__all__ = [
    "BROWSERS",
    "CHROMIUM_ARGS",
    "CHROMIUM_PATH",
    "DEFAULT_PROVIDER",
    "ID_ATTRIBUTE",
    "PROVIDERS",
    "BrowserPool",
    "ChromiumGeometry",
    "FlowConfig",
    "FlowGeometry",
    "GeometryError",
    "GeometryProvider",
    "StaticConfig",
    "StaticGeometry",
    "boxes_from_rects",
    "check_geometry",
    "get_geometry_provider",
    "marked_html",
]

PROVIDERS: dict[str, type] = {
    "static": StaticGeometry,
    "chromium": ChromiumGeometry,
    "flow": FlowGeometry,
}
# The static and flow models keep no state between pages: one default instance of each serves
# every caller. A browser is state: see `BrowserPool`.
_STATELESS: dict[str, GeometryProvider] = {"static": StaticGeometry(), "flow": FlowGeometry()}


class BrowserPool:
    """The chromium providers `get_geometry_provider("chromium")` hands out: one browser per
    thread (Playwright's sync objects belong to the thread that made them), started on first
    use and reused by every later page of that thread; `close()` stops the calling thread's.
    The main thread's browser is also closed at exit; a worker thread's goes away with the
    Playwright driver when the process exits."""

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self) -> ChromiumGeometry:
        browser: ChromiumGeometry | None = getattr(self._local, "browser", None)
        if browser is None:
            browser = self._local.browser = ChromiumGeometry()
            if threading.current_thread() is threading.main_thread():
                atexit.register(browser.close)
        return browser

    def close(self) -> None:
        browser = getattr(self._local, "browser", None)
        self._local.browser = None
        if browser is not None:
            browser.close()


BROWSERS = BrowserPool()


def _provider_name(name: str | None) -> str:
    """`name` as `PROVIDERS` spells it (`DEFAULT_PROVIDER` for None or empty); a ValueError
    naming the choices for an unknown one."""
    name = (name or DEFAULT_PROVIDER).strip().lower()
    if name not in PROVIDERS:
        raise ValueError(f"unknown geometry provider {name!r}; choose from {sorted(PROVIDERS)}")
    return name


def check_geometry(name: str | None) -> str:
    """The provider's canonical name, checked before a crawl relies on it: a ValueError naming
    the choices for an unknown one, a GeometryError when chromium is asked for and it, or the
    Playwright that drives it, is missing (a site pass would otherwise fail site by site, long
    after the crawl started)."""
    name = _provider_name(name)
    if name != "chromium":
        return name
    if not os.path.exists(CHROMIUM_PATH):
        raise GeometryError(
            f"NEWSCRAWL_GEOMETRY=chromium but chromium is not at {CHROMIUM_PATH} "
            "(apt-get install chromium)"
        )
    try:
        import_module("playwright.sync_api")
    except ImportError as err:
        raise GeometryError(
            f"NEWSCRAWL_GEOMETRY=chromium needs playwright, which cannot be imported ({err}): "
            "pip install 'newscrawl[render]'"
        ) from None
    return name


def get_geometry_provider(name: str | None = None) -> GeometryProvider:
    """The provider called `name` (`DEFAULT_PROVIDER`, flow, when None or empty): the static
    and flow models' default instances (they keep no state), or the calling thread's browser
    from `BROWSERS`, so per-page calls reuse one browser. Other settings of a model: make its
    class with its config (``StaticGeometry(StaticConfig(viewport_width=800))``)."""
    name = _provider_name(name)
    return BROWSERS.get() if name == "chromium" else _STATELESS[name]
