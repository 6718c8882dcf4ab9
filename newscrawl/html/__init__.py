"""A page's bytes, address and tree: what every later stage reads.

`decoding` (bytes to text for any declared, undeclared or wrongly declared charset), `dom` (one
parse per page into flat per-node arrays; `html/_domwalk.c` its walk in C), `tags` (the HTML tag
tables), `nesting`, `unicode_scripts` (the scripts written without spaces), `stopwords`, `urls`
(canonical URLs, site identity and scope) and `gcpause` (the garbage-collector pause for work
that keeps many parsed pages alive). Imports nothing else of newscrawl.
"""
