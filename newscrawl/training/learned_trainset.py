"""The learned extractor's training set: one row per text block of every page of some datasets.

Datasets are folders in the evaluation layout (``html/``, ``gold/``, ``meta.jsonl``). Each page
is parsed once, the three seed extractors run on it (their selections are features), its blocks
get their features and their gold share (`labels.py`). Pages are grouped by site — the dataset
name plus the meta ``site`` (or the URL's host, or the page id when neither is known) — so that
cross-validation never puts one site in both a training and a test fold.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from newscrawl.extractors.blockmodel.block_features import FEATURES, block_features, block_groups
from newscrawl.extractors.blockmodel.blocks import split_blocks
from newscrawl.extractors.blockmodel.seeds import SEEDS, seed_extractions
from newscrawl.extractors.blockmodel.stacking import GROUPS
from newscrawl.extractors.doc_generator import generated_documentation
from newscrawl.gold.dataset import read_dataset, read_meta
from newscrawl.gold.metric import tokens
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError
from newscrawl.site.site_template import TemplateHashes, site_template
from newscrawl.template.node_records import node_hashes
from newscrawl.template.sitelevel import SiteLevelConfig
from newscrawl.training.gold_labels import block_gold_share

__all__ = [
    "PageRows",
    "TrainingSet",
    "build_training_set",
    "cache_serves",
    "page_rows",
    "page_type_labels",
    "site_templates",
    "subset_training_set",
]


@dataclass(slots=True)
class PageRows:
    """One page's blocks: features, gold share and token count of each."""

    features: np.ndarray
    groups: np.ndarray  # structure groups of each block (`features.block_groups`)
    share: np.ndarray
    tokens: np.ndarray
    texts: list[str]
    peers: dict[str, str]  # text each peer extractor produced on the page
    generated_docs: bool = False  # a documentation generator marked the page


@dataclass(slots=True)
class TrainingSet:
    """Blocks of many pages, with the page, site and dataset each came from."""

    features: np.ndarray  # (blocks, FEATURES)
    groups: np.ndarray  # (blocks, GROUPS) structure group ids, per page
    share: np.ndarray  # gold share of each block
    tokens: np.ndarray  # \w+ tokens of each block
    page: np.ndarray  # page index of each block
    page_ids: list[str]  # "dataset/id" per page
    page_site: list[str]  # "dataset/site" per page
    page_dataset: list[str]
    datasets: dict[str, int]  # dataset name -> pages
    texts: list[str]  # text of each block, to score selections with the metric
    gold: list[str] = field(default_factory=list)  # gold text per page
    peers: dict[str, list[str]] = field(default_factory=dict)  # peer name -> text per page
    skipped: int = 0  # pages that could not be parsed
    page_type: list[str] = field(default_factory=list)  # meta page_type per page ("" if none)
    # per page: whether a documentation generator marked it (`extractors.doc_generator`)
    generated_docs: list[bool] = field(default_factory=list)

    @property
    def sites(self) -> int:
        return len(set(self.page_site))


def page_rows(
    html: bytes,
    gold: str,
    url: str | None = None,
    trafilatura: bool = False,
    template: TemplateHashes | None = None,
) -> PageRows | None:
    """Features and labels of one page's blocks; None when the page cannot be parsed.

    `peers` of the result holds the seed extractors' texts, and trafilatura's when asked for
    (the peer of the quality table, run on the same bytes). `template`: the SiteLevel template
    of the page's site, when the site has enough pages (`site_templates`).
    """
    try:
        dom = parse_html(html, url=url)
    except PageError:
        return None
    blocks = split_blocks(dom)
    seeds = seed_extractions(dom)
    features = block_features(dom, blocks, [s.node_ids for s in seeds], template)
    texts = [blocks.text(dom, k) for k in range(len(blocks))]
    share = np.array(block_gold_share(gold, texts), dtype=np.float32)
    counts = np.array([len(tokens(t)) for t in texts], dtype=np.int32)
    peers = {name: s.text for name, s in zip(SEEDS, seeds, strict=True)}
    if trafilatura:
        peers["trafilatura"] = trafilatura_text(html)
    groups = block_groups(dom, blocks)
    marked = generated_documentation(dom)
    return PageRows(features, groups, share, counts, texts, peers, marked)


