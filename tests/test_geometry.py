"""Geometry providers: the static layout model and real boxes from chromium."""

from __future__ import annotations

import numpy as np
import pytest

from newscrawl.html.parse import parse_html
from newscrawl.template.geometry import (
    ID_ATTRIBUTE,
    ChromiumGeometry,
    FlowGeometry,
    GeometryError,
    StaticGeometry,
    boxes_from_rects,
    get_geometry_provider,
    marked_html,
)
from newscrawl.template.node_records import PageNodes

PARAGRAPH = "Municipal workers repaired the old bridge over the river this week. " * 8

ARTICLE_PAGE = f"""<!DOCTYPE html>
<html><head><title>Bridge</title><meta name="description" content="x">
<style>p {{ color: black }}</style><script>document.title = "changed";</script></head>
<body>
<header><nav><ul class="menu">
  <li><a href="/">Home</a></li><li><a href="/news">News</a></li><li><a href="/sport">Sport</a></li>
</ul></nav></header>
<main>
  <h1>The bridge reopens</h1>
  <p id="first">{PARAGRAPH} <a href="/more">read <b>more</b></a> about it.</p>
  <p>Second line one<br>second line two <span id="after">after the break</span></p>
  <img src="a.jpg" width="400" height="250">
  <p>{PARAGRAPH}{PARAGRAPH}</p>
  <div style="display:none"><p>Hidden offer</p></div>
  <p hidden>Also hidden</p>
</main>
<aside><h2>Most read</h2><ul><li><a href="/1">One story</a></li><li><a href="/2">Two</a></li></ul>
</aside>
<footer><p>Copyright</p></footer>
</body></html>"""

TABLE_PAGE = """<html><body>
<table width="100%"><tr>
  <td><a href="/a">Menu a</a><br><a href="/b">Menu b</a></td>
  <td>{text}</td>
</tr><tr><td>left</td><td>right</td></tr></table>
</body></html>""".format(text="Long story text in the content cell. " * 40)


def node(dom, tag, nth=0):
    return [i for i, t in enumerate(dom.tag) if t == tag][nth]


def by_id(dom, value):
    return next(i for i, el in enumerate(dom.elements) if el.get("id") == value)


@pytest.fixture(scope="module")
def article():
    dom = parse_html(ARTICLE_PAGE)
    return dom, StaticGeometry().boxes(dom)


# -- static ---------------------------------------------------------------------------------


def test_static_gives_a_finite_box_for_every_node(article):
    dom, boxes = article
    assert boxes.shape == (len(dom), 4)
    assert np.isfinite(boxes).all()
    assert (boxes[:, 2:] >= 0).all()


def test_static_is_deterministic(article):
    _, boxes = article
    again = StaticGeometry().boxes(parse_html(ARTICLE_PAGE))
    assert np.array_equal(boxes, again)


def test_window_and_body(article):
    dom, boxes = article
    assert boxes[0].tolist()[:3] == [0.0, 0.0, 1280.0]
    x, y, width, height = boxes[dom.body]
    assert (x, width) == (8.0, 1264.0)
    assert y == 16.0  # its 8 px margin merged with the first list's 16 px, as in CSS
    assert boxes[0, 3] == y + height + 16.0


def test_children_stay_inside_their_parent_and_later_blocks_are_lower(article):
    dom, boxes = article
    main = node(dom, "main")
    blocks = [c for c in dom.children[main] if boxes[c, 3] > 0]
    tops = [boxes[c, 1] for c in blocks]
    assert tops == sorted(tops) and len(set(tops)) == len(tops)
    for child in range(len(dom)):
        up = dom.parent[child]
        if up < 0 or boxes[child, 2] == 0:
            continue
        x, _, w, _ = boxes[child]
        assert x >= boxes[up, 0] - 1e-6
        assert x + w <= boxes[up, 0] + boxes[up, 2] + 1e-6


def test_text_wraps_into_lines(article):
    dom, boxes = article
    short = boxes[node(dom, "h1")]
    first = boxes[by_id(dom, "first")]
    long = boxes[node(dom, "p", 2)]
    assert first[3] > 2 * 19  # several lines
    assert long[3] > first[3]  # twice the text, taller
    assert long[2] == first[2]  # same column width
    assert short[3] > 30  # one line of a 32 px heading


