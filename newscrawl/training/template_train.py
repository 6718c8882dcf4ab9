"""Training stage: one logistic regression per node-area bucket, from SiteLevel labels.

The classifiers of Chakrabarti, Kumar and Punera (WWW 2007).

Input is the `nodes` dataset (`newscrawl sitelevel` or a crawl writes it): per node its seven
features, its area and its SiteLevel label. The bucket boundaries are fitted the study's way
(`buckets.fit_boundaries`), nodes below the first boundary are not used, and each bucket gets a
standardised scikit-learn `LogisticRegression`. Quality is measured on held-out *sites* - a
site's template is learnt from the site itself by SiteLevel, so scoring on nodes of training
sites would flatter the model - then the model is refitted on every site.

`kind` selects the training sites as in the study: "news", "blog" (or "blogs") or "all".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from newscrawl.gold.metric import class_figures
from newscrawl.models.template_model import VERSION, BucketModel, TemplateModel
from newscrawl.template.buckets import MIN_AREA, bucket_of, fit_boundaries
from newscrawl.template.node_features import FEATURES, node_features
from newscrawl.template.node_records import PageNodes
from newscrawl.template.page_sources import SourceError, dataset_files, parquet_rows

__all__ = [
    "KINDS",
    "NodeData",
    "TrainConfig",
    "TrainError",
    "TrainReport",
    "check_nodes",
    "pages_data",
    "read_nodes",
    "recorded_geometries",
    "resolve_geometry",
    "train",
    "training_rows",
]

# --kind value -> the `kind` column values it keeps (None: all). "blog" is what `newscrawl
# sitelevel --kind` and the crawl write; "blogs" was this option's first spelling.
KINDS: dict[str, str | None] = {"all": None, "news": "news", "blog": "blog", "blogs": "blog"}


_NODES_ARE = "NODES must be `nodes` datasets written by a crawl or `newscrawl sitelevel`"


class TrainError(ValueError):
    """Nothing to train on (no nodes, no labelled nodes of the requested kind, bad input)."""


@dataclass(frozen=True, slots=True)
class TrainConfig:
    kind: str = "all"
    holdout: float = 0.2  # share of sites held out for the quality figures
    seed: int = 0
    min_area: float = MIN_AREA
    C: float = 1.0  # inverse regularisation strength of each logistic regression
    max_nodes: int = 1_000_000  # per bucket: a larger bucket is subsampled (uniformly)
    # Weight the two classes equally (scikit-learn class_weight="balanced"). Template nodes are
    # most nodes, so the study's unweighted fit calls almost everything template; weighted, it
    # keeps far more content (docs/experiments.md), which is what extraction needs. False
    # reproduces the study.
    balanced: bool = True
    # the provider the nodes' boxes came from, recorded in the model; None: what the nodes
    # record (static for nodes written before they recorded it)
    geometry: str | None = None
    # False: the held-out sites stay out of the final fit too (`newscrawl train --hold-back`),
    # so `newscrawl models compare` can score the model on sites it never saw
    refit_all: bool = True


@dataclass(slots=True)
class NodeData:
    """The training columns of a `nodes` dataset as numpy arrays."""

    site: np.ndarray  # str, one per node
    kind: np.ndarray  # str
    area: np.ndarray  # float64
    features: np.ndarray  # float64 (n, 7)
    label: np.ndarray  # bool
    weight: np.ndarray | None = None  # float64 sample weight per node (None: all 1)
    geometries: tuple[str, ...] = ()  # the providers the boxes came from, as recorded

    def __len__(self) -> int:
        return len(self.label)

    def subset(self, rows: np.ndarray) -> NodeData:
        return NodeData(
            self.site[rows],
            self.kind[rows],
            self.area[rows],
            self.features[rows],
            self.label[rows],
            None if self.weight is None else self.weight[rows],
            self.geometries,
        )


@dataclass(slots=True)
class TrainReport:
    """What the training report prints and the model file keeps as `metrics`."""

    sites: int  # of the final fit (without the held-back sites)
    nodes: int  # of the final fit
    boundaries: tuple[float, ...]
    buckets: list[dict[str, Any]] = field(default_factory=list)
    holdout: dict[str, Any] = field(default_factory=dict)
    held_back: int = 0  # held-out sites also left out of the final fit (`--hold-back`)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sites": self.sites,
            "nodes": self.nodes,
            "held_back": self.held_back,
            "buckets": self.buckets,
            "holdout": self.holdout,
        }

    def lines(self) -> list[str]:
        plural = "s" if self.held_back > 1 else ""
        held_back = f" ({self.held_back} held-out site{plural} held back)" if self.held_back else ""
        out = [
            f"trained on {self.nodes:,} nodes of {self.sites} sites{held_back}; area buckets "
            "(px²): " + ", ".join(f"{b:g}" for b in self.boundaries)
        ]
        out.append(f"{'bucket':<22}{'nodes':>10}{'template':>10}{'accuracy':>10}")
        for b in self.buckets:
            share = f"{b['template_share']:.1%}" if b["nodes"] else "-"
            acc = f"{b['accuracy']:.3f}" if b.get("accuracy") is not None else "-"
            out.append(f"{b['range']:<22}{b['nodes']:>10,}{share:>10}{acc:>10}")
        h = self.holdout
        if h.get("sites"):
            out.append(
                f"held-out sites ({h['sites']}, {h['nodes']:,} nodes): accuracy "
                f"{h['accuracy']:.3f}, template precision {h['precision']:.3f} recall "
                f"{h['recall']:.3f} F {h['f1']:.3f}"
            )
        else:
            out.append("held-out sites: none (need at least 2 sites)")
        return out


def training_rows(
    kind: np.ndarray, area: np.ndarray, features: np.ndarray, wanted: str, min_area: float
) -> np.ndarray:
    """bool per node: in the training set - of the `wanted` kind ("all", "news", "blog"), an
    area of at least `min_area` and finite features. The one rule `train` and the Dask
    `TrainingSet` stage (what `newscrawl train` assembles its set with) apply."""
    if wanted not in KINDS:
        raise TrainError(f"unknown kind {wanted!r} (known: {', '.join(KINDS)})")
    rows = np.isfinite(features).all(axis=1) & (np.asarray(area, dtype=np.float64) >= min_area)
    if KINDS[wanted] is not None:
        rows &= np.asarray(kind, dtype=object) == KINDS[wanted]
    return rows


def read_nodes(paths: Sequence[str | Path]) -> NodeData:
    """Read the training columns of one or more `nodes` datasets (Parquet files or folders)."""
    import pyarrow as pa

    from newscrawl.storage.datasets import open_parquet
    from newscrawl.template.node_table import NODES_PARTITION_BY

    columns = ["site", "kind", "area", *FEATURES, "label"]
    tables = []
    geometries: set[str] = set()
    for path in paths:
        path = Path(path)
        check_nodes(path)
        try:
            dataset = open_parquet(path, NODES_PARTITION_BY)
            missing = [c for c in columns if c not in dataset.schema.names]
            if missing:
                raise TrainError(f"{path}: not a nodes dataset (no {', '.join(missing)} column)")
            tables.append(dataset.to_table(columns=columns))
            geometries.update(_dataset_geometries(dataset))
        except (pa.ArrowInvalid, OSError) as err:
            raise TrainError(f"{path}: cannot read nodes dataset: {err}") from None
    if not tables:
        raise TrainError("no nodes dataset given")
    table = pa.concat_tables([t.cast(tables[0].schema) for t in tables])
    return NodeData(
        site=np.asarray(table.column("site").to_pylist(), dtype=object),
        kind=np.asarray(table.column("kind").to_pylist(), dtype=object),
        area=table.column("area").to_numpy().astype(np.float64),
        features=np.column_stack([table.column(f).to_numpy().astype(np.float64) for f in FEATURES])
        if len(table)
        else np.zeros((0, len(FEATURES))),
        label=table.column("label").to_numpy(zero_copy_only=False).astype(bool),
        geometries=tuple(sorted(geometries)),
    )


def check_nodes(path: Path) -> None:
    """A TrainError saying what is wrong unless `path` is a nodes dataset to read whole: it
    exists, holds rows, and every file of it is readable Parquet (a damaged file is refused by
    name, not skipped: skipped, its sites would silently lose nodes)."""
    if not path.exists():
        raise TrainError(f"{path}: no such file or directory")
    try:
        rows = parquet_rows(path)
    except SourceError as err:
        raise TrainError(f"{err}; {_NODES_ARE}") from None
    if not rows:
        what = "its Parquet files have no rows" if dataset_files(path) else "no Parquet files"
        raise TrainError(f"{path}: holds no nodes rows ({what}); {_NODES_ARE}")


def recorded_geometries(paths: Sequence[str | Path]) -> tuple[str, ...]:
    """The geometry providers `nodes` datasets record, sorted (none for datasets written
    before nodes recorded them)."""
    import pyarrow as pa

    from newscrawl.storage.datasets import open_parquet
    from newscrawl.template.node_table import NODES_PARTITION_BY

    found: set[str] = set()
    for path in paths:
        check_nodes(Path(path))
        try:
            dataset = open_parquet(Path(path), NODES_PARTITION_BY)
            found.update(_dataset_geometries(dataset))
        except (pa.ArrowInvalid, OSError) as err:
            raise TrainError(f"{path}: cannot read nodes dataset: {err}") from None
    return tuple(sorted(found))


def _dataset_geometries(dataset: Any) -> set[str]:
    """The providers an opened `nodes` dataset records in its geometry column (none before
    nodes recorded them)."""
    import pyarrow.compute as pc

    if "geometry" not in dataset.schema.names:
        return set()
    column = dataset.to_table(columns=["geometry"]).column("geometry")
    return {g for g in pc.unique(column).to_pylist() if g}


def resolve_geometry(data: NodeData, asked: str | None) -> str:
    """The geometry provider a model trained on `data` is for: the one its nodes record; a
    clear error when they record several, or another than `asked` (`--geometry`)."""
    if len(data.geometries) > 1:
        found = ", ".join(data.geometries)
        raise TrainError(f"the nodes' boxes come from several geometry providers ({found})")
    if data.geometries and asked and asked != data.geometries[0]:
        raise TrainError(
            f"the nodes' boxes came from the {data.geometries[0]!r} geometry provider, "
            f"not {asked!r}: train without --geometry, or write the nodes with {asked!r}"
        )
    return data.geometries[0] if data.geometries else (asked or "static")


def pages_data(
    sites: Iterable[tuple[str, str, Sequence[PageNodes], Sequence[np.ndarray]]],
) -> NodeData:
    """Training columns straight from node records: (site, kind, pages, SiteLevel labels) per
    site. What `read_nodes` gives from a `nodes` dataset, without writing one."""
    parts: dict[str, list[np.ndarray]] = {
        k: [] for k in ("site", "kind", "area", "features", "label")
    }
    providers: set[str] = set()
    for site, kind, pages, labels in sites:
        for page, label in zip(pages, labels, strict=True):
            providers.add(page.geometry)
            n = len(page)
            parts["site"].append(np.full(n, site, dtype=object))
            parts["kind"].append(np.full(n, kind, dtype=object))
            parts["area"].append(page.area.astype(np.float64))
            parts["features"].append(node_features(page).astype(np.float64))
            parts["label"].append(np.asarray(label, dtype=bool))
    if not parts["label"]:
        empty = np.zeros(0, dtype=object)
        return NodeData(empty, empty, np.zeros(0), np.zeros((0, len(FEATURES))), np.zeros(0, bool))
    arrays = {k: np.concatenate(v) for k, v in parts.items()}
    return NodeData(**arrays, geometries=tuple(sorted(providers)))


def _fit_bucket(
    features: np.ndarray,
    label: np.ndarray,
    config: TrainConfig,
    weight: np.ndarray | None = None,
) -> BucketModel:
    """Standardise, then fit one logistic regression; a one-class bucket predicts its class.
    `weight`: sample weights (the standardisation stays unweighted)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    share = float(label.mean())
    width = features.shape[1]
    if share in (0.0, 1.0):
        return BucketModel.constant(share, width, nodes=len(label))
    scaler = StandardScaler().fit(features)
    model = LogisticRegression(
        C=config.C, max_iter=1000, class_weight="balanced" if config.balanced else None
    )
    model.fit(scaler.transform(features), label, sample_weight=weight)
    return BucketModel(
        mean=tuple(float(v) for v in scaler.mean_),
        scale=tuple(float(v) for v in scaler.scale_),
        coef=tuple(float(v) for v in model.coef_[0]),
        intercept=float(model.intercept_[0]),
        nodes=len(label),
        template_share=share,
    )


