"""The static layout model's numbers: the browser's default stylesheet as the model knows it
(sizes, margins, fonts, what is hidden), and reading sizes off an element's markup."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import lxml.html

from newscrawl.html.tags import BLOCK_TAGS


@dataclass(frozen=True, slots=True)
class StaticConfig:
    """The numbers of the static layout model (defaults: Chrome's default stylesheet)."""

    viewport_width: float = 1280.0
    font_size: float = 16.0  # px, of body text
    line_height: float = 1.15  # x font size: Chrome's "normal" for its default font
    char_width: float = 0.42  # x font size: an average character of a proportional font
    image_size: tuple[float, float] = (300.0, 150.0)  # replaced element with no size given
    sidebar_width: float = 300.0  # px, at most 30% of the parent's width
    sidebar_gap: float = 20.0
    sidebar_min_parent: float = 640.0  # narrower parents stay one column
    menu_label_chars: int = 40  # list items this short, in a navigation list, sit in a row


# fmt: off
# Elements never rendered: zero boxes for them and their subtree.
HIDDEN_TAGS = frozenset(
    {"head", "title", "meta", "link", "base", "param", "source", "track", "area", "map",
     "script", "style", "noscript", "template", "dialog"}
)
# Replaced (atomic inline) elements and their default sizes when the markup gives none.
ATOM_SIZES = {
    "img": None,  # StaticConfig.image_size
    "video": None,
    "picture": None,
    "input": (150.0, 21.0),
    "button": None,  # sized by its label
    "audio": (300.0, 54.0),
    "progress": (160.0, 16.0),
    "meter": (80.0, 16.0),
}
# Block elements the static model lays out as blocks (a <br> is a line break in a line box).
BLOCK_LEVEL_TAGS = (BLOCK_TAGS - {"br"}) | {"html", "body"}
# Font size relative to body text (Chrome's default stylesheet, headings in em of 16 px).
FONT_SCALE = {
    "h1": 2.0, "h2": 1.5, "h3": 1.17, "h4": 1.0, "h5": 0.83, "h6": 0.67, "small": 0.83,
    "big": 1.2, "sub": 0.83, "sup": 0.83, "pre": 0.8125, "code": 0.8125, "kbd": 0.8125,
    "samp": 0.8125, "tt": 0.8125,
}
# Vertical margins in em of the element's own font; horizontal margins in px.
MARGIN_EM = {
    "p": 1.0, "h1": 0.67, "h2": 0.83, "h3": 1.0, "h4": 1.33, "h5": 1.67, "h6": 2.33,
    "blockquote": 1.0, "figure": 1.0, "ul": 1.0, "ol": 1.0, "menu": 1.0, "dir": 1.0, "dl": 1.0,
    "pre": 1.0, "hr": 0.5, "fieldset": 0.125,
}
MARGIN_SIDE_PX = {"blockquote": 40.0, "figure": 40.0, "dd": (40.0, 0.0)}
PADDING_LEFT_PX = {"ul": 40.0, "ol": 40.0, "menu": 40.0, "dir": 40.0}
LIST_TAGS = frozenset({"ul", "ol", "menu", "dir"})
TABLE_GROUPS = frozenset({"tbody", "thead", "tfoot"})
CELL_SPACING = 2.0  # border-spacing of tables
SIDEBAR = re.compile(r"side-?bar|\brail\b|\bsecondary\b|widget-area", re.IGNORECASE)
MENU = re.compile(r"nav|menu", re.IGNORECASE)
STYLE_PX = re.compile(r"(?<![-\w])(width|height)\s*:\s*([\d.]+)px", re.IGNORECASE)
DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.IGNORECASE)
# fmt: on

# Node kinds.
HIDDEN, BLOCK, INLINE, ATOM, BREAK, IN_ATOM = range(6)


def is_text(text: str | None) -> bool:
    """Whether `Dom` makes a text piece of this raw text (it drops blank runs)."""
    return bool(text and text.split())


# Elements the Dom skips (no node) that a browser still draws, with their default sizes.
EXTRA_SIZES = {
    "iframe": (300.0, 150.0),
    "object": (300.0, 150.0),
    "embed": (300.0, 150.0),
    "canvas": (300.0, 150.0),
    "svg": (300.0, 150.0),
    "select": (70.0, 19.0),
    "textarea": (180.0, 36.0),
}


def extra_size(el: lxml.html.HtmlElement) -> tuple[float, float] | None:
    """Size of a drawn element that has no Dom node, or None if it is not drawn."""
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    default = EXTRA_SIZES.get(tag)
    if default is None or is_hidden(el, tag):
        return None
    width, height = explicit_size(el)
    width = width if width is not None else size_number(el.get("width"))
    height = height if height is not None else size_number(el.get("height"))
    return (
        width if width is not None else default[0],
        height if height is not None else default[1],
    )


def is_hidden(el: lxml.html.HtmlElement, tag: str) -> bool:
    if el.get("hidden") is not None:
        return True
    if tag == "input" and (el.get("type") or "").lower() == "hidden":
        return True
    style = el.get("style")
    return bool(style and DISPLAY_NONE.search(style))


def explicit_size(el: lxml.html.HtmlElement) -> tuple[float | None, float | None]:
    """width and height in px from the inline style, when given."""
    style = el.get("style")
    sizes: dict[str, float] = {}
    if style:
        for name, value in STYLE_PX.findall(style):
            sizes.setdefault(name.lower(), float(value))
    return sizes.get("width"), sizes.get("height")


def size_number(value: str | None, whole: float | None = None) -> float | None:
    """A size attribute: "300", "300px", or "50%" of `whole`; None if absent or unreadable."""
    if not value:
        return None
    text = value.strip().lower().removesuffix("px")
    try:
        if text.endswith("%"):
            return float(text[:-1]) / 100 * whole if whole is not None else None
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


def class_id(el: lxml.html.HtmlElement) -> str:
    return f"{el.get('class') or ''} {el.get('id') or ''} {el.get('role') or ''}"
