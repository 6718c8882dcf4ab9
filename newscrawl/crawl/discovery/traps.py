"""Crawler traps crawled breadth first: a page budget per URL path shape.

An endless URL space - a calendar's months, ``/page?id=N`` linking to ``id=N+1`` and
``id=2N+3``, a session id renewed on every page - is pages of one shape, each linking to more of
that shape. Followed breadth first, such a space grows wider at every level rather than deeper,
so the run of same-shaped links in a row (`newscrawl.html.urls.trap_reason`) stays short while
the space takes most of the site's page cap. So each site gives every path shape (`path_shape`)
a budget of pages: a link to a page of some shape counts against it when it is found on a page
of that same shape, or when its URL carries a session id; once the budget is spent, further
such links are refused as a crawler trap. Links from other pages (home, sections, sitemaps,
feeds) are never counted, so a site whose articles share one shape (``/news/12345.html``) is
crawled as before.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

__all__ = [
    "SESSION_KEYS",
    "ShapeBudget",
    "carries_session",
    "counts_against_budget",
    "path_shape",
    "shape_budget",
]

# Query keys that hold session ids (PHP, Java, ASP, ColdFusion, shop systems and plain names).
SESSION_KEYS = frozenset(
    {
        "sid",
        "sessid",
        "sessionid",
        "session_id",
        "session",
        "phpsessid",
        "jsessionid",
        "aspsessionid",
        "cfid",
        "cftoken",
        "oscsid",
        "zenid",
        "s_id",
    }
)
_DIGITS = re.compile(r"\d+")
# A token of a path that names one page among endless others: a hex hash or id (8 characters
# or more, with a digit), or a long run of letters and digits mixed (a session id, a token).
_ID_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:(?=[a-f]*\d)[0-9a-f]{8,}|(?=[A-Za-z]*\d)(?=\d*[A-Za-z])[A-Za-z0-9]{16,})"
    r"(?![A-Za-z0-9])"
)
_MIN_BUDGET = 10  # pages per shape whatever the cap
_UNCAPPED_BUDGET = 1000  # pages per shape of a site crawled without a page cap


def path_shape(url: str) -> str:
    """The URL's host, path and query keys, with what tells the pages of one endless URL space
    apart made alike: ids, hashes and session tokens in the path as ``*``, other digit runs
    (dates, page numbers) as 0, path parameters (``;jsessionid=...``) dropped, and the query's
    values dropped (its keys kept, sorted, each once)."""
    parts = urlsplit(url)
    segments = [segment.partition(";")[0] for segment in parts.path.split("/")]
    path = _DIGITS.sub("0", _ID_TOKEN.sub("*", "/".join(segments)))
    keys = sorted({key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)})
    return f"{parts.netloc.lower()}{path}?{'&'.join(keys)}"


def carries_session(url: str) -> bool:
    """Whether the URL holds a session id: a session key in its query, ``;jsessionid=`` (or
    another session key) as a path parameter, or ASP.NET's ``/(S(...))/`` in its path."""
    parts = urlsplit(url)
    keys = {key.lower() for key, _ in parse_qsl(parts.query, keep_blank_values=True)}
    if keys & SESSION_KEYS or "/(s(" in parts.path.lower():
        return True
    params = (p.partition("=")[0].lower() for s in parts.path.split("/") for p in s.split(";")[1:])
    return any(name in SESSION_KEYS for name in params)


def counts_against_budget(url: str, shape: str, referer_shape: str | None) -> bool:
    """Whether a link to `url` (whose path shape is `shape`) counts against its shape's budget:
    found on a page of the same shape, or carrying a session id."""
    return shape == referer_shape or carries_session(url)


def shape_budget(cap: int, share: float) -> int:
    """Pages one path shape may take on a site whose page cap is `cap` (0: none): `share` of
    the cap, at least 10; 1000 without a cap."""
    if cap <= 0:
        return _UNCAPPED_BUDGET
    return max(_MIN_BUDGET, math.ceil(share * cap))


@dataclass(slots=True)
class ShapeBudget:
    """The pages each path shape of one site has taken from its budget (`limit` each)."""

    limit: int = _UNCAPPED_BUDGET
    taken: Counter[str] = field(default_factory=Counter)

    def spent(self, shape: str) -> bool:
        return self.taken[shape] >= self.limit

    def take(self, shape: str) -> None:
        self.taken[shape] += 1

    def clear(self) -> None:
        self.taken.clear()
