"""The Python API (`import newscrawl`): extract, extract_site, crawl, read_articles; a real
crawl of the demo web on 127.0.0.1, and the same texts as the `newscrawl extract` command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import newscrawl
from newscrawl.demo.server import DemoServer
from newscrawl.demo.web import DemoSite, build_demo_web

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def site() -> DemoSite:
    return build_demo_web(4).site("harbor-gazette")


def url_of(path: str) -> str:
    return f"https://harbor-gazette.example{path}"


def test_public_names_are_what_the_docs_list() -> None:
    text = (ROOT / "docs" / "python.md").read_text()
    listed = set(re.findall(r"^### `newscrawl\.(\w+)", text, flags=re.MULTILINE))
    assert set(newscrawl.__all__) == listed | {"__version__"}
    assert all(hasattr(newscrawl, name) for name in newscrawl.__all__)


def test_import_loads_no_heavy_library() -> None:
    heavy = ("scrapy", "twisted", "sklearn", "numpy", "pyarrow", "lxml")
    code = f"import sys, newscrawl; print([m for m in {heavy!r} if m in sys.modules])"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_extract_gives_the_article_and_its_metadata(site: DemoSite) -> None:
    path, story = next(iter(site.articles.items()))
    page = site.pages[path]
    article = newscrawl.extract(page.body, url=url_of(path))
    assert isinstance(article, newscrawl.Article)
    assert article.url == url_of(path)
    assert article.title == story.title
    first = story.text.split("\n")[0]
    assert first in article.text
    assert article.is_article and article.why.startswith("article")
    assert article.author == story.author
    assert article.date is not None and article.date.date() == story.published.date()
    assert article.extractor == "learned" and article.error is None
    # the same page as text gives the same text
    assert newscrawl.extract(page.body.decode("utf-8"), url=url_of(path)).text == article.text


def test_extract_decodes_bytes_as_the_crawl_does() -> None:
    body = "<p>Ceci est un très long paragraphe écrit en français, à propos de la rivière.</p>"
    html = f"<html><head><title>Été</title></head><body>{body * 6}</body></html>"
    data = html.encode("cp1252")
    declared = newscrawl.extract(data, content_type="text/html; charset=windows-1252")
    assert declared.title == "Été" and "très long paragraphe" in declared.text
    meta = html.replace("<head>", '<head><meta charset="windows-1252">').encode("cp1252")
    assert newscrawl.extract(meta).text == declared.text
    # text is taken as text, whatever charset its markup declares
    cyrillic = "<p>Это длинный абзац текста о городе и реке, который нужно извлечь.</p>" * 6
    page = f'<html><head><meta charset="windows-1251"></head><body>{cyrillic}</body></html>'
    assert "Это длинный абзац" in newscrawl.extract(page).text


def test_extract_says_why_a_page_has_no_text() -> None:
    assert newscrawl.extract(b"").error == "parse: page is empty"
    binary = newscrawl.extract(bytes(range(256)) * 4)
    assert binary.text == "" and binary.error is not None and "binary" in binary.error
    with pytest.raises(TypeError, match="str or bytes"):
        newscrawl.extract(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown extractor"):
        newscrawl.extract("<p>x</p>", extractor="nope")


def test_extract_site_gives_the_texts_of_extract_with_site_from_dir(
    site: DemoSite, tmp_path: Path
) -> None:
    folder = tmp_path / "harbor"
    folder.mkdir()
    pages = site.html_pages[:24]
    with (folder / "meta.jsonl").open("w") as meta:
        for index, page in enumerate(pages):
            (folder / f"p{index:02d}.html").write_bytes(page.body)
            meta.write(json.dumps({"id": f"p{index:02d}", "url": url_of(page.path)}) + "\n")
    command = [sys.executable, "-m", "newscrawl.cli", "extract", str(folder)]
    command += ["--site-from", "dir", "-f", "jsonl", "-j", "1"]
    result = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-3000:]
    offline = [json.loads(line)["text"] for line in result.stdout.splitlines()]
    articles = newscrawl.extract_site([(url_of(page.path), page.body) for page in pages])
    assert [a.text for a in articles] == offline
    assert [a.url for a in articles] == [url_of(page.path) for page in pages]
    # the site pass cut the site's template: some page's text is shorter than its own extract
    alone = [newscrawl.extract(page.body, url=url_of(page.path)).text for page in pages]
    assert any(len(cut) < len(own) for cut, own in zip(offline, alone, strict=True))


def test_extract_site_takes_page_objects_and_keeps_bad_pages(site: DemoSite) -> None:
    class Response:  # what a Scrapy response offers: url and body
        def __init__(self, url: str, body: bytes) -> None:
            self.url, self.body = url, body

    pages = [Response(url_of(page.path), page.body) for page in site.html_pages[:6]]
    pages.insert(2, Response(url_of("/empty"), b""))
    articles = newscrawl.extract_site(pages)
    assert len(articles) == 7
    assert articles[2].error == "parse: page is empty" and articles[2].text == ""
    assert all(a.text for i, a in enumerate(articles) if i != 2)
    assert newscrawl.extract_site([]) == []
    with pytest.raises(TypeError, match="pair"):
        newscrawl.extract_site([("a", "b", "c")])  # type: ignore[list-item]


def test_crawl_is_callable_after_its_subpackage_is_imported() -> None:
    import inspect

    import newscrawl.crawl.crawl_process  # Python makes `newscrawl.crawl` name the subpackage now

    assert callable(newscrawl.crawl)
    assert list(inspect.signature(newscrawl.crawl).parameters)[:2] == ["sites", "out"]


def test_crawl_from_a_script_without_a_main_guard(tmp_path: Path) -> None:
    """The crawl's process is a new interpreter: it does not run the caller's script again."""
    script = tmp_path / "script.py"
    script.write_text(
        "import newscrawl\n"
        "try:\n"
        "    newscrawl.crawl(['https://example.com/'], 'out', NEWSCRAWL_GEOMETRY='nope')\n"
        "except ValueError as err:\n"
        "    print('refused:', err)\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.count("refused:") == 1 and "nope" in result.stdout
    assert not (tmp_path / "out" / "articles").exists()


@pytest.mark.slow
def test_crawl_in_its_own_process_then_read_articles(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with DemoServer(build_demo_web(4), port=0) as server:
        sites = server.write_site_list(tmp_path / "sites.csv", ["field-notes"])
        settings = {
            "NEWSCRAWL_ALLOW_PRIVATE": "loopback",
            "AUTOTHROTTLE_ENABLED": False,
            "DOWNLOAD_DELAY": 0,
            "MAX_PAGES_PER_SITE": 12,
            "LOG_LEVEL": "WARNING",
        }
        summary = newscrawl.crawl(sites, out, **settings)
        # a second crawl from the same process: the first one's reactor did not bind it
        again = newscrawl.crawl(sites, tmp_path / "again", **{**settings, "MAX_PAGES_PER_SITE": 2})
    assert summary.ok and again.ok and again.pages == 2, summary.raw
    assert summary.pages == 12 and summary.failed_sites == ()
    table = newscrawl.read_articles(out)
    assert table.num_rows == 12
    assert set(table.column("site").to_pylist()) == {"field-notes"}
    assert table.column("is_article").to_pylist().count(True) == summary.articles
    with pytest.raises(ValueError, match="NEWSCRAWL_NO_SUCH"):
        newscrawl.crawl(sites, tmp_path / "bad", NEWSCRAWL_NO_SUCH=1)
    with pytest.raises(FileNotFoundError):
        newscrawl.read_articles(tmp_path / "bad")


def test_extract_gives_markdown_page_type_and_comments() -> None:
    """The Article carries the Markdown of the same selection, the page's type and its comment
    thread apart from the text."""
    html = (
        "<html><head><title>Rivers</title></head><body><article><h1>Rivers</h1>"
        "<h2>The delta</h2>"
        + "".join(
            f"<p>The river carries silt number {i} down to the wide delta plain.</p>"
            for i in range(8)
        )
        + "<ul><li>first branch of the delta</li><li>second branch of the delta</li></ul>"
        "</article></body></html>"
    )
    article = newscrawl.extract(html, url="https://news.example.com/2024/05/rivers")
    assert "## The delta" in article.markdown
    assert "- first branch of the delta" in article.markdown
    assert article.page_type in {
        "article",
        "listing",
        "forum",
        "product",
        "collection",
        "service",
        "documentation",
    }
    assert article.comments == ""
