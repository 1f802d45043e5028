"""Where someone sings, and which of the segments Whisper heard over the whole song are inventions.

Whisper listens to the whole song (musicvid.lyrics.transcribe), and what it hears is kept unless the
evidence says nobody sings there. The evidence, by measurement on real recordings with a band and on
the generated songs (README, "Lyrics, where they are sung"):

- What Whisper invents over music is few and recognizable: the outro phrases of the videos it learned
  from ("thank you for watching", "see you next time", a lone "You"), or many words crammed into a
  second or two (16 words in 1.4 s): faster than anyone sings. Such a segment goes wherever it is. Words
  it barely believes (a mean probability under 0.15) go where it believed nothing it heard within 10 s:
  over a band it also barely makes out words that are sung, amid lines it hears well.
- Silero's voice activity detector hears a clear voice over a quiet band, and there it is the better
  judge of where a line starts and whether anybody sings at all; under a loud band (distorted guitars,
  drums, a singer who growls) it hears nothing. So Silero is trusted as far as it agrees with Whisper:
  where it heard voice under at least half of what Whisper kept, a segment with no voice under it is
  an invention over the music, as before; where it did not, it decides nothing, and Whisper's own
  signals above do. It never decides alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from musicvid.audio import SAMPLE_RATE
from musicvid.lyrics.transcript import Line, Word

# Silero, a little more sensitive than its default (0.5): singing under a band scores lower than speech.
VAD_OPTIONS = {"threshold": 0.35, "min_silence_duration_ms": 300, "speech_pad_ms": 0}
# Silero hears a sung line 0.1-0.7 s after it begins (measured on the test songs), and its ends are
# accurate: a stretch reaches from a second before it to a little after it ...
CLIP_LEAD = 1.0
CLIP_TAIL = 0.3
# ... and a word may begin at most this long before Silero hears it (Whisper's tiny models put a line's
# first word up to 0.6 s early, over the music before it).
WORD_LEAD = 0.5
# A line with voice under less than this share of its time is not sung (where Silero is trusted).
VOICED_SHARE = 0.5
# Silero is trusted where its voice lies under at least this share of the time of what Whisper kept.
TRUSTED_AGREEMENT = 0.5
# Fast rap is 6 words a second; Whisper's inventions over music run to 10-15.
MAX_WORDS_PER_SECOND = 8.0
# Words Whisper gives a mean probability under this are guesses at sounds ("=== The Ber Theo" over guitars:
# 0.01) ... or sung words it barely made out under a band (openai-whisper: 0.02-0.11 amid lines of 0.3 to
# 0.5). So a guess stands only where Whisper believed something it heard this near it.
GUESSED_PROBABILITY = 0.15
BELIEVED_WITHIN_SECONDS = 10.0
# What tiny to large Whisper models say over music: the ends of the videos they learned from.
INVENTED_PHRASES = re.compile(
    r"thanks? (you )?(so much )?for watching|see you (in the )?next (time|video|one)|(please |and )?subscribe|"
    r"end of (the |this )?video|"
    r"^(thank you|thanks|you|bye|bye bye|music|applause)$"
)


@dataclass(frozen=True)
class Voice:
    """Where someone sings: stretches (start, end) in seconds, in order."""

    stretches: list[tuple[float, float]]
    duration: float

    @classmethod
    def detect(cls, samples: np.ndarray) -> Voice:
        """Silero's voiced stretches (bundled with faster-whisper)."""
        from faster_whisper.vad import VadOptions, get_speech_timestamps

        found = get_speech_timestamps(samples, VadOptions(**VAD_OPTIONS), sampling_rate=SAMPLE_RATE)
        return cls([(c["start"] / SAMPLE_RATE, c["end"] / SAMPLE_RATE) for c in found], samples.size / SAMPLE_RATE)

    @classmethod
    def of_words(cls, lines: list[Line], duration: float) -> Voice:
        """The stretches Whisper heard words in, joined across pauses shorter than a stretch's lead."""
        spans = sorted((w.start, w.end) for line in lines for w in line.words if w.end > w.start)
        spans = spans or sorted((line.start, line.end) for line in lines if line.end > line.start)
        merged: list[list[float]] = []
        for start, end in spans:
            if merged and start - merged[-1][1] < CLIP_LEAD:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return cls([(start, end) for start, end in merged], duration)

    def widened(self) -> list[tuple[float, float]]:
        """The stretches with their lead and tail, merged where they meet."""
        merged: list[list[float]] = []
        for start, end in self.stretches:
            start, end = max(0.0, start - CLIP_LEAD), min(self.duration, end + CLIP_TAIL)
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return [(start, end) for start, end in merged]

    def voiced_share(self, start: float, end: float) -> float:
        if end <= start:
            return 0.0
        return sum(max(0.0, min(end, b) - max(start, a)) for a, b in self.widened()) / (end - start)

    def sung(self, lines: list[Line]) -> list[Line]:
        """The lines with voice under them; the others are Whisper's inventions over the music."""
        return [line for line in lines if self.voiced_share(line.start, line.end) >= VOICED_SHARE]

    def stretch_of(self, word: Word) -> int | None:
        """Which stretch a word is sung in: the one it overlaps most, or the nearest within a lead of it;
        None if it is further from every stretch."""
        closeness = [min(word.end, b) - max(word.start, a) for a, b in self.stretches]  # overlap, or minus the gap
        best = max(range(len(closeness)), key=closeness.__getitem__, default=None)
        return best if best is not None and closeness[best] >= -CLIP_LEAD else None

    def fit(self, word: Word) -> None:
        """Keep a word inside the stretch it is sung in (the one it overlaps most, or one it lies a lead
        away from): Whisper's alignment stretches words over the music next to them, and a stretched
        word hides the pause after a line. A word far from every stretch is left where Whisper put it."""

        sung_in = self.stretch_of(word)
        if sung_in is None:
            return
        start, end = self.stretches[sung_in]
        word.start = min(max(word.start, start - WORD_LEAD), word.end)
        word.end = max(word.start, min(word.end, end + CLIP_TAIL))


