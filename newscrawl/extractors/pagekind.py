"""Is this page an article, or an index (home, section, tag, archive, search) page?

Corpus users want articles, but a crawl fetches every kind of page, and the flag must be right
often enough to filter on. No single signal is reliable (a blog's home page can be one long
post; news sites put ``og:type=article`` on everything), so the evidence news-please and
trafilatura users know is weighed and the decisive items are kept as the reason:

* the URL: index shapes (``/tag/``, ``/category/``, ``/page/N``, ``?page=N``, bare date
  archives, the home page) against article shapes (a date then a slug, a long slug, an id);
* the markup: ``og:type``, a JSON-LD article object, a publication time, one ``<article>``
  against many;
* the layout: headings that are links (the teasers of a listing), repeated in numbers;
* the extracted text: its length and how much of it sits inside links.

A page is an article when the evidence adds up to at least 1 and at least one sign comes from
the URL or the markup (text alone also fills about and contact pages).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlsplit

from newscrawl.html.dom import Dom

__all__ = ["PageKind", "PageSignals", "classify_page", "page_signals"]

_INDEX_SEGMENTS = frozenset(
    {
        "tag",
        "tags",
        "category",
        "categories",
        "topic",
        "topics",
        "section",
        "sections",
        "author",
        "authors",
        "archive",
        "archives",
        "label",
        "search",
        "page",
        "feed",
        "index",
        "subject",
        "series",
        "people",
        "profile",
    }
)
_INDEX_QUERY = frozenset(
    {"page", "paged", "p", "s", "q", "query", "tag", "cat", "category", "start", "offset"}
)
_HOME_PATHS = frozenset(
    {
        "",
        "/",
        "/index.html",
        "/index.htm",
        "/index.php",
        "/home",
        "/home/",
        "/default.aspx",
        "/default.asp",
    }
)
_DATE_ARCHIVE = re.compile(r"^/(?:archive/)?\d{4}(?:[/-]\d{1,2}){0,2}/?(?:\.html?)?$")
_DATED_SLUG = re.compile(r"/\d{4}/\d{1,2}(?:/\d{1,2})?/[^/]*[a-z][^/]*")
_LONG_SLUG = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+){3,}")
_ARTICLE_ID = re.compile(r"(?:^|[-_/])\d{4,}(?:\.html?)?$")
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


@dataclass(frozen=True, slots=True)
class PageKind:
    is_article: bool
    reason: str


@dataclass(frozen=True, slots=True)
class PageSignals:
    """The measurable evidence about one page."""

    url_index: str  # "" or the index marker the URL has ("home", "/tag/", "?page", ...)
    url_article: str  # "" or the article shape the URL has
    og_type: str
    ld_article: bool
    has_date: bool
    article_elements: int
    linked_headings: int
    text_chars: int
    text_link_density: float


def _url_signals(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    path = parts.path.lower()
    query = {k.lower() for k, _ in parse_qsl(parts.query)}
    if path in _HOME_PATHS and not query:
        return "home page", ""
    segments = [s for s in path.split("/") if s]
    index = next((f"/{s}/" for s in segments[:-1] if s in _INDEX_SEGMENTS), "")
    if not index and segments and segments[-1].split(".")[0] in _INDEX_SEGMENTS:
        index = f"/{segments[-1]}"
    if not index and (hit := query & _INDEX_QUERY):
        index = f"?{sorted(hit)[0]}="
    if not index and _DATE_ARCHIVE.match(path):
        index = "date archive"
    last = segments[-1] if segments else ""
    stem = re.sub(r"\.(html?|php|aspx?)$", "", last)
    if _DATED_SLUG.search(path):
        article = "dated slug"
    elif _LONG_SLUG.fullmatch(stem):
        article = "long slug"
    elif _ARTICLE_ID.search(last):
        article = "numeric id"
    else:
        article = ""
    return index, article


def _extraction_link_density(dom: Dom, node_ids: tuple[int, ...]) -> float:
    chars = links = 0
    covered_until = -1
    for node in sorted(node_ids):
        if node < covered_until:
            continue
        chars += dom.text_len(node)
        links += dom.link_chars(node)
        covered_until = dom.end[node]
    return links / chars if chars else 0.0


def _is_linked(dom: Dom, node: int) -> bool:
    """Mostly link text: a heading that is a teaser's link."""
    size = dom.text_len(node)
    return bool(size) and dom.link_chars(node) >= 0.6 * size


