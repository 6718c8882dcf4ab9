"""The marks documentation generators leave on the pages they write.

Sphinx, DocBook, GTK-Doc, Doxygen, Javadoc, MkDocs, AsciiDoc, gi-docgen, Texinfo, rustdoc and
mdBook each sign their HTML: a ``<meta name="generator">``, scripts of their own (Sphinx's
``documentation_options``, gi-docgen's URL map and fuzzy search, the variables of Javadoc's and
mdBook's inline scripts) or the classes and ids of the page's outermost elements (a chunked
DocBook page's ``navheader`` and ``navfooter``, rustdoc's ``rustdoc`` body, MkDocs' search
dialog). `marked_generator` reads them where generators write them: the children of ``<head>``,
``<body>`` itself and its children (the parser drops comments, so a comment is no mark). It
never walks the whole tree, so every page can pay for it. The names are the ones
`newscrawl.gold.docs_generators` uses, plus ``docutils`` for a page reStructuredText's own
writer made.
"""

from __future__ import annotations

from collections.abc import Iterator

import lxml.etree

__all__ = [
    "DOC_GENERATORS",
    "marked_generator",
]

# Most specific first: a GTK-Doc page also names DocBook, a Sphinx page also names Docutils.
DOC_GENERATORS: tuple[str, ...] = (
    "gtk-doc",
    "docbook",
    "doxygen",
    "javadoc",
    "mkdocs",
    "asciidoc",
    "gi-docgen",
    "texinfo",
    "rustdoc",
    "mdbook",
    "sphinx",
    "docutils",
)

# Words of a generator meta's content, lower-cased ("Asciidoctor" holds "asciidoc").
_META_WORDS: tuple[tuple[str, str], ...] = (
    ("gtk-doc", "gtk-doc"),
    ("docbook", "docbook"),
    ("doxygen", "doxygen"),
    ("javadoc", "javadoc"),
    ("mkdocs", "mkdocs"),
    ("asciidoc", "asciidoc"),
    ("gi-docgen", "gi-docgen"),
    ("makeinfo", "texinfo"),
    ("texi2any", "texinfo"),
    ("texi2html", "texinfo"),
    ("rustdoc", "rustdoc"),
    ("mdbook", "mdbook"),
    ("sphinx", "sphinx"),
    ("docutils", "docutils"),
)

# What marks a generator among a page's scripts (the children of <head> and <body>): every
# script file of a set loaded (by file name, without folder or query) and every inline word of
# it in the text of an inline script. Inline texts are read only on a page that loads a set's
# files: a page's inline scripts can hold megabytes.
_SCRIPT_MARKS: tuple[tuple[frozenset[str], frozenset[str], str], ...] = (
    (frozenset({"documentation_options.js"}), frozenset(), "sphinx"),
    (frozenset({"doctools.js"}), frozenset({"DOCUMENTATION_OPTIONS"}), "sphinx"),
    (frozenset({"urlmap.js", "fzy.js"}), frozenset(), "gi-docgen"),
    (frozenset({"script.js"}), frozenset({"useModuleDirectories"}), "javadoc"),
    (frozenset({"script.js"}), frozenset({"is-external=true"}), "javadoc"),
    (frozenset({"book.js"}), frozenset({"path_to_root"}), "mdbook"),
)

# Ids of the body's children only one generator writes.
_LAYOUT_IDS: dict[str, str] = {
    "mkdocs_search_modal": "mkdocs",
    "rustdoc-vars": "rustdoc",
}


def marked_generator(root: lxml.etree._Element) -> str:
    """The documentation generator whose marks the page rooted at `root` (its ``<html>``
    element) carries, the most specific of `DOC_GENERATORS` when several; "" when none."""
    found = set(_marks(root))
    return next((name for name in DOC_GENERATORS if name in found), "")


def _marks(root: lxml.etree._Element) -> Iterator[str]:
    if not isinstance(root.tag, str):
        return
    head, body = root.find("head"), root.find("body")
    tops = [el for el in (head, body) if el is not None]
    scripts: list[lxml.etree._Element] = []
    for parent in tops:
        for child in parent:
            if child.tag == "meta":
                yield from _meta_marks(child)
            elif child.tag == "script":
                scripts.append(child)
    yield from _script_marks(scripts)
    if body is not None:
        yield from _layout_marks(body)


def _meta_marks(meta: lxml.etree._Element) -> Iterator[str]:
    if (meta.get("name") or "").strip().lower() != "generator":
        return
    content = (meta.get("content") or "").lower()
    yield from (name for words, name in _META_WORDS if words in content)


def _script_marks(scripts: list[lxml.etree._Element]) -> Iterator[str]:
    """The generators `_SCRIPT_MARKS` finds among `scripts`."""
    files = {_script_file(script) for script in scripts}
    if "documentation_options" in (script.get("id") for script in scripts):
        files.add("documentation_options.js")  # Sphinx's options, inline under their own id
    marks = [(words, name) for needed, words, name in _SCRIPT_MARKS if needed <= files]
    texts: list[str] | None = None
    for words, name in marks:
        if words and texts is None:
            texts = [script.text or "" for script in scripts if not script.get("src")]
        if all(any(word in text for text in texts or ()) for word in words):
            yield name


def _script_file(script: lxml.etree._Element) -> str:
    """The file name a script loads, lower-cased ("" for an inline script)."""
    source = script.get("src") or ""
    return source.split("?", 1)[0].split("#", 1)[0].rsplit("/", 1)[-1].lower()


def _layout_marks(body: lxml.etree._Element) -> Iterator[str]:
    """The marks of the body's own classes and its children's: a chunked DocBook page opens
    with its navigation header and closes with its footer; rustdoc classes the body."""
    if "rustdoc" in (body.get("class") or "").split():
        yield "rustdoc"
    classes: set[str] = set()
    for child in body:
        if isinstance(child.tag, str):
            classes.update((child.get("class") or "").split())
            name = _LAYOUT_IDS.get(child.get("id") or "")
            if name:
                yield name
    if {"navheader", "navfooter"} <= classes:
        yield "docbook"
