"""The sites of gold-text datasets for template evaluation: which pages form a site (a groups
file or meta.jsonl), each page parsed once into node records with SiteLevel's (or another
site-level method's) labels and the labels derived from the gold text (`gold_template`)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from newscrawl.gold.dataset import Dataset, DatasetError, Page
from newscrawl.gold.metric import tokens
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.html.tree import PageError
from newscrawl.template.node_records import PageNodes, site_kind
from newscrawl.template.sitelevel import label_site
from newscrawl.template.sitemethods import DEFAULT_SITE_METHOD, new_site_method

__all__ = ["PageCase", "SiteCase", "gold_template", "load_site", "parse_page", "site_groups"]

_SHINGLE = 4


# -- gold node labels ------------------------------------------------------------------------


def gold_template(dom: Dom, gold: str, mostly: float = 0.5) -> np.ndarray:
    """Node labels from the gold text: True = template, as the study labelled its test pages.

    The study marked the node holding the article, its ancestors and its descendants
    non-template and everything else template. Here, without a human to point at the node:
    a page token is *gold* when a 4-token window through it occurs in the gold text; a node is
    *content* when more than `mostly` of its tokens are gold. Non-template are the content
    nodes and their ancestors, every descendant of a content node that holds no smaller content
    node (the "article node" of the study, whose inline links and line breaks belong to it) and
    text-less nodes inside content. So a big container that is mostly gold (often <body>) stays
    non-template without dragging its menus and footers along.
    """
    count = len(dom)
    piece_tokens = [tokens(text) for text in dom.piece_text]
    stream = [t for words in piece_tokens for t in words]
    gold_words = tokens(gold)
    wanted = {tuple(gold_words[i : i + _SHINGLE]) for i in range(len(gold_words) - _SHINGLE + 1)}
    if 0 < len(gold_words) < _SHINGLE:
        wanted.add(tuple(gold_words))
    hit = np.zeros(len(stream) + 1, dtype=np.int32)  # difference array over token positions
    size = min(_SHINGLE, len(stream))
    for i in range(len(stream) - size + 1):
        if tuple(stream[i : i + size]) in wanted:
            hit[i] += 1
            hit[i + size] -= 1
    is_gold = np.cumsum(hit)[: len(stream)] > 0
    per_piece_total = np.fromiter((len(w) for w in piece_tokens), np.int64, len(piece_tokens))
    bounds = np.concatenate(([0], np.cumsum(per_piece_total)))
    gold_prefix = np.concatenate(([0], np.cumsum(is_gold, dtype=np.int64)))
    piece_gold = gold_prefix[bounds[1:]] - gold_prefix[bounds[:-1]]
    piece_prefix = np.concatenate(([0], np.cumsum(per_piece_total)))
    piece_gold_prefix = np.concatenate(([0], np.cumsum(piece_gold)))
    start = np.asarray(dom.piece_start, dtype=np.int64)
    end_piece = np.asarray(dom.piece_end, dtype=np.int64)
    node_tokens = piece_prefix[end_piece] - piece_prefix[start]
    node_gold = piece_gold_prefix[end_piece] - piece_gold_prefix[start]
    content = (node_tokens > 0) & (node_gold > mostly * node_tokens)
    end = np.asarray(dom.end, dtype=np.int64)
    content_prefix = np.concatenate(([0], np.cumsum(content, dtype=np.int64)))
    inside = content_prefix[end] - content_prefix[:count]  # content nodes in each subtree
    keep = inside > 0  # content nodes and their ancestors
    cover = np.zeros(count + 1, dtype=np.int64)
    for lowest in np.flatnonzero(content & (inside == 1)):  # content with no content below
        cover[lowest] += 1
        cover[end[lowest]] -= 1
    keep |= np.cumsum(cover)[:count] > 0
    parent = dom.parent
    for node in range(count):  # text-less nodes inside content
        if not keep[node] and node_tokens[node] == 0 and parent[node] >= 0:
            keep[node] = bool(
                content[parent[node]] or (keep[parent[node]] and node_tokens[parent[node]] == 0)
            )
    return ~keep


# -- data -----------------------------------------------------------------------------------


@dataclass(slots=True)
class PageCase:
    """One test page, reduced to what the evaluation needs."""

    page_id: str
    nodes: PageNodes
    sitelevel: np.ndarray  # bool template labels from SiteLevel
    gold: np.ndarray  # bool template labels from the gold text
    body: int


@dataclass(slots=True)
class SiteCase:
    dataset: str
    path: Path
    site: str
    kind: str
    pages: list[PageCase] = field(default_factory=list)


def _dataset_dirs(paths: Sequence[str | Path]) -> list[Path]:
    found: list[Path] = []
    for arg in paths:
        path = Path(arg)
        if (path / "html").is_dir():
            found.append(path)
        elif path.is_dir():
            found.extend(sorted(p for p in path.iterdir() if (p / "html").is_dir()))
        else:
            raise DatasetError(f"{path}: no such dataset folder")
    if not found:
        raise DatasetError("no dataset folder (with html/ and gold/) found")
    return found


def _read_groups(path: Path) -> dict[str, set[str]]:
    groups: dict[str, set[str]] = {}
    with path.open(encoding="utf-8") as lines:
        for row in csv.DictReader(lines, delimiter="\t"):
            if row.get("dataset") and row.get("site"):
                groups.setdefault(row["dataset"], set()).add(row["site"])
    return groups


def _groups_file(paths: Sequence[str | Path], given: str | None) -> Path | None:
    if given:
        return Path(given)
    for arg in paths:
        for folder in (Path(arg), Path(arg).parent):
            candidate = folder / "site_groups.tsv"
            if candidate.is_file():
                return candidate
    return None


def site_groups(
    paths: Sequence[str | Path], groups: str | None = None, min_pages: int = 5
) -> list[tuple[Dataset, str, list[str]]]:
    """(dataset, site, page ids) of every multi-page site of the datasets."""
    tsv = _groups_file(paths, groups)
    listed = _read_groups(tsv) if tsv else None
    out: list[tuple[Dataset, str, list[str]]] = []
    for folder in _dataset_dirs(paths):
        dataset = Dataset(folder)
        by_site: dict[str, list[str]] = {}
        for page_id in dataset.ids:
            site = str(dataset.meta.get(page_id, {}).get("site") or "")
            if site:
                by_site.setdefault(site, []).append(page_id)
        wanted = listed.get(dataset.name, set()) if listed is not None else set(by_site)
        for site in sorted(wanted):
            ids = by_site.get(site, [])
            if len(ids) >= min_pages:
                out.append((dataset, site, ids))
    return out


def parse_page(page: Page) -> Dom | None:
    try:
        return parse_html(page.html, url=page.meta.get("url") or None)
    except PageError:
        return None


def load_site(
    dataset: Dataset,
    site: str,
    ids: Sequence[str],
    max_pages: int,
    site_method: str = DEFAULT_SITE_METHOD,
) -> SiteCase:
    """Parse a site's pages once: node records, gold labels and the site's own template labels
    (SiteLevel's, or another site-level method's: `newscrawl.template.sitemethods`)."""
    pages: list[PageCase] = []
    records: list[PageNodes] = []
    state = new_site_method(site_method) if site_method != DEFAULT_SITE_METHOD else None
    for page_id in list(ids)[:max_pages]:
        page = dataset.page(page_id)
        dom = parse_page(page)
        if dom is None:
            continue
        nodes = PageNodes.from_dom(dom, page.meta.get("url") or "", site=site)
        records.append(nodes)
        if state is not None:
            state.add(dom)
        empty = np.zeros(len(dom), dtype=bool)
        pages.append(PageCase(page_id, nodes, empty, gold_template(dom, page.gold), dom.body))
    labels = label_site(records) if state is None else state.masks()
    for case, label in zip(pages, labels, strict=True):
        case.sitelevel = label
    return SiteCase(dataset.name, dataset.path, site, site_kind(records), pages)


# -- scoring --------------------------------------------------------------------------------
