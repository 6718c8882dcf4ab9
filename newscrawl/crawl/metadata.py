"""Page metadata a corpus user filters on: publication time, language, author.

Read from the parsed page only (no second parse): ``<meta>`` (Open Graph ``article:*``, Dublin
Core, schema.org ``itemprop``, the names news CMSs use), JSON-LD ``NewsArticle``/``BlogPosting``
blocks, ``<time datetime>`` elements and, last, a date in the URL. Each source is tried in the
order news-please and trafilatura trust them; a value that does not parse, or a date outside
1990..tomorrow, is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any

from newscrawl.dom import Dom

__all__ = [
    "json_ld",
    "ld_articles",
    "page_author",
    "page_language",
    "parse_time",
    "publication_time",
    "published_time",
]

_PUBLISHED_META = (
    "article:published_time",
    "og:article:published_time",
    "og:published_time",
    "datepublished",
    "published_time",
    "pubdate",
    "publishdate",
    "publish-date",
    "publication_date",
    "dc.date.issued",
    "dcterms.issued",
    "dc.date",
    "dcterms.created",
    "dcterms.date",
    "date",
    "sailthru.date",
    "parsely-pub-date",
    "article.published",
    "cxenseparse:recs:publishtime",
)
_AUTHOR_META = (
    "author",
    "article:author",
    "parsely-author",
    "sailthru.author",
    "dc.creator",
    "dcterms.creator",
    "byl",
)
_URL_DATE = re.compile(
    r"(?<!\d)((?:19|20)\d{2})[/_-](0[1-9]|1[0-2])(?:[/_-](0[1-9]|[12]\d|3[01]))?(?!\d)"
)
_ISO_PREFIX = re.compile(r"((?:19|20)\d{2})-(\d{2})-(\d{2})")
_LANG = re.compile(r"^[a-zA-Z]{2,3}(?=$|[-_])")
_BYLINE_CLASSES = frozenset(
    {
        "byline",
        "by-line",
        "author",
        "article-author",
        "story-author",
        "post-author",
        "entry-author",
        "author-name",
        "byline-author",
    }
)
_BY = re.compile(r"^\s*(?:by|von|par|por|door|di|av)\s+", re.IGNORECASE)
_ARTICLE_TYPES = frozenset(
    {
        "article",
        "newsarticle",
        "blogposting",
        "reportagenewsarticle",
        "analysisnewsarticle",
        "opinionnewsarticle",
        "report",
        "posting",
    }
)


def parse_time(value: str | None) -> datetime | None:
    """An aware UTC datetime from ISO 8601, RFC 2822 or a leading YYYY-MM-DD; None if none."""
    if not value:
        return None
    text = value.strip()
    when: datetime | None = None
    try:
        when = datetime.fromisoformat(text.replace(" ", "T", 1) if "T" not in text else text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            match = _ISO_PREFIX.search(text)
            if match:
                try:
                    year, month, day = (int(g) for g in match.groups())
                    when = datetime(year, month, day)
                except ValueError:
                    when = None
    if when is None:
        return None
    when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
    if not (datetime(1990, 1, 1, tzinfo=UTC) <= when <= datetime.now(UTC) + timedelta(days=1)):
        return None
    return when


def json_ld(dom: Dom) -> list[dict[str, Any]]:
    """Objects of the page's JSON-LD blocks (``@graph`` flattened); broken blocks skipped."""
    if not dom.elements:
        return []
    found: list[dict[str, Any]] = []
    root = dom.elements[0].getroottree().getroot()
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        try:
            data = json.loads(script.text or "")
        except ValueError:
            continue
        found.extend(_objects(data))
    return found


def _objects(data: Any) -> Iterator[dict[str, Any]]:
    if isinstance(data, list):
        for item in data:
            yield from _objects(item)
    elif isinstance(data, dict):
        yield data
        if "@graph" in data:
            yield from _objects(data["@graph"])


def _types(obj: dict[str, Any]) -> set[str]:
    kind = obj.get("@type", "")
    kinds = kind if isinstance(kind, list) else [kind]
    return {str(k).lower() for k in kinds}