def _fit(
    data: NodeData,
    boundaries: tuple[float, ...],
    config: TrainConfig,
    step: Callable[[], None],
) -> tuple[BucketModel | None, ...]:
    bucket = bucket_of(data.area, boundaries)
    rng = np.random.default_rng(config.seed)
    models: list[BucketModel | None] = []
    for index in range(len(boundaries)):
        rows = np.flatnonzero(bucket == index)
        if len(rows) > config.max_nodes:
            rows = np.sort(rng.choice(rows, config.max_nodes, replace=False))
        weight = None if data.weight is None else data.weight[rows]
        models.append(
            _fit_bucket(data.features[rows], data.label[rows], config, weight)
            if len(rows)
            else None
        )
        step()
    return tuple(models)


def _split_sites(sites: np.ndarray, config: TrainConfig) -> tuple[set[str], set[str]]:
    """Training and held-out site names (at least one of each when there are 2+ sites)."""
    names = sorted(set(sites))
    if len(names) < 2 or config.holdout <= 0:
        return set(names), set()
    rng = np.random.default_rng(config.seed)
    order = rng.permutation(len(names))
    held = max(1, min(len(names) - 1, round(config.holdout * len(names))))
    return {names[i] for i in order[held:]}, {names[i] for i in order[:held]}