def test_inline_elements_sit_on_their_lines(article):
    dom, boxes = article
    paragraph = boxes[by_id(dom, "first")]
    link = boxes[node(dom, "a", 3)]
    bold = boxes[node(dom, "b")]
    assert paragraph[1] <= link[1] and link[1] + link[3] <= paragraph[1] + paragraph[3] + 1e-6
    assert link[0] <= bold[0] and bold[0] + bold[2] <= link[0] + link[2] + 1e-6
    assert 0 < link[3] < 40  # one line


def test_a_br_starts_a_new_line(article):
    dom, boxes = article
    paragraph = boxes[node(dom, "p", 1)]
    after = boxes[by_id(dom, "after")]
    assert after[1] > paragraph[1]  # on the second line, not the first
    assert paragraph[3] == pytest.approx(2 * after[3])


def test_hidden_nodes_have_zero_boxes(article):
    dom, boxes = article
    for tag in ("head", "title", "meta"):
        assert not boxes[node(dom, tag)].any()
    hidden_div = next(i for i, el in enumerate(dom.elements) if el.get("style") == "display:none")
    for inside in range(hidden_div, dom.end[hidden_div]):
        assert not boxes[inside].any()
    hidden_p = next(i for i, el in enumerate(dom.elements) if el.get("hidden") is not None)
    assert not boxes[hidden_p].any()


def test_image_size_from_markup_and_default():
    dom = parse_html('<html><body><p><img src="a" width="120" height="80"><img src="b"></p>')
    boxes = StaticGeometry().boxes(dom)
    assert boxes[node(dom, "img", 0), 2:].tolist() == [120.0, 80.0]
    assert boxes[node(dom, "img", 1), 2:].tolist() == [300.0, 150.0]
    assert boxes[node(dom, "p"), 3] >= 150.0  # the line grew to hold the image


def test_sidebar_sits_beside_the_main_column(article):
    dom, boxes = article
    main, aside = boxes[node(dom, "main")], boxes[node(dom, "aside")]
    assert aside[1] == main[1]
    assert aside[0] >= main[0] + main[2]
    assert aside[2] == pytest.approx(300.0)
    footer = boxes[node(dom, "footer")]
    assert footer[1] >= max(main[1] + main[3], aside[1] + aside[3])
    assert footer[2] == pytest.approx(1264.0)


def test_navigation_menu_items_share_a_row(article):
    dom, boxes = article
    items = [boxes[node(dom, "li", k)] for k in range(3)]
    assert len({box[1] for box in items}) == 1
    assert items[0][0] < items[1][0] < items[2][0]
    # The aside's list is not a navigation list: its items stack.
    aside_items = [boxes[node(dom, "li", k)] for k in (3, 4)]
    assert aside_items[1][1] > aside_items[0][1]


def test_table_cells_share_the_row():
    dom = parse_html(TABLE_PAGE)
    boxes = StaticGeometry().boxes(dom)
    table, row = boxes[node(dom, "table")], boxes[node(dom, "tr")]
    menu, story = boxes[node(dom, "td", 0)], boxes[node(dom, "td", 1)]
    assert table[2] == pytest.approx(1264.0)  # width="100%"
    assert menu[1] == story[1] and menu[3] == story[3] == row[3]
    assert menu[0] + menu[2] <= story[0]
    assert menu[2] < story[2]  # the narrow link column, the wide story column
    second_row = boxes[node(dom, "tr", 1)]
    assert second_row[1] >= row[1] + row[3]


def test_areas_fall_in_the_studys_buckets(article):
    dom, boxes = article
    areas = PageNodes.from_dom(dom, boxes=boxes, hashes=False).area
    assert areas[node(dom, "p", 2)] >= 42663  # a long paragraph: the top bucket
    assert 0 < areas[node(dom, "a", 0)] < 2000  # a menu link: too small to classify


def test_deep_nesting_needs_no_recursion():
    depth = 3000
    dom = parse_html("<html><body>" + "<div><p>x</p>" * depth + "</div>" * depth)
    assert max(dom.depth) > 1000  # lxml caps nesting, but far beyond Python's stack
    boxes = StaticGeometry().boxes(dom)
    assert boxes.shape == (len(dom), 4)
    paragraphs = [i for i, t in enumerate(dom.tag) if t == "p"]
    tops = boxes[paragraphs, 1]
    assert (np.diff(tops) > 0).all() and (boxes[paragraphs, 3] > 0).all()


