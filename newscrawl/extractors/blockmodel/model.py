"""The learned extractor's model file: boosted trees as plain JSON, and a numpy predictor for them.

The classifier is scikit-learn's `HistGradientBoostingClassifier`, but a shipped model must
load without scikit-learn's pickles (which break across versions and run code when opened), so
each fitted ensemble is exported to arrays: per node its feature, threshold, children, and leaf
value. `TreeEnsemble.predict` walks every tree for a batch of rows: in C (`_treewalk.c`, built
by pip when a C compiler is there) or, without it, with numpy, every tree at once, one step per
tree level. Both reach the same leaves and sum them the same way, so scores are identical.

A model holds one or more *stages*: stage 1 scores blocks from their own features; each later
stage also sees the previous stage's scores of the neighbouring blocks (`stacking.py`), which
is how the selection becomes coherent. The file records the feature list, the decision
threshold, and its provenance (datasets, counts, library versions, the command that rebuilt it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.models.template_model import bundled_model_path

try:  # the compiled walk (an optional extension: pip builds it where a C compiler is found)
    from newscrawl.extractors.blockmodel._treewalk import leaf_values as _compiled_leaf_values
except ImportError:  # pragma: no cover - exercised where the extension was not built
    _compiled_leaf_values = None

#: Whether `TreeEnsemble` walks its trees in compiled code (else in numpy, at about a third of
#: the speed; `newscrawl bench extract` says which).
COMPILED_WALK = _compiled_leaf_values is not None

__all__ = [
    "COMPILED_WALK",
    "FORMAT",
    "VERSION",
    "ExtractorModel",
    "ModelFileError",
    "TreeEnsemble",
    "bundled_extractor_model",
    "load_extractor_model",
    "read_model_json",
    "write_model_json",
]

FORMAT = "newscrawl-extractor-model"
VERSION = 1
_BUNDLED = "extractor_model.json"


class ModelFileError(ValueError):
    """A model file that is missing, unreadable, or does not fit the running code."""


@dataclass(frozen=True, slots=True)
class TreeEnsemble:
    """Boosted binary-classification trees, flattened into one set of node arrays.

    Leaves point to themselves and compare against +inf, so walking a fixed number of levels
    (`depth`) leaves every row on its leaf whatever the tree's shape.
    """

    baseline: float
    roots: np.ndarray  # (trees,) node index of each tree's root
    feature: np.ndarray  # (nodes,) feature compared at the node
    threshold: np.ndarray  # (nodes,) go left when value <= threshold
    left: np.ndarray
    right: np.ndarray
    value: np.ndarray  # (nodes,) leaf values (0 on split nodes)
    depth: int
    # The walk's int64 arrays, made once (`__post_init__`) rather than on every call.
    _walk: tuple[np.ndarray, np.ndarray, np.ndarray] = field(init=False, repr=False, compare=False)
    _width: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Children sit side by side (left at 2i, right at 2i + 1), so a level is one take of
        # the child, not two takes and a select.
        children = np.empty(2 * len(self.left), dtype=np.int64)
        children[0::2] = self.left
        children[1::2] = self.right
        walk = (children, self.feature.astype(np.int64), self.roots.astype(np.int64))
        object.__setattr__(self, "_walk", walk)
        # rows need more columns than the widest feature any node reads
        object.__setattr__(self, "_width", int(walk[1].max()) + 1 if len(walk[1]) else 0)

    def raw(self, rows: np.ndarray, compiled: bool = COMPILED_WALK) -> np.ndarray:
        """Log-odds of each row of `rows` (n, features); NaN counts as 0. `compiled`: False
        walks in numpy even where the C walk is built (the tests compare the two)."""
        n, width = rows.shape
        if n == 0:
            return np.zeros(0)
        if width < self._width:
            # the numpy walk would read the next row's values: refused, as the C walk does
            raise ValueError(f"rows of {width} features for trees that read more")
        values = np.ascontiguousarray(rows, dtype=np.float64)
        if not np.isfinite(values).all():  # nan_to_num copies; feature rows are finite
            values = np.nan_to_num(values)
        if compiled and _compiled_leaf_values is not None:
            leaves = np.empty((n, len(self.roots)))
            children, feature, roots = self._walk
            _compiled_leaf_values(
                values, width, roots, feature, self.threshold, children, self.value, self.depth,
                leaves,
            )  # fmt: skip
        else:
            leaves = self._numpy_leaves(values.ravel(), n, width)
        return self.baseline + leaves.sum(axis=1)

    def _numpy_leaves(self, values: np.ndarray, n: int, width: int) -> np.ndarray:
        """The value of the leaf each row reaches in each tree, (n, trees): one flat (row,
        tree) walk, as np.take on 1-D int64-indexed arrays is far cheaper than 2-D indexing."""
        trees = len(self.roots)
        children, feature, roots = self._walk
        threshold = self.threshold
        node = np.tile(roots, n)
        row_start = np.repeat(np.arange(n, dtype=np.int64) * width, trees)
        for _ in range(self.depth):
            right = values.take(row_start + feature.take(node)) > threshold.take(node)
            node = children.take(2 * node + right)
        return self.value.take(node).reshape(n, trees)

    def predict(self, rows: np.ndarray) -> np.ndarray:
        """Probability of the positive class ("main text") of each row."""
        return 1.0 / (1.0 + np.exp(-self.raw(rows)))

    @classmethod
    def from_sklearn(cls, model: Any, klass: int = 0) -> TreeEnsemble:
        """Export a fitted binary `HistGradientBoostingClassifier` trained without NaNs (or,
        of a multi-class one, the trees of class number `klass`)."""
        trees = [predictors[klass].nodes for predictors in model._predictors]
        baseline = float(np.ravel(model._baseline_prediction)[klass])
        parts: dict[str, list[Any]] = {k: [] for k in ("f", "t", "l", "r", "v")}
        roots, offset, depth = [], 0, 0
        for nodes in trees:
            roots.append(offset)
            leaf = nodes["is_leaf"].astype(bool)
            own = np.arange(len(nodes)) + offset
            parts["f"].append(np.where(leaf, 0, nodes["feature_idx"]))
            parts["t"].append(np.where(leaf, np.inf, nodes["num_threshold"]))
            parts["l"].append(np.where(leaf, own, nodes["left"] + offset))
            parts["r"].append(np.where(leaf, own, nodes["right"] + offset))
            parts["v"].append(np.where(leaf, nodes["value"], 0.0))
            depth = max(depth, _tree_depth(nodes))
            offset += len(nodes)
        return cls._from_parts(baseline, roots, parts, depth)

    @classmethod
    def _from_parts(
        cls, baseline: float, roots: Sequence[int], parts: dict[str, list[Any]], depth: int
    ) -> TreeEnsemble:
        def join(key: str, dtype: Any) -> np.ndarray:
            return np.concatenate([np.asarray(p, dtype=dtype) for p in parts[key]])

        return cls(
            baseline=baseline,
            roots=np.asarray(roots, dtype=np.int32),
            feature=join("f", np.int32),
            threshold=join("t", np.float64),
            left=join("l", np.int32),
            right=join("r", np.int32),
            value=join("v", np.float64),
            depth=depth,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "depth": self.depth,
            "roots": self.roots.tolist(),
            "feature": self.feature.tolist(),
            "threshold": [_number(t) for t in self.threshold.tolist()],
            "left": self.left.tolist(),
            "right": self.right.tolist(),
            "value": self.value.tolist(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TreeEnsemble:
        parts = {
            "f": [data["feature"]],
            "t": [[math.inf if t is None else t for t in data["threshold"]]],
            "l": [data["left"]],
            "r": [data["right"]],
            "v": [data["value"]],
        }
        ensemble = cls._from_parts(
            float(data["baseline"]), data["roots"], parts, int(data["depth"])
        )
        ensemble.check()
        return ensemble

    def check(self) -> None:
        """Raise ModelFileError when the arrays do not describe trees."""
        n = len(self.feature)
        sizes = {len(a) for a in (self.threshold, self.left, self.right)}
        if sizes != {n} or len(self.value) != n:
            raise ModelFileError("tree arrays of different lengths")
        for links in (self.roots, self.left, self.right):
            if len(links) and (links.min() < 0 or links.max() >= n):
                raise ModelFileError("tree node index out of range")


def _number(value: float) -> float | None:
    """JSON has no infinity: leaves' +inf thresholds are stored as null."""
    return None if math.isinf(value) else value


