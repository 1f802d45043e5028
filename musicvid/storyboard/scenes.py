"""Scenes from timed lyric lines: an intro, one scene per line, breaks where nobody sings for long, the outro;
tiling the song. (The format of a scene: musicvid.storyboard.board.)"""

from __future__ import annotations

import math
from dataclasses import replace

from musicvid.core.errors import UserError
from musicvid.lyrics.transcript import TOGETHER, Line
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import TIME_TOLERANCE, Scene

MIN_INTRO_SECONDS = 1.0  # a shorter lead-in belongs to the first line
# Without the audio at hand, longer instrumental stretches are split for variety; a storyboard made of a song
# cuts them with its music instead (musicvid.storyboard.passages).
MAX_INSTRUMENTAL_SECONDS = 20.0


def _instrumental(kind: str, start: float, end: float, max_length: float) -> list[Scene]:
    """One scene of `kind`, or several equal ones where the stretch is long."""
    parts = max(1, math.ceil((end - start) / max_length - 1e-9))
    step = (end - start) / parts
    bounds = [start + i * step for i in range(parts)] + [end]
    return [Scene(-1, kind, bounds[i], bounds[i + 1]) for i in range(parts)]


def scenes_from_lines(
    lines: list[Line],
    duration: float,
    break_seconds: float = SongRequest.break_seconds,
    max_instrumental: float = MAX_INSTRUMENTAL_SECONDS,
) -> list[Scene]:
    """Scenes that tile [0, duration]: intro, one lyric scene per line, breaks, outro.

    A lyric scene lasts until the next line starts; if the gap after the line's end is at least
    `break_seconds`, the gap becomes a break (or the outro, after the last line). Lines that start
    together (a duet's two singers; overlapping or zero-length Whisper segments) share one scene, their texts joined
    with " / " in their order. No lines: an
    instrumental storyboard.
    """
    if duration <= 0:
        raise UserError("the song has no duration")
    # Lines with monotone starts inside the song; lines starting together are merged.
    merged: list[Line] = []
    for line in lines:
        start = min(max(line.start, merged[-1].start if merged else 0.0), duration)
        end = min(max(line.end, start), duration)
        if merged and start - merged[-1].start < TIME_TOLERANCE:
            merged[-1] = Line(
                merged[-1].start,
                max(merged[-1].end, end),
                TOGETHER.join(text for text in (merged[-1].text, line.text) if text.strip()),
                _english(merged[-1], line),
                confidence=_least(merged[-1].confidence, line.confidence),
            )
        elif start < duration:
            merged.append(Line(start, end, line.text, line.text_en, confidence=line.confidence))
    if not merged:
        return numbered(_instrumental("intro", 0.0, duration, max_instrumental))

    scenes: list[Scene] = []
    if merged[0].start >= MIN_INTRO_SECONDS:
        scenes += _instrumental("intro", 0.0, merged[0].start, max_instrumental)
    else:
        merged[0] = replace(merged[0], start=0.0)
    for i, line in enumerate(merged):
        last = i + 1 == len(merged)
        following = duration if last else merged[i + 1].start
        sung_until = min(max(line.end, line.start), following)
        if following - sung_until >= break_seconds and sung_until > line.start:
            scenes.append(
                Scene(-1, "lyric", line.start, sung_until, line.text, text_en=line.text_en, confidence=line.confidence)
            )
            scenes += _instrumental("outro" if last else "break", sung_until, following, max_instrumental)
        else:
            scenes.append(
                Scene(-1, "lyric", line.start, following, line.text, text_en=line.text_en, confidence=line.confidence)
            )
    return numbered(scenes)


def _english(a: Line, b: Line) -> str | None:
    """The English of two lines sung together: each one's own, or its text where it has none."""
    return TOGETHER.join((a.english, b.english)) if a.text_en or b.text_en else None


def _least(a: float | None, b: float | None) -> float | None:
    return min((x for x in (a, b) if x is not None), default=None)


def numbered(scenes: list[Scene]) -> list[Scene]:
    """The scenes numbered in order, their times as a person would write them where they differ from a microsecond
    by a sum's float noise alone (22.502499999999998: 22.5025), as storyboard.json shows them; the last scene's end,
    the song's, as it is."""
    ends = [*(_unnoised(scene.end) for scene in scenes[:-1]), *(scene.end for scene in scenes[-1:])]
    return [
        replace(scene, index=i, start=_unnoised(scene.start), end=end)
        for i, (scene, end) in enumerate(zip(scenes, ends))
    ]


def _unnoised(seconds: float) -> float:
    """`seconds` to the microsecond where it lies within 1e-9 s of one (noise); else as it is (a song's length in
    samples, 41.04489795918367 s, is a time of its own)."""
    return near if abs((near := round(seconds, 6)) - seconds) < 1e-9 else seconds
