"""The crawl's parts on small hand-written inputs: URLs, site lists, safe XML, the address guard,
Retry-After, page kinds, metadata, error kinds and the crash-safe Parquet writer."""

from __future__ import annotations

import gzip
import ipaddress
import random
import signal
import string
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from scrapy.exceptions import DownloadCancelledError, DownloadTimeoutError, IgnoreRequest
from scrapy.http import HtmlResponse
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import ConnectionLost

from newscrawl.crawl.discovery.feeds import (
    UnsafeXmlError,
    feed_links,
    parse_feed,
    parse_sitemap,
    robots_sitemaps,
)
from newscrawl.crawl.discovery.site_lists import SiteListError, parse_sites, read_sites
from newscrawl.crawl.errors import CrawlRefusal, classify
from newscrawl.crawl.middlewares.private import AddressPolicy, literal_address, parse_allow_private
from newscrawl.crawl.middlewares.retry import parse_retry_after
from newscrawl.extractors.page_metadata import page_author, page_language, published_time
from newscrawl.extractors.pagekind import classify_page, page_signals
from newscrawl.html.parse import parse_html
from newscrawl.html.urls import (
    SiteScope,
    canonical_url,
    full_canonical_url,
    host_site,
    is_far_date_url,
    url_shape,
    usable_host,
)
from newscrawl.storage.schemas import ARTICLES_SCHEMA, PARTITION_BY
from newscrawl.storage.writer import (
    ParquetDatasetWriter,
    closed_files,
    read_column,
    remove_torn_files,
)

# ---------------------------------------------------------------------------- URLs


def test_canonical_url_merges_spellings_of_one_page() -> None:
    same = [
        "HTTP://Example.COM:80/a/../news/story?b=2&a=1#comments",
        "http://example.com/news/story?a=1&b=2&utm_source=feed&fbclid=xyz",
        "http://example.com/news/./story?a=1&b=2",
    ]
    assert {canonical_url(u) for u in same} == {"http://example.com/news/story?a=1&b=2"}
    assert canonical_url("https://example.com") == "https://example.com/"
    assert canonical_url("https://example.com:8443/x") == "https://example.com:8443/x"


def test_canonical_url_shortcut_agrees_with_the_full_rules() -> None:
    """Plain URLs skip the full parse (`_PLAIN_URL`): on random URLs of hosts and paths made
    of the characters it allows - odd hosts included - both give the same spelling, and
    SiteScope.of the same host and port."""
    rng = random.Random(7)
    hosts = string.ascii_lowercase + string.digits + ".-" * 4
    paths = string.ascii_letters + string.digits + "._~/-" + "/." * 3
    odd = ["xn--", "xn--80ak6aa92e.", "a--b", "-a", "a-", "1.2.3.4", "999.1.1.1", "a..b", "a."]
    odd += ["x" * 70, "www.", "0x7f.1", "localhost"]
    for _ in range(30_000):
        host = "".join(rng.choices(hosts, k=rng.randint(1, 20)))
        if rng.random() < 0.2:
            host = rng.choice(odd) + host[:5]
        path = "/" + "".join(rng.choices(paths, k=rng.randint(0, 30)))
        url = rng.choice(["http://", "https://"]) + host + (path if rng.random() < 0.9 else "")
        assert canonical_url(url) == full_canonical_url(url), url
        parts = urlsplit(url)  # SiteScope.of's own full reading of the host and port
        assert SiteScope.of(url) == SiteScope(host_site(parts.hostname), parts.port), url


def test_site_scope_takes_subdomains_and_both_schemes_but_not_other_hosts() -> None:
    scope = SiteScope.of("http://www.example.com/")
    assert scope.contains("https://example.com/a")
    assert scope.contains("http://news.example.com/b")
    assert not scope.contains("http://example.org/")
    assert not scope.contains("http://badexample.com/")
    assert not scope.contains("mailto:x@example.com")
    loop = SiteScope.of("http://127.0.0.2:8000/")
    assert loop.contains("http://127.0.0.2:8000/x")
    assert not loop.contains("http://127.0.0.3:8000/x")
    assert not loop.contains("http://127.0.0.2:8001/x")
    assert loop.name == "127.0.0.2_8000"


def test_calendar_urls_share_a_shape_and_far_dates_are_traps() -> None:
    assert url_shape("http://s/calendar/2024/05/") == url_shape("http://s/calendar/2031/12/")
    assert url_shape("http://s/2024/05/a-slug/") != url_shape("http://s/2024/05/other/")
    now = datetime(2024, 6, 1, tzinfo=UTC)
    assert is_far_date_url("http://s/calendar/2031/04/", now)
    assert is_far_date_url("http://s/events?month=1850-02", now)
    assert not is_far_date_url("http://s/2024/05/slug/", now)
    assert not is_far_date_url("http://s/story/1001101", now)  # an id, not a date