def trafilatura_text(html: bytes) -> str:
    """trafilatura's main text of a page (comments left out), "" when it fails."""
    import logging

    import trafilatura

    logging.getLogger("trafilatura").setLevel(logging.CRITICAL)
    try:
        return trafilatura.extract(html, include_comments=False) or ""
    except Exception:  # a peer's failure is its empty output, as for our extractors
        return ""


def _site_of(meta: dict, page_id: str) -> str:
    site = meta.get("site")
    if isinstance(site, str) and site:
        return site
    url = meta.get("url")
    if isinstance(url, str) and url:
        host = (urlsplit(url).hostname or "").removeprefix("www.")
        if host:
            return host
    return f"page:{page_id}"


def _dataset_pages(
    path: Path, limit: int | None
) -> Iterator[tuple[str, str, bytes, str, str, str | None]]:
    dataset = read_dataset(path, limit)
    for page in dataset:
        url = page.meta.get("url")
        yield (
            dataset.name,
            page.id,
            page.html,
            page.gold,
            f"{dataset.name}/{_site_of(page.meta, page.id)}",
            url if isinstance(url, str) else None,
        )


def page_type_of(meta: dict) -> str:
    """A page's meta ``page_type`` (WCXB's seven kinds), "" when it has none."""
    kind = meta.get("page_type")
    return kind.strip().lower() if isinstance(kind, str) else ""


def page_type_labels(data: TrainingSet, by_dataset: Mapping[str, str] | None = None) -> list[str]:
    """Each page's type for training a page type model: its meta ``page_type``, else the type
    `by_dataset` gives every page of its dataset (news datasets: "article"), else ""."""
    by_dataset = by_dataset or {}
    kinds = data.page_type or [""] * len(data.page_ids)
    return [
        kind or by_dataset.get(dataset, "")
        for kind, dataset in zip(kinds, data.page_dataset, strict=True)
    ]


def _rows_of(job: tuple) -> PageRows | None:
    _, _, html, gold, _, url, with_trafilatura, template = job
    return page_rows(html, gold, url, with_trafilatura, template)


def _page_hashes(job: tuple) -> np.ndarray | None:
    _, _, html, _, _, url = job
    try:
        return node_hashes(parse_html(html, url=url))
    except PageError:
        return None


def site_templates(
    jobs: Sequence[tuple], workers: int = 1, config: SiteLevelConfig | None = None
) -> dict[str, TemplateHashes]:
    """SiteLevel's template of every site (5th field of each page job) with enough pages.

    Unsupervised: only the pages' markup goes in, never their gold text, so a held-out site's
    template comes from its own pages in cross-validation as it would in a crawl.
    """
    config = config or SiteLevelConfig()
    members: dict[str, list[tuple]] = {}
    for job in jobs:
        members.setdefault(job[4], []).append(job)
    wanted = [job for pages in members.values() if len(pages) >= config.min_pages for job in pages]
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            hashes = list(pool.map(_page_hashes, wanted, chunksize=8))
    else:
        hashes = [_page_hashes(job) for job in wanted]
    per_site: dict[str, list[np.ndarray]] = {}
    for job, found in zip(wanted, hashes, strict=True):
        if found is not None:
            per_site.setdefault(job[4], []).append(found)
    templates = {site: site_template(pages, config) for site, pages in per_site.items()}
    return {site: t for site, t in templates.items() if t is not None}


