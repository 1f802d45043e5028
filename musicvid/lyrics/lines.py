"""Where a sung line ends: Whisper's segments cut again into the lines sung, at the singer's pauses, where Whisper
ends a segment, and inside a line that holds two or more at its clauses (or, with none, where it ran on over one of
Whisper's cuts). Pure functions of the words' times (and, where given, of the voice they were fitted to:
musicvid.lyrics.singing)."""

from __future__ import annotations

import dataclasses
import itertools
import statistics

from musicvid.lyrics.inventions import LOOP_WORDS
from musicvid.lyrics.singing import LINE_PAUSE_SECONDS, Voice, closes_clause
from musicvid.lyrics.spacing import joined
from musicvid.lyrics.transcript import Line, Word

# A sung phrase lasts this long at least: a stretch of Silero's voice this long with no word Whisper heard near it
# holds one Whisper missed (Whisper base, after 17 s of band alone, wrote "Art размер" over a generated song's two
# last lines), and a clause Whisper ends inside a line (`closes_clause`) after this long and this many words is a
# sung line (fewer words may be a cry: "Oh,"; Whisper's loops are told from lines of as many, LOOP_WORDS).
PHRASE_SECONDS = 1.0
PHRASE_WORDS = LOOP_WORDS
# A sung line lasts this long at most (a known line sung for longer is a paragraph pasted as one line), so the voice
# pausing for longer parts two lines, however few words either side holds.
LONGEST_LINE_SECONDS = 10.0


def line_of(words: list[Word]) -> Line:
    """The line the words make: their text joined as their script writes it, their mean probability its confidence."""
    probabilities = [w.probability for w in words if w.probability is not None]
    confidence = round(sum(probabilities) / len(probabilities), 3) if probabilities else None
    return Line(words[0].start, words[-1].end, joined([w.text for w in words]), words=words, confidence=confidence)


def phrase(words: list[Word]) -> bool:
    """Whether the words are as many and last as long as a sung phrase at least (PHRASE_WORDS, PHRASE_SECONDS)."""
    return len(words) >= PHRASE_WORDS and words[-1].end - words[0].start >= PHRASE_SECONDS


def at_clauses(words: list[Word]) -> list[list[Word]]:
    """A line's words, cut where Whisper ends a clause between two phrases (`closes_clause`, `phrase`): a legato
    singer leaves no pause between lines, and Whisper marks their ends with commas."""
    parts, first = [], 0
    for k in range(1, len(words)):
        if closes_clause(words[k - 1], words[k]) and phrase(words[first:k]) and phrase(words[k:]):
            parts.append(words[first:k])
            first = k
    return [*parts, words[first:]]


