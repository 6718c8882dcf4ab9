"""Template detection (seed 004): SiteLevel labels, area-bucketed classifiers, isotonic smoothing.

One algorithm per module: `records` (compact per-page node arrays), `sitelevel` (hash-based
labels), `features`, `buckets`, `train`, `geometry` (one module per box provider), `isotonic`,
`extractor`. The site-level alternatives of the survey (seed 002) sit beside SiteLevel, one
module each, in one form (`sitemethods`): `sst` (Yi et al.'s Site Style Tree), `pagelets`
(Bar-Yossef & Rajagopalan's local template detection), `entropy` (Lin & Ho's block entropy).
Their evaluation is in `newscrawl.evaluation` (`template`, `template_sites`, `site_methods`).
"""
