"""Score extractors on one dataset: parse each page once, time parsing and each extractor apart.

Speed is measured in this one process, as the crawl runs it: ``pages/s`` of an extractor is the
number of pages over (time to parse them all + time the extractor spent on them), so parsing is
included, and the parse time alone is reported beside it. A page that cannot be parsed, or on
which an extractor raises, does not stop the run: it is scored as empty output and counted, so a
report can show how often that happened (the extractors are meant never to raise).

Pages are grouped into sites (`newscrawl.evaluation.site_groups`, the --site-from option) and each
page's site is handed to the extractors (`Dom.site`). Pages are processed site by site, each site
in id order; with ``jobs`` > 1 whole sites go to worker processes that build their own
extractors, and every figure but the timings is the same for every number of jobs. The timings
stay per-process speed: the seconds of all workers are added up.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from newscrawl.evaluation.site_groups import (
    HEAD_BYTES,
    SiteError,
    in_order,
    keeps_site_state,
    run_tasks,
    site_for,
    site_tasks,
)
from newscrawl.evaluation.snippets import SnippetCounts, snippet_counts
from newscrawl.extractors.extractor_base import Extractor, error_text
from newscrawl.gold.dataset import Dataset
from newscrawl.gold.metric import (
    PageScore,
    Scores,
    aggregate,
    score_page,
    score_tokens,
    word_f1,
)
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError
from newscrawl.site.site_context import SiteContext, extract_in_site, learn_site, site_methods
from newscrawl.site.site_template import MAX_TEMPLATE_PAGES
from newscrawl.template.sitelevel import RawPage

__all__ = [
    "DatasetResult",
    "ExtractorResult",
    "dataset_sites",
    "evaluate_dataset",
    "group_value",
    "site_mode",
]

# Builds a fresh set of extractors (name -> extractor); run in each worker process.
ExtractorFactory = Callable[[], Mapping[str, Extractor]]


@dataclass(slots=True)
class ExtractorResult:
    """Per-page scores and timing of one extractor on one dataset."""

    name: str
    shingle: list[PageScore] = field(default_factory=list)
    token: list[PageScore] = field(default_factory=list)
    word: list[float] = field(default_factory=list)  # per page WCXB word-bag F1 (`word_f1`)
    errors: dict[str, str] = field(default_factory=dict)  # page id -> "ExcType: message"
    seconds: float = 0.0  # time inside extract() only
    snippets: list[SnippetCounts] = field(default_factory=list)  # per page (`snippets.py`)

    @property
    def shingle_scores(self) -> Scores:
        return aggregate(self.shingle)

    @property
    def token_scores(self) -> Scores:
        return aggregate(self.token)

    @property
    def word_f1(self) -> float:
        """WCXB's figure: the mean over pages of the per-page word-bag F1 (0 for no pages)."""
        return sum(self.word) / len(self.word) if self.word else 0.0


@dataclass(slots=True)
class DatasetResult:
    """Everything measured on one dataset."""

    name: str
    path: str
    page_ids: list[str] = field(default_factory=list)
    skipped: int = 0  # pages without gold
    gold_only: list[str] = field(default_factory=list)  # gold files without a page
    bad_meta_lines: int = 0  # meta.jsonl lines that are not JSON objects with an id
    parse_errors: dict[str, str] = field(default_factory=dict)
    parse_seconds: float = 0.0
    extractors: dict[str, ExtractorResult] = field(default_factory=dict)
    # per page, its meta.jsonl value of the field results are grouped by (`group_by`)
    groups: list[str] = field(default_factory=list)

    @property
    def pages(self) -> int:
        return len(self.page_ids)

    def pages_per_second(self, extractor: str | None = None) -> float:
        """Pages/s of parsing alone (`extractor` None) or of parse + that extractor."""
        seconds = self.parse_seconds
        if extractor is not None:
            seconds += self.extractors[extractor].seconds
        return self.pages / seconds if seconds > 0 else 0.0


