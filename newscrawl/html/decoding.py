"""Turn the bytes of a page into text, whatever charset it declares (or wrongly declares).

Order of evidence, strongest first (`decode_page` says which one decided, as `Decoded.source`):

1. ``bom``: a byte-order mark;
2. ``detected``: UTF-16/UTF-32 without a BOM, recognised by where the NUL bytes fall;
3. the bytes being valid UTF-8 while holding non-ASCII bytes — random bytes in any other
   charset almost never form valid multi-byte UTF-8, so this beats a declaration that is
   often copied from a template and wrong (``declared`` when a declaration says UTF-8 too,
   else ``detected``); a page whose bytes are UTF-8 but for a few stray bytes (a footer
   pasted in Latin-1) reads as UTF-8 too, its strays read as windows-1252, when it has at
   least as many valid multi-byte characters as strays and reads cleanly so (other charsets'
   text forms far fewer valid sequences than strays, or reads as mojibake in UTF-8);
4. ``declared``: the charset of the HTTP ``Content-Type`` header, then of ``<meta>`` (read by
   w3lib), if the bytes decode strictly with it and, for a single-byte charset, the text does
   not read as mojibake (charset-normalizer's mess ratio);
5. ``detected``: charset-normalizer's best guess (from the whole bytes and from the text
   between the tags, set against each other where they differ), when it reads clearly better
   than the fallback;
6. ``default``: what browsers fall back to for an undeclared page of its language: for a
   Central European, Romanian, Turkish or Baltic page (its ``<html lang>``, else its URL's
   country domain) that language's legacy charset that reads best, else windows-1252 (what
   browsers use for undeclared Western pages), with replacement characters for the bytes it
   cannot map. Detection (5) still replaces it when it reads clearly better.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

import charset_normalizer
from charset_normalizer import CharsetMatch, CharsetMatches
from charset_normalizer.md import mess_ratio
from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom

__all__ = [
    "Decoded",
    "NotHtmlError",
    "declared_charsets",
    "decode_html",
    "decode_page",
    "looks_binary",
    "sniff_wide",
]

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
HEAD_BYTES = 4096
# C0 control bytes text never holds (tab, newline, form feed, carriage return and the escape
# of ISO-2022 are fine); a head with more than this share of them (and more than one) is binary.
_CONTROL_BYTES = frozenset(range(32)) - {9, 10, 12, 13, 27}
_CONTROL_BYTE_STRING = bytes(sorted(_CONTROL_BYTES))
_MAX_CONTROL_SHARE = 0.05
_UNREADABLE = re.compile("[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\ufffd]")
# Charset detection and mess scoring read this much: enough text, bounded cost on huge pages.
_DETECT_BYTES = 64 * 1024
_MESS_CHARS = 64 * 1024
# A declared single-byte charset whose text scores above this is checked against detection;
# a detected charset must read better than the alternative by this margin to replace it.
_MESS_SUSPECT = 0.2
_MESS_MARGIN = 0.1
_WIDE = ("utf-16", "utf-32")
# Valid multi-byte UTF-8 (counted in extra bytes) per stray byte for a body to read as UTF-8
# whatever its text reads like; with fewer, at least as many valid multi-byte characters as
# strays and a text that does not read as mojibake (`_mostly_utf8`).
_MOSTLY_UTF8 = 20
_STRAY_ERRORS = "newscrawl-stray-cp1252"
_VARIED_UTF8 = 3  # distinct multi-byte characters the weaker evidence needs
_ASCII_AND_MARK = frozenset(map(chr, range(128))) | {"\ufffd"}
_SPACES = re.compile(rb"\s+")
# ISO-2022-JP's escape into JIS X 0208 (ESC $ @ or ESC $ B): 7-bit bytes that are Japanese text.
_ISO2022_SHIFT = re.compile(rb"\x1b\$[@B]")
# Detected charsets whose mess ratios differ by no more than this are told apart by language.
_CHAOS_TIE = 0.01
# ISO-8859-7 and windows-1253 share their Greek letters, and detection cannot tell them apart,
# but for capital alpha with tonos (0xB6 in ISO-8859-7, a pilcrow in windows-1253) and the
# quotes and dashes windows-1253 keeps in 0x80-0x9F (control codes in ISO-8859-7, never in
# text): Greek text with 0xB6 and none of those is ISO-8859-7, other Greek text windows-1253.
_C1_BYTES = re.compile(rb"[\x80-\x9f]")
_GREEK = ("cp1253", "iso8859-7")
# Detected charsets read with the decoder browsers use for them (the WHATWG Encoding Standard
# decodes GB2312 as GBK, whose punctuation Python's GB2312 maps differently: ― for —).
_SUPERSET = {"gb2312": "gb18030"}
# The legacy charsets of languages whose undeclared pages charset detection reads as
# windows-1252 or a wrong neighbour (Polish ISO-8859-2 as Nordic ISO-8859-10; Czech,
# Turkish and Lithuanian as windows-1252: the letters they share with it outweigh the rest):
# the browsers' default for the language (a windows charset) first, then the ISO charsets the
# language was also written in. Cyrillic, Greek and the CJK charsets are told apart by
# detection alone.
_CENTRAL = ("cp1250", "iso8859-2")
_BALTIC = ("cp1257", "iso8859-13", "iso8859-4")
_TURKISH = ("cp1254", "iso8859-9")
_LANGUAGE_CHARSETS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("pl", "cs", "sk", "hu", "sl", "hr", "bs", "ro"), _CENTRAL),
    **dict.fromkeys(("tr", "az"), _TURKISH),
    **dict.fromkeys(("lt", "lv"), _BALTIC),
    "et": ("cp1257", "iso8859-13"),
}
# Country domains of those languages (a page without a lang attribute, as old pages are).
_DOMAIN_LANGUAGES = {
    "pl": "pl", "cz": "cs", "sk": "sk", "hu": "hu", "si": "sl", "hr": "hr", "ba": "bs",
    "ro": "ro", "tr": "tr", "az": "az", "lt": "lt", "lv": "lv", "ee": "et",
}  # fmt: skip
# lang or xml:lang (not data-lang) of <html>; a locale may be written cs_CZ as well as cs-CZ
_HTML_LANG = re.compile(
    rb"<html\b[^>]*?\s(?:xml:)?lang\s*=\s*[\"']?\s*([a-zA-Z]{2,3})(?![a-zA-Z])", re.IGNORECASE
)
# What holds no text of the page: scripts, styles and comments (searched in lower case).
_SKIPPED_OPEN = re.compile(rb"<(script|style|!--)")
_SKIPPED_CLOSE = {b"script": b"</script", b"style": b"</style", b"!--": b"-->"}


class NotHtmlError(ValueError):
    """The input is not an HTML page (binary data, or no markup and no text)."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """A decoded page: its text, the codec used (Python's name, e.g. ``cp1251``; "" for input
    that was already text) and what decided it: bom, declared, detected, default or text."""

    text: str
    encoding: str
    source: str
    #: Whether the body's bytes are exactly `text` in UTF-8 (a body that decoded as UTF-8, or
    #: ASCII, without a change): then they can be parsed as they are, not encoded again.
    utf8: bool = field(default=False, compare=False)


def _codec(name: str | None) -> str | None:
    """Python's canonical name of a charset label, or None for an unknown one."""
    if not name:
        return None
    try:
        return codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None


