"""Compatibility path: the code lives in `newscrawl.site.site_pipeline`; settings and code
that name this path keep working."""

# relayout: compatibility module
from newscrawl.site.site_pipeline import (
    SitePassPipeline,
)

__all__ = [
    "SitePassPipeline",
]