def _tree_depth(nodes: np.ndarray) -> int:
    depth = np.zeros(len(nodes), dtype=np.int32)
    for i in range(len(nodes)):  # children always come after their parent
        if not nodes["is_leaf"][i]:
            depth[nodes["left"][i]] = depth[nodes["right"][i]] = depth[i] + 1
    return int(depth.max()) if len(depth) else 0


@dataclass(frozen=True, slots=True)
class ExtractorModel:
    """Stages of boosted trees over block features, a threshold and where the model came from."""

    features: tuple[str, ...]
    stages: tuple[TreeEnsemble, ...]
    threshold: float
    provenance: dict[str, Any] = field(default_factory=dict)
    context: tuple[str, ...] = ()  # what later stages add to `features` (stacking.py)
    # the recall guard's settings (`guard.GuardParams`); {} for the code's defaults
    guard: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "features": list(self.features),
            "context_features": list(self.context),
            "threshold": self.threshold,
            "provenance": self.provenance,
            "stages": [stage.to_json() for stage in self.stages],
            **({"guard": dict(self.guard)} if self.guard else {}),
        }

    def save(self, path: str | Path) -> None:
        """Write the model; the same model always gives the same bytes."""
        write_model_json(path, self.to_json())

    @classmethod
    def from_json(cls, data: Any) -> ExtractorModel:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ModelFileError(f"not a newscrawl extractor model (format {FORMAT!r} expected)")
        if data.get("version") != VERSION:
            raise ModelFileError(
                f"model version {data.get('version')!r}; this code reads {VERSION}"
            )
        try:
            stages = tuple(TreeEnsemble.from_json(s) for s in data["stages"])
            if not stages:  # it would score every block 0: an empty text for every page
                raise ModelFileError("extractor model without stages")
            return cls(
                features=tuple(data["features"]),
                context=tuple(data.get("context_features") or ()),
                stages=stages,
                threshold=float(data["threshold"]),
                provenance=dict(data.get("provenance") or {}),
                guard=_guard(data.get("guard")),
            )
        except (KeyError, TypeError, ValueError) as err:
            if isinstance(err, ModelFileError):
                raise
            raise ModelFileError(f"malformed extractor model: {err}") from err

    def check_features(self, expected: Sequence[str], context: Sequence[str] = ()) -> None:
        """Raise ModelFileError unless the model was trained on exactly `expected` features,
        and its later stages on exactly `context` ones."""
        have = [*self.features, *(self.context if len(self.stages) > 1 else ())]
        want = [*expected, *(context if len(self.stages) > 1 else ())]
        if have != want:
            missing = sorted(set(want) - set(have))
            extra = sorted(set(have) - set(want))
            detail = f"missing {missing[:5]}, unknown {extra[:5]}" if missing or extra else "order"
            raise ModelFileError(
                f"extractor model features differ from this code's ({detail}); rebuild it with "
                "`newscrawl models build`"
            )


def _guard(data: Any) -> dict[str, float]:
    """A model file's guard settings: names to numbers (ModelFileError for anything else)."""
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        for v in data.values()
    ):
        raise ModelFileError("malformed extractor model: guard must map names to numbers")
    return {str(k): float(v) for k, v in data.items()}


def write_model_json(path: str | Path, data: dict[str, Any]) -> None:
    """Write a model file's JSON: compact, keys sorted, so the same model gives the same bytes."""
    text = json.dumps(data, separators=(",", ":"), sort_keys=True)
    Path(path).write_text(text + "\n", encoding="utf-8")


def read_model_json(path: str | Path, what: str) -> Any:
    """The JSON of a model file (`what`: its kind, for the message); ModelFileError when it
    is missing or not readable JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelFileError(f"no {what} at {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ModelFileError(f"cannot read {what} {path}: {err}") from err


def load_extractor_model(path: str | Path) -> ExtractorModel:
    """Read a model file; ModelFileError on anything that is not a readable model."""
    return ExtractorModel.from_json(read_model_json(path, "extractor model"))


def bundled_extractor_model() -> Path:
    """Path of the shipped default extractor model."""
    # the shipped models live side by side in the newscrawl.models package
    return bundled_model_path().with_name(_BUNDLED)