def sniff_wide(head: bytes) -> str | None:
    """UTF-32/UTF-16 (LE or BE) of a body without a BOM, from where its NUL bytes fall.

    Markup is mostly ASCII, so in UTF-16LE nearly every odd byte is NUL and no even byte is
    (and so on for the other forms). Returns the codec name, or None for a byte-oriented body.
    """
    size = len(head) - len(head) % 4
    if size < 8:
        return None
    zeros = [head[i:size:4].count(0) / (size // 4) for i in range(4)]
    odd, even = (zeros[1] + zeros[3]) / 2, (zeros[0] + zeros[2]) / 2
    codec = None
    if zeros[3] > 0.9 and zeros[2] > 0.9 and zeros[0] < 0.05:
        codec = "utf-32-le"
    elif zeros[0] > 0.9 and zeros[1] > 0.9 and zeros[3] < 0.05:
        codec = "utf-32-be"
    elif odd > 0.3 and even < 0.05:
        codec = "utf-16-le"
    elif even > 0.3 and odd < 0.05:
        codec = "utf-16-be"
    return codec if codec and _reads_as_text(head[:size].decode(codec, "replace")) else None


def _reads_as_text(text: str) -> bool:
    """Few control characters and undecodable units: text, not binary data that happens to
    have NUL bytes in a regular pattern."""
    bad = len(_UNREADABLE.findall(text))
    return bad <= _MAX_CONTROL_SHARE * len(text)


def looks_binary(data: bytes) -> bool:
    """True for bodies that are clearly not text: a known binary magic number, or a head with
    many control bytes. A stray NUL does not make a page binary, nor does UTF-16/32."""
    head = data[:HEAD_BYTES]
    if head.startswith(_BINARY_MAGIC):
        return True
    if read_bom(head)[0] or sniff_wide(head):
        return False
    controls = len(head) - len(head.translate(None, _CONTROL_BYTE_STRING))  # one C pass
    return controls > max(1.0, _MAX_CONTROL_SHARE * len(head))


def declared_charsets(data: bytes, content_type: str | None = None) -> list[str]:
    """Charsets the HTTP header and the page's ``<meta>`` claim, in that order (w3lib reads
    them and maps labels as browsers do: ``iso-8859-1`` and ``ascii`` mean windows-1252)."""
    found: list[str] = []
    header = http_content_type_encoding(content_type) if content_type else None
    for label in (header, html_body_declared_encoding(data[:8192])):
        codec = _codec(label)
        if codec and codec not in found:
            found.append(codec)
    return found


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def _stray_as_cp1252(error: UnicodeError) -> tuple[str, int]:
    """The UTF-8 decoder's error handler for `_mostly_utf8`: a lone stray byte reads as
    windows-1252 (U+FFFD for the five bytes it leaves undefined), a cut multi-byte sequence
    as U+FFFD."""
    if not isinstance(error, UnicodeDecodeError):
        raise error
    bad = error.object[error.start : error.end]
    text = bad.decode("cp1252", "replace") if len(bad) == 1 else "\ufffd"
    return text, error.end


codecs.register_error(_STRAY_ERRORS, _stray_as_cp1252)


def _mostly_utf8(data: bytes) -> str | None:
    """The UTF-8 text of a body with a few stray bytes among valid multi-byte sequences (an
    editor's slip, a footer pasted in Latin-1), its strays read as windows-1252; None for a
    body in another charset.

    It reads as UTF-8 when its valid multi-byte sequences outweigh its strays by
    `_MOSTLY_UTF8` extra bytes each, or when it has at least as many valid multi-byte
    characters as strays, of several kinds, and does not read as mojibake so: text in another
    single-byte charset forms valid sequences only by accident, far fewer than its strays or
    one pair over and over (a brand name's ``É®``), and CJK double-byte text that forms many
    reads as a jumble of scripts in UTF-8."""
    replaced = data.decode("utf-8", "replace")
    marks = replaced.count("\ufffd")
    strays = marks - data.count("\ufffd".encode())
    non_ascii = len(replaced) - len(replaced.encode("ascii", "ignore"))
    characters = non_ascii - marks  # valid multi-byte characters
    # Each non-ASCII character adds its extra bytes; each U+FFFD adds 2 of its own.
    multibyte = len(replaced.encode("utf-8", "surrogatepass")) - len(replaced) - 2 * strays
    if multibyte >= _MOSTLY_UTF8 * max(strays, 1):
        return data.decode("utf-8", _STRAY_ERRORS)
    if characters < strays or len(set(replaced) - _ASCII_AND_MARK) < _VARIED_UTF8:
        return None
    text = data.decode("utf-8", _STRAY_ERRORS)
    return text if _mess(text) <= _MESS_SUSPECT else None


def _mess(text: str) -> float:
    """How much `text` reads like mojibake (0: clean), per charset-normalizer."""
    return mess_ratio(text[:_MESS_CHARS], maximum_threshold=1.0)


def _single_byte(codec: str) -> bool:
    try:
        return codecs.getincrementaldecoder(codec)().decode(b"\xff") != ""
    except (UnicodeDecodeError, LookupError):
        return False


def _guess(data: bytes, text: bytes) -> str | None:
    """charset-normalizer's best guess for a page, from its bytes and from `text`, the bytes
    between its tags (`_between_tags`).

    Markup, scripts and styles are mostly ASCII and can outweigh the page's text: on Greek
    pages in windows-1253 or ISO-8859-7 the whole bytes read best as Cyrillic or Mac Latin-2.
    So the guess from the whole bytes and the guess from the text, where they differ, are set
    against each other on the text.
    """
    whole = _best(charset_normalizer.from_bytes(data[:_DETECT_BYTES]))
    if text.isascii():  # no text to read a charset from (empty bytes read as UTF-8)
        return whole.encoding if whole is not None else None
    visible = _best(charset_normalizer.from_bytes(text))
    if whole is None or visible is None or whole.encoding == visible.encoding:
        found = whole or visible
        return found.encoding if found is not None else None
    pair = [whole.encoding, visible.encoding]
    best = _best(charset_normalizer.from_bytes(text, cp_isolation=pair))
    return (best or whole).encoding


def _best(matches: CharsetMatches) -> CharsetMatch | None:
    """The match that reads as the most coherent language among those as clean as the
    cleanest (charset-normalizer's own order can put a worse-fitting charset first: Polish
    ISO-8859-2 text came out as Nordic ISO-8859-10)."""
    if not matches:
        return None
    cleanest = min(match.chaos for match in matches)
    clean = [match for match in matches if match.chaos <= cleanest + _CHAOS_TIE]
    return max(clean, key=lambda match: match.coherence)


def _between_tags(data: bytes) -> bytes:
    """The bytes outside scripts, styles, comments and ``<...>``, runs of whitespace made one
    space. Each search starts where the last one ended, so this is linear in the input
    whatever it holds (a pattern such as ``<script.*?</script>`` rescans on unclosed ones)."""
    lower = data.lower()
    kept: list[bytes] = []
    at = 0
    while (found := _SKIPPED_OPEN.search(lower, at)) is not None:
        kept.append(data[at : found.start()])
        close = _SKIPPED_CLOSE[found.group(1)]
        end = lower.find(close, found.end())
        at = len(data) if end < 0 else end + len(close)
    kept.append(data[at:])
    parts = b" ".join(kept).split(b"<")
    text = [parts[0], *(part.partition(b">")[2] for part in parts[1:])]
    return _SPACES.sub(b" ", b" ".join(text))


def _detect(data: bytes, fallback: Decoded) -> Decoded:
    """The detected charset (`_guess`) when the page reads clearly better in it than in
    `fallback`'s, else `fallback`."""
    visible = _between_tags(data[: 4 * _DETECT_BYTES])[:_DETECT_BYTES]
    guess = _guess(data, visible)
    codec = _codec(guess) if guess is not None else None
    codec = _SUPERSET.get(codec or "", codec)
    if codec in _GREEK:  # see _C1_BYTES
        iso = b"\xb6" in data and not _C1_BYTES.search(data)
        codec = "iso8859-7" if iso else "cp1253"
    if codec is None or codec == fallback.encoding:
        return fallback
    # Read over the whole page, not the text alone: on a short text one odd symbol (a pound
    # sign, a stray replacement) swings the mess ratio of the right charset, too.
    text = data.decode(codec, "replace")
    if _mess(text) + _MESS_MARGIN <= _mess(fallback.text):
        return Decoded(text, codec, "detected")
    return fallback


def _declared(data: bytes, declared: list[str]) -> Decoded | None:
    """The first declared charset the bytes decode in without reading as mojibake."""
    for codec in declared:
        if codec.startswith(_WIDE):
            continue  # a UTF-16/32 declaration on bytes without its NUL pattern is a lie
        text = _strict(data, codec)
        if text is None:
            continue
        found = Decoded(text, codec, "declared")
        if _single_byte(codec) and _mess(text) > _MESS_SUSPECT:
            return _detect(data, found)
        return found
    return None


def _page_language(data: bytes, url: str | None) -> str | None:
    """The page's language as far as choosing a charset needs it: the first subtag of its
    ``<html lang>`` (or ``xml:lang``), else the language of its URL's country domain."""
    if found := _HTML_LANG.search(data[:HEAD_BYTES]):
        return found.group(1).decode("ascii").lower()
    try:
        host = urlsplit(url).hostname if url else None
    except ValueError:  # a malformed URL ("http://[::1") tells nothing
        return None
    return _DOMAIN_LANGUAGES.get(host.rstrip(".").rpartition(".")[2]) if host else None


def _default(data: bytes, url: str | None) -> Decoded:
    """What a browser shows an undeclared page in (see the module docstring, 6)."""
    candidates = _LANGUAGE_CHARSETS.get(_page_language(data, url) or "", ())
    if not _C1_BYTES.search(data):
        # A page of text in a windows charset nearly always has a byte in 0x80-0x9F, where
        # windows-1250 keeps š, ž, ś, ź and ť and all of them keep their quotes and dashes,
        # and the ISO charsets only control codes: a page without one is in the ISO charset.
        candidates = tuple(c for c in candidates if c.startswith("iso")) or candidates
    best: Decoded | None = None
    least = 0.0
    for codec in candidates:
        # A byte the charset leaves undefined (windows-1250's 0x81) reads as U+FFFD, as in a
        # browser: one stray byte must not hand the page to a charset that misreads its letters.
        text = data.decode(codec, "replace")
        mess = _mess(text)
        if best is None or mess < least:  # the cleanest; the first where they read alike
            best, least = Decoded(text, codec, "default"), mess
    return best or Decoded(data.decode("cp1252", "replace"), "cp1252", "default")


def _decode_bytes(data: bytes, content_type: str | None, url: str | None) -> Decoded:
    head = data[:HEAD_BYTES]
    bom_codec, bom = read_bom(head)
    if bom_codec and bom:
        return Decoded(
            data[len(bom) :].decode(bom_codec, "replace"), _codec(bom_codec) or "", "bom"
        )
    if wide := sniff_wide(head):
        return Decoded(data.decode(wide, "replace"), wide, "detected")
    if looks_binary(data):
        raise NotHtmlError("body is binary data, not an HTML page")
    declared = declared_charsets(data, content_type)
    if data.isascii():
        found = _declared(data, declared)
        if found is None and _ISO2022_SHIFT.search(data):  # 7-bit Japanese: escapes, no 8th bit
            text = _strict(data, "iso2022_jp_ext")
            found = Decoded(text, "iso2022_jp_ext", "detected") if text is not None else None
        found = found or Decoded(data.decode("ascii"), "ascii", "default")
        return replace(found, utf8=found.text == data.decode("ascii"))
    text = _strict(data, "utf-8")
    if text is not None:
        return Decoded(text, "utf-8", "declared" if "utf-8" in declared else "detected", True)
    text = _mostly_utf8(data)
    if text is not None:
        return Decoded(text, "utf-8", "declared" if "utf-8" in declared else "detected")
    found = _declared(data, declared)
    if found is not None:
        return found
    return _detect(data, _default(data, url))


def decode_page(
    data: bytes | str, content_type: str | None = None, url: str | None = None
) -> Decoded:
    """Decode a page body to text, saying which charset and why (see the module docstring);
    `url`, where known, tells the language of an undeclared page that has no lang attribute.

    NUL characters are dropped (HTML parsers ignore them). Raises `NotHtmlError` for binary
    bodies.
    """
    if isinstance(data, str):
        return Decoded(data, "", "text")
    decoded = _decode_bytes(data, content_type, url)
    # text that is its bytes in UTF-8 has a NUL character where the bytes have a NUL byte (the
    # bytes' search is one memchr)
    if b"\x00" in data if decoded.utf8 else "\x00" in decoded.text:
        decoded = Decoded(decoded.text.replace("\x00", ""), decoded.encoding, decoded.source)
    return decoded


def decode_html(data: bytes | str, content_type: str | None = None, url: str | None = None) -> str:
    """The text of `decode_page`. Raises `NotHtmlError` for binary bodies."""
    return decode_page(data, content_type, url).text
