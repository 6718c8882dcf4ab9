"""The crawl's Scrapy components and the pieces they share.

Downloader middlewares: `private` (SSRF guard), `sitecap` (per-site page cap), `retry`
(Retry-After), `redirect` (loops, offsite), `replay` (resume from stored pages). Extensions:
`state` (crawl id, resume), `content` (stop non-HTML downloads), `summary`. Shared: `urls`
(canonical form, site scope, traps), `sites` (site lists), `feeds` (safe sitemap/feed parsing),
`errors` (error kinds), `items`, `metadata` (dates, language, author), `pagekind` (article or
index page).

Importing this subpackage makes `newscrawl.crawl` name it rather than the API's `crawl`
function (Python sets a package's attribute to each subpackage it imports), so the subpackage
is callable and calling it is calling the function: `newscrawl.crawl(sites, out)` works
whichever of the two the attribute holds.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from newscrawl._api import crawl as _crawl_function


class _CallablePackage(types.ModuleType):
    """This package, callable as `newscrawl.crawl` (the function) is."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _crawl_function(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
__wrapped__ = _crawl_function  # inspect.signature and help() show the function's
