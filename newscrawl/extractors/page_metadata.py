"""Page metadata a corpus user filters on: publication time, language, authors
(`page_metadata` gives all of them for one page).

Read from the parsed page only (no second parse). Dates: ``<meta>`` that names the publication
time (Open Graph ``article:published_time`` and ``article:published:time``, schema.org
``itemprop``, the names news CMSs use), then JSON-LD ``datePublished`` of an article (any
``...Article``/``...Posting``, a review or a ``ClaimReview``), then generic date ``<meta>``
(``date``, ``dc.date``: often the day a page changed), then ``<time>``, then a date shown by
the headline (`newscrawl.extractors.datelines`), then a full date in the URL; a URL with only a
year and month is a check on unmarked dates, never a day. Authors: JSON-LD persons (by name or
given and family name), then every author ``<meta>``, then the byline by the headline; e-mail
addresses, URLs and the publisher's name are never authors. A value that does not parse, or
a date outside 1990..tomorrow, is skipped; broken or oversized JSON-LD is skipped unread.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

from newscrawl.extractors.datelines import shown_date
from newscrawl.html.dom import Dom

__all__ = [
    "PageMetadata",
    "clean_names",
    "json_ld",
    "ld_articles",
    "ld_authors",
    "page_author",
    "page_authors",
    "page_language",
    "page_metadata",
    "parse_time",
    "publication_time",
    "published_time",
    "url_date",
]

# Markup that names the publication time outright, trusted before JSON-LD.
_PUBLISHED_META = (
    "article:published_time",
    "article:published:time",
    "og:article:published_time",
    "og:published_time",
    "article:published",
    "datepublished",
    "published_time",
    "parsely-pub-date",
    "sailthru.date",
    "article.published",
    "cxenseparse:recs:publishtime",
    "dc.date.issued",
    "dcterms.issued",
)
# Generic date markup, trusted after JSON-LD's datePublished: CMSs fill these with the day a
# page was built or changed as often as with the day it was published.
_DATE_META = (
    "pubdate",
    "publishdate",
    "publish-date",
    "publish_date",
    "publication_date",
    "dc.date",
    "dcterms.created",
    "dcterms.date",
    "date",
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
_PUBLISHER_META = ("og:site_name", "article:publisher", "application-name", "publisher")
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
# Bylines are looked for among the elements around the first <h1>: this many before it and
# after it (without an <h1>, among the page's first BYLINE_AFTER + BYLINE_BEFORE elements).
_BYLINE_BEFORE = 300
_BYLINE_AFTER = 600
_BY = re.compile(
    r"^\s*(?:(?:posted|written|reported)\s+)?(?:by|von|par|por|door|di|av)\s*:?\s+", re.IGNORECASE
)
# schema.org types whose datePublished and author are the page's own (besides every type
# named "...Article" or "...Posting"); a WebPage's are trusted only after the date <meta>s.
_ARTICLE_TYPES = frozenset({"article", "report", "posting", "claimreview", "review"})
_PAGE_TYPES = frozenset({"webpage", "itempage", "aboutpage", "medicalwebpage"})
_LD_MAX_CHARS = 2_000_000  # a JSON-LD block larger than this is skipped unread
_LD_MAX_DEPTH = 12  # how deep nested lists and @graphs are searched for objects
_LD_MAX_OBJECTS = 500
_EMAIL = re.compile(r"\S+@\S+\.\w+")
_URL = re.compile(r"(?:https?://|www\.)\S*", re.IGNORECASE)
_PARENTHESES = re.compile(r"\([^)]*\)|\[[^\]]*\]")
# Not a person: a credit, or an organisation ("The Times-Picayune").
_NOT_NAME = re.compile(
    r"\b(?:photos?|fotos?|copyright|image|video|getty)\b|©|^the\s", re.IGNORECASE
)
_NAME_SPLIT = re.compile(
    r"\s*(?:[,;/|]|\s(?:and|und|et|y|e|en|og|och|i|и)\s|&|\s·\s|、|，)\s*", re.IGNORECASE
)
_ROLE_WORDS = re.compile(
    r"\b(?:staff|writer|reporter|correspondent|editor|redakteur|redaktion|journalist|"
    r"photographer|contributor|columnist|updated|published)\b",
    re.IGNORECASE,
)
_MAX_AUTHORS = 8
_BYLINE_LINES = 40  # lines after the <h1> searched for a "By ..." line
_BYLINE_LINE = re.compile(
    r"^(?:(?:posted|written|reported|text)\s+)?(?:by|von|par|por|door|di|av|de|przez)\s*:?\s+"
    r"(\S.*)$",
    re.IGNORECASE,
)
# Lower-case words a capitalised name may hold ("Ludwig van Beethoven", "Ana de la Cruz").
_PARTICLES = frozenset(
    {"van", "von", "de", "der", "den", "da", "del", "di", "la", "le", "bin", "al"}
)


def parse_time(value: str | None) -> datetime | None:
    """An aware datetime from ISO 8601, RFC 2822 or a leading YYYY-MM-DD (in the offset the
    page gives, so its date is the page's own day; UTC when it gives none); None if none, and
    None for a time before 1990 or after tomorrow (a placeholder or a typo)."""
    if not value or len(value) > 100:
        return None
    text = value.strip()
    when: datetime | None = None
    try:
        when = datetime.fromisoformat(text.replace(" ", "T", 1) if "T" not in text else text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            match = _ISO_PREFIX.search(text)
            if match:
                try:
                    year, month, day = (int(g) for g in match.groups())
                    when = datetime(year, month, day)
                except ValueError:
                    when = None
    if when is None:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if not (datetime(1990, 1, 1, tzinfo=UTC) <= when <= datetime.now(UTC) + timedelta(days=1)):
        return None
    return when


def json_ld(dom: Dom) -> list[dict[str, Any]]:
    """Objects of the page's JSON-LD blocks (``@graph`` flattened); broken, oversized or too
    deeply nested blocks skipped."""
    if not dom.elements:
        return []
    found: list[dict[str, Any]] = []
    root = dom.elements[0].getroottree().getroot()
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json":
            continue
        text = script.text or ""
        if len(text) > _LD_MAX_CHARS:
            continue
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            continue
        found.extend(_objects(data, 0))
        if len(found) >= _LD_MAX_OBJECTS:
            break
    return found[:_LD_MAX_OBJECTS]


def _objects(data: Any, depth: int) -> Iterator[dict[str, Any]]:
    if depth > _LD_MAX_DEPTH:
        return
    if isinstance(data, list):
        for item in data:
            yield from _objects(item, depth + 1)
    elif isinstance(data, dict):
        yield data
        if "@graph" in data:
            yield from _objects(data["@graph"], depth + 1)


def _types(obj: dict[str, Any]) -> set[str]:
    kind = obj.get("@type", "")
    kinds = kind if isinstance(kind, list) else [kind]
    return {str(k).lower() for k in kinds}


def _is_article(obj: dict[str, Any]) -> bool:
    return any(
        kind in _ARTICLE_TYPES or kind.endswith(("article", "posting")) for kind in _types(obj)
    )


def ld_articles(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The JSON-LD objects that describe an article (any ``...Article`` or ``...Posting`` type,
    a report, a review or a ``ClaimReview``)."""
    return [o for o in objects if _is_article(o)]


def _ld_dates(objects: list[dict[str, Any]], page: bool) -> Iterator[str]:
    """datePublished (else dateCreated) of the article objects, or with `page` of the WebPage
    objects."""
    for obj in objects:
        if (bool(_types(obj) & _PAGE_TYPES) if page else _is_article(obj)) and (
            value := obj.get("datePublished") or obj.get("dateCreated")
        ):
            yield str(value)


def _time_candidates(dom: Dom, ld: list[dict[str, Any]]) -> Iterator[tuple[str, bool]]:
    """Publication-time strings in the order they are trusted, each with whether it is marked
    as the publication time (False for the page's first <time>: on a listing, a teaser's)."""
    for key in _PUBLISHED_META:
        if value := dom.meta.get(key):
            yield value, True
    for value in _ld_dates(ld, page=False):
        yield value, True
    for key in _DATE_META:
        if value := dom.meta.get(key):
            yield value, True
    for value in _ld_dates(ld, page=True):
        yield value, True
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


def url_date(url: str | None) -> tuple[datetime | None, bool]:
    """The date in a URL's path and whether it names the day: ``/2024/04/15/`` gives the day,
    ``/2024/04/`` only its month (the first of the month, to be used as a check, not a date)."""
    if url and (match := _URL_DATE.search(url)):
        year, month, day = match.group(1), match.group(2), match.group(3)
        return parse_time(f"{year}-{month}-{day or '01'}"), day is not None
    return None, False


def _fits_url(when: datetime, url_when: datetime | None, full: bool) -> bool:
    """Whether an unmarked date agrees with the URL's date (its day, or its month)."""
    if url_when is None:
        return True
    if full:
        return abs((when - url_when).days) <= 1
    return (when.year, when.month) == (url_when.year, url_when.month)


def publication_time(
    dom: Dom, url: str | None = None, ld: list[dict[str, Any]] | None = None
) -> tuple[datetime | None, bool]:
    """`published_time` and whether the page marks it as such (meta, JSON-LD or a marked
    <time>; not its first <time>, a date in its text or its URL), in one pass over the page.

    Unmarked dates must agree with the URL's date where it has one (its day, or with only a
    year and month, that month); a URL with a day is the last resort, one with only a month
    never gives a date; a date shown in the lines around the headline
    (`newscrawl.extractors.datelines`) comes before it."""
    url_when, full = url_date(url)
    unmarked: list[str] = []
    for value, marked in _time_candidates(dom, ld if ld is not None else json_ld(dom)):
        if not marked:
            unmarked.append(value)
        elif when := parse_time(value):
            return when, True
    for value in unmarked:
        if (when := parse_time(value)) and _fits_url(when, url_when, full):
            return when, False
    shown = shown_date(dom, page_language(dom))
    if shown and _fits_url(shown, url_when, full):
        return shown, False
    return (url_when if full else None), False


def published_time(
    dom: Dom, url: str | None = None, ld: list[dict[str, Any]] | None = None
) -> datetime | None:
    """When the page was published: meta, then JSON-LD, then generic date meta, then <time>,
    then a date shown by the headline, then a full date in the URL."""
    return publication_time(dom, url, ld)[0]


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


def _publishers(dom: Dom, ld: list[dict[str, Any]]) -> set[str]:
    """Folded names of the site and its publisher (never an author's name)."""
    names = {dom.meta.get(key, "") for key in _PUBLISHER_META}
    for obj in ld:
        publisher = obj.get("publisher")
        if isinstance(publisher, dict) and isinstance(publisher.get("name"), str):
            names.add(publisher["name"])
        publishing = _types(obj) & {"organization", "newsmediaorganization", "website"}
        if publishing and isinstance(obj.get("name"), str):
            names.add(obj["name"])
    if dom.site:
        names.add(dom.site)
    if host := urlsplit(dom.url or "").hostname:
        labels = host.removeprefix("www.").split(".")
        names.update((host.removeprefix("www."), labels[0]))
    return {_fold(n) for n in names if n and n.strip()}


def _fold(name: str) -> str:
    return " ".join(name.split()).casefold()


def _person_name(person: Any, by_id: dict[str, dict[str, Any]]) -> tuple[str, bool]:
    """(name, is an organisation) of a JSON-LD author: a string, a Person or Organization with
    a name or given and family names, or a reference (@id) to one elsewhere on the page."""
    if isinstance(person, str):
        return person, False
    if not isinstance(person, dict):
        return "", False
    if set(person) <= {"@id", "@type"} and isinstance(person.get("@id"), str):
        person = by_id.get(person["@id"], person)
    kinds = _types(person)
    name = person.get("name")
    if isinstance(name, list):
        name = next((n for n in name if isinstance(n, str)), "")
    if not isinstance(name, str) or not name.strip():
        given, family = person.get("givenName"), person.get("familyName")
        parts = [p for p in (given, family) if isinstance(p, str) and p.strip()]
        name = " ".join(p.strip() for p in parts)
    return name, "organization" in kinds or "newsmediaorganization" in kinds


def ld_authors(
    ld: list[dict[str, Any]], publishers: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """The authors the JSON-LD articles name, in order: persons, and organisations other than
    the publisher (a news agency)."""
    by_id = {str(o["@id"]): o for o in ld if isinstance(o.get("@id"), str)}
    names: list[str] = []
    for obj in ld_articles(ld):
        author = obj.get("author")
        for person in author if isinstance(author, list) else [author]:
            name, organisation = _person_name(person, by_id)
            if organisation and _fold(name) in publishers:
                continue
            names.extend(clean_names(name, publishers))
        if names:
            break
    return _distinct(names)


def clean_names(value: str, publishers: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """The people named in an author string: split at commas, "and" (in several languages), "&"
    and slashes; e-mail addresses, URLs, parentheses, photo credits, roles after a name ("Staff
    Writer"), the publisher's name and anything too long or with digits left out. "By", "Von",
    "Par" ... is taken off, and a name in capitals is written in title case."""
    value = _URL.sub(" ", _EMAIL.sub(" ", value or ""))
    value = _PARENTHESES.sub(" ", value)
    names: list[str] = []
    for part in _NAME_SPLIT.split(_BY.sub("", " ".join(value.split()))):
        name = _BY.sub("", part).strip(" .:-–—()[]\"'")
        if not name or _NOT_NAME.search(name) or any(ch.isdigit() for ch in name):
            continue
        if _fold(name) in publishers or (names and _ROLE_WORDS.search(name)):
            continue  # "Jane Doe, Staff Writer": a role after a name
        if len(name) > 60 or len(name.split()) > 5 or not any(ch.isalpha() for ch in name):
            continue
        names.append(name.title() if name.isupper() and len(name) > 3 else name)
    return names


def _distinct(names: list[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for name in names:
        if _fold(name) not in seen:
            seen.add(_fold(name))
            kept.append(name)
    return kept[:_MAX_AUTHORS]


def _meta_authors(dom: Dom, publishers: set[str]) -> list[str]:
    """The names in every author <meta> (a page may repeat <meta name="author"> per author)."""
    if not dom.elements:
        return []
    root = dom.elements[0].getroottree().getroot()
    found: dict[str, list[str]] = {}
    for el in root.iter("meta"):
        key = (el.get("name") or el.get("property") or "").strip().lower()
        if key in _AUTHOR_META and (content := el.get("content")):
            found.setdefault(key, []).extend(clean_names(content, publishers))
    for key in _AUTHOR_META:
        if names := _distinct(found.get(key, [])):
            return names
    return []


def page_authors(dom: Dom, ld: list[dict[str, Any]] | None = None) -> list[str]:
    """The authors' names: JSON-LD, then the author <meta>s, then the visible byline; e-mail
    addresses, URLs and the publisher's own name are never authors."""
    objects = ld if ld is not None else json_ld(dom)
    publishers = _publishers(dom, objects)
    return (
        ld_authors(objects, publishers)
        or _meta_authors(dom, publishers)
        or _distinct(_authors_in_body(dom, publishers))
    )


def page_author(dom: Dom, ld: list[dict[str, Any]] | None = None) -> str | None:
    """`page_authors` joined with ", ", or None when the page names none."""
    return ", ".join(page_authors(dom, ld)) or None


def _authors_in_body(dom: Dom, publishers: set[str]) -> list[str]:
    """The texts of the rel=author links and itemprop=author elements (their itemprop=name
    where they have one), else the names in the first "byline"-classed element ("By Jane Doe,
    Staff Writer" -> Jane Doe), else a "By Jane Doe" line under the headline; among the
    elements around the first <h1> (a byline is by the headline)."""
    h1 = dom.nodes_of("h1")
    first = max(0, h1[0] - _BYLINE_BEFORE) if h1 else 0
    last = min(len(dom.tag), (h1[0] if h1 else first) + _BYLINE_AFTER + _BYLINE_BEFORE * (not h1))
    marked: list[str] = []
    byline: list[str] = []
    for node in range(first, last):
        if not dom.has_attributes[node]:
            continue
        el = dom.elements[node]
        if (dom.tag[node] == "a" and "author" in (el.get("rel") or "").split()) or (
            el.get("itemprop") == "author"
        ):
            text = " ".join("".join(_itemprop_name(el).itertext()).split())
            if 0 < len(text) <= 100:
                marked.extend(clean_names(text, publishers))
        elif not byline and _BYLINE_CLASSES.intersection((el.get("class") or "").lower().split()):
            byline = _byline_names(dom.text(node), publishers)
    return marked or byline or _text_byline(dom, publishers)


def _itemprop_name(el: Any) -> Any:
    for sub in el.iter():
        if sub is not el and sub.get("itemprop") == "name":
            return sub
    return el


def _byline_names(text: str, publishers: set[str]) -> list[str]:
    """The names of a byline: its first line, up to a "|", a comma or a role ("By Jane Doe,
    Staff Writer" and "By Jane Doe Staff writer" -> Jane Doe; "Jane Doe and Bo Li" -> both)."""
    first = text.strip().split("\n", 1)[0]
    head = _BY.sub("", first).split(" | ", 1)[0].split(",", 1)[0]
    role = _ROLE_WORDS.search(head)
    if role and len(head[: role.start()].split()) >= 2:  # "Jane Doe Staff writer"
        head = head[: role.start()]
    return clean_names(head, publishers)


def _text_byline(dom: Dom, publishers: set[str]) -> list[str]:
    """The names of the first "By Jane Doe" line (von, par, por ..., "Posted by:") among the
    `_BYLINE_LINES` lines that follow the first <h1> (or open the page without one); each name
    capitalised word by word, as bylines write names."""
    h1 = dom.nodes_of("h1")
    piece = dom.piece_start[h1[0]] if h1 else 0
    lines, block = 0, -1
    line: list[str] = []
    texts = dom.piece_text
    for k in range(piece, len(texts)):
        if dom.piece_block[k] != block:
            if line and (names := _byline_line(" ".join(line), publishers)):
                return names
            lines += 1
            if lines > _BYLINE_LINES:
                return []
            block, line = dom.piece_block[k], []
        line.append(texts[k])
    return _byline_line(" ".join(line), publishers) if line else []


def _capitalised(name: str) -> bool:
    """Whether a name is written as names are: each word capitalised, or a particle."""
    words = name.split()
    return len(words) <= 4 and all(w[0].isupper() or w in _PARTICLES for w in words)


def _byline_line(line: str, publishers: set[str]) -> list[str]:
    text = " ".join(line.split())
    if len(text) > 100 or not (match := _BYLINE_LINE.match(text)):
        return []
    names = _byline_names(match.group(1), publishers)
    return names if names and all(map(_capitalised, names)) else []


@dataclass(frozen=True, slots=True)
class PageMetadata:
    """What a page says about itself besides its text: when it was published (and whether its
    markup says so, not only its text or URL), by whom, in which language."""

    published: datetime | None = None
    dated: bool = False
    authors: tuple[str, ...] = ()
    language: str | None = None

    @property
    def author(self) -> str | None:
        """The authors joined with ", " (the articles' ``author`` column), None for none."""
        return ", ".join(self.authors) or None

    def fields(self) -> dict[str, str | list[str] | None]:
        """JSON-ready fields: date (ISO 8601 with the page's offset), author, authors,
        language."""
        return {
            "date": self.published.isoformat() if self.published else None,
            "author": self.author,
            "authors": list(self.authors),
            "language": self.language,
        }


def page_metadata(
    dom: Dom,
    url: str | None = None,
    content_language: str | None = None,
    ld: list[dict[str, Any]] | None = None,
) -> PageMetadata:
    """The publication time, authors and language of one parsed page (what the crawl writes in
    its articles, and what `newscrawl extract` can print for a page): `url` is the page's
    address (a date in its path is a check or a last resort), `content_language` the HTTP
    header. Never raises for what a page holds: broken JSON-LD or dates are skipped."""
    objects = ld if ld is not None else json_ld(dom)
    published, dated = publication_time(dom, url or dom.url, objects)
    return PageMetadata(
        published=published,
        dated=dated,
        authors=tuple(page_authors(dom, objects)),
        language=page_language(dom, content_language),
    )
