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
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Literal

from newscrawl.demo.text import Block, SiteKind, StoryText, person, write_comment, write_story
from newscrawl.demo.themes import (
    BASE,
    THEMES,
    Chrome,
    Comment,
    Link,
    PageInfo,
    Pager,
    StoryView,
    Theme,
    article_meta,
)
from newscrawl.demo.themes import e as _x

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

_NEWEST = datetime(2024, 6, 28, 9, 30, tzinfo=UTC)
NEW_PER_DAY: dict[str, int] = {"news": 3, "blog": 2}  # new articles a site publishes each day
REDESIGN_DAY = 1  # from this day on, REDESIGNED wears another theme
REDESIGNED = ("valley-courier", "html5")
_UPDATED_INDEX = 16  # from day 1, the first linked day-0 article from here on is updated
_AMP_INDEX = 18  # ... and the first linked one from here on is also listed as an AMP view


# ---------------------------------------------------------------------------- public data


@dataclass(frozen=True, slots=True)
class DemoArticle:
    """Gold for one article page. `text`: the body paragraphs separated by a blank line.

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


# ---------------------------------------------------------------------------- site plans


@dataclass(frozen=True, slots=True)
class _Section:
    key: str  # grammar section
    slug: str
    label: str


@dataclass(frozen=True, slots=True)
class _Urls:
    """Where each kind of page lives on one site (every site spells its URLs differently)."""

    article: Callable[[datetime, str, str, int], str]  # (published, section slug, slug, n)
    section: Callable[[str, int], str]
    tag: Callable[[str], str]
    archive: Callable[[int, int], str]
    home: Callable[[int], str]
    about: str
    private: str
    search: str
    feed: str
    feed_type: str


@dataclass(frozen=True, slots=True)
class _Spec:
    name: str
    title: str
    tagline: str
    kind: SiteKind
    theme: str
    sections: tuple[_Section, ...]
    tags: tuple[str, ...]
    articles: int
    gap_hours: tuple[int, int]
    urls: _Urls
    sitemap: Literal["index-monthly", "urlset-news", "index-split"]
    accented_every: int = 0  # every Nth article in windows-1252 with accented names
    home_pages: bool = False  # paginated home page (blogs) instead of one front page
    staff: int = 5


def _gazette_urls() -> _Urls:
    def section(slug: str, page: int) -> str:
        return f"/section/{slug}/" + (f"?page={page}" if page > 1 else "")

    return _Urls(
        article=lambda d, sec, slug, n: f"/news/{d:%Y/%m/%d}/{slug}.html",
        section=section,
        tag=lambda tag: f"/topics/{tag}.html",
        archive=lambda y, m: f"/archive/{y}-{m:02d}.html",
        home=lambda page: "/",
        about="/about.html",
        private="/private/staff/",
        search="/search?q=harbour",
        feed="/rss.xml",
        feed_type="application/rss+xml",
    )


def _courier_urls() -> _Urls:
    return _Urls(
        article=lambda d, sec, slug, n: f"/{sec}/{slug}-{n:05d}",
        section=lambda slug, page: f"/{slug}/" + (f"page/{page}" if page > 1 else ""),
        tag=lambda tag: f"/tag/{tag}/",
        archive=lambda y, m: f"/archive/{y}/{m:02d}/",
        home=lambda page: "/",
        about="/about-us/",
        private="/private/drafts/",
        search="/search?q=valley&sort=date",
        feed="/feeds/latest.rss",
        feed_type="application/rss+xml",
    )


def _blog_urls() -> _Urls:
    return _Urls(
        article=lambda d, sec, slug, n: f"/{d:%Y/%m}/{slug}/",
        section=lambda slug, page: f"/category/{slug}/" + (f"page/{page}/" if page > 1 else ""),
        tag=lambda tag: f"/tag/{tag}/",
        archive=lambda y, m: f"/{y}/{m:02d}/",
        home=lambda page: "/" if page <= 1 else f"/page/{page}/",
        about="/about/",
        private="/private/",
        search="/search?q=seasons",
        feed="/feed/",
        feed_type="application/atom+xml",
    )


_SPECS = (
    _Spec(
        name="harbor-gazette",
        title="The Harbor Gazette",
        tagline="Serving the coast since 1894",
        kind="news",
        theme="table",
        sections=(
            _Section("city", "metro", "Metro"),
            _Section("business", "business", "Business"),
            _Section("sports", "sports", "Sports"),
            _Section("culture", "arts", "Arts"),
        ),
        tags=(
            "harbour",
            "transport",
            "housing",
            "council",
            "budget",
            "schools",
            "weather",
            "heritage",
        ),
        articles=54,
        gap_hours=(6, 30),
        urls=_gazette_urls(),
        sitemap="index-monthly",
        accented_every=6,
    ),
    _Spec(
        name="valley-courier",
        title="The Valley Courier",
        tagline="News for the river valley",
        kind="news",
        theme="div",
        sections=(
            _Section("city", "local", "Local"),
            _Section("business", "economy", "Economy"),
            _Section("science", "science", "Science"),
            _Section("culture", "culture", "Culture"),
            _Section("opinion", "opinion", "Opinion"),
        ),
        tags=(
            "environment",
            "elections",
            "jobs",
            "health",
            "energy",
            "rail",
            "farming",
            "flooding",
            "universities",
            "theatre",
        ),
        articles=60,
        gap_hours=(4, 26),
        urls=_courier_urls(),
        sitemap="urlset-news",
    ),
    _Spec(
        name="field-notes",
        title="Field Notes",
        tagline="Gardening, cooking, riding and reading",
        kind="blog",
        theme="html5",
        sections=(
            _Section("garden", "garden", "Garden"),
            _Section("kitchen", "kitchen", "Kitchen"),
            _Section("cycling", "cycling", "Cycling"),
            _Section("books", "books", "Books"),
        ),
        tags=(
            "seasonal",
            "beginners",
            "slow-living",
            "repairs",
            "reading-list",
            "weekend",
            "notebook",
            "winter",
        ),
        articles=48,
        gap_hours=(30, 130),
        urls=_blog_urls(),
        sitemap="index-split",
        home_pages=True,
        staff=2,
    ),
)


@dataclass(slots=True)
class _Story:
    index: int
    path: str
    text: StoryText
    section: _Section
    tags: tuple[str, ...]
    published: datetime
    author: str
    comments: tuple[Comment, ...]
    discovery: str = "link"
    charset: str = "utf-8"
    updated: datetime | None = None  # when the article was last changed, if after publication

    @property
    def modified(self) -> datetime:
        return self.updated or self.published

    @property
    def summary(self) -> str:
        first = self.text.blocks[0].text if self.text.blocks[0].kind == "p" else self.text.title
        end = first.find(". ")
        return first if end < 0 else first[: end + 1]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60].rstrip("-")


def _tag_label(tag: str) -> str:
    return tag.replace("-", " ").capitalize()


def _comments(rng: random.Random, story_time: datetime, section: str, kind: SiteKind) -> tuple:
    if rng.random() > (0.7 if kind == "blog" else 0.45):
        return ()
    moment = story_time
    out: list[Comment] = []
    for _ in range(rng.randint(1, 9)):
        moment += timedelta(hours=rng.randint(1, 20), minutes=rng.randint(0, 59))
        name = person(rng)
        author = name.split()[0] + " " + name.split()[-1][0] + "." if rng.random() < 0.6 else name
        out.append(Comment(author, moment, write_comment(rng, section)))
    return tuple(out)


def _plan(spec: _Spec, rng: random.Random) -> list[_Story]:
    """All articles of a site, newest first, with their discovery routes assigned."""
    staff = [person(rng) for _ in range(spec.staff)] + [person(rng, accented=True)]
    stories: list[_Story] = []
    titles: set[str] = set()
    paths: set[str] = set()
    moment = _NEWEST
    for index in range(spec.articles):
        moment -= timedelta(hours=rng.randint(*spec.gap_hours), minutes=rng.randint(0, 59))
        section = rng.choice(spec.sections)
        accented = bool(spec.accented_every) and index % spec.accented_every == 2
        text = write_story(rng, spec.kind, section.key, accented=accented)
        while text.title in titles:  # headlines must be unique within a site
            text = write_story(rng, spec.kind, section.key, accented=accented)
        titles.add(text.title)
        path = spec.urls.article(moment, section.slug, _slug(text.title), 40000 + index * 7)
        if path in paths:
            raise ValueError(f"duplicate article path {path}")
        paths.add(path)
        tags = tuple(rng.sample(spec.tags, rng.randint(1, 3)))
        author = staff[0] if spec.kind == "blog" and rng.random() < 0.8 else rng.choice(staff)
        comments = _comments(rng, moment, section.key, spec.kind)
        charset = "windows-1252" if accented else "utf-8"
        stories.append(
            _Story(index, path, text, section, tags, moment, author, comments, charset=charset)
        )
    for index in rng.sample(range(1, 13), 3):
        stories[index].discovery = "feed"
    for index in rng.sample(range(20, len(stories)), 4):
        stories[index].discovery = "sitemap"
    return stories


def _later_days(spec: _Spec, seed: int, day: int, before: list[_Story]) -> list[_Story]:
    """The articles of days 1..`day`, newest first (each day's from a generator of its own, so
    day N's articles are the same whatever day the web is built for)."""
    titles = {s.text.title for s in before}
    count = NEW_PER_DAY[spec.kind]
    added: list[_Story] = []
    for d in range(1, day + 1):
        rng = random.Random(f"{seed}/{spec.name}/day/{d}")
        for k in range(count):
            moment = _NEWEST + timedelta(days=d, hours=-2 * k, minutes=-rng.randint(0, 59))
            section = rng.choice(spec.sections)
            text = write_story(rng, spec.kind, section.key)
            while text.title in titles:
                text = write_story(rng, spec.kind, section.key)
            titles.add(text.title)
            index = spec.articles + (d - 1) * count + k
            path = spec.urls.article(moment, section.slug, _slug(text.title), 40000 + index * 7)
            tags = tuple(rng.sample(spec.tags, rng.randint(1, 3)))
            comments = _comments(rng, moment, section.key, spec.kind)
            story = _Story(index, path, text, section, tags, moment, person(rng), comments)
            added.append(story)
    return sorted(added, key=lambda s: s.published, reverse=True)


def _linked_from(stories: list[_Story], start: int) -> _Story:
    return next(s for s in stories[start:] if s.discovery == "link")


def _update(story: _Story, day: int) -> None:
    """The article corrected on day 1: a paragraph added, a later modification time."""
    note = Block(
        "p",
        "Correction: an earlier version of this article gave the wrong date for the next "
        "meeting. The article has been updated with the date the organisers confirmed.",
    )
    story.text = StoryText(story.text.title, (*story.text.blocks, note))
    story.updated = _NEWEST + timedelta(days=1, hours=1)


def _site_plan(spec: _Spec, seed: int, day: int) -> tuple[random.Random, list[_Story], str]:
    """The site's generator, its articles on `day` (newest first) and its AMP path ("": none)."""
    rng = random.Random(f"{seed}/{spec.name}")  # str seeds are stable across processes
    stories = _plan(spec, rng)
    if day <= 0:
        return rng, stories, ""
    _update(_linked_from(stories, _UPDATED_INDEX), day)
    amp = _linked_from(stories, _AMP_INDEX).path + "?outputType=amp"
    return rng, _later_days(spec, seed, day, stories) + stories, amp


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
        with_times = self.theme.name != "table"  # the old site has no article meta tags
        for story in self.stories:
            view = self.view(story, full=True)
            info = PageInfo(
                story.path,
                story.text.title,
                charset=story.charset,
                meta=article_meta(view, with_times),
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
            modified = chunk[0].published if chunk else _NEWEST
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
            self.add_html(info, main, kind=kind, modified=_NEWEST)

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
            children.append(("/sitemaps/pages.xml", _NEWEST))
        else:
            self.add_data("/sitemap-posts.xml", _urlset(listed, []), xml, "sitemap")
            self.add_data("/sitemap-pages.xml", _urlset([], others), xml, "sitemap")
            children += [
                ("/sitemap-posts.xml", listed[0].published),
                ("/sitemap-pages.xml", _NEWEST),
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


def _gold(story: _Story) -> DemoArticle:
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
    )


def _build_site(spec: _Spec, seed: int, day: int = 0) -> DemoSite:
    rng, stories, amp = _site_plan(spec, seed, day)
    redesigned = day >= REDESIGN_DAY and spec.name == REDESIGNED[0]
    builder = _Builder(
        spec,
        rng,
        stories,
        theme_name=REDESIGNED[1] if redesigned else spec.theme,
        floor=_NEWEST + timedelta(days=REDESIGN_DAY) if redesigned else None,
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
        articles={s.path: _gold(s) for s in stories},
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
