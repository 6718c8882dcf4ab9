"""The site-level template methods compared on the dev sets' multi-page sites.

Run: ``newscrawl bench template-eval DATASET... --methods all``. Sites are those of
`newscrawl.training.template_sites.site_groups` (the site_groups.tsv beside the datasets, else
each dataset's meta.jsonl "site"; at least --min-pages pages). Per site, its pages are parsed
once and every method sees all of them: SiteLevel, Site Style Tree, pagelets, entropy
(`newscrawl.template.sitemethods`) and, as the outside reference, deboiler (PyPI; fitted on the
site's pages, its cleaned HTML read back into our DOM so every method's text is rendered the
same way). Each page is then scored with the shingle metric twice:

- **filter alone**: the page's body text once the method's template nodes are cut out;
- **filter, then extractor**: the default extractor (`--after`) on what the filter keeps;
- **extractor, then filter**: the extractor on the whole page, its answer less the lines of
  the template nodes (`trim_lines`; for deboiler, less the lines its cleaned page no longer
  holds);
- **site pass**: the crawl's site pass (`newscrawl.site.slot_cut`: slots of the site's
  template dropped from the extractor's answers) with the method's template nodes cut too
  (`cut_sitelevel`); the row without a method is the site pass as it ships (slots only).

Beside them, the page unfiltered and the extractor alone. F1 is given pooled over pages (F1 of
the mean page P and R, as `newscrawl evaluate`) and site-grouped (the mean over sites of each
site's F1, so a 84-page site weighs what a 5-page one does), with the time each method takes
per site (from parsed pages; deboiler parses on its own, twice). No method learns anything
from the gold text, so every filter figure is out of sample; the learned extractor's model was
trained on these datasets, so the extractor columns flatter it alike for every filter.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from newscrawl.extractors import Extraction, Extractor
from newscrawl.extractors.template_filter import dropped_roots, pruned_dom, trim_lines
from newscrawl.gold.dataset import Dataset, Page
from newscrawl.gold.metric import PageScore, aggregate, score_page
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError
from newscrawl.site.slot_cut import SitePassConfig
from newscrawl.template.sitemethods import SITE_METHODS, site_masks

__all__ = [
    "ALL_METHODS",
    "DEBOILER",
    "MethodRow",
    "SiteResult",
    "as_json",
    "compare_site",
    "deboiler_html",
    "parse_methods",
    "report",
]

DEBOILER = "deboiler"
BASELINE = "(none)"
ALL_METHODS = (*SITE_METHODS, DEBOILER)


@dataclass(slots=True)
class SiteResult:
    """One site's page scores per (method, stage) and the seconds each method took."""

    dataset: str
    site: str
    pages: int = 0
    scores: dict[tuple[str, str], list[PageScore]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, method: str, stage: str, score: PageScore) -> None:
        self.scores.setdefault((method, stage), []).append(score)


def _parse(page: Page, site: str) -> Dom | None:
    try:
        return parse_html(page.html, url=page.meta.get("url") or None, site=site)
    except PageError:
        return None


def deboiler_html(urls: Sequence[str], htmls: Sequence[bytes | str]) -> list[str]:
    """deboiler fitted on one site's pages; each page's cleaned HTML, in input order."""
    import logging

    from deboiler import Deboiler
    from deboiler.dataset import ListDataset

    logging.getLogger("deboiler").setLevel(logging.WARNING)
    logging.getLogger("root").setLevel(logging.WARNING)
    records = [
        {"url": url, "content": html, "status": 200, "content_type": "text/html"}
        for url, html in zip(urls, htmls, strict=True)
    ]
    dataset = ListDataset(records, verbose=False)
    cleaner = Deboiler(n_processes=1, operation_mode="memory", verbose=False)
    cleaner.fit(dataset)
    cleaned = {
        page.url: page.cleaned_html or ""
        for page in cleaner.transform(dataset, include_cleaned_html=True)
    }
    return [cleaned.get(url, "") for url in urls]


def _score_stages(
    result: SiteResult, method: str, kept: Dom, gold: str, extractor: Extractor | None
) -> None:
    """The filter's text and the extractor's text on what the filter kept."""
    result.add(method, "filter", score_page(gold, kept.text(kept.body) if len(kept) else ""))
    if extractor is not None:
        text = extractor.extract(kept).text if len(kept) else ""
        result.add(method, "after", score_page(gold, text))


def _trimmed(dom: Dom, answer: str, mask: np.ndarray) -> str:
    """The extractor's answer on the whole page less the lines of the template nodes (as the
    site pass trims it); the answer itself when the filter takes the body or nothing."""
    if not len(dom) or mask[dom.body] or not mask.any():
        return answer
    return trim_lines(dom, answer, dropped_roots(dom, mask))


def _kept_lines(answer: str, cleaned: Dom) -> str:
    """deboiler's trim: the answer's lines that are still in deboiler's cleaned page (its
    removed nodes are not ours, so lines are matched by their text)."""
    keep = {" ".join(line.split()) for line in cleaned.text(cleaned.body).splitlines()}
    return "\n".join(line for line in answer.splitlines() if " ".join(line.split()) in keep)


