"""What kind of page this is: WCXB's seven page types, from the learned extractor's block rows.

The types are WCXB's (article, listing, forum, product, collection, service, documentation).
A page is described by its blocks' feature rows (`features.FEATURES`, which the learned
extractor computes anyway): their means weighted by tokens (what the page's text is made of:
list items, table cells, definition terms, forum and product markup, link density), their
plain means (what its blocks are made of), and its block count. Boosted trees, one ensemble
per type (scikit-learn's multi-class gradient boosting, exported to the same plain arrays as
the extractor's trees), score the vector; the type with the highest score is the page's.

The shipped model (models/page_type_model.json) is trained by ``newscrawl models build`` on the
pages whose meta gives a ``page_type`` (WCXB's dev split, a documentation dataset) and on
datasets typed whole with ``--page-type`` (news datasets as article), each dataset's pages of a
type weighed together (`page_weights`); its site-grouped cross-validated accuracy, by dataset
too, is printed and recorded in the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.extractors.blockmodel.block_features import FEATURES
from newscrawl.extractors.blockmodel.model import (
    ModelFileError,
    TreeEnsemble,
    read_model_json,
    write_model_json,
)
from newscrawl.models.template_model import bundled_model_path

__all__ = [
    "DATASET_POWER",
    "PAGE_TYPES",
    "PageTypeModel",
    "bundled_page_type_model",
    "crossval_page_types",
    "fit_page_types",
    "load_page_type_model",
    "page_vector",
    "page_weights",
]

PAGE_TYPES = ("article", "listing", "forum", "product", "collection", "service", "documentation")
FORMAT = "newscrawl-page-type-model"
VERSION = 1
_BUNDLED = "page_type_model.json"
_TOKENS = FEATURES.index("tokens_log")


def page_vector(rows: np.ndarray) -> np.ndarray:
    """One page's description from its block rows: token-weighted and plain column means, and
    the log of its block count (zeros for a page without blocks)."""
    width = len(FEATURES)
    if not len(rows):
        return np.zeros(2 * width + 1)
    rows = np.asarray(rows, dtype=np.float64)
    weight = np.expm1(rows[:, _TOKENS])
    total = weight.sum()
    weighted = (weight @ rows) / total if total > 0 else rows.mean(axis=0)
    return np.concatenate([weighted, rows.mean(axis=0), [np.log1p(len(rows))]])


@dataclass(frozen=True, slots=True)
class PageTypeModel:
    """One tree ensemble per page type; the best-scoring type wins."""

    classes: tuple[str, ...]
    ensembles: tuple[TreeEnsemble, ...]
    features: tuple[str, ...] = tuple(FEATURES)
    provenance: dict[str, Any] = field(default_factory=dict)

    def predict(self, vectors: np.ndarray) -> list[str]:
        """The type of each page vector (rows of `vectors`)."""
        vectors = np.atleast_2d(vectors)
        raw = np.column_stack([e.raw(vectors) for e in self.ensembles])
        return [self.classes[i] for i in raw.argmax(axis=1)]

    def page_type(self, rows: np.ndarray) -> str:
        """The type of the page whose block rows are `rows`."""
        return self.predict(page_vector(rows)[None, :])[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "classes": list(self.classes),
            "features": list(self.features),
            "ensembles": [e.to_json() for e in self.ensembles],
            "provenance": self.provenance,
        }

    def save(self, path: str | Path) -> None:
        """Write the model; the same model always gives the same bytes."""
        write_model_json(path, self.to_json())

    @classmethod
    def from_json(cls, data: Any) -> PageTypeModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ModelFileError(f"not a newscrawl page type model (format {FORMAT!r} expected)")
        if data.get("version") != VERSION:
            raise ModelFileError(f"page type model version {data.get('version')!r}")
        try:
            model = cls(
                classes=tuple(str(c) for c in data["classes"]),
                ensembles=tuple(TreeEnsemble.from_json(e) for e in data["ensembles"]),
                features=tuple(data["features"]),
                provenance=dict(data.get("provenance") or {}),
            )
        except (KeyError, TypeError, ValueError) as err:
            if isinstance(err, ModelFileError):
                raise
            raise ModelFileError(f"malformed page type model: {err}") from err
        if not model.classes or len(model.classes) != len(model.ensembles):
            raise ModelFileError("page type model: one ensemble per class expected")
        if list(model.features) != FEATURES:
            raise ModelFileError(
                "page type model features differ from this code's; rebuild it with "
                "`newscrawl models build`"
            )
        return model


def load_page_type_model(path: str | Path) -> PageTypeModel:
    """Read a page type model file; ModelFileError on anything that is not one."""
    return PageTypeModel.from_json(read_model_json(path, "page type model"))


def bundled_page_type_model() -> Path:
    """Path of the shipped page type model."""
    return bundled_model_path().with_name(_BUNDLED)


ITERATIONS = 150  # boosting iterations of the shipped model


def _classifier(iterations: int = ITERATIONS, seed: int = 0) -> Any:
    from sklearn.ensemble import HistGradientBoostingClassifier

    return HistGradientBoostingClassifier(
        max_iter=iterations,
        learning_rate=0.1,
        max_leaf_nodes=15,
        min_samples_leaf=10,
        l2_regularization=1.0,
        early_stopping=False,
        random_state=seed,
    )


# How much a dataset's pages of one type weigh together: n pages weigh n ** (1 - power). At 0
# every page weighs the same; at 1 each dataset weighs the same within a type, so a dataset of
# thousands of pages of one kind (documentation of a few generators, news) does not crowd out
# the few pages of that kind among a benchmark's seven.
DATASET_POWER = 1.0


def page_weights(
    labels: Sequence[str], datasets: Sequence[str] | None = None, power: float = DATASET_POWER
) -> np.ndarray:
    """Each page's training weight: its (dataset, type) share (`DATASET_POWER`), then every
    type weighing the same in total (balanced classes). Without `datasets`, balanced classes
    alone."""
    kinds = np.asarray(labels)
    weight = np.ones(len(kinds))
    if datasets is not None:
        cells = [f"{d}\t{k}" for d, k in zip(datasets, labels, strict=True)]
        _, index, counts = np.unique(cells, return_inverse=True, return_counts=True)
        weight = counts[index].astype(np.float64) ** -power
    classes = sorted(set(kinds.tolist()))
    for kind in classes:
        chosen = kinds == kind
        weight[chosen] *= len(kinds) / (len(classes) * weight[chosen].sum())
    return weight


def fit_page_types(
    vectors: np.ndarray,
    labels: Sequence[str],
    provenance: dict[str, Any] | None = None,
    iterations: int = ITERATIONS,
    datasets: Sequence[str] | None = None,
) -> PageTypeModel:
    """Train on page vectors with their types (at least two types); `datasets` (each page's)
    weighs each dataset's pages of a type together as `page_weights` says."""
    weight = page_weights(labels, datasets)
    model = _classifier(iterations).fit(vectors, np.asarray(labels), sample_weight=weight)
    classes = tuple(str(c) for c in model.classes_)
    if len(classes) == 2:  # scikit-learn keeps one ensemble for two classes: its negation
        one = TreeEnsemble.from_sklearn(model)
        ensembles: tuple[TreeEnsemble, ...] = (_negated(one), one)
    else:
        ensembles = tuple(TreeEnsemble.from_sklearn(model, k) for k in range(len(classes)))
    return PageTypeModel(classes, ensembles, provenance=dict(provenance or {}))


def _negated(ensemble: TreeEnsemble) -> TreeEnsemble:
    return TreeEnsemble(
        baseline=-ensemble.baseline,
        roots=ensemble.roots,
        feature=ensemble.feature,
        threshold=ensemble.threshold,
        left=ensemble.left,
        right=ensemble.right,
        value=-ensemble.value,
        depth=ensemble.depth,
    )


def crossval_page_types(
    vectors: np.ndarray,
    labels: Sequence[str],
    sites: Sequence[str],
    folds: int = 5,
    iterations: int = ITERATIONS,
    datasets: Sequence[str] | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """Each page's type predicted by a model that never saw its site (site-grouped folds),
    and the figures: accuracy, and per type its pages and recall; with `datasets` (each
    page's), weighed as `fit_page_types` weighs them, and the same figures per dataset too."""
    from newscrawl.gold.folds import group_folds

    page_folds = group_folds(sites, folds)
    predicted = [""] * len(labels)
    for k in sorted(set(page_folds.tolist())):
        test = page_folds == k
        train = [label for label, held in zip(labels, test, strict=True) if not held]
        names = None if datasets is None else [d for d, t in zip(datasets, test, strict=True)
                                               if not t]  # fmt: skip
        model = fit_page_types(vectors[~test], train, iterations=iterations, datasets=names)
        for i, kind in zip(np.flatnonzero(test), model.predict(vectors[test]), strict=True):
            predicted[i] = kind
    truth = np.asarray(labels)
    guess = np.asarray(predicted)
    figures = _type_figures(truth, guess)
    if datasets is not None and len(set(datasets)) > 1:
        of = np.asarray(datasets)
        figures["by_dataset"] = {
            name: _type_figures(truth[of == name], guess[of == name])
            for name in sorted(set(datasets))
        }
    return predicted, figures


def _type_figures(truth: np.ndarray, guess: np.ndarray) -> dict[str, Any]:
    """Pages, accuracy and recall by true type of predictions `guess`."""
    return {
        "pages": len(truth),
        "accuracy": round(float(np.mean(truth == guess)), 4),
        "recall": {
            kind: round(float(np.mean(guess[truth == kind] == kind)), 4)
            for kind in sorted(set(truth.tolist()))
        },
    }


def format_page_types(figures: dict[str, Any]) -> list[str]:
    """The cross-validated figures as lines."""
    lines = [f"page type, site-grouped CV: accuracy {figures['accuracy']:.3f} on "
             f"{figures['pages']} pages; recall by type:"]  # fmt: skip
    lines.append("  " + ", ".join(f"{k} {v:.3f}" for k, v in figures["recall"].items()))
    for name, part in figures.get("by_dataset", {}).items():
        recall = ", ".join(f"{k} {v:.3f}" for k, v in part["recall"].items())
        lines.append(f"  {name}: accuracy {part['accuracy']:.3f} on {part['pages']} pages "
                     f"({recall})")  # fmt: skip
    return lines
