"""newscrawl's Scrapy item pipelines, in the order ITEM_PIPELINES runs them:

1. `extraction.ExtractionPipeline` - run the configured extractors on the page's DOM, and read
   its publication time, language and author;
2. `classify.ArticleClassifierPipeline` - article or index page, and why;
3. `sitelevel.SiteLevelPipeline` - buffer each site's pages as compact node records and label
   them with SiteLevel into the `nodes` dataset;
4. `rawpages.RawPagePipeline` - write the raw HTML and headers to the `pages` dataset;
5. `parquet.ParquetWriterPipeline` - write the `articles` dataset.
"""