def page_signals(
    dom: Dom,
    url: str,
    text: str,
    node_ids: tuple[int, ...] = (),
    has_date: bool = False,
    ld_article: bool = False,
) -> PageSignals:
    url_index, url_article = _url_signals(url)
    by_tag = dom.nodes_by_tag
    article_elements = sum(dom.text_len(node) >= 80 for node in by_tag.get("article", ()))
    linked_headings = sum(
        _is_linked(dom, node) for tag in _HEADINGS for node in by_tag.get(tag, ())
    )
    return PageSignals(
        url_index=url_index,
        url_article=url_article,
        og_type=dom.meta.get("og:type", "").strip().lower(),
        ld_article=ld_article,
        has_date=has_date,
        article_elements=article_elements,
        linked_headings=linked_headings,
        text_chars=len(text),
        text_link_density=_extraction_link_density(dom, node_ids),
    )


def _evidence(s: PageSignals) -> list[tuple[int, str]]:
    """(weight, reason) for every signal that speaks; positive means article."""
    found: list[tuple[int, str]] = []
    if s.url_index:
        found.append((-3, f"url {s.url_index}"))
    if s.url_article:
        found.append((1, f"url {s.url_article}"))
    if s.og_type == "article":
        found.append((2, "og:type=article"))
    elif s.og_type in ("website", "blog", "profile"):
        found.append((-1, f"og:type={s.og_type}"))
    if s.ld_article:
        found.append((1, "JSON-LD article"))
    if s.has_date:
        found.append((1, "publication date"))
    if s.article_elements == 1:
        found.append((1, "one <article>"))
    elif s.article_elements >= 3:
        found.append((-2, f"{s.article_elements} <article> blocks"))
    if s.linked_headings >= 8:
        found.append((-3, f"{s.linked_headings} linked headings (teasers)"))
    elif s.linked_headings >= 4:
        found.append((-2, f"{s.linked_headings} linked headings (teasers)"))
    if s.text_chars < 100:
        found.append((-3, f"text {s.text_chars} chars"))
    elif s.text_chars < 250:
        found.append((-1, f"text {s.text_chars} chars"))
    elif s.text_chars >= 1500:
        found.append((1, f"text {s.text_chars} chars"))
    if s.text_link_density > 0.5:
        found.append((-2, f"text link density {s.text_link_density:.2f}"))
    elif s.text_link_density > 0.3:
        found.append((-1, f"text link density {s.text_link_density:.2f}"))
    elif s.text_chars >= 150 and s.text_link_density < 0.1:
        found.append((1, f"text link density {s.text_link_density:.2f}"))
    return found


def _has_article_sign(s: PageSignals) -> bool:
    return bool(
        s.url_article
        or s.og_type == "article"
        or s.ld_article
        or s.has_date
        or s.article_elements == 1
    )


def classify_page(signals: PageSignals) -> PageKind:
    """Weigh the evidence; the reason lists it, strongest first."""
    if signals.url_index == "home page":
        return PageKind(False, "index: home page")
    evidence = _evidence(signals)
    score = sum(weight for weight, _ in evidence)
    # Text alone does not make an article (an about or contact page has text too): some sign
    # from the URL or the markup must say "article".
    is_article = score >= 1 and _has_article_sign(signals)
    strongest = sorted(evidence, key=lambda e: -abs(e[0]))
    detail = ", ".join(f"{reason} ({weight:+d})" for weight, reason in strongest)
    label = "article" if is_article else "index"
    return PageKind(is_article, f"{label} (score {score:+d}): {detail or 'no evidence'}")
