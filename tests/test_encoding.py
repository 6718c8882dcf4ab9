"""Charset handling: BOM, valid UTF-8, declarations, fallback."""

from __future__ import annotations

import codecs

import pytest

from newscrawl.encoding import NotHtmlError, declared_charsets, decode_html, looks_binary


def test_bom_wins() -> None:
    data = codecs.BOM_UTF16_LE + "<p>olá</p>".encode("utf-16-le")
    assert decode_html(data) == "<p>olá</p>"


def test_declared_charset_used_when_bytes_are_not_utf8() -> None:
    data = '<meta charset="windows-1251"><p>Привет</p>'.encode("cp1251")
    assert "Привет" in decode_html(data)


def test_header_charset_comes_before_meta() -> None:
    data = '<meta charset="utf-8"><p>Привет</p>'.encode("koi8-r")
    assert "Привет" in decode_html(data, content_type="text/html; charset=koi8-r")
    assert declared_charsets(data, "text/html; charset=KOI8-R") == ["koi8-r", "utf-8"]


def test_wrong_utf8_declaration_falls_back_to_windows_1252() -> None:
    data = '<meta charset="utf-8"><p>café naïve</p>'.encode("cp1252")
    assert "café naïve" in decode_html(data)


def test_unknown_charset_name_is_ignored() -> None:
    assert decode_html(b'<meta charset="x-no-such"><p>plain</p>').endswith("plain</p>")


@pytest.mark.parametrize("data", [b"%PDF-1.4 ...", b"PK\x03\x04zip", b"abc\x00\x00def"])
def test_binary_bodies_are_refused(data: bytes) -> None:
    assert looks_binary(data)
    with pytest.raises(NotHtmlError):
        decode_html(data)
