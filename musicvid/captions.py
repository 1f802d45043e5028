"""Lyrics as subtitles: an .srt beside the video, and on request the lyrics on screen: the sung line
burned into the frames (`line`), or karaoke (`karaoke`): an ASS file in which each word lights up as
it is sung, burned in by ffmpeg's libass and kept beside the video for editors."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from musicvid.storyboard import Storyboard
from musicvid.transcript import Transcript

SUNG, UNSUNG = "&H0000D7FF", "&H00FFFFFF"  # ASS colours are &HAABBGGRR: gold once sung, white before
WORD_TIME_TOLERANCE = 0.5  # a transcript line this close to a scene's start is that scene's line


def _clock(seconds: float, per_second: int) -> tuple[int, int, int, int]:
    """(hours, minutes, seconds, fraction) with the fraction in 1/per_second, rounded once."""
    ticks = round(seconds * per_second)
    minutes, ticks = divmod(ticks, 60 * per_second)
    hours, minutes = divmod(minutes, 60)
    return hours, minutes, *divmod(ticks, per_second)


def _srt_time(seconds: float) -> str:
    hours, minutes, secs, millis = _clock(seconds, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def srt(storyboard: Storyboard) -> str:
    """One cue per lyric scene, in the song's own language."""
    cues = [s for s in storyboard.scenes if s.kind == "lyric" and s.text.strip()]
    blocks = [
        f"{n}\n{_srt_time(s.start)} --> {_srt_time(s.end)}\n{s.text.strip()}\n" for n, s in enumerate(cues, start=1)
    ]
    return "\n".join(blocks)


@lru_cache(maxsize=8)
def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _wrap(draw: ImageDraw.ImageDraw, text: str, font, width: int) -> list[str]:
    lines, current = [], ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and draw.textlength(candidate, font=font) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    return lines + ([current] if current else [])


def burn(frame: np.ndarray, text: str) -> np.ndarray:
    """The frame with `text` in white, outlined in black, centred near the bottom."""
    if not text.strip():
        return frame
    image = Image.fromarray(frame)
    height, width = frame.shape[:2]
    size = max(8, height // 18)
    font = _font(size)
    draw = ImageDraw.Draw(image)
    rows = _wrap(draw, text, font, int(width * 0.9))
    stroke = max(1, size // 10)
    y = height - int(size * 1.3) * len(rows) - size // 2
    for row in rows:
        x = (width - draw.textlength(row, font=font)) / 2
        draw.text((x, y), row, font=font, fill="white", stroke_width=stroke, stroke_fill="black")
        y += int(size * 1.3)
    return np.asarray(image)


def _ass_time(seconds: float) -> str:
    hours, minutes, secs, centis = _clock(seconds, 100)
    return f"{hours}:{minutes:02d}:{secs:02d}.{centis:02d}"


def word_times(storyboard: Storyboard, transcript: Transcript | None) -> dict[int, list[tuple[float, float, str]]]:
    """(start, end, word) of every lyric scene's words. Whisper's word times where the transcript has
    this scene's line (same words, starting within WORD_TIME_TOLERANCE); otherwise, as for timed lyrics
    or an edited line, the scene's time shared out by the words' lengths in letters."""
    lines = transcript.lines if transcript is not None else []
    words: dict[int, list[tuple[float, float, str]]] = {}
    for scene in storyboard.scenes:
        texts = scene.text.split()
        if scene.kind != "lyric" or not texts:
            continue
        heard = next(
            (
                line.words
                for line in lines
                if abs(line.start - scene.start) <= WORD_TIME_TOLERANCE
                and [w.text.strip() for w in line.words] == texts
            ),
            None,
        )
        if heard:
            words[scene.index] = [
                (min(max(w.start, scene.start), scene.end), min(max(w.end, scene.start), scene.end), text)
                for w, text in zip(heard, texts)
            ]
            continue
        letters = np.cumsum([0] + [len(t) + 1 for t in texts], dtype=float)
        edges = scene.start + (scene.end - scene.start) * letters / letters[-1]
        words[scene.index] = [(float(a), float(b), t) for a, b, t in zip(edges, edges[1:], texts)]
    return words


def karaoke(storyboard: Storyboard, words: dict[int, list[tuple[float, float, str]]], width: int, height: int) -> str:
    """An ASS script: each lyric scene's line at the bottom while it lasts, its words turning from white
    to gold as they are sung (\\kf: a fill that sweeps across the word over its duration). Sized in the
    video's own pixels, with an outline, so it reads at any size."""
    size = max(8, round(height / 14))
    header = (
        "[Script Info]\nScriptType: v4.00+\n"
        f"PlayResX: {width}\nPlayResY: {height}\nScaledBorderAndShadow: yes\nWrapStyle: 0\n\n"
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, "
        "Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, "
        "MarginL, MarginR, MarginV, Encoding\n"
        f"Style: Karaoke,DejaVu Sans,{size},{SUNG},{UNSUNG},&H00000000,&H80000000,1,0,0,0,100,100,0,0,1,"
        f"{max(1.0, size / 12):.1f},0,2,{width // 20},{width // 20},{max(4, height // 20)},1\n\n"
        "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    )
    events = []
    for scene in storyboard.scenes:
        if scene.index not in words:
            continue
        text, at = [], scene.start
        for start, end, word in words[scene.index]:
            # in whole centiseconds of the song's clock, so that rounding never drifts along a line
            if round(start * 100) > round(at * 100):  # a pause before the word: nothing lights up
                text.append(f"{{\\k{round(start * 100) - round(at * 100)}}}")
            fill = round(end * 100) - round(start * 100)
            text.append(f"{{\\kf{fill}}}{word.replace('{', '(').replace('}', ')')} ")
            at = end
        events.append(
            f"Dialogue: 0,{_ass_time(scene.start)},{_ass_time(scene.end)},Karaoke,,0,0,0,,{''.join(text).rstrip()}"
        )
    return header + "\n".join(events) + "\n"
