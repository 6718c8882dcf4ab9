"""The learned features' keyword mask of an element's words, computed token by token, is the
mask the groups' patterns give on the whole words (no pattern matches across whitespace)."""

from __future__ import annotations

import pytest

from newscrawl.extractors.blockmodel import block_features as features


def _whole(words: str) -> int:
    return sum(1 << bit for bit, p in enumerate(features._GROUP_RES) if p.search(words))


@pytest.mark.parametrize(
    "words",
    [
        "ad", "ads banner", "x ad y", "head", "lead-ad", "ad_slot", "badge", "shadow ad\u00a0box",
        "nav\u2003menu", "article-body main", "post body", "articlebody", "",
        "flex px-4 md:grid", "sr-only", "social-share twitter", "cookie\tconsent", "ad\nx",
    ],
)  # fmt: skip
def test_token_masks_give_the_whole_words_mask(words: str) -> None:
    features._keyword_mask.cache_clear()
    assert features._keyword_mask(words) == _whole(words)