def test_elements_without_dom_nodes_still_take_space():
    # <iframe> has no Dom node, but the block holding it is as tall as the frame.
    dom = parse_html('<html><body><div><iframe width="500" height="200"></iframe></div>')
    boxes = StaticGeometry().boxes(dom)
    assert boxes[node(dom, "div"), 3] >= 200


def test_provider_registry():
    assert isinstance(get_geometry_provider(), FlowGeometry)
    assert get_geometry_provider("static") is get_geometry_provider(" Static ")
    with pytest.raises(ValueError, match="unknown geometry provider"):
        get_geometry_provider("gecko")


def test_missing_chromium_is_a_clear_error():
    dom = parse_html("<html><body><p>x</p></body></html>")
    with pytest.raises(GeometryError, match="chromium not found"):
        ChromiumGeometry(executable_path="/nonexistent/chromium").boxes(dom)


def test_marked_html_tags_every_node_and_leaves_the_dom_alone():
    dom = parse_html(ARTICLE_PAGE)
    markup = marked_html(dom)
    marked = parse_html(markup)
    ids = [el.get(ID_ATTRIBUTE) for el in marked.elements if el.get(ID_ATTRIBUTE) is not None]
    assert sorted(map(int, ids)) == list(range(len(dom)))
    assert "<script" not in markup and "changed" not in markup
    assert markup.startswith("<!DOCTYPE html>")
    assert all(el.get(ID_ATTRIBUTE) is None for el in dom.elements)


def test_boxes_from_rects_ignores_strays():
    rects = [[0, 1, 2, 3, 4], [5, 1, 1, 1, 1], [-1, 1, 1, 1, 1], [1, float("nan"), 0, 0, 0]]
    boxes = boxes_from_rects(2, rects)
    assert boxes.tolist() == [[1, 2, 3, 4], [0, 0, 0, 0]]


# -- chromium -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium():
    with ChromiumGeometry() as geometry:
        yield geometry


@pytest.mark.chromium
def test_chromium_gives_a_box_for_every_element(chromium):
    dom = parse_html(ARTICLE_PAGE)
    boxes = chromium.boxes(dom)
    assert boxes.shape == (len(dom), 4)
    assert not boxes[node(dom, "head")].any()  # not rendered: zeros
    assert not boxes[node(dom, "title")].any()
    body = [i for i in range(dom.body, len(dom)) if dom.tag[i] != "br"]
    hidden = {i for i, el in enumerate(dom.elements) if el.get("hidden") is not None}
    hidden |= set(range(by_id_style(dom), dom.end[by_id_style(dom)]))
    shown = [i for i in body if i not in hidden]
    assert all(boxes[i, 2] * boxes[i, 3] > 0 for i in shown)
    assert all(not boxes[i].any() for i in hidden)
    tops = [boxes[c, 1] for c in dom.children[node(dom, "main")] if c not in hidden]
    assert tops == sorted(tops)


def by_id_style(dom):
    return next(i for i, el in enumerate(dom.elements) if el.get("style") == "display:none")


@pytest.mark.chromium
def test_chromium_boxes_are_exact_css_boxes(chromium):
    dom = parse_html(
        "<!DOCTYPE html><html><body style='margin:0'>"
        "<div style='width:200px;height:100px'></div>"
        "<div style='margin-left:30px;width:50px;height:10px'></div></body></html>"
    )
    boxes = chromium.boxes(dom, url="https://example.org/")
    first, second = node(dom, "div", 0), node(dom, "div", 1)
    assert boxes[first].tolist() == [0.0, 0.0, 200.0, 100.0]
    assert boxes[second].tolist() == [30.0, 100.0, 50.0, 10.0]


PLAIN_PAGE = f"""<!DOCTYPE html><html><body>
<h1>Council meeting</h1><p>{PARAGRAPH}</p><h2>Budget</h2><p>Short one.</p>
<ul><li>First point of the list</li><li>Second point, <a href="/x">with a link</a></li></ul>
<p>{PARAGRAPH * 3}</p><blockquote><p>{PARAGRAPH}</p></blockquote>
<table><tr><td>Cell one</td><td>Cell two with more text</td></tr></table>
<p><img src="p.jpg" width="320" height="200"> Caption <em>text</em>.</p>
</body></html>"""


