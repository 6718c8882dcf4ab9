"""newscrawl's Scrapy item pipelines, in the order ITEM_PIPELINES runs them:

1. `sitepass.SitePassPipeline` - buffer each site's raw pages; once the site is complete, run
   its site pass (SiteLevel labels into the `nodes` dataset, extraction, article flag, the
   site's template cut out of the text) and write the site's `articles` rows;
2. `extraction.ExtractionPipeline` - page-level extraction, for pages the site pass does not
   take (NEWSCRAWL_SITELEVEL off, or a site buffer over its byte budget);
3. `classify.ArticleClassifierPipeline` - article or index page, and why (the same pages);
4. `rawpages.RawPagePipeline` - write the raw HTML and headers to the `pages` dataset;
5. `parquet.ParquetWriterPipeline` - write the `articles` rows of the pages extracted page by
   page.
"""
