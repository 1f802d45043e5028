"""Lyrics as subtitles: an .srt beside the video, and on request the lyrics on screen: an ASS script,
burned in by ffmpeg's libass at the video's size (after upscaling and interpolation, so the letters
are drawn sharp, once per video frame) and kept beside the video for editors. `line` shows the sung
line; `karaoke` lights each word up as it is sung. The fonts are bundled, so the lyrics look the same
on a machine with no fonts installed: DejaVu Sans Bold, and for the Chinese, Japanese and Korean
characters it lacks, Lyrics CJK (Noto Sans CJK SC Bold cut to everyday characters). A character that
neither has (an emoji, a script of neither) is left out of the burned-in lyrics rather than drawn as a
box, and undrawn_note names it; the .srt keeps every character."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from fontTools.ttLib import TTFont

from musicvid.core.assets import LYRICS_CJK_FONT, LYRICS_FONT
from musicvid.core.workdir import FONTS
from musicvid.lyrics.transcript import Transcript
from musicvid.storyboard.board import Scene, Storyboard
from musicvid.storyboard.table import listed
from vipe_core.atomic import atomic_path, write_text

SUNG, UNSUNG = "&H0000D7FF", "&H00FFFFFF"  # ASS colours are &HAABBGGRR: gold once sung, white before
CAPTION_FONTS = (LYRICS_FONT, LYRICS_CJK_FONT)  # each character is drawn in the first of them that has it
UNDRAWN_SHOWN = 10  # how many of the characters no caption font has undrawn_note names
WORD_TIME_TOLERANCE = 0.5  # a transcript line this close to a scene's start is that scene's line


@dataclass(frozen=True)
class CaptionFont:
    family: str  # the name the ASS script gives libass
    characters: frozenset[int]  # the code points it has glyphs for (its cmap)


@cache
def caption_fonts() -> tuple[CaptionFont, ...]:
    """CAPTION_FONTS' names and character maps, read once."""
    fonts = []
    for path in CAPTION_FONTS:
        with TTFont(path, lazy=True) as font:
            fonts.append(CaptionFont(font["name"].getBestFamilyName(), frozenset(font.getBestCmap())))
    return tuple(fonts)


def _font_of(character: str) -> CaptionFont | None:
    return next((font for font in caption_fonts() if ord(character) in font.characters), None)


def undrawable(text: str) -> str:
    """The characters of `text` that no caption font has, each once, in the order they come."""
    return "".join(dict.fromkeys(c for c in text if not c.isspace() and _font_of(c) is None))


def captioned(storyboard: Storyboard) -> list[Scene]:
    """The scenes with words to show: the lyric scenes, and any other a person typed words into (an intro's title):
    typed there, they were meant to be read."""
    return [scene for scene in storyboard.scenes if scene.text.strip()]


def undrawn_note(storyboard: Storyboard, *, name: str = "scenes", first: int = 0) -> str:
    """One line: which lyric scenes (counted from `first`, called `name`: the page's table has rows
    from 1) have characters that no caption font has, and which characters (the burned-in lyrics leave
    them out); "" if none."""
    lyrics = captioned(storyboard)
    missing = {s.index + first: undrawable(s.text) for s in lyrics}
    scenes = [number for number, characters in missing.items() if characters]
    if not scenes:
        return ""
    characters = [c if c.isprintable() else f"U+{ord(c):04X}" for c in undrawable("".join(missing.values()))]
    shown = ", ".join(characters[:UNDRAWN_SHOWN]) + (", …" if len(characters) > UNDRAWN_SHOWN else "")
    return (
        f"{len(scenes)} of {len(lyrics)} lyric lines have characters the caption fonts cannot draw "
        f"({name} {listed(scenes)}: {shown}): the burned-in lyrics leave them out; the .srt keeps them"
    )


def _clock(seconds: float, per_second: int) -> tuple[int, int, int, int]:
    """(hours, minutes, seconds, fraction) with the fraction in 1/per_second, rounded once."""
    ticks = round(seconds * per_second)
    minutes, ticks = divmod(ticks, 60 * per_second)
    hours, minutes = divmod(minutes, 60)
    return hours, minutes, *divmod(ticks, per_second)


def _srt_time(seconds: float) -> str:
    hours, minutes, secs, millis = _clock(seconds, 1000)
    return f"{hours:02d}:{minutes:02d}:{secs:02d},{millis:03d}"


