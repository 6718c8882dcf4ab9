"""A page a documentation generator wrote is documentation, whatever the page type model says.

Generators sign their pages (`newscrawl.html.generator_marks`). The page type model, trained
mostly on other kinds of pages, types many generated API references, tables of contents and
manual chapters as articles or listings; the mark does not guess. `page_type` gives the
documentation type to a marked page and the model's type to any other. The learned extractor
(`newscrawl.extractors.learned`) scores a marked page's blocks without its site's template and
routes it to the marked pages' guard
(`newscrawl.extractors.blockmodel.recall_guard.MARKED_DOCS_GUARD`); the text is still what the
trees and the guard select.
"""

from __future__ import annotations

from collections.abc import Callable

from newscrawl.extractors.blockmodel.recall_guard import DOCUMENTATION
from newscrawl.html.dom import Dom
from newscrawl.html.generator_marks import marked_generator

__all__ = [
    "generated_documentation",
    "page_type",
]


def generated_documentation(dom: Dom) -> bool:
    """Whether a documentation generator's marks are on the page."""
    return bool(dom.elements) and bool(marked_generator(dom.elements[0]))


def page_type(dom: Dom, modelled: Callable[[], str], marked: bool | None = None) -> str:
    """The page's type: documentation when a generator marked it, else `modelled()` (the page
    type model's answer, asked only then). `marked`: whether it did, when the caller has
    already asked `generated_documentation`."""
    if generated_documentation(dom) if marked is None else marked:
        return DOCUMENTATION
    return modelled()
