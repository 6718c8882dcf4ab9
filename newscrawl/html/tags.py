"""HTML element tables every stage shares: what a reader never sees, what starts a line, what
has no end tag."""

from __future__ import annotations

__all__ = ["BLOCK_TAGS", "GLUE_TAGS", "SKIPPED_TAGS", "VOID_TAGS"]

# Elements whose content a reader never sees: they get no node and no text.
SKIPPED_TAGS = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "canvas",
        "select",
        "option",
        "datalist",
        "textarea",
    }
)
# Elements that start a new line when text is rendered.
BLOCK_TAGS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "body",
        "br",
        "caption",
        "center",
        "dd",
        "details",
        "dialog",
        "dir",
        "div",
        "dl",
        "dt",
        "fieldset",
        "figcaption",
        "figure",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hgroup",
        "hr",
        "html",
        "legend",
        "li",
        "main",
        "menu",
        "nav",
        "ol",
        "p",
        "pre",
        "section",
        "summary",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "ul",
    }
)
# Inline elements that may end or start inside a word (a drop cap, a styled syllable, a
# letter-by-letter animation): two of them side by side with no whitespace between render as
# one word. Where another element ends and the next one starts with nothing between them
# (`<a>lena_rides</a><span>New member</span>`, a label and a button), pages lay the two apart
# with CSS, and their texts are two words (`newscrawl.html.dom`).
GLUE_TAGS = frozenset(
    {
        *("abbr", "b", "bdi", "bdo", "big", "del", "em", "font", "i", "ins", "mark", "nobr"),
        *("q", "rb", "rp", "rt", "ruby", "s", "small", "span", "strike", "strong", "sub"),
        *("sup", "tt", "u", "wbr"),
    }
)
# Void elements: no content and no end tag (the HTML standard's list, with the obsolete keygen).
VOID_TAGS = frozenset(
    {
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta"),
        *("param", "source", "track", "wbr"),
    }
)
