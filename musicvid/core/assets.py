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
# Noto Sans Bold of the scripts neither has (Serif for Tibetan), and Naskh for Urdu's letters (fonts/scripts/LICENSE); Devanagari first,
# whose dandas (।) the other Indic scripts share
SCRIPTS = "Devanagari Bengali Gurmukhi Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Khmer Myanmar"
LYRICS_SCRIPT_FONTS = tuple(
    ASSETS_DIR / "fonts" / "scripts" / f"Lyrics{name}-Bold.ttf"
    for name in f"{SCRIPTS} Ethiopic Tibetan Cherokee Arabic".split()
)
LYRICS_FONTS = (LYRICS_FONT, LYRICS_CJK_FONT, *LYRICS_SCRIPT_FONTS)  # in this order: font_runs


@cache
def font_characters(path: Path) -> frozenset[int]:
    """The characters (code points) the font file `path` has a glyph for."""
    from fontTools.ttLib import TTFont

    with TTFont(path, lazy=True) as font:
        return frozenset(font.getBestCmap())


def lyrics_font(character: str) -> Path | None:
    """The first of LYRICS_FONTS that has `character`; None where none has."""
    return next((font for font in LYRICS_FONTS if ord(character) in font_characters(font)), None)


def _reach(font: Path, word: str, start: int) -> int:
    """How many characters of `word` from `start` on `font` has, one after another."""
    characters, end = font_characters(font), start
    while end < len(word) and ord(word[end]) in characters:
        end += 1
    return end - start


def font_runs(text: str) -> list[tuple[Path, str]]:
    """`text` cut where the font that draws it changes: each word (parted by spaces) cut into the longest pieces one
    font has whole, each in the first font that has it that far (a whole word where one has all of it), so that a
    script shaped across its letters (Devanagari's conjuncts, joined Arabic) is shaped in one font, a comma after it
    in another; a character none has is left out. A space is in the font before it. The first font: of LYRICS_FONTS,
    those the line needs beyond DejaVu first, so a line's words of one script share a font (an Urdu line's words
    without ہ or ے in Naskh, as those with them: DejaVu has the rest of Arabic's letters, in another style)."""
    needed = {font for font, _ in _runs(text, LYRICS_FONTS)} - {LYRICS_FONT}
    return _runs(text, sorted(LYRICS_FONTS, key=lambda font: font not in needed))  # (a stable sort)


def _runs(text: str, fonts) -> list[tuple[Path, str]]:
    """font_runs, with `fonts` in the order they are tried."""
    runs: list[tuple[Path, str]] = []

    def add(font: Path, piece: str) -> None:
        if runs and runs[-1][0] == font:
            runs[-1] = (font, runs[-1][1] + piece)
        else:
            runs.append((font, piece))

    for n, word in enumerate(text.split(" ")):
        if n:
            add(runs[-1][0] if runs else LYRICS_FONT, " ")
        at = 0
        while at < len(word):
            font, length = max(((font, _reach(font, word, at)) for font in fonts), key=lambda f: f[1])
            if length:  # (max: the first of the longest)
                add(font, word[at : at + length])
            at += length or 1
    return runs