def _parse(
    html: bytes, url: str | None, site: str | None = None
) -> tuple[Dom | None, str | None, float]:
    start = time.perf_counter()
    try:
        dom = parse_html(html, url=url, site=site)
    except PageError as err:
        return None, str(err), time.perf_counter() - start
    return dom, None, time.perf_counter() - start


def _run_extractor(
    extractor: Extractor, dom: Dom, context: SiteContext | None = None
) -> tuple[str, str | None, float]:
    """Extracted text, error text (None when fine) and seconds spent. `context`: the page's
    site template(s), given to the extractors that read one."""
    start = time.perf_counter()
    try:
        text = extract_in_site(extractor, dom, context).text
    except Exception as err:  # an extractor bug must not end the evaluation
        return "", error_text(err), time.perf_counter() - start
    return text, None, time.perf_counter() - start


def site_mode(requested: str | None, dataset: Dataset) -> str:
    """The --site-from mode for `dataset`: as requested, or by default "meta" when the dataset
    has a meta.jsonl, else "url". Raises `SiteError` for "meta" on a dataset without one."""
    if requested is None:
        return "meta" if dataset.has_meta else "url"
    if requested == "meta" and not dataset.has_meta:
        raise SiteError(
            f"--site-from meta: {dataset.path} has no meta.jsonl; use --site-from url, dir or none"
        )
    return requested


