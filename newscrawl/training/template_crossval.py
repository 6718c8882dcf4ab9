"""Site-grouped cross-validation of the default template model (the honest figures).

Run as ``python -m newscrawl.training.template_crossval DATA_DIR [--folds 5] [--limit N]
[--json OUT]``, where DATA_DIR holds the six dev dataset folders (`template_default.DATASETS`).

Procedure: every page of the six datasets becomes a `template_default.PageRecord` (flow boxes,
the seven features, gold-aligned node labels). scikit-learn's `GroupKFold` splits the pages
into 5 folds by site ("dataset/site"), so no site is in both the training and the test part.
For each fold the model is trained exactly as the shipped one (`default_model.fit_model`) on
the other folds, then on every held-out page:

* the template class is scored on the nodes the classifiers see (area >= 2,000 px²): node
  accuracy and template-class P/R/F of the smoothed scores at each threshold, pooled over the
  dataset's nodes, beside the trivial "everything is template" predictor;
* NCE runs on the whole page and on what the filter keeps at each threshold (the page is
  handed on unfiltered when the filter would drop <body>, as `TemplateExtractor` does), and
  both are scored with the shingle metric (pooled F1 = F1 of mean per-page P and mean R).

Both filter orders are tried: "before" (NCE reads what the filter keeps) and "after" (NCE reads
the whole page; the template lines are then removed from its answer). The variant printed as
chosen (ORDER:THRESHOLD) has the best mean F1 gain over the datasets among those that lower F1
on no dataset (none, when none qualifies). It is chosen on out-of-fold results, not by nested
CV.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.gold.folds import group_folds
from newscrawl.gold.metric import PageScore, aggregate, count_figures, score_page
from newscrawl.template.buckets import MIN_AREA
from newscrawl.template.template_scoring import smooth_page
from newscrawl.training.template_default import DATASETS, PageRecord, collect, fit_model

__all__ = ["THRESHOLDS", "crossvalidate", "main", "report_lines"]

THRESHOLDS: tuple[float, ...] = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.98, 0.99)
ORDERS: tuple[str, ...] = ("before", "after")
C = 0.01


def _folds(records: Sequence[PageRecord], k: int) -> list[np.ndarray]:
    fold = group_folds([r.group for r in records], k)
    return [np.flatnonzero(fold == f) for f in range(int(fold.max()) + 1)] if len(fold) else []


def crossvalidate(
    data_dir: Path,
    datasets: Sequence[str] = DATASETS,
    folds: int = 5,
    limit: int | None = None,
    thresholds: Sequence[float] = THRESHOLDS,
    progress: bool = False,
    orders: Sequence[str] = ORDERS,
) -> dict[str, Any]:
    """Out-of-fold figures per dataset (see the module docstring); a JSON-able dict."""
    from tqdm import tqdm

    from newscrawl.extractors.template_filter import TemplateConfig, TemplateExtractor
    from newscrawl.gold.dataset import Dataset
    from newscrawl.html.parse import parse_html
    from newscrawl.html.tree import PageError

    records, counts = collect(Path(data_dir), datasets, limit=limit, progress=progress)
    handles = {name: Dataset(Path(data_dir) / name) for name in datasets}
    base: dict[str, list[PageScore]] = defaultdict(list)
    filtered: dict[tuple[str, str], list[PageScore]] = defaultdict(list)
    nodes: dict[tuple[str, float], np.ndarray] = defaultdict(lambda: np.zeros(4, np.int64))
    bar = tqdm(total=len(records), desc="cross-validation", unit="page", disable=not progress)
    for test in _folds(records, folds):
        held = set(test.tolist())
        model = fit_model([r for i, r in enumerate(records) if i not in held])
        filters = {
            order: TemplateExtractor(TemplateConfig(then="nce", order=order), model=model)
            for order in orders
        }
        nce = filters[orders[0]]
        for index in test:
            record = records[index]
            raw = model.scores(record.features, record.area)
            smoothed = smooth_page(record.parent, raw, record.body, C)
            scored = record.area >= MIN_AREA
            truth = record.label[scored]
            for t in thresholds:
                guess = smoothed[scored] >= t
                nodes[(record.dataset, t)] += (
                    int(np.sum(truth & guess)),
                    int(np.sum(~truth & guess)),
                    int(np.sum(truth & ~guess)),
                    int(np.sum(~truth & ~guess)),
                )
            page = handles[record.dataset].page(record.page_id)
            try:
                dom = parse_html(page.html, url=record.url or None)
            except PageError:
                dom = None
            if dom is None or len(dom) != len(record):
                bar.update()
                continue
            whole = nce.inner.extract(dom).text if nce.inner else ""
            base[record.dataset].append(score_page(page.gold, whole))
            seen: dict[tuple[str, bytes], PageScore] = {}
            for t in thresholds:
                mask = smoothed >= t
                mask[: record.body] = False
                for order, extractor in filters.items():
                    key = (order, np.packbits(mask).tobytes())
                    if key not in seen:
                        if not mask.any() or mask[record.body]:
                            seen[key] = base[record.dataset][-1]
                        else:
                            text = extractor.extract_masked(dom, mask).text
                            seen[key] = score_page(page.gold, text)
                    filtered[(record.dataset, f"{order}:{t}")].append(seen[key])
            bar.update()
    bar.close()
    variants = [f"{order}:{t}" for order in orders for t in thresholds]
    return _summary(counts, base, filtered, nodes, thresholds, variants, folds)


def _class_figures(counts: np.ndarray) -> dict[str, float]:
    tp, fp, fn, tn = (int(v) for v in counts)
    return count_figures(tp, fp, fn, tn)


def _summary(counts, base, filtered, nodes, thresholds, variants, folds) -> dict[str, Any]:
    per: dict[str, Any] = {}
    for name in counts:
        if not base.get(name):
            continue
        nce = aggregate(base[name])
        row: dict[str, Any] = {
            "pages": counts[name]["pages"],
            "sites": counts[name]["sites"],
            "nce": {"precision": nce.precision, "recall": nce.recall, "f1": nce.f1},
            "filtered": {},
            "template_class": {},
        }
        any_t = next(iter(thresholds))
        tp, fp, fn, tn = nodes[(name, any_t)]
        row["all_template"] = _class_figures(np.array([tp + fn, fp + tn, 0, 0]))
        for v in variants:
            s = aggregate(filtered[(name, v)])
            row["filtered"][v] = {"precision": s.precision, "recall": s.recall, "f1": s.f1}
        for t in thresholds:
            row["template_class"][str(t)] = _class_figures(nodes[(name, t)])
        per[name] = row
    qualifying = [
        v for v in variants if all(r["filtered"][v]["f1"] >= r["nce"]["f1"] for r in per.values())
    ]
    gain = {
        v: float(np.mean([r["filtered"][v]["f1"] - r["nce"]["f1"] for r in per.values()]))
        for v in variants
    }
    chosen = max(qualifying, key=lambda v: gain[v]) if qualifying else None
    return {
        "folds": folds,
        "grouping": "GroupKFold over dataset/site",
        "thresholds": list(thresholds),
        "variants": variants,
        "chosen": chosen,
        "mean_gain": gain,
        "datasets": per,
    }


def report_lines(result: dict[str, Any], variant: str | None = None) -> list[str]:
    """The per-dataset tables: shingle F1 with and without the filter, and the template class
    beside the everything-is-template baseline, for `variant` ("ORDER:THRESHOLD"; default:
    the chosen one)."""
    per = result["datasets"]
    v = variant or result["chosen"]
    out = [
        f"site-grouped {result['folds']}-fold CV ({result['grouping']}); chosen filter: "
        f"{result['chosen'] or 'none (every variant lowers F1 somewhere)'}",
        "",
    ]
    if v:
        out += [
            f"Shingle F1, NCE alone and NCE + template filter ({v}):",
            "| dataset | pages | sites | NCE | NCE + filter | change |",
            "|---|---|---|---|---|---|",
        ]
        for name, row in per.items():
            base, f = row["nce"]["f1"], row["filtered"][v]["f1"]
            out.append(
                f"| {name} | {row['pages']} | {row['sites']} | {base:.3f} | {f:.3f} "
                f"| {f - base:+.4f} |"
            )
        out.append("")
    out += [
        "F1 change (NCE + filter minus NCE) per ORDER:THRESHOLD:",
        "| filter | " + " | ".join(per) + " | mean |",
        "|---" * (len(per) + 2) + "|",
    ]
    for var in result["variants"]:
        cells = [f"{r['filtered'][var]['f1'] - r['nce']['f1']:+.4f}" for r in per.values()]
        out.append(f"| {var} | " + " | ".join(cells) + f" | {result['mean_gain'][var]:+.4f} |")
    shown = [str(result["thresholds"][0])]  # the classifiers' own decision (0.5)
    if v and v.split(":")[1] not in shown:
        shown.append(v.split(":")[1])  # and the filter's threshold
    for t in shown:
        out += [
            "",
            f"Template class on classified nodes (pooled), threshold {t}, "
            "vs everything-is-template:",
            "| dataset | nodes | template share | accuracy: all-template / model "
            "| template P / R / F: all-template | model |",
            "|---|---|---|---|---|---|",
        ]
        for name, row in per.items():
            base, model = row["all_template"], row["template_class"][t]
            out.append(
                f"| {name} | {base['nodes']:,} | {base['precision']:.3f} | "
                f"{base['accuracy']:.3f} / {model['accuracy']:.3f} | {base['precision']:.2f} / "
                f"{base['recall']:.2f} / {base['f1']:.2f} | {model['precision']:.2f} / "
                f"{model['recall']:.2f} / {model['f1']:.2f} |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m newscrawl.training.template_crossval",
        description="Site-grouped cross-validation of the default template model.",
    )
    parser.add_argument("data_dir", type=Path, help="folder holding the dev dataset folders")
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="pages per dataset (a smoke run)")
    parser.add_argument("--variant", default=None, help="report this ORDER:THRESHOLD")
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        result = crossvalidate(
            args.data_dir, args.datasets, args.folds, args.limit, progress=not args.quiet
        )
    except (OSError, ValueError) as err:
        print(f"crossval: {err}", file=sys.stderr)
        return 2
    if not result["datasets"]:
        print("crossval: no pages scored", file=sys.stderr)
        return 2
    print("\n".join(report_lines(result, args.variant)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
