"""Three page templates for the demo web: an old table layout, a div layout and an HTML5 blog.

Each site renders every page through one theme, so the boilerplate (masthead, navigation,
sidebars, related boxes, footer) repeats across the site with the markup of its own era, which is
what template detection has to learn. The article body is the only part that carries gold text;
everything else - bylines, comments, "read also" boxes inside the story column - is noise an
extractor must leave out.

Links in pages are path-absolute; canonical and feed links use the ``{{BASE}}`` placeholder that
the demo server replaces with the site's scheme://host:port.
"""

from __future__ import annotations

from datetime import datetime

from newscrawl.demo.text import Block
from newscrawl.demo.theme_views import (
    BASE,
    Chrome,
    Comment,
    Link,
    PageInfo,
    Pager,
    StoryView,
    block_html,
    block_markdown,
    e,
    links_ul,
    paragraph_html,
)

__all__ = [
    "THEMES",
    "Theme",
]


class Theme:
    """Renders the pages of one site. Subclasses differ only in markup: the page frame, the
    pieces of an article (blocks, comments) and of a listing (teasers, frame, pager class)."""

    name = "base"
    title_separator = " - "  # between the page's and the site's title in <title>
    pager_class = "pages"
    block_separator = ""

    # -- whole pages ---------------------------------------------------------------------------

    def page(self, chrome: Chrome, info: PageInfo, main: str) -> str:
        raise NotImplementedError

    def head_html(self, chrome: Chrome, info: PageInfo) -> str:
        """The <head> lines every theme shares: charset, title, canonical, feed, stylesheet."""
        title = f"{info.title}{self.title_separator}{chrome.site_title}"
        return (
            f'<meta http-equiv="Content-Type" content="text/html; charset={info.charset}">\n'
            f"<title>{e(title)}</title>\n"
            f'<link rel="canonical" href="{BASE}{e(info.path)}">\n'
            f'<link rel="alternate" type="{chrome.feed.label}" title="{e(chrome.site_title)}" '
            f'href="{BASE}{chrome.feed.href}">\n'
            f'<link rel="stylesheet" href="/static/site.css">\n{info.meta}'
        )

    def plain(self, heading: str, paragraphs: list[str]) -> str:
        body = "".join(f"<p>{e(p)}</p>" for p in paragraphs)
        return f"<h1>{e(heading)}</h1>{body}"

    # -- articles ------------------------------------------------------------------------------

    def article(self, story: StoryView, related: tuple[Link, ...]) -> str:
        raise NotImplementedError

    def body(self, story: StoryView) -> str:
        """The story's blocks; the second paragraph carries the in-text link."""
        parts: list[str] = []
        for index, block in enumerate(story.blocks):
            parts.append(self.block(block, story.inline_link if index == 1 else None))
            if index == 1:
                parts.extend(self.inline_boxes(story))
        return self.block_separator.join(parts)

    def block(self, block: Block, link: Link | None) -> str:
        return block_html(block, link)

    def gold_markdown(self, blocks: tuple[Block, ...]) -> str:
        """The Markdown of an article body as this theme shows it: what a crawl's `markdown`
        column should hold for the article."""
        return "\n\n".join(self.block_markdown(block) for block in blocks)

    def block_markdown(self, block: Block) -> str:
        return block_markdown(block)

    def inline_boxes(self, story: StoryView) -> list[str]:
        """Boxes set inside the story column after the second block (not gold)."""
        return []

    def comments(self, story: StoryView) -> str:
        if not story.comments:
            return ""
        return self.comment_box(story, "".join(self.comment(c) for c in story.comments))

    def comment(self, comment: Comment) -> str:
        raise NotImplementedError

    def comment_box(self, story: StoryView, comments: str) -> str:
        raise NotImplementedError

    # -- listings ------------------------------------------------------------------------------

    def listing(
        self, heading: str, intro: str, stories: list[StoryView], pager: Pager | None
    ) -> str:
        teasers = "".join(self.teaser(s) for s in stories)
        return self.listing_frame(heading, intro, teasers) + self.pager_html(pager)

    def teaser(self, story: StoryView) -> str:
        raise NotImplementedError

    def listing_frame(self, heading: str, intro: str, teasers: str) -> str:
        raise NotImplementedError

    def pager_html(self, pager: Pager | None) -> str:
        if pager is None or pager.pages <= 1:
            return ""
        parts = []
        if pager.prev:
            parts.append(f'<a rel="prev" href="{e(pager.prev)}">&laquo; Newer</a>')
        parts.append(f"<span>Page {pager.page} of {pager.pages}</span>")
        if pager.next:
            parts.append(f'<a rel="next" href="{e(pager.next)}">Older &raquo;</a>')
        return f'<div class="{self.pager_class}">{" ".join(parts)}</div>'


