"""SiteLevel: template labels from repetition across a site's pages, and the `sitelevel` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from newscrawl.cli import main
from newscrawl.html.dom import Dom
from newscrawl.html.parse import parse_html
from newscrawl.lab.synthetic_sites import synthetic_site
from newscrawl.template.node_records import PageNodes, node_hashes
from newscrawl.template.node_table import NODE_COLUMNS, nodes_schema
from newscrawl.template.sitelevel import (
    SiteLevel,
    SiteLevelConfig,
    label_site,
)

SECTIONS = ("World", "Sport", "Arts and culture", "Science", "Money", "Travel", "Weather")
NAV = (
    '<ul id="nav"><li><a href="/">Home</a></li>'
    + "".join(f'<li><a href="/{s.lower()}">{s}</a></li>' for s in SECTIONS)
    + "</ul>"
)
FOOTER = '<div id="footer">Copyright Example Daily <a href="/about">About us</a></div>'


def page(i: int, extra: str = "", header_text: str | None = None) -> str:
    """A hand-written page: shared nav and footer, its own article; `header_text` goes into the
    header beside the nav (a per-page date makes the header's own hash differ)."""
    date = f"<span>Day {i}</span>" if header_text is None else header_text
    return (
        f'<html><body><div id="header">{date}{NAV}</div>'
        f'<div id="article"><h1>Story number {i}</h1><p>Body text {i} tells of thing {i * 7} '
        f"and of thing {i * 13}.</p><p>Second paragraph {i}.</p></div>{extra}{FOOTER}"
        "</body></html>"
    )


def records(htmls: list[str]) -> tuple[list[Dom], list[PageNodes]]:
    doms = [parse_html(h, url=f"https://example.org/story/{i}") for i, h in enumerate(htmls)]
    boxes = [np.ones((len(d), 4), dtype=np.float32) * 60 for d in doms]  # geometry not tested here
    return doms, [PageNodes.from_dom(d, boxes=b) for d, b in zip(doms, boxes, strict=True)]


def by_id(dom: Dom, labels: np.ndarray, element_id: str) -> bool:
    node = next(i for i, el in enumerate(dom.elements) if el.get("id") == element_id)
    return bool(labels[node])


def test_shared_nav_and_footer_are_template_bodies_are_not() -> None:
    doms, pages = records([page(i) for i in range(10)])
    labels = label_site(pages)
    for dom, label in zip(doms, labels, strict=True):
        assert by_id(dom, label, "nav") and by_id(dom, label, "footer")
        assert not by_id(dom, label, "article")
        for node, tag in enumerate(dom.tag):
            if tag in ("h1", "p"):
                assert not label[node], dom.text(node)
        assert not label[dom.body] and not label[0]


def test_a_node_mostly_made_of_template_html_is_template() -> None:
    # The header's own hash differs on every page (a date), but the nav is most of its HTML.
    doms, pages = records([page(i) for i in range(10)])
    labels = label_site(pages)
    assert all(by_id(d, lab, "header") for d, lab in zip(doms, labels, strict=True))
    # With a long text of its own beside the nav, the header is under 85% template.
    essay = "A long introduction that differs from page to page. " * 12
    doms, pages = records([page(i, header_text=f"<p>{essay}{i}</p>") for i in range(10)])
    labels = label_site(pages)
    assert not any(by_id(d, lab, "header") for d, lab in zip(doms, labels, strict=True))
    assert all(by_id(d, lab, "nav") for d, lab in zip(doms, labels, strict=True))


def test_share_threshold_is_a_parameter() -> None:
    doms, pages = records([page(i) for i in range(10)])
    strict = label_site(pages, SiteLevelConfig(html_share=0.9999))
    assert not by_id(doms[0], strict[0], "header")


def test_p_threshold() -> None:
    box = '<div id="promo">Subscribe to the weekly letter today</div>'
    # The promo box is on 3 of 10 pages: template at p = 10%, not at p = 50%.
    htmls = [page(i, extra=box if i < 3 else "") for i in range(10)]
    doms, pages = records(htmls)
    assert by_id(doms[0], label_site(pages, SiteLevelConfig(p=0.10))[0], "promo")
    assert not by_id(doms[0], label_site(pages, SiteLevelConfig(p=0.50))[0], "promo")


def test_a_node_on_one_page_only_is_never_template() -> None:
    # With 10 pages, 10% is a single page; every node occurs on its own page.
    htmls = [page(i, extra='<div id="once">Only here</div>' if i == 0 else "") for i in range(10)]
    doms, pages = records(htmls)
    assert not by_id(doms[0], label_site(pages)[0], "once")


def test_duplicate_pages_count_once() -> None:
    htmls = [page(0)] * 3 + [page(i) for i in range(1, 10)]
    doms, pages = records(htmls)
    labels = label_site(pages)
    assert not by_id(doms[0], labels[0], "article")


def test_hash_covers_tags_and_text_not_attributes() -> None:
    a = parse_html('<html><body><div class="x"><p>same</p></div></body></html>')
    b = parse_html('<html><body><div class="active"><p>same</p></div></body></html>')
    c = parse_html('<html><body><div class="x"><p>other</p></div></body></html>')
    d = parse_html('<html><body><div class="x"><span>same</span></div></body></html>')
    ha, hb, hc, hd = (node_hashes(x) for x in (a, b, c, d))
    assert ha.dtype == np.uint64 and (ha == hb).all()  # a per-page class does not count
    assert ha[2] != hc[2] and ha[3] != hc[3]  # text below differs
    assert ha[2] != hd[2]  # tags below differ
    # blake2b, not the salted hash(): the value is the same in every process.
    assert int(ha[3]) == 0x318A8EDA669AEA03


def _hash_by_definition(dom: Dom) -> list[int]:
    """Each node's hash as `node_hashes` defines it, one node at a time: blake2b (8 bytes) of
    its tag, the texts it owns joined by \\x03, and its children's digests in order."""
    from hashlib import blake2b

    digests: dict[int, bytes] = {}
    for node in range(len(dom) - 1, -1, -1):
        owned = [t for o, t in zip(dom.piece_owner, dom.piece_text, strict=True) if o == node]
        head = f"{dom.tag[node]}\x02{chr(3).join(owned)}\x02".encode("utf-8", "surrogatepass")
        data = head + b"".join(digests[c] for c in dom.children[node])
        digests[node] = blake2b(data, digest_size=8).digest()
    return [int.from_bytes(digests[n], "little") for n in range(len(dom))]


def test_hashes_are_their_definition_on_a_real_shaped_page() -> None:
    html = (
        "<html><head><title>T</title></head><body><div id=a>lead <b>bold</b> tail <i></i>"
        "<p>one<br>two \U0001f600 three</p></div><ul><li>x</li><li></li><li>x<a>y</a>z</li>"
        "</ul><table><tr><td>1</td><td>2</td></tr></table>end</body></html>"
    )
    url, site_page = synthetic_site(pages=1)[0]
    for dom in (parse_html(html), parse_html(site_page, url=url)):
        assert node_hashes(dom).tolist() == _hash_by_definition(dom)


def test_records_are_compact() -> None:
    url, html = synthetic_site(pages=1)[0]
    dom = parse_html(html, url=url)
    nodes = PageNodes.from_dom(dom, url, boxes=np.zeros((len(dom), 4)))
    assert len(nodes) == len(dom)
    assert nodes.nbytes < 80 * len(dom)
    assert all(isinstance(getattr(nodes, f), np.ndarray) for f in ("parent", "hash", "boxes"))


def test_table_rows_and_small_sites() -> None:
    _, pages = records([page(i) for i in range(6)])
    labeller = SiteLevel()
    table = labeller.table(pages, crawl="c1")
    assert table is not None and table.schema.equals(nodes_schema())
    assert table.column_names == list(NODE_COLUMNS)
    assert table.num_rows == sum(len(p) for p in pages)  # every node has a box in this test
    assert set(table.column("crawl").to_pylist()) == {"c1"}
    assert set(table.column("site").to_pylist()) == {"example.org"}
    assert labeller.table(pages[:4]) is None  # fewer than 5 pages


# -- the command ----------------------------------------------------------------------------


def write_folder(root: Path, sites: dict[str, int]) -> Path:
    """A dataset folder in the development-data layout: html/ID.html and meta.jsonl."""
    (root / "html").mkdir(parents=True)
    meta = []
    for host, count in sites.items():
        for i, (url, html) in enumerate(synthetic_site(host, pages=count)):
            page_id = f"{host}-{i}"
            (root / "html" / f"{page_id}.html").write_text(html, encoding="utf-8")
            meta.append({"id": page_id, "url": url, "site": host})
    (root / "meta.jsonl").write_text("\n".join(json.dumps(m) for m in meta) + "\n", "utf-8")
    return root


def test_sitelevel_command_on_a_dataset_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    folder = write_folder(tmp_path / "data", {"big.example.org": 6, "small.example.org": 3})
    out = tmp_path / "nodes"
    assert main(["sitelevel", str(folder), "--out", str(out), "-q"]) == 0
    err = capsys.readouterr().err
    assert "1 sites" in err and "skipped 1 sites" in err and "(3 pages)" in err
    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    assert set(table.column("site").to_pylist()) == {"big.example.org"}
    labels = table.column("label").to_numpy()
    assert 0 < labels.mean() < 1
    # A second run into the same folder needs --overwrite.
    assert main(["sitelevel", str(folder), "--out", str(out), "-q"]) == 2
    assert main(["sitelevel", str(folder), "--out", str(out), "-q", "--overwrite"]) == 0


def write_pages(root: Path, sites: dict[str, int], shards: int = 1) -> Path:
    """A crawl's pages dataset (crawl c7) as `shards` workers leave it: each site's pages dealt
    out over the shards' files, in reverse URL order, plus one 404 page of the first site."""
    from datetime import UTC, datetime

    from newscrawl.storage import PAGES_SCHEMA, ParquetDatasetWriter

    rows = [
        {
            "url": url,
            "final_url": url,
            "site": host,
            "crawl": "c7",
            "fetched_at": datetime.now(UTC),
            "status": 200,
            "content_type": "text/html; charset=utf-8",
            "headers": {},
            "html": html.encode(),
        }
        for host, count in sites.items()
        for url, html in reversed(synthetic_site(host, pages=count, seed=3))
    ]
    rows.append({**rows[0], "url": rows[0]["url"] + "?gone", "status": 404})  # not counted
    for shard in range(shards):
        with ParquetDatasetWriter(root, PAGES_SCHEMA, ("crawl", "site")) as writer:
            writer.write_rows(rows[shard::shards])
    return root


def read_nodes_dataset(out: Path) -> pa.Table:
    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    return table.sort_by([("site", "ascending"), ("page", "ascending"), ("node", "ascending")])


def test_sitelevel_command_on_a_pages_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pages = write_pages(tmp_path / "pages", {"a.example.org": 5, "b.example.org": 2})
    out = tmp_path / "nodes"
    assert main(["sitelevel", str(pages), "--out", str(out), "-q", "--crawl", "c7"]) == 0
    err = capsys.readouterr().err
    assert "1 sites" in err and "skipped 1 sites" in err
    # laid out as a crawl writes nodes
    assert [p.name for p in out.iterdir()] == ["crawl=c7"]
    assert [p.name for p in (out / "crawl=c7").iterdir()] == ["site=a.example.org"]
    table = ds.dataset(out, format="parquet", partitioning="hive").to_table()
    assert set(table.column("url").to_pylist()) <= {
        u for u, _ in synthetic_site("a.example.org", pages=5, seed=3)
    }
    assert len(set(table.column("url").to_pylist())) == 5


def test_sitelevel_command_on_dask_matches_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """`--cluster` (a 2-worker LocalCluster) writes the same nodes as the in-process run, also
    for a site over --max-pages whose pages are spread over two shards out of URL order."""
    sites = {"a.example.org": 9, "b.example.org": 6, "c.example.org": 2}
    pages = write_pages(tmp_path / "pages", sites, shards=2)
    args = ["sitelevel", str(pages), "-q", "--max-pages", "7", "--crawl", "c7"]
    assert main([*args, "--out", str(tmp_path / "here")]) == 0
    assert main([*args, "--out", str(tmp_path / "dask"), "--cluster", "--dask-workers", "2"]) == 0
    assert "2 worker(s)" in capsys.readouterr().err
    here, dask = read_nodes_dataset(tmp_path / "here"), read_nodes_dataset(tmp_path / "dask")
    assert set(here.column("site").to_pylist()) == {"a.example.org", "b.example.org"}
    assert set(here.column("crawl").to_pylist()) == {"c7"}
    urls = sorted(u for u, _ in synthetic_site("a.example.org", pages=9, seed=3))[:7]
    site_a = here.filter(pc.equal(here["site"], "a.example.org"))
    assert sorted(set(site_a["url"].to_pylist())) == urls  # the 7 smallest URLs
    assert dask.to_pylist() == here.to_pylist()
    # one Parquet dataset only: a dataset folder cannot be spread over a cluster
    folder = write_folder(tmp_path / "data", {"big.example.org": 6})
    assert main(["sitelevel", str(folder), "--out", str(tmp_path / "x"), "--cluster"]) == 2


def test_sitelevel_command_errors(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["sitelevel", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err
    empty = write_folder(tmp_path / "d", {"tiny.example.org": 2})
    assert main(["sitelevel", str(empty), "--out", str(tmp_path / "o2"), "-q"]) == 1
    assert "skipped 1 sites" in capsys.readouterr().err


def test_nodes_schema_is_explicit() -> None:
    schema = nodes_schema()
    assert schema.field("label").type == pa.bool_()
    assert schema.field("area").type == pa.float32()


def test_share_rule_reads_text_by_default_html_on_request() -> None:
    # A wrapper holding the article and a heavy-markup template menu: by HTML characters it is
    # mostly template, by visible text it is mostly article.
    menu = (
        "<ul id='menu'>"
        + "".join(
            f'<li class="menu-item menu-item-type-{k}"><a class="nav-link" '
            f'href="https://example.org/section/{k}/index.html">S{k}</a></li>'
            for k in range(12)
        )
        + "</ul>"
    )

    def wrapped(i: int) -> str:
        return (
            f'<html><body><div id="wrap">{menu}<p>Article {i} says {i * 3} things about '
            f"{i * 11} topics today.</p></div></body></html>"
        )

    doms, pages = records([wrapped(i) for i in range(6)])
    by_text = label_site(pages)
    by_html = label_site(pages, SiteLevelConfig(share_of="html"))
    assert all(by_id(d, lab, "menu") for d, lab in zip(doms, by_text, strict=True))
    assert not any(by_id(d, lab, "wrap") for d, lab in zip(doms, by_text, strict=True))
    assert all(by_id(d, lab, "wrap") for d, lab in zip(doms, by_html, strict=True))


def test_template_membership_by_binary_search_agrees_with_isin() -> None:
    """`in_sorted` (used for every page's template labels) answers as `np.isin`, for sorted
    templates, for templates that are not sorted after all, and for empty ones."""
    from newscrawl.template.sitelevel import in_sorted

    rng = np.random.default_rng(7)
    top = np.iinfo(np.uint64).max
    for _ in range(500):
        members = np.unique(rng.integers(0, 40, rng.integers(0, 15)).astype(np.uint64))
        values = rng.integers(0, 50, rng.integers(0, 25)).astype(np.uint64)
        members = np.append(members, np.uint64(top))  # the largest hash, at the end
        values = np.append(values, np.uint64(top))
        for template in (members, rng.permutation(members), members[:0]):
            assert (in_sorted(values, template) == np.isin(values, template)).all()
