"""Template detection: SiteLevel labels, area-bucketed classifiers, isotonic smoothing.

The method of Chakrabarti, Kumar and Punera (WWW 2007).

One algorithm per module: `node_records` (compact per-page node arrays), `sitelevel`
(hash-based labels), `node_features`, `buckets`, `geometry` (one module per box provider),
`template_scoring` and `isotonic` (a trained model applied to a page; its file format is
`newscrawl.models.template_model`), `node_table` (the nodes dataset) and `page_sources`
(stored pages by site). The site-level alternatives of the survey sit beside SiteLevel, one
module each, in one form (`sitemethods`): `sst` (Yi et al.'s Site Style Tree), `pagelets`
(Bar-Yossef & Rajagopalan's local template detection), `entropy` (Lin & Ho's block entropy).
Training and its scores are in `newscrawl.training`; the template filter, an extractor, in
`newscrawl.extractors.template_filter`.
"""
