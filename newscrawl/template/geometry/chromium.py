"""The ``chromium`` provider: real boxes from Debian's chromium through Playwright."""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterable
from copy import deepcopy
from typing import Any

import lxml.html
import numpy as np

from newscrawl.html.dom import Dom
from newscrawl.html.tree import drop_tree
from newscrawl.template.geometry.provider import GeometryError

CHROMIUM_PATH = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
# Every host name and address fails to resolve in the browser: no request it makes reaches any
# server, whatever starts it (prefetches included, which Playwright's request routing does not
# see).
OFFLINE_ARGS = ("--host-resolver-rules=MAP * ~NOTFOUND",)
ID_ATTRIBUTE = "data-nc-id"
# Inline styles lay the page out; nothing is fetched (data: images and fonts need no network).
OFFLINE_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
# <link rel> values that make a browser fetch or connect ahead of need: never wanted for a layout
RESOURCE_HINTS = frozenset(
    {"prefetch", "preload", "prerender", "dns-prefetch", "preconnect", "modulepreload"}
)


# Every marked element's box in page coordinates, in one round trip.
BOXES_JS = """() => Array.from(document.querySelectorAll('[data-nc-id]'), (el) => {
  const r = el.getBoundingClientRect();
  return [Number(el.getAttribute('data-nc-id')), r.left + window.scrollX, r.top + window.scrollY,
          r.width, r.height];
})"""
_STRIPPED = ("script", "noscript")  # the Dom has no nodes for them; a browser with JS hides both


def marked_html(dom: Dom) -> str:
    """The Dom's markup with ``data-nc-id="<node id>"`` on every element, for a browser.

    Works on a copy (the Dom's own tree is shared with other stages and must not change).
    Scripts and noscript blocks are dropped, resource hints (``<link rel=prefetch>``,
    preload, preconnect...) lose their URLs and ``<meta http-equiv=refresh>`` its target, so
    the page neither fetches ahead nor navigates away, and a Content-Security-Policy first in
    ``<head>`` refuses every fetch (inline styles still apply).
    """
    if len(dom) == 0:
        return "<html></html>"
    root = dom.elements[0]
    copy = deepcopy(root)
    position = {el: i for i, el in enumerate(root.iter())}
    copies = list(copy.iter())
    for node, el in enumerate(dom.elements):
        copies[position[el]].set(ID_ATTRIBUTE, str(node))
    for el in [e for e in copies if isinstance(e.tag, str) and e.tag.lower() in _STRIPPED]:
        drop_tree(el)  # keeps its tail text
    _disarm(copy)
    policy = lxml.html.Element("meta", content=OFFLINE_POLICY)
    policy.set("http-equiv", "Content-Security-Policy")
    _add_to_head(copy, policy)  # first in <head>: before any element that could fetch
    doctype = root.getroottree().docinfo.doctype or ""
    body = lxml.html.tostring(copy, encoding="unicode", method="html")
    return f"{doctype}\n{body}" if doctype else body


def _disarm(root: lxml.html.HtmlElement) -> None:
    """Resource hints without their URLs, refreshes without their targets (the elements stay,
    with their node ids)."""
    for el in root.iter("link", "meta"):
        if el.tag == "link":
            rel = set((el.get("rel") or "").lower().split())
            if rel & RESOURCE_HINTS:
                for name in ("href", "imagesrcset", "imagesizes"):
                    el.attrib.pop(name, None)
        elif (el.get("http-equiv") or "").strip().lower() == "refresh":
            el.attrib.pop("content", None)


def _add_to_head(root: lxml.html.HtmlElement, el: lxml.html.HtmlElement) -> None:
    head = root.find("head")
    if head is None:
        head = lxml.html.Element("head")
        root.insert(0, head)
    head.insert(0, el)


def boxes_from_rects(count: int, rects: Iterable[Iterable[float]]) -> np.ndarray:
    """A (count, 4) box array from ``[node id, x, y, width, height]`` rows (`BOXES_JS`)."""
    out = np.zeros((count, 4))
    for node, x, y, width, height in rects:
        node = int(node)
        if 0 <= node < count and all(math.isfinite(v) for v in (x, y, width, height)):
            out[node] = (x, y, width, height)
    return out


class ChromiumGeometry:
    """Boxes from Debian's chromium through Playwright (sync API). One browser, many pages.

    ``with ChromiumGeometry() as geometry: geometry.boxes(dom)`` starts the browser once and
    closes it at the end; used without ``with``, it starts on first use and closes at exit.
    The browser fetches nothing at all (its name resolution is off, the page carries a policy
    that refuses every fetch and every request is aborted) and lays the page out with the
    default stylesheet and the page's inline styles.
    Playwright's sync API is bound to one thread and cannot run inside an asyncio loop: the
    crawl calls it from the site pass, off the reactor thread.
    """

    name = "chromium"

    def __init__(
        self,
        executable_path: str = CHROMIUM_PATH,
        viewport: tuple[int, int] = (1280, 800),
        timeout_ms: float = 30_000,
    ) -> None:
        self.executable_path = executable_path
        self.viewport = viewport
        self.timeout_ms = timeout_ms
        self._playwright: Any = None
        self._browser: Any = None
        self._page: Any = None

    def __enter__(self) -> ChromiumGeometry:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        if self._page is not None:
            return
        if not os.path.exists(self.executable_path):
            raise GeometryError(
                f"chromium not found at {self.executable_path}: install Debian's chromium "
                "(apt-get install chromium) or use the static geometry provider"
            )
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        try:
            self._browser = self._playwright.chromium.launch(
                executable_path=self.executable_path,
                args=[*CHROMIUM_ARGS, *OFFLINE_ARGS],
                headless=True,
            )
            width, height = self.viewport
            context = self._browser.new_context(
                viewport={"width": width, "height": height}, java_script_enabled=False
            )
            context.route("**/*", lambda route: route.abort())
            context.set_default_timeout(self.timeout_ms)
            self._page = context.new_page()
        except Exception:
            self.close()
            raise

    def close(self) -> None:
        """Close the browser (a no-op when it is not running)."""
        browser, playwright = self._browser, self._playwright
        self._page = self._browser = self._playwright = None
        try:
            if browser is not None:
                browser.close()
        finally:
            if playwright is not None:
                playwright.stop()

    def boxes(
        self, dom: Dom, html: str | bytes | None = None, url: str | None = None
    ) -> np.ndarray:
        """Boxes of every node of `dom`. `html` and `url` are not used: the Dom itself is
        rendered, so that node ids match, and nothing is fetched."""
        if len(dom) == 0:
            return np.zeros((0, 4))
        self.start()
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        # A page that never finished loading does not stop us: the layout is there.
        with contextlib.suppress(PlaywrightTimeout):
            self._page.set_content(marked_html(dom), wait_until="load")
        return boxes_from_rects(len(dom), self._page.evaluate(BOXES_JS))
