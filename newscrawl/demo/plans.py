"""The demo web's site plans: each site's sections, URL shapes and theme, and its stories -
what is published when, with which tags, comments and way of being found - day by day.
`newscrawl.demo.web` renders them."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from newscrawl.demo.text import Block, SiteKind, StoryText, person, write_comment, write_story
from newscrawl.demo.theme_views import Comment

NEWEST = datetime(2024, 6, 28, 9, 30, tzinfo=UTC)
NEW_PER_DAY: dict[str, int] = {"news": 3, "blog": 2}  # new articles a site publishes each day
REDESIGN_DAY = 1  # from this day on, REDESIGNED wears another theme
REDESIGNED = ("valley-courier", "html5")
_UPDATED_INDEX = 16  # from day 1, the first linked day-0 article from here on is updated
_AMP_INDEX = 18  # ... and the first linked one from here on is also listed as an AMP view


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
    moment = NEWEST
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
            moment = NEWEST + timedelta(days=d, hours=-2 * k, minutes=-rng.randint(0, 59))
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
    story.updated = NEWEST + timedelta(days=1, hours=1)


def _site_plan(spec: _Spec, seed: int, day: int) -> tuple[random.Random, list[_Story], str]:
    """The site's generator, its articles on `day` (newest first) and its AMP path ("": none)."""
    rng = random.Random(f"{seed}/{spec.name}")  # str seeds are stable across processes
    stories = _plan(spec, rng)
    if day <= 0:
        return rng, stories, ""
    _update(_linked_from(stories, _UPDATED_INDEX), day)
    amp = _linked_from(stories, _AMP_INDEX).path + "?outputType=amp"
    return rng, _later_days(spec, seed, day, stories) + stories, amp