def _filtered(dom: Dom, mask: np.ndarray) -> Dom:
    """The page without its template nodes; the whole page when the filter takes the body
    (as the template extractor does: a filter that sees no content is wrong about the page)."""
    if not len(dom) or mask[dom.body] or not mask.any():
        return dom
    return pruned_dom(dom, mask)[0]


def _run_deboiler(
    result: SiteResult,
    pages: list[Page],
    site: str,
    extractor: Extractor | None,
    answers: Sequence[str | None],
) -> None:
    urls = [str(p.meta.get("url") or f"https://{site}/{p.id}") for p in pages]
    if len(set(urls)) < len(urls):  # deboiler keys pages by URL: make them unique
        urls = [f"{url}#{p.id}" for url, p in zip(urls, pages, strict=True)]
    start = time.perf_counter()
    cleaned = deboiler_html(urls, [p.html for p in pages])
    result.seconds[DEBOILER] = time.perf_counter() - start
    for page, html, answer in zip(pages, cleaned, answers, strict=True):
        try:
            kept = parse_html(html or "<html></html>", url=page.meta.get("url") or None)
        except PageError:
            kept = parse_html("<html><body></body></html>")
        _score_stages(result, DEBOILER, kept, page.gold, extractor)
        if answer is not None:
            result.add(DEBOILER, "trim", score_page(page.gold, _kept_lines(answer, kept)))


def compare_site(
    dataset: Dataset,
    site: str,
    ids: Sequence[str],
    methods: Sequence[str],
    extractor: Extractor | None,
    max_pages: int = 200,
) -> SiteResult:
    """Every method on one site's pages (those that parse), each page scored per stage."""
    result = SiteResult(dataset.name, site)
    pages, doms = [], []
    for page_id in list(ids)[:max_pages]:
        page = dataset.page(page_id)
        if (dom := _parse(page, site)) is not None:
            pages.append(page)
            doms.append(dom)
    result.pages = len(pages)
    answers: list[str | None] = [None] * len(pages)
    extractions: list[Extraction] = []
    for i, (page, dom) in enumerate(zip(pages, doms, strict=True)):
        result.add(BASELINE, "filter", score_page(page.gold, dom.text(dom.body)))
        if extractor is not None:
            extractions.append(extractor.extract(dom))
            answers[i] = extractions[-1].text
            score = score_page(page.gold, answers[i] or "")
            result.add(BASELINE, "after", score)
            result.add(BASELINE, "trim", score)
    passing = _SitePass(doms, extractions) if extractions else None
    if passing is not None:
        for page, text in zip(pages, passing.texts(None), strict=True):
            result.add(BASELINE, "sitepass", score_page(page.gold, text))
    for method in methods:
        if method == DEBOILER:
            _run_deboiler(result, pages, site, extractor, answers)
            continue
        start = time.perf_counter()
        masks = site_masks(method, doms)
        result.seconds[method] = time.perf_counter() - start
        for page, dom, mask, answer in zip(pages, doms, masks, answers, strict=True):
            _score_stages(result, method, _filtered(dom, mask), page.gold, extractor)
            if answer is not None:
                result.add(method, "trim", score_page(page.gold, _trimmed(dom, answer, mask)))
        if passing is not None:
            for page, text in zip(pages, passing.texts(masks), strict=True):
                result.add(method, "sitepass", score_page(page.gold, text))
    return result


class _SitePass:
    """The site pass over a site's pages, from extractions already made: the slot decisions
    once, then each method's template nodes cut (`SitePassConfig.cut_sitelevel`)."""

    def __init__(self, doms: Sequence[Dom], extractions: Sequence[Extraction]) -> None:
        from newscrawl.site.page_choice import SiteSlots, page_choice
        from newscrawl.site.slot_cut import learn_template

        slots = SiteSlots()
        self.config = SitePassConfig()
        self.choices = [page_choice(d, e, slots) for d, e in zip(doms, extractions, strict=True)]
        self.template = learn_template(self.choices, self.config)

    def texts(self, masks: Sequence[np.ndarray] | None) -> list[str]:
        """Each page's final text; `masks`: the method's template nodes (None: slots only)."""
        from newscrawl.site.slot_cut import final_extraction

        if len(self.choices) < self.config.min_pages:  # too few pages: page-level text
            return [choice.extraction.text for choice in self.choices]
        config = dataclasses.replace(self.config, cut_sitelevel=masks is not None)
        labels = masks if masks is not None else [None] * len(self.choices)
        return [
            final_extraction(choice, self.template, label, config).text
            for choice, label in zip(self.choices, labels, strict=True)
        ]


# -- report ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MethodRow:
    """A method's figures over a set of sites."""

    method: str
    filter_pooled: float
    filter_sites: float
    after_pooled: float
    after_sites: float
    trim_pooled: float
    trim_sites: float
    sitepass_pooled: float
    sitepass_sites: float
    ms_site: float
    ms_page: float
    wins: int  # sites where the filter alone beats deboiler's


def _f1(scores: Sequence[PageScore]) -> float:
    return aggregate(scores).f1 if scores else float("nan")


