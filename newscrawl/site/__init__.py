"""The site pass: a site's pages extracted together once the site is complete.

`site_template` (the site's template as node hashes and features), `site_context` (the template
learnt once and handed to each extraction), `slot_cut` (the site's boilerplate slots cut out of
the extracted text), `stream_pass` (the pass one page at a time, within a fixed memory budget),
`carry` (a template carried across crawls), `site_job` (the picklable work of one site or
page), `site_pool` (the worker processes that run it), `site_pipeline` (the Scrapy item
pipeline, also reachable as ``newscrawl.pipelines.sitepass.SitePassPipeline``) and
`saved_pages` (saved pages through the same pass: `newscrawl extract`, `newscrawl reextract`),
with `saved_jobs` (their work as jobs of the same worker pool).
"""
