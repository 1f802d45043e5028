"""GPT-2's own tokenizer offline, for random GPT-2s of the real vocabulary (ViPE-M's size in the
benchmarks, gpt2-medium's stand-in in the tests): rebuilt from the BPE ranks that openai-whisper ships."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from musicvid.models.internals import gpt2_vocabulary

GPT2_VOCAB = 50257
GPT2_EOS = 50256


def tokenizer_files() -> dict[str, bytes]:
    """GPT-2's vocabulary and merges (from the ranks openai-whisper ships), in GPT-2's file formats."""
    vocab, merges = gpt2_vocabulary()
    vocab["<|endoftext|>"] = len(vocab)
    files = {
        "vocab.json": json.dumps(vocab, ensure_ascii=False).encode(),
        "merges.txt": ("#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges)).encode(),
        "tokenizer_config.json": json.dumps({"model_max_length": 1024}, indent=2, sort_keys=True).encode() + b"\n",
    }
    # tokenizer.json is the same tokenizer in the `tokenizers` format, as gpt2-medium's repository has it too.
    files["tokenizer.json"] = load_tokenizer(files).backend_tokenizer.to_str().encode()
    return files


def load_tokenizer(files: dict[str, bytes]):
    """The GPT-2 tokenizer those files make, loaded as AutoTokenizer loads a repository of them (whose
    config.json names the model type, as the tokenizer's files do not)."""
    from transformers import AutoTokenizer

    with tempfile.TemporaryDirectory() as folder:
        for name, data in {**files, "config.json": json.dumps({"model_type": "gpt2"}).encode()}.items():
            Path(folder, name).write_bytes(data)
        return AutoTokenizer.from_pretrained(folder)