def _site_mean(results: Sequence[SiteResult], method: str, stage: str) -> float:
    values = [_f1(r.scores[(method, stage)]) for r in results if (method, stage) in r.scores]
    return float(np.mean(values)) if values else float("nan")


def _pooled(results: Sequence[SiteResult], method: str, stage: str) -> float:
    return _f1([s for r in results for s in r.scores.get((method, stage), [])])


def method_row(results: Sequence[SiteResult], method: str) -> MethodRow:
    timed = [r for r in results if method in r.seconds]
    seconds = sum(r.seconds[method] for r in timed)
    pages = sum(r.pages for r in timed)
    wins = sum(
        _f1(r.scores[(method, "filter")]) > _f1(r.scores[(DEBOILER, "filter")])
        for r in results
        if (DEBOILER, "filter") in r.scores and (method, "filter") in r.scores
    )
    return MethodRow(
        method,
        _pooled(results, method, "filter"),
        _site_mean(results, method, "filter"),
        _pooled(results, method, "after"),
        _site_mean(results, method, "after"),
        _pooled(results, method, "trim"),
        _site_mean(results, method, "trim"),
        _pooled(results, method, "sitepass"),
        _site_mean(results, method, "sitepass"),
        1000 * seconds / len(timed) if timed else float("nan"),
        1000 * seconds / pages if pages else float("nan"),
        wins,
    )


def report(results: Sequence[SiteResult], methods: Sequence[str], after: str) -> list[str]:
    """The comparison table, then filter-alone F1 per dataset (`after` "none": no extractor
    column)."""
    pages = sum(r.pages for r in results)
    extracted = after != "none"
    lines = [
        f"{len(results)} multi-page sites, {pages} pages; F1 pooled over pages / mean over sites",
        "",
        "| method | filter alone | "
        + (
            f"filter, then {after} | {after}, then the filter trims it | site pass, + its cut | "
            if extracted
            else ""
        )
        + "ms a site | ms a page | sites above deboiler (filter alone) |",
        "|---|---|---|---|---|" + ("---|---|---|" if extracted else ""),
    ]
    for method in (BASELINE, *methods):
        row = method_row(results, method)
        cells = [_label(method, after), f"{row.filter_pooled:.3f} / {row.filter_sites:.3f}"]
        if extracted:
            cells.append(f"{row.after_pooled:.3f} / {row.after_sites:.3f}")
            cells.append(f"{row.trim_pooled:.3f} / {row.trim_sites:.3f}")
            sitepass = f"{row.sitepass_pooled:.3f} / {row.sitepass_sites:.3f}"
            cells.append("-" if method == DEBOILER else sitepass)
        if method == BASELINE:
            cells += ["-", "-"]
        else:
            cells += [f"{row.ms_site:.0f}", f"{row.ms_page:.1f}"]
        versus = method not in (BASELINE, DEBOILER) and DEBOILER in methods
        cells.append(str(row.wins) if versus else "-")
        lines.append("| " + " | ".join(cells) + " |")
    if extracted:
        lines.append(
            f"(none: the page unfiltered, {after} alone, and the site pass as it ships, slots "
            "only; a method's site pass also cuts the method's template nodes)"
        )
    lines += ["", _per_dataset(results, methods)]
    return lines


def _label(method: str, after: str) -> str:
    if method != BASELINE:
        return method
    return "none (whole page)" if after == "none" else f"none (whole page; {after} alone)"


def _per_dataset(results: Sequence[SiteResult], methods: Sequence[str]) -> str:
    names = sorted({r.dataset for r in results})
    head = "| filter alone, pooled F1 | " + " | ".join(
        f"{n} ({sum(r.pages for r in results if r.dataset == n)})" for n in names
    )
    rows = [head + " |", "|---|" + "---|" * len(names)]
    for method in (BASELINE, *methods):
        cells = [
            f"{_pooled([r for r in results if r.dataset == n], method, 'filter'):.3f}"
            for n in names
        ]
        rows.append(f"| {'none' if method == BASELINE else method} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def as_json(results: Sequence[SiteResult], methods: Sequence[str]) -> dict[str, Any]:
    rows = [method_row(results, m) for m in (BASELINE, *methods)]
    return {
        "methods": [{k: _plain(getattr(r, k)) for k in MethodRow.__slots__} for r in rows],
        "sites": [
            {
                "dataset": r.dataset,
                "site": r.site,
                "pages": r.pages,
                "seconds": r.seconds,
                "f1": {f"{m}/{s}": _plain(_f1(v)) for (m, s), v in r.scores.items()},
            }
            for r in results
        ],
    }


def _plain(value: object) -> object:
    """JSON has no NaN: a figure that does not exist is null."""
    return None if isinstance(value, float) and value != value else value


# -- command line ---------------------------------------------------------------------------


def parse_methods(text: str) -> list[str]:
    """`--methods`: "all" or names among ALL_METHODS, comma-separated."""
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    if names == ["all"]:
        return list(ALL_METHODS)
    unknown = [n for n in names if n not in ALL_METHODS]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r}: choose among {', '.join(ALL_METHODS)}")
    return names
