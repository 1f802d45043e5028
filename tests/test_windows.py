"""A song's windows (musicvid.lyrics.windows), with the real Whisper tiny.en: what is computed once."""

import numpy as np

from musicvid.core.audio import SAMPLE_RATE
from musicvid.lyrics.windows import Windows
from tests.fixtures.whisper_ct2 import load_tiny_en


def test_a_text_tried_in_two_windows_is_read_over_silence_once(tmp_path):
    """The silence prior depends on the text alone: a text tried again in another window reuses it, and its
    words' evidence is what reading it over silence again would give."""
    samples = np.random.default_rng(0).normal(0, 0.05, 40 * SAMPLE_RATE).astype(np.float32)
    windows = Windows(load_tiny_en("faster-whisper", tmp_path), samples, "en")
    read = windows.word_timings
    calls = []
    windows.word_timings = lambda *args: calls.append(args[3]) or read(*args)
    words = [windows.tokens(f" {word}") for word in "the river is rising".split()]
    first = windows.timed(0.0, words)
    second = windows.timed(8.0, words)
    assert [encoded is windows.silence for encoded in calls] == [False, True, False]
    fresh = Windows.per_word(words, read(windows.model, windows.tokenizer, sum(words, []), windows.silence))
    assert [p for *_, p in fresh] == [p for *_, p in windows.expected[tuple(map(tuple, words))]]
    assert first[0] == 0.0 and second[0] == 8.0 and len(second[1]) == len(words)
