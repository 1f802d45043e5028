"""The lyrics on screen, on request (the .srt beside the video: musicvid.delivery.subtitles): an ASS script, burned
in by ffmpeg's libass at the video's size (after upscaling and interpolation, so the letters are drawn sharp, once per
video frame) and kept beside the video for editors. `line` shows the sung line; `karaoke` lights each word up as it
is sung (a duet's lines sung at once each in its own row; a line written right to left whole, as shown_whole_note
says). The fonts are bundled, so the lyrics look the same on a machine with no fonts installed: DejaVu Sans Bold,
and for what it lacks, Lyrics CJK (Noto Sans CJK SC Bold cut to everyday characters) and Noto fonts cut to the
Indic, Southeast Asian, Ethiopic, Tibetan and Cherokee scripts and to Urdu's letters, a word in the first that has
all of it (font_runs). A character that none has (an emoji, a script of none) is left out of the burned-in lyrics
rather than drawn as a box (a line with a word it would misspell, whole), and undrawn_note names it; the .srt keeps
every character. A line wider than the picture wraps at its spaces (libass); one with a word wider than a row alone
(Chinese or Japanese without spaces, a URL) is broken into rows here, measured with the fonts' advances, since
libass breaks only at spaces."""

from __future__ import annotations

import re
import shutil
import unicodedata
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Mapping

from fontTools.ttLib import TTFont

from musicvid.core.assets import LYRICS_FONTS, font_runs, lyrics_font
from musicvid.core.workdir import FONTS
from musicvid.delivery.cue_times import WordTime, ass_time, captioned, cues, sung_together
from musicvid.delivery.subtitles import WORD_JOINER
from musicvid.lyrics.spacing import one_line, tied
from musicvid.lyrics.transcript import Transcript, code_point
from musicvid.storyboard.board import Storyboard
from musicvid.storyboard.table import listed
from vipe_core.atomic import atomic_path, write_text

SUNG, UNSUNG = "&H0000D7FF", "&H00FFFFFF"  # ASS colours are &HAABBGGRR: gold once sung, white before
# karaoke shows a right-to-left line plainly: libass lays the runs \\k tags cut it into left to right (words reversed)
LINE_COLOUR = "{\\1c&HFFFFFF&}"
UNDRAWN_SHOWN = 10  # how many of the characters no caption font has undrawn_note names
CAPTION_SHARE = 0.5  # a caption's rows take at most the lower half of the picture: the rest is the picture's
ELLIPSIS = " …"  # ends the last row of a caption whose line goes on past its rows (the .srt keeps it whole)
NO_WRAP = "{\\q2}"  # on a line broken here: libass, measuring a pixel apart, must not break its rows again
# Kinsoku: what never begins a row (closing punctuation, the long-vowel and iteration marks, small kana)
_NO_ROW_START = frozenset("、。，．！？：；,.!?:;…‥・ー々ゝゞヽヾぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶ")


@dataclass(frozen=True, eq=False)
class CaptionFont:
    family: str  # the name the ASS script gives libass
    advances: Mapping[int, float]  # each code point it has a glyph for (its cmap): the glyph's width per unit of size


@cache
def caption_fonts() -> tuple[CaptionFont, ...]:
    """LYRICS_FONTS' names, character maps and advances, read once."""
    fonts = []
    for path in LYRICS_FONTS:
        with TTFont(path, lazy=True) as font:
            # libass draws a font so that its Windows ascent + descent are the style's size (VSFilter's rule)
            height = font["OS/2"].usWinAscent + font["OS/2"].usWinDescent
            metrics = font["hmtx"].metrics
            advances = {code: metrics[glyph][0] / height for code, glyph in font.getBestCmap().items()}
            fonts.append(CaptionFont(font["name"].getBestFamilyName(), advances))
    return tuple(fonts)


def _caption_font(path: Path) -> CaptionFont:
    return caption_fonts()[LYRICS_FONTS.index(path)]


def _font_of(character: str) -> CaptionFont | None:
    return None if (path := lyrics_font(character)) is None else _caption_font(path)


def undrawable(text: str) -> str:
    """The characters of `text` that no caption font has, each once, in the order they come; composed first (NFC:
    Korean copied from macOS comes as its letters' pieces, which the fonts draw composed)."""
    composed = unicodedata.normalize("NFC", text)
    return "".join(dict.fromkeys(c for c in composed if not c.isspace() and _font_of(c) is None))


