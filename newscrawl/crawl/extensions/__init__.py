"""The crawl's Scrapy extensions: `state` (crawl id, resume), `diskfull` (stop cleanly on a
full disk), `content` (stop non-HTML downloads), `summary` (the run's summary) and `gcfreeze`
(the process's long-lived objects out of the garbage collector's scans).
"""