def lines_at_pauses(segments: list[Line], voice: Voice | None = None, paced: list[Line] | None = None) -> list[Line]:
    """Re-cut Whisper's segments into sung lines: a new line wherever the singer pauses (by the word time stamps:
    inside a segment those of `paced` where given, the same segments word for word as the pauses are read from,
    and between two segments the words' own; or, given the `voice` the words were fitted to, where it pauses
    between them, `Voice.paused`, between two phrases: the line so far and what is left of its segment, as a clause
    below; or, however few words, for longer than a line lasts, LONGEST_LINE_SECONDS), and where Whisper ends a
    segment (over a band, Whisper base's segments are the sung lines: a rapped verse's, 2 s each, with no pause
    between them), unless the line began after a pause inside the
    segment ending: Whisper cut that line mid-way, and it runs on into the next segment, but where the voice pauses
    there, however briefly, between two phrases (two signs, as a clause and a pause below); then where Whisper ends a
    clause inside a line over twice as long as the song's median line (`long_line`: it holds two lines or more; a
    comma inside a line of the usual length is the line's). Without any word time stamps, segments stay as they are."""
    words = [(n, w) for n, s in enumerate(segments) for w in s.words if w.text]
    if not words:
        return segments
    timed = [w for s in paced or segments for w in s.words if w.text]
    runs: list[list[Word]] = []
    first = 0  # the current line's first word
    ran_on: dict[int, int] = {}  # a line run on over one of Whisper's cuts (by its first word): its word after the cut
    for k in range(1, len(words)):
        (segment_before, previous), (segment, word) = words[k - 1], words[k]
        before, after = (timed[k - 1], timed[k]) if segment == segment_before else (previous, word)
        pause = after.start - before.end >= LINE_PAUSE_SECONDS
        # faster-whisper decodes a window again from its last whole segment: a segment's last word may be timed past
        # the next segment's words (tiny.en's "a" at 59.98 s, then "The morning sun" from 40.43 s), and a line is
        # sung forwards
        pause = pause or (segment != segment_before and word.end < previous.start)
        # (a pause of the voice shorter than a line's, where Whisper also ends a clause or a segment, ends a line: two
        # signs; a fresh refrain, seed 116, had a line run on over Whisper's cut where the voice paused 0.35 s)
        clause = closes_clause(previous, word)
        shortest = 0.0 if clause or segment != segment_before else LINE_PAUSE_SECONDS
        breath = voice is not None and voice.paused(previous, word, shortest) and phrase([w for _, w in words[first:k]])
        breath = breath and phrase(what_follows(words, k, clause, voice))
        breath = breath or (
            voice is not None and voice.paused(last_voiced(voice, words[first:k]), word, LONGEST_LINE_SECONDS)
        )
        mid_segment = words[first][0] == segment_before and first > 0 and words[first - 1][0] == segment_before
        if pause or breath or (segment != segment_before and not mid_segment):
            runs.append([w for _, w in words[first:k]])
            first = k
        elif segment != segment_before:
            ran_on[first] = k - first
    runs.append([w for _, w in words[first:]])
    fused = 2 * statistics.median(run[-1].end - run[0].start for run in runs)
    starts = itertools.accumulate((len(run) for run in runs), initial=0)
    return [
        line_of(part)
        for run, start in zip(runs, starts)
        for part in (long_line(run, ran_on.get(start), voice) if run[-1].end - run[0].start > fused else [run])
    ]


def last_voiced(voice: Voice, line: list[tuple[int, Word]]) -> Word:
    """The last word of the `line` so far (of (segment, word) pairs) sung in one of the `voice`'s stretches, or its
    last where none is. A word heard far from every stretch says nothing of where the voice paused: Whisper stretched a
    fresh gaps song's (seed 86) "… in the sky, but we're" over 25 s of band, "but" where nobody sings, and the line
    sung after the band ("we're in this" of the segment, a phrase only in Whisper's times) ran on from it, a scene
    begun in the band."""
    return next((w for _, w in reversed(line) if voice.stretch_of(w) is not None), line[-1][1])


def what_follows(words: list[tuple[int, Word]], k: int, runs_on: bool, voice: Voice) -> list[Word]:
    """The words (of (segment, word) pairs) that a line begun at the `k`th would hold: the rest of its segment, and,
    where it `runs_on` (begun after a clause) or Whisper cut it inside one of the `voice`'s stretches, on over that
    cut where no pause parts the segments, to the next segment's first pause. A breath near a line's end leaves too
    few words for a phrase in the segment ("Tenía cargada con / depresión"); a clause and a pause of the voice are two
    signs, and Whisper may cut the next line mid-way (tiny.en's "head, the wind is / burning across the water", sung
    0.6 s apart, a fresh loud song), as a cut inside a stretch shows it did (a fresh intro song, seed 87: "bridge /
    and empty | road is falling across the water", the voice pausing 1.5 s before "and", Whisper's cut after "empty"
    in the stretch sung after it: the line was found at "road", 0.73 s late)."""
    rest = [w for n, w in words[k:] if n == words[k][0]]
    following = [w for n, w in words[k + len(rest) :] if n == words[k][0] + 1]
    if following and (sung_in := voice.stretch_of(rest[-1])) is not None:
        runs_on = runs_on or voice.stretch_of(following[0]) == sung_in  # Whisper cut inside one stretch of voice
    if not runs_on or not following or following[0].start - rest[-1].end >= LINE_PAUSE_SECONDS:
        return rest
    ends = (j for j in range(1, len(following)) if following[j].start - following[j - 1].end >= LINE_PAUSE_SECONDS)
    return rest + following[: next(ends, len(following))]


