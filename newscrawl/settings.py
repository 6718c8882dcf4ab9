"""Scrapy settings of the newscrawl project (scrapy.cfg points here).

Polite by default: robots.txt obeyed, AutoThrottle on, two requests at a time per site, an
honest user agent, and no private addresses. Override any of them with ``-s NAME=VALUE``
(``scrapy crawl``) or ``--set NAME=VALUE`` (``newscrawl crawl``).
"""

from __future__ import annotations

from newscrawl._version import __version__

# -- project ----------------------------------------------------------------------------------
# Scrapy's project name, and where the crawl's spider ("site") is found
BOT_NAME = "newscrawl"
SPIDER_MODULES = ["newscrawl.spiders"]
NEWSPIDER_MODULE = "newscrawl.spiders"

# -- politeness -------------------------------------------------------------------------------
# an honest user agent, naming the crawler
USER_AGENT = f"newscrawl/{__version__} (news and blog corpus crawler; obeys robots.txt)"
ROBOTSTXT_OBEY = True  # robots.txt is obeyed (newscrawl's own robots.txt middleware)
ROBOTSTXT_USER_AGENT = "newscrawl"  # the name robots.txt rules are matched against
CONCURRENT_REQUESTS = 32  # requests in flight over all sites
CONCURRENT_REQUESTS_PER_DOMAIN = 2  # requests in flight per site
DOWNLOAD_DELAY = 0.5  # seconds between requests to one site (AutoThrottle adapts it)
AUTOTHROTTLE_ENABLED = True  # slow down for a site that answers slowly
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
COOKIES_ENABLED = False  # no cookies: every page as a first visitor sees it
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False

# -- robustness -------------------------------------------------------------------------------
DOWNLOAD_TIMEOUT = 30  # seconds before a request is given up
DOWNLOAD_MAXSIZE = 10 * 1024 * 1024  # a news page over 10 MB is not a news page
DOWNLOAD_WARNSIZE = 4 * 1024 * 1024  # a response this large is logged
RETRY_TIMES = 2  # retries of a failed request (a 503's Retry-After is honoured)
RETRY_GIVE_UP_LOG_LEVEL = "WARNING"  # the summary reports them; not an error of the crawler
REDIRECT_MAX_TIMES = 10  # redirects followed for one request
METAREFRESH_MAXDELAY = 10  # a <meta http-equiv=refresh> at most this delay is followed
URLLENGTH_LIMIT = 2083  # longer URLs are not requested
LOG_LEVEL = "INFO"  # Scrapy's log level (--log-level)
LOGSTATS_INTERVAL = 30.0  # seconds between the progress lines of the log

# Breadth first: sitemap, feed and home-page links before deep pagination, so the page cap
# takes a site's most reachable pages.
DEPTH_PRIORITY = 1
# first in, first out: the queue kept in JOBDIR, so an interrupted crawl resumes
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# Scrapy's scheduler that drops a site's queued page requests once the site has its page cap
SCHEDULER = "newscrawl.crawl.middlewares.sitecap.SiteCapScheduler"
# Scrapy's downloader that keeps CONCURRENT_REQUESTS_PER_DOMAIN with no download delay too
DOWNLOADER = "newscrawl.crawl.downloader.SlotDownloader"

