"""Template detection (seed 004): SiteLevel labels, area-bucketed classifiers, isotonic smoothing.

One algorithm per module: `records` (compact per-page node arrays), `sitelevel` (hash-based
labels), `features`, `buckets`, `train`, `geometry`, `isotonic`, `extractor`, `evaluation`.
"""
