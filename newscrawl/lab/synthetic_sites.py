"""Generated multi-page sites: shared template, different articles. No real page is copied.

Used by the tests and by `newscrawl bench template` (200 pages of one site); never to train the
shipped default model (that one learns from real pages: `newscrawl.training.template_default`).
Each site has a style (class names, sidebar side, list sizes, what the header holds) drawn from
its seed; each page has the site's header, navigation, sidebar and footer, a "most read" box
that changes now and then, and its own article: headline, byline, paragraphs of generated words
with a few inline links, and a list of related links.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from html import escape

__all__ = ["SiteStyle", "synthetic_site", "words"]

_SYLLABLE_TEXT = """
    ka lo mi ne ta ri so va de pu len mar tis con ber gal fen dor sul pra vin tek bro nal cas
    mun ter lis ova ren qui zan ult
"""
_SYLLABLES = tuple(_SYLLABLE_TEXT.split())


def words(rng: random.Random, count: int) -> list[str]:
    """`count` pronounceable made-up words."""
    return ["".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(1, 3))) for _ in range(count)]


def _sentence(rng: random.Random, low: int = 6, high: int = 18) -> str:
    text = " ".join(words(rng, rng.randint(low, high)))
    return text[0].upper() + text[1:] + "."


@dataclass(frozen=True, slots=True)
class SiteStyle:
    """What varies from site to site."""

    host: str
    prefix: str  # class-name prefix
    nav_items: int
    sidebar_left: bool
    sidebar_items: int
    footer_links: int
    dated_header: bool
    related: int
    blog: bool

    @classmethod
    def draw(cls, host: str, rng: random.Random) -> SiteStyle:
        return cls(
            host=host,
            prefix=rng.choice(("site", "main", "pg", "x", "np")),
            nav_items=rng.randint(5, 12),
            sidebar_left=rng.random() < 0.4,
            sidebar_items=rng.randint(4, 10),
            footer_links=rng.randint(3, 8),
            dated_header=rng.random() < 0.5,
            related=rng.randint(0, 6),
            blog=rng.random() < 0.4,
        )


def _links(rng: random.Random, host: str, count: int, section: str) -> list[str]:
    return [
        f'<li><a href="https://{host}/{section}/{"-".join(words(rng, 2))}">'
        f"{escape(' '.join(words(rng, rng.randint(1, 4))).title())}</a></li>"
        for _ in range(count)
    ]


def _template_parts(style: SiteStyle, rng: random.Random) -> dict[str, str]:
    """The parts every page of the site shares."""
    p, host = style.prefix, style.host
    nav = "".join(_links(rng, host, style.nav_items, "section"))
    footer = "".join(_links(rng, host, style.footer_links, "about"))
    ads = f'<div class="{p}-ad"><a href="https://ads.example.net/c?{rng.randint(1, 9999)}">'
    ads += f"{escape(_sentence(rng, 3, 6))}</a></div>"
    return {
        "header": (
            f'<div class="{p}-header"><a href="/" class="{p}-logo"><img src="/logo.png" '
            f'alt="{host}"></a><ul class="{p}-nav">{nav}</ul></div>'
        ),
        "ads": ads,
        "footer": (
            f'<div class="{p}-footer"><ul>{footer}</ul><p>Copyright {host}. '
            f"{escape(_sentence(rng, 4, 8))}</p></div>"
        ),
    }


def _article(style: SiteStyle, rng: random.Random) -> tuple[str, str]:
    """(slug, article HTML) of one page."""
    p, host = style.prefix, style.host
    headline = " ".join(words(rng, rng.randint(4, 9))).title()
    paragraphs = []
    for _ in range(rng.randint(3, 10)):
        sentences = [_sentence(rng) for _ in range(rng.randint(2, 5))]
        if rng.random() < 0.3:
            link = " ".join(words(rng, rng.randint(1, 3)))
            sentences.insert(
                1, f'<a href="https://{host}/story/{rng.randint(1, 99999)}">{link}</a>.'
            )
        paragraphs.append(f"<p>{' '.join(sentences)}</p>")
    author = " ".join(words(rng, 2)).title()
    related = "".join(_links(rng, host, style.related, "story"))
    related_box = f'<div class="{p}-related"><h3>Related</h3><ul>{related}</ul></div>'
    body = (
        f'<div class="{p}-article"><h1>{escape(headline)}</h1>'
        f'<p class="{p}-byline">By {escape(author)}</p>{"".join(paragraphs)}</div>'
        + (related_box if style.related else "")
    )
    return "-".join(headline.lower().split()[:4]), body


def _teasers(style: SiteStyle, rng: random.Random, count: int) -> str:
    """A box of `count` story teasers (picture, headline link, summary, date): the bulk of a
    real front or article page's nodes."""
    p, host = style.prefix, style.host
    items = []
    for _ in range(count):
        link = f"https://{host}/story/{rng.randint(1, 99999)}"
        items.append(
            f'<div class="{p}-teaser"><a href="{link}"><img src="/img/{rng.randint(1, 9999)}.jpg">'
            f'</a><h3><a href="{link}">{escape(" ".join(words(rng, 5)).title())}</a></h3>'
            f"<p>{escape(_sentence(rng, 8, 14))}</p><span>{rng.randint(1, 28)} May</span></div>"
        )
    return f'<div class="{p}-teasers">{"".join(items)}</div>'


