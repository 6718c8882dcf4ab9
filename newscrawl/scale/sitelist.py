"""What `newscrawl enqueue` puts on the queue: the sites of site lists, one payload each (the
worker's spider reads it back, `newscrawl.scale.worker_spider`). No Redis needed here."""

from __future__ import annotations

import json
import sys
from typing import Any

__all__ = ["read_site_specs", "site_payload"]


def read_site_specs(sources: list[str]) -> list[Any]:
    """`SiteSpec`s from site-list files, URLs, or stdin (`-`); raises SiteListError."""
    from newscrawl.crawl.discovery.site_lists import parse_sites, read_sites

    specs: list[Any] = []
    for source in sources:
        if source == "-":
            specs.extend(parse_sites(sys.stdin.read(), "<stdin>"))
        else:
            specs.extend(read_sites(source))
    return specs


def site_payload(spec: Any) -> str:
    """What a worker needs to crawl the site, as the queue stores it."""
    return json.dumps({"name": spec.name, "url": spec.url, "max_pages": spec.max_pages})
