"""Align: lyrics a person already knows (plain text, no times), placed in the song by forced alignment alone.

The words are known, so nothing Whisper recognizes decides where they go: a window of the song and the next
lines are aligned together (musicvid.lyrics.windows), and the lines the window's audio gives evidence for are
placed where the warping path put them. A walk through the song, one window after another:

1. The window starts LEAD before the line placed last, whose words lead its text (the line may be sung on past
   where it was placed: its tail is heard as itself, not as the next line's opening; it is not placed again).
   The next lines follow with PAUSE between them and after the last: Whisper's own marks for a pause and for
   music, which the path gives the frames nobody sings in, so that a line starts at its first sung word.
2. As much text as the window may hold: FILL times what the song's singing rate (tokens a second, measured on
   the lines placed so far) puts in it, at least LEAST_TOKENS. Too little text and the path spreads it over the
   window; too much and it may skip a line for a later one that repeats it.
3. A line is heard where its evidence is at least HEARD nats a word and the path gave its words time. The lines
   heard are placed, with the lines between them (sung, but not made out: a shout, an "ooh"), up to the last
   heard line that ends MARGIN before the window does (words at a window's end are cut off) and has no word
   stretched over a gap (longer than the window's typical word allows).
4. The line placed last, heard again at the head of the next window (which holds it whole), with more evidence
   and MOVED_SECONDS later than where it was placed, was placed in the band before it (a window that ends in a
   line's first words has evidence for the line, and its path may put it early): it moves there, once.
5. Nothing heard: the window is music; the next starts half a window later. A line before the first heard one
   that repeats its text, or that was heard yet given no time, means the path skipped it for a later one: the
   window is aligned again with the text cut before that later line. A first word stretched back over a long
   gap: the window starts again nearer to it.

A line the window placing it did not hear, but an earlier window (one a retry threw away) heard whole, is placed
where that window heard it, if that lies between its neighbours. A line never heard is still placed (between its
neighbours, or spread over the rest of the song) and flagged: every word gets a time, and no line is dropped. No
step samples: the same song and lyrics give the same times.
A line longer than a sung line (lyrics pasted as one paragraph) is aligned in pieces and becomes the phrases
the singer sang, cut at the pauses between its words; a "word" longer than a piece (Chinese or Japanese, written
without spaces; a URL) is aligned as runs of its characters, and stays one word in the line's text.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from dataclasses import dataclass, field, replace

import numpy as np

from musicvid.core.audio import SAMPLE_RATE
from musicvid.core.errors import RenderError
from musicvid.core.progress import Progress
from musicvid.lyrics.lines import LONGEST_LINE_SECONDS, lines_at_pauses
from musicvid.lyrics.openings import CRUSHED_SECONDS, Openings
from musicvid.lyrics.placed import HEARD, crowded_tail, known_lines
from musicvid.lyrics.singing import Voice
from musicvid.lyrics.spacing import gaps_in, sung_words
from musicvid.lyrics.transcribe import detect_language, singing_to_detect, torch_threads_kept
from musicvid.lyrics.transcript import Line, Transcript
from musicvid.lyrics.windows import GRID_SECONDS, WINDOW_SECONDS, TimedWord, Windows
from musicvid.lyrics.written import written_language
from musicvid.models.loading import ASRModel

LEAD = 1.0  # s before the last line's end where the next window starts
MARGIN = 1.5  # s before a window's end that a placed line ends by
PAUSE = " ... ♪ ..."
FILL = 1.5
LEAST_TOKENS = 100
# A word longer than this, and than LONG_WORD times the window's median word, was stretched over a gap.
LONGEST_WORD_SECONDS = 3.0
LONG_WORD = 4.0
MOVED_SECONDS = 2.0  # the line before heard this much later than where it was placed was placed wrong
BEFORE = -1  # the owner of the words of the line before, in a window's text
# A known line longer than a sung line is (SUNG_LINE_WORDS) is aligned in pieces of about as many words as each,
# at most WORDS_PER_PIECE (then joined again): a line as long as sung lines are is aligned whole.
SUNG_LINE_WORDS = 16
WORDS_PER_PIECE = 8
# A word too long for a piece is cut into runs of about a sung word's tokens (2 to 4 Chinese characters): the phrases
# it becomes are cut at the singer's pauses as a spaced line's are. A run's longest: RUN_CHARS (bounds the encoding).
RUN_TOKENS = 6
RUN_CHARS = 16 * RUN_TOKENS

log = logging.getLogger("musicvid")


@dataclass(frozen=True)
class Attempt:
    """The next lines aligned in one window: each line's words (by the line's index), and what of them counts."""

    start: float
    end: float
    at_song_end: bool
    lines: dict[int, list[TimedWord]]
    before: list[TimedWord] | None = None  # the line placed last, leading this window's text, as it heard it

    def evidence(self, n: int) -> float:
        return _evidence(self.lines[n])

    def crushed(self, n: int) -> bool:
        return _crushed(self.lines[n])

    def heard(self, n: int) -> bool:
        return self.evidence(n) >= HEARD and not self.crushed(n)

    def typical_word(self) -> float:
        return float(np.median([w.end - w.start for words in self.lines.values() for w in words]))

    def long_word(self) -> float:
        return max(LONGEST_WORD_SECONDS, LONG_WORD * self.typical_word())

    def inside(self, n: int) -> bool:
        return self.ends_inside(self.lines[n])

    def ends_inside(self, words: list[TimedWord]) -> bool:
        return self.at_song_end or words[-1].end <= self.end - MARGIN


def _evidence(words: list[TimedWord]) -> float:
    return float(np.mean([w.evidence for w in words]))


def _crushed(words: list[TimedWord]) -> bool:
    """Whether the path gave a line's words no time: under CRUSHED_SECONDS a word on average, or more than half of
    them each under it (a refrain's third time squeezed into the end of its second's sung time, the third sung 3 s
    after the window ended: seed 91)."""
    none = sum(w.end - w.start < CRUSHED_SECONDS for w in words)
    return words[-1].end - words[0].start < CRUSHED_SECONDS * len(words) or none > len(words) / 2


@dataclass(frozen=True)
class Walk:
    """Where the walk is: the next line to place, where the song is placed up to, the singing rate (tokens a
    second), the line before which the next window's text is cut, the retries made (each once), the line
    placed just before the next one (its words lead the next window's text), and the lines heard whole so far."""

    line: int = 0
    cursor: float = 0.0
    rate: float = 0.0
    cut: int | None = None
    tried: frozenset = frozenset()
    before: tuple[int, float] | None = None  # the line placed last, just before the next, and where it starts
    heard_whole: dict[int, list[TimedWord]] = field(default_factory=dict)  # see `heard_whole`


def pieces(text: str, windows: Windows) -> list[str]:
    """`text` as it is, or, if it is longer than a sung line or its tokens overflow a window's share of the text,
    cut at word boundaries into pieces of as even a length as WORDS_PER_PIECE allows, each fitting (a word that
    alone overflows it: as its `runs`, each a word of the pieces)."""
    most = windows.most_tokens // 2
    words = [run for word in sung_words(text) for run in runs(word, windows, most)]
    sizes = [len(windows.tokens(word)) for word in words]  # (as `place` counts them: word by word)
    if len(words) <= SUNG_LINE_WORDS and sum(sizes) <= most and len(words) == len(sung_words(text)):
        return [text]
    size = math.ceil(len(words) / math.ceil(len(words) / WORDS_PER_PIECE))
    cut, piece, tokens = [], [], 0
    for word, count in zip(words, sizes):
        if piece and (len(piece) >= size or tokens + count > most):
            cut.append(" ".join(piece))
            piece, tokens = [], 0
        piece.append(word)
        tokens += count
    return [*cut, " ".join(piece)]


def runs(word: str, windows: Windows, most: int) -> list[str]:
    """`word`, or where its tokens overflow `most` (Thai or Khmer written without spaces; as the last resort,
    anything else: a URL), its characters cut into runs of at most RUN_TOKENS tokens (a character taking more: on
    its own), never before a combining mark."""
    if len(windows.tokens(word)) <= most:
        return [word]
    cut, at = [], 0
    while at < len(word):
        fits, over = at + 1, min(len(word), at + RUN_CHARS) + 1  # word[at:fits] fits; word[at:over] does not
        while over - fits > 1:
            middle = (fits + over) // 2
            fits, over = (middle, over) if len(windows.tokens(word[at:middle])) <= RUN_TOKENS else (fits, middle)
        while fits - 1 > at and fits < len(word) and unicodedata.category(word[fits]).startswith("M"):
            fits -= 1
        cut.append(word[at:fits])
        at = fits
    return cut


def attempt(windows: Windows, walk: Walk, words: list[list[list[int]]], pause: list[int]) -> Attempt:
    """The next lines, as many as the window may hold (FILL), aligned in the window LEAD before the cursor."""
    budget = min(windows.most_tokens - len(pause), max(LEAST_TOKENS, FILL * walk.rate * WINDOW_SECONDS))
    chunk, owners, total, at = [], [], 0, walk.cursor
    first = sum(map(len, words[walk.line])) + len(pause)  # (always in the window: the line before only beside it)
    if walk.before is not None and len(pause) + sum(map(len, words[walk.before[0]])) + first <= budget:
        n, at = walk.before  # the line before, sung on past where it was placed, is heard as itself
        chunk, owners = [pause, *words[n]], [None, *[BEFORE] * len(words[n])]
        total = len(pause) + sum(map(len, words[n]))
    for n in range(walk.line, len(words) if walk.cut is None else walk.cut):
        size = sum(map(len, words[n])) + len(pause)
        if n > walk.line and total + size > budget:
            break
        chunk += [pause, *words[n]]
        owners += [None, *[n] * len(words[n])]
        total += size
    if total + len(pause) > windows.most_tokens:  # (pieces cut every line to fit: a bug, not the person's lyrics)
        raise RenderError(f"aligning lyrics: {total + len(pause)} tokens for a window of {windows.most_tokens}")
    start, timed = windows.timed(at - LEAD, [*chunk, pause])
    lines: dict[int, list[TimedWord]] = {}
    for owner, word in zip(owners, timed):
        if owner is not None:
            lines.setdefault(owner, []).append(word)
    end = min(windows.duration, start + WINDOW_SECONDS)
    return Attempt(start, end, end >= windows.duration - 1 / SAMPLE_RATE, lines, lines.pop(BEFORE, None))


def placed_lines(tried: Attempt, first: int) -> list[int]:
    """The lines a window places: from the first to the last heard one that ends inside the window, stopping at
    a line (after the first) with a word stretched over a gap."""
    long, upto, last_heard = tried.long_word(), [], None
    for n in sorted(tried.lines):
        stretched = n != first and any(w.end - w.start > long for w in tried.lines[n])
        if not tried.inside(n) or stretched:
            break
        upto.append(n)
        last_heard = n if tried.heard(n) else last_heard
    if last_heard is None:
        return upto if tried.at_song_end else []
    return [n for n in upto if n <= last_heard]


def step(tried: Attempt, walk: Walk, texts: list[str], sizes: list[int], placed: list) -> Walk:
    """The walk after one window: it places lines, or tries again (later, cut, nearer)."""
    first, heard = walk.line, [n for n in sorted(tried.lines) if tried.heard(n)]
    walk = replace(walk, heard_whole=heard_whole(tried, walk.heard_whole))
    if (moved := heard_later(tried, walk, placed)) is not None:  # placed where nobody sang it: it moves
        n = walk.before[0]
        placed[n] = moved
        return replace(
            walk, cursor=moved[-1].end, cut=None, before=(n, moved[0].start), tried=walk.tried | {("moved", n)}
        )
    if not heard and walk.cut is not None:  # the text cut short heard nothing: the whole text stands
        return replace(walk, cut=None)
    if not heard and not tried.at_song_end:  # music: the next window starts half a window later
        return replace(walk, cursor=tried.start + LEAD + WINDOW_SECONDS / 2, before=None)
    if heard and heard[0] > first and ("cut", first, heard[0]) not in walk.tried:
        before = range(first, heard[0])
        repeated = texts[heard[0]].lower().split() in [texts[n].lower().split() for n in before]
        if repeated or any(tried.crushed(n) and tried.evidence(n) >= HEARD for n in before):
            return replace(walk, cut=heard[0], tried=walk.tried | {("cut", first, heard[0])})
    if (nearer := nearer_start(tried, walk, heard)) is not None:
        return replace(walk, cursor=nearer, cut=None, tried=walk.tried | {("near", first)}, before=None)
    kept = placed_lines(tried, first)
    if not kept:
        cursor = max(tried.lines[first][0].start, tried.start + LEAD + 5.0)
        return replace(walk, cursor=cursor, cut=None, before=None)
    for n in kept:
        placed[n] = tried.lines[n]
    for n in kept:
        placed[n] = as_heard(n, tried, walk, placed)
    rate = measured_rate(tried, [n for n in kept if tried.heard(n)], sizes, walk.rate)
    last = placed[kept[-1]]
    return replace(walk, line=kept[-1] + 1, cursor=last[-1].end, rate=rate, cut=None, before=(kept[-1], last[0].start))


def heard_whole(tried: Attempt, before: dict[int, list[TimedWord]]) -> dict[int, list[TimedWord]]:
    """Each line a window heard whole (ending inside it, no word after the first stretched over a gap), as the
    window that heard it with the most evidence has it: a window the walk throws away (it starts again nearer, or
    stops at a later line's stretched word) may be the only one that heard a line (generated long song, seed 104)."""
    now, long = dict(before), tried.long_word()
    for n, words in tried.lines.items():
        whole = tried.heard(n) and tried.inside(n) and all(w.end - w.start <= long for w in words[1:])
        if whole and (n not in now or _evidence(words) > _evidence(now[n])):
            now[n] = words
    return now


def as_heard(n: int, tried: Attempt, walk: Walk, placed: list) -> list[TimedWord]:
    """Line n as the window placing it has it, or, where that window did not hear it, as an earlier window heard
    it whole, if that lies between the lines placed around it (the window placing it put it where its path ran)."""
    was = walk.heard_whole.get(n)
    if tried.heard(n) or was is None:
        return tried.lines[n]
    after = placed[n - 1][-1].end if n and placed[n - 1] is not None else 0.0
    upto = placed[n + 1][0].start if n + 1 < len(placed) and placed[n + 1] is not None else math.inf
    return was if after <= was[0].start and was[-1].end <= upto else tried.lines[n]


def heard_later(tried: Attempt, walk: Walk, placed: list) -> list[TimedWord] | None:
    """The line before as this window heard it, where that is later than where it was placed (its words after
    the first, which may be stretched back over a gap, start MOVED_SECONDS later at the median) and with more
    evidence: a window that ends in a line's first words has evidence for the line, and its path may put the
    line in the band before them. The next window, which holds the line whole, hears it where it is sung. Once a
    line; None: it stays (a short line heard again, later, in a refrain gives less evidence than where it was)."""
    if tried.before is None or ("moved", walk.before[0]) in walk.tried or len(tried.before) < 2:
        return None
    now, was = tried.before, placed[walk.before[0]]
    if _evidence(now) < max(HEARD, _evidence(was)) or _crushed(now) or not tried.ends_inside(now):
        return None
    later = np.median([w.start for w in now[1:]]) - np.median([w.start for w in was[1:]])
    return now if later > MOVED_SECONDS else None


def nearer_start(tried: Attempt, walk: Walk, heard: list[int]) -> float | None:
    """Where the window starts again, once a line, if it starts far from where the window does: the first line's
    opening word stretched back over a gap (the pause before it not given to PAUSE), or the first line heard
    found more than a third of a window after the cursor (past music: the window's end may have heard only its
    beginning). None: the window stands."""
    if ("near", walk.line) in walk.tried:
        return None
    opening, long = tried.lines[walk.line][0], tried.long_word()
    if opening.end - opening.start > long:
        at = opening.end - long / 2
    elif heard and heard[0] == walk.line and tried.lines[heard[0]][0].start > walk.cursor + WINDOW_SECONDS / 3:
        at = tried.lines[heard[0]][0].start
    else:
        return None
    return at if at - LEAD > tried.start + GRID_SECONDS else None


def measured_rate(tried: Attempt, heard: list[int], sizes: list[int], rate: float) -> float:
    """The singing rate (tokens a second) over the heard lines a window placed, where they are at least three
    and span a few seconds; else the rate so far."""
    if len(heard) < 3:
        return rate
    span = tried.lines[heard[-1]][-1].end - tried.lines[heard[0]][0].start
    return sum(sizes[heard[0] : heard[-1] + 1]) / span if span > 5.0 else rate


def place(windows: Windows, texts: list[str], quiet: bool) -> list[list[TimedWord] | None]:
    """Each of `texts` (each fits a window's share of the text) placed in the song, as its words timed; None
    where the walk found no place for it."""
    pause = windows.tokens(PAUSE)
    words = [[windows.tokens(word) for word in sung_words(text)] for text in texts]
    sizes = [sum(map(len, w)) + len(pause) for w in words]
    walk = Walk(rate=2 * sum(sizes) / max(windows.duration, 1.0))  # as if the lines were sung in half the song
    placed: list[list[TimedWord] | None] = [None] * len(texts)
    with Progress("align", total=len(texts), unit="line", quiet=quiet) as progress:
        while walk.line < len(texts) and walk.cursor < windows.duration:
            walk = step(attempt(windows, walk, words, pause), walk, texts, sizes, placed)
            progress.set_to(walk.line)
    return placed


def align_lyrics(
    asr: ASRModel,
    samples: np.ndarray,
    texts: list[str],
    audio_sha256: str,
    *,
    quiet: bool = False,
    language: str | None = None,
) -> Transcript:
    """Time each of `texts` (lyric lines, in the order they are sung) against the song, in `language` where given."""
    voice = Voice.detect(samples)
    written = None if language else written_language(texts)  # (the lyrics say it better than 30 s of a band)
    windows = Windows(
        asr, samples, language := detect_language(asr, singing_to_detect(samples, voice), language, written)
    )
    split = [pieces(text, windows) for text in texts]
    every = [part for parts in split for part in parts]
    with torch_threads_kept():  # (openai-whisper's word timing starts numba's threads)
        placed = place(windows, every, quiet)
    openings = Openings.of(every, placed)
    parts = known_lines(every, placed, voice, openings)
    lines, position = [], 0
    for text, cut in zip(texts, split):
        mine, position = parts[position : position + len(cut)], position + len(cut)
        lines += sung_phrases(mine, text, voice, openings)
    if said := crowded_tail(lines, openings.longest / 2):
        log.warning(said)
    return Transcript(lines, language, f"{asr.backend}:{asr.name}", audio_sha256)


def sung_phrases(parts: list[Line], text: str, voice: Voice, openings: Openings) -> list[Line]:
    """A known line from its aligned pieces: as the person wrote it, or, where it was long enough to be aligned
    in pieces and is sung for longer than a line lasts (lyrics pasted without line breaks), the phrases the
    singer sang, cut at the pauses between its words and between the stretches of voice, each `opened`."""
    words = [w for part in parts for w in part.words]
    shares = [part.confidence for part in parts if part.confidence is not None]
    line = Line(words[0].start, words[-1].end, text, words=words, confidence=min(shares) if shares else None)
    if len(parts) == 1 or line.end - line.start <= LONGEST_LINE_SECONDS or not all(p.confidence for p in parts):
        return [line]
    phrases = as_written(lines_at_pauses([line], voice), text)
    for k in range(1, len(phrases)):
        words = openings.opened(phrases[k].words, phrases[k].words[0].text, phrases[k - 1].end, voice)
        phrases[k] = replace(phrases[k], start=words[0].start, words=words)
    return phrases


def as_written(phrases: list[Line], text: str) -> list[Line]:
    """The phrases of `text`, each one's text as `text` writes it: the runs of one word (pieces) joined again
    without the space put between every two words, with the spaces `text` writes between the others."""
    gaps = iter(gaps_in(text, [w.text for phrase in phrases for w in phrase.words]))  # (the line's own words)
    return [
        replace(p, text="".join((gap if k else "") + w.text for k, w in enumerate(p.words) for gap in [next(gaps)]))
        for p in phrases
    ]
