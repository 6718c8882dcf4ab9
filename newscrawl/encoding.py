"""Turn the bytes of a page into text, whatever charset it declares (or wrongly declares).

Order of evidence, strongest first:

1. a byte-order mark;
2. the bytes being valid UTF-8 while holding non-ASCII bytes — random bytes in any other
   charset almost never form valid multi-byte UTF-8, so this beats a declaration that is
   often copied from a template and wrong;
3. the charset from the HTTP ``Content-Type`` header, then from ``<meta>``, if the bytes decode
   strictly with it;
4. windows-1252 (what browsers use for undeclared Western pages), with replacement characters
   for the bytes it cannot map.
"""

from __future__ import annotations

import codecs
import re

__all__ = ["NotHtmlError", "decode_html", "looks_binary"]

_META_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_\-:.]+)""", re.IGNORECASE
)
_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([a-zA-Z0-9_\-:.]+)", re.IGNORECASE)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Magic numbers of formats servers like to label text/html by mistake.
_BINARY_MAGIC = (
    b"%PDF-",
    b"\x89PNG",
    b"GIF8",
    b"\xff\xd8\xff",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"BZh",
    b"\x7fELF",
    b"RIFF",
    b"OggS",
    b"ID3",
    b"\x00\x00\x01\x00",
    b"(\xb5/\xfd",
)


class NotHtmlError(ValueError):
    """The input is not an HTML page (binary data, or no markup and no text)."""


def looks_binary(data: bytes) -> bool:
    """True for bodies that are clearly not text: a known binary magic number, or NUL bytes."""
    head = data[:4096]
    if head.startswith(_BINARY_MAGIC):
        return True
    # UTF-16/32 text has NULs too, but it announces itself with a BOM.
    return b"\x00" in head and not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))


def _normal_codec(name: str | bytes | None) -> str | None:
    if not name:
        return None
    if isinstance(name, bytes):
        name = name.decode("ascii", "ignore")
    try:
        codec = codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None
    # Browsers read "iso-8859-1" and "ascii" as windows-1252 (WHATWG encoding standard).
    return "cp1252" if codec in {"latin-1", "iso8859-1", "ascii"} else codec


def declared_charsets(data: bytes, content_type: str | None = None) -> list[str]:
    """Charsets the HTTP header and the page's ``<meta>`` claim, in that order."""
    found: list[str] = []
    if content_type:
        match = _HEADER_CHARSET.search(content_type)
        if match and (codec := _normal_codec(match.group(1))):
            found.append(codec)
    match = _META_CHARSET.search(data[:8192])
    if match and (codec := _normal_codec(match.group(1))) and codec not in found:
        found.append(codec)
    return found


def decode_html(data: bytes | str, content_type: str | None = None) -> str:
    """Decode a page body to text. Raises `NotHtmlError` for binary bodies."""
    if isinstance(data, str):
        return data
    if looks_binary(data):
        raise NotHtmlError("body is binary data, not an HTML page")
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(codec, "replace")
    if not data.isascii():
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    for codec in declared_charsets(data, content_type):
        if codec.startswith("utf-16") or codec.startswith("utf-32"):
            continue  # a UTF-16 declaration on bytes without a BOM is always a lie
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            continue
    return data.decode("cp1252", "replace")
