"""The marks documentation generators leave on their pages: each generator's fires, pages that
only look alike do not."""

from __future__ import annotations

import lxml.html
import pytest

from newscrawl.extractors.doc_generator import generated_documentation, page_type
from newscrawl.html.generator_marks import DOC_GENERATORS, marked_generator
from newscrawl.html.parse import parse_html

ARTICLE_BODY = (
    "<h1>Council approves the new bridge</h1>"
    "<p>The city council voted on Tuesday to build a second bridge over the river.</p>"
)


def _page(head: str, body: str = ARTICLE_BODY, body_attrs: str = "") -> str:
    head = f"<head><title>t</title>{head}</head>"
    return f"<!DOCTYPE html><html>{head}<body{body_attrs}>{body}</body></html>"


def _generator(html: str) -> str:
    return marked_generator(parse_html(html).elements[0])


MARKED = {
    "sphinx": _page('<script src="../_static/documentation_options.js?v=5929fcd5"></script>'),
    "sphinx, inline options": _page(
        '<script>var DOCUMENTATION_OPTIONS = {URL_ROOT: "./", VERSION: "1.2"};</script>'
        '<script src="_static/doctools.js"></script>'
    ),
    "sphinx, options by id": _page(
        "",
        ARTICLE_BODY + '<script id="documentation_options" data-url_root="./"></script>',
    ),
    "sphinx, docutils meta too": _page(
        '<meta name="generator" content="Docutils 0.19: https://docutils.sourceforge.io/">'
        '<script src="_static/documentation_options.js"></script>'
    ),
    "docbook": _page('<meta name="generator" content="DocBook XSL Stylesheets V1.79.2">'),
    "docbook, chunk navigation": _page(
        "",
        '<div class="navheader"><a href="ch01.html">Prev</a></div>'
        f'<div class="chapter">{ARTICLE_BODY}</div>'
        '<div class="navfooter"><a href="ch03.html">Next</a></div>',
    ),
    "gtk-doc": _page(
        '<meta name="generator" content="DocBook XSL Stylesheets Vsnapshot">'
        '<meta name="generator" content="GTK-Doc V1.33.1 (XML mode)">'
    ),
    "doxygen": _page('<meta name="generator" content="Doxygen 1.9.4"/>'),
    "javadoc": _page(
        '<script type="text/javascript" src="../script.js"></script>',
        '<script>var pathtoroot = "../";\nvar useModuleDirectories = true;</script>' + ARTICLE_BODY,
    ),
    "javadoc, version 8": _page(
        '<script type="text/javascript" src="../../script.js"></script>',
        "<script><!--\ntry { if (location.href.indexOf('is-external=true') == -1) "
        '{ parent.document.title="Widget"; } } catch(err) {}\n//--></script>' + ARTICLE_BODY,
    ),
    "javadoc, meta": _page('<meta name="generator" content="javadoc/ClassWriterImpl">'),
    "mkdocs": _page('<meta name="generator" content="mkdocs-1.5.3, mkdocs-material-9.4.6">'),
    "mkdocs, search modal": _page(
        "", ARTICLE_BODY + '<div class="modal" id="mkdocs_search_modal" tabindex="-1"></div>'
    ),
    "asciidoc": _page('<meta name="generator" content="Asciidoctor 2.0.20">'),
    "gi-docgen": _page(
        '<script src="urlmap.js"></script><script src="fzy.js"></script>'
        '<script src="search.js"></script>'
    ),
    "texinfo": _page('<meta name="Generator" content="makeinfo">'),
    "texinfo, texi2any": _page('<meta name="generator" content="texi2any 7.0.2">'),
    "rustdoc": _page('<meta name="generator" content="rustdoc">'),
    "rustdoc, body class": _page("", body_attrs=' class="rustdoc struct"'),
    "mdbook": _page(
        "",
        '<script>var path_to_root = "";</script>'
        + ARTICLE_BODY
        + '<script src="book.js" type="text/javascript"></script>',
    ),
    "docutils": _page('<meta name="generator" content="Docutils 0.20.1: https://docutils.sf.io/">'),
}


@pytest.mark.parametrize("case", sorted(MARKED))
def test_each_generators_mark_fires(case: str) -> None:
    expected = case.split(",")[0]
    assert expected in DOC_GENERATORS
    assert _generator(MARKED[case]) == expected


UNMARKED = {
    "wordpress news": _page('<meta name="generator" content="WordPress 6.4.2">'),
    "hugo blog": _page('<meta name="generator" content="Hugo 0.120.4">'),
    "a site's own script.js": _page(
        '<script src="/js/script.js"></script><script>var base_url = "/";</script>'
    ),
    "one of gi-docgen's files": _page('<script src="/assets/urlmap.js"></script>'),
    "sphinx's options word without its tools": _page(
        "<script>window.DOCUMENTATION_OPTIONS = {};</script>"
    ),
    "only a navigation header": _page("", f'<div class="navheader">Menu</div>{ARTICLE_BODY}'),
    "an article about the generators": _page(
        "",
        "<p>Sphinx loads documentation_options.js, Doxygen writes a generator meta and "
        "mdBook sets path_to_root in book.js.</p>",
    ),
    "no head, no body": "<p>just a paragraph</p>",
}


@pytest.mark.parametrize("case", sorted(UNMARKED))
def test_pages_without_a_generators_mark_are_not_documentation(case: str) -> None:
    assert _generator(UNMARKED[case]) == ""
    assert page_type(parse_html(UNMARKED[case]), lambda: "article") == "article"


def test_a_marked_page_is_documentation_whatever_the_model_says() -> None:
    asked: list[bool] = []

    def model() -> str:
        asked.append(True)
        return "article"

    dom = parse_html(MARKED["doxygen"])
    assert generated_documentation(dom)
    assert page_type(dom, model) == "documentation"
    assert not asked  # the model is not asked about a marked page


def test_marks_on_trees_that_are_no_page() -> None:
    assert marked_generator(lxml.html.fragment_fromstring("<div><p>x</p></div>")) == ""
    assert marked_generator(lxml.html.HtmlComment("Generated by javadoc")) == ""
