"""Scrapy spiders of the newscrawl project (SPIDER_MODULES)."""
