"""When a lyric caption is on screen: while its line is sung and a moment after, not for its whole scene (which
lasts until the next line starts, through any instrumental stretch between, and from 0 for a first line sung in a
short lead-in). The times are the transcript's line that a scene holds (sung_line); a scene without one (its text
edited, no transcript, a title a person typed) is captioned for the whole scene, as it always was. And those times
as the .srt and the ASS script write them (srt_time, ass_time). And karaoke's: when each word of a caption is sung
(word_times), and of each line of a duet's caption (sung_together)."""

from __future__ import annotations

import numpy as np

from musicvid.lyrics.spacing import NO_BREAK, gaps_in, spaced_in, tied, units_of, words_of
from musicvid.lyrics.transcript import TOGETHER, UNSEEN, Line, Transcript
from musicvid.storyboard.board import Scene, Storyboard
from musicvid.storyboard.scenes import MIN_INTRO_SECONDS

WORD_TIME_TOLERANCE = 0.5  # a transcript line this close to a scene's start is that scene's line
HOLD_SECONDS = 0.5  # a caption stays this long after its line's last sung word: a reader's eye trails the voice
# ...and is shown at least as long as its letters take to read: subtitle style guides ask for at most 15-20
# characters a second (the slower here: a lyric is read while the picture is watched), and a second at least
READ_CHARS_PER_SECOND = 15.0
MIN_SHOWN_SECONDS = 1.0


def sung_line(scene: Scene, lines: list[Line]) -> Line | None:
    """The transcript's line of this scene: the same words, starting within WORD_TIME_TOLERANCE of the scene, or, for a
    first line sung before MIN_INTRO_SECONDS (its scene moved to 0: scenes_from_lines), anywhere in that lead-in."""
    for line in lines:
        near = (
            abs(line.start - scene.start) <= WORD_TIME_TOLERANCE or scene.start == 0 <= line.start < MIN_INTRO_SECONDS
        )
        words = [w.text.strip() for w in line.words] if line.words else line.text.split()
        if near and spaced_in(scene.text, words) is not None:  # (its words as written: "君の名前" of 君, の, 名前)
            return line
    return None


def cue_span(scene: Scene, line: Line | None) -> tuple[float, float]:
    """(start, end) of the caption of `scene`, whose line of the transcript is `line` (sung_line; None: none is).
    The contract, never outside the scene (scenes tile the song, so captions never overlap):

    - it starts where the line's singing does (its start or its first word's, the earlier; the scene's start where
      that is a moment before it);
    - it ends where the singing ends: HOLD_SECONDS after the last word where the words are timed (Whisper's,
      enhanced LRC's, a transcript's), else at the line's own end (an SRT cue's, as written; an LRC line's);
    - or later where its text needs more time to read (READ_CHARS_PER_SECOND, MIN_SHOWN_SECONDS at least); a line
      sung to its scene's end keeps the scene's end;
    - without a line, or with one that starts at the scene's end or after, it is the scene's own span.
    """
    if line is None:
        return scene.start, scene.end
    start = max(min(line.start, line.words[0].start) if line.words else line.start, scene.start)
    if start >= scene.end:
        return scene.start, scene.end
    sung_until = line.words[-1].end + HOLD_SECONDS if line.words else line.end
    read = max(MIN_SHOWN_SECONDS, len(" ".join(scene.text.split())) / READ_CHARS_PER_SECOND)
    return start, min(scene.end, max(sung_until, start + read))


def captioned(storyboard: Storyboard) -> list[Scene]:
    """The scenes with words to show: the lyric scenes, and any other a person typed words into (an intro's title):
    typed there, they were meant to be read; not one of nothing a caption shows (UNSEEN characters alone)."""
    return [scene for scene in storyboard.scenes if UNSEEN.sub("", scene.text).strip()]


def cues(storyboard: Storyboard, heard: Transcript | None) -> list[tuple[Scene, Line | None, tuple[float, float]]]:
    """Each captioned scene, the line of `heard` that is its (sung_line; None: none is) and when its caption is shown:
    while that line is sung and a moment after, else for the whole scene (cue_span)."""
    lines = heard.lines if heard is not None else []
    return [
        (scene, line, cue_span(scene, line)) for scene in captioned(storyboard) for line in [sung_line(scene, lines)]
    ]


