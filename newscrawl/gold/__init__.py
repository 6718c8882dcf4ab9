"""Pages with gold main text on disk: the dataset layout, the metric, folds, saved page files.

`dataset` reads a dataset folder (html/, gold/, meta.jsonl), `metric` scores text against gold
(shingle and token F1), `folds` splits sites into cross-validation folds, `pagefiles` finds the
saved pages a path names, and `docsdata` builds a dataset from documentation sites (`newscrawl
data`). Imports only `newscrawl.html`.
"""
