"""The fonts an ASS script draws with, embedded in it (its [Fonts] section), each cut to the characters its lines
show: the .ass kept beside the video then draws as the video does in an editor or a player that reads embedded
fonts (Aegisub; mpv, VLC and the web players through libass) on a machine without musicvid's fonts.

The SSA format's encoding, as libass decodes it: a font file's bytes three at a time, b0 b1 b2 → the four 6-bit
numbers of n = b0·2¹⁶ + b1·2⁸ + b2, high first, each written as the character of code 33 + its number ("!" to "`");
a last group of one byte as its first two characters, of two bytes as its first three; in lines of LINE characters,
after a line `fontname: <file name>`."""

from __future__ import annotations

import io
import re
from pathlib import Path

from musicvid.core.assets import LYRICS_FONT, LYRICS_FONTS
from musicvid.delivery.captions import caption_fonts

LINE = 80  # characters a line of a font's encoding (as Aegisub writes them)
# a font the script names beyond its style's (musicvid.delivery.captions._in_fonts)
_NAMED = re.compile(r"\\fn([^\\}]+)")


def with_fonts(script: str) -> str:
    """`script` with a [Fonts] section holding each of LYRICS_FONTS it draws with (its style's, and each a
    `\\fn` names), cut to the characters of its events; `script` as it is where it has no events."""
    events = script.partition("[Events]")[2]
    lines = [line.split(",", 9)[-1] for line in events.splitlines() if line.startswith("Dialogue:")]
    if not lines:
        return script
    named, shown = set(_NAMED.findall("".join(lines))), {ord(c) for c in "".join(lines)}
    families = zip(LYRICS_FONTS, caption_fonts(), strict=True)
    fonts = [path for path, font in families if path == LYRICS_FONT or font.family in named]
    parts = [f"fontname: {font.stem}_B0{font.suffix}\n{encoded(cut(font, shown))}" for font in fonts]
    return script.rstrip("\n") + "\n\n[Fonts]\n" + "".join(parts)


def cut(font: Path, characters: set[int]) -> bytes:
    """The font file `font` cut to the `characters` it has (and a space), every layout feature kept (shaping),
    its names kept (its licence); the same bytes for the same font and characters."""
    from fontTools import subset
    from fontTools.ttLib import TTFont

    options = subset.Options()
    options.layout_features, options.name_IDs, options.notdef_outline = ["*"], ["*"], True
    options.drop_tables += ["FFTM"]  # (FontForge's dates, which the subsetter does not know: dropped, not said)
    with TTFont(font, recalcTimestamp=False) as opened:
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=(characters | {0x20}) & set(opened.getBestCmap()))
        subsetter.subset(opened)
        out = io.BytesIO()
        opened.save(out)
    return out.getvalue()


def encoded(data: bytes) -> str:
    """`data` in the SSA encoding (module doc), in lines of LINE characters, each ending in a newline."""
    characters = []
    for at in range(0, len(data), 3):
        group = data[at : at + 3]
        n = int.from_bytes(group.ljust(3, b"\0"), "big")
        characters.extend(chr(33 + (n >> shift & 63)) for shift in (18, 12, 6, 0)[: len(group) + 1])
    text = "".join(characters)
    return "".join(text[at : at + LINE] + "\n" for at in range(0, len(text), LINE))
