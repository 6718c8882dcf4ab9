"""A page a documentation generator wrote is documentation, whatever the page type model says.

Generators sign their pages (`newscrawl.html.generator_marks`). The page type model, trained
mostly on other kinds of pages, types many generated API references, tables of contents and
manual chapters as articles or listings; the mark does not guess. `page_type` gives the
documentation type to a marked page and the model's type to any other, so the documentation
guard (`newscrawl.extractors.blockmodel.recall_guard.DOCS_GUARD`) reaches every marked page.
The type decides the guard, and that the page's blocks are scored without its site's
template (`newscrawl.extractors.learned`); the text is still what the trees and the guard
select.
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


def page_type(dom: Dom, modelled: Callable[[], str]) -> str:
    """The page's type: documentation when a generator marked it, else `modelled()` (the page
    type model's answer, asked only then)."""
    if generated_documentation(dom):
        return DOCUMENTATION
    return modelled()
