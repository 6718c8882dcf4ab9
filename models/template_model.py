"""The template-model file: one JSON file per trained model.

A model is a handful of numbers (per area bucket: the standardisation and the logistic
regression's coefficients), so it is stored as readable JSON rather than a pickle: it loads
without scikit-learn, cannot run code when opened, and survives library upgrades. The file
records its format version, the feature names, the geometry provider its node boxes came from,
the bucket boundaries, the sites it was trained on, the options it was trained with (among them
the filter threshold, when one was chosen), the training metrics and its provenance (datasets,
library versions, the command that rebuilds it).

A model is only meaningful with the features and the geometry it was trained on: `check_model`
raises `ModelError` when the running configuration differs (files from before the geometry was
recorded were all trained on ``static`` boxes).

::

    {"format": "newscrawl-template-model", "version": 1, "features": [...], "geometry": "flow",
     "boundaries": [2000, 5182, 12504, 42663], "buckets": [{"mean": [...], "scale": [...],
     "coef": [...], "intercept": -1.2, "nodes": 1234, "template_share": 0.4}, ...],
     "training_sites": [...], "kind": "all", "options": {...}, "metrics": {...},
     "provenance": {"datasets": {...}, "libraries": {...}, "command": "..."}}
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.template.buckets import bucket_of

__all__ = [
    "FORMAT",
    "VERSION",
    "BucketModel",
    "ModelError",
    "TemplateModel",
    "bundled_model_path",
    "check_features",
    "check_geometry",
    "check_model",
    "load_model",
]

FORMAT = "newscrawl-template-model"
VERSION = 1
_BUNDLED = "default_template_model.json"
LEGACY_GEOMETRY = "static"  # what a file without a "geometry" key was trained on


class ModelError(ValueError):
    """A model file that is missing, unreadable, or not a newscrawl template model."""


@dataclass(frozen=True, slots=True)
class BucketModel:
    """Logistic regression on standardised features: p = σ(((x − mean) / scale) · coef + b)."""

    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    nodes: int = 0
    template_share: float = 0.0

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Probability of "template" per row of `features` (n, len(coef))."""
        z = (features - np.asarray(self.mean)) / np.asarray(self.scale)
        logit = z @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-np.clip(logit, -500, 500)))

    @classmethod
    def constant(cls, share: float, width: int, nodes: int = 0) -> BucketModel:
        """A bucket whose training nodes were all one class: always predicts that share."""
        p = min(max(share, 1e-6), 1 - 1e-6)
        zeros = (0.0,) * width
        return cls(zeros, (1.0,) * width, zeros, math.log(p / (1 - p)), nodes, share)


@dataclass(frozen=True, slots=True)
class TemplateModel:
    """Area-bucketed template classifiers (Chakrabarti, Kumar and Punera) and what they were
    trained on."""

    features: tuple[str, ...]
    boundaries: tuple[float, ...]
    buckets: tuple[BucketModel | None, ...]
    training_sites: tuple[str, ...] = ()
    kind: str = "all"
    options: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    version: int = VERSION
    geometry: str = LEGACY_GEOMETRY
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def threshold(self) -> float:
        """The filter threshold on smoothed scores the model was shipped with (0.5: the study's)."""
        return float(self.options.get("threshold", 0.5))

    @property
    def min_area(self) -> float:
        """The smallest node area (px²) the model was trained on and classifies: what it was
        trained with (`options.min_area`), else its first bucket boundary."""
        return float(self.options.get("min_area", self.boundaries[0]))

    def bucket_of(self, area: np.ndarray) -> np.ndarray:
        """Bucket index per node, -1 below the first boundary."""
        return bucket_of(area, self.boundaries)

    def scores(self, features: np.ndarray, area: np.ndarray) -> np.ndarray:
        """Template probability per node; NaN where no classifier applies (too small a node)."""
        features = np.asarray(features, dtype=np.float64)
        out = np.full(len(features), np.nan)
        buckets = self.bucket_of(area)
        for index, model in enumerate(self.buckets):
            rows = buckets == index
            if model is not None and rows.any():
                out[rows] = model.predict(features[rows])
        return out

    # -- file ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": self.version,
            "features": list(self.features),
            "geometry": self.geometry,
            "boundaries": list(self.boundaries),
            "buckets": [asdict(b) if b is not None else None for b in self.buckets],
            "training_sites": list(self.training_sites),
            "kind": self.kind,
            "options": self.options,
            "metrics": self.metrics,
            "provenance": self.provenance,
        }

    def save(self, path: str | Path) -> Path:
        """Write the model as one JSON file (atomically: a half-written file never appears)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n", "utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def from_json(cls, data: Any, source: str = "model") -> TemplateModel:
        if isinstance(data, dict) and data.get("format") == "newscrawl-extractor-model":
            raise ModelError(
                f"{source}: an extractor model (newscrawl models build), not a template model: "
                "give it to the learned extractor with --extractor-model"
            )
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ModelError(f"{source}: not a newscrawl template model")
        version = data.get("version")
        if not isinstance(version, int) or version > VERSION:
            raise ModelError(
                f"{source}: model format version {version!r}; this newscrawl reads up to {VERSION}"
            )
        try:
            features = tuple(str(f) for f in data["features"])
            boundaries = tuple(float(b) for b in data["boundaries"])
            buckets = tuple(_bucket(b, len(features)) for b in data["buckets"])
        except (KeyError, TypeError, ValueError) as err:
            raise ModelError(f"{source}: malformed model ({err})") from None
        if len(buckets) != len(boundaries):
            raise ModelError(f"{source}: {len(buckets)} buckets for {len(boundaries)} boundaries")
        _check_boundaries(boundaries, source)
        options = data.get("options") or {}
        if not isinstance(options, dict):
            raise ModelError(f"{source}: options must be an object, not {options!r}")
        _check_options(options, source)
        return cls(
            features=features,
            boundaries=boundaries,
            buckets=buckets,
            training_sites=tuple(data.get("training_sites") or ()),
            kind=str(data.get("kind") or "all"),
            options=dict(options),
            metrics=dict(data.get("metrics") or {}),
            version=version,
            geometry=_geometry(data.get("geometry"), source),
            provenance=dict(data.get("provenance") or {}),
        )

    @classmethod
    def load(cls, path: str | Path) -> TemplateModel:
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ModelError(f"{path}: no such model file") from None
        except (OSError, UnicodeDecodeError) as err:
            raise ModelError(f"{path}: cannot read model file: {err}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise ModelError(f"{path}: not a newscrawl template model (bad JSON: {err})") from None
        return cls.from_json(data, str(path))


def _check_boundaries(boundaries: tuple[float, ...], source: str) -> None:
    """Bucket boundaries must be finite, not negative and increasing: `bucket_of` bisects them,
    so reversed ones would silently put every node in the wrong bucket or none."""
    shown = list(boundaries)
    if not shown:
        raise ModelError(f"{source}: boundaries is empty (one area boundary per bucket needed)")
    if not all(math.isfinite(b) and b >= 0 for b in boundaries):
        raise ModelError(f"{source}: boundaries must be finite areas of 0 or more: {shown}")
    if any(a >= b for a, b in pairwise(boundaries)):
        raise ModelError(f"{source}: boundaries must increase: {shown}")


def _check_options(options: dict[str, Any], source: str) -> None:
    """The options extraction reads as numbers: a hand-edited value is refused here, naming the
    file and the field, rather than failing on the first page (or, as NaN or 2.0 would, leaving
    the filter inert)."""
    if "threshold" in options:
        value = _number(options["threshold"], "options.threshold", source)
        if not 0 < value <= 1:
            raise ModelError(
                f"{source}: options.threshold must be in (0, 1] (a template score), not {value}"
            )
    if "min_area" in options:
        value = _number(options["min_area"], "options.min_area", source)
        if value < 0:
            raise ModelError(f"{source}: options.min_area must be 0 or more, not {value}")


def _number(value: Any, name: str, source: str) -> float:
    """`value` as a finite float; a ModelError naming the field otherwise (JSON true is not 1)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ModelError(f"{source}: {name} must be a finite number, not {json.dumps(value)}")
    return float(value)