# ------------------------------------------------------------------------------ table layout


class TableTheme(Theme):
    """A 2003-style page: layout tables, <font>, <br><br> between paragraphs."""

    name = "table"
    block_separator = "<br><br>\n"

    def page(self, chrome: Chrome, info: PageInfo, main: str) -> str:
        nav = "".join(
            f'<td class="{"navon" if x.href == info.current else "nav"}">'
            f'<a href="{e(x.href)}">{e(x.label)}</a></td>'
            for x in chrome.sections
        )
        popular = "".join(
            f'<tr><td class="mr"><a href="{e(x.href)}">{e(x.label)}</a></td></tr>'
            for x in chrome.popular
        )
        latest = "".join(f'<a href="{e(x.href)}">{e(x.label)}</a><br>' for x in chrome.latest)
        topics = " | ".join(f'<a href="{e(x.href)}">{e(x.label)}</a>' for x in chrome.tags)
        return f"""<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">
<html>
<head>
{self.head_html(chrome, info)}</head>
<body bgcolor="#ffffff" topmargin="0" leftmargin="0">
<table width="100%" border="0" cellpadding="0" cellspacing="0" class="masthead">
<tr><td class="logo"><a href="/"><img src="/img/logo.gif" width="320" height="60" border="0"
 alt="{e(chrome.site_title)}"></a></td>
<td class="tagline" align="right"><font size="1">{e(chrome.tagline)}</font><br>
<form action="/search" method="get"><input type="text" name="q" size="12">
<input type="submit" value="Search"></form></td></tr>
</table>
<table width="100%" border="0" cellpadding="3" cellspacing="0" class="navbar">
<tr><td class="nav"><a href="/">Front page</a></td>{nav}
<td class="nav"><a href="{e(chrome.search)}">Search</a></td></tr>
</table>
<table width="100%" border="0" cellpadding="6" cellspacing="0" class="layout">
<tr>
<td width="170" valign="top" class="leftcol" bgcolor="#eeeeee">
<table width="100%" class="box"><tr><td class="boxhead"><b>Most read</b></td></tr>
{popular}</table>
<br><font size="1"><b>Topics:</b> {topics}</font>
</td>
<td valign="top" class="maincol">
{main}
</td>
<td width="200" valign="top" class="rightcol">
<table width="100%" class="box"><tr><td class="boxhead"><b>Latest news</b></td></tr>
<tr><td class="latest"><font size="2">{latest}</font></td></tr></table>
<br><table width="100%" class="box"><tr><td class="boxhead"><b>Classifieds</b></td></tr>
<tr><td><font size="1">Boat moorings to let. Second-hand furniture wanted.
<a href="{e(chrome.about)}">Advertise with us</a></font></td></tr></table>
</td>
</tr>
</table>
<table width="100%" border="0" cellpadding="4" cellspacing="0" class="footer" bgcolor="#333333">
<tr><td align="center"><font size="1" color="#ffffff">&copy; {chrome.year} {e(chrome.site_title)}.
All rights reserved. | <a href="{e(chrome.about)}">About us</a> |
<a href="{e(chrome.private)}">Staff login</a> |
<a href="{BASE}{chrome.feed.href}">RSS</a></font></td></tr>
</table>
</body>
</html>
"""

    def block(self, block: Block, link: Link | None) -> str:
        if block.kind == "h2":
            return f"<b>{e(block.text)}</b>"
        if block.kind == "ul":
            return "".join(f"&middot; {e(item)}<br>" for item in block.items)
        if block.kind == "p":
            return paragraph_html(block.text, link)
        return block_html(block, link)

    def block_markdown(self, block: Block) -> str:
        if block.kind == "h2":
            return f"**{block.text}**"
        if block.kind == "ul":
            return "  \n".join(f"\u00b7 {item}" for item in block.items)
        return block_markdown(block)

    def comment(self, comment: Comment) -> str:
        return (
            f'<tr><td class="chead"><b>{e(comment.author)}</b> wrote on '
            f"{comment.posted:%m/%d/%Y %H:%M}:</td></tr>"
            f'<tr><td class="cbody"><font size="2">{e(comment.text)}</font></td></tr>'
        )

    def comment_box(self, story: StoryView, comments: str) -> str:
        return (
            f'<table width="100%" class="comments"><tr><td class="boxhead">'
            f"<b>Reader comments ({len(story.comments)})</b></td></tr>{comments}</table>"
        )

    def article(self, story: StoryView, related: tuple[Link, ...]) -> str:
        related_rows = "".join(
            f'<tr><td>&raquo; <a href="{e(x.href)}">{e(x.label)}</a></td></tr>' for x in related
        )
        date = f"{story.published:%A, %B} {story.published.day}, {story.published.year}"
        return f"""<font class="kicker" size="1" color="#990000">
<a href="{e(story.section.href)}">{e(story.section.label.upper())}</a></font>
<h1 class="headline"><font face="Georgia">{e(story.title)}</font></h1>
<font size="2" class="byline">By <b>{e(story.author)}</b>, Staff Writer<br>{date}</font>
<table width="100%" border="0" cellpadding="0" cellspacing="0" class="story">
<tr><td class="storytext"><font size="3">
{self.body(story)}
</font></td></tr>
</table>
<br>
<table width="100%" class="related" bgcolor="#f4f4f4">
<tr><td class="boxhead"><b>Related stories</b></td></tr>
{related_rows}</table>
<br>
{self.comments(story)}
"""

    def teaser(self, story: StoryView) -> str:
        return (
            f'<tr><td class="teaser"><a href="{e(story.path)}"><b>{e(story.title)}</b></a><br>'
            f'<font size="1">{story.published:%m/%d/%Y} - {e(story.author)}</font><br>'
            f'<font size="2">{e(story.summary)}</font></td></tr>'
        )

    def listing_frame(self, heading: str, intro: str, teasers: str) -> str:
        return (
            f'<h2 class="sectionhead">{e(heading)}</h2><font size="2">{e(intro)}</font>'
            f'<table width="100%" class="teasers" cellpadding="4">{teasers}</table>'
        )


