"""Files that ship with musicvid: the demo song, tiny tokenizers, default texts."""

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
