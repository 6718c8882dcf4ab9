"""HTML element tables every stage shares: what a reader never sees, what starts a line, what
has no end tag."""

from __future__ import annotations

__all__ = ["BLOCK_TAGS", "SKIPPED_TAGS", "VOID_TAGS"]

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
# Void elements: no content and no end tag (the HTML standard's list, with the obsolete keygen).
VOID_TAGS = frozenset(
    {
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta"),
        *("param", "source", "track", "wbr"),
    }
)
