"""The evaluation metric, on hand-computed examples."""

from __future__ import annotations

from collections import Counter

import pytest

from newscrawl.gold.metric import (
    PageScore,
    aggregate,
    f1,
    score_page,
    score_tokens,
    shingles,
    tokens,
    word_f1,
)


def test_tokens_are_unicode_word_runs_with_case_kept() -> None:
    assert tokens("Hello, world! Ça va? 3.14 snake_case") == [
        "Hello",
        "world",
        "Ça",
        "va",
        "3",
        "14",
        "snake_case",
    ]
    assert tokens("The the") == ["The", "the"]
    assert tokens("Ελλάδα και Κύπρος") == ["Ελλάδα", "και", "Κύπρος"]
    assert tokens("新闻内容，很好。") == ["新闻内容", "很好"]
    assert tokens(" — !? ") == []
    assert tokens("") == []


def test_shingles_are_four_token_windows_counted_as_a_multiset() -> None:
    assert shingles(list("abcde")) == Counter({("a", "b", "c", "d"): 1, ("b", "c", "d", "e"): 1})
    assert shingles(list("abcdabcd"))[("a", "b", "c", "d")] == 2


def test_short_texts_have_one_shingle_of_all_their_tokens() -> None:
    assert shingles(["a", "b"]) == Counter({("a", "b"): 1})
    assert shingles(list("abcd")) == Counter({("a", "b", "c", "d"): 1})
    assert shingles([]) == Counter()


def test_page_counts_and_scores() -> None:
    # gold shingles: abcd bcde cdef; output: bcde cdef defg efgh
    score = score_page("a b c d e f", "b c d e f g h")
    assert (score.tp, score.fp, score.fn) == (2, 2, 1)
    assert score.precision == pytest.approx(0.5)
    assert score.recall == pytest.approx(2 / 3)
    assert score.normalised == pytest.approx((0.4, 0.4, 0.2))


def test_repeated_shingles_count_once_per_occurrence() -> None:
    # gold: xyzw yzwx zwxy wxyz xyzw (xyzw twice); output: xyzw once
    score = score_page("x y z w x y z w", "x y z w")
    assert (score.tp, score.fp, score.fn) == (1, 0, 4)
    assert (score.precision, score.recall) == (1.0, pytest.approx(0.2))


def test_layout_and_punctuation_do_not_count_but_case_does() -> None:
    perfect = score_page("One two,\n\nthree four five.", "One two three - four five")
    assert (perfect.precision, perfect.recall) == (1.0, 1.0)
    folded = score_page("The cat sat down", "the cat sat down")
    assert (folded.tp, folded.precision, folded.recall) == (0, 0.0, 0.0)


def test_empty_sides() -> None:
    both = score_page("", " ... ")
    assert (both.precision, both.recall) == (1.0, 1.0)
    noise = score_page("", "menu home about contact")
    assert (noise.precision, noise.recall) == (0.0, 0.0)
    missed = score_page("the article text is here", "")
    assert (missed.precision, missed.recall) == (0.0, 0.0)
    assert PageScore(0, 0, 0).normalised == (0.0, 0.0, 0.0)


def test_token_scores_are_a_bag_of_words() -> None:
    # gold {a:1, b:2, c:1}, output {b:1, c:2, d:1}: TP = b + c = 2
    score = score_tokens("a b b c", "b c c d")
    assert (score.tp, score.fp, score.fn) == (2, 2, 2)
    assert (score.precision, score.recall) == (0.5, 0.5)


def test_word_f1_is_the_f1_of_lower_cased_word_bags() -> None:
    # gold {the:2, cat:1}, output {the:1, cat:1, sat:1}: TP 2, P 2/3, R 2/3
    assert word_f1("The cat, the", "the CAT sat") == pytest.approx(2 / 3)
    assert word_f1("", "") == 1.0
    assert word_f1("gold only", "") == 0.0
    assert word_f1("", "noise") == 0.0


def test_dataset_scores_are_means_of_pages_and_f1_of_the_means() -> None:
    pages = [PageScore(1, 1, 0), PageScore(3, 0, 1)]  # P 0.5 and 1.0; R 1.0 and 0.75
    scores = aggregate(pages)
    assert scores.pages == 2
    assert scores.precision == pytest.approx(0.75)
    assert scores.recall == pytest.approx(0.875)
    assert scores.f1 == pytest.approx(2 * 0.75 * 0.875 / 1.625)
    # not the mean of the per-page F1s (0.667 and 0.857)
    assert scores.f1 != pytest.approx((f1(0.5, 1.0) + f1(1.0, 0.75)) / 2)


def test_aggregate_of_nothing_and_f1_of_zeros() -> None:
    assert aggregate([]).pages == 0
    assert aggregate([]).f1 == 0.0
    assert f1(0.0, 0.0) == 0.0
