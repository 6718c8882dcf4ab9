"""Web archives through the crawl's pipelines: `newscrawl ingest WARC_OR_DIR... --out DIR`.

`spider.IngestSpider` reads the archives and feeds their HTML responses to the crawl's item
pipelines (one parse, extraction, article flag, metadata, SiteLevel and whatever else
ITEM_PIPELINES holds); `outputs` stages and publishes each WARC file's rows; `runner` runs it in
this process or one Dask task per WARC file.
"""