def dataset_sites(dataset: Dataset, mode: str) -> list[str]:
    """The site of every scorable page of `dataset` (in id order) under `mode`; "" for none.
    `dir` makes the whole dataset one site (its pages all sit in html/): the dataset's name."""
    return [
        site_for(
            mode,
            meta=dataset.meta.get(page_id, {}),
            folder=dataset.name,
            head=functools.partial(dataset.head, page_id, HEAD_BYTES),
        )
        for page_id in dataset.ids
    ]


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What one page gave: parse error and time, and per extractor (in order) the shingle and
    token scores, word-bag F1, error, seconds and snippet checks."""

    parse_error: str | None
    parse_seconds: float
    scores: tuple[tuple[PageScore, PageScore, float, str | None, float, SnippetCounts], ...]


def _page_url(meta: Mapping[str, object]) -> str | None:
    url = meta.get("url")
    return url if isinstance(url, str) else None


def _score(
    dataset: Dataset,
    page_id: str,
    site: str,
    extractors: Mapping[str, Extractor],
    context: SiteContext | None = None,
) -> _Outcome:
    page = dataset.page(page_id)
    dom, parse_error, parse_seconds = _parse(page.html, _page_url(page.meta), site)
    scores = []
    for extractor in extractors.values():
        if dom is None:
            text, error, seconds = "", None, 0.0
        else:
            text, error, seconds = _run_extractor(extractor, dom, context)
        checks = snippet_counts(text, page.meta)
        shingle, token = score_page(page.gold, text), score_tokens(page.gold, text)
        scores.append((shingle, token, word_f1(page.gold, text), error, seconds, checks))
    return _Outcome(parse_error, parse_seconds, tuple(scores))


# Set in each process before tasks run (see `evaluate_dataset`).
_state: tuple[Dataset, list[str], Mapping[str, Extractor]] | None = None


def _init_worker(dataset: Dataset, sites: list[str], factory: ExtractorFactory) -> None:
    global _state
    _state = (dataset, sites, factory())


def _work(task: list[int]) -> list[tuple[int, _Outcome]]:
    """Score the pages of one task (one site's pages, in id order)."""
    assert _state is not None, "worker used before _init_worker"
    dataset, sites, extractors = _state
    context, seconds = _task_context(dataset, task, sites, extractors)
    outcomes = [(i, _score(dataset, dataset.ids[i], sites[i], extractors, context)) for i in task]
    if outcomes and seconds:  # learning the template is part of the site's parsing time
        first = outcomes[0][1]
        outcomes[0] = (outcomes[0][0], replace(first, parse_seconds=first.parse_seconds + seconds))
    return outcomes


def _task_context(
    dataset: Dataset, task: list[int], sites: list[str], extractors: Mapping[str, Extractor]
) -> tuple[SiteContext | None, float]:
    """The site context of a task's site (a task holds all of one site's pages) and the
    seconds it took; None for pages without a site, sites with too few pages, or when no
    extractor reads a site's template."""
    methods = site_methods(extractors.values())
    if not task or not sites[task[0]] or not methods:
        return None, 0.0
    start = time.perf_counter()
    pages = [dataset.page(dataset.ids[i]) for i in task[:MAX_TEMPLATE_PAGES]]
    context = learn_site([RawPage(_page_url(p.meta) or "", p.html) for p in pages], methods)
    return context, time.perf_counter() - start


def _outcomes(
    dataset: Dataset,
    sites: list[str],
    extractors: Mapping[str, Extractor],
    factory: ExtractorFactory | None,
    jobs: int,
) -> Iterator[_Outcome]:
    global _state
    grouped = keeps_site_state(extractors.values())
    tasks = site_tasks(sites if grouped else [""] * len(sites), jobs)
    if jobs > 1 and len(tasks) > 1 and factory is None:
        raise ValueError("evaluate_dataset with jobs > 1 needs an extractor factory")
    if jobs <= 1 or len(tasks) <= 1:
        _state = (dataset, sites, extractors)
    try:
        pairs = run_tasks(tasks, _work, jobs, _init_worker, (dataset, sites, factory))
        yield from in_order(pairs, len(dataset))
    finally:
        _state = None


def evaluate_dataset(
    dataset: Dataset,
    extractors: Mapping[str, Extractor],
    progress: bool | None = None,
    *,
    site_from: str | None = None,
    jobs: int = 1,
    factory: ExtractorFactory | None = None,
    group_by: str | None = None,
) -> DatasetResult:
    """Score every extractor on every scorable page of `dataset`.

    `progress`: True shows a tqdm bar on stderr, False hides it, None shows it on a terminal only.
    `site_from`: how pages group into sites (`site_mode`; None: meta if the dataset has a
    meta.jsonl, else url). `jobs` > 1 scores whole sites in that many worker processes, each
    with the extractors `factory()` builds (same names, in the same order, as `extractors`).
    `group_by`: a meta.jsonl field whose value each page's result keeps (`groups`), for figures
    by page type, language or any other field.
    """
    from tqdm import tqdm

    sites = dataset_sites(dataset, site_mode(site_from, dataset))
    result = DatasetResult(name=dataset.name, path=str(dataset.path), skipped=dataset.skipped)
    result.gold_only, result.bad_meta_lines = dataset.gold_only, dataset.bad_meta_lines
    result.extractors = {name: ExtractorResult(name) for name in extractors}
    scored = list(result.extractors.values())
    outcomes = tqdm(
        _outcomes(dataset, sites, extractors, factory, jobs),
        total=len(dataset),
        desc=dataset.name,
        unit="page",
        disable=_disable(progress),
        leave=False,
    )
    for page_id, outcome in zip(dataset.ids, outcomes, strict=True):
        result.page_ids.append(page_id)
        if group_by is not None:
            result.groups.append(group_value(dataset.meta.get(page_id, {}), group_by))
        result.parse_seconds += outcome.parse_seconds
        if outcome.parse_error is not None:
            result.parse_errors[page_id] = outcome.parse_error
        for target, (shingle, token, word, error, seconds, checks) in zip(
            scored, outcome.scores, strict=True
        ):
            target.seconds += seconds
            target.snippets.append(checks)
            if error is not None:
                target.errors[page_id] = error
            target.shingle.append(shingle)
            target.token.append(token)
            target.word.append(word)
    return result


def group_value(meta: Mapping[str, object], name: str) -> str:
    """A page's value of meta field `name` as a group label ("-" when it has none)."""
    value = meta.get(name)
    if value is None or value == "" or isinstance(value, dict | list):
        return "-"
    return str(value)


def _disable(progress: bool | None) -> bool | None:
    # tqdm reads disable=None as "only when stderr is not a terminal".
    return None if progress is None else not progress
