"""The crawl's downloader middlewares: `private` (the address guard against private and
local addresses), `sitecap` (the per-site page cap), `robots`, `retry` (Retry-After),
`redirect` (loops, offsite hops, meta refresh), `replay` (resume from stored pages) and
`warc_recorder` (responses into WARC files).
"""