def undrawn_note(storyboard: Storyboard, *, name: str = "scenes", first: int = 0) -> str:
    """One line: which lyric scenes (counted from `first`, called `name`: the page's table has rows
    from 1) have characters that no caption font has, and which characters (the burned-in lyrics leave
    them out); "" if none."""
    lyrics = captioned(storyboard)
    missing = {s.index + first: undrawable(s.text) for s in lyrics}
    scenes = [number for number, characters in missing.items() if characters]
    if not scenes:
        return ""
    characters = [c if c.isprintable() else code_point(c) for c in undrawable("".join(missing.values()))]
    shown = ", ".join(characters[:UNDRAWN_SHOWN]) + (", …" if len(characters) > UNDRAWN_SHOWN else "")
    return (
        f"{len(scenes)} of {len(lyrics)} lyric lines have characters the caption fonts cannot draw "
        f"({name} {listed(scenes)}: {shown}): the burned-in lyrics leave them out, and a line of a word they would "
        "misspell; the .srt keeps them"
    )


def shown_whole_note(storyboard: Storyboard, *, name: str = "scenes", first: int = 0) -> str:
    """One line for karaoke: which lyric scenes (named and counted as undrawn_note's) are shown whole in LINE_COLOUR
    rather than lit word by word (_right_to_left); "" if none."""
    lyrics = captioned(storyboard)
    scenes = [
        s.index + first for s in lyrics if _literal(s.text) and _right_to_left(s.text)
    ]  # (one not drawn: not shown)
    if not scenes:
        return ""
    return (
        f"{len(scenes)} of {len(lyrics)} lyric lines have words written right to left ({name} {listed(scenes)}): "
        "karaoke shows them whole, not lit word by word"
    )


def _literal(text: str) -> str:
    """A lyric's text as its caption shows it, on one line, composed (NFC), without the characters no caption font
    has (braces and backslashes are shown as written: _in_fonts escapes them); a wide character (Chinese, Japanese,
    unspaced) is a word of its own."""
    composed = unicodedata.normalize("NFC", text)
    if any(_misspelled(word) for word in "".join(f" {c} " if _wide(c) else c for c in composed).split()):
        return ""  # (a word shown without some of its letters is another word: Urdu's ہ and ے, which DejaVu lacks)
    kept = "".join(c for c in composed if c.isspace() or _font_of(c) is not None)
    return one_line(_JOINER_ALONE.sub("", kept))


# A zero-width joiner with nothing drawn on a side: what joined an emoji no caption font has (alone, a timed empty word)
_JOINER_ALONE = re.compile("(?<!\\S)\u200d+|\u200d+(?!\\S)")


def _misspelled(word: str) -> bool:
    """Whether `word` has letters the caption fonts draw and letters none has: shown, it would be misspelled."""
    drawn = [_font_of(c) is not None for c in word if unicodedata.category(c).startswith("L")]
    return any(drawn) and not all(drawn)


# What ASS reads as markup, written to be shown: a brace escaped, a backslash (before N, n or h: a break) joined
AS_WRITTEN = {"{": "\\{", "}": "\\}", "\\": "\\" + WORD_JOINER}


def _in_fonts(rows: list[str]) -> str:
    """Rows of _literal text one under the other (\\N), each word in the caption font font_runs gives it: libass
    looks for a glyph the style's font lacks only among the system's fonts, so a run in another font is named (\\fn)
    and closed (\\fn alone: the style's font again). A space stays in the font of the text before it."""
    style = current = caption_fonts()[0]
    pieces = []
    for n, row in enumerate(rows):
        pieces.append("\\N" if n else "")
        for path, run in font_runs(row):
            if (font := _caption_font(path)) is not current:
                pieces.append("{\\fn}" if font is style else f"{{\\fn{font.family}}}")
                current = font
            pieces.append("".join(AS_WRITTEN.get(character, character) for character in run))
    if current is not style:
        pieces.append("{\\fn}")
    return "".join(pieces)


def _right_to_left(text: str) -> bool:
    """Whether a line has letters written right to left (Hebrew, Arabic, Persian, Urdu…): libass lays them out
    right to left, where a fill would sweep them left to right, so karaoke shows it whole. A mark of direction
    (U+200F) is no letter."""
    return any(unicodedata.bidirectional(c) in ("R", "AL") and unicodedata.category(c).startswith("L") for c in text)


def _wide(character: str) -> bool:
    return unicodedata.east_asian_width(character) in "WF"  # Chinese, Japanese and Korean: a row may end anywhere


def _mark(character: str) -> bool:
    return unicodedata.category(character).startswith("M")  # drawn on the letter before: never cut from it


def _may_break(before: str, after: str) -> bool:
    """Whether a row may end between two characters of a word: around a wide character, except before a closing
    mark (kinsoku) or after an opening one."""
    return (
        (_wide(before) or _wide(after))
        and unicodedata.category(before) not in ("Ps", "Pi")
        and after not in _NO_ROW_START
        and unicodedata.category(after) not in ("Pe", "Pf")
        and not _mark(after)
    )


