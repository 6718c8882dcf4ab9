"""Template detection: SiteLevel labels, area-bucketed classifiers, isotonic smoothing.

The method of Chakrabarti, Kumar and Punera (WWW 2007).

One algorithm per module: `records` (compact per-page node arrays), `sitelevel` (hash-based
labels), `features`, `buckets`, `train`, `geometry` (one module per box provider), `isotonic`,
`extractor`. The site-level alternatives a PUC-Rio thesis surveys sit beside SiteLevel, one
module each, in one form (`sitemethods`): `sst` (Yi et al.'s Site Style Tree), `pagelets`
(Bar-Yossef & Rajagopalan's local template detection), `entropy` (Lin & Ho's block entropy).
Their evaluation is in `newscrawl.evaluation` (`template`, `template_sites`, `site_methods`).
"""
