"""score.png: `musicvid score`'s report as one picture, drawn with Pillow (musicvid has no plotting library).

Top to bottom: a title; a bar per scene for its lyric score and its prompt score (CLIPScore, on one scale);
under each scene, a cell for the morph that leaves it, green where the picture changes evenly and red where
its change is one jump (largest_step_share, written in the cell), grey where its frames are not on disk;
where the storyboard records keyframe picks, under each picked scene the candidates drawn for it (×N) and the
seed kept, written upwards (a seed is wider than a column); the report's figures in a few lines.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont, PngImagePlugin

from musicvid.core.assets import LYRICS_FONT
from vipe_core.atomic import atomic_path

# A PNG text entry that marks score.png as musicvid's: score replaces no picture of a person's saved under its name
CHART_MARK = ("musicvid", "score chart")

BACKGROUND, INK, FAINT, GRID = (24, 24, 28), (235, 235, 235), (150, 150, 160), (60, 60, 68)
LYRIC, PROMPT, UNDRAWN = (240, 170, 80), (110, 160, 240), (80, 80, 88)
MARGIN, AXIS = 24, 44  # around the chart; the scale's labels left of the bars
COLUMN, BAR = 44, 16  # the width each scene takes, and each of its two bars
BARS_HEIGHT, STRIP_HEIGHT, LINE = 220, 26, 20
PICK_HEIGHT = 90  # "×N" over a seed of up to 10 digits, written upwards


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(LYRICS_FONT), size)


def _scale_top(report: dict[str, Any]) -> float:
    """The bars' scale: 0 to the highest score rounded up to 0.5, at least 1."""
    scores = [row[key] for row in report["scenes"] for key in ("lyric", "prompt") if row[key] is not None]
    return max(1.0, math.ceil(max(scores, default=0.0) * 2) / 2)


def _jump_colour(share: float, steps: int) -> tuple[int, int, int]:
    """Green where a morph's largest step is its even share (1/steps), red where it is all of the change."""
    even = 1 / steps
    jump = min(max((share - even) / (1 - even), 0.0), 1.0) if steps > 1 else 0.0
    return round(80 + 170 * jump), round(190 - 130 * jump), 90


def _draw_bars(draw: ImageDraw.ImageDraw, report: dict[str, Any], top: int) -> None:
    scale = _scale_top(report)
    left, bottom = MARGIN + AXIS, top + BARS_HEIGHT
    for step in range(int(scale * 2) + 1):
        y = bottom - round(step / 2 / scale * BARS_HEIGHT)
        draw.line([(left, y), (left + COLUMN * len(report["scenes"]), y)], fill=GRID)
        draw.text((MARGIN, y - 7), f"{step / 2:.1f}", font=_font(11), fill=FAINT)
    for n, row in enumerate(report["scenes"]):
        x = left + n * COLUMN + (COLUMN - 2 * BAR) // 2
        for offset, key, colour in ((0, "lyric", LYRIC), (BAR, "prompt", PROMPT)):
            if row[key] is None:  # a scene without words: a mark on the axis, no bar
                draw.line([(x + offset + 3, bottom - 2), (x + offset + BAR - 3, bottom - 2)], fill=FAINT, width=2)
                continue
            height = round(min(row[key], scale) / scale * BARS_HEIGHT)
            draw.rectangle([(x + offset, bottom - height), (x + offset + BAR - 2, bottom)], fill=colour)
        draw.text(
            (left + n * COLUMN + COLUMN // 2, bottom + 4), str(row["scene"]), font=_font(11), fill=FAINT, anchor="mt"
        )


def _draw_strip(draw: ImageDraw.ImageDraw, report: dict[str, Any], top: int) -> None:
    columns = {row["scene"]: n for n, row in enumerate(report["scenes"])}
    draw.text((MARGIN, top + 6), "jump", font=_font(11), fill=FAINT)
    for morph in report["smoothness"]:
        if morph["scene"] not in columns:
            continue
        x = MARGIN + AXIS + columns[morph["scene"]] * COLUMN
        share = morph.get("largest_step_share")
        colour = UNDRAWN if share is None else _jump_colour(share, morph["steps"])
        draw.rectangle([(x + 2, top), (x + COLUMN - 2, top + STRIP_HEIGHT)], fill=colour)
        label = "–" if share is None else f"{share:.2f}"
        draw.text((x + COLUMN // 2, top + STRIP_HEIGHT // 2), label, font=_font(10), fill=INK, anchor="mm")


def _draw_picks(image: Image.Image, report: dict[str, Any], top: int) -> None:
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, top + 2), "pick", font=_font(11), fill=FAINT)
    for n, row in enumerate(report["scenes"]):
        if "pick" not in row:
            continue
        x = MARGIN + AXIS + n * COLUMN
        draw.text((x + COLUMN // 2, top + 2), f"×{row['pick']['drawn']}", font=_font(11), fill=INK, anchor="mt")
        seed = str(row["pick"]["seed"])
        box = _font(10).getbbox(seed)
        label = Image.new("RGB", (box[2] + 2, box[3] + 2), BACKGROUND)
        ImageDraw.Draw(label).text((1, 1), seed, font=_font(10), fill=FAINT)
        upwards = label.rotate(90, expand=True)
        image.paste(upwards, (x + (COLUMN - upwards.width) // 2, top + 18))


def chart(report: dict[str, Any], lines: list[str]) -> Image.Image:
    """The chart of `report`, with `lines` (its figures in words) under it."""
    width = max(720, 2 * MARGIN + AXIS + COLUMN * len(report["scenes"]))
    picks = PICK_HEIGHT if any("pick" in row for row in report["scenes"]) else 0
    height = 2 * MARGIN + 2 * LINE + BARS_HEIGHT + LINE + STRIP_HEIGHT + picks + LINE * (len(lines) + 1)
    image = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(image)
    draw.text((MARGIN, MARGIN), f"musicvid score · {Path(report['workdir']).name}", font=_font(16), fill=INK)
    legend = MARGIN + LINE + 4
    for n, (name, colour) in enumerate((("lyric", LYRIC), ("prompt", PROMPT))):
        x = MARGIN + AXIS + n * 90
        draw.rectangle([(x, legend + 3), (x + 10, legend + 13)], fill=colour)
        draw.text((x + 16, legend), name, font=_font(12), fill=INK)
    bars_top = MARGIN + 2 * LINE + 8
    _draw_bars(draw, report, bars_top)
    strip_top = bars_top + BARS_HEIGHT + LINE
    _draw_strip(draw, report, strip_top)
    if picks:
        _draw_picks(image, report, strip_top + STRIP_HEIGHT + 6)
    y = strip_top + STRIP_HEIGHT + picks + LINE // 2
    for line in lines:
        draw.text((MARGIN, y), line, font=_font(12), fill=INK)
        y += LINE
    return image


def write_chart(path: Path, report: dict[str, Any], lines: list[str]) -> Path:
    meta = PngImagePlugin.PngInfo()
    meta.add_text(*CHART_MARK)
    with atomic_path(path) as tmp:
        chart(report, lines).save(tmp, format="PNG", pnginfo=meta)
    return path


def is_own_chart(path: Path) -> bool:
    """Whether `path` is a chart `write_chart` wrote (its PNG text holds CHART_MARK)."""
    try:
        with Image.open(path) as image:
            return image.format == "PNG" and image.text.get(CHART_MARK[0]) == CHART_MARK[1]
    except (OSError, SyntaxError, ValueError):
        return False
