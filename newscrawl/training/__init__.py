"""Models trained and cross-validated on gold datasets (`newscrawl train`, `newscrawl models`).

The learned extractor: `learned_trainset` (labelled blocks from gold text, with `gold_labels`),
`learned_train`, `learned_crossval`. The template classifier: `template_train`,
`template_crossval`, `template_default` (the shipped default model), `template_compare`, and the
template detection scores they select by (`template_scores`, `template_sites`).
"""
