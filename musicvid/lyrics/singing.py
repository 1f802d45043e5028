"""Where someone sings, and which of the segments Whisper heard over the whole song are sung.

Whisper listens to the whole song (musicvid.lyrics.transcribe), and what it hears is kept unless the
evidence says nobody sings there. The evidence, by measurement on real recordings with a band and on
the generated songs (docs/lyrics.md):

- Whisper's own signals (musicvid.lyrics.inventions): the phrases it says over music, words faster than
  anyone sings, its loops. Such a segment goes wherever it is. Words it barely believes (against the song's
  own belief) go where it believed nothing it heard within 10 s: over a band it also barely makes out words
  that are sung, amid lines it hears well.
- Silero's voice activity detector hears a clear voice over a quiet band, and there it is the better
  judge of where a line starts and whether anybody sings at all; under a loud band (distorted guitars,
  drums, a singer who growls) it hears nothing; over a folk guitar it hears some passages and not others.
  So Silero is trusted as far as it agrees with Whisper, passage by passage: where it heard voice under at
  least half of what Whisper believed around a segment, its stretches place the segment's words, and a line
  with no voice under it, amid lines it hears, is an invention over the music if Whisper barely believed it
  too; where it did not, it decides nothing, and Whisper's own signals do. It never decides alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from musicvid.core.audio import SAMPLE_RATE
from musicvid.lyrics.belief import believed, guessed
from musicvid.lyrics.inventions import UNTIMED_WORD_SECONDS
from musicvid.lyrics.transcript import Line, Word
from musicvid.models.internals import speech_timestamps

# Whisper cuts segments by its 30 s windows and its own sense of sentences, not by sung lines: a
# pause this long between two words is where a line ends.
LINE_PAUSE_SECONDS = 0.5
# The punctuation Whisper ends a clause with (its CJK and Arabic forms besides): where a phrase may end.
CLAUSE_ENDS = ",;:.!?，、；：。！？،؛؟"
VOWELS = set("aeiouy")
# Silero, a little more sensitive than its default (0.5): singing under a band scores lower than speech.
VAD_OPTIONS = {"threshold": 0.35, "min_silence_duration_ms": 300, "speech_pad_ms": 0}
# Silero hears a sung line 0-0.2 s after it begins (measured on the generated songs), and its ends are
# accurate: what Whisper decodes of a stretch reaches from a second before it to a little after it.
CLIP_LEAD = 1.0
CLIP_TAIL = 0.3
# A line with voice under less than this share of its time has no voice under it.
VOICED_SHARE = 0.5
# Silero is trusted where its voice lies under at least this share of the time of what Whisper believed: over
# the song, to place the words; around a line (half a Whisper window each side), to say nobody sings it.
TRUSTED_AGREEMENT = 0.5
AROUND_SECONDS = 15.0
# What Whisper times a word after a pause by: the warping path must give the pause's frames to a word,
# and gives them to the first word after it, which then reaches back over the music. Its end is where its
# sound ends; it is taken to have begun no earlier than a typical word of the song before that end (the
# median length of the words Whisper timed in it), unless Silero heard the voice begin earlier.
TYPICAL_WORD_SECONDS = 0.3  # where a song has no timed words to measure
# Whisper's timestamps may put a line it heard after the stretch it was sung in (tiny.en with flattened logits: a
# song's last line 9 s late, at its 30 s window's end); no further than one window.
SLIP_SECONDS = 30.0


@dataclass(frozen=True)
class Voice:
    """Where someone sings: stretches (start, end) in seconds, in order; and how long a word of the song
    typically lasts (`word`: musicvid.lyrics.singing.typical_word)."""

    stretches: list[tuple[float, float]]
    duration: float
    word: float = TYPICAL_WORD_SECONDS

    @classmethod
    def detect(cls, samples: np.ndarray) -> Voice:
        """Silero's voiced stretches (bundled with faster-whisper)."""
        found = speech_timestamps(samples, VAD_OPTIONS, SAMPLE_RATE)
        return cls([(start / SAMPLE_RATE, end / SAMPLE_RATE) for start, end in found], samples.size / SAMPLE_RATE)

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

    def agreement(self, believed: list[Line], start: float = 0.0, end: float = math.inf) -> float | None:
        """The share of the time of the `believed` segments between `start` and `end` that the voice lies under;
        None where they hold none."""
        spans = [(max(start, s.start), min(end, s.end)) for s in believed if s.end > start and s.start < end]
        heard = sum(b - a for a, b in spans)
        return sum(self.voiced_share(a, b) * (b - a) for a, b in spans) / heard if heard > 0 else None

    def sung(self, lines: list[Line], believed: list[Line], typical: float) -> list[Line]:
        """The lines but Whisper's inventions over the music: a line with no voice under it, where Silero heard
        the voice under what else Whisper `believed` around it (AROUND_SECONDS each side; or, with nothing else
        believed there, where it did over the song, as it did or this would not be asked), and that Whisper
        itself barely believed (`guessed`, against the song's `typical` belief) or did not time (each word `untimed`
        and far from every stretch: where it put the line, nobody sings, and where it was sung is not known; seed
        57's "a burning" at 20.64-29.98 s, its window's end, the line sung from 15.49 s and heard again there).
        Silero's silence alone drops nothing: over a folk guitar it hears some passages and not others
        (JamendoLyrics' "te amo": 12 of its 29 sung lines had no voice under them, each heard as surely as the
        rest)."""

        def heard_around(line: Line) -> bool:
            others = [s for s in believed if s.end <= line.start or s.start >= line.end]
            agreed = self.agreement(others, line.start - AROUND_SECONDS, line.end + AROUND_SECONDS)
            return agreed is None or agreed >= TRUSTED_AGREEMENT

        def invented_here(line: Line) -> bool:
            silent = self.voiced_share(line.start, line.end) < VOICED_SHARE
            lost = bool(line.words) and all(self.untimed(w) and self.stretch_of(w) is None for w in line.words)
            return silent and (guessed(line, typical) or lost) and heard_around(line)

        return [line for line in lines if not invented_here(line)]

    def slipped(self, lines: list[Line]) -> list[Line]:
        """The lines, each where it was sung. Whisper's timestamps slip: a line heard where nobody sings, after
        a stretch of voice that nothing was heard in (beginning after the line before ends, within one of
        Whisper's windows, and long enough to hold the line's words as Whisper timed them), was sung in that
        stretch. It moves there, words and all."""
        moved: list[Line] = []
        for line in lines:
            if self.voiced_share(line.start, line.end) >= VOICED_SHARE:
                moved.append(line)
                continue
            after = moved[-1].end if moved else 0.0
            free = [
                a
                for a, b in self.stretches
                if after <= a and b <= line.start and line.start - a <= SLIP_SECONDS and b - a >= line.end - line.start
            ]
            moved.append(shifted(line, free[-1] - line.start) if free else line)
        return moved

    def begun_in(self, word: Word) -> int | None:
        """The number of the stretch `word` begins in; None where it begins in none."""
        return next((number for number, (start, end) in enumerate(self.stretches) if start <= word.start < end), None)

    def words_sung(self, segments: list[Line]) -> list[Line]:
        """The time the segments' words may be sung in, a line a word: each but a word longer than every stretch of
        the voice (a held note is voice, and Silero hears it whole), which Whisper held over music it did not hear
        (a fresh gaps song's "rain", 7.5 s over 10 s of band after its line, the next line in the same segment); a
        segment without word times whole."""
        longest = max((b - a for a, b in self.stretches), default=math.inf)
        spans = [
            [Line(w.start, w.end, "") for w in s.words if w.end - w.start <= longest] if s.words else [s]
            for s in segments
        ]
        return [span for segment in spans for span in segment]

    def stretch_of(self, word: Word) -> int | None:
        """Which stretch a word is sung in: the one it overlaps most, or the nearest within a lead of it;
        None if it is further from every stretch."""
        closeness = [min(word.end, b) - max(word.start, a) for a, b in self.stretches]  # overlap, or minus the gap
        best = max(range(len(closeness)), key=closeness.__getitem__, default=None)
        return best if best is not None and closeness[best] >= -CLIP_LEAD else None

    def paused(self, before: Word, after: Word, shortest: float = LINE_PAUSE_SECONDS) -> bool:
        """Whether the voice pauses between two words: they are sung in two of its stretches, `shortest` or more
        apart. Silero's stretches also part for shorter silences (a breath, a voice the band drowned for a moment)
        inside a sung line."""
        a, b = self.stretch_of(before), self.stretch_of(after)
        return a is not None and b is not None and a != b and self.stretches[b][0] - self.stretches[a][1] >= shortest

    def fit(self, word: Word, opening: bool = False, held: bool = False) -> Word:
        """The word kept inside the stretch it is sung in (the one it overlaps most, or one it lies a lead
        away from; for a word that opens a phrase, the one its last typical word's length is in: its
        start is the side Whisper stretches). Whisper's timing stretches the first word after a pause
        back over the music before it: a word begins no earlier than its stretch does, or, where a typical
        word before its own end is earlier, than the mean of the two onsets. Each errs one way: tiny.en timed
        the first words after 6-16 s of band 0.6 s early, with their ends (generated songs, seeds 42-48), and
        Silero heard JamendoLyrics' lines 0.2 s late, as a median. A word that ends more than a typical word
        before its stretch begins is given no time at its start (the line then starts at its first sung
        word). A word's end stays within the stretch's tail. A word far from every stretch is left where
        Whisper put it, but for an opening word's start, which begins no earlier than a typical word before its end,
        as where Silero is not trusted (`opened`), unless Whisper gave it no time it could be sung in (`untimed`):
        Whisper base began a folk song's "Soy un fantasma" at 16.78 s, where the segment before ended, "Soy" lasting
        to 18.18 s, sung from 17.63 s, where Silero heard no voice (JamendoLyrics' Fantasma). A segment's last word
        that opens no phrase (`held`) is sung in the stretch it begins in, where it begins in one: its start follows
        the word before, and Whisper holds its end over what it did not hear (a fresh loud song's "of", 21.02-27.6 s,
        was fitted into the next line's stretch, heard again there, and the two lines were one), as `held_until`
        reads it when the voice unheard is sought."""
        sounding = Word(max(word.start, word.end - self.word), word.end, word.text) if opening else word
        begun = self.begun_in(word) if held else None
        sung_in = self.stretch_of(sounding) if begun is None else begun
        if sung_in is None:  # (an opening word Whisper gave time to, as where Silero is not trusted: `opened`)
            return word if self.untimed(word) else sounding
        start, end = self.stretches[sung_in]
        if word.end <= start - self.word:  # before the voice, even a late-heard one: the path filled the music
            return replace(word, start=start, end=start)
        heard = word.end - self.word
        onset = (heard + start) / 2 if heard < start else start
        begins = min(max(word.start, onset), word.end)
        return replace(word, start=begins, end=max(begins, min(word.end, end + CLIP_TAIL)))

    def first_sung(self, lines: list[Line]) -> list[Line]:
        """The lines, each first line of a stretch of voice beginning where the voice does. Where a stretch
        begins before the first line heard in it, Whisper missed its first words (greedy tiny.en heard only
        the last word of a line sung under a band), and the line is sung from there. Lines in order, each
        one's words fitted to its stretch. A line beginning in the stretch the line before ended in is not its
        first (Whisper's segment, a sung line, may run over Silero's stretches); where the line before ended is
        where its last word Whisper gave time to was sung (a fresh long song's "… the height is", "is" crushed at
        140.68 s into the next line's stretch, whose line then began 0.65 s late)."""
        begun, previous = [], None
        for line in lines:
            stretch = self.stretch_of(line.words[0]) if line.words else None
            if stretch is not None and stretch != previous and self.stretches[stretch][0] < line.start:
                start = self.stretches[stretch][0]
                line = replace(line, start=start, words=[replace(line.words[0], start=start), *line.words[1:]])
            begun.append(line)
            timed = [w for w in line.words if not self.untimed(w)] or line.words
            previous = self.stretch_of(timed[-1]) if timed else None  # where the line before ended
        return begun

    def fit_phrase(self, words: list[Word]) -> list[Word]:
        """A phrase's (a segment's) words, each `fit`, its openings as such; and a word not sung where Whisper timed
        it (`unsung_there`) that Whisper timed straight before a word sung in a stretch beginning after it goes with
        that word (`led_in`)."""
        opens = openings(words)
        held = [k == len(words) - 1 and not opens[k] for k in range(len(words))]
        fitted = [self.fit(word, opening, last) for word, opening, last in zip(words, opens, held)]
        afresh = [k == 0 for k in range(len(words))]  # the segment's first word, or a crushed run's that opens
        for k in range(1, len(words)):
            afresh[k] = self.untimed(words[k]) and (opens[k] or (afresh[k - 1] and self.untimed(words[k - 1])))
        for k in reversed(range(len(words) - 1)):  # (from the end: a run of such words goes with the sung one)
            if self.unsung_there(words[k], afresh[k]) and self.led_in(words[k], words[k + 1], fitted[k + 1]):
                fitted[k] = replace(words[k], start=fitted[k + 1].start, end=fitted[k + 1].start)
        return fitted

    def unsung_there(self, word: Word, afresh: bool) -> bool:
        """Whether `word` is sung nowhere near where Whisper timed it: far from every stretch, or, where it begins
        `afresh` (its segment's first word, or a run of words Whisper crushed that opens a phrase: `fit_phrase`),
        after the voice of the stretch it lies a lead from stopped. Whisper begins a segment where the one before
        ended: tiny.en's "My" at 33.02 s, 0.06 s after the voice of the line before stopped, then "heart"
        33.02-34.66 s, where the refrain was sung again from 34.0 s (a generated song, seed 53). Inside a segment,
        after a pause, it crushes words it cannot place: "but mounted to" at 22.18 s, 0.55 s after the voice
        stopped, then "it," to 23.86 s, the line sung from 24.0 s (seed 92, a loud band). A line's last word crushed
        there ends its line (`led_in` asks whether it leads into the next)."""
        near = self.stretch_of(word)
        return near is None or (afresh and word.start >= self.stretches[near][1])

    def untimed(self, word: Word) -> bool:
        """Whether Whisper gave `word` no time it could be sung in: crushed (under half a typical word), or longer
        than every stretch of the voice (a held note is voice, and Silero hears it whole): tiny.en's "A" over 9.3 s
        of band between two lines (a generated song, seed 55)."""
        return word.end - word.start < self.word / 2 or word.end - word.start > max(
            (b - a for a, b in self.stretches), default=math.inf
        )

    def led_in(self, word: Word, heard_next: Word, next_sung: Word) -> bool:
        """Whether `word`, not sung where Whisper timed it and `untimed`, is sung with the
        word Whisper timed after it (`heard_next`, fitted to `next_sung`): no pause between them as heard, and the
        next one begins a stretch later. Whisper begins a segment where the one before ended, and crushes its first
        word there: "The" at 17.20-17.22 s, then "ship" 17.22-19.08 s, where the voice sang "The ship" from 18.5 s;
        left there, "The" was a line of its own over the music. It is given no time at the next word's start, as a
        word heard before the voice is (`fit`). A word given its time is sung where Whisper heard it, where Silero
        did not hear the voice (a folk song's "Te amo," 1.1 s before the stretch of "son dos palabras")."""
        sung_in = self.stretch_of(next_sung)
        return (
            self.untimed(word)
            and heard_next.start - word.end < LINE_PAUSE_SECONDS
            and sung_in is not None
            and self.stretches[sung_in][0] > word.end
        )


