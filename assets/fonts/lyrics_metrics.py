"""What the lyrics' fallback fonts share with DejaVu Sans Bold, the captions' first font: its ascent and descent, and
a name of their own (used by make_cjk_font.py and make_script_fonts.py beside it)."""

from __future__ import annotations

from pathlib import Path

from fontTools.ttLib import TTFont

DEJAVU = Path(__file__).resolve().parent / "DejaVuSans-Bold.ttf"


def take_dejavu_metrics(font: TTFont, dejavu: TTFont) -> None:
    """libass sizes a font so that its Windows ascent plus descent is the style's size: `font`'s are set to DejaVu's,
    as fractions of each one's em, so that its letters are drawn at DejaVu's size on the same line."""
    scale = font["head"].unitsPerEm / dejavu["head"].unitsPerEm
    ascent, descent = round(dejavu["OS/2"].usWinAscent * scale), round(dejavu["OS/2"].usWinDescent * scale)
    font["OS/2"].usWinAscent, font["OS/2"].usWinDescent = ascent, descent
    font["hhea"].ascent, font["hhea"].descent, font["hhea"].lineGap = ascent, -descent, 0


def rename(font: TTFont, family: str, postscript: str, unique: str, description: str) -> None:
    """`font` named `family` (Bold) alone, the typographic names dropped: with metrics of its own, a font of the
    source's name installed on the system must never stand in for it."""
    names = font["name"]
    for name_id in (16, 17):  # typographic family and style: the family alone names it
        names.removeNames(nameID=name_id)
    for name_id, text in [(1, family), (3, unique), (4, f"{family} Bold"), (6, postscript), (10, description)]:
        names.removeNames(nameID=name_id)
        names.setName(text, name_id, 3, 1, 0x409)
