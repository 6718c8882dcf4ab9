"""The site's SiteLevel template as features of the learned extractor."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from newscrawl.evaluation.evaluator import evaluate_dataset
from newscrawl.extractors.blockmodel.block_features import FEATURES, block_features
from newscrawl.extractors.blockmodel.blocks import split_blocks
from newscrawl.gold.dataset import read_dataset
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site
from newscrawl.site.site_context import uses_site_template
from newscrawl.site.site_template import (
    SITE_FEATURES,
    pages_template,
    site_columns,
    site_template,
)
from newscrawl.template.node_records import node_hashes
from newscrawl.template.sitelevel import RawPage


def _site(pages: int = 6) -> list[tuple[str, str]]:
    return synthetic_site("daily.example.org", pages=pages, seed=3)


def _share_of(text: str, dom, columns: np.ndarray, blocks) -> float:
    found = [k for k in range(len(blocks)) if text in blocks.text(dom, k)]
    assert found, text
    return float(columns[found[0], SITE_FEATURES.index("site_template_share")])


def test_too_few_pages_give_no_template() -> None:
    hashes = [node_hashes(parse_html(html, url=url)) for url, html in _site(4)]
    assert site_template(hashes) is None
    assert pages_template([RawPage(url, html.encode()) for url, html in _site(4)]) is None


def test_template_blocks_are_flagged_and_article_blocks_are_not() -> None:
    site = _site(6)
    template = pages_template([RawPage(url, html.encode()) for url, html in site])
    assert template is not None and template.pages == 6
    dom = parse_html(site[0][1], url=site[0][0])
    blocks = split_blocks(dom)
    columns = site_columns(dom, blocks, template)
    assert columns.shape == (len(blocks), len(SITE_FEATURES))
    paragraph = dom.elements[0].xpath('//div[contains(@class, "-article")]/p')[0]
    article = "".join(paragraph.itertext())
    assert _share_of(article.strip()[:40], dom, columns, blocks) == 0.0
    shares = columns[:, SITE_FEATURES.index("site_template_share")]
    assert shares.max() == 1.0  # menus, footers and sidebars repeat on every page
    assert np.allclose(columns[:, SITE_FEATURES.index("site_pages_log")], np.log1p(6))


def test_a_page_without_site_gets_the_unknown_marks() -> None:
    url, html = _site(1)[0]
    dom = parse_html(html, url=url)
    rows = block_features(dom, split_blocks(dom))
    assert rows.shape[1] == len(FEATURES)
    site = rows[:, [FEATURES.index(name) for name in SITE_FEATURES]]
    assert np.all(site[:, 0] == 0.0) and np.all(site[:, 1:] == -1.0)


def test_the_shipped_model_reads_the_site_template() -> None:
    from newscrawl.extractors import get_extractor

    assert uses_site_template(get_extractor("learned"))


class _Recording:
    """An extractor that reads templates and records what it was given."""

    name = "recording"
    uses_site_template = True

    def __init__(self) -> None:
        self.seen: list[int | None] = []

    def extract(self, dom, template=None):
        from newscrawl.extractors.extractor_base import Extraction

        self.seen.append(None if template is None else template.pages)
        return Extraction.empty(self.name)


def _dataset(root: Path, pages: int, site: str | None) -> Path:
    (root / "html").mkdir(parents=True)
    (root / "gold").mkdir()
    meta = []
    for i, (url, html) in enumerate(_site(pages)):
        (root / "html" / f"p{i}.html").write_text(html, encoding="utf-8")
        (root / "gold" / f"p{i}.txt").write_text("gold text", encoding="utf-8")
        meta.append({"id": f"p{i}", "url": url, **({"site": site} if site else {})})
    (root / "meta.jsonl").write_text("".join(json.dumps(m) + "\n" for m in meta))
    return root


def test_evaluate_hands_each_page_its_sites_template(tmp_path: Path) -> None:
    recording = _Recording()
    assert uses_site_template(recording)
    dataset = read_dataset(_dataset(tmp_path / "d", 6, "daily.example.org"))
    evaluate_dataset(dataset, {"r": recording}, progress=False)
    assert recording.seen == [6] * 6
    alone = _Recording()
    evaluate_dataset(dataset, {"r": alone}, progress=False, site_from="none")
    assert alone.seen == [None] * 6