def shifted(line: Line, seconds: float) -> Line:
    """The line `seconds` later, words and all."""
    words = [replace(w, start=w.start + seconds, end=w.end + seconds) for w in line.words]
    return replace(line, start=line.start + seconds, end=line.end + seconds, words=words)


def closes_clause(word: Word, after: Word) -> bool:
    """Whether Whisper ended a clause with `word` (before `after`): its closing punctuation (CLAUSE_ENDS), but not
    a number's ("1," before "000": Whisper's words part "1,000" there) nor an abbreviation's point ("U.S.",
    "e.g.", and a Latin word with no vowel: "Mr.", "St.")."""
    text = word.text.rstrip()
    if text[-1:] not in CLAUSE_ENDS or (text[-2:-1].isdigit() and after.text.lstrip()[:1].isdigit()):
        return False
    stem = text[:-1]
    abbreviated = "." in stem or (stem.isascii() and stem.isalpha() and not VOWELS & set(stem.lower()))
    return not (text.endswith(".") and abbreviated)


def openings(words: list[Word]) -> list[bool]:
    """Which words open a phrase: the first, one after a pause, or one after a phrase's closing punctuation
    (`closes_clause`: Whisper's own sense of where its sentences end)."""
    return [
        n == 0 or word.start - words[n - 1].end >= LINE_PAUSE_SECONDS or closes_clause(words[n - 1], word)
        for n, word in enumerate(words)
    ]


