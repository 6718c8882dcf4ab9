"""newscrawl's Scrapy item pipelines, in the order ITEM_PIPELINES runs them:

1. `rawpages.RawPagePipeline` - write the raw HTML and headers to the `pages` dataset (first,
   so a site's pages are in their files before the site pass writes the site);
2. `sitepass.SitePassPipeline` (its code is `newscrawl.site.site_pipeline`) - buffer each
   site's raw pages; once the site is complete, run its site pass (SiteLevel labels into the
   `nodes` dataset, extraction, article flag, the site's template cut out of the text) and
   write the site's `articles` rows;
3. `extraction.ExtractionPipeline` - page-level extraction, for pages the site pass does not
   take (NEWSCRAWL_SITELEVEL off: in the site pass's workers, page by page; or a site buffer
   over its byte budget);
4. `classify.ArticleClassifierPipeline` - article or index page, and why (the same pages);
5. `parquet.ParquetWriterPipeline` - write the `articles` rows of the pages extracted page by
   page.

The site pass's computation is `newscrawl.site.site_job` (a pure, picklable job: a site's
pass, or one page's page-level extraction), run in worker processes by
`newscrawl.site.site_pool` (NEWSCRAWL_SITEPASS_WORKERS) or in a thread.
"""
