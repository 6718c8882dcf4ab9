"""Scale-out: Redis-fed crawl workers (one site per lease), Dask batch stages, and the ingest of
web archives through the crawl's item pipelines (`ingest_spider`, `ingest_outputs`,
`ingest_run`: in this process or one Dask task per WARC file).

The workers and Dask stages need the ``distributed`` extra (redis, scrapy-redis,
dask[distributed]); the single-machine commands import none of them.
"""
