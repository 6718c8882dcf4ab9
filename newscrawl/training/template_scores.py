"""Evaluation of template detection on multi-page sites of gold-text datasets, as
Chakrabarti, Kumar and Punera (WWW 2007) measure it.

Run: ``newscrawl bench template-eval DATASET... [--groups site_groups.tsv]``. A DATASET is a
dataset folder (html/, gold/, meta.jsonl) or a folder of them. Sites come from the groups file
(dataset, site, n_pages) when one is given or found beside the datasets, else from each page's
meta.jsonl "site"; sites with fewer than --min-pages pages are left out.

Procedure, per fold of a k-fold split of the *sites* (a site is never in training and test):
1. every page of every site is labelled by SiteLevel (or the --site-method given) against the
   other pages of its site - the training labels, made without looking at the gold;
2. bucketed classifiers are trained on the training sites' nodes: on all of them ("total") and
   on the sites of the test site's kind only ("specific": news or blog, as in the study);
3. on the test sites, node labels are derived from the gold text (`gold_template`) and the
   template class is scored without smoothing and smoothed with c in {0.01, 0.1, 1};
4. articles are extracted by each page-level extractor alone, by the template filter alone and
   by each extractor on what the filter keeps, and scored with the shingle metric.

Template P/R/F are computed per page over its scored nodes (area of at least 2,000 px², the
nodes the classifiers see) and averaged over pages, as the study reports them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.extractors.template_filter import TemplateExtractor, mask_from_scores, pruned_dom
from newscrawl.gold.dataset import Dataset
from newscrawl.gold.folds import group_folds
from newscrawl.gold.metric import PageScore, aggregate, f1, score_page
from newscrawl.html.dom import Dom
from newscrawl.template.buckets import MIN_AREA
from newscrawl.template.node_features import node_features
from newscrawl.training.template_sites import PageCase, SiteCase, parse_page
from newscrawl.training.template_train import NodeData, TrainConfig, TrainError, pages_data, train

__all__ = [
    "DEFAULT_EXTRACTORS",
    "SMOOTHING",
    "STUDY",
    "Results",
    "as_json",
    "evaluate",
    "gain_lines",
    "shingle_table",
    "template_table",
]

# Variants of the template-class table: None is "no smoothing".
SMOOTHING: tuple[float | None, ...] = (None, 0.01, 0.1, 1.0)
# The study's figures (Chakrabarti, Kumar and Punera as reproduced at PUC-Rio, tables 7 and 8):
# (kind, training, c) -> (P, R, F).
STUDY: dict[tuple[str, str, float | None], tuple[float, float, float]] = {
    ("blog", "specific", None): (0.64, 0.49, 0.53),
    ("blog", "total", None): (0.67, 0.58, 0.60),
    ("blog", "specific", 0.01): (0.70, 0.65, 0.65),
    ("blog", "total", 0.01): (0.71, 0.69, 0.67),
    ("blog", "specific", 0.1): (0.75, 0.88, 0.79),
    ("blog", "total", 0.1): (0.76, 0.92, 0.81),
    ("blog", "specific", 1.0): (0.76, 1.00, 0.84),
    ("blog", "total", 1.0): (0.76, 1.00, 0.84),
    ("news", "specific", None): (0.75, 0.78, 0.76),
    ("news", "total", None): (0.70, 0.58, 0.62),
    ("news", "specific", 0.01): (0.76, 0.85, 0.80),
    ("news", "total", 0.01): (0.74, 0.72, 0.72),
    ("news", "specific", 0.1): (0.77, 0.92, 0.83),
    ("news", "total", 0.1): (0.76, 0.85, 0.80),
    ("news", "specific", 1.0): (0.78, 1.00, 0.87),
    ("news", "total", 1.0): (0.78, 1.00, 0.87),
}
DEFAULT_EXTRACTORS = ("nce", "mss", "cetd-tpc")
# Filters compared: the trained classifiers alone ("template"), and the classifiers plus the
# template SiteLevel learns from the test site's own pages ("site"; what a crawl knows once it
# has buffered a site, and what `--site-from` hands the filter at extraction).
FILTERS = ("template", "site")


@dataclass(slots=True)
class Counts:
    """Template-class P/R/F averaged over pages (the study's way)."""

    precision: float = 0.0
    recall: float = 0.0
    f1: float = 0.0
    pages: int = 0

    def add(self, truth: np.ndarray, predicted: np.ndarray) -> None:
        score = PageScore(
            tp=int(np.sum(truth & predicted)),
            fp=int(np.sum(~truth & predicted)),
            fn=int(np.sum(truth & ~predicted)),
        )
        p, r = score.precision, score.recall
        self.precision += p
        self.recall += r
        self.f1 += f1(p, r)
        self.pages += 1

    def means(self) -> tuple[float, float, float]:
        n = max(self.pages, 1)
        return self.precision / n, self.recall / n, self.f1 / n


def _node_data(sites: Iterable[SiteCase]) -> NodeData:
    return pages_data(
        (s.site, s.kind, [c.nodes for c in s.pages], [c.sitelevel for c in s.pages]) for s in sites
    )


def _folds(sites: Sequence[SiteCase], k: int) -> list[set[str]]:
    """The test sites of each fold (`group_folds` over the pages: one site, one fold)."""
    pages = [site.site for site in sites for _ in site.pages]
    fold_of = dict(zip(pages, group_folds(pages, k).tolist(), strict=True))
    return [{n for n, f in fold_of.items() if f == j} for j in sorted(set(fold_of.values()))]


@dataclass(slots=True)
class Results:
    """Everything the report prints."""

    template: dict[tuple[str, str, float | None], Counts] = field(default_factory=dict)
    shingle: dict[str, dict[str, list[PageScore]]] = field(default_factory=dict)
    sites: Counter = field(default_factory=Counter)  # (dataset, kind) -> sites
    pages: Counter = field(default_factory=Counter)  # (dataset, kind) -> pages
    skipped_folds: int = 0

    def counts(self, kind: str, training: str, c: float | None) -> Counts:
        return self.template.setdefault((kind, training, c), Counts())

    def page_score(self, dataset: str, method: str, score: PageScore) -> None:
        self.shingle.setdefault(dataset, {}).setdefault(method, []).append(score)


def _train(sites: Sequence[SiteCase], seed: int, balanced: bool) -> Any:
    data = _node_data(sites)
    try:
        return train(data, TrainConfig(holdout=0.0, seed=seed, balanced=balanced))[0]
    except TrainError:
        return None


def _score_template(results: Results, case: PageCase, kind: str, models: dict[str, Any]) -> None:
    features = node_features(case.nodes)
    area = case.nodes.area
    scored = area >= MIN_AREA
    scored[: case.body] = False
    truth = case.gold[scored]
    for kind_ in (kind, "all"):  # the baseline that calls every scored node template
        results.counts(kind_, "everything", None).add(truth, np.ones(len(truth), dtype=bool))
    for training, model in models.items():
        if model is None:
            continue
        raw = model.scores(features, area)
        for c in SMOOTHING:
            mask = mask_from_scores(
                case.nodes.parent, raw, case.body, c=c or 0.0, smooth=c is not None
            )
            results.counts(kind, training, c).add(truth, mask[scored])
            results.counts("all", training, c).add(truth, mask[scored])


def _score_extraction(
    results: Results,
    dataset: str,
    dom: Dom,
    gold: str,
    methods: dict[str, TemplateExtractor],
    masks: dict[str, np.ndarray],
) -> None:
    """Shingle scores of every method on one page; each filter's pruned page is built once."""
    for name, method in methods.items():
        if "+" not in name and ">" not in name and name not in masks:  # an extractor alone
            inner = method.inner
            text = inner.extract(dom).text if inner is not None else ""
            results.page_score(dataset, name, score_page(gold, text))
    for prefix, mask in masks.items():
        pruned = pruned_dom(dom, mask) if len(dom) and not mask[dom.body] else None
        for name, method in methods.items():
            if name == prefix or name.startswith((prefix + "+", prefix + ">")):
                text = method.extract_masked(dom, mask, pruned).text
                results.page_score(dataset, name, score_page(gold, text))


def _extractors(names: Sequence[str], model: Any) -> dict[str, TemplateExtractor]:
    """Method name -> a TemplateExtractor that computes it: "nce" (alone), "template" (the
    filter alone), "template+nce" (nce on what the filter keeps), "template>nce" (nce on the
    whole page, then the filter), and the same with "site" (the filter that also knows the
    site's SiteLevel template) for "template"."""
    from newscrawl.extractors.template_filter import TemplateConfig

    methods: dict[str, TemplateExtractor] = {}
    for name in names:
        methods[name] = TemplateExtractor(TemplateConfig(then=name), model=model)
    for prefix in FILTERS:
        methods[prefix] = TemplateExtractor(TemplateConfig(), model=model)
        for name in names:
            methods[f"{prefix}+{name}"] = TemplateExtractor(TemplateConfig(then=name), model=model)
            methods[f"{prefix}>{name}"] = TemplateExtractor(
                TemplateConfig(then=name, order="after"), model=model
            )
    return methods


def evaluate(
    sites: Sequence[SiteCase],
    folds: int = 5,
    seed: int = 0,
    extractors: Sequence[str] = DEFAULT_EXTRACTORS,
    progress: bool = True,
    balanced: bool = True,
    extraction: bool = True,
) -> Results:
    """Cross-validate over site folds (see the module docstring)."""
    from tqdm import tqdm

    results = Results()
    handles: dict[Path, Dataset] = {}  # each dataset opened once, for this run
    for site in sites:
        results.sites[(site.dataset, site.kind)] += 1
        results.pages[(site.dataset, site.kind)] += len(site.pages)
    bar = tqdm(
        total=sum(len(s.pages) for s in sites), unit="page", desc="evaluating", disable=not progress
    )
    for test_names in _folds(sites, folds):
        train_sites = [s for s in sites if s.site not in test_names]
        total = _train(train_sites, seed, balanced)
        if total is None:
            results.skipped_folds += 1
            continue
        specific = {
            kind: _train([s for s in train_sites if s.kind == kind], seed, balanced)
            for kind in ("news", "blog")
        }
        methods = _extractors(extractors, total)
        for site in (s for s in sites if s.site in test_names):
            models = {"total": total, "specific": specific[site.kind]}
            for case in site.pages:
                _score_template(results, case, site.kind, models)
                if extraction:
                    _extract_page(results, handles, site, case, total, methods)
                bar.update(1)
    bar.close()
    return results


def _extract_page(
    results: Results,
    handles: dict[Path, Dataset],
    site: SiteCase,
    case: PageCase,
    model: Any,
    methods: dict[str, TemplateExtractor],
) -> None:
    """Shingle scores of every extraction method on one test page (parsed again here)."""
    page = _dataset_handle(handles, site).page(case.page_id)
    dom = parse_page(page)
    if dom is None:
        return
    raw = model.scores(node_features(case.nodes), case.nodes.area)
    model_mask = mask_from_scores(case.nodes.parent, raw, case.body, c=0.01)
    masks = {"template": model_mask, "site": model_mask | _sitelevel_mask(case)}
    _score_extraction(results, site.dataset, dom, page.gold, methods, masks)


def _sitelevel_mask(case: PageCase) -> np.ndarray:
    mask = case.sitelevel.copy()
    mask[: case.body] = False
    return mask


def _dataset_handle(handles: dict[Path, Dataset], site: SiteCase) -> Dataset:
    if site.path not in handles:
        handles[site.path] = Dataset(site.path)
    return handles[site.path]


# -- report ---------------------------------------------------------------------------------


def _fmt(values: tuple[float, float, float] | None) -> str:
    return " / ".join(f"{v:.2f}" for v in values) if values else "-"


def template_table(results: Results) -> list[str]:
    """The study's table on our data: P / R / F of the template class, beside the study's.

    "everything" is the baseline that calls every scored node template: its precision is the
    share of template nodes, which the other rows must be read against.
    """
    lines = [
        "| kind | smoothing | c | training | pages | ours P / R / F | study P / R / F |",
        "|---|---|---|---|---|---|---|",
    ]
    for kind in ("news", "blog", "all"):
        counts = results.template.get((kind, "everything", None))
        if counts is not None and counts.pages:
            lines.append(
                f"| {kind} | - | - | everything template | {counts.pages} | "
                f"{_fmt(counts.means())} | - |"
            )
        for c in SMOOTHING:
            for training in ("specific", "total"):
                counts = results.template.get((kind, training, c))
                if counts is None or not counts.pages:
                    continue
                lines.append(
                    f"| {kind} | {'yes' if c is not None else 'no'} | {c if c else '-'} | "
                    f"{training} | {counts.pages} | {_fmt(counts.means())} | "
                    f"{_fmt(STUDY.get((kind, training, c)))} |"
                )
    return lines


def _f1(methods: dict[str, list[PageScore]], name: str) -> float:
    return aggregate(methods[name]).f1 if name in methods else float("nan")


def shingle_table(results: Results, extractors: Sequence[str]) -> list[str]:
    """Shingle F1 per dataset: each extractor alone; with the classifiers' filter before it (it
    reads what the filter keeps) and after it (the filter trims its answer); and the same with
    the site-aware filter (classifiers + the site's own SiteLevel template)."""
    lines = [
        "| dataset | pages | extractor | alone | model: filter, then extractor | extractor, "
        "then filter | site-aware: filter, then extractor | extractor, then filter |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for dataset, methods in sorted(results.shingle.items()):
        pages = len(next(iter(methods.values())))
        for name in extractors:
            alone = _f1(methods, name)
            cells = [
                f"{_f1(methods, f'{prefix}{sep}{name}'):.3f} "
                f"({_f1(methods, f'{prefix}{sep}{name}') - alone:+.3f})"
                for prefix in FILTERS
                for sep in ("+", ">")
            ]
            lines.append(f"| {dataset} | {pages} | {name} | {alone:.3f} | {' | '.join(cells)} |")
        lines.append(
            f"| {dataset} | {pages} | (filter alone) | - | {_f1(methods, 'template'):.3f} | - | "
            f"{_f1(methods, 'site'):.3f} | - |"
        )
    return lines


def gain_lines(results: Results, extractors: Sequence[str]) -> list[str]:
    """Per dataset: the best extractor alone against the best template-aware combination."""
    out = []
    for dataset, methods in sorted(results.shingle.items()):
        best = max(extractors, key=lambda n: _f1(methods, n))
        for prefix, label in (("template", "model"), ("site", "site-aware")):
            combos = [f"{prefix}{sep}{n}" for n in extractors for sep in ("+", ">")]
            top = max(combos, key=lambda n: _f1(methods, n))
            plain, base = f"{prefix}+{best}", _f1(methods, best)
            out.append(
                f"{dataset}: best alone {best} {base:.3f}; {label} filter then {best} "
                f"{_f1(methods, plain):.3f} ({_f1(methods, plain) - base:+.3f}); best {label} "
                f"combination {top} {_f1(methods, top):.3f} ({_f1(methods, top) - base:+.3f})"
            )
    return out


def as_json(results: Results) -> dict[str, Any]:
    return {
        "template": [
            {
                "kind": k,
                "training": t,
                "c": c,
                "pages": v.pages,
                **dict(zip(("precision", "recall", "f1"), v.means(), strict=True)),
                "study": STUDY.get((k, t, c)),
            }
            for (k, t, c), v in results.template.items()
        ],
        "shingle": {
            dataset: {name: _shingle_figures(scores) for name, scores in methods.items()}
            for dataset, methods in results.shingle.items()
        },
        "sites": {f"{d}/{k}": n for (d, k), n in results.sites.items()},
        "pages": {f"{d}/{k}": n for (d, k), n in results.pages.items()},
    }


def _shingle_figures(scores: Sequence[PageScore]) -> dict[str, float | int]:
    total = aggregate(scores)
    return {
        "pages": len(scores),
        "f1": total.f1,
        "precision": total.precision,
        "recall": total.recall,
    }