def long_line(words: list[Word], ran_on: int | None, voice: Voice | None = None) -> list[list[Word]]:
    """A line over twice the song's median (it holds two lines or more) cut where Whisper ends a clause (`at_clauses`);
    with no clause marked, where its first phrase is sung again (`sung_again`), else where it ran on over one of
    Whisper's cuts (`ran_on`: the word after it), else where the `voice` pauses longest (`voice_parted`), between two
    phrases. Whisper's segment end is then the one sign of
    a line's end: tiny.en heard a generated refrain's second and third lines, 8 words each and sung 0.43 s apart, as
    two segments, and the third, which the second (begun after a pause) ran on into, was lost."""
    parts = at_clauses(words)
    if len(parts) > 1:
        return parts
    if (again := sung_again(words)) is not None:
        return [words[:again], *long_line(words[again:], None, voice)]
    if ran_on is not None and phrase(words[:ran_on]) and phrase(words[ran_on:]):
        return [words[:ran_on], words[ran_on:]]
    if voice is not None and (paused := voice_parted(words, voice)) is not None:
        return [words[:paused], words[paused:]]
    return parts


def voice_parted(words: list[Word], voice: Voice) -> int | None:
    """Where the voice pauses longest inside a line (between two of its stretches, however briefly), between two
    phrases (the word after the pause; None: nowhere). A fresh refrain (seed 121) had two lines sung 0.49 s apart,
    Silero's voice parting 0.39 s, with no mark and no cut of Whisper's between them: one 6.2 s line, over twice the
    median."""
    parted = [
        k
        for k in range(1, len(words))
        if voice.paused(words[k - 1], words[k], 0.0) and phrase(words[:k]) and phrase(words[k:])
    ]

    def pause(k: int) -> tuple[float, int]:
        return voice.stretches[voice.stretch_of(words[k])][0] - voice.stretches[voice.stretch_of(words[k - 1])][1], k

    return max(parted, key=pause, default=None)


def sung_again(words: list[Word]) -> int | None:
    """Where a line's first phrase is sung again in it, whole or as far as the line goes, between two phrases (the
    first such word; None: nowhere). A refrain's line sung twice 0.44 s apart, tiny.en heard in one segment with
    no mark between (a fresh generated refrain, seed 66): over twice the median, the line holds both."""
    said = ["".join(c for c in w.text.casefold() if c.isalnum()) for w in words]
    for k in range(PHRASE_WORDS, len(words) - PHRASE_WORDS + 1):
        same = min(k, len(words) - k)
        if said[k : k + same] == said[:same] and phrase(words[:k]) and phrase(words[k:]):
            return k
    return None


def sung_in(segments: list[Line], silero: Voice, stretch: int | None) -> list[Line]:
    """The segments heard of one stretch of voice (`stretch`: its number), each with the words sung in it or near
    no stretch: a word of another stretch, which the clip's lead or tail caught, was heard with that stretch (the
    line before's last word, misheard, would open this one and move it back into the stretch before)."""
    kept = []
    for segment in segments:
        words = [w for w in segment.words if silero.stretch_of(w) in (None, stretch)]
        if len(words) == len(segment.words):
            kept.append(segment)
        elif words:
            text = joined([w.text for w in words])
            kept.append(dataclasses.replace(segment, start=words[0].start, end=words[-1].end, text=text, words=words))
    return kept
