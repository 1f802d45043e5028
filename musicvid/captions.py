"""Lyrics as subtitles: an .srt beside the video, and on request the lyrics on screen: an ASS script,
burned in by ffmpeg's libass at the video's size (after upscaling and interpolation, so the letters
are drawn sharp, once per video frame) and kept beside the video for editors. `line` shows the sung
line; `karaoke` lights each word up as it is sung. The font is the bundled DejaVu Sans Bold, so the
lyrics look the same on a machine with no fonts installed."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from musicvid.assets import LYRICS_FONT
from musicvid.storyboard import Storyboard
from musicvid.transcript import Transcript
from vipe_core.files import atomic_path, write_text

SUNG, UNSUNG = "&H0000D7FF", "&H00FFFFFF"  # ASS colours are &HAABBGGRR: gold once sung, white before
FONTS = "fonts"  # the folder beside an ASS script that holds its font (musicvid.mux)
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


def _ass_text(text: str) -> str:
    """Text as ASS shows it literally: braces open override tags and a backslash starts \\N."""
    return " ".join(text.split()).replace("{", "(").replace("}", ")").replace("\\", "/")


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


def ass_script(
    storyboard: Storyboard, width: int, height: int, words: dict[int, list[tuple[float, float, str]]] | None = None
) -> str:
    """An ASS script: each lyric scene's line at the bottom while it lasts; with `words` (karaoke) its
    words turning from white to gold as they are sung (\\kf: a fill that sweeps across the word over
    its duration). Sized in the video's own pixels, with an outline, so it reads at any size."""
    size = max(8, round(height / 14))
    sung = SUNG if words is not None else UNSUNG  # a plain line is white throughout
    header = (
        "[Script Info]\nScriptType: v4.00+\n"
        f"PlayResX: {width}\nPlayResY: {height}\nScaledBorderAndShadow: yes\nWrapStyle: 0\n\n"
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, "
        "Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, "
        "MarginL, MarginR, MarginV, Encoding\n"
        f"Style: Lyrics,DejaVu Sans,{size},{sung},{UNSUNG},&H00000000,&H80000000,1,0,0,0,100,100,0,0,1,"
        f"{max(1.0, size / 12):.1f},0,2,{width // 20},{width // 20},{max(4, height // 20)},1\n\n"
        "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    )
    events = []
    for scene in storyboard.scenes:
        if scene.kind != "lyric" or not scene.text.strip():
            continue
        text = _ass_text(scene.text) if words is None else _karaoke_text(scene.start, words[scene.index])
        events.append(f"Dialogue: 0,{_ass_time(scene.start)},{_ass_time(scene.end)},Lyrics,,0,0,0,,{text}")
    return header + "\n".join(events) + "\n"


def _karaoke_text(at: float, words: list[tuple[float, float, str]]) -> str:
    """A line's words with their \\k (wait) and \\kf (fill) times, from `at`, the line's start."""
    text = []
    for start, end, word in words:
        # in whole centiseconds of the song's clock, so that rounding never drifts along a line
        wait = round(start * 100) - round(at * 100)  # a pause before the word: nothing lights up
        fill = round(end * 100) - round(start * 100)
        text.append((f"{{\\k{wait}}}" if wait > 0 else "") + f"{{\\kf{fill}}}{_ass_text(word)}")
        at = end
    return " ".join(text)


def write_script(path: Path, script: str) -> None:
    """The ASS script at `path`, with its font in FONTS beside it."""
    write_text(path, script)
    font = path.parent / FONTS / LYRICS_FONT.name
    if not font.is_file() or font.stat().st_size != LYRICS_FONT.stat().st_size:
        font.parent.mkdir(exist_ok=True)
        with atomic_path(font) as tmp:
            shutil.copyfile(LYRICS_FONT, tmp)
