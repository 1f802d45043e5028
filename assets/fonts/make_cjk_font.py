#!/usr/bin/env python3
"""Build ``LyricsCJK-Bold.otf``, the captions' font for the Chinese, Japanese and Korean characters that
DejaVu Sans Bold (the captions' first font) lacks.

It is Noto Sans CJK SC Bold (version 2.004, SIL Open Font License 1.1: ``LICENSE-LyricsCJK``) cut down
to the everyday characters of the three languages, as their national character sets define them:

* Chinese: GB 2312 level 1 (3,755 simplified characters, the common ones) and Big5 level 1 (5,401
  traditional characters, the common ones);
* Japanese: JIS X 0208 level 1 (2,965 kanji), and all hiragana and katakana;
* Korean: the 2,350 Hangul syllables of KS X 1001, and the compatibility jamo;
* the symbol rows of those four sets, CJK punctuation, full-width forms, and the space.

The sets come from Python's own codecs (gb2312, big5, euc_jp, euc_kr), so this script needs no list.
The ideographs are drawn in their simplified-Chinese forms (the SC face); Japanese and traditional
readers see those of their characters that differ by region in the mainland's style. Only the kern
feature is kept: the region variants reached through locl would double the glyphs, and libass gives
the shaper no language to choose them by.

One change besides the cut: libass sizes a font so that its ascent plus descent is the style's size,
and Noto's (1.448 em) are larger than DejaVu's (1.164 em), which drew CJK 20% smaller than Latin on
the same line; so the font's vertical metrics are set to DejaVu's, in proportion. With metrics of its
own it has a name of its own, "Lyrics CJK", so that a full Noto Sans CJK installed on the system never
stands in for it (the licence reserves only the name "Source", which neither uses).

Source: Debian's fonts-noto-cjk (1:20220127+repack1-1), ``NotoSansCJK-Bold.ttc``::

    apt-get download fonts-noto-cjk && dpkg -x fonts-noto-cjk_*.deb noto
    python assets/fonts/make_cjk_font.py noto/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc

The output is the same bytes for the same source and fontTools version (4.68.0 made the one here).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from fontTools import subset
from fontTools.ttLib import TTCollection, TTFont
from lyrics_metrics import DEJAVU, rename, take_dejavu_metrics

OUTPUT = Path(__file__).resolve().parent / "LyricsCJK-Bold.otf"
SOURCE_FACE = "NotoSansCJKsc-Bold"  # the simplified-Chinese face of the collection
FAMILY = "Lyrics CJK"

EUC_CELLS = range(0xA1, 0xFF)
BIG5_CELLS = [*range(0x40, 0x7F), *range(0xA1, 0xFF)]
# (codec, first byte range, second byte range) of each set's rows
CHARACTER_SETS = [
    ("gb2312", range(0xA1, 0xAA), EUC_CELLS),  # symbols, kana, Greek, Cyrillic, pinyin
    ("gb2312", range(0xB0, 0xD8), EUC_CELLS),  # level 1
    ("big5", range(0xA1, 0xA4), BIG5_CELLS),  # symbols
    ("big5", range(0xA4, 0xC6), BIG5_CELLS),  # level 1 ...
    ("big5", range(0xC6, 0xC7), range(0x40, 0x7F)),  # ... which ends at C67E
    ("euc_jp", range(0xA1, 0xA9), EUC_CELLS),  # symbols, kana, Greek, Cyrillic, box drawing
    ("euc_jp", range(0xB0, 0xD0), EUC_CELLS),  # level 1
    ("euc_kr", range(0xA1, 0xAD), EUC_CELLS),  # symbols, jamo, kana, Cyrillic
    ("euc_kr", range(0xB0, 0xC9), EUC_CELLS),  # Hangul syllables
]
BLOCKS = [
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3130, 0x318F),  # Hangul compatibility jamo
    (0x31F0, 0x31FF),  # katakana phonetic extensions
    (0xFF00, 0xFFEF),  # half-width and full-width forms
]


def character_set() -> set[int]:
    """Every code point of CHARACTER_SETS' rows and of BLOCKS."""
    points = {point for first, last in BLOCKS for point in range(first, last + 1)}
    for codec, rows, cells in CHARACTER_SETS:
        for row in rows:
            for cell in cells:
                try:
                    text = bytes([row, cell]).decode(codec)
                except UnicodeDecodeError:
                    continue  # an unassigned cell
                if len(text) == 1:
                    points.add(ord(text))
    return points


def build(collection: Path) -> TTFont:
    font = next(f for f in TTCollection(collection).fonts if f["name"].getDebugName(6) == SOURCE_FACE)
    dejavu = TTFont(DEJAVU)
    # the space too: a space between two CJK words stays in this font, as libass is told (musicvid.delivery.captions)
    wanted = {ord(" ")} | (character_set() - set(dejavu.getBestCmap()))
    options = subset.Options()
    options.layout_features = ["kern"]
    options.hinting = False  # the captions are drawn large, where CFF hints change nothing
    options.name_IDs = ["*"]  # the copyright, licence and designers' names stay in the font
    options.drop_tables += ["BASE", "VORG", "vhea", "vmtx"]  # for vertical text, never drawn
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=wanted & set(font.getBestCmap()))
    subsetter.subset(font)

    take_dejavu_metrics(font, dejavu)
    source_version = font["name"].getDebugName(5)
    rename(
        font,
        FAMILY,
        "LyricsCJK-Bold",
        f"LyricsCJK-Bold; subset of {SOURCE_FACE} {source_version}",
        "Noto Sans CJK SC Bold cut to everyday CJK characters, with DejaVu Sans Bold's vertical metrics",
    )
    cff = font["CFF "].cff  # the collection's faces share it, so it names the first face (JP)
    cff.fontNames = ["LyricsCJK-Bold"]
    cff.topDictIndex[0].FamilyName, cff.topDictIndex[0].FullName = FAMILY, f"{FAMILY} Bold"
    font.recalcTimestamp = False  # the source's date: the same source makes the same bytes
    return font


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("collection", type=Path, help="NotoSansCJK-Bold.ttc")
    parser.add_argument("--out", type=Path, default=OUTPUT)
    args = parser.parse_args()
    font = build(args.collection)
    font.save(args.out)
    print(f"{args.out}: {len(font.getBestCmap())} characters, {args.out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
