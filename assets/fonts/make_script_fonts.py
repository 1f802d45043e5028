#!/usr/bin/env python3
"""Build ``scripts/Lyrics*-Bold.ttf``, the captions' fonts for the scripts that neither DejaVu Sans Bold nor Lyrics CJK
has: the Indic scripts, Sinhala, Thai, Lao, Khmer, Myanmar, Ethiopic, Tibetan and Cherokee, and the Arabic letters of
Urdu, Sindhi and Pashto that DejaVu lacks (ہ, ے, ڻ…).

Each is a Noto Sans font of its script in Bold (Noto Serif Tibetan, as Noto has no Sans; Noto Naskh Arabic for
Arabic; SIL Open Font License 1.1:
``scripts/LICENSE``) cut to its script's Unicode blocks and the joiners and marks its words are written with (ZWJ,
ZWNJ, the dandas, the dotted circle its shaper draws a stray mark on), with every layout feature kept: these scripts
are shaped (conjuncts, reordered vowels, joined letters) by HarfBuzz inside libass, which needs a word's letters in
one font. Hinting is dropped (the captions are drawn large). As Lyrics CJK, each takes DejaVu's ascent and descent,
so its letters are drawn at DejaVu's size on one line, and so a name of its own ("Lyrics Devanagari"…); the Arabic
one, whose words stand beside those DejaVu draws in a line, is drawn larger, its alef as tall as DejaVu's.

Source: Debian's fonts-noto-core (20201225-1)::

    apt-get download fonts-noto-core && dpkg -x fonts-noto-core_*.deb noto
    python assets/fonts/make_script_fonts.py noto/usr/share/fonts/truetype/noto

The output is the same bytes for the same sources and fontTools version (4.68.0 made the ones here).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fontTools import subset
from fontTools.pens.boundsPen import BoundsPen
from fontTools.ttLib import TTFont
from lyrics_metrics import DEJAVU, rename, take_dejavu_metrics

OUTPUT = Path(__file__).resolve().parent / "scripts"
# what a word of any of these scripts may hold besides its letters: no-break space, ZWNJ, ZWJ, dandas, dotted circle
SHARED = [0x20, 0xA0, 0x200C, 0x200D, 0x0964, 0x0965, 0x25CC]
# (the name in "Lyrics <name>" and the file's, the source font's name in Noto<...>-Bold.ttf, its Unicode blocks)
SCRIPTS = [
    ("Devanagari", "SansDevanagari", [(0x0900, 0x097F), (0xA8E0, 0xA8FF), (0x1CD0, 0x1CFF)]),
    ("Bengali", "SansBengali", [(0x0980, 0x09FF)]),
    ("Gurmukhi", "SansGurmukhi", [(0x0A00, 0x0A7F)]),
    ("Gujarati", "SansGujarati", [(0x0A80, 0x0AFF)]),
    ("Oriya", "SansOriya", [(0x0B00, 0x0B7F)]),
    ("Tamil", "SansTamil", [(0x0B80, 0x0BFF), (0x11FC0, 0x11FFF)]),
    ("Telugu", "SansTelugu", [(0x0C00, 0x0C7F)]),
    ("Kannada", "SansKannada", [(0x0C80, 0x0CFF)]),
    ("Malayalam", "SansMalayalam", [(0x0D00, 0x0D7F)]),
    ("Sinhala", "SansSinhala", [(0x0D80, 0x0DFF), (0x111E0, 0x111FF)]),
    ("Thai", "SansThai", [(0x0E00, 0x0E7F)]),
    ("Lao", "SansLao", [(0x0E80, 0x0EFF)]),
    ("Khmer", "SansKhmer", [(0x1780, 0x17FF), (0x19E0, 0x19FF)]),
    ("Myanmar", "SansMyanmar", [(0x1000, 0x109F), (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F)]),
    ("Ethiopic", "SansEthiopic", [(0x1200, 0x139F), (0x2D80, 0x2DDF), (0xAB00, 0xAB2F)]),
    ("Tibetan", "SerifTibetan", [(0x0F00, 0x0FFF)]),  # (Noto has no Sans Tibetan)
    ("Cherokee", "SansCherokee", [(0x13A0, 0x13FF), (0xAB70, 0xABBF)]),
    # the whole Arabic script: a word with a letter DejaVu lacks is drawn in this font whole, joined
    (
        "Arabic",
        "NaskhArabic",
        [(0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)],
    ),
]
# a script DejaVu draws too, its words beside DejaVu's on a line: the letter drawn as tall as DejaVu draws it
AS_TALL_AS_DEJAVU = {"Arabic": "ا"}


def build(source: Path, name: str, blocks: list[tuple[int, int]]) -> TTFont:
    font = TTFont(source)
    wanted = set(SHARED) | {point for first, last in blocks for point in range(first, last + 1)}
    options = subset.Options()
    options.layout_features = ["*"]  # shaping: conjuncts, reordering, joining, marks
    options.hinting = False
    options.name_IDs = ["*"]  # the copyright, licence and designers' names stay in the font
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=wanted & set(font.getBestCmap()))
    subsetter.subset(font)
    dejavu = TTFont(DEJAVU)
    if letter := AS_TALL_AS_DEJAVU.get(name):  # a smaller em draws every glyph larger, in proportion
        font["head"].unitsPerEm = round(font["head"].unitsPerEm * height(font, letter) / height(dejavu, letter))
    take_dejavu_metrics(font, dejavu)
    rename(
        font,
        f"Lyrics {name}",
        f"Lyrics{name}-Bold",
        f"Lyrics{name}-Bold; subset of {source.stem} {font['name'].getDebugName(5).split(';')[0]}",
        f"{source.stem} cut to its script, with DejaVu Sans Bold's vertical metrics",
    )
    font.recalcTimestamp = False  # the source's date: the same source makes the same bytes
    return font


def height(font: TTFont, letter: str) -> float:
    """How tall `letter` is drawn in `font`, in ems."""
    glyphs = font.getGlyphSet()
    pen = BoundsPen(glyphs)
    glyphs[font.getBestCmap()[ord(letter)]].draw(pen)
    return (pen.bounds[3] - pen.bounds[1]) / font["head"].unitsPerEm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="fonts-noto-core's truetype/noto folder")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args()
    args.out.mkdir(exist_ok=True)
    for name, source, blocks in SCRIPTS:
        font = build(args.folder / f"Noto{source}-Bold.ttf", name, blocks)
        path = args.out / f"Lyrics{name}-Bold.ttf"
        font.save(path)
        print(f"{path}: {len(font.getBestCmap())} characters, {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