def _geometry(value: Any, source: str) -> str:
    """The model's geometry provider, one newscrawl knows: an unknown one is refused when the
    file is loaded instead of on every page extracted with it."""
    # imported here: the providers pull in their layout code, which only a model's user needs
    from newscrawl.template.geometry import PROVIDERS

    if value is None or value == "":
        return LEGACY_GEOMETRY
    name = value.strip().lower() if isinstance(value, str) else None
    if name is None or name not in PROVIDERS:
        raise ModelError(
            f"{source}: geometry {value!r} is not a geometry provider (known: "
            f"{', '.join(sorted(PROVIDERS))})"
        )
    return name


def _bucket(data: Any, width: int) -> BucketModel | None:
    if data is None:
        return None
    fields_ = {k: data[k] for k in ("mean", "scale", "coef")}
    vectors = {k: tuple(float(v) for v in fields_[k]) for k in fields_}
    if any(len(v) != width for v in vectors.values()):
        raise ValueError("bucket vectors do not match the feature count")
    return BucketModel(
        mean=vectors["mean"],
        scale=tuple(s if s > 0 else 1.0 for s in vectors["scale"]),
        coef=vectors["coef"],
        intercept=float(data["intercept"]),
        nodes=int(data.get("nodes", 0)),
        template_share=float(data.get("template_share", 0.0)),
    )


def bundled_model_path() -> Path:
    """The default model shipped in this package (trained on the six real dev datasets; rebuild
    with `newscrawl.training.template_default.build_default_template_model`)."""
    return Path(__file__).with_name(_BUNDLED)


def load_model(path: str | Path | None = None) -> TemplateModel:
    """Load a model file; None loads the bundled default model."""
    return TemplateModel.load(bundled_model_path() if path is None else path)


def check_features(model: TemplateModel, expected: Sequence[str]) -> None:
    """Raise ModelError when `model` was trained on other features than `expected`."""
    if tuple(expected) != model.features:
        raise ModelError(
            f"model features {list(model.features)} differ from this newscrawl's {list(expected)}"
        )


def check_geometry(model: TemplateModel, geometry: str) -> None:
    """Raise ModelError when `model` was trained on boxes of another geometry provider."""
    if (geometry or "").strip().lower() != model.geometry:
        raise ModelError(
            f"model trained on {model.geometry!r} geometry, but this run uses {geometry!r}: "
            f"its area buckets and position features do not carry over (choose geometry "
            f"{model.geometry!r} or a model trained on {geometry!r} boxes)"
        )


def check_model(model: TemplateModel, features: Sequence[str], geometry: str) -> None:
    """`check_features` and `check_geometry`: the model fits the running configuration."""
    check_features(model, features)
    check_geometry(model, geometry)