def build_training_set(
    paths: Sequence[str | Path],
    limit: int | None = None,
    jobs: int = 1,
    trafilatura: bool = False,
) -> TrainingSet:
    """Blocks of every page of the datasets at `paths` (`limit` pages each), in a fixed order.

    The order (datasets as given, pages in id order) does not depend on `jobs`. With
    `trafilatura`, each page's trafilatura text is kept beside the seed extractors' texts.
    """
    pages = [job for path in paths for job in _dataset_pages(Path(path), limit)]
    kinds = {
        (Path(path).resolve().name, str(page)): page_type_of(meta)
        for path in paths
        for page, meta in read_meta(Path(path) / "meta.jsonl")[0].items()
    }
    templates = site_templates(pages, jobs)
    jobs_list = [(*job, trafilatura, templates.get(job[4])) for job in pages]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            results = list(pool.map(_rows_of, jobs_list, chunksize=8))
    else:
        results = [_rows_of(job) for job in jobs_list]
    features: list[np.ndarray] = []
    groups: list[np.ndarray] = []
    share: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    page: list[np.ndarray] = []
    texts: list[str] = []
    page_ids: list[str] = []
    page_site: list[str] = []
    page_dataset: list[str] = []
    page_type: list[str] = []
    generated_docs: list[bool] = []
    golds: list[str] = []
    peers: dict[str, list[str]] = {}
    datasets: dict[str, int] = {}
    skipped = 0
    for job, rows in zip(jobs_list, results, strict=True):
        name, page_id, _, gold, site, _, _, _ = job
        if rows is None:
            skipped += 1
            continue
        index = len(page_ids)
        page_ids.append(f"{name}/{page_id}")
        page_site.append(site)
        page_dataset.append(name)
        page_type.append(kinds.get((name, page_id), ""))
        generated_docs.append(rows.generated_docs)
        golds.append(gold)
        for peer, text in rows.peers.items():
            peers.setdefault(peer, []).append(text)
        datasets[name] = datasets.get(name, 0) + 1
        features.append(rows.features)
        groups.append(rows.groups)
        share.append(rows.share)
        counts.append(rows.tokens)
        texts.extend(rows.texts)
        page.append(np.full(len(rows.share), index, dtype=np.int32))
    empty = np.zeros((0, len(FEATURES)), dtype=np.float32)
    return TrainingSet(
        features=np.concatenate(features) if features else empty,
        groups=np.concatenate(groups) if groups else np.zeros((0, len(GROUPS)), np.int32),
        share=np.concatenate(share) if share else np.zeros(0, np.float32),
        tokens=np.concatenate(counts) if counts else np.zeros(0, np.int32),
        page=np.concatenate(page) if page else np.zeros(0, np.int32),
        page_ids=page_ids,
        page_site=page_site,
        page_dataset=page_dataset,
        datasets=datasets,
        texts=texts,
        gold=golds,
        peers=peers,
        skipped=skipped,
        page_type=page_type,
        generated_docs=generated_docs,
    )


# -- a training set kept on disk: parse once, cross-validate many times -----------------------

CACHE_FORMAT = "newscrawl-training-set"
CACHE_VERSION = 2  # 2: each page's generator mark (`generated_docs`)
_CACHE_ARRAYS = ("features", "groups", "share", "tokens", "page")
_CACHE_LISTS = (
    "page_ids",
    "page_site",
    "page_dataset",
    "texts",
    "gold",
    "page_type",
    "generated_docs",
)


def save_training_set(data: TrainingSet, path: str | Path, source: object = None) -> None:
    """Write `data` to one `.npz` file (arrays as arrays, texts as JSON; no pickle), with the
    feature names it was computed with and `source` (what it was built from, any JSON value),
    so `load_training_set` can refuse a stale file or one of other pages."""
    import json

    header = {
        "format": CACHE_FORMAT,
        "version": CACHE_VERSION,
        "feature_names": list(FEATURES),
        "source": source,
        "datasets": data.datasets,
        "skipped": data.skipped,
        "peers": data.peers,
        **{name: getattr(data, name) for name in _CACHE_LISTS},
    }
    text = np.frombuffer(json.dumps(header).encode("utf-8"), dtype=np.uint8)
    arrays = {name: getattr(data, name) for name in _CACHE_ARRAYS}
    with open(path, "wb") as out:
        np.savez(out, header=text, **arrays)


