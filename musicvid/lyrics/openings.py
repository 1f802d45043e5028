"""Openings: where a known line starts. The warping path gives the frames before a line (a pause, a gap, the
band) to its first word, or to its second after a first given none, so the opening is trimmed to the time a
word is sung in, and starts where the voice does.

A song's pace is measured on the words placed: `typical`, its median word (s, at most TYPICAL_WORD_SECONDS),
and `per_letter`, its median seconds a letter. An opening word w of |w| letters is given at most

    own(w) = min(2 · typical, 2 · |w| · per_letter)

before its end: twice what a word of the song takes, and twice what this word's letters take (a stretched
"a" after a long gap is given a short word's time, not a long one's).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypeVar

import numpy as np

from musicvid.lyrics.singing import Voice
from musicvid.lyrics.spacing import sung_words
from musicvid.lyrics.transcript import Word
from musicvid.lyrics.windows import TimedWord

TYPICAL_WORD_SECONDS = 0.7  # at most: a song's median word, where its words are held long
CRUSHED_SECONDS = 0.05  # a word the path gave less time than this (on average over a line) was given none
Timed = TypeVar("Timed", TimedWord, Word)  # a word as a window placed it, or as a line keeps it


def letters(word: str) -> int:
    """The letters (and digits) of a word, at least 1."""
    return max(1, sum(ch.isalnum() for ch in word))


@dataclass(frozen=True)
class Openings:
    """A song's pace, as its placed words give it: how long an opening word may be."""

    longest: float  # s: twice the song's typical word
    per_letter: float  # s: the song's median time a letter

    @classmethod
    def of(cls, texts: list[str], placed: list[list[TimedWord] | None]) -> Openings:
        """The pace of the words placed (`placed[n]` times the words of `texts[n]`)."""
        timed = [
            (w, word) for text, p in zip(texts, placed) if p for w, word in zip(p, sung_words(text)) if w.end > w.start
        ]
        spans = [w.end - w.start for w, _ in timed]
        typical = min(TYPICAL_WORD_SECONDS, float(np.median(spans)) if spans else TYPICAL_WORD_SECONDS)
        shares = [(w.end - w.start) / letters(word) for w, word in timed]
        return cls(2 * typical, float(np.median(shares)) if shares else typical)

    def own(self, word: str) -> float:
        """The most time `word` may take as a line's first word."""
        return min(self.longest, 2 * letters(word) * self.per_letter)

    def trimmed(self, words: list[Timed], first: str, after: float) -> list[Timed]:
        """A line's words (the first is `first`) with its opening given the time a word is sung in. An opening
        word longer than its `own` time starts that long before its end; a second word longer than `longest`
        gives the first all but `longest` of its time (no more than half its end), as Whisper's transcribe trims
        the words opening a segment. A first word still given no time starts half of `longest` (a typical
        word) before its end, not before the line before ends (`after`): a sung word takes time."""
        head, *rest = words
        if rest and rest[0].end - rest[0].start > self.longest:
            boundary = max(rest[0].end / 2, rest[0].end - self.longest)
            head, rest[0] = replace(head, end=boundary), replace(rest[0], start=boundary)
        if head.end - head.start > self.own(first):
            head = replace(head, start=round(head.end - self.own(first), 3))
        elif head.end - head.start < CRUSHED_SECONDS:
            head = replace(head, start=round(min(head.start, max(after, head.end - self.longest / 2)), 3))
        return [head, *rest]

    def opened(self, words: list[Timed], first: str, after: float, voice: Voice) -> list[Timed]:
        """Words that open a line, `trimmed` and starting where a voice does."""
        return voiced_opening(self.trimmed(words, first, after), voice)


def voiced_opening(words: list[Timed], voice: Voice) -> list[Timed]:
    """A line's words, its first starting where a voice does: where Silero hears none at its start but hears one
    begin before it ends, the word starts there (a sung word starts with the voice). Where Silero hears nothing
    (a voice under a loud band), the words as they are."""
    first, *rest = words
    for start, end in voice.stretches:
        if start <= first.start < end:
            break
        if first.start < start < first.end - CRUSHED_SECONDS:
            return [replace(first, start=round(start, 3)), *rest]
    return words