# ------------------------------------------------------------------------------ div layout


class DivTheme(Theme):
    """A 2012-style page: nested divs with grid class names, sidebar widgets."""

    name = "div"
    title_separator = " | "
    pager_class = "pagination"

    def page(self, chrome: Chrome, info: PageInfo, main: str) -> str:
        nav = "".join(
            f'<li class="menu-item{" active" if x.href == info.current else ""}">'
            f'<a href="{e(x.href)}">{e(x.label)}</a></li>'
            for x in chrome.sections
        )
        popular = "".join(
            f'<div class="widget-item"><span class="rank">{i}</span>'
            f'<a href="{e(x.href)}">{e(x.label)}</a></div>'
            for i, x in enumerate(chrome.popular, 1)
        )
        return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta name="viewport" content="width=device-width, initial-scale=1">
{self.head_html(chrome, info)}
<script>window.dataLayer = window.dataLayer || [];</script>
</head>
<body class="site-courier">
<div id="wrapper">
<div id="top-bar"><div class="container"><span class="today">{e(chrome.tagline)}</span>
<a class="login" href="{e(chrome.private)}">Newsroom login</a></div></div>
<div id="header" class="container"><div class="brand"><a href="/" class="logo">
{e(chrome.site_title)}</a></div>
<div class="search-box"><form action="/search"><input name="q" placeholder="Search">
</form><a href="{e(chrome.search)}">Advanced search</a></div></div>
<div id="main-nav"><div class="container"><ul class="menu"><li class="menu-item">
<a href="/">Home</a></li>{nav}</ul></div></div>
<div id="content" class="container">
<div class="row">
<div class="col-main col-8">
{main}
</div>
<div class="col-side col-4">
<div class="widget widget-popular"><div class="widget-title">Most popular</div>
{popular}</div>
<div class="widget widget-latest"><div class="widget-title">Just in</div>
{links_ul(chrome.latest, "widget-list")}</div>
<div class="widget widget-ad"><div class="ad-label">Advertisement</div>
<div class="ad-slot" data-slot="side-1"></div></div>
<div class="widget widget-tags"><div class="widget-title">Trending topics</div>
{links_ul(chrome.tags, "tag-cloud")}</div>
</div>
</div>
</div>
<div id="footer"><div class="container">
<div class="footer-col"><div class="footer-title">Sections</div>{links_ul(chrome.sections)}</div>
<div class="footer-col"><div class="footer-title">The Courier</div>
<ul><li><a href="{e(chrome.about)}">About us</a></li>
<li><a href="{BASE}{chrome.feed.href}">RSS feed</a></li>
<li><a href="{e(chrome.private)}">Staff area</a></li></ul></div>
<div class="copyright">Copyright {chrome.year} {e(chrome.site_title)} Media Ltd.</div>
</div></div>
</div>
</body>
</html>
"""

    def block(self, block: Block, link: Link | None) -> str:
        if block.kind == "h2":
            return f'<h3 class="story-subhead">{e(block.text)}</h3>'
        return super().block(block, link)

    def block_markdown(self, block: Block) -> str:
        return block_markdown(block, "###")

    def inline_boxes(self, story: StoryView) -> list[str]:
        if not story.read_also:
            return []
        return [
            '<div class="inline-related"><span class="label">Read also</span>'
            f"{links_ul(story.read_also)}</div>"
        ]

    def comment(self, comment: Comment) -> str:
        return (
            f'<div class="comment"><div class="comment-meta"><span class="comment-author">'
            f'{e(comment.author)}</span> <span class="comment-date">'
            f"{comment.posted:%d.%m.%Y, %H:%M}</span></div>"
            f'<div class="comment-text">{e(comment.text)}</div></div>'
        )

    def comment_box(self, story: StoryView, comments: str) -> str:
        return (
            f'<div id="comments" class="comments"><div class="comments-title">'
            f"{len(story.comments)} comments</div>{comments}</div>"
        )

    def article(self, story: StoryView, related: tuple[Link, ...]) -> str:
        tags = " ".join(f'<a class="tag" href="{e(t.href)}">{e(t.label)}</a>' for t in story.tags)
        return f"""<div class="breadcrumb"><a href="/">Home</a> &rsaquo;