@pytest.mark.parametrize(
    ("url", "usable"),
    [
        ("http:///nohost", False),
        ("http://\x00nul/x", False),
        ("http://../x", False),
        ("http://./x", False),
        ("http://a..b/x", False),
        ("http://a.b%2f/", False),
        ("http://user@/x", False),
        ("http://---/", False),
        ("http://bücher.example/", True),  # punycoded
        ("http://a_b.example./", True),
        ("http://127.0.0.1:8080/", True),
        ("http://[::1]/a", True),
        ("http://localhost/", True),
    ],
)
def test_a_host_that_names_no_machine_is_not_usable(url: str, usable: bool) -> None:
    assert usable_host(SiteScope.of(canonical_url(url)).host) is usable


# ---------------------------------------------------------------------------- site lists


def test_site_lists_in_text_csv_and_argument_form(tmp_path: Path) -> None:
    text = tmp_path / "sites.txt"
    text.write_text("# comment\nhttp://www.a.example/  # trailing comment\n\nb.example\n")
    specs = read_sites(text)
    assert [(s.name, s.url) for s in specs] == [
        ("a.example", "http://www.a.example/"),
        ("b.example", "https://b.example/"),
    ]
    table = parse_sites("url,name,max_pages\nhttp://127.0.0.2:81/,My Blog,5\n")
    assert (table[0].name, table[0].max_pages) == ("My-Blog", 5)
    # a one-column CSV (`df[["url"]].to_csv(index=False)`): its header is no site
    one_column = parse_sites("url\nhttp://a.example/\nb.example\n")
    assert [s.url for s in one_column] == ["http://a.example/", "https://b.example/"]
    with pytest.raises(SiteListError, match="needs a 'url' column"):
        parse_sites("name\nfoo\n")
    assert [s.name for s in read_sites("http://x.example, http://y.example")] == [
        "x.example",
        "y.example",
    ]


def test_bad_site_lists_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(SiteListError, match="no such site-list file"):
        read_sites(tmp_path / "missing.txt")
    with pytest.raises(SiteListError, match="not an http"):
        parse_sites("ftp://x.example/\n")
    with pytest.raises(SiteListError, match="url' column"):
        parse_sites("name,address\na,http://x\n")
    with pytest.raises(SiteListError, match="two sites named"):
        parse_sites("url,name\nhttp://a.example/,same\nhttp://b.example/,same\n")


def test_the_study_site_list_has_20_blogs_and_20_news_sites() -> None:
    path = Path(__file__).resolve().parents[1] / "data" / "sites.txt"
    specs = read_sites(path)
    assert len(specs) == 40 and len({s.name for s in specs}) == 40


# ---------------------------------------------------------------------------- sitemaps, feeds

BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE urlset [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://s/&d;</loc></url>
</urlset>"""
XXE = b"""<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<rss><channel><item><link>http://s/a</link><description>&x;</description></item></channel></rss>"""


def test_sitemaps_urlset_index_gzip_and_text() -> None:
    urlset = b"""<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <url><loc> http://s/a </loc></url><url><loc>http://s/b</loc></url></urlset>"""
    assert parse_sitemap(urlset).pages == ["http://s/a", "http://s/b"]
    index = b"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    <sitemap><loc>http://s/sm1.xml</loc></sitemap></sitemapindex>"""
    assert parse_sitemap(index).sitemaps == ["http://s/sm1.xml"]
    assert parse_sitemap(gzip.compress(urlset)).pages == ["http://s/a", "http://s/b"]
    assert parse_sitemap(b"http://s/a\nhttp://s/b\n").pages == ["http://s/a", "http://s/b"]
    assert robots_sitemaps("User-agent: *\nSitemap: http://s/sm.xml\n") == ["http://s/sm.xml"]


def test_entity_bombs_and_external_entities_are_refused_not_expanded() -> None:
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_sitemap(BILLION_LAUGHS)
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_feed(XXE)
    with pytest.raises(UnsafeXmlError, match="entities"):
        parse_sitemap(gzip.compress(BILLION_LAUGHS))


def test_gzip_bombs_are_cut_at_the_size_limit() -> None:
    bomb = gzip.compress(b"<urlset>" + b" " * 5_000_000 + b"</urlset>")
    assert len(bomb) < 10_000
    with pytest.raises(UnsafeXmlError, match="inflates"):
        parse_sitemap(bomb, max_bytes=1_000_000)


def test_rss_and_atom_item_links() -> None:
    rss = b"<rss><channel><item><link>http://s/1</link></item></channel></rss>"
    atom = b"""<feed xmlns="http://www.w3.org/2005/Atom"><entry>
    <link rel="alternate" href="http://s/2"/><link rel="replies" href="http://s/c"/></entry></feed>"""
    assert parse_feed(rss) == ["http://s/1"]
    assert parse_feed(atom) == ["http://s/2"]
    assert parse_feed(b"not xml at all <<<") == []
    assert feed_links(
        [("alternate", "application/rss+xml", "/feed"), ("stylesheet", "text/css", "/s.css")]
    ) == ["/feed"]


# ---------------------------------------------------------------------------- address guard


def test_non_public_addresses_are_refused_unless_allowed() -> None:
    policy = AddressPolicy(parse_allow_private(False))
    for text in (
        "10.0.0.1",
        "192.168.1.1",
        "172.16.5.4",
        "127.0.0.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:10.0.0.1",
        "224.0.0.1",
    ):
        assert policy.refuses(ipaddress.ip_address(text)), text
    assert not policy.refuses(ipaddress.ip_address("93.184.216.34"))
    loopback = AddressPolicy(parse_allow_private("loopback"))
    assert not loopback.refuses(ipaddress.ip_address("127.0.0.5"))
    assert loopback.refuses(ipaddress.ip_address("10.0.0.1"))
    assert (
        AddressPolicy(parse_allow_private("true")).refuses(ipaddress.ip_address("10.0.0.1"))
        is False
    )
    assert parse_allow_private(["10.1.0.0/16"]) == (ipaddress.ip_network("10.1.0.0/16"),)
    assert literal_address("http://localhost:8000/") == ipaddress.ip_address("127.0.0.1")
    assert literal_address("http://[::1]/") == ipaddress.ip_address("::1")
    assert literal_address("http://example.com/") is None


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert parse_retry_after(b"5") == 5.0
    now = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Sat, 01 Jun 2024 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_failures_map_to_report_kinds() -> None:
    response = HtmlResponse("http://s/", status=503, body=b"")
    assert classify(HttpError(response))[0] == "http_5xx"
    assert classify(DownloadTimeoutError("slow"))[0] == "timeout"
    assert classify(ConnectionLost())[0] == "connection_reset"
    assert classify(IgnoreRequest("Forbidden by robots.txt"))[0] == "robots_disallowed"
    too_big = DownloadCancelledError("Received 9 bytes which is larger than download max size")
    assert classify(too_big)[0] == "too_large"
    assert classify(CrawlRefusal("x", "trap"))[0] == "trap"


# ---------------------------------------------------------------------------- page kinds

ARTICLE = """<html lang="en-GB"><head><title>Storm closes harbour | Gazette</title>
<meta property="og:type" content="article">
<meta property="article:published_time" content="2024-05-03T08:15:00+02:00">
<meta name="author" content="Ann Reporter"></head><body>
<nav><a href="/">Home</a> <a href="/tag/weather/">Weather</a></nav>
<article><h1>Storm closes harbour</h1><p>{text}</p><p>{text}</p></article>
</body></html>"""
LISTING = """<html><head><title>Weather</title></head><body><h1>Weather</h1>
{teasers}</body></html>"""
PARAGRAPH = "The storm closed the harbour for two days while crews repaired the sea wall. " * 6


def _signals(html: str, url: str, text: str | None = None) -> object:
    dom = parse_html(html, url)
    body = dom.text(dom.body) if text is None else text
    return page_signals(dom, url, body, (dom.body,))


def test_an_article_page_is_flagged_as_one_with_its_reason() -> None:
    html = ARTICLE.format(text=PARAGRAPH)
    kind = classify_page(_signals(html, "http://s/news/2024/05/03/storm-closes-harbour.html"))
    assert kind.is_article
    assert "og:type=article" in kind.reason and kind.reason.startswith("article")


def test_listing_tag_and_home_pages_are_not_articles() -> None:
    teasers = "".join(
        f'<div class="teaser"><h2><a href="/news/2024/05/0{i}/story-number-{i}.html">Story '
        f"number {i} headline</a></h2><p>A short summary of story {i}.</p></div>"
        for i in range(1, 9)
    )
    listing = LISTING.format(teasers=teasers)
    tag = classify_page(_signals(listing, "http://s/tag/weather/"))
    assert not tag.is_article and "url /tag/" in tag.reason and "linked headings" in tag.reason
    section = classify_page(_signals(listing, "http://s/weather/"))
    assert not section.is_article and "teasers" in section.reason
    home = classify_page(_signals(ARTICLE.format(text=PARAGRAPH), "http://s/"))
    assert not home.is_article and home.reason == "index: home page"


def test_text_without_any_article_sign_is_not_an_article() -> None:
    about = f"<html><body><h1>About us</h1><p>{PARAGRAPH}</p></body></html>"
    assert not classify_page(_signals(about, "http://s/about.html")).is_article


def test_publication_date_language_and_author() -> None:
    dom = parse_html(ARTICLE.format(text=PARAGRAPH), "http://s/x")
    assert published_time(dom) == datetime(2024, 5, 3, 6, 15, tzinfo=UTC)
    assert page_language(dom) == "en"
    assert page_author(dom) == "Ann Reporter"
    ld = """<html><head><script type="application/ld+json">{"@graph": [{"@type": "NewsArticle",
    "datePublished": "2023-01-02", "author": {"@type": "Person", "name": "Bo Writer"}}]}
    </script></head><body><p class="byline">By Someone Else, Staff</p></body></html>"""
    dom = parse_html(ld, "http://s/y")
    assert published_time(dom) == datetime(2023, 1, 2, tzinfo=UTC)
    assert page_author(dom) == "Bo Writer"
    plain = parse_html('<html><body><p class="byline">By Cy Smith, Staff Writer</p></body></html>')
    assert page_author(plain) == "Cy Smith"
    assert published_time(plain, "http://s/2022/11/07/slug/") == datetime(2022, 11, 7, tzinfo=UTC)
    assert published_time(plain, "http://s/slug/") is None
    assert page_language(plain, "pt-BR") == "pt"


# ---------------------------------------------------------------------------- Parquet writer


def _rows(site: str, count: int, start: int = 0) -> list[dict[str, object]]:
    now = datetime(2024, 6, 1, tzinfo=UTC)
    return [
        {
            "url": f"http://{site}/{i}",
            "final_url": f"http://{site}/{i}",
            "site": site,
            "crawl": "c1",
            "fetched_at": now,
            "status": 200,
            "is_article": i % 2 == 0,
            "text": "text " * i,
            "texts": {"nce": "x"} if i == 0 else None,
        }
        for i in range(start, start + count)
    ]


def test_writer_partitions_rotates_and_reads_back(tmp_path: Path) -> None:
    with ParquetDatasetWriter(
        tmp_path, ARTICLES_SCHEMA, PARTITION_BY, row_group_rows=3, file_rows=6
    ) as writer:
        writer.write_rows(_rows("a.example", 10) + _rows("b.example", 4))
    files = closed_files(tmp_path)
    assert [p.parent.name for p in files].count("site=a.example") == 2  # 10 rows, 6 a file
    assert all(p.parent.parent.name == "crawl=c1" for p in files)
    assert not list(tmp_path.rglob("*.tmp"))
    table = pd.read_parquet(tmp_path)
    assert len(table) == 14 and set(table["site"]) == {"a.example", "b.example"}
    assert "site" not in pq.read_schema(files[0]).names  # partition columns live in folders
    assert pq.ParquetFile(files[0]).metadata.num_row_groups == 2
    urls = {
        u
        for _, parts, values in read_column(tmp_path, "url", {"crawl": "c1"})
        for u in values
        if parts["site"] == "b.example"
    }
    assert urls == {f"http://b.example/{i}" for i in range(4)}


def test_write_table_fills_missing_columns_with_nulls(tmp_path: Path) -> None:
    schema = pa.schema(
        [("site", pa.string()), ("crawl", pa.string()), ("x", pa.int32()), ("y", pa.string())]
    )
    writer = ParquetDatasetWriter(tmp_path, schema, ("crawl", "site"))
    writer.write_table(pa.table({"x": [1, 2]}), {"crawl": "c", "site": "s/1"})
    writer.close()
    back = pd.read_parquet(tmp_path)
    assert back["x"].tolist() == [1, 2] and back["y"].isna().all()
    assert back["site"].astype(str).tolist() == ["s/1", "s/1"]  # encoded folder, decoded back


KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    from datetime import datetime, timezone
    from newscrawl.storage.schemas import ARTICLES_SCHEMA, PARTITION_BY
    from newscrawl.storage.writer import ParquetDatasetWriter
    w = ParquetDatasetWriter(sys.argv[1], ARTICLES_SCHEMA, PARTITION_BY, row_group_rows=2,
                             file_rows=4)
    now = datetime.now(timezone.utc)
    for i in range(11):
        w.write({"url": f"u{i}", "final_url": f"u{i}", "site": "s", "crawl": "c",
                 "fetched_at": now, "status": 200, "is_article": True})
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_writer_leaves_only_complete_files_and_hidden_temporaries(
    tmp_path: Path,
) -> None:
    result = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(tmp_path)], timeout=60)
    assert result.returncode == -signal.SIGKILL
    files = closed_files(tmp_path)
    assert len(files) == 2  # rows 0-7; rows 8-9 were in the open file, row 10 in memory
    assert sorted(pd.read_parquet(tmp_path)["url"]) == sorted(f"u{i}" for i in range(8))
    torn = list(tmp_path.rglob(".*.tmp"))
    assert len(torn) == 1 and torn[0].name.startswith(".part-")
    assert remove_torn_files(tmp_path) == 1
    assert not list(tmp_path.rglob("*.tmp"))
