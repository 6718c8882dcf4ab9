"""newscrawl: turn news and blog sites into clean article corpora.

The Python API (docs/python.md)::

    import newscrawl

    article = newscrawl.extract(html, url="https://example.com/a")  # one page
    articles = newscrawl.extract_site(pages)  # one site's (url, html) pages, with the site pass
    summary = newscrawl.crawl(["https://example.com/"], "out")  # a crawl, in its own process
    table = newscrawl.read_articles("out")  # what it wrote, as a pyarrow Table

Everything else in the package is internal and may change. Importing newscrawl is cheap: the
heavy libraries load on the first call that needs them.
"""

from newscrawl._api import Article, CrawlSummary, crawl, extract, extract_site, read_articles
from newscrawl._version import __version__

__all__ = [
    "Article",
    "CrawlSummary",
    "__version__",
    "crawl",
    "extract",
    "extract_site",
    "read_articles",
]