def ld_articles(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON-LD objects that describe an article."""
    return [o for o in objects if _types(o) & _ARTICLE_TYPES]


def _time_candidates(dom: Dom, ld: list[dict[str, Any]]) -> Iterator[tuple[str, bool]]:
    """Publication-time strings in the order they are trusted, each with whether it is marked
    as the publication time (False for the page's first <time>: on a listing, a teaser's)."""
    for key in _PUBLISHED_META:
        if value := dom.meta.get(key):
            yield value, True
    for obj in ld_articles(ld):
        yield str(obj.get("datePublished") or obj.get("dateCreated") or ""), True
    first: str | None = None
    for node in dom.nodes_by_tag.get("time", ()):
        el = dom.elements[node]
        if not (value := el.get("datetime")):
            continue
        first = first or value
        if el.get("itemprop") == "datePublished" or el.get("pubdate") is not None:
            yield value, True
    if first:
        yield first, False


def _url_date(url: str | None) -> datetime | None:
    if url and (match := _URL_DATE.search(url)):
        year, month, day = match.group(1), match.group(2), match.group(3) or "01"
        return parse_time(f"{year}-{month}-{day}")
    return None


def publication_time(
    dom: Dom, url: str | None = None, ld: list[dict[str, Any]] | None = None
) -> tuple[datetime | None, bool]:
    """`published_time` and whether the page marks it as such (meta, JSON-LD or a marked
    <time>; not its first <time> or its URL), in one pass over the page."""
    for value, marked in _time_candidates(dom, ld if ld is not None else json_ld(dom)):
        if when := parse_time(value):
            return when, marked
    return _url_date(url), False


def published_time(
    dom: Dom, url: str | None = None, ld: list[dict[str, Any]] | None = None, any_time: bool = True
) -> datetime | None:
    """When the page was published: meta, then JSON-LD, then <time>, then the URL.

    With `any_time` False only <time> elements marked as the publication time count (a
    listing's first <time> is a teaser's, not the page's).
    """
    for value, marked in _time_candidates(dom, ld if ld is not None else json_ld(dom)):
        if (marked or any_time) and (when := parse_time(value)):
            return when
    return _url_date(url)


def _primary_language(value: str | None) -> str | None:
    if not value:
        return None
    match = _LANG.match(value.strip().split(",")[0].strip())
    return match.group(0).lower() if match else None


def page_language(dom: Dom, content_language: str | None = None) -> str | None:
    """Primary language subtag: <html lang>, then <meta> Content-Language, then the HTTP
    header, then og:locale."""
    for value in (
        dom.lang,
        dom.meta.get("content-language"),
        content_language,
        dom.meta.get("og:locale"),
        dom.meta.get("language"),
        dom.meta.get("dc.language"),
    ):
        if lang := _primary_language(value):
            return lang
    return None


def _ld_author(obj: dict[str, Any]) -> str | None:
    author = obj.get("author")
    people = author if isinstance(author, list) else [author]
    names = []
    for person in people:
        if isinstance(person, dict) and isinstance(person.get("name"), str):
            names.append(person["name"].strip())
        elif isinstance(person, str):
            names.append(person.strip())
    return ", ".join(n for n in names if n) or None


def page_author(dom: Dom, ld: list[dict[str, Any]] | None = None) -> str | None:
    """The author's name: meta, then JSON-LD, then a rel=author link or itemprop=author."""
    for key in _AUTHOR_META:
        value = dom.meta.get(key, "").strip()
        if value and not value.startswith(("http://", "https://")):
            return value
    for obj in ld_articles(ld if ld is not None else json_ld(dom)):
        if name := _ld_author(obj):
            return name
    return _author_in_body(dom)


def _author_in_body(dom: Dom) -> str | None:
    """The text of a rel=author link or an itemprop=author element, else the name in the first
    "byline"-classed element ("By Jane Doe, Staff Writer" -> Jane Doe); one pass."""
    byline: str | None = None
    for node, tag in enumerate(dom.tag):
        el = dom.elements[node]
        if (tag == "a" and "author" in (el.get("rel") or "").split()) or el.get(
            "itemprop"
        ) == "author":
            text = " ".join(dom.text(node).split())
            if 0 < len(text) <= 100:
                return text
        if byline is None and _BYLINE_CLASSES.intersection((el.get("class") or "").lower().split()):
            byline = _byline_name(dom.text(node))
    return byline


def _byline_name(text: str) -> str | None:
    first = text.strip().split("\n", 1)[0]
    name = _BY.sub("", first).split(",", 1)[0].split(" | ", 1)[0].strip()
    return name if 0 < len(name) <= 80 else None
