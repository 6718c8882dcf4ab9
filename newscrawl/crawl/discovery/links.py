"""A page's links as the canonical URLs the crawl follows, remembering what a site's pages share.

On a real site most of a page's links are the site's menus and table of contents, the same on
every page: a 200-page crawl of a documentation site meets some 60,000 links for a few thousand
distinct URLs, and joining and canonicalising each cost more than parsing the page. A link whose
target does not depend on the page it is on (an absolute `http(s)://` href, or a root-relative
`/path` or `//host/path` one, which depend only on the base's scheme and host) is resolved once
per site; a repeat costs a dict lookup. A relative one with a path of its own (`page.html`,
`../api/`, as documentation generators write every menu and sidebar link) depends only on the
base's folder, and is resolved once per folder. An href that names no host and no path (`//`,
`http://?q`, `?q`, `http:` with a path: urljoin takes the page's own path for it) or holds a
tab or line break (which urljoin drops, so `/\t/` reads as `//`) is resolved afresh on every
page.
What a resolver remembers is bounded: 10,000 hrefs (about 3 MB) per site, enough for the few
thousand distinct links of a 200-page documentation site; beyond that, new hrefs are resolved
afresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from newscrawl.html.urls import absolute_url

__all__ = ["LinkResolver"]

# hrefs that never name a page to fetch (a bare "#..." stays on the page)
SKIPPED_SCHEMES = ("javascript:", "mailto:", "tel:", "data:", "ftp:", "file:", "#")
_MAX_REMEMBERED = 10_000


@dataclass(slots=True)
class LinkResolver:
    """Resolves hrefs for one site's pages (see the module's docstring)."""

    max_remembered: int = _MAX_REMEMBERED
    remembered: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def resolve(self, base: str, hrefs: Iterable[str]) -> Iterator[str]:
        """The canonical http(s) URL of each href on a page whose base URL is `base`, in order
        (repeats included); hrefs that name no page (empty, `#...`, `mailto:`, other schemes)
        are left out."""
        parts = urlsplit(base)
        origin = f"{parts.scheme}://{parts.netloc}"
        folder = origin + parts.path[: parts.path.rfind("/") + 1]
        for href in hrefs:
            href = href.strip()
            if not href or href.lower().startswith(SKIPPED_SCHEMES):
                continue
            if _page_independent(href):
                key = (origin, href)
            elif _folder_relative(href):
                key = (folder, href)
            else:
                key = None
            if key is None:
                url = absolute_url(base, href)
            elif key in self.remembered:
                url = self.remembered[key]
            else:
                url = absolute_url(base, href)
                if len(self.remembered) < self.max_remembered:
                    self.remembered[key] = url
            if url is not None:
                yield url

    def clear(self) -> None:
        self.remembered.clear()


def _page_independent(href: str) -> bool:
    """Whether urljoin(base, href) depends on nothing of `base` but its scheme and host."""
    if "\t" in href or "\n" in href or "\r" in href:
        return False
    if href.startswith("//"):
        rest = href[2:]
    elif href.startswith("/"):
        return True
    else:
        head = href[:8].lower()
        if head.startswith("http://"):
            rest = href[7:]
        elif head.startswith("https://"):
            rest = href[8:]
        else:
            return False
    # a host, or a path from the root; with neither, urljoin takes the page's path and query
    return rest[:1] not in ("", "?", "#")


def _folder_relative(href: str) -> bool:
    """Whether urljoin(base, href) depends on nothing of `base` but its scheme, host and
    folder (its path up to the last "/"): a relative path, with no scheme of its own. One that
    starts with a control character is not: urljoin strips those, and what is left may be a
    query alone."""
    if "\t" in href or "\n" in href or "\r" in href or href[0] in "/?#" or href[0] <= " ":
        return False
    return ":" not in href.split("/", 1)[0]