# -- components -------------------------------------------------------------------------------
# the address guard, page cap, robots.txt, Retry-After, safe redirects, resume and WARC writer
DOWNLOADER_MIDDLEWARES = {
    # first, so every request is checked: links, redirects, robots.txt fetches
    "newscrawl.crawl.middlewares.private.PrivateAddressMiddleware": 10,
    "newscrawl.crawl.middlewares.sitecap.SiteCapMiddleware": 60,
    "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,  # the spider scopes sites
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "newscrawl.crawl.middlewares.robots.RobotsTxtMiddleware": 100,
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "newscrawl.crawl.middlewares.retry.RetryAfterMiddleware": 550,
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": None,
    "newscrawl.crawl.middlewares.redirect.SiteRedirectMiddleware": 600,
    "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware": None,
    "newscrawl.crawl.middlewares.redirect.SafeMetaRefreshMiddleware": 580,
    "newscrawl.crawl.middlewares.replay.ReplayMiddleware": 880,
    # next to the downloader: responses as they came off the network (NEWSCRAWL_WARC_DIR)
    "newscrawl.crawl.middlewares.warc_recorder.WarcRecorderMiddleware": 950,
}
# the crawl id and resume state, HTML-only downloads, the end-of-crawl summary
EXTENSIONS = {
    "newscrawl.crawl.extensions.state.CrawlStateExtension": 0,
    # a full disk stops the crawl with one line (not a traceback per writer)
    "newscrawl.crawl.extensions.diskfull.DiskFullExtension": 5,
    "newscrawl.crawl.extensions.content.HtmlOnlyExtension": 10,
    "newscrawl.crawl.extensions.summary.CrawlSummary": 900,
    "newscrawl.crawl.extensions.gcfreeze.FrozenStartupExtension": 1000,
}
# raw pages, the site pass, extraction, the article flag, the Parquet writer
ITEM_PIPELINES = {
    # raw pages first: a page is in the `pages` writer before its site pass can write the site
    "newscrawl.pipelines.rawpages.RawPagePipeline": 40,
    "newscrawl.pipelines.sitepass.SitePassPipeline": 50,
    "newscrawl.pipelines.extraction.ExtractionPipeline": 100,
    "newscrawl.pipelines.classify.ArticleClassifierPipeline": 200,
    "newscrawl.pipelines.parquet.ParquetWriterPipeline": 500,
}