def typical_word(segments: list[Line]) -> float:
    """How long a word of the song lasts: the median of the words Whisper gave time to (a word it gave
    none is no measure), else TYPICAL_WORD_SECONDS."""
    lengths = [w.end - w.start for s in segments for w in s.words if w.end - w.start > UNTIMED_WORD_SECONDS]
    return float(np.median(lengths)) if lengths else TYPICAL_WORD_SECONDS


def opened(segments: list[Line], word: float) -> list[Line]:
    """The segments, where nothing else says where the voice begins: each word that opens a phrase
    (`openings`) begins no earlier than `word` (a typical word's length) before its end. Whisper gives an
    opening word the pause before it."""
    return [
        replace(
            segment,
            words=[
                replace(w, start=min(max(w.start, w.end - word), w.end)) if opening else w
                for w, opening in zip(segment.words, openings(segment.words))
            ],
        )
        for segment in segments
    ]


def trusted_over_song(kept: list[Line], silero: Voice) -> bool:
    """Whether Silero heard voice under at least half of what Whisper `believed` of what it kept, over the song."""
    agreed = silero.agreement(believed(kept))
    return bool(silero.stretches) and (agreed is None or agreed >= TRUSTED_AGREEMENT)


def trusted_at(kept: list[Line], silero: Voice) -> list[bool]:
    """Whether Silero is trusted around each segment kept: where it heard voice under at least half of what
    Whisper `believed` within AROUND_SECONDS of the segment, with the segment or without it (it may be a line
    whose time slipped: `Voice.slipped`; one silent neighbour must not distrust Silero over a line it hears);
    where Whisper believed nothing there, as over the song. Over a folk guitar Silero hears some passages and
    not others: a passage it misses keeps Whisper's times. What Whisper believed is the time of its words
    (`Voice.words_sung`), not of its segments: a segment and a word may be held over a band that nobody sings in."""
    if not silero.stretches:
        return [False] * len(kept)
    trusting, over_song = believed(kept), trusted_over_song(kept, silero)

    def around(segment: Line) -> bool:
        start, end = segment.start - AROUND_SECONDS, segment.end + AROUND_SECONDS
        others = [s for s in trusting if s.end <= segment.start or s.start >= segment.end]
        agreed = [
            silero.agreement(silero.words_sung(believed_here), start, end) for believed_here in (trusting, others)
        ]
        return any(over_song if a is None else a >= TRUSTED_AGREEMENT for a in agreed)

    return [around(segment) for segment in kept]


def where_sung(kept: list[Line], silero: Voice, duration: float) -> tuple[Voice, list[bool]]:
    """Where the singing is, and around which segments Silero is trusted (`trusted_at`): there its stretches
    are where the singing is; around the others, where Whisper heard their words, each opening word no longer
    than a typical word (`opened`), with Silero's stretches besides."""
    word, trusted = typical_word(kept), trusted_at(kept, silero)
    untrusted = [segment for segment, sure in zip(kept, trusted) if not sure]
    stretches = sorted(Voice.of_words(opened(untrusted, word), duration).stretches + silero.stretches)
    return Voice(stretches, duration, word), trusted
