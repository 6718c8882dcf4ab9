"""A Dom's text pieces rendered as text: line breaks, glued pieces, ``<pre>`` text as written."""

from __future__ import annotations

import re
from collections.abc import Iterable

import lxml.etree
import lxml.html

from newscrawl.html.tags import SKIPPED_TAGS

__all__ = [
    "join_pieces",
    "pre_joined",
    "preformatted_pieces",
]


def join_pieces(pieces: Iterable[tuple[int, str, int, bool, int]]) -> str:
    """Render text pieces given as (piece id, text, line, glued, pre), in document order: a
    new line where the line number changes or pieces in between are left out, else a space
    (nothing between glued pieces). `pre`: the ``<pre>`` holding the piece (-1: none), whose
    text is as written (`Dom.pre_pieces`): pieces that follow one another in one ``<pre>``
    are joined as they are, its line breaks and indentation kept."""
    lines: list[str] = []
    line: list[str] = []
    current = None
    previous = -2
    box = -1  # the <pre> of the previous piece
    for k, text, number, glued, pre in pieces:
        follows = k == previous + 1 or previous < 0
        if pre >= 0 and pre == box and follows:
            line.append(pre_joined(line[-1], text, glued))
        elif number != current or not follows or pre >= 0 or box >= 0:
            if line:
                lines.append(_line_text(line, box))
            line = [text.lstrip("\r\n") if pre >= 0 else text]
            current = number
        else:
            line.append(text if glued else " " + text)
        previous, box = k, pre
    if line:
        lines.append(_line_text(line, box))
    return "\n".join(lines)


def pre_joined(before: str, text: str, glued: bool) -> str:
    """`text`, a piece of a ``<pre>`` as written, as it follows the piece `before` there: a
    space before it where the two are words apart (`Dom.piece_glued` False: a button's label
    and the code after it) and nothing written parts them."""
    if glued or not before or not text or before[-1].isspace() or text[0].isspace():
        return text
    return " " + text


def _line_text(parts: list[str], pre: int) -> str:
    """One rendered line from its parts (a ``<pre>``'s lines end without trailing blanks)."""
    text = "".join(parts)
    return text.rstrip() if pre >= 0 else text


def preformatted_pieces(
    pre: lxml.etree._Element, shown: set[lxml.etree._Element] | frozenset = frozenset()
) -> list[str]:
    """The text pieces of a ``<pre>`` element as written, one per non-blank text run in
    document order (as `Dom` makes its pieces), each with the blank runs and ``<br>`` line
    breaks before it; the first without the blank lines that open the element, the last
    without trailing whitespace. Elements a reader never sees keep only their tails."""
    texts: list[str] = []
    pending: list[str] = []

    def add(raw: str | None) -> None:
        if not raw:
            return
        if raw.strip():
            texts.append("".join(pending) + raw)
            pending.clear()
        else:
            pending.append(raw)

    walker = lxml.etree.iterwalk(pre, events=("start", "end"))
    for event, el in walker:
        tag = el.tag
        visible = isinstance(tag, str) and (tag.lower() not in SKIPPED_TAGS or el in shown)
        if event == "start":
            if not visible:
                walker.skip_subtree()
            elif tag.lower() == "br":
                pending.append("\n")
            elif visible:
                add(el.text)
        elif el is not pre:
            add(el.tail)
    if texts:
        texts[0] = _LEADING_BLANK_LINES.sub("", texts[0])
        texts[-1] = texts[-1].rstrip()
    return texts


_LEADING_BLANK_LINES = re.compile(r"\A(?:[ \t\r\f\v]*\n)+")
