#!/usr/bin/env python3
"""Build the tiny Qwen3 tokenizer (``tiny-qwen3/``), the text encoders' tokenizer of Z-Image-Turbo and FLUX.2
klein 4B at the size of the tiny preset.

It is laid out as Qwen3's tokenizer folder: ``vocab.json`` and ``merges.txt`` (a byte-level BPE: ids 0-255 the
byte symbols in GPT-2's order, then one id per merge), ``tokenizer.json`` (Qwen2's pipeline: NFC, Qwen2's split
regex, byte level) and ``tokenizer_config.json`` with the chat template inline. After the BPE come Qwen3's 26
added tokens in Qwen3's order (``<|endoftext|>``, ``<|im_start|>``, ``<|im_end|>``, ... ``<think>``,
``</think>``), numbered on from the vocabulary as Qwen3 numbers them on from its 151643 tokens. The merges are
learned from ``assets/texts/tiny_corpus.txt`` by make_tokenizers' deterministic learner. Load with
``transformers.Qwen2Tokenizer``.

Run::

    python assets/tokenizers/make_qwen3_tokenizer.py [--corpus PATH] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from make_tokenizers import (
    DEFAULT_CORPUS,
    HERE,
    build_vocab,
    bytes_to_unicode,
    check_roundtrip,
    learn_merges,
    pretokenize,
    read_corpus,
    write_json,
    write_merges,
)
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

MERGE_TOKENS = 256  # 512 ids with the bytes, before the added tokens
# Qwen2's (and Qwen3's) pre-tokenizer: words with their leading space, digits one by one, runs of punctuation
SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
# Qwen3's added tokens in its order, and whether each is special (skipped when decoding)
ADDED_TOKENS = [
    *[(token, True) for token in ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>",
                                  "<|object_ref_end|>", "<|box_start|>", "<|box_end|>", "<|quad_start|>",
                                  "<|quad_end|>", "<|vision_start|>", "<|vision_end|>", "<|vision_pad|>",
                                  "<|image_pad|>", "<|video_pad|>")],
    *[(token, False) for token in ("<tool_call>", "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>",
                                   "<|fim_suffix|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>",
                                   "<tool_response>", "</tool_response>", "<think>", "</think>")],
]  # fmt: skip
# Qwen3's conversation format, as its model card documents it: each turn <|im_start|>role, a newline, the text,
# <|im_end|> and a newline; earlier answers keep only what follows their reasoning; the generation prompt opens
# the assistant's turn, and with enable_thinking false it brings an empty reasoning block, so that the model
# answers at once. (Z-Image renders its prompts with thinking on, FLUX.2 klein with it off.)
CHAT_TEMPLATE = (
    "{%- for message in messages %}\n"
    "    {%- set content = message.content %}\n"
    "    {%- if message.role == 'assistant' %}\n"
    "        {%- set content = content.split('</think>')[-1].lstrip('\\n') %}\n"
    "    {%- endif %}\n"
    "    {{- '<|im_start|>' + message.role + '\\n' + content + '<|im_end|>\\n' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "    {%- if enable_thinking is defined and enable_thinking is false %}\n"
    "        {{- '<think>\\n\\n</think>\\n\\n' }}\n"
    "    {%- endif %}\n"
    "{%- endif %}"
)


def qwen2_pipeline(model) -> Tokenizer:
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tokenizer.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)
    return tokenizer


def tokenizer_config(ids: dict[str, int]) -> dict:
    """Qwen3's tokenizer_config.json: the added tokens' decoder, the 13 additional special tokens, eos
    <|im_end|>, pad <|endoftext|>, neither bos nor unk."""
    flags = dict(lstrip=False, normalized=False, rstrip=False, single_word=False)
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": {
            str(ids[token]): {"content": token, **flags, "special": special} for token, special in ADDED_TOKENS
        },
        "additional_special_tokens": [token for token, _ in ADDED_TOKENS[1:14]],
        "bos_token": None,
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 131072,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def make_qwen3(lines: list[str], out: Path) -> None:
    words = pretokenize(qwen2_pipeline(models.BPE()), lines)
    vocab, kept = build_vocab(bytes_to_unicode(), learn_merges(words, n_merges=2 * MERGE_TOKENS), MERGE_TOKENS, [])
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "vocab.json", vocab)
    write_merges(out / "merges.txt", kept)
    tokenizer = qwen2_pipeline(
        models.BPE(vocab=vocab, merges=kept, continuing_subword_prefix="", end_of_word_suffix="")
    )
    for token, special in ADDED_TOKENS:
        added = AddedToken(token, single_word=False, lstrip=False, rstrip=False, normalized=False, special=special)
        (tokenizer.add_special_tokens if special else tokenizer.add_tokens)([added])
    (out / "tokenizer.json").write_text(tokenizer.to_str(pretty=True) + "\n", encoding="utf-8")
    config = tokenizer_config(tokenizer.get_vocab(with_added_tokens=True))
    (out / "tokenizer_config.json").write_text(
        json.dumps(config, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    avg = check_roundtrip(qwen2_pipeline(models.BPE()), out, lines)
    print(f"tiny-qwen3: {len(vocab)} tokens and {len(ADDED_TOKENS)} added, {avg:.1f} tokens/line -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the tiny-qwen3 tokenizer.")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=HERE, help="parent folder of the tokenizer")
    args = parser.parse_args()
    make_qwen3(read_corpus(args.corpus), args.out / "tiny-qwen3")


if __name__ == "__main__":
    main()