<a href="{e(story.section.href)}">{e(story.section.label)}</a></div>
<div class="story">
<div class="story-header">
<h1 class="story-title">{e(story.title)}</h1>
<div class="story-meta"><span class="author">{e(story.author)}</span>
<span class="date">{story.published:%d.%m.%Y, %H:%M}</span></div>
<div class="share-bar"><a href="#">Share</a> <a href="#">Email</a> <a href="#">Print</a></div>
</div>
<div class="story-body">
{self.body(story)}
</div>
<div class="story-tags">Topics: {tags}</div>
</div>
<div class="related-box"><div class="related-title">More on this story</div>
{links_ul(related, "related-list")}</div>
{self.comments(story)}
"""

    def teaser(self, story: StoryView) -> str:
        return (
            f'<div class="card"><div class="card-section">{e(story.section.label)}</div>'
            f'<h2 class="card-title"><a href="{e(story.path)}">{e(story.title)}</a></h2>'
            f'<div class="card-teaser">{e(story.summary)}</div>'
            f'<div class="card-meta">{e(story.author)} &middot; {story.published:%d.%m.%Y}'
            "</div></div>"
        )

    def listing_frame(self, heading: str, intro: str, teasers: str) -> str:
        return (
            f'<div class="section-header"><h1>{e(heading)}</h1>'
            f'<div class="section-intro">{e(intro)}</div></div>'
            f'<div class="card-list">{teasers}</div>'
        )


# ------------------------------------------------------------------------------ HTML5 blog


class Html5Theme(Theme):
    """A 2020-style blog: header/nav/main/article/aside/footer, <time>, comment list."""

    name = "html5"
    title_separator = " — "
    pager_class = "nav-links"

    def page(self, chrome: Chrome, info: PageInfo, main: str) -> str:
        nav = "".join(
            f'<a href="{e(x.href)}"{" aria-current=page" if x.href == info.current else ""}>'
            f"{e(x.label)}</a>"
            for x in chrome.sections
        )
        return f"""<!doctype html>
