"""What a demo theme renders: the views of a page (links, comments, pager, story, chrome, page
info) and the HTML and Markdown of an article's blocks, shared by every theme."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from html import escape

from newscrawl.demo.text import Block

__all__ = [
    "Chrome",
    "Comment",
    "Link",
    "PageInfo",
    "Pager",
    "StoryView",
]

BASE = "{{BASE}}"


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True, slots=True)
class Comment:
    author: str
    posted: datetime
    text: str


@dataclass(frozen=True, slots=True)
class Pager:
    page: int
    pages: int
    prev: str | None
    next: str | None


@dataclass(frozen=True, slots=True)
class StoryView:
    """What a template needs to show one article (or one teaser of it)."""

    path: str
    title: str
    section: Link
    tags: tuple[Link, ...]
    published: datetime
    author: str
    summary: str
    blocks: tuple[Block, ...] = ()
    comments: tuple[Comment, ...] = ()
    inline_link: Link | None = None  # one in-text link, placed inside a paragraph
    read_also: tuple[Link, ...] = ()  # box inside the story column (not gold)


@dataclass(frozen=True, slots=True)
class Chrome:
    """The site-wide parts of a page: navigation and sidebars."""

    site_title: str
    tagline: str
    sections: tuple[Link, ...]
    popular: tuple[Link, ...]
    latest: tuple[Link, ...]
    tags: tuple[Link, ...]
    feed: Link  # label = MIME type, href = path
    about: str
    private: str
    search: str
    year: int = 2024
    extra_footer: tuple[Link, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class PageInfo:
    """One page's own part of the frame: its path (for the canonical link), title, charset,
    extra <meta> lines and the navigation entry to highlight."""

    path: str
    title: str
    charset: str = "utf-8"
    meta: str = ""
    current: str = ""


def e(text: str) -> str:
    return escape(text, quote=True)


def links_ul(links: tuple[Link, ...] | list[Link], cls: str = "") -> str:
    attr = f' class="{cls}"' if cls else ""
    items = "".join(f'<li><a href="{e(x.href)}">{e(x.label)}</a></li>' for x in links)
    return f"<ul{attr}>{items}</ul>"


def paragraph_html(text: str, link: Link | None) -> str:
    """A paragraph's inner HTML; `link` wraps a run of its words (the text is unchanged)."""
    if link is None:
        return e(text)
    words = text.split(" ")
    if len(words) < 8:
        return e(text)
    start = len(words) // 3
    before = " ".join(words[:start])
    span = " ".join(words[start : start + 3])
    after = " ".join(words[start + 3 :])
    return f'{e(before)} <a href="{e(link.href)}">{e(span)}</a> {e(after)}'


def block_html(block: Block, link: Link | None = None) -> str:
    """A body block in plain HTML5: <h2>, <ul>, <ol>, <table>, <pre> or <p>."""
    if block.kind == "h2":
        return f"<h2>{e(block.text)}</h2>"
    if block.kind in ("ul", "ol"):
        items = "".join(f"<li>{e(item)}</li>" for item in block.items)
        return f"<{block.kind}>{items}</{block.kind}>"
    if block.kind == "table":
        return table_html(block)
    if block.kind == "pre":
        return f"<pre><code>{e(block.text)}\n</code></pre>"
    return f"<p>{paragraph_html(block.text, link)}</p>"


def table_html(block: Block) -> str:
    """A data table: its first row in <thead> as <th> cells when it is a header."""
    rows = list(block.rows)
    head = ""
    if block.header and rows:
        head = "<thead><tr>" + "".join(f"<th>{e(c)}</th>" for c in rows.pop(0)) + "</tr></thead>"
    body = "".join("<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="figures">{head}<tbody>{body}</tbody></table>'


def block_markdown(block: Block, heading: str = "##") -> str:
    """A body block as the gold Markdown has it (`heading`: the marker of the subheading's
    level in the theme)."""
    if block.kind == "h2":
        return f"{heading} {block.text}"
    if block.kind == "ul":
        return "\n".join(f"- {item}" for item in block.items)
    if block.kind == "ol":
        return "\n".join(f"{n}. {item}" for n, item in enumerate(block.items, 1))
    if block.kind == "table":
        width = max(len(row) for row in block.rows)
        rows = [list(row) for row in block.rows]
        header = rows.pop(0) if block.header else [""] * width
        lines = ["|" + "".join(f" {c} |" if c else "  |" for c in header)]
        lines.append("|" + " --- |" * width)
        lines.extend("| " + " | ".join(row) + " |" for row in rows)
        return "\n".join(lines)
    if block.kind == "pre":
        return f"```\n{block.text}\n```"
    return block.text


def article_meta(story: StoryView, theme: str, site_title: str) -> str:
    """The <head> lines an article page of `theme` carries: each site marks its publication
    time and author in its own era's way, with the traps real sites set. The table site has
    no date markup (its date is only shown) and names its publisher as the author <meta>; the
    div site writes JSON-LD (a Person by given and family name, the publication and the
    change time), a desk e-mail as the author <meta> and its own name in og:title; the blog
    writes ``article:published:time`` (colons throughout) and shows a <time>."""
    title = f"{story.title} | {site_title}" if theme == "div" else story.title
    out = (
        f'<meta name="description" content="{e(story.summary)}">\n'
        f'<meta property="og:type" content="article">\n'
        f'<meta property="og:title" content="{e(title)}">\n'
    )
    if theme == "table":
        return out + f'<meta name="author" content="{e(site_title)}">\n'
    if theme == "div":
        given, _, family = story.author.rpartition(" ")
        data = {
            "@context": "https://schema.org",
            "@type": "NewsArticle",
            "headline": story.title,
            "datePublished": story.published.isoformat(),
            "dateModified": (story.published + timedelta(days=3)).isoformat(),
            "author": [{"@type": "Person", "givenName": given, "familyName": family}],
            "publisher": {"@type": "Organization", "name": site_title},
        }
        ld = json.dumps(data, ensure_ascii=False).replace("</", "<\\/")
        desk = f"newsdesk@{site_title.lower().removeprefix('the ').replace(' ', '-')}.test"
        return (
            out
            + f'<meta name="author" content="{e(desk)}">\n'
            + f'<script type="application/ld+json">{ld}</script>\n'
        )
    return out + (
        f'<meta property="article:published:time" content="{story.published.isoformat()}">\n'
    )
