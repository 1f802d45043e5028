"""The contact sheet: every shown scene's keyframe as a thumbnail, with its time, section (and, for a scene
cut inside a passage without words, ✂ and why: the music changes, or its bars), lyric (or a passage's mood)
and prompt under it, COLUMNS to a row in the order of the song — the one picture that tells a person whether the
video will work, before the morphs are drawn. Given the keyframes' scores (musicvid.pictures.scores), each
cell also says how well its picture shows its lyric and its prompt."""

from __future__ import annotations

import math
import unicodedata
from functools import cache
from pathlib import Path
from typing import Mapping

from PIL import Image, ImageDraw, ImageFont

from musicvid.core.assets import font_runs
from musicvid.core.workdir import Workdir
from musicvid.pictures.scores import SceneScores
from musicvid.storyboard.board import Scene, Storyboard
from musicvid.storyboard.table import words_or_mood
from vipe_core.atomic import atomic_path

COLUMNS = 4
THUMB_WIDTH = 256
GAP = 12  # between cells, and around the sheet
TEXT = (("head", 15, 1, (160, 160, 160)), ("lyric", 16, 2, (255, 255, 255)), ("prompt", 13, 4, (190, 200, 220)))
SCORES_TEXT = ("scores", 13, 1, (150, 220, 160))  # under the prompt, where the scenes were scored
BACKGROUND = (24, 24, 28)


@cache
def _font(path: Path, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(path), size)


def _length(draw: ImageDraw.ImageDraw, text: str, size: int) -> float:
    """Pixels `text` takes at `size`, each run in the lyrics' font that draws it (font_runs), as the video's are."""
    return sum(draw.textlength(run, font=_font(path, size)) for path, run in font_runs(text))


def _draw(draw: ImageDraw.ImageDraw, at: tuple[int, int], text: str, size: int, colour) -> None:
    """`text` drawn from `at`, each run in its font; the runs of a line whose first letter is written right to left
    (an Urdu line with words in two fonts) from the right, as the video lays them out (each run's own letters are
    laid out by Pillow's shaper)."""
    x, y = at
    runs = font_runs(text)
    first = next((unicodedata.bidirectional(c) for c in text if unicodedata.bidirectional(c) in ("L", "R", "AL")), "L")
    for path, run in reversed(runs) if first != "L" else runs:
        draw.text((x, y), run, font=_font(path, size), fill=colour)
        x += draw.textlength(run, font=_font(path, size))


def _line_height(size: int) -> int:
    return round(size * 1.3)


def cell_size(picture: tuple[int, int], scored: bool = False) -> tuple[int, int]:
    """Width × height of one scene's cell: its thumbnail and the text block under it."""
    thumb_height = round(THUMB_WIDTH * picture[1] / picture[0])
    return THUMB_WIDTH + GAP, thumb_height + _text_height(scored) + 2 * GAP


def sheet_size(scenes: int, picture: tuple[int, int], scored: bool = False) -> tuple[int, int]:
    width, height = cell_size(picture, scored)
    columns, rows = min(scenes, COLUMNS), math.ceil(scenes / COLUMNS)
    return columns * width + GAP, rows * height + GAP


def _clock(seconds: float) -> str:
    minutes, seconds = divmod(seconds, 60)
    return f"{int(minutes)}:{seconds:04.1f}"


def _wrapped(draw: ImageDraw.ImageDraw, text: str, size: int, lines: int) -> list[str]:
    """`text` in at most `lines` lines of the thumbnail's width, the last cut with an ellipsis."""
    # A glyph is at least a pixel wide, so `lines` rows never show more letters than this: measuring the rest
    # (a lyric or prompt may be one 100,000-letter word) would only cost time.
    shown = lines * THUMB_WIDTH
    words = " ".join(text.split())
    rows, current = [], ""
    for word in words[:shown].split():
        candidate = f"{current} {word}".strip()
        if current and _length(draw, candidate, size) > THUMB_WIDTH:
            rows.append(current)
            current = word
        else:
            current = candidate
    rows += [current] if current else []
    cut = rows[:lines]
    if cut and (len(rows) > lines or len(words) > shown):  # there is more than these rows show
        cut[-1] += " …"
    return [_fit(draw, row, size) for row in cut]