def invented(line: Line) -> str | None:
    """Why a segment Whisper heard is an invention over the music, by its own signals; None if it may be
    sung."""
    text = " ".join(re.findall(r"[a-z']+", line.text.lower()))
    if INVENTED_PHRASES.search(text):
        return "a phrase Whisper says over music"
    words = [w for w in line.words if w.text.strip()]
    span = (words[-1].end - words[0].start) if words else line.end - line.start
    count = len(words) or len(text.split())
    if count >= 4 and count > MAX_WORDS_PER_SECOND * max(span, 0.1):
        return f"{count} words in {span:.1f} s"
    return None


def guessed(line: Line) -> bool:
    """Whether Whisper barely believed the words it heard (their mean probability)."""
    probabilities = [w.probability for w in line.words if w.probability is not None]
    return bool(probabilities) and sum(probabilities) / len(probabilities) < GUESSED_PROBABILITY


def may_be_sung(heard: list[Line]) -> list[Line]:
    """The segments Whisper heard that may be sung: not inventions by their own signals (`invented`), and
    not guesses far from anything it believed it heard."""
    plausible = [segment for segment in heard if invented(segment) is None]
    believed = [segment for segment in plausible if not guessed(segment)]

    def near_belief(segment: Line) -> bool:
        return any(max(segment.start - b.end, b.start - segment.end) <= BELIEVED_WITHIN_SECONDS for b in believed)

    return [segment for segment in plausible if not guessed(segment) or near_belief(segment)]


def where_sung(kept: list[Line], silero: Voice, duration: float) -> tuple[Voice, bool]:
    """Where the singing is, and whether Silero is trusted: where it heard voice under at least half of
    what Whisper kept (its inventions gone), its stretches are where the singing is, and a line with no
    voice under it goes (`Voice.sung`). Else the singing is where Whisper heard the words it kept, with
    Silero's stretches besides, and Silero drops nothing."""
    heard = sum(line.end - line.start for line in kept)
    voiced = sum(silero.voiced_share(line.start, line.end) * (line.end - line.start) for line in kept)
    if silero.stretches and heard > 0 and voiced >= TRUSTED_AGREEMENT * heard:
        return silero, True
    return Voice(sorted(Voice.of_words(kept, duration).stretches + silero.stretches), duration), False
