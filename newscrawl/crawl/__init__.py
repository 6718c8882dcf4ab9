"""The crawl's Scrapy components and the pieces they share.

Downloader middlewares: `private` (SSRF guard), `sitecap` (per-site page cap), `retry`
(Retry-After), `redirect` (loops, offsite), `replay` (resume from stored pages). Extensions:
`state` (crawl id, resume), `content` (stop non-HTML downloads), `summary`. Shared: `urls`
(canonical form, site scope, traps), `sites` (site lists), `feeds` (safe sitemap/feed parsing),
`errors` (error kinds), `items`, `metadata` (dates, language, author), `pagekind` (article or
index page).
"""