def synthetic_site(
    host: str = "news.example.org", pages: int = 10, seed: int = 0, teasers: int = 0
) -> list[tuple[str, str]]:
    """(url, html) of `pages` pages of one generated site.

    `teasers` adds a box of that many story teasers to each page (about 8 nodes each), half
    of them the same on every page, so pages can be made as big as real ones.
    """
    rng = random.Random(f"{host}/{seed}")
    style = SiteStyle.draw(host, rng)
    shared = _template_parts(style, rng)
    most_read = "".join(_links(rng, host, style.sidebar_items, "story"))
    shared_teasers = _teasers(style, rng, teasers // 2) if teasers else ""
    out = []
    for index in range(pages):
        if rng.random() < 0.2:  # the "most read" box changes now and then
            most_read = "".join(_links(rng, host, style.sidebar_items, "story"))
        slug, article = _article(style, rng)
        p = style.prefix
        sidebar = (
            f'<div class="{p}-sidebar"><h3>Most read</h3><ul>{most_read}</ul>{shared["ads"]}</div>'
        )
        date = (
            f'<div class="{p}-date">Day {index + 1} of the year</div>' if style.dated_header else ""
        )
        if teasers:
            sidebar += shared_teasers + _teasers(style, rng, teasers - teasers // 2)
        columns = (sidebar + article) if style.sidebar_left else (article + sidebar)
        generator = '<meta name="generator" content="WordPress 6.4">' if style.blog else ""
        html = (
            f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{generator}'
            f"<title>{escape(slug)} | {host}</title></head><body>{shared['header']}{date}"
            f'<div class="{p}-columns">{columns}</div>{shared["footer"]}</body></html>'
        )
        out.append((f"https://{host}/story/{index}-{slug}", html))
    return out


def train_default_model(path: str, sites: int = 24, pages: int = 12) -> None:
    """Train a small model on generated sites only (static geometry) and write it to `path`.

    A demo and test helper: the shipped default model is trained on real pages instead
    (`newscrawl.training.template_default`)."""
    from newscrawl.template.node_records import site_kind
    from newscrawl.template.sitelevel import RawPage, run_sitelevel
    from newscrawl.training.template_train import TrainConfig, pages_data, train

    data = []
    for k in range(sites):
        host = f"site{k}.example.org"
        rng = random.Random(k)
        site = synthetic_site(host, pages=pages, seed=k, teasers=rng.choice((0, 10, 40)))
        run = run_sitelevel(host, [RawPage(url, html) for url, html in site])
        data.append((host, site_kind(run.pages), run.pages, run.labels or []))
    model, report = train(pages_data(data), TrainConfig(holdout=0.25))
    model.save(path)
    print("\n".join(report.lines()))


if __name__ == "__main__":
    import sys

    train_default_model(sys.argv[1] if len(sys.argv) > 1 else "synthetic_template_model.json")