def load_training_set(path: str | Path, source: object = None) -> TrainingSet:
    """Read a file `save_training_set` wrote from the same `source`; ValueError, saying why,
    for anything else (another format, features of another version of the code, other
    pages)."""
    import json
    import zipfile

    try:
        with np.load(path, allow_pickle=False) as stored:
            header = json.loads(bytes(stored["header"]).decode("utf-8"))
            arrays: dict[str, Any] = {name: stored[name] for name in _CACHE_ARRAYS}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path}: not a training set file ({err})") from err
    if not isinstance(header, dict) or header.get("format") != CACHE_FORMAT:
        raise ValueError(f"{path}: not a training set file")
    if header.get("version") != CACHE_VERSION or header.get("feature_names") != list(FEATURES):
        raise ValueError(f"{path}: made by another version of the features; build it again")
    stored, wanted = header.get("source"), json.loads(json.dumps(source))
    if stored != wanted and not cache_serves(stored, wanted):
        raise ValueError(f"{path}: built from other pages ({stored}), not {source}")
    lists: dict[str, Any] = {name: list(header[name]) for name in _CACHE_LISTS}
    data = TrainingSet(
        **arrays,
        **lists,
        datasets=dict(header["datasets"]),
        peers={k: list(v) for k, v in header["peers"].items()},
        skipped=int(header["skipped"]),
    )
    if stored == wanted:
        return data
    names = [Path(d).name for d in wanted["datasets"]]
    return subset_training_set(data, names, with_trafilatura=bool(wanted["trafilatura"]))


def cache_serves(stored: Any, wanted: Any) -> bool:
    """Whether a training set built from `stored` (a source `save_training_set` recorded) holds
    every page a build from `wanted` would: the same page limit, every wanted dataset, in the
    same order, and trafilatura's texts when wanted."""
    keys = {"datasets", "limit", "trafilatura"}
    if not (isinstance(stored, dict) and isinstance(wanted, dict)):
        return False
    if set(stored) != keys or set(wanted) != keys or stored["limit"] != wanted["limit"]:
        return False
    if wanted["trafilatura"] and not stored["trafilatura"]:
        return False
    have, want = list(stored["datasets"]), list(wanted["datasets"])
    if not set(want) <= set(have) or len({Path(d).name for d in want}) != len(want):
        return False
    return sorted(want, key=have.index) == want


def subset_training_set(
    data: TrainingSet, names: Sequence[str], with_trafilatura: bool = True
) -> TrainingSet:
    """The pages of the datasets called `names` (in `data`'s order), as a build of those
    datasets alone gives them; trafilatura's texts left out unless `with_trafilatura`."""
    keep = set(names)
    pages = [i for i, name in enumerate(data.page_dataset) if name in keep]
    renumber = np.full(len(data.page_ids), -1, dtype=np.int64)
    renumber[pages] = np.arange(len(pages))
    blocks = np.flatnonzero(renumber[data.page] >= 0)
    peers = {
        peer: [texts[i] for i in pages]
        for peer, texts in data.peers.items()
        if with_trafilatura or peer != "trafilatura"
    }
    return TrainingSet(
        features=data.features[blocks],
        groups=data.groups[blocks],
        share=data.share[blocks],
        tokens=data.tokens[blocks],
        page=renumber[data.page[blocks]].astype(data.page.dtype),
        page_ids=[data.page_ids[i] for i in pages],
        page_site=[data.page_site[i] for i in pages],
        page_dataset=[data.page_dataset[i] for i in pages],
        datasets={name: n for name, n in data.datasets.items() if name in keep},
        texts=[data.texts[k] for k in blocks.tolist()],
        gold=[data.gold[i] for i in pages] if data.gold else [],
        peers=peers,
        skipped=0,  # pages the cache could not parse are not told apart by dataset
        page_type=[data.page_type[i] for i in pages] if data.page_type else [],
        generated_docs=[data.generated_docs[i] for i in pages] if data.generated_docs else [],
    )
