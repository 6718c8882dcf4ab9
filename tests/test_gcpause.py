"""The garbage-collector pause the site pass runs under (`newscrawl.html.gcpause`)."""

from __future__ import annotations

import gc

import pytest

from newscrawl.html.gcpause import paused_gc


def test_the_collector_is_off_inside_and_as_it_was_after() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_the_collector_comes_back_after_an_error() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("a failed site")
    assert gc.isenabled()


def test_a_site_pass_leaves_no_cycles_to_collect() -> None:
    """What the pause relies on: pages, Doms and extractions are freed by reference counting."""
    from newscrawl.extractors import get_extractor
    from newscrawl.site.saved_pages import Item, site_pass_records

    pages = [
        f"<html><head><title>Post {i}</title></head><body><nav><a href='/'>Home</a>"
        f"<a href='/about'>About</a></nav><article><h1>Post {i}</h1><p>"
        + " ".join(f"word{i}x{k}" for k in range(80))
        + "</p></article><footer>(c) The Site</footer></body></html>"
        for i in range(8)
    ]
    items = [(i, Item(f"p{i}", page.encode(), f"http://site.test/{i}", "site.test"))
             for i, page in enumerate(pages)]  # fmt: skip
    extractor = get_extractor("learned")
    site_pass_records(extractor, items)  # imports and caches first
    gc.collect()
    gc.disable()
    try:
        records = site_pass_records(extractor, items)
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert all("word" in record["text"] for _, record in records)


def test_the_crawl_freezes_what_it_built_when_the_spider_opens() -> None:
    from scrapy import Spider, signals
    from scrapy.utils.test import get_crawler

    from newscrawl.crawl.extensions.gcfreeze import YOUNG_THRESHOLD, FrozenStartupExtension
    from newscrawl.settings import EXTENSIONS

    assert "newscrawl.crawl.extensions.gcfreeze.FrozenStartupExtension" in EXTENSIONS
    crawler = get_crawler(settings_dict={"EXTENSIONS": {}})
    extension = FrozenStartupExtension.from_crawler(crawler)  # signals hold it weakly
    gc.unfreeze()
    thresholds = gc.get_threshold()
    try:
        kept = [[k] for k in range(1000)]  # containers made before the spider opens
        spider = Spider("s")
        crawler.signals.send_catch_log(signals.spider_opened, spider=spider)
        assert gc.get_freeze_count() > len(kept)
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        crawler.signals.send_catch_log(signals.spider_closed, spider=spider, reason="finished")
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == thresholds  # nothing kept
        assert extension is not None
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