# A word's time in a caption, and whether a space goes before it ("名前" after "の" has none: musicvid.lyrics.spacing).
WordTime = tuple[float, float, str, bool]


def word_times(storyboard: Storyboard, transcript: Transcript | None) -> dict[int, list[WordTime]]:
    """(start, end, word, spaced) of every captioned scene's words, within its caption's time (cues): the transcript's
    word times where it has the scene's line (Whisper's, enhanced LRC's; the words as heard, as the scene's text writes
    them: gaps_in); else the time the line is sung (from its start to its own end: an SRT cue's, an LRC line's), or
    without a line the scene's, shared out by the words' lengths in letters, a Chinese or Japanese word a character
    at a time (units_of: an LRC line without word times is sung over its time, not lit at once). Words a no-break space joins, as the
    text writes them or as tied joins a mark written apart, are one (_bound)."""
    words: dict[int, list[WordTime]] = {}
    for scene, line, (start, end) in cues(storyboard, transcript):
        texts = [w.text.strip() for w in line.words] if line is not None and line.words else []
        if (gaps := gaps_in(tied(scene.text), texts) if texts else None) is not None:
            words[scene.index] = _bound(
                [
                    (min(max(w.start, start), end), min(max(w.end, start), end), text, bool(gap))
                    for w, text, gap in zip(line.words, texts, gaps)
                ],
                gaps,
            )
            continue
        units = [(unit, not n) for word in words_of(tied(scene.text)) for n, unit in enumerate(units_of(word))]
        sung_end = min(line.end, end) if line is not None and line.end > start else end
        letters = np.cumsum([0] + [len(t) + 1 for t, _ in units], dtype=float)
        edges = start + (sung_end - start) * letters / letters[-1]
        words[scene.index] = [(float(a), float(b), t, space) for a, b, (t, space) in zip(edges, edges[1:], units)]
    return words


def sung_together(words: list[WordTime]) -> list[list[WordTime]]:
    """A caption's words parted into the lines sung at once in it (a duet's, joined with TOGETHER), each line's
    words stretched over the caption's whole sung time: a word of a line sung over [p0, p1] of [s0, s1] (the first
    word's start, the last's end) moves from t to s0 + (t - p0)(s1 - s0)/(p1 - p0). One line where there is none."""
    parts: list[list[WordTime]] = [[]]
    for word in words:
        if word[2] == TOGETHER.strip() and word[3]:
            parts.append([])
        else:
            parts[-1].append(word)
    parts = [part for part in parts if part]
    if len(parts) < 2:
        return [words]
    s0, s1 = words[0][0], words[-1][1]

    def moved(t: float, p0: float, p1: float) -> float:
        return s0 + (t - p0) * (s1 - s0) / (p1 - p0) if p1 > p0 else s0

    return [
        [
            (moved(a, part[0][0], part[-1][1]), moved(b, part[0][0], part[-1][1]), text, spaced)
            for a, b, text, spaced in part
        ]
        for part in parts
    ]


def _bound(words: list[WordTime], gaps: list[str]) -> list[WordTime]:
    """`words`, each after a gap of no-break spaces (`gaps`: before each word, as its line writes it) one with the word
    before, lit from that one's start to its own end."""
    bound: list[WordTime] = []
    for (start, end, text, space), gap in zip(words, gaps):
        if bound and gap and not gap.strip(NO_BREAK):
            first, _, before, spaced = bound.pop()
            start, text, space = first, before + gap + text, spaced
        bound.append((start, end, text, space))
    return bound


def _clock(seconds: float, per_second: int) -> tuple[int, int, int, int]:
    """(hours, minutes, seconds, fraction) with the fraction in 1/per_second, rounded once."""
    ticks = round(seconds * per_second)
    minutes, ticks = divmod(ticks, 60 * per_second)
    hours, minutes = divmod(minutes, 60)
    return hours, minutes, *divmod(ticks, per_second)


def srt_time(seconds: float) -> str:
    hours, minutes, secs, millis = _clock(seconds, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def ass_time(seconds: float) -> str:
    hours, minutes, secs, centis = _clock(seconds, 100)
    return f"{hours}:{minutes:02d}:{secs:02d}.{centis:02d}"
