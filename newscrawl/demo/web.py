"""A deterministic fixture web of news sites and a blog, with the gold text of every article.

`build_demo_web(seed)` plans each site (articles, sections, tags, archives), writes the article
text from the bundled grammar with `random.Random`, and renders every page through the site's
own theme (`themes.py`): one table layout, one div layout, one HTML5 blog. Same seed, same bytes.

Each site is built to exercise a crawler as well as the extractors:

* robots.txt disallows ``/private/`` and ``/search``, and both are linked from every page;
* most articles are linked from listings, but a few are reachable *only* through the sitemap
  (``discovery == "sitemap"``) and a few *only* through the feed (``discovery == "feed"``),
  which is announced on every page with ``<link rel="alternate">``;
* some articles of the table-layout site are served in windows-1252 (declared in the header and
  in ``<meta>``) and carry accented names, to exercise decoding.

The web advances in time (`build_demo_web(seed, day=N)`, ``newscrawl serve-demo --day N``), for
scheduled, incremental crawls: day 0 is the web above; each later day adds `NEW_PER_DAY` new
articles per site (newer than all before, linked from the home page, sections, tags, archive,
feed and sitemap); from day 1 one earlier article of each site is updated (a paragraph added, a
later Last-Modified and sitemap ``<lastmod>``) and each sitemap lists an AMP view of another
(``?outputType=amp``: the same page, its canonical link naming the article); from
`REDESIGN_DAY` the site `REDESIGNED` wears another theme (a redesign: new markup on every page).
Article and listing pages answer conditional requests (Last-Modified / If-Modified-Since).

Bodies hold the placeholder ``{{BASE}}`` (scheme://host:port) wherever an absolute URL is needed
(canonical links, feeds, sitemaps, robots.txt); the demo server fills it in per request.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime

from newscrawl.demo.plans import (
    _SPECS,
    NEW_PER_DAY,
    NEWEST,
    REDESIGN_DAY,
    REDESIGNED,
    _site_plan,
    _Spec,
    _Story,
    _tag_label,
)
from newscrawl.demo.text import SiteKind
from newscrawl.demo.theme_views import BASE, Chrome, Link, PageInfo, Pager, StoryView, article_meta
from newscrawl.demo.theme_views import e as _x
from newscrawl.demo.themes import THEMES, Theme

__all__ = [
    "NEW_PER_DAY",
    "REDESIGNED",
    "REDESIGN_DAY",
    "DemoArticle",
    "DemoPage",
    "DemoSite",
    "DemoWeb",
    "build_demo_web",
]

# ---------------------------------------------------------------------------- public data


@dataclass(frozen=True, slots=True)
class DemoArticle:
    """Gold for one article page. `text`: the body paragraphs separated by a blank line;
    `markdown`: the body as Markdown, as the site's theme shows it.

    `discovery` says how a crawler can find the page: "link" (linked from listings), "sitemap"
    (only listed in the sitemap) or "feed" (only listed in the feed).
    """

    path: str
    title: str
    text: str
    published: datetime
    author: str
    section: str = ""
    tags: tuple[str, ...] = ()
    discovery: str = "link"
    charset: str = "utf-8"
    markdown: str = ""


@dataclass(slots=True)
class DemoPage:
    """One response. `kind` names the page type (article, listing, home, robots, feed, ...)."""

    path: str
    body: bytes
    content_type: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    kind: str = "page"

    @classmethod
    def dated(
        cls, path: str, body: bytes, content_type: str, modified: datetime, kind: str
    ) -> DemoPage:
        """A 200 response with a Last-Modified header (what conditional requests compare)."""
        headers = {"Last-Modified": format_datetime(modified, usegmt=True)}
        return cls(path, body, content_type, headers=headers, kind=kind)


@dataclass(slots=True)
class DemoSite:
    name: str
    kind: SiteKind
    pages: dict[str, DemoPage]
    articles: dict[str, DemoArticle]
    disallowed: list[str]
    title: str = ""
    theme: str = ""
    feed: str = ""
    sitemap: str = "/sitemap.xml"

    @property
    def html_pages(self) -> list[DemoPage]:
        return [p for p in self.pages.values() if p.content_type.startswith("text/html")]

    def discovered_by(self, discovery: str) -> list[str]:
        """Article paths with the given discovery route ("link", "sitemap" or "feed")."""
        return [a.path for a in self.articles.values() if a.discovery == discovery]


@dataclass(slots=True)
class DemoWeb:
    sites: list[DemoSite]
    seed: int = 4

    def site(self, name: str) -> DemoSite:
        for site in self.sites:
            if site.name == name:
                return site
        raise KeyError(f"no demo site named {name!r}")


# ---------------------------------------------------------------------------- rendering


@dataclass(slots=True)
class _Builder:
    spec: _Spec
    rng: random.Random
    stories: list[_Story]
    theme_name: str = ""
    floor: datetime | None = None  # no page older than this (a redesign changed them all)
    extra_sitemap: tuple[str, ...] = ()  # paths listed in the sitemap besides the site's own
    theme: Theme = field(init=False)
    linked: list[_Story] = field(init=False)
    pages: dict[str, DemoPage] = field(default_factory=dict)
    chrome: Chrome = field(init=False)

    def __post_init__(self) -> None:
        self.theme = THEMES[self.theme_name or self.spec.theme]
        self.linked = [s for s in self.stories if s.discovery == "link"]
        self.chrome = self._chrome()

    def _chrome(self) -> Chrome:
        urls = self.spec.urls
        popular = self.rng.sample(self.linked, 5)
        return Chrome(
            site_title=self.spec.title,
            tagline=self.spec.tagline,
            sections=tuple(Link(s.label, urls.section(s.slug, 1)) for s in self.spec.sections),
            popular=tuple(Link(s.text.title, s.path) for s in popular),
            latest=tuple(Link(s.text.title, s.path) for s in self.linked[:5]),
            tags=tuple(Link(_tag_label(t), urls.tag(t)) for t in self.spec.tags),
            feed=Link(urls.feed_type, urls.feed),
            about=urls.about,
            private=urls.private,
            search=urls.search,
        )

    def view(self, story: _Story, full: bool = False) -> StoryView:
        urls = self.spec.urls
        section = Link(story.section.label, urls.section(story.section.slug, 1))
        tags = tuple(Link(_tag_label(t), urls.tag(t)) for t in story.tags)
        teaser = StoryView(
            story.path,
            story.text.title,
            section,
            tags,
            story.published,
            story.author,
            story.summary,
        )
        if not full:
            return teaser
        others = [s for s in self.linked if s.path != story.path]
        inline = self.rng.choice(others) if self.rng.random() < 0.5 else None
        read_also = tuple(Link(s.text.title, s.path) for s in self.rng.sample(others, 2))
        return dataclasses.replace(
            teaser,
            blocks=story.text.blocks,
            comments=story.comments,
            inline_link=Link(inline.text.title, inline.path) if inline else None,
            read_also=read_also,
        )

    def related(self, story: _Story) -> tuple[Link, ...]:
        same = [s for s in self.linked if s.section == story.section and s.path != story.path]
        picked = (
            same[:4]
            if len(same) >= 4
            else same
            + [s for s in self.linked if s not in same and s.path != story.path][: 4 - len(same)]
        )
        return tuple(Link(s.text.title, s.path) for s in picked)

    def add_html(self, info: PageInfo, main: str, *, kind: str, modified: datetime) -> None:
        modified = max(modified, self.floor) if self.floor else modified
        html = self.theme.page(self.chrome, info, main)
        codec = "cp1252" if info.charset == "windows-1252" else info.charset
        body = html.encode(codec, "xmlcharrefreplace")
        content_type = f"text/html; charset={info.charset}"
        self.pages[info.path] = DemoPage.dated(info.path, body, content_type, modified, kind)

    def add_data(self, path: str, text: str, content_type: str, kind: str) -> None:
        modified = self.stories[0].published
        self.pages[path] = DemoPage.dated(path, text.encode("utf-8"), content_type, modified, kind)

    # -- page families -------------------------------------------------------------------

    def articles(self) -> None:
        for story in self.stories:
            view = self.view(story, full=True)
            info = PageInfo(
                story.path,
                story.text.title,
                charset=story.charset,
                meta=article_meta(view, self.theme.name, self.spec.title),
                current=view.section.href,
            )
            main = self.theme.article(view, self.related(story))
            self.add_html(info, main, kind="article", modified=story.modified)

    def paginated(
        self,
        make_path: Callable[[int], str],
        title: str,
        intro: str,
        stories: list[_Story],
        per_page: int,
        current: str = "",
    ) -> None:
        pages = max(1, -(-len(stories) // per_page))
        for page in range(1, pages + 1):
            chunk = stories[(page - 1) * per_page : page * per_page]
            pager = Pager(
                page,
                pages,
                make_path(page - 1) if page > 1 else None,
                make_path(page + 1) if page < pages else None,
            )
            heading = title if page == 1 else f"{title} (page {page})"
            main = self.theme.listing(heading, intro, [self.view(s) for s in chunk], pager)
            modified = chunk[0].published if chunk else NEWEST
            info = PageInfo(make_path(page), heading, current=current)
            self.add_html(info, main, kind="listing", modified=modified)

    def listings(self) -> None:
        self.home()
        urls = self.spec.urls
        for section in self.spec.sections:
            members = [s for s in self.linked if s.section == section]
            self.paginated(
                functools.partial(urls.section, section.slug),
                section.label,
                f"The latest from our {section.label.lower()} desk.",
                members,
                8,
                current=urls.section(section.slug, 1),
            )
        for tag in self.spec.tags:
            label = _tag_label(tag)
            members = [s for s in self.linked if tag in s.tags]
            intro = f"Everything we have written about {label.lower()}."
            self.single_listing(urls.tag(tag), f"Topic: {label}", intro, members)
        for (year, month), members in _by_month(self.linked):
            label = datetime(year, month, 1).strftime("%B %Y")
            intro = f"Everything published in {label}."
            self.single_listing(urls.archive(year, month), f"Archive: {label}", intro, members)

    def home(self) -> None:
        """A blog's paginated home page, or a news site's front page of top stories."""
        spec = self.spec
        if spec.home_pages:
            self.paginated(spec.urls.home, spec.title, spec.tagline, self.linked, 6)
            self.pages["/"].kind = "home"
            return
        top = [self.view(s) for s in self.linked[:14]]
        main = self.theme.listing("Top stories", spec.tagline, top, None)
        info = PageInfo("/", spec.title)
        self.add_html(info, main, kind="home", modified=self.linked[0].published)

    def single_listing(self, path: str, title: str, intro: str, stories: list[_Story]) -> None:
        """A listing that is never paginated (tag and archive pages)."""
        self.paginated(lambda _page: path, title, intro, stories, 1000)

    def static(self) -> None:
        urls, spec = self.spec.urls, self.spec
        about = [
            f"{spec.title} is an independent {'newspaper' if spec.kind == 'news' else 'blog'} "
            f"written for the newscrawl demo web. Nothing in it happened.",
            "Every article here is generated from a small hand-written grammar, so the pages "
            "look like a real site while their text is known exactly.",
            "Write to the editors at the address below; letters may be edited for length.",
        ]
        staff = ["Sign in to see drafts and rotas."]
        search = ["No results matched your query."]
        plain = (
            (PageInfo(urls.about, "About us"), "About us", about, "about"),
            (PageInfo(urls.private, "Staff area"), "Staff area", staff, "private"),
            (PageInfo(urls.search.split("?")[0], "Search"), "Search results", search, "search"),
        )
        for info, heading, paragraphs, kind in plain:
            main = self.theme.plain(heading, paragraphs)
            self.add_html(info, main, kind=kind, modified=NEWEST)

    def robots(self) -> None:
        text = (
            f"# robots.txt for {self.spec.title}\n"
            "User-agent: *\n"
            "Disallow: /private/\n"
            "Disallow: /search\n"
            "\n"
            "User-agent: GreedyBot\n"
            "Disallow: /\n"
            "\n"
            f"Sitemap: {BASE}/sitemap.xml\n"
        )
        self.add_data("/robots.txt", text, "text/plain; charset=utf-8", "robots")

    def feed(self) -> None:
        eligible = [s for s in self.stories if s.discovery != "sitemap"][:15]
        urls = self.spec.urls
        if urls.feed_type == "application/atom+xml":
            text = _atom(self.spec, eligible)
        else:
            text = _rss(self.spec, eligible)
        self.add_data(urls.feed, text, f"{urls.feed_type}; charset=utf-8", "feed")

    def sitemaps(self) -> None:
        listed = [s for s in self.stories if s.discovery != "feed"]
        others = sorted(
            p
            for p, page in self.pages.items()
            if page.kind in ("home", "listing", "about") and "?" not in p
        ) + list(self.extra_sitemap)
        style = self.spec.sitemap
        xml = "application/xml; charset=utf-8"
        if style == "urlset-news":
            self.add_data(
                "/sitemap.xml", _urlset(listed, others, news=self.spec.title), xml, "sitemap"
            )
            return
        children: list[tuple[str, datetime]] = []
        if style == "index-monthly":
            for (year, month), members in _by_month(listed):
                path = f"/sitemaps/articles-{year}-{month:02d}.xml"
                self.add_data(path, _urlset(members, []), xml, "sitemap")
                children.append((path, members[0].published))
            self.add_data("/sitemaps/pages.xml", _urlset([], others), xml, "sitemap")
            children.append(("/sitemaps/pages.xml", NEWEST))
        else:
            self.add_data("/sitemap-posts.xml", _urlset(listed, []), xml, "sitemap")
            self.add_data("/sitemap-pages.xml", _urlset([], others), xml, "sitemap")
            children += [
                ("/sitemap-posts.xml", listed[0].published),
                ("/sitemap-pages.xml", NEWEST),
            ]
        self.add_data("/sitemap.xml", _sitemap_index(children), xml, "sitemap")


def _by_month(stories: list[_Story]) -> list[tuple[tuple[int, int], list[_Story]]]:
    """Stories grouped by (year, month) of publication, newest month first."""
    months: dict[tuple[int, int], list[_Story]] = {}
    for story in stories:
        months.setdefault((story.published.year, story.published.month), []).append(story)
    return sorted(months.items(), reverse=True)


def _urlset(stories: list[_Story], others: list[str], news: str = "") -> str:
    ns = ' xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"' if news else ""
    rows: list[str] = []
    for story in stories:
        extra = ""
        if news:
            extra = (
                f"<news:news><news:publication><news:name>{_x(news)}</news:name>"
                "<news:language>en</news:language></news:publication>"
                f"<news:publication_date>{story.published.isoformat()}</news:publication_date>"
                f"<news:title>{_x(story.text.title)}</news:title></news:news>"
            )
        rows.append(
            f"<url><loc>{BASE}{_x(story.path)}</loc>"
            f"<lastmod>{story.modified:%Y-%m-%d}</lastmod>{extra}</url>"
        )
    rows += [
        f"<url><loc>{BASE}{_x(path)}</loc><changefreq>daily</changefreq></url>" for path in others
    ]
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"{ns}>\n'
        + "\n".join(rows)
        + "\n</urlset>\n"
    )


def _sitemap_index(children: list[tuple[str, datetime]]) -> str:
    rows = "\n".join(
        f"<sitemap><loc>{BASE}{_x(path)}</loc><lastmod>{moment:%Y-%m-%d}</lastmod></sitemap>"
        for path, moment in children
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
        f"{rows}\n</sitemapindex>\n"
    )


def _rss(spec: _Spec, stories: list[_Story]) -> str:
    items = "\n".join(
        f"<item><title>{_x(s.text.title)}</title><link>{BASE}{_x(s.path)}</link>"
        f'<guid isPermaLink="true">{BASE}{_x(s.path)}</guid>'
        f"<pubDate>{format_datetime(s.published)}</pubDate>"
        f"<dc:creator>{_x(s.author)}</dc:creator><category>{_x(s.section.label)}</category>"
        f"<description>{_x(s.summary)}</description></item>"
        for s in stories
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:atom="http://www.w3.org/2005/Atom">\n<channel>\n'
        f"<title>{_x(spec.title)}</title><link>{BASE}/</link>"
        f"<description>{_x(spec.tagline)}</description><language>en</language>\n"
        f'<atom:link href="{BASE}{spec.urls.feed}" rel="self" type="application/rss+xml"/>\n'
        f"<lastBuildDate>{format_datetime(stories[0].published)}</lastBuildDate>\n"
        f"{items}\n</channel>\n</rss>\n"
    )


def _atom(spec: _Spec, stories: list[_Story]) -> str:
    entries = "\n".join(
        f"<entry><title>{_x(s.text.title)}</title>"
        f'<link rel="alternate" type="text/html" href="{BASE}{_x(s.path)}"/>'
        f"<id>{BASE}{_x(s.path)}</id><published>{s.published.isoformat()}</published>"
        f"<updated>{s.published.isoformat()}</updated><author><name>{_x(s.author)}</name>"
        f'</author><category term="{_x(s.section.slug)}"/><summary>{_x(s.summary)}</summary>'
        "</entry>"
        for s in stories
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">\n'
        f"<title>{_x(spec.title)}</title><subtitle>{_x(spec.tagline)}</subtitle>\n"
        f'<link rel="alternate" type="text/html" href="{BASE}/"/>\n'
        f'<link rel="self" type="application/atom+xml" href="{BASE}{spec.urls.feed}"/>\n'
        f"<id>{BASE}/</id><updated>{stories[0].published.isoformat()}</updated>\n"
        f"{entries}\n</feed>\n"
    )


def _gold(story: _Story, theme: Theme) -> DemoArticle:
    return DemoArticle(
        story.path,
        story.text.title,
        story.text.gold,
        story.published,
        story.author,
        story.section.label,
        story.tags,
        story.discovery,
        story.charset,
        theme.gold_markdown(story.text.blocks),
    )


def _build_site(spec: _Spec, seed: int, day: int = 0) -> DemoSite:
    rng, stories, amp = _site_plan(spec, seed, day)
    redesigned = day >= REDESIGN_DAY and spec.name == REDESIGNED[0]
    builder = _Builder(
        spec,
        rng,
        stories,
        theme_name=REDESIGNED[1] if redesigned else spec.theme,
        floor=NEWEST + timedelta(days=REDESIGN_DAY) if redesigned else None,
        extra_sitemap=(amp,) if amp else (),
    )
    builder.articles()
    builder.listings()
    builder.static()
    if redesigned:  # the new theme links its authors to /about/: the site serves it there too
        about = builder.pages[spec.urls.about]
        builder.pages.setdefault("/about/", dataclasses.replace(about, path="/about/"))
    builder.robots()
    builder.feed()
    builder.sitemaps()
    return DemoSite(
        name=spec.name,
        kind=spec.kind,
        pages=builder.pages,
        articles={s.path: _gold(s, builder.theme) for s in stories},
        disallowed=["/private/", "/search"],
        title=spec.title,
        theme=builder.theme.name,
        feed=spec.urls.feed,
    )


def build_demo_web(seed: int = 4, day: int = 0) -> DemoWeb:
    """The whole demo web on `day` (0: the first; see the module docstring for what each later
    day brings); the same seed and day always give the same pages, byte for byte."""
    if day < 0:
        raise ValueError(f"the demo web starts on day 0, not {day}")
    return DemoWeb([_build_site(spec, seed, day) for spec in _SPECS], seed)
