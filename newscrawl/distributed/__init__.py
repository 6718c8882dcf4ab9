"""Scale-out mode: Redis-fed crawl workers (one site per lease) and Dask batch stages.

Nothing here is imported by the single-machine commands; it needs the ``distributed`` extra
(redis, scrapy-redis, dask[distributed]).
"""
