#!/usr/bin/env python3
"""Build the tiny Gemma 3 tokenizer (``tiny-gemma3/``), LTX-2's text encoder's tokenizer at the size of the tiny
preset.

It is laid out as LTX-2's tokenizer folder (a saved Gemma 3 processor's tokenizer): ``tokenizer.json``
(Gemma's pipeline: spaces replaced by ▁, no pre-splitting, a BPE with byte fallback, ``<bos>`` put before every
text), ``tokenizer_config.json``, ``special_tokens_map.json`` and the chat template in ``chat_template.jinja``.
Its ids: Gemma's five control tokens (``<pad>`` 0, ``<eos>`` 1, ``<bos>`` 2, ``<unk>`` 3, ``<mask>`` 4) and
its turn markers, the 256 byte tokens ``<0x00>``-``<0xFF>``, the corpus's characters, one id per merge, then the
image tokens (Gemma 3 numbers them last too). The merges are learned from ``assets/texts/tiny_corpus.txt`` by
make_tokenizers' deterministic learner, over whole lines as SentencePiece learns them. Load with
``transformers.GemmaTokenizer``.

Run::

    python assets/tokenizers/make_gemma3_tokenizer.py [--corpus PATH] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from make_tokenizers import DEFAULT_CORPUS, HERE, learn_merges, read_corpus
from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

MERGE_TOKENS = 256
SPACE = "\u2581"
CONTROL = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"]
IMAGE = {"boi_token": "<start_of_image>", "eoi_token": "<end_of_image>", "image_token": "<image_soft_token>"}
# Gemma 3's conversation format, as its model card documents it: <bos>, then each turn <start_of_turn>role (the
# assistant's is "model"), a newline, the text trimmed, <end_of_turn> and a newline; a system message goes before
# the first user text; the generation prompt opens the model's turn
CHAT_TEMPLATE = (
    "{{ bos_token }}\n"
    "{%- if messages[0]['role'] == 'system' -%}\n"
    "    {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n"
    "{%- else -%}\n"
    '    {%- set first_user_prefix = "" -%}\n'
    "    {%- set loop_messages = messages -%}\n"
    "{%- endif -%}\n"
    "{%- for message in loop_messages -%}\n"
    "    {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}\n"
    "    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}\n"
    "    {{- message['content'] | trim }}\n"
    "    {{- '<end_of_turn>\n' }}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "    {{ '<start_of_turn>model\n' }}\n"
    "{%- endif -%}\n"
)


def gemma_pipeline(model) -> Tokenizer:
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.Replace(" ", SPACE)
    # (the spaces are gone by now: the split finds none, and pieces may span words, as SentencePiece's do)
    tokenizer.pre_tokenizer = pre_tokenizers.Split(" ", behavior="merged_with_previous", invert=False)
    tokenizer.decoder = decoders.Sequence([decoders.Replace(SPACE, " "), decoders.ByteFallback(), decoders.Fuse()])
    return tokenizer


def tokenizer_config(ids: dict[str, int]) -> dict:
    flags = dict(lstrip=False, normalized=False, rstrip=False, single_word=False, special=True)
    return {
        "add_bos_token": True,
        "add_eos_token": False,
        "added_tokens_decoder": {str(ids[t]): {"content": t, **flags} for t in [*CONTROL, *IMAGE.values()]},
        **IMAGE,
        "bos_token": "<bos>",
        "clean_up_tokenization_spaces": False,
        "eos_token": "<eos>",
        "extra_special_tokens": IMAGE,
        "model_max_length": 1000000000000000019884624838656,
        "pad_token": "<pad>",
        "processor_class": "Gemma3Processor",
        "spaces_between_special_tokens": False,
        "tokenizer_class": "GemmaTokenizer",
        "unk_token": "<unk>",
        "use_default_system_prompt": False,
    }


def special_tokens_map() -> dict:
    flags = dict(lstrip=False, normalized=False, rstrip=False, single_word=False)
    named = {"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}
    return {**IMAGE, **{name: {"content": token, **flags} for name, token in named.items()}}


def make_gemma3(lines: list[str], out: Path) -> None:
    normalized = Counter(gemma_pipeline(models.BPE()).normalizer.normalize_str(line) for line in lines)
    vocab = {token: n for n, token in enumerate(CONTROL)}
    vocab |= {f"<0x{byte:02X}>": len(vocab) + byte for byte in range(256)}
    for character in sorted(set("".join(normalized))):
        vocab.setdefault(character, len(vocab))
    merges = []
    for a, b in learn_merges(normalized, n_merges=2 * MERGE_TOKENS):
        if a + b not in vocab and len(merges) < MERGE_TOKENS:
            merges.append((a, b))
            vocab[a + b] = len(vocab)
    for token in IMAGE.values():
        vocab[token] = len(vocab)
    tokenizer = gemma_pipeline(
        models.BPE(vocab=vocab, merges=merges, unk_token="<unk>", fuse_unk=True, byte_fallback=True)
    )
    tokenizer.add_special_tokens([AddedToken(t, normalized=False, special=True) for t in [*CONTROL, *IMAGE.values()]])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A <bos> $B:1", special_tokens=[("<bos>", vocab["<bos>"])]
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "tokenizer.json").write_text(tokenizer.to_str(pretty=True) + "\n", encoding="utf-8")
    for name, data in (
        ("tokenizer_config.json", tokenizer_config(vocab)),
        ("special_tokens_map.json", special_tokens_map()),
    ):
        (out / name).write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE, encoding="utf-8")
    for line in lines:  # every corpus line comes back
        if tokenizer.decode(tokenizer.encode(line).ids, skip_special_tokens=True) != line:
            raise SystemExit(f"tiny-gemma3: round-trip failed for {line!r}")
    print(f"tiny-gemma3: {len(vocab)} tokens, {len(merges)} merges -> {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Build the tiny-gemma3 tokenizer.")
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--out", type=Path, default=HERE, help="parent folder of the tokenizer")
    args = parser.parse_args()
    make_gemma3(read_corpus(args.corpus), args.out / "tiny-gemma3")


if __name__ == "__main__":
    main()
