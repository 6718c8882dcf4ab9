"""Re-root markup nested deeper than the HTML parser can build.

libxml2 stops at a fixed element depth (2048 levels in huge-tree mode) and drops the rest of
the page. `flatten_nesting` rewrites such markup so every element path fits: an element is kept
when it sits in the outer `top` levels (the page's shell: html, body, header) or when its own
subtree is at most `bottom` levels deep (the content: article, paragraphs, inline markup); the
wrappers in between lose their tags, never their text. Along any path from the root the height
of the subtrees strictly falls, so at most ``top + bottom`` elements stay on it.

The markup is read with the standard library's tokenizer (no depth limit, no tree) and written
back token by token, so only the dropped tags change.
"""

from __future__ import annotations

from html import escape
from html.parser import HTMLParser

from newscrawl.html.tags import VOID_TAGS

__all__ = ["flatten_nesting"]

# Elements an unclosed sibling of the same name ends (<p>a<p>b are siblings, not nested).
_SELF_CLOSING_SIBLINGS = frozenset(["p", "li", "dt", "dd", "tr", "td", "th", "option"])


class _Open:
    """An element whose end tag has not come yet."""

    __slots__ = ("deepest", "depth", "start", "tag")

    def __init__(self, tag: str, start: int, depth: int) -> None:
        self.tag = tag
        self.start = start  # index of its start-tag token
        self.depth = depth
        self.deepest = depth  # depth of the deepest element seen inside it so far


class _Rewriter(HTMLParser):
    """Tokens of the markup, with each element's depth and subtree height."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[str] = []
        self.open: list[_Open] = []
        self.placement: dict[int, tuple[int, int]] = {}  # start token -> (depth, height)
        self.partner: dict[int, int] = {}  # end token -> its start token

    def _close(self) -> None:
        el = self.open.pop()
        self.placement[el.start] = (el.depth, el.deepest - el.depth)
        if self.open:
            self.open[-1].deepest = max(self.open[-1].deepest, el.deepest)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tokens.append(self.get_starttag_text() or f"<{tag}>")
        if tag in VOID_TAGS:
            return
        if tag in _SELF_CLOSING_SIBLINGS and self.open and self.open[-1].tag == tag:
            self._close()
        self.open.append(_Open(tag, len(self.tokens) - 1, len(self.open)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tokens.append(self.get_starttag_text() or f"<{tag}/>")

    def handle_endtag(self, tag: str) -> None:
        self.tokens.append(f"</{tag}>")
        match = next((k for k in range(len(self.open) - 1, -1, -1) if self.open[k].tag == tag), -1)
        if match < 0:
            return  # a stray end tag: kept as it is, the HTML parser ignores it
        self.partner[len(self.tokens) - 1] = self.open[match].start
        while len(self.open) > match:
            self._close()

    def handle_data(self, data: str) -> None:
        # Text comes with its character references resolved (as a browser reads them): escape
        # it again. Script and style content comes raw and stays raw.
        self.tokens.append(data if self.cdata_elem else escape(data, quote=False))

    def handle_comment(self, data: str) -> None:
        self.tokens.append(f"<!--{data}-->")

    def handle_decl(self, decl: str) -> None:
        self.tokens.append(f"<!{decl}>")

    def handle_pi(self, data: str) -> None:
        self.tokens.append(f"<?{data}>")

    def unknown_decl(self, data: str) -> None:
        self.tokens.append(f"<!--[{data}]-->")  # CDATA outside SVG/MathML: a bogus comment

    def finish(self) -> None:
        self.close()
        while self.open:
            self._close()


def flatten_nesting(markup: str, top: int = 256, bottom: int = 768) -> str:
    """`markup` with the tags of the wrappers nested between the outer `top` levels and the
    inner `bottom` levels removed (what they hold stays in place)."""
    rewriter = _Rewriter()
    rewriter.feed(markup)
    rewriter.finish()

    def kept(start: int) -> bool:
        depth, height = rewriter.placement[start]
        return depth < top or height < bottom

    dropped = {start for start in rewriter.placement if not kept(start)}
    dropped.update(end for end, start in rewriter.partner.items() if start in dropped)
    return "".join(tok for i, tok in enumerate(rewriter.tokens) if i not in dropped)
