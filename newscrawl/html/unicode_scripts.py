"""Unicode ranges of the scripts that tokenisers treat apart, as regex class contents.

One table for two readings: Chinese and Japanese are written without spaces between words, so a
word tokeniser takes their characters one (or a few) at a time - `IDEOGRAPHS_AND_KANA`, what MSS
and the learned extractor's features read; Korean Hangul is written with spaces, but NCE counts
its syllables like ideographs too when it scales its character thresholds and builds its title
bags - `CJK_AND_HANGUL`. The two differ on the 121 pages with Hangul in the development data, so
each extractor keeps the reading its figures were measured with.

A third reading is the DOM walk's (`newscrawl.html.dom`): two elements side by side are two words,
unless the text on either side of the boundary is of a script written without spaces - Chinese,
Japanese, Thai, Lao, Khmer, Myanmar, or their punctuation (`spaceless`; `html/_domwalk.c` has its
twin).
"""

from __future__ import annotations

__all__ = ["CJK_AND_HANGUL", "HANGUL_SYLLABLES", "IDEOGRAPHS_AND_KANA", "spaceless"]

# kana, CJK extension A, CJK unified ideographs, CJK compatibility ideographs
IDEOGRAPHS_AND_KANA = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HANGUL_SYLLABLES = "\uac00-\ud7af"
CJK_AND_HANGUL = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"


def spaceless(char: str) -> bool:
    """Whether `char` is of a script written without spaces between words, or its punctuation."""
    code = ord(char)
    return (
        0x0E00 <= code <= 0x0EFF  # Thai, Lao
        or 0x1000 <= code <= 0x109F  # Myanmar
        or 0x1780 <= code <= 0x17FF  # Khmer
        or 0x2E80 <= code <= 0x9FFF  # CJK radicals and punctuation, kana, ideographs
        or 0xF900 <= code <= 0xFAFF  # CJK compatibility ideographs
        or 0xFF00 <= code <= 0xFFEF  # fullwidth forms
        or 0x20000 <= code <= 0x3FFFF  # CJK extensions
    )
