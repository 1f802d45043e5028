"""Whisper's windows of one song: 30 s of it from a start, encoded once, in which a text's words are timed.

Whisper aligns a given text instead of recognizing one: its decoder reads the text token by token while a few
of its cross-attention heads point at the audio frames each token is heard in, and a dynamic-time-warping path
through those weights gives every word a start and an end (musicvid.models.internals). The decoder also gives
each word a probability there, and the same words read over silence a probability of their own: what the
decoder expects from the text alone. Their ratio is the evidence the audio gives for a word:

    evidence(line) = mean over its words w of  log p(w | window) - log p(w | silence)

(in nats a word). A line sung in the window gets several nats a word; a line not sung in it about none, where
the warping path puts it (a path must give every word a place, sung or not).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from musicvid.core.audio import SAMPLE_RATE
from musicvid.models.internals import (
    faster_whisper_encoded,
    faster_whisper_tokenizer,
    faster_whisper_word_timings,
    text_tokens,
    whisper_encoded,
    whisper_tokenizer,
    whisper_word_timings,
)
from musicvid.models.loading import ASRModel

WINDOW_SECONDS = 30.0  # Whisper's
# Window starts are rounded down to this: a window tried again (or nearly again) is encoded once.
GRID_SECONDS = 0.5
# A probability is never taken as less than this, so that a word Whisper gives none costs a finite log.
FLOOR = 1e-6


@dataclass(frozen=True)
class TimedWord:
    """A word as one window placed it: its start and end (s, in the song), and the nats of evidence the
    window's audio gives for it (log p(word | window) - log p(word | silence))."""

    start: float
    end: float
    probability: float
    evidence: float


class Windows:
    """A song's windows, each encoded the first time it is asked for, and the text's words timed in them (by
    either backend of the shared ASR model: nothing of the model is changed)."""

    def __init__(self, asr: ASRModel, samples: np.ndarray, language: str):
        faster = asr.backend == "faster-whisper"
        self.model, self.samples = asr.model, samples
        self.duration = samples.size / SAMPLE_RATE
        self.tokenizer, self.most_tokens = (faster_whisper_tokenizer if faster else whisper_tokenizer)(
            asr.model, language
        )
        self.encode: Callable = faster_whisper_encoded if faster else whisper_encoded
        self.word_timings: Callable = faster_whisper_word_timings if faster else whisper_word_timings
        self.encoded: dict[float, tuple] = {}
        self.silence = self.encode(asr.model, np.zeros(int(WINDOW_SECONDS * SAMPLE_RATE), dtype=np.float32))
        # a text's words over silence, by the text: a text tried in another window is read over silence once
        self.expected: dict[tuple, list[tuple[float, float, float]]] = {}

    def tokens(self, text: str) -> list[int]:
        return text_tokens(self.tokenizer, text)

    def start_of(self, at: float) -> float:
        """Where the window asked for at `at` starts: on the grid, inside the song."""
        return max(0.0, math.floor(min(at, self.duration) / GRID_SECONDS) * GRID_SECONDS)

    def window(self, start: float) -> tuple:
        if start not in self.encoded:
            clip = self.samples[int(start * SAMPLE_RATE) : int((start + WINDOW_SECONDS) * SAMPLE_RATE)]
            self.encoded[start] = self.encode(self.model, clip)
        return self.encoded[start]

    def timed(self, at: float, words: list[list[int]]) -> tuple[float, list[TimedWord]]:
        """Each of `words` (a word's tokens, in order) timed together in the window starting at start_of(at):
        the window's start, and the words in song time."""
        start = self.start_of(at)
        flat = [token for tokens in words for token in tokens]
        heard = self.per_word(words, self.word_timings(self.model, self.tokenizer, flat, self.window(start)))
        key = tuple(map(tuple, words))
        if key not in self.expected:
            self.expected[key] = self.per_word(words, self.word_timings(self.model, self.tokenizer, flat, self.silence))
        expected = self.expected[key]
        return start, [
            TimedWord(
                round(start + a, 3),
                round(start + b, 3),
                round(p, 3),
                math.log(max(p, FLOOR)) - math.log(max(prior, FLOOR)),
            )
            for (a, b, p), (_, _, prior) in zip(heard, expected)
        ]

    @staticmethod
    def per_word(words: list[list[int]], timings: list) -> list[tuple[float, float, float]]:
        """Whisper's word timings (its own words, split its own way, each with its token count) as `words`: each
        from the start of its first token's timing to the end of its last, with their mean probability."""
        owner = [n for n, tokens in enumerate(words) for _ in tokens]
        spans: list[list] = [[None, None, []] for _ in words]
        position = 0
        for _, start, end, probability, count in timings:
            for n in dict.fromkeys(owner[position : position + count]):
                span = spans[n]
                span[0] = float(start) if span[0] is None else span[0]
                span[1] = float(end)
                span[2].append(float(probability))
            position += count
        last = 0.0
        found = []
        for start, end, probabilities in spans:  # a word the path gave no timing: where the one before ended
            start, end = (last, last) if start is None else (start, end)
            found.append((start, end, float(np.mean(probabilities)) if probabilities else 0.0))
            last = end
        return found