def _model(
    buckets: tuple[BucketModel | None, ...],
    boundaries: tuple[float, ...],
    sites: Iterable[str],
    config: TrainConfig,
) -> TemplateModel:
    return TemplateModel(
        features=FEATURES,
        boundaries=boundaries,
        buckets=buckets,
        training_sites=tuple(sorted(sites)),
        kind=config.kind,
        geometry=config.geometry or "static",
        options={
            "relative_distances": True,
            "C": config.C,
            "min_area": config.min_area,
            "balanced": config.balanced,
        },
        version=VERSION,
    )


def train(
    data: NodeData, config: TrainConfig | None = None, progress: bool = False
) -> tuple[TemplateModel, TrainReport]:
    """Fit the bucketed classifiers on `data`; returns the model (with its metrics) and report."""
    from tqdm import tqdm

    config = config or TrainConfig()
    if config.kind not in KINDS:
        raise TrainError(f"unknown kind {config.kind!r} (known: {', '.join(KINDS)})")
    config = replace(config, geometry=resolve_geometry(data, config.geometry))
    rows = training_rows(data.kind, data.area, data.features, config.kind, config.min_area)
    data = data.subset(np.flatnonzero(rows))
    if not len(data):
        raise TrainError(f"no nodes of at least {config.min_area:g} px² for kind {config.kind!r}")
    by_site: dict[str, list[int]] = {}
    for i, site in enumerate(data.site):
        by_site.setdefault(site, []).append(i)
    boundaries = fit_boundaries((data.area[r] for r in by_site.values()), config.min_area)
    train_sites, held_sites = _split_sites(data.site, config)
    bar = tqdm(
        total=len(boundaries) * (2 if held_sites else 1),
        desc="training",
        unit="bucket",
        disable=not progress,
        leave=False,
    )
    holdout: dict[str, Any] = {}
    if held_sites:
        is_train = np.isin(data.site, list(train_sites))
        early = _fit(data.subset(np.flatnonzero(is_train)), boundaries, config, bar.update)
        held = data.subset(np.flatnonzero(~is_train))
        scores = _model(early, boundaries, train_sites, config).scores(held.features, held.area)
        holdout = {
            "sites": len(held_sites),
            "nodes": len(held),
            "site_names": sorted(held_sites),
            **class_figures(held.label, np.nan_to_num(scores) >= 0.5),
        }
    held_back = 0
    if not config.refit_all and held_sites:
        data = data.subset(np.flatnonzero(np.isin(data.site, list(train_sites))))
        by_site = {site: by_site[site] for site in train_sites}
        held_back = len(held_sites)
    # the report (and the model's metrics) describe the final fit, which is what the model is
    report = TrainReport(len(by_site), len(data), boundaries, holdout=holdout, held_back=held_back)
    buckets = _fit(data, boundaries, config, bar.update)
    bar.close()
    model = _model(buckets, boundaries, by_site, config)
    scores = np.nan_to_num(model.scores(data.features, data.area)) >= 0.5
    bucket = model.bucket_of(data.area)
    for index, bucket_model in enumerate(buckets):
        upper = boundaries[index + 1] if index + 1 < len(boundaries) else float("inf")
        rows = bucket == index
        report.buckets.append(
            {
                "range": f"[{boundaries[index]:g}, {upper:g})",
                "nodes": int(rows.sum()),
                "template_share": float(data.label[rows].mean()) if rows.any() else 0.0,
                "accuracy": class_figures(data.label[rows], scores[rows])["accuracy"]
                if bucket_model is not None
                else None,
            }
        )
    return replace(model, metrics=report.as_dict()), report