@pytest.mark.chromium
def test_chromium_batch_reuses_one_browser_and_agrees_with_static(chromium):
    pages = [parse_html(PLAIN_PAGE), parse_html(TABLE_PAGE), parse_html(ARTICLE_PAGE)]
    results = [chromium.boxes(dom) for dom in pages]
    assert [b.shape for b in results] == [(len(d), 4) for d in pages]
    # On an unstyled page the static model and the browser broadly agree on where things are.
    dom, real = pages[0], results[0]
    estimate = StaticGeometry().boxes(dom)
    shown = (real[:, 2] * real[:, 3] > 0) & (estimate[:, 2] * estimate[:, 3] > 0)
    assert shown.sum() >= len(dom) - 1  # all but <head>
    for column in range(4):
        assert np.corrcoef(real[shown, column], estimate[shown, column])[0, 1] > 0.9
    ratio = (estimate[:, 2] * estimate[:, 3])[shown] / (real[:, 2] * real[:, 3])[shown]
    assert 0.5 < np.median(ratio) < 2


class Canary:
    """An HTTP server on 127.0.0.1 (IPv4) and ::1 that records every path asked of it."""

    def __init__(self) -> None:
        import contextlib
        import socket
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.requested: list[str] = []
        canary = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                canary.requested.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        class Server6(ThreadingHTTPServer):
            address_family = socket.AF_INET6

        self.servers = [ThreadingHTTPServer(("127.0.0.1", 0), Handler)]
        with contextlib.suppress(OSError):  # no IPv6 loopback here
            self.servers.append(Server6(("::1", 0), Handler))
        for server in self.servers:
            threading.Thread(target=server.serve_forever, daemon=True).start()
        port = self.servers[0].server_address[1]
        # the loopback address as a page may spell it
        self.origins = [
            f"http://127.0.0.1:{port}",
            f"http://localhost:{port}",
            f"http://2130706433:{port}",
            f"http://127.1:{port}",
            f"http://[::ffff:127.0.0.1]:{port}",
        ]
        if len(self.servers) > 1:
            self.origins.append(f"http://[::1]:{self.servers[1].server_address[1]}")

    def close(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()


def fetching_page(origin: str) -> str:
    """A page with every way markup alone (no script) makes a browser fetch from `origin`."""
    hints = "".join(
        f'<link rel="{rel}" href="{origin}/{rel}" as="fetch" crossorigin>'
        for rel in ("prefetch", "preload", "prerender", "dns-prefetch", "preconnect")
    )
    return f"""<!DOCTYPE html><html><head>{hints}
<link rel="modulepreload" href="{origin}/modulepreload">
<link rel="preload" as="image" imagesrcset="{origin}/srcset 1x">
<link rel="stylesheet" href="{origin}/stylesheet"><link rel="icon" href="{origin}/icon">
<link rel="manifest" href="{origin}/manifest">
<meta http-equiv="refresh" content="0;url={origin}/refresh">
<style>@import url({origin}/import); body {{ background: url({origin}/background) }}
@font-face {{ font-family: x; src: url({origin}/font) }} p {{ font-family: x }}</style></head>
<body><p style="background-image: url({origin}/inline)">Text of the page.</p>
<img src="{origin}/img"><img srcset="{origin}/imgset 1x"><picture><source srcset="{origin}/source">
<img src="{origin}/picture"></picture><iframe src="{origin}/iframe"></iframe>
<object data="{origin}/object"></object><embed src="{origin}/embed">
<video poster="{origin}/poster" src="{origin}/video" preload="auto"></video>
<audio src="{origin}/audio" preload="auto"></audio><input type="image" src="{origin}/input">
<a href="{origin}/link" ping="{origin}/ping">a link</a></body></html>"""


@pytest.mark.chromium
def test_chromium_fetches_nothing_a_page_names(chromium):
    """The crawl's browser (resources off) lays a page out without a single request leaving it:
    prefetch and preload hints included (request routing does not see those), whatever form
    of the loopback address they name, and a refresh does not navigate away."""
    import time

    canary = Canary()
    try:
        for origin in canary.origins:
            dom = parse_html(fetching_page(origin))
            boxes = chromium.boxes(dom)
            assert boxes[node(dom, "p"), 2] > 0  # laid out
        # Prefetches are sent after the load event: give any of them time to arrive.
        time.sleep(1.5)
        chromium.boxes(parse_html("<html><body><p>next page</p></body></html>"))
    finally:
        canary.close()
    assert canary.requested == []


def test_marked_html_disarms_hints_and_refreshes():
    dom = parse_html(fetching_page("http://127.0.0.1:9"))
    offline = marked_html(dom)
    marked = parse_html(offline)
    hints = [el for el in marked.elements if el.tag == "link" and el.get("rel") != "stylesheet"]
    hints = [el for el in hints if el.get("rel") not in ("icon", "manifest")]
    assert len(hints) == 7 and all(el.get("href") is el.get("imagesrcset") is None for el in hints)
    refresh = [el for el in marked.elements if el.get("http-equiv") == "refresh"]
    assert refresh and refresh[0].get("content") is None
    assert '<head data-nc-id="1"><meta content="default-src' in offline
    ids = [el.get(ID_ATTRIBUTE) for el in marked.elements if el.get(ID_ATTRIBUTE) is not None]
    assert sorted(map(int, ids)) == list(range(len(dom)))  # every node still has its box


@pytest.mark.slow
@pytest.mark.chromium
def test_a_crawl_with_chromium_geometry_records_the_browsers_boxes(chromium, tmp_path) -> None:
    """NEWSCRAWL_GEOMETRY=chromium inside a real crawl of the demo web: the site pass's node
    records get their boxes from the browser, and `nodes` says so."""
    import subprocess

    import pandas as pd
    from crawl_helpers import FAST_CRAWL

    from newscrawl.crawl.crawl_process import crawl_command
    from newscrawl.demo.server import DemoServer
    from newscrawl.demo.web import build_demo_web
    from newscrawl.template.node_records import PageNodes

    out = tmp_path / "out"
    with DemoServer(build_demo_web(1), port=0) as server:
        sites = server.write_site_list(tmp_path / "sites.csv", ["field-notes"], {"field-notes": 6})
        settings = (*FAST_CRAWL, "DOWNLOAD_TIMEOUT=5", "NEWSCRAWL_GEOMETRY=chromium")
        result = subprocess.run(
            crawl_command(sites, out, settings), capture_output=True, text=True, timeout=300
        )
    assert result.returncode == 0, result.stderr[-3000:]
    nodes = pd.read_parquet(out / "nodes")
    assert len(nodes) and set(nodes.geometry) == {"chromium"}
    pages = pd.read_parquet(out / "pages")
    checked = 0
    for row in pages.itertuples():
        rows = nodes[nodes.url == row.final_url]
        if rows.empty:
            continue
        dom = parse_html(row.html, row.final_url, row.content_type)
        ids = rows.node.to_numpy()
        crawled = rows.area.to_numpy()
        browser = PageNodes.from_dom(dom, row.final_url, boxes=chromium.boxes(dom, html=row.html))
        static = PageNodes.from_dom(dom, row.final_url, geometry="static")
        assert np.allclose(crawled, browser.area[ids], rtol=0.01, atol=1.0)
        assert not np.allclose(crawled, static.area[ids], rtol=0.01, atol=1.0)
        checked += 1
    assert checked >= 5


def test_a_crawl_refuses_an_unusable_geometry_before_fetching(tmp_path, monkeypatch, capsys):
    import newscrawl.template.geometry as geometry
    from newscrawl.cli import main

    assert geometry.check_geometry(" Flow ") == "flow" and geometry.check_geometry(None) == "flow"
    argv = ["crawl", "http://127.0.0.1:9/", "--out", str(tmp_path / "out")]
    assert main([*argv, "-s", "NEWSCRAWL_GEOMETRY=bogus"]) == 2
    assert "unknown geometry provider 'bogus'" in capsys.readouterr().err
    monkeypatch.setattr(geometry, "CHROMIUM_PATH", str(tmp_path / "no-chromium"))
    assert main([*argv, "-s", "NEWSCRAWL_GEOMETRY=chromium"]) == 2
    assert "chromium is not at" in capsys.readouterr().err
    assert not (tmp_path / "out" / "pages").exists()