def _cut(text: str, may_break) -> list[str]:
    starts = [0, *(i for i in range(1, len(text)) if may_break(text[i - 1], text[i])), len(text)]
    return [text[a:b] for a, b in zip(starts, starts[1:])]


def _width(text: str, size: int) -> float:
    """Pixels that _literal `text` takes at font size `size` (the sum of its glyphs' advances, in the fonts that draw
    them: font_runs)."""
    return size * sum(_caption_font(path).advances[ord(c)] for path, run in font_runs(text) for c in run)


def _pieces(word: str, size: int, room: float) -> list[str]:
    """`word` cut where a row may end inside it (_may_break); a part still wider than a row (a URL) between any
    two letters."""
    parts = _cut(word, _may_break)
    return [
        p for part in parts for p in (_cut(part, lambda _, b: not _mark(b)) if _width(part, size) > room else [part])
    ]


@dataclass(frozen=True)
class Block:
    """Where a caption's rows go: their font size, a row's width (pixels) and how many rows there are at most."""

    size: int
    room: float
    rows: int


def block_of(width: int, height: int) -> Block:
    """The caption's letters: a fourteenth of the picture's short side (its height but in portrait, where a row of
    letters sized by the height would hold 10 of them); its rows between the side margins, at most as many as fill
    the lower CAPTION_SHARE of the picture above the bottom margin, their outline too."""
    size = max(8, round(min(width, height) / 14))
    rows = int((height * CAPTION_SHARE - _bottom_margin(height) - 2 * _outline(size)) // size)
    return Block(size, width - 2 * (_side_margin(width) + _outline(size)), max(1, rows))


def _side_margin(width: int) -> int:
    return width // 20


def _bottom_margin(height: int) -> int:
    return max(4, height // 20)


def _outline(size: int) -> float:
    return max(1.0, size / 12)


Row = list[tuple[int, str]]  # (a word's place in its line, its part in this row)


def _row_text(row: Row) -> str:
    return " ".join(part for _, part in row)


def _rows(words: list[str], block: Block) -> tuple[list[Row], bool] | None:
    """The rows a line's words fill in turn, none wider than the block's and at most its rows, and whether they leave
    out the line's end (then the last ends in ELLIPSIS, which the caller adds: it is no word's part). None where every
    word fits a row and the rows fit the block: libass wraps that line at its spaces (and balances its rows) as it
    always has."""
    size, room = block.size, block.room
    space = _width(" ", size)
    rows: list[Row] = [[]]
    x = 0.0
    for n, word in enumerate(words):
        for k, piece in enumerate(_pieces(word, size, room)):
            lead, wide = (0.0 if k or not rows[-1] else space), _width(piece, size)
            if rows[-1] and x + lead + wide > room:
                if len(rows) == block.rows:  # (the rest is not shown, so not measured)
                    return _ended(rows, size, room), True
                rows.append([])
                x, lead = 0.0, 0.0
            if k and rows[-1]:  # the word goes on in this row
                rows[-1][-1] = (n, rows[-1][-1][1] + piece)
            else:
                rows[-1].append((n, piece))
            x += lead + wide
    return None if all(_width(word, size) <= room for word in words) else (rows, False)


def _ended(rows: list[Row], size: int, room: float) -> list[Row]:
    """`rows` with the last one's end cut off, a letter (with its marks) at a time, until ELLIPSIS fits after it."""
    last = rows[-1]
    while last and _width(_row_text(last) + ELLIPSIS, size) > room:
        n, part = last.pop()
        if kept := "".join(_cut(part, lambda _, b: not _mark(b))[:-1]):
            last.append((n, kept))
    return rows


def _line_text(text: str, block: Block) -> str:
    """A plain line as the ASS script shows it, broken into rows where _rows breaks it (a mark written apart from its
    word tied to it: no row begins with "?")."""
    words = _literal(tied(text)).split(" ")
    broken = _rows(words, block)
    if broken is None:
        return _in_fonts([" ".join(words)])
    rows, cut = broken
    texts = [_row_text(row) for row in rows]
    return NO_WRAP + _in_fonts([*texts[:-1], texts[-1] + (ELLIPSIS if cut else "")])


AUTO_DIRECTION = -1  # Encoding -1: libass lays a line out in its first letter's direction (the bidi rule)


def ass_script(
    storyboard: Storyboard,
    width: int,
    height: int,
    words: dict[int, list[tuple[float, float, str]]] | None = None,
    heard: Transcript | None = None,
) -> str:
    """An ASS script: each captioned scene's line at the bottom while `heard` (the transcript `words` was timed by)
    sings it (cues); with `words` (karaoke) its words turning from white to gold as they are sung (\\kf: a fill that
    sweeps across the word over its duration). Sized in the video's own pixels, with an outline, so it reads at any
    size."""
    block = block_of(width, height)
    size, margin, outline = block.size, _side_margin(width), _outline(block.size)
    sung = SUNG if words is not None else UNSUNG  # a plain line is white throughout
    header = (
        "[Script Info]\nScriptType: v4.00+\n"
        f"PlayResX: {width}\nPlayResY: {height}\nScaledBorderAndShadow: yes\nWrapStyle: 0\n\n"
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, "
        "Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, "
        "MarginL, MarginR, MarginV, Encoding\n"
        f"Style: Lyrics,{caption_fonts()[0].family},{size},{sung},{UNSUNG},&H00000000,&H80000000,1,0,0,0,100,100,0,0,1,"
        f"{outline:.1f},0,2,{margin},{margin},{_bottom_margin(height)},{AUTO_DIRECTION}\n\n"
        "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text\n"
    )
    events = []
    for scene, _, (start, end) in cues(storyboard, heard):
        if not _literal(scene.text):  # none of it drawable
            continue
        if words is None:
            texts = [_line_text(scene.text, block)]
        elif _right_to_left(scene.text):
            texts = [LINE_COLOUR + _line_text(scene.text, block)]
        else:  # a duet's lines each lit in its own event, the first on top (libass stacks each over the one before)
            texts = [_karaoke_text(start, line, block) for line in reversed(sung_together(words[scene.index]))]
        # (a duet's line of nothing drawable: no event)
        events.extend(f"Dialogue: 0,{ass_time(start)},{ass_time(end)},Lyrics,,0,0,0,,{text}" for text in texts if text)
    return header + "\n".join(events) + "\n"


def _karaoke_text(at: float, words: list[WordTime], block: Block) -> str:
    """A line's words with their \\k (wait) and \\kf (fill) times, from `at`, the line's start, in the rows
    _rows breaks it into: a word cut across rows fills each part in its share of the word's time, by letters
    (a fill sweeps one row: libass would sweep one across two rows from the first's left to the second's right).
    Words heard with no space between them ("君", "の") are one word of the rows, each filled in its own time."""
    # a word with nothing drawable is left out: its time is a wait before the next word
    timed: list[tuple[float, float, str, int, int]] = []  # (start, end, word, its row word, its first letter there)
    written: list[str] = []  # the words _rows lays out: those heard without a space between them joined
    for start, end, word, spaced in words:  # each word from the one before's end: a transcript's times may overlap
        start = max(start, timed[-1][1] if timed else at)
        if shown := _literal(word):
            if spaced or not written:
                written.append("")
            timed.append((start, max(end, start), shown, len(written) - 1, len(written[-1])))
            written[-1] += shown
    broken = _rows(written, block)
    rows, cut = broken or ([list(enumerate(written))], False)
    done = [0] * len(written)  # of each row word, the letters in the rows before
    lines = []
    for row in rows:
        text = []
        for n, part in row:
            low, done[n] = done[n], done[n] + len(part)
            tags, at = _fills(timed, n, (low, done[n]), at)
            text.append("".join(tags))
        lines.append(" ".join(text))
    ending = _in_fonts([ELLIPSIS]) if cut else ""  # (swept with the last word shown)
    return ("" if broken is None else NO_WRAP) + "\\N".join(lines) + ending


def _fills(timed: list[tuple[float, float, str, int, int]], n: int, letters: tuple[int, int], at: float):
    """The \\k and \\kf tags and letters of row word `n`'s `letters` (from, to; _karaoke_text's `timed`), each heard
    word's part of them filled in its share of the word's time, by letters, a wait before a word's first letter (in
    whole centiseconds of the song's clock, so that rounding never drifts along a line); and the time they end at."""
    low, high = letters
    tags = []
    for start, end, word, m, first in timed:
        a, b = max(low, first), min(high, first + len(word))
        if m != n or a >= b:
            continue
        wait = round(start * 100) - round(at * 100) if a == first else 0  # a pause before the word: nothing lit
        fill = round(end * 100) - round(start * 100)
        share = round(fill * (b - first) / len(word)) - round(fill * (a - first) / len(word))
        tags.append(
            (f"{{\\k{wait}}}" if wait > 0 else "") + f"{{\\kf{share}}}" + _in_fonts([word[a - first : b - first]])
        )
        at = end
    return tags, at


def write_script(path: Path, script: str) -> None:
    """The ASS script at `path`, with the caption fonts in FONTS beside it."""
    write_text(path, script)
    for source in LYRICS_FONTS:
        font = path.parent / FONTS / source.name
        if not font.is_file() or font.stat().st_size != source.stat().st_size:
            font.parent.mkdir(exist_ok=True)
            with atomic_path(font) as tmp:
                shutil.copyfile(source, tmp)