# -- newscrawl --------------------------------------------------------------------------------
# HTML pages fetched per site at most (--max-pages; a site list's max_pages column overrides
# it; 0: no cap)
MAX_PAGES_PER_SITE = 200
NEWSCRAWL_SITES = ""  # site list used when the spider gets no -a sites=
NEWSCRAWL_OUT = "out"  # output folder (--out)
NEWSCRAWL_CRAWL_ID = ""  # the crawl's name (--crawl-id; "" = from JOBDIR, else the UTC time)
# non-public addresses fetched anyway (--allow-private): True, or networks such as "loopback"
# or ["10.1.0.0/16"]; False: none
NEWSCRAWL_ALLOW_PRIVATE = False
# the learned extractor runs NCE, MSS and CETD-TPC itself (their selections are its features);
# CETD-TPC after it is the fallback should the model file be missing
NEWSCRAWL_EXTRACTORS = ["learned", "cetd-tpc"]
# the extractor whose text fills `text` (--primary; "" = the default extractor, learned)
NEWSCRAWL_PRIMARY_EXTRACTOR = ""
# {name: {option: value}} for the extractors; {"learned": {"model": FILE}} a rebuilt learned
# model (or the environment's NEWSCRAWL_EXTRACTOR_MODEL=FILE, which every process reads)
NEWSCRAWL_EXTRACTOR_CONFIG: dict[str, dict[str, object]] = {}
# also run every extractor and keep each one's text in the `texts` column (--all-texts)
NEWSCRAWL_KEEP_ALL_TEXTS = False
# write `markdown` beside `text`: the same selection with its headings, lists, tables and code
NEWSCRAWL_MARKDOWN = True
# the Markdown writes the selection's links as Markdown links, absolute (off: their text only)
NEWSCRAWL_MARKDOWN_LINKS = False
# the Markdown writes the images among the selection as Markdown images with their alt text
# (off: none)
NEWSCRAWL_MARKDOWN_IMAGES = False
# write `comments`: the page's comment thread, apart from `text` ("" when it has none)
NEWSCRAWL_COMMENTS = True
# a page estimated at more elements than this is refused (its tree would cost ~1 KB a node);
# an extractor is skipped on pages with more elements than its budget here (the next one runs)
NEWSCRAWL_MAX_PAGE_NODES = 100_000
# processes that parse fetched pages for the spider, off the reactor thread (-1: one per core,
# 0: parse inline, on the reactor thread)
NEWSCRAWL_PARSE_WORKERS = -1
# processes running each complete site's site pass (parse, SiteLevel, extraction, flag), off
# the reactor thread and its GIL (-1: one per core, 0: in a thread of the crawl process)
NEWSCRAWL_SITEPASS_WORKERS = -1
# a site of at least this many pages whose pass would run alone while no other site is being
# crawled (a crawl of one large site, the last site of a crawl) is split over the site pass
# workers; same rows (0: never split)
NEWSCRAWL_SITEPASS_SPLIT_PAGES = 48
# sites crawled at once (each holds its buffer of pages until its site pass): the next site of
# the list starts when one is written, so memory stays flat over any number of sites (0: all)
NEWSCRAWL_MAX_ACTIVE_SITES = 16
# per extractor: a page with more elements goes to the next extractor (kind extract_budget)
NEWSCRAWL_EXTRACTOR_MAX_NODES = {"learned": 25_000}
NEWSCRAWL_MAX_QUEUED_PER_SITE = 0  # requests queued per site (0: 10 x the page cap, >= 1000)
NEWSCRAWL_TRAP_RUN = 10  # links in a row to same-shaped URLs before it is a trap
# share of a site's page cap that the pages of one URL path shape may take when found on pages
# of that shape (or carrying a session id): calendars, ?id=N linking to id=N+1, session ids
# (at least 10 pages; 1000 for a site without a cap)
NEWSCRAWL_TRAP_SHARE = 0.1
NEWSCRAWL_RETRY_AFTER_MAX = 120.0  # longest Retry-After (seconds) waited for before a retry
# a run into a folder holding earlier crawls fetches only what may be new (--full: False)
NEWSCRAWL_INCREMENTAL = True
# False: ignore earlier crawls in the folder altogether (no skipping, no cross-run duplicates, no
# carried templates): a crawl that stands alone, as `newscrawl demo` runs
NEWSCRAWL_HISTORY = True
NEWSCRAWL_HISTORY_DIR = ""  # where the earlier crawls are ("" = NEWSCRAWL_OUT; workers: OUT)
# the site pass: SiteLevel, then each site's template out of its text (False: each page is
# extracted on its own as it arrives)
NEWSCRAWL_SITELEVEL = True
# bytes of raw pages a site keeps in memory for its site pass, when the crawl does not store
# its raw pages (stored pages are read back from their files; pages past it: page by page)
NEWSCRAWL_SITELEVEL_MAX_BYTES = 256 * 1024 * 1024
# what labels each site's template nodes in the site pass: sitelevel, sst, pagelets or entropy
NEWSCRAWL_SITE_METHOD = "sitelevel"
NEWSCRAWL_GEOMETRY = "flow"  # node boxes: flow, static or chromium (docs/templates.md)
# a site's pages (and page-level articles) reach a complete Parquet file at least this often,
# in seconds or rows of the site, so a SIGKILL loses at most that window (0 = off)
NEWSCRAWL_FLUSH_SECONDS = 30.0
NEWSCRAWL_FLUSH_ROWS = 50  # ... or every this many rows of the site (0: off)
NEWSCRAWL_PARQUET_ROW_GROUP_ROWS = 256  # rows per Parquet row group at most
NEWSCRAWL_PARQUET_ROW_GROUP_BYTES = 32 * 1024 * 1024  # bytes per row group at most
NEWSCRAWL_PARQUET_FILE_ROWS = 10_000  # rows per Parquet file at most
NEWSCRAWL_PARQUET_FILE_SECONDS = 300.0  # close files at least this often: a kill loses less
NEWSCRAWL_PARQUET_COMPRESSION = "zstd"  # the Parquet files' compression codec
NEWSCRAWL_WARC_DIR = ""  # also write every fetched response as WARC/1.1 here ("" = no)
NEWSCRAWL_WARC_MAX_BYTES = 1024 * 1024 * 1024  # rotate WARC files at this size
