"""The learned extractor's parts: text `blocks`, their features (`block_features`,
`textstats`; `_textstats.c` and `_treewalk.c` in C, with numpy fallbacks), the JSON tree
`model`, `stacking`, `block_scoring`, the `recall_guard` and the page-type model (`pagetype`).
Training them is `newscrawl.training`.
"""
