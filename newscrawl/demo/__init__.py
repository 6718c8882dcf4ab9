"""The bundled demo web: generated news sites and a blog with exact gold text, a threaded server
that gives each site its own 127.0.0.x host, and a fault site for crawler robustness tests.

    from newscrawl.demo import DemoServer, build_demo_web

    with DemoServer(build_demo_web(seed=4), faults=True) as server:
        server.site_urls  # {"harbor-gazette": "http://127.0.0.1:PORT", ...}
        server.gold()     # {absolute article URL: DemoArticle}
"""

from newscrawl.demo.server import DemoServer, Request
from newscrawl.demo.web import DemoArticle, DemoPage, DemoSite, DemoWeb, build_demo_web

__all__ = [
    "DemoArticle",
    "DemoPage",
    "DemoServer",
    "DemoSite",
    "DemoWeb",
    "Request",
    "build_demo_web",
]
