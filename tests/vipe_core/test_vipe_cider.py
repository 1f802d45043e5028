"""CIDEr-D: the maximum for a perfect match, about zero for unrelated text, the reference's numbers."""

from __future__ import annotations

import pytest

from vipe_core.cider import cider_d, tokenize

REFERENCES = [
    "a red fox asleep beneath the frozen moon",
    "a ship sailing into a dark storm",
    "a golden river winding through a quiet valley at sunrise",
    "a burning candle in a window",
    "a dragon with evil eyes lying on a pile of gold coins",
]


def test_identical_candidates_score_the_maximum():
    score, per_item = cider_d(REFERENCES, REFERENCES)
    assert score == pytest.approx(10.0)
    assert per_item == pytest.approx([10.0] * len(REFERENCES))


def test_unrelated_text_scores_near_zero():
    unrelated = [
        "the quarterly tax report is due",
        "please restart your router",
        "seven plus two equals nine",
        "install the kernel module",
        "bananas cost three dollars",
    ]
    score, _ = cider_d(unrelated, REFERENCES)
    assert score < 0.1  # 1% of the maximum: only "the" is shared with one reference
    assert cider_d(["install the kernel module"], ["a red fox asleep"])[0] == 0.0


def test_partial_overlap_lies_between_and_longer_matches_score_higher():
    near = "a red fox asleep beneath a moon"
    far = "a red car"
    close, _ = cider_d([near, *REFERENCES[1:]], REFERENCES)
    distant, _ = cider_d([far, *REFERENCES[1:]], REFERENCES)
    assert 10.0 > close > distant


def test_matches_the_coco_reference_implementation():
    """Numbers from pycocoevalcap's CIDEr-D scorer on the same (pre-tokenized) text."""
    candidates = [
        "a red fox sleeping under a frozen moon",
        "two ships sailing into a storm at night",
        "a golden river in a quiet valley",
        "an old clock on a snowy hill",
        "a dragon on a pile of coins",
    ]
    references = [
        [REFERENCES[0]],
        [REFERENCES[1], "ships in a storm at night"],
        [REFERENCES[2]],
        [REFERENCES[3]],
        [REFERENCES[4]],
    ]
    score, per_item = cider_d(candidates, references)
    assert score == pytest.approx(2.599851023323455, abs=1e-9)
    assert per_item == pytest.approx(
        [3.0311287377161573, 3.5143065455590534, 3.5406938875520515, 0.0, 2.91312594579001], abs=1e-9
    )


def test_tokenize_lowercases_and_drops_punctuation():
    assert tokenize("A Dragon's lair, at NIGHT!") == ["a", "dragon's", "lair", "at", "night"]


def test_empty_and_mismatched_input():
    assert cider_d([], []) == (0.0, [])
    with pytest.raises(ValueError):
        cider_d(["a"], [])
