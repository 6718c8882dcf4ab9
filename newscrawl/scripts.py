"""Unicode ranges of the scripts that tokenisers treat apart, as regex class contents.

One table for two readings: Chinese and Japanese are written without spaces between words, so a
word tokeniser takes their characters one (or a few) at a time - `IDEOGRAPHS_AND_KANA`, what MSS
and the learned extractor's features read; Korean Hangul is written with spaces, but NCE counts
its syllables like ideographs too when it scales its character thresholds and builds its title
bags - `CJK_AND_HANGUL`. The two differ on the 121 pages with Hangul in the development data, so
each extractor keeps the reading its figures were measured with.
"""

from __future__ import annotations

__all__ = ["CJK_AND_HANGUL", "HANGUL_SYLLABLES", "IDEOGRAPHS_AND_KANA"]

# kana, CJK extension A, CJK unified ideographs, CJK compatibility ideographs
IDEOGRAPHS_AND_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HANGUL_SYLLABLES = "\uac00-\ud7af"
CJK_AND_HANGUL = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
