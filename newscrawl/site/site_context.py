"""A page's site context: what the other pages of its site teach an extractor.

Extraction is a pure function of a page and an explicit context. An extractor that reads its
site's template declares it (`uses_site_template`) and which site method learns it
(`site_method`: "sitelevel", the default, or "sst", "pagelets", "entropy"). Whoever knows how
pages group into sites - the crawl's site pass, `newscrawl extract` and `evaluate` with
`--site-from`, the training set - learns the context once from the site's pages
(`learn_site`) and hands it to every page of the site (`extract_in_site`). No extractor learns
anything from the pages it has seen, so its output never depends on the order of the input or
on which worker got which page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from newscrawl.extractors.extractor_base import Extraction, Extractor
from newscrawl.html.dom import Dom
from newscrawl.html.tree import PageError
from newscrawl.site.site_template import MAX_TEMPLATE_PAGES, TemplateHashes, pages_template
from newscrawl.template.sitelevel import PageParser, RawPage, SiteLevelConfig, parse_raw
from newscrawl.template.sitemethods import DEFAULT_SITE_METHOD, SiteMethod, new_site_method

__all__ = [
    "SiteContext",
    "SiteTemplate",
    "extract_in_site",
    "learn_site",
    "site_method_of",
    "site_methods",
    "uses_site_template",
]

# SiteLevel's template hashes, or another method's state fitted on the site's pages.
SiteTemplate = TemplateHashes | SiteMethod


@dataclass(frozen=True, slots=True)
class SiteContext:
    """A site's template by each site method the extractors at hand read."""

    templates: Mapping[str, SiteTemplate] = field(default_factory=dict)

    def template(self, method: str = DEFAULT_SITE_METHOD) -> SiteTemplate | None:
        return self.templates.get(method)


def uses_site_template(extractor: object) -> bool:
    """Whether `extractor.extract` takes a `template` (its site's, `learn_site`)."""
    return bool(getattr(extractor, "uses_site_template", False))


def site_method_of(extractor: object) -> str:
    """The site method whose template `extractor` reads (SiteLevel unless it says otherwise)."""
    return str(getattr(extractor, "site_method", DEFAULT_SITE_METHOD))


def site_methods(extractors: Iterable[object]) -> set[str]:
    """The site methods the extractors that read a site's template need."""
    return {site_method_of(e) for e in extractors if uses_site_template(e)}


def learn_site(
    pages: Sequence[RawPage], methods: Iterable[str], parse: PageParser = parse_raw
) -> SiteContext | None:
    """The site's template by each of `methods`, learnt from its pages (at most
    `MAX_TEMPLATE_PAGES`; pages that cannot be parsed are left out); None when no method
    learnt anything (no method asked for, or too few pages). `parse`: how a page becomes its
    Dom (the site pass keeps the Doms for its own pass)."""
    templates: dict[str, SiteTemplate] = {}
    for method in sorted(set(methods)):
        if method == DEFAULT_SITE_METHOD:
            learnt: SiteTemplate | None = pages_template(pages, parse=parse)
        else:
            learnt = _fit(pages, method, parse)
        if learnt is not None:
            templates[method] = learnt
    return SiteContext(templates) if templates else None


def _fit(pages: Sequence[RawPage], method: str, parse: PageParser) -> SiteMethod | None:
    """Another site method's state fitted on the site's pages; None under SiteLevel's minimum
    of pages (every method needs a few pages to tell template from content)."""
    if len(pages) < SiteLevelConfig().min_pages:
        return None
    state = new_site_method(method)
    for page in pages[:MAX_TEMPLATE_PAGES]:
        try:
            state.add(parse(page))
        except PageError:
            continue
    return state if len(state) >= SiteLevelConfig().min_pages else None


def extract_in_site(extractor: Extractor, dom: Dom, context: SiteContext | None) -> Extraction:
    """`extractor.extract(dom)`, handing it its site's template when it reads one and the
    site has one."""
    template = context.template(site_method_of(extractor)) if context is not None else None
    if template is not None and uses_site_template(extractor):
        return extractor.extract(dom, template=template)  # type: ignore[call-arg]
    return extractor.extract(dom)
