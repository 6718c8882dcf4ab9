"""The XML entity refusal reads the decoded document, whatever its encoding (issue 10)."""

from __future__ import annotations

import codecs

import pytest

from newscrawl.crawl.discovery.feeds import UnsafeXmlError, parse_feed, parse_sitemap, xml_text

BOMB = """<?xml version="1.0" encoding="{encoding}"?>
<!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://s/&c;</loc></url>
</urlset>"""
FEED = """<?xml version="1.0" encoding="{encoding}"?>
<!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<rss><channel><item><link>http://s/a</link><description>&x;</description></item></channel></rss>"""
SITEMAP = """<?xml version="1.0" encoding="{encoding}"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://s/a</loc></url>
</urlset>"""
BOMS = {
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
    "utf-32-le": codecs.BOM_UTF32_LE,
    "utf-32-be": codecs.BOM_UTF32_BE,
    "utf-8": codecs.BOM_UTF8,
}
ENCODINGS = ["utf-8", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]


def encode(template: str, codec: str, bom: bool) -> bytes:
    declared = codec.upper()[:6]  # UTF-8, UTF-16, UTF-32
    return (BOMS[codec] if bom else b"") + template.format(encoding=declared).encode(codec)


@pytest.mark.parametrize("bom", [True, False], ids=["bom", "no-bom"])
@pytest.mark.parametrize("codec", ENCODINGS)
def test_entity_bomb_is_refused_in_every_unicode_encoding(codec: str, bom: bool) -> None:
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_sitemap(encode(BOMB, codec, bom))
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_feed(encode(FEED, codec, bom))


@pytest.mark.parametrize("bom", [True, False], ids=["bom", "no-bom"])
@pytest.mark.parametrize("codec", ENCODINGS)
def test_plain_sitemaps_still_parse_in_every_unicode_encoding(codec: str, bom: bool) -> None:
    assert parse_sitemap(encode(SITEMAP, codec, bom)).pages == ["http://s/a"]


def test_xml_text_follows_the_declaration_and_ebcdic() -> None:
    latin = '<?xml version="1.0" encoding="ISO-8859-1"?><a>café</a>'
    assert xml_text(latin.encode("latin-1")) == latin
    ebcdic = '<?xml version="1.0" encoding="cp037"?><!DOCTYPE a [<!ENTITY x "y">]><a/>'
    assert xml_text(ebcdic.encode("cp037")) == ebcdic
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_sitemap(ebcdic.encode("cp037"))


def test_size_errors_count_mebibytes() -> None:
    with pytest.raises(UnsafeXmlError, match=r"over 1 MiB$"):
        parse_sitemap(b"<urlset>" + b" " * (1024 * 1024) + b"</urlset>", max_bytes=1024 * 1024)
