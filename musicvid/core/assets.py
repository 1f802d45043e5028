"""Files that ship with musicvid: the demo song, tiny tokenizers, default texts, the lyrics' fonts."""

from functools import cache
from pathlib import Path

ASSETS_DIR = Path(__file__).resolve().parents[2] / "assets"
DEMO_SONG = ASSETS_DIR / "demo" / "demo.mp3"
DEMO_LYRICS = ASSETS_DIR / "demo" / "demo.lrc"
TINY_GPT2_TOKENIZER = ASSETS_DIR / "tokenizers" / "tiny-gpt2"
TINY_CLIP_TOKENIZER = ASSETS_DIR / "tokenizers" / "tiny-clip"
# Qwen3's tokenizer (special tokens, chat template) over a vocabulary of 512: Z-Image's and FLUX.2 klein's text
TINY_QWEN3_TOKENIZER = ASSETS_DIR / "tokenizers" / "tiny-qwen3"
# Gemma 3's tokenizer (special tokens, byte fallback, chat template) over a vocabulary of 573: LTX-2's text encoder's
TINY_GEMMA3_TOKENIZER = ASSETS_DIR / "tokenizers" / "tiny-gemma3"
LYRICS_FONT = ASSETS_DIR / "fonts" / "DejaVuSans-Bold.ttf"  # free to redistribute (fonts/LICENSE-DejaVu)
# Noto Sans CJK SC Bold cut to everyday Chinese, Japanese and Korean (SIL OFL: fonts/LICENSE-LyricsCJK)
LYRICS_CJK_FONT = ASSETS_DIR / "fonts" / "LyricsCJK-Bold.otf"
LYRICS_FONTS = (LYRICS_FONT, LYRICS_CJK_FONT)  # each character is drawn in the first of them that has it


@cache
def font_characters(path: Path) -> frozenset[int]:
    """The characters (code points) the font file `path` has a glyph for."""
    from fontTools.ttLib import TTFont

    with TTFont(path, lazy=True) as font:
        return frozenset(font.getBestCmap())


def lyrics_font(character: str) -> Path | None:
    """The first of LYRICS_FONTS that has `character`; None where none has."""
    return next((font for font in LYRICS_FONTS if ord(character) in font_characters(font)), None)


def font_runs(text: str) -> list[tuple[Path, str]]:
    """`text` cut where the font that draws it changes: each character in the first of LYRICS_FONTS that has it (a
    space in the font before it); those none has left out."""
    runs: list[tuple[Path, str]] = []
    for character in text:
        font = runs[-1][0] if character == " " and runs else lyrics_font(character)
        if font is None:
            continue
        if runs and runs[-1][0] == font:
            runs[-1] = (font, runs[-1][1] + character)
        else:
            runs.append((font, character))
    return runs
