"""Lyrics as subtitles: an .srt beside the video, and captions burned into the frames on request."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from musicvid.storyboard import Storyboard


def _srt_time(seconds: float) -> str:
    millis = round(seconds * 1000)
    hours, millis = divmod(millis, 3_600_000)
    minutes, millis = divmod(millis, 60_000)
    secs, millis = divmod(millis, 1000)
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
