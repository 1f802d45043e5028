"""When a lyric caption is on screen: while its line is sung and a moment after, not for its whole scene (which
lasts until the next line starts, through any instrumental stretch between, and from 0 for a first line sung in a
short lead-in). The times are the transcript's line that a scene holds (sung_line); a scene without one (its text
edited, no transcript, a title a person typed) is captioned for the whole scene, as it always was. And those times
as the .srt and the ASS script write them (srt_time, ass_time)."""

from __future__ import annotations

from musicvid.lyrics.transcript import Line
from musicvid.storyboard.board import Scene
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
        if near and ([w.text.strip() for w in line.words] if line.words else line.text.split()) == scene.text.split():
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
