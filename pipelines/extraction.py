"""Run the configured page-level extractors on each page, inline, from the one parsed DOM.

Settings: NEWSCRAWL_EXTRACTORS (names, in order of preference), NEWSCRAWL_PRIMARY_EXTRACTOR
(whose text becomes `text`; default newscrawl's best), NEWSCRAWL_EXTRACTOR_CONFIG ({name:
{option: value}}), NEWSCRAWL_KEEP_ALL_TEXTS (also keep every extractor's text in `texts`),
NEWSCRAWL_EXTRACTOR_MAX_NODES ({name: elements}: a page with more elements skips that
extractor, recorded as `extract_budget`; the learned extractor's block features take about
9 KB a block, so a huge page goes to the next extractor instead), NEWSCRAWL_MARKDOWN (also
write the chosen text as Markdown, `markdown`; on by default), NEWSCRAWL_MARKDOWN_LINKS and
NEWSCRAWL_MARKDOWN_IMAGES (its links as [text](href), its images as ![alt](src); off by
default), NEWSCRAWL_COMMENTS (also write the page's comment thread, `comments`, apart from the
text; on by default).
Without NEWSCRAWL_KEEP_ALL_TEXTS the extractors after the primary are fallbacks, run only on
pages where the ones before them found no text - or could not run (over their node budget, or
raised). An extractor whose empty text is an answer (`empty_is_answer`: the learned extractor,
whose model found no main text on the page) is not second-guessed by the next one, so the
crawl writes what `newscrawl extract` and `reextract` give for the page.

In a crawl without the site pass (NEWSCRAWL_SITELEVEL off), each page is parsed, extracted and
flagged in the site pass's worker processes (`newscrawl.site.site_pool`, sized by
NEWSCRAWL_SITEPASS_WORKERS; 0: here, on the reactor thread), so a slow page never holds up the
crawl. A worker's death (killed, out of memory) fails every page in flight; each is tried
again in a worker of its own, one at a time (counted in the stats as
`newscrawl/extract/retried_alone`), and a page whose own worker dies too is written without
text, named in the summary (`extract_worker_lost`); the crawl goes on.

An extractor that is not installed is skipped with one warning. An extractor that raises on a
page leaves an `error` on the item, and the next extractor's text is used: a bad page never
stops the crawl.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from hashlib import blake2b
from typing import TYPE_CHECKING, Any

from newscrawl.crawl.checks import setting_list
from newscrawl.crawl.items import PageItem
from newscrawl.extractors import DEFAULT_EXTRACTOR, EXTRACTORS, Extraction, Extractor, get_extractor
from newscrawl.extractors.comments import page_comments
from newscrawl.extractors.markdown import MarkdownOptions, selection_pieces, with_markdown
from newscrawl.extractors.page_metadata import json_ld, ld_articles, page_metadata
from newscrawl.extractors.title import page_title
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError
from newscrawl.site.site_context import SiteContext, extract_in_site

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from newscrawl.site.site_job import SitePassResult
    from newscrawl.site.site_pool import SitePassPool

__all__ = [
    "ExtractionPipeline",
    "ExtractionSettings",
    "content_hash",
    "load_extractors",
    "markdown_options",
]

logger = logging.getLogger(__name__)


def _answered(extractor: Extractor, result: Extraction | None) -> bool:
    """Whether `result` settles the page: it has text, or the extractor's empty text is an
    answer (`empty_is_answer`) rather than a failure to find one."""
    if result is None:
        return False
    return bool(result) or bool(getattr(extractor, "empty_is_answer", False))


def content_hash(text: str) -> str:
    """blake2b-128 of the text, hex: equal texts (syndicated copies) share it."""
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def markdown_options(settings: Any) -> MarkdownOptions | None:
    """How the crawl renders Markdown (NEWSCRAWL_MARKDOWN_LINKS, NEWSCRAWL_MARKDOWN_IMAGES);
    None when NEWSCRAWL_MARKDOWN is off."""
    if not settings.getbool("NEWSCRAWL_MARKDOWN", True):
        return None
    return MarkdownOptions(
        settings.getbool("NEWSCRAWL_MARKDOWN_LINKS", False),
        settings.getbool("NEWSCRAWL_MARKDOWN_IMAGES", False),
    )


def load_extractors(names: list[str], config: dict[str, dict[str, Any]]) -> dict[str, Extractor]:
    """The extractors that can be built, by name; the others are logged and left out."""
    loaded: dict[str, Extractor] = {}
    for name in names:
        try:
            loaded[name] = get_extractor(name, **(config.get(name) or {}))
        except (ImportError, AttributeError, ValueError, TypeError) as err:
            logger.warning("extractor %r unavailable, skipped: %s", name, err)
    return loaded


@dataclass(frozen=True, slots=True)
class ExtractionSettings:
    """What builds an ExtractionPipeline again in another process (the site pass's workers):
    the extractors that loaded here, in order, with their config."""

    names: tuple[str, ...]
    config: dict[str, dict[str, Any]] = field(default_factory=dict)
    primary: str = ""
    keep_all: bool = False
    max_nodes: dict[str, int] = field(default_factory=dict)
    markdown: bool = True
    comments: bool = True
    links: bool = False  # the Markdown writes links as [text](href)
    images: bool = False  # the Markdown writes images as ![alt](src)

    def build(self) -> ExtractionPipeline:
        """A pipeline without a crawler: its error records are kept in `recorded`."""
        extractors = load_extractors(list(self.names), self.config)
        pipeline = ExtractionPipeline(None, extractors, self.primary, self.keep_all, self.max_nodes)
        pipeline.markdown = MarkdownOptions(self.links, self.images) if self.markdown else None
        pipeline.comments = self.comments
        return pipeline


class ExtractionPipeline:
    """Fill title, text, extractor, texts, node ids and page metadata of each PageItem.

    Without a crawler (a site pass worker process) the errors it would record for the crawl
    summary are kept in `recorded` as (kind, url, detail), for the crawl process to record."""

    def __init__(
        self,
        crawler: Crawler | None,
        extractors: dict[str, Extractor],
        primary: str,
        keep_all: bool,
        max_nodes: dict[str, int] | None = None,
        config: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.crawler = crawler
        self.extractors = extractors
        self.primary = primary
        self.keep_all = keep_all
        self.order = [primary, *(n for n in extractors if n != primary)] if primary else []
        self.max_nodes = max_nodes or {}  # {extractor: elements}: bigger pages skip it
        self.config = config or {}
        self.recorded: list[tuple[str, str, str]] = []
        self.workers = 0  # worker processes for the pages (set by from_crawler)
        self.pool: SitePassPool | None = None
        # time in the extractors of this process, that a benchmark can set beside the whole run's
        self.extract_seconds = 0.0
        # the chosen text's Markdown is rendered with these options (None: NEWSCRAWL_MARKDOWN off)
        self.markdown: MarkdownOptions | None = MarkdownOptions()
        self.comments = True  # NEWSCRAWL_COMMENTS

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ExtractionPipeline:
        settings = crawler.settings
        names = setting_list(settings, "NEWSCRAWL_EXTRACTORS") or list(EXTRACTORS)
        extractors = load_extractors(names, settings.getdict("NEWSCRAWL_EXTRACTOR_CONFIG"))
        primary = settings.get("NEWSCRAWL_PRIMARY_EXTRACTOR") or DEFAULT_EXTRACTOR
        if primary not in extractors:
            fallback = next(iter(extractors), "")
            if fallback:
                logger.warning("primary extractor %r unavailable; using %r", primary, fallback)
            else:
                logger.warning("no extractor available: pages get titles but no text")
            primary = fallback
        logger.info("extractors: %s (primary %s)", ", ".join(extractors) or "none", primary)
        budgets = settings.getdict("NEWSCRAWL_EXTRACTOR_MAX_NODES")
        max_nodes = {name: int(n) for name, n in budgets.items() if n}
        keep_all = settings.getbool("NEWSCRAWL_KEEP_ALL_TEXTS")
        config = settings.getdict("NEWSCRAWL_EXTRACTOR_CONFIG")
        pipeline = cls(crawler, extractors, primary, keep_all, max_nodes, config)
        pipeline.markdown = markdown_options(settings)
        pipeline.comments = settings.getbool("NEWSCRAWL_COMMENTS", True)
        if not settings.getbool("NEWSCRAWL_SITELEVEL", True):  # else the site pass extracts
            from newscrawl.site.site_pool import pool_size

            pipeline.workers = pool_size(settings.getint("NEWSCRAWL_SITEPASS_WORKERS", -1))
        return pipeline

    def open_spider(self) -> None:
        if not self.workers or self.crawler is None:
            return
        from twisted.internet import threads

        from newscrawl.site.site_job import PassSettings, log_level
        from newscrawl.site.site_pool import SitePassPool

        level = log_level(self.crawler.settings["LOG_LEVEL"])
        self.pool = SitePassPool(self.workers, PassSettings(self.settings(), level))
        started = threads.deferToThread(self.pool.start)  # the first waits for the forkserver
        started.addErrback(lambda f: logger.warning("extraction workers: %s", f.value))

    def close_spider(self) -> None:
        if self.pool is not None:
            self.pool.close()
            self.pool = None

    def settings(self) -> ExtractionSettings:
        """This pipeline's extractors and options, to build it again in another process."""
        config = {name: dict(self.config.get(name) or {}) for name in self.extractors}
        return ExtractionSettings(
            tuple(self.extractors),
            config,
            self.primary,
            self.keep_all,
            dict(self.max_nodes),
            self.markdown is not None,
            self.comments,
            self.markdown is not None and self.markdown.links,
            self.markdown is not None and self.markdown.images,
        )

    async def process_item(self, item: Any) -> Any:
        if not isinstance(item, PageItem) or item.stored or item.deferred:
            # a stored page replayed on resume is there for its links and DOM; a deferred one
            # is extracted by its site's site pass
            return item
        if self.pool is None:
            return self.fill(item)
        return await self._in_worker(item)

    async def _in_worker(self, item: PageItem) -> PageItem:
        """`fill` and the article flag of `item` in a worker process; when the pool broke (a
        worker died), once more in a worker of its own; no text when that one died too."""
        from newscrawl.site.site_job import PageJob
        from newscrawl.site.site_store import pass_page

        assert self.pool is not None

        def died(attempt: int) -> None:
            if attempt == 1:  # a death breaks every page in flight: not this page's fault
                logger.info("extraction of %s: a worker died; tried again alone", item.final_url)
                self._stats().inc_value("newscrawl/extract/retried_alone")

        result = await self.pool.run_twice(PageJob(pass_page(item), item.site), died)
        if result is not None:
            self._apply(item, result)
            return item
        # its own worker died: the page is written without text, and the summary names it
        logger.warning("extraction of %s: its worker died again; no text", item.final_url)
        self._record("extract_worker_lost", item.final_url, "its worker died twice: no text")
        item.stage = "page"
        item.error = "extraction: its worker process died twice"
        return item

    def _stats(self) -> Any:
        assert self.crawler is not None and self.crawler.stats is not None
        return self.crawler.stats

    def _apply(self, item: PageItem, result: SitePassResult) -> None:
        for name, level, message in result.logs:
            logging.getLogger(name).log(level, "%s", message)
        for kind, url, detail in result.recorded:
            self._record(kind, url, detail)
        result.pages[0].apply(item)

    def fill(self, item: PageItem, context: SiteContext | None = None) -> PageItem:
        """The page-level extraction and metadata of `item` (parsed here if it has no DOM).
        `context`: its site's template, for the extractors that read one (the site pass knows
        it; a page extracted alone has none)."""
        dom = item.dom
        if dom is None:
            try:
                dom = item.dom = parse_html(item.html, item.final_url, item.content_type)
            except PageError as err:
                item.error = f"parse: {err}"
                return item
        item.stage = "page"
        item.encoding, item.encoding_source = dom.encoding, dom.encoding_source
        started = time.perf_counter()
        results, errors = self._extract(dom, context)
        self.extract_seconds += time.perf_counter() - started
        # the first in order with text, or whose empty text is its answer (`_answered`)
        chosen = next(
            (results[n] for n in self.order if _answered(self.extractors[n], results.get(n))), None
        )
        if chosen is None:  # no extractor could run, or none found text
            chosen = Extraction.empty("")
        chosen = self._with_markdown(dom, chosen)
        item.title = chosen.title or page_title(dom)
        item.text = chosen.text
        item.markdown = chosen.markdown
        item.comments = self._comments(dom, chosen) if self.comments else None
        item.extractor = chosen.extractor
        item.page_type = chosen.page_type
        item.node_ids = chosen.node_ids
        if self.keep_all:
            item.texts = {name: result.text for name, result in results.items()}
        item.content_hash = content_hash(item.text)
        item.error = "; ".join(errors) or None
        self._metadata(item, dom)
        return item

    def _with_markdown(self, dom: Dom, chosen: Extraction) -> Extraction:
        """`chosen` with its Markdown when asked for; a renderer bug costs the page its
        Markdown (an empty one), never its text."""
        try:
            return with_markdown(dom, chosen, self.markdown)
        except Exception as err:
            logger.warning("markdown of %s failed: %s", dom.url, err)
            return Extraction(chosen.title, chosen.text, chosen.node_ids, chosen.extractor,
                              chosen.pieces, "")  # fmt: skip

    def _comments(self, dom: Dom, chosen: Extraction) -> str:
        """The page's comment thread without the chosen text; "" when it has none (or its
        detection failed: the page keeps its text)."""
        try:
            return page_comments(dom, selection_pieces(dom, chosen)[0])
        except Exception as err:
            logger.warning("comments of %s failed: %s", dom.url, err)
            return ""

    def _extract(
        self, dom: Dom, context: SiteContext | None = None
    ) -> tuple[dict[str, Extraction], list[str]]:
        results: dict[str, Extraction] = {}
        errors: list[str] = []
        for name in self.order:
            if len(dom.tag) > self.max_nodes.get(name, len(dom.tag)):
                detail = f"{len(dom.tag):,} elements: {name} skipped"
                self._record("extract_budget", dom.url or "", detail)
                continue
            try:
                results[name] = extract_in_site(self.extractors[name], dom, context)
            except Exception as err:  # one extractor's bug must not cost the page
                errors.append(f"{name}: {type(err).__name__}: {err}")
                self._record("extract_error", dom.url or "", errors[-1])
            if _answered(self.extractors[name], results.get(name)) and not self.keep_all:
                break  # the later extractors are fallbacks: not needed once one answered
        return results, errors

    def _record(self, kind: str, url: str, detail: str) -> None:
        if self.crawler is None:
            self.recorded.append((kind, url, detail))
        else:  # imported here: a site pass worker, which has no crawler, never loads Scrapy
            from newscrawl.crawl.errors import record

            record(self.crawler, kind, url, "", detail)

    def _metadata(self, item: PageItem, dom: Dom) -> None:
        try:
            ld = json_ld(dom)
            found = page_metadata(dom, item.final_url, item.headers.get("content-language"), ld)
            item.published, item.extras["dated"] = found.published, found.dated
            item.language, item.author = found.language, found.author
            item.extras["ld_article"] = bool(ld_articles(ld))
        except Exception as err:  # metadata is a bonus; never lose the page over it
            logger.warning("metadata of %s failed: %s", item.final_url, err)