def _one_line(text: str) -> str:
    """A lyric as captions show it: its words on one line. A line break in it (a transcript's, a storyboard's edited
    text) would be a blank line in an .srt, which ends its cue: what follows would read as cues of its own."""
    return " ".join(text.split())


def srt(storyboard: Storyboard) -> str:
    """One cue per scene with words (captioned), in the song's own language, whatever whitespace its text holds."""
    cues = captioned(storyboard)
    blocks = [
        f"{n}\n{_srt_time(s.start)} --> {_srt_time(s.end)}\n{_one_line(s.text)}\n" for n, s in enumerate(cues, start=1)
    ]
    return "\n".join(blocks)


def _ass_text(text: str) -> str:
    """Text as ASS shows it literally (braces open override tags and a backslash starts \\N), without
    the characters no caption font has, and each character in the first caption font that has it:
    libass looks for a glyph the style's font lacks only among the system's fonts, so a run in another
    font is named (\\fn) and closed (\\fn alone: the style's font again). A space stays in the font
    of the text before it."""
    kept = "".join(c for c in text if c.isspace() or _font_of(c) is not None)
    literal = _one_line(kept).replace("{", "(").replace("}", ")").replace("\\", "/")
    style = current = caption_fonts()[0]
    pieces = []
    for character in literal:
        font = current if character == " " else _font_of(character)
        if font is not current:
            pieces.append("{\\fn}" if font is style else f"{{\\fn{font.family}}}")
            current = font
        pieces.append(character)
    if current is not style:
        pieces.append("{\\fn}")
    return "".join(pieces)


def _ass_time(seconds: float) -> str:
    hours, minutes, secs, centis = _clock(seconds, 100)
    return f"{hours}:{minutes:02d}:{secs:02d}.{centis:02d}"


def word_times(storyboard: Storyboard, transcript: Transcript | None) -> dict[int, list[tuple[float, float, str]]]:
    """(start, end, word) of every captioned scene's words. Whisper's word times where the transcript has
    this scene's line (same words, starting within WORD_TIME_TOLERANCE); otherwise, as for timed lyrics
    or an edited line, the scene's time shared out by the words' lengths in letters."""
    lines = transcript.lines if transcript is not None else []
    words: dict[int, list[tuple[float, float, str]]] = {}
    for scene in captioned(storyboard):
        texts = scene.text.split()
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
    """An ASS script: each captioned scene's line at the bottom while it lasts; with `words` (karaoke) its
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
        f"Style: Lyrics,{caption_fonts()[0].family},{size},{sung},{UNSUNG},&H00000000,&H80000000,1,0,0,0,100,100,0,0,1,"
        f"{max(1.0, size / 12):.1f},0,2,{width // 20},{width // 20},{max(4, height // 20)},1\n\n"
        "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    )
    events = []
    for scene in captioned(storyboard):
        line = _ass_text(scene.text)
        if not line:  # none of it drawable
            continue
        text = line if words is None else _karaoke_text(scene.start, words[scene.index])
        events.append(f"Dialogue: 0,{_ass_time(scene.start)},{_ass_time(scene.end)},Lyrics,,0,0,0,,{text}")
    return header + "\n".join(events) + "\n"


def _karaoke_text(at: float, words: list[tuple[float, float, str]]) -> str:
    """A line's words with their \\k (wait) and \\kf (fill) times, from `at`, the line's start."""
    text = []
    for start, end, word in words:
        drawn = _ass_text(word)
        if not drawn:  # nothing a caption font has: its time is a wait before the next word
            continue
        # in whole centiseconds of the song's clock, so that rounding never drifts along a line
        wait = round(start * 100) - round(at * 100)  # a pause before the word: nothing lights up
        fill = round(end * 100) - round(start * 100)
        text.append((f"{{\\k{wait}}}" if wait > 0 else "") + f"{{\\kf{fill}}}{drawn}")
        at = end
    return " ".join(text)


def write_script(path: Path, script: str) -> None:
    """The ASS script at `path`, with the caption fonts in FONTS beside it."""
    write_text(path, script)
    for source in CAPTION_FONTS:
        font = path.parent / FONTS / source.name
        if not font.is_file() or font.stat().st_size != source.stat().st_size:
            font.parent.mkdir(exist_ok=True)
            with atomic_path(font) as tmp:
                shutil.copyfile(source, tmp)
