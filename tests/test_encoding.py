"""Charset handling: BOM, valid UTF-8, declarations, fallback."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from charset_normalizer import CharsetMatch, CharsetMatches

from newscrawl.cli import main
from newscrawl.html.decoding import (
    Decoded,
    NotHtmlError,
    _best,
    declared_charsets,
    decode_html,
    decode_page,
    looks_binary,
)
from newscrawl.html.parse import parse_html


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


# -- lying and missing declarations (issue 10) ----------------------------------------------------

RUSSIAN = (
    "<html><head>{meta}<title>Русский заголовок</title></head><body>"
    "<p>Москва - столица России, крупнейший по численности населения город страны. "
    "Здесь работают правительство и парламент.</p></body></html>"
)
JAPANESE = (
    "<html><head>{meta}<title>日本語のタイトル</title></head><body>"
    "<p>東京は日本の首都であり、世界最大の都市圏の一つです。多くの企業が本社を置いています。</p>"
    "</body></html>"
)
UTF8_META = '<meta charset="utf-8">'


@pytest.mark.parametrize(
    ("page", "codec", "meta", "content_type", "expected"),
    [
        (RUSSIAN, "cp1251", UTF8_META, None, "cp1251"),
        (RUSSIAN, "cp1251", "", None, "cp1251"),
        (RUSSIAN, "cp1251", "", "text/html; charset=utf-8", "cp1251"),
        (RUSSIAN, "cp1251", '<meta charset="windows-1252">', None, "cp1251"),
        (RUSSIAN, "koi8-r", UTF8_META, None, "koi8-r"),
        (JAPANESE, "shift_jis", UTF8_META, None, "cp932"),
        (JAPANESE, "shift_jis", "", None, "cp932"),
    ],
    ids=[
        "1251-as-utf8",
        "1251-undeclared",
        "1251-header-utf8",
        "1251-as-1252",
        "koi8",
        "sjis-as-utf8",
        "sjis",
    ],
)
def test_lying_or_missing_charset_is_detected(
    page: str, codec: str, meta: str, content_type: str | None, expected: str
) -> None:
    text = page.format(meta=meta)
    decoded = decode_page(text.encode(codec), content_type)
    assert decoded.text == text
    assert (decoded.encoding, decoded.source) == (expected, "detected")


# A page as sites serve it: a long script and a style in the head, a menu of links, then the
# text. The markup is ASCII and outweighs the text: read whole, the bytes of this Greek page
# look most like Central European windows-1250.
_SCRIPT = "var slots = [['top', 728, 90], ['side', 300, 250]]; track('view', slots);\n" * 100
NEWS_PAGE = (
    "<html><head><title>{title}</title><script>" + _SCRIPT + "</script>"
    "<style>body {{ font-family: Arial, sans-serif; }} .menu-item {{ padding: 4px 8px; }} "
    ".article p {{ line-height: 1.5; margin: 0 0 1em; }}</style></head><body>"
    '<ul class="nav"><li><a href="/">Home</a></li><li><a href="/world">World</a></li>'
    '<li><a href="/sport">Sport</a></li><li><a href="/culture">Culture</a></li></ul>'
    '<div class="article">{body}</div><div class="footer">Copyright 2012</div></body></html>'
)
GREEK = NEWS_PAGE.format(
    title="Νέα μέτρα για την οικονομία",
    body=3
    * (
        "<p>Η κυβέρνηση ανακοίνωσε σήμερα νέα μέτρα για τη στήριξη της οικονομίας και των "
        "μικρών επιχειρήσεων.</p><p>Σύμφωνα με τον υπουργό, τα μέτρα θα ισχύσουν από τον "
        "επόμενο μήνα και θα αφορούν κυρίως τις περιοχές που επλήγησαν από την κρίση.</p>"
    ),
)
BRITISH = NEWS_PAGE.format(
    title="Fares rise again",
    body="<p>Rail fares will rise by an average of 6% in January, adding £200 to some season "
    "tickets. ¿Por qué? asked a Spanish visitor at the station.</p>",
)


@pytest.mark.parametrize("codec", ["cp1253", "iso-8859-7"])
def test_an_undeclared_page_is_detected_from_its_text_not_its_markup(codec: str) -> None:
    decoded = decode_page(GREEK.encode(codec))
    assert decoded.text == GREEK  # ISO-8859-7's letters are windows-1253's
    assert (decoded.encoding, decoded.source) == ("cp1253", "detected")


@pytest.mark.parametrize(("codec", "expected"), [("cp1253", "cp1253"), ("iso-8859-7", "iso8859-7")])
def test_greek_capital_alpha_with_tonos_tells_iso_8859_7_from_windows_1253(
    codec: str, expected: str
) -> None:
    page = GREEK.replace("μήνα", "μήνα, είπε ο Άδωνις,", 1)  # one Ά in a page of Greek
    decoded = decode_page(page.encode(codec))
    assert decoded.text == page  # Ά is 0xB6 in ISO-8859-7, 0xA2 in windows-1253
    assert (decoded.encoding, decoded.source) == (expected, "detected")


def test_an_undeclared_western_page_with_symbols_stays_windows_1252() -> None:
    assert decode_page(BRITISH.encode("cp1252")) == Decoded(BRITISH, "cp1252", "default")


def test_true_declarations_and_plain_pages_say_how_they_were_decoded() -> None:
    page = RUSSIAN.format(meta='<meta charset="windows-1251">')
    assert decode_page(page.encode("cp1251")) == Decoded(page, "cp1251", "declared")
    utf8 = RUSSIAN.format(meta=UTF8_META)
    assert decode_page(utf8.encode()) == Decoded(utf8, "utf-8", "declared")
    assert decode_page(codecs.BOM_UTF8 + b"<p>x</p>") == Decoded("<p>x</p>", "utf-8", "bom")
    assert decode_page(b"<p>plain</p>").source == "default"
    assert decode_page("<p>text</p>") == Decoded("<p>text</p>", "", "text")


def test_western_page_without_declaration_stays_windows_1252() -> None:
    page = "<p>Die Straße ist schön, café naïve résumé, und die Bäume sind grün.</p>"
    assert decode_page(page.encode("cp1252")) == Decoded(page, "cp1252", "default")


POLISH = (
    "<p>Wczoraj w Łodzi odbyło się spotkanie mieszkańców, którzy chcą zmian w komunikacji "
    "miejskiej. Prezydent miasta obiecał, że autobusy będą jeździć częściej, a źle "
    "oświetlone przystanki zostaną naprawione.</p>"
)
CZECH = (
    "<p>Včera se v Praze konalo setkání obyvatel, kteří chtějí změny v městské dopravě. "
    "Primátor slíbil, že autobusy budou jezdit častěji a tramvaje přijedou včas.</p>"
)
TURKISH = (
    "<p>Dün İstanbul'da düzenlenen toplantıda belediye başkanı, şehirdeki ulaşım sorunlarının "
    "çözümü için yeni projeler açıkladı. Vatandaşlar ağırlıklı olarak memnun görünüyordu.</p>"
)
LITHUANIAN = (
    "<p>Vakar Vilniuje įvyko susitikimas, kuriame miesto meras pristatė naujus viešojo "
    "transporto planus. Gyventojai džiaugėsi, kad autobusai važiuos dažniau.</p>"
)


@pytest.mark.parametrize(
    ("body", "lang", "codec", "named"),
    [
        (POLISH, "pl", "cp1250", "cp1250"),
        (POLISH, "pl-PL", "iso8859-2", "iso8859-2"),
        (CZECH, "cs", "cp1250", "cp1250"),
        # no byte in 0x80-0x9F: ž is ISO-8859-2's 0xBE, not windows-1250's ľ
        (CZECH, "cs", "iso8859-2", "iso8859-2"),
        # these letters are the same bytes in the windows and the ISO charset
        (TURKISH, "tr", "cp1254", "iso8859-9"),
        (LITHUANIAN, "lt", "cp1257", "iso8859-13"),
    ],
)
def test_an_undeclared_page_reads_in_its_languages_legacy_charset(
    body: str, lang: str, codec: str, named: str
) -> None:
    # charset detection alone read all of these as windows-1252 or ISO-8859-10
    page = f'<html lang="{lang}"><body>{body}</body></html>'
    assert decode_page(page.encode(codec)) == Decoded(page, named, "default")


def test_the_country_domain_tells_the_language_of_a_page_without_lang() -> None:
    page = f"<html><body>{CZECH}</body></html>"
    data = page.encode("cp1250")
    assert decode_page(data, url="https://www.example.cz/zpravy/1").text == page
    assert decode_page(data).encoding == "cp1252"  # nothing says Czech: browsers' default
    # a lang attribute outweighs the domain, and a declaration outweighs both
    assert decode_page(data, url="http://example.cz/").encoding == "cp1250"
    english = "<html lang='en'><body><p>Caf\xe9 cr\xe8me br\xfbl\xe9e.</p></body></html>"
    assert decode_page(english.encode("cp1252"), url="http://example.pl/").text == english
    declared = f'<html><head><meta charset="iso-8859-2"></head><body>{CZECH}</body></html>'
    assert decode_page(declared.encode("iso8859-2"), url="http://example.tr/").text == declared


def test_a_stray_undefined_byte_does_not_hand_the_page_to_the_iso_charset() -> None:
    # 0x81 is undefined in Python's windows-1250: one such byte read the page as ISO-8859-2
    page = f'<html lang="pl"><body>{POLISH}\x81</body></html>'
    data = page.replace("\x81", "").encode("cp1250").replace(b"</body>", b"\x81</body>")
    decoded = decode_page(data)
    assert decoded.encoding == "cp1250" and POLISH in decoded.text


@pytest.mark.parametrize(
    ("lang", "body", "codec"),
    [
        # Estonian: windows-1257 spells š and ž where ISO-8859-15 does not
        ("et", "<p>Riigikogu võttis vastu eelarve. Šveitsi žürii arutas šokolaadi.</p>", "cp1257"),
        ("ro", "<p>Guvernul a aprobat bugetul. Şcolile şi spitalele au fonduri.</p>", "cp1250"),
    ],
)
def test_languages_whose_iso_charsets_spell_letters_elsewhere(
    lang: str, body: str, codec: str
) -> None:
    page = f'<html lang="{lang}"><body>{body * 4}</body></html>'
    assert decode_page(page.encode(codec)).text == page


def test_the_lang_attribute_is_read_as_browsers_read_it() -> None:
    data = f"<body>{CZECH}</body></html>".encode("iso8859-2")
    for html in ('<html data-lang="tr" lang="cs">', '<html lang="cs_CZ">', "<html xml:lang='cs'>"):
        assert CZECH in decode_page(html.encode() + data).text, html
    assert CZECH not in decode_page(b'<html data-lang="cs">' + data).text


@pytest.mark.parametrize(
    "url", ["http://[::1", "http://[1.2.3.4]/", "http://x.cz]/", "", "file:///tmp/a.html"]
)
def test_a_malformed_or_hostless_url_gives_no_hint_and_no_error(url: str) -> None:
    page = f"<html><body>{CZECH}</body></html>".encode("iso8859-2")
    assert decode_page(page, url=url).source in ("default", "detected")
    assert parse_html(page, url).text(0)


def test_a_host_written_with_its_final_dot_is_still_its_domain() -> None:
    page = f"<html><body>{CZECH}</body></html>"
    assert decode_page(page.encode("iso8859-2"), url="http://example.cz./a").text == page


def test_a_crawled_page_is_decoded_with_its_url(tmp_path: Path) -> None:
    page = f"<html><body>{POLISH}</body></html>".encode("cp1250")
    assert "Łodzi" in parse_html(page, "http://gazeta.example.pl/a").text(0)
    assert "Łodzi" not in parse_html(page).text(0)


def test_undeclared_iso_2022_jp_is_read_as_japanese() -> None:
    # 7-bit bytes, so they pass for ASCII: the escape into JIS X 0208 says otherwise
    page = "<html><body><p>東京都議会が開かれ、新しい地下鉄駅について議論しました。</p></body>"
    decoded = decode_page(page.encode("iso2022_jp"))
    assert (decoded.text, decoded.source) == (page, "detected")
    escape = b"<p>a stray \x1b in plain text</p>"
    assert decode_page(escape) == Decoded(escape.decode(), "ascii", "default")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_without_bom_decode(codec: str) -> None:
    page = RUSSIAN.format(meta="")
    data = page.encode(codec)
    assert not looks_binary(data)
    assert decode_page(data) == Decoded(page, codec, "detected")


def test_a_lone_nul_does_not_make_a_page_binary() -> None:
    data = b"<html><body><p>before\x00after caf\xc3\xa9</p>" + b"<p>more text</p>" * 50
    assert not looks_binary(data)
    assert "beforeafter café" in decode_html(data)


def test_a_stray_byte_in_a_utf8_page_does_not_turn_it_into_mojibake() -> None:
    page = "<meta charset='utf-8'><p>" + "Ελληνικά κείμενα café “quoted” — dash. " * 20 + "</p>"
    decoded = decode_page(page.encode().replace(b"dash.", b"d\xe9sh.", 1))
    assert (decoded.encoding, decoded.source) == ("utf-8", "declared")
    assert decoded.text == page.replace("dash.", "désh.", 1)  # the stray read as windows-1252


# An article in UTF-8 with few accented letters, its footer pasted in Latin-1 (seven bytes):
# charset detection read it as ISO-8859-10 or ISO-8859-4, the whole article garbled.
FRENCH_ARTICLE = (
    "<html><head><title>Le plan de circulation approuvé</title></head><body><article>"
    "<h1>Le plan de circulation approuvé</h1><p>Le conseil municipal a approuvé mardi le "
    "nouveau plan de circulation du centre-ville, après trois mois de débats et une "
    "consultation publique très suivie.</p><p>Selon le maire, les rues piétonnes seront "
    "étendues dès le printemps prochain, et les livraisons se feront tôt le matin.</p>"
    "<p>Les commerçants ont exprimé des inquiétudes sur la fréquentation, mais la chambre de "
    "commerce a salué un projet équilibré.</p></article><footer>{footer}</footer></body></html>"
)
LATIN1_FOOTER = "© 2024 Société Générale de Presse, tous droits réservés"


def french_article_bytes() -> bytes:
    """FRENCH_ARTICLE in UTF-8 but for its footer, in Latin-1."""
    head, _, tail = FRENCH_ARTICLE.partition("{footer}")
    return head.encode() + LATIN1_FOOTER.encode("latin-1") + tail.encode()


def test_a_utf8_page_with_a_latin1_footer_reads_as_utf8() -> None:
    decoded = decode_page(french_article_bytes())
    assert (decoded.encoding, decoded.source) == ("utf-8", "detected")
    assert decoded.text == FRENCH_ARTICLE.format(footer=LATIN1_FOOTER)
    # a declaration of another charset does not outweigh the UTF-8 either
    declared = decode_page(french_article_bytes(), "text/html; charset=iso-8859-10")
    assert declared.text == decoded.text


def test_stray_bytes_read_as_windows_1252_and_a_cut_sequence_as_one_replacement() -> None:
    body = "<p>Zürich, Genève, Köln — “quoted” words.</p>".encode()
    data = body + b"<p>\x93smart\x94 \xa3 5, na\xefve \x81</p><p>cut \xe2\x80.</p>"
    decoded = decode_page(data)
    assert decoded.encoding == "utf-8"
    assert decoded.text.endswith("<p>“smart” £ 5, naïve \ufffd</p><p>cut \ufffd.</p>")


@pytest.mark.parametrize(
    ("codec", "text"),
    [
        ("cp1250", "<p>Źródło: Urząd Miasta Łodzi. Ósmy raz zażółć gęślą jaźń.</p>"),
        ("cp1253", "<p>Η Βουλή ψήφισε τον νέο προϋπολογισμό μετά από έντονη συζήτηση.</p>"),
        ("gbk", "<p>北京市政府今天宣布，新的地铁线路将于明年正式开通运营。</p>"),
        ("shift_jis", "<p>東京都議会が開かれ、新しい地下鉄駅について議論しました。</p>"),
        ("cp1251", "<p>Москва - столица России, крупнейший город страны.</p>"),
        # "É®" is valid UTF-8 (U+026E): one pair over and over is an accident, not UTF-8
        ("iso8859-15", "<p>NESCAFÉ® Gold et NESCAFÉ® Classic, un café crème.</p>"),
    ],
)
def test_pages_in_other_charsets_are_not_taken_for_utf8_with_strays(codec: str, text: str) -> None:
    page = f"<html><body>{text * 3}</body></html>"
    data = page.encode(codec)
    assert decode_page(data).encoding != "utf-8"


def test_binary_with_a_regular_nul_pattern_is_not_taken_for_utf16() -> None:
    samples = bytes(b for n in range(2048) for b in ((n * 7) % 32, 0))  # 16-bit LE integers
    assert looks_binary(samples)
    with pytest.raises(NotHtmlError):
        decode_page(samples)


def test_bench_charsets_serves_pages_undeclared_and_counts_what_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "html"
    html.mkdir()
    (html / "el.html").write_text('<meta charset="utf-8">' + GREEK, encoding="utf-8")
    (html / "en.html").write_text(BRITISH, encoding="utf-8")
    lines = [{"id": "el", "language": "Greek"}, {"id": "en", "language": "English"}]
    (tmp_path / "meta.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    argv = ["bench", "charsets", str(tmp_path), "--codecs", "cp1253,iso-8859-7,ascii"]
    assert main([*argv, "--where", "language=Greek"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:]}
    assert "1 pages" in out  # the English page is not Greek
    assert rows["cp1253"] == ["1", "1", "1"]  # its declaration was taken out: detected
    assert rows["iso-8859-7"][0] == rows["iso-8859-7"][2] == "1"  # readable, if not exact
    assert rows["ascii"] == ["0", "0", "0"]  # all references: nothing to detect
    assert main([*argv, "--where", "language"]) == 2
    assert main([*argv, "--where", "language=Klingon"]) == 2  # no page: not a row of zeros
    assert "no pages with language=Klingon in meta.jsonl" in capsys.readouterr().err
    assert main(["bench", "charsets", str(html), "--where", "language=Greek"]) == 2
    assert main(["bench", "charsets", str(tmp_path), "--codecs", "cp1253,nonsense"]) == 2
    assert main(["bench", "charsets", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "unknown codecs: nonsense" in err and "missing: not a folder" in err


def test_bench_charsets_decodes_with_the_pages_urls_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html = tmp_path / "html"
    html.mkdir()
    (html / "cz.html").write_text(f"<html><body>{CZECH}</body></html>", encoding="utf-8")
    record = {"id": "cz", "url": "http://zpravy.example.cz/1"}
    (tmp_path / "meta.jsonl").write_text(json.dumps(record) + "\n")
    argv = ["bench", "charsets", str(tmp_path), "--codecs", "cp1250"]
    rows = []
    for extra in ([], ["--urls"]):
        assert main([*argv, *extra]) == 0
        out = capsys.readouterr().out
        rows.append(out.splitlines()[2].split()[1:3])
    assert "1 with their URLs" in out
    assert rows == [["1", "0"], ["1", "1"]]  # read back only when the .cz domain is known


def _match(codec: str, chaos: float, coherence: float) -> CharsetMatch:
    return CharsetMatch(b"\xb1", codec, chaos, False, [("Polish", coherence)])


def test_charsets_as_clean_as_the_cleanest_are_told_apart_by_language() -> None:
    # charset-normalizer's own order put Nordic ISO-8859-10 before ISO-8859-2 on Polish pages
    nordic, polish = _match("iso8859_10", 0.0, 0.598), _match("iso8859_2", 0.005, 0.617)
    assert _best(CharsetMatches([nordic, polish])) is polish
    messier = _match("iso8859_2", 0.2, 0.9)  # a better language fit does not buy mojibake
    assert _best(CharsetMatches([nordic, messier])) is nordic
    assert _best(CharsetMatches([])) is None


def test_a_page_detected_as_gb2312_is_read_as_browsers_read_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = "<p>经济保持平稳增长——消费、投资和出口均有所回升。</p>"
    monkeypatch.setattr("newscrawl.html.decoding._guess", lambda data, text: "gb2312")
    decoded = decode_page(page.encode("gb18030"))
    assert decoded.text == page  # Python's GB2312 reads the dash as ―, not —
    assert (decoded.encoding, decoded.source) == ("gb18030", "detected")


@pytest.mark.parametrize(
    ("data", "utf8"),
    [
        ("<p>olá</p>".encode(), True),  # valid UTF-8: the bytes are the text's
        (b"<p>plain</p>", True),  # ASCII
        # a stray byte among valid UTF-8, read as windows-1252: not the text's bytes
        (("<p>" + "olá ☃ " * 40).encode() + b"caf\xe9</p>", False),
        ("<p>olá</p>".encode("cp1252"), False),
        ("<p>olá</p>".encode("utf-16"), False),
        ("<p>ol\x00á</p>".encode(), False),  # the NUL is dropped from the text
    ],
)
def test_decoded_says_whether_the_body_is_its_text_in_utf8(data: bytes, utf8: bool) -> None:
    decoded = decode_page(data)
    assert decoded.utf8 is utf8
    if utf8:
        assert decoded.text.encode() == data


@pytest.mark.parametrize("codec", ["utf-8", "utf-16", "windows-1252"])
def test_nul_characters_are_dropped_whatever_the_charset(codec: str) -> None:
    """A NUL is dropped from the text of a UTF-8 page (found in its bytes) as from any other."""
    page = "<html><meta charset=X><body><p>ol\x00\u00e1 \x00</p></body></html>"
    decoded = decode_page(page.replace("X", codec).encode(codec))
    assert "\x00" not in decoded.text and "ol\u00e1 " in decoded.text
    assert not decoded.utf8  # the text is no longer the page's bytes