<html lang="en-GB">
<head>
<meta charset="{info.charset}">
<meta name="viewport" content="width=device-width">
{self.head_html(chrome, info)}</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
<p class="site-title"><a href="/" rel="home">{e(chrome.site_title)}</a></p>
<p class="site-description">{e(chrome.tagline)}</p>
<nav class="primary-menu" aria-label="Categories"><a href="/">Home</a>{nav}
<a href="{e(chrome.about)}">About</a></nav>
</header>
<div class="site-content">
<main id="main" class="content-area">
{main}
</main>
<aside class="widget-area" role="complementary">
<section class="widget widget_search"><form role="search" action="/search">
<label>Search <input type="search" name="q"></label></form>
<a href="{e(chrome.search)}">Search tips</a></section>
<section class="widget widget_recent_entries"><h2 class="widget-title">Recent posts</h2>
{links_ul(chrome.latest)}</section>
<section class="widget widget_top_posts"><h2 class="widget-title">Readers' favourites</h2>
{links_ul(chrome.popular)}</section>
<section class="widget widget_tag_cloud"><h2 class="widget-title">Tags</h2>
<div class="tagcloud">{" ".join(f'<a href="{e(t.href)}">{e(t.label)}</a>' for t in chrome.tags)}
</div></section>
</aside>
</div>
<footer class="site-footer">
<p>{e(chrome.site_title)} &copy; {chrome.year}. Written by hand, mostly in the evenings.</p>
<p><a href="{BASE}{chrome.feed.href}">Subscribe (Atom)</a> ·
<a href="{e(chrome.private)}">Drafts</a> · <a href="{e(chrome.about)}">About</a></p>
</footer>
</body>
</html>
"""

    def comment(self, comment: Comment) -> str:
        return (
            f'<li class="comment"><article class="comment-body"><footer class="comment-meta">'
            f'<b class="fn">{e(comment.author)}</b> <span class="says">says:</span> '
            f'<time datetime="{comment.posted.isoformat()}">{_long_date(comment.posted)} at '
            f"{comment.posted:%H:%M}</time></footer>"
            f'<div class="comment-content"><p>{e(comment.text)}</p></div>'
            f'<a class="reply" href="#respond">Reply</a></article></li>'
        )

    def comment_box(self, story: StoryView, comments: str) -> str:
        return (
            f'<section id="comments" class="comments-area"><h2 class="comments-title">'
            f"{len(story.comments)} thoughts on “{e(story.title)}”</h2>"
            f'<ol class="comment-list">{comments}</ol></section>'
        )

    def article(self, story: StoryView, related: tuple[Link, ...]) -> str:
        tags = ", ".join(f'<a href="{e(t.href)}" rel="tag">{e(t.label)}</a>' for t in story.tags)
        return f"""<article class="post hentry">
<header class="entry-header">
<h1 class="entry-title">{e(story.title)}</h1>
<div class="entry-meta">Posted on <time class="published" datetime="{story.published.isoformat()}">
{_long_date(story.published)}</time> by <a rel="author" href="/about/">{e(story.author)}</a>
in <a href="{e(story.section.href)}" rel="category">{e(story.section.label)}</a></div>
</header>
<div class="entry-content">
{self.body(story)}
</div>
<footer class="entry-footer">Tagged {tags}</footer>
</article>
<nav class="related-posts" aria-label="Related posts"><h2>You might also like</h2>
{links_ul(related)}</nav>
{self.comments(story)}
"""

    def teaser(self, story: StoryView) -> str:
        return (
            f'<article class="post excerpt"><h2 class="entry-title"><a href="{e(story.path)}" '
            f'rel="bookmark">{e(story.title)}</a></h2>'
            f'<time datetime="{story.published.isoformat()}">{_long_date(story.published)}</time>'
            f'<div class="entry-summary"><p>{e(story.summary)}</p></div>'
            f'<a class="more-link" href="{e(story.path)}">Continue reading</a></article>'
        )

    def listing_frame(self, heading: str, intro: str, teasers: str) -> str:
        return (
            f'<header class="page-header"><h1 class="page-title">{e(heading)}</h1>'
            f'<p class="archive-description">{e(intro)}</p></header>{teasers}'
        )


def _long_date(moment: datetime) -> str:
    return f"{moment:%B} {moment.day}, {moment.year}"


THEMES: dict[str, Theme] = {t.name: t for t in (TableTheme(), DivTheme(), Html5Theme())}
