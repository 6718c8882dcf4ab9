"""The shipped default template model: trained on the six real dev datasets, deterministically.

Rebuild (the exact command is also written into the model's provenance)::

    python -m newscrawl.training.template_default ../shared/data \
        --out models/default_template_model.json

or from Python: ``build_default_template_model(Path("../shared/data"), Path(out))``. A second run
on the same data and library versions writes the same bytes (sorted inputs, fixed seeds, no
dates in the file).

How the training set is made (choices, and why):

* **Pages**: every scorable page of `DATASETS` (a dataset missing from the folder is an error:
  the model must say what it was trained on).
* **Boxes**: the ``flow`` geometry provider (reading order and text amount, no layout), so
  the model can be applied at crawl speed; the study's seven features on those boxes.
* **Labels**: from the gold text, per node (`evaluation.gold_template`): nodes whose text is
  mostly gold, their ancestors and their article descendants are content, every other node
  template. SiteLevel labels were the study's choice, but most dev sites have one to a few
  pages (wcxb_dev: 1,296 sites for 1,497 pages), where SiteLevel can say nothing, and the
  gold is the extraction target itself; the site's own repeated template is still cut out at
  extraction time when the caller knows the site (`site.site_context.learn_site`).
* **Weights**: the gold conventions differ (CleanEval keeps lists and navigation-like text,
  DAnIEL only the article), so no dataset may drown the others: every dataset has the same
  total weight, every page the same weight within its dataset; at most `MAX_PAGE_NODES` of a
  page's classified nodes (area >= 2,000 px²) are drawn, with a fixed seed. Classes are
  balanced as in `newscrawl train`.
* **Threshold and order**: the filter cuts nodes whose smoothed score is at least
  `THRESHOLD`, from NCE's answer (`ORDER` "after"): the variant site-grouped 5-fold
  cross-validation chose (`python -m newscrawl.training.template_crossval`), the best mean gain
  among
  the variants that lower NCE's pooled shingle F1 on no dataset. Every lower threshold, and
  every threshold with NCE reading the filtered page, lowered F1 on some dataset, so the
  filter is deliberately almost inert; the model's main use is its per-node score
  (`scoring.smoothed_scores`) as a feature of the learned extractor.
"""

from __future__ import annotations

import argparse
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.models.template_model import TemplateModel
from newscrawl.template.buckets import MIN_AREA
from newscrawl.template.node_features import FEATURES, node_features
from newscrawl.training.template_train import NodeData, TrainConfig, train

__all__ = [
    "COMMAND",
    "DATASETS",
    "GEOMETRY",
    "THRESHOLD",
    "PageRecord",
    "build_default_template_model",
    "collect",
    "default_template_model",
    "fit_model",
    "main",
    "node_data",
]

DATASETS: tuple[str, ...] = (
    "cleaneval_dev",
    "cleaneval_final",
    "cleanportaleval",
    "daniel",
    "l3s_gn1",
    "wcxb_dev",
)
GEOMETRY = "flow"
SEED = 0
MAX_PAGE_NODES = 300
# Chosen by `python -m newscrawl.training.template_crossval ../shared/data` (docs/templates.md).
THRESHOLD = 0.99
ORDER = "after"  # the filter cleans NCE's answer ("before": NCE reads what the filter keeps)
COMMAND = (
    "python -m newscrawl.training.template_default ../shared/data "
    "--out models/default_template_model.json"
)


@dataclass(slots=True)
class PageRecord:
    """What training and cross-validation keep of one page (no tree, no text)."""

    dataset: str
    group: str  # "dataset/site": the unit of the site-grouped folds
    page_id: str
    url: str
    features: np.ndarray  # float32 (n, 7)
    area: np.ndarray  # float32 (n,)
    label: np.ndarray  # bool (n,): template by the gold
    parent: np.ndarray  # int32 (n,)
    body: int

    def __len__(self) -> int:
        return len(self.label)


def page_record(dataset: str, page: Any, geometry: str = GEOMETRY) -> PageRecord | None:
    """One `Dataset` page as a record; None when the page cannot be parsed."""
    from newscrawl.html.parse import parse_html
    from newscrawl.html.tree import PageError
    from newscrawl.template.node_records import PageNodes
    from newscrawl.training.template_sites import gold_template

    url = page.meta.get("url") or ""
    try:
        dom = parse_html(page.html, url=url or None)
    except PageError:
        return None
    if not len(dom):
        return None
    nodes = PageNodes.from_dom(dom, url, geometry=geometry, hashes=False)
    site = page.meta.get("site") or page.id
    return PageRecord(
        dataset=dataset,
        group=f"{dataset}/{site}",
        page_id=page.id,
        url=url,
        features=node_features(nodes),
        area=nodes.area.astype(np.float32),
        label=gold_template(dom, page.gold),
        parent=nodes.parent,
        body=dom.body,
    )


