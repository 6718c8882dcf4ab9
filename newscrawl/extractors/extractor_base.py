"""What every extractor returns, and the interface it offers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

from newscrawl.html.dom import Dom

__all__ = ["Extraction", "Extractor", "error_text"]


@dataclass(frozen=True, slots=True)
class Extraction:
    """An article as one extractor saw it.

    `text` keeps paragraphs as separate lines. `node_ids` are the DOM ids (preorder numbers of
    `Dom`) whose subtrees make up the text; later stages build on them. `pieces`, when the
    extractor gives them: the text pieces of `Dom` it selected, in document order, which
    `Dom.pieces_text` joins into `text` (NCE's text may open with its title before them); the
    Markdown of the selection is rendered from them (`newscrawl.extractors.markdown.page_markdown`).
    `markdown`: that Markdown, where the caller asked for it (None: not rendered). `page_type` is
    one of WCXB's seven kinds where the extractor tells (the learned one does), else "".
    `comments`: the page's comment thread where a later stage settled it (the site pass, when
    it cut text of a thread out of `text`); None: the page-level thread stands.
    """

    title: str
    text: str
    node_ids: tuple[int, ...]
    extractor: str
    pieces: tuple[int, ...] | None = None
    markdown: str | None = None
    # what kind of page it is (`extractors.blockmodel.pagetype.PAGE_TYPES`), "" when the extractor
    # cannot tell
    page_type: str = ""
    comments: str | None = None

    @classmethod
    def empty(cls, extractor: str, title: str = "") -> Extraction:
        return cls(title=title, text="", node_ids=(), extractor=extractor)

    def __bool__(self) -> bool:
        return bool(self.text)


class Extractor(Protocol):
    """A page-level extractor: built from a typed config, applied to one parsed page."""

    name: ClassVar[str]

    def extract(self, dom: Dom) -> Extraction: ...


def error_text(err: BaseException) -> str:
    """An extractor's error as one line: its type and message."""
    message = " ".join(str(err).split())
    return f"{type(err).__name__}: {message}" if message else type(err).__name__