def _fit(draw: ImageDraw.ImageDraw, row: str, size: int) -> str:
    """`row`, shortened with an ellipsis where it is wider than a thumbnail (one long word, or the last
    row's ellipsis): the longest start of it that fits, found by halving (a measure per halving, not per letter)."""
    if _length(draw, row, size) <= THUMB_WIDTH:
        return row
    fits, too_long = 0, len(row) + 1  # row[:fits] fits with its ellipsis (or is empty); row[:too_long] does not
    while too_long - fits > 1:
        middle = (fits + too_long) // 2
        if _length(draw, row[:middle].rstrip(" …") + "…", size) <= THUMB_WIDTH:
            fits = middle
        else:
            too_long = middle
    return row[:fits].rstrip(" …") + "…"


def cell_texts(scene: Scene, scores: SceneScores | None) -> dict[str, str]:
    texts = {
        "head": f"{scene.index}  {_clock(scene.start)}–{_clock(scene.end)}  {scene.section or scene.kind}"
        + (f"  ✂ {scene.cut}" if scene.cut else ""),
        "lyric": words_or_mood(scene).strip() or "(no words)",
        "prompt": scene.prompt.strip(),
    }
    if scores is not None:
        lyric = "no lyric" if scores.lyric is None else f"lyric {scores.lyric:.2f}"
        texts["scores"] = f"{lyric} · prompt {scores.prompt:.2f}"
    return texts


def _text_rows(scored: bool) -> tuple:
    return (*TEXT, SCORES_TEXT) if scored else TEXT


def read_keyframe(path: Path) -> Image.Image:
    with Image.open(path) as image:
        return image.convert("RGB")


def contact_sheet(
    storyboard: Storyboard, workdir: Workdir, scenes: list[int], scores: Mapping[int, SceneScores] | None = None
) -> Image.Image:
    """The sheet of `scenes` (those shown), their keyframes read from the work directory; with `scores` (by
    scene index), each scored scene's scores under its prompt."""
    pictures = [read_keyframe(workdir.keyframe(i)) for i in scenes]
    size = pictures[0].size if pictures else (THUMB_WIDTH, THUMB_WIDTH)
    scored = bool(scores)
    sheet = Image.new("RGB", sheet_size(max(1, len(scenes)), size, scored), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    cell_w, cell_h = cell_size(size, scored)
    for n, (scene, picture) in enumerate(zip(scenes, pictures)):
        left, top = GAP + (n % COLUMNS) * cell_w, GAP + (n // COLUMNS) * cell_h
        thumb_size = (THUMB_WIDTH, cell_h - 2 * GAP - _text_height(scored))
        thumb = picture.resize(thumb_size, Image.Resampling.LANCZOS)
        sheet.paste(thumb, (left, top))
        y = top + thumb.height + 4
        texts = cell_texts(storyboard.scenes[scene], (scores or {}).get(scene))
        for name, font_size, lines, colour in _text_rows(scored):
            for row in _wrapped(draw, texts.get(name, ""), font_size, lines):
                _draw(draw, (left, y), row, font_size, colour)
                y += _line_height(font_size)
    return sheet


def _text_height(scored: bool = False) -> int:
    return sum(_line_height(size) * lines for _, size, lines, _ in _text_rows(scored))


def write_contact_sheet(
    storyboard: Storyboard, workdir: Workdir, scenes: list[int], scores: Mapping[int, SceneScores] | None = None
) -> Path:
    """The sheet, written as the work directory's contact sheet."""
    with atomic_path(workdir.contact_sheet) as tmp:
        contact_sheet(storyboard, workdir, scenes, scores).save(tmp, format="PNG")
    return workdir.contact_sheet