def collect(
    data_dir: Path,
    datasets: Sequence[str] = DATASETS,
    geometry: str = GEOMETRY,
    limit: int | None = None,
    progress: bool = False,
) -> tuple[list[PageRecord], dict[str, dict[str, int]]]:
    """Records of every page of `datasets` under `data_dir` (sorted by dataset, then page id),
    and per dataset its page, site and skipped-page counts."""
    from tqdm import tqdm

    from newscrawl.gold.dataset import Dataset

    records: list[PageRecord] = []
    counts: dict[str, dict[str, int]] = {}
    for name in datasets:
        dataset = Dataset(Path(data_dir) / name, limit=limit)
        kept = skipped = 0
        for page in tqdm(dataset, desc=name, unit="page", disable=not progress, leave=False):
            record = page_record(name, page, geometry)
            if record is None:
                skipped += 1
                continue
            records.append(record)
            kept += 1
        sites = {r.group for r in records if r.dataset == name}
        counts[name] = {"pages": kept, "sites": len(sites), "skipped": skipped + dataset.skipped}
    return records, counts


def node_data(
    records: Sequence[PageRecord], seed: int = SEED, max_page_nodes: int = MAX_PAGE_NODES
) -> NodeData:
    """Training columns: up to `max_page_nodes` classified nodes a page, weighted so that
    every dataset weighs the same and every page the same within its dataset."""
    rng = np.random.default_rng(seed)
    pages_per_dataset: dict[str, int] = {}
    for record in records:
        pages_per_dataset[record.dataset] = pages_per_dataset.get(record.dataset, 0) + 1
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("site", "area", "x", "y", "w")}
    for record in records:
        rows = np.flatnonzero((record.area >= MIN_AREA) & np.isfinite(record.features).all(1))
        if len(rows) > max_page_nodes:
            rows = np.sort(rng.choice(rows, max_page_nodes, replace=False))
        if not len(rows):
            continue
        weight = 1.0 / (len(rows) * pages_per_dataset[record.dataset])
        parts["site"].append(np.full(len(rows), record.group, dtype=object))
        parts["area"].append(record.area[rows].astype(np.float64))
        parts["x"].append(record.features[rows].astype(np.float64))
        parts["y"].append(record.label[rows])
        parts["w"].append(np.full(len(rows), weight))
    if not parts["y"]:
        empty = np.zeros(0, dtype=object)
        return NodeData(empty, empty, np.zeros(0), np.zeros((0, len(FEATURES))), np.zeros(0, bool))
    weights = np.concatenate(parts["w"])
    weights *= len(weights) / weights.sum()  # mean 1: C keeps its meaning
    site = np.concatenate(parts["site"])
    return NodeData(
        site=site,
        kind=np.full(len(site), "all", dtype=object),
        area=np.concatenate(parts["area"]),
        features=np.concatenate(parts["x"]),
        label=np.concatenate(parts["y"]),
        weight=weights,
    )


def fit_model(
    records: Sequence[PageRecord], seed: int = SEED, threshold: float = THRESHOLD
) -> TemplateModel:
    """The area-bucketed classifiers trained on `records` (no held-out split: the honest
    figures come from `crossval`)."""
    from dataclasses import replace

    config = TrainConfig(holdout=0.0, seed=seed, geometry=GEOMETRY)
    model, _ = train(node_data(records, seed), config)
    options = {**model.options, "threshold": threshold, "order": ORDER, "labels": "gold"}
    return replace(model, options=options)


def _libraries() -> dict[str, str]:
    import lxml.etree
    import scipy
    import sklearn

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "lxml": ".".join(str(v) for v in lxml.etree.LXML_VERSION),
    }


def provenance(counts: dict[str, dict[str, int]]) -> dict[str, Any]:
    return {
        "trained_on": "real pages with gold main text (never generated pages)",
        "datasets": counts,
        "pages": sum(c["pages"] for c in counts.values()),
        "sites": sum(c["sites"] for c in counts.values()),
        "geometry": GEOMETRY,
        "features": list(FEATURES),
        "labels": "gold-aligned nodes (newscrawl.training.template_sites.gold_template)",
        "weighting": "each dataset equal total weight, each page equal within its dataset, "
        f"at most {MAX_PAGE_NODES} classified nodes a page, classes balanced",
        "threshold": THRESHOLD,
        "order": ORDER,
        "threshold_from": "site-grouped 5-fold CV: python -m newscrawl.training.template_crossval "
        "../shared/data",
        "seed": SEED,
        "libraries": _libraries(),
        "command": COMMAND,
        "function": "newscrawl.training.template_default.build_default_template_model",
    }


def build_default_template_model(data_dir: Path, out: Path) -> None:
    """Train the default template model on the six datasets under `data_dir` and write it to
    `out` (deterministic: the same data and library versions give the same bytes)."""
    default_template_model(data_dir).save(out)


def default_template_model(data_dir: Path) -> TemplateModel:
    """The default template model trained on the six datasets under `data_dir`."""
    records, counts = collect(Path(data_dir))
    if not records:
        raise ValueError(f"{data_dir}: no pages to train on")
    from dataclasses import replace

    return replace(fit_model(records), provenance=provenance(counts))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m newscrawl.training.template_default",
        description="Rebuild the default template model from the dev datasets.",
    )
    parser.add_argument("data_dir", type=Path, help="folder holding the six dataset folders")
    parser.add_argument("--out", type=Path, default=Path("models/default_template_model.json"))
    args = parser.parse_args(argv)
    try:
        build_default_template_model(args.data_dir, args.out)
    except (OSError, ValueError) as err:
        print(f"default_model: {err}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
