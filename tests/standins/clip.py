"""CLIP's text encoders and tokenizer as the Stable Diffusion repositories and the scorer's hold them; the
tokenizer's vocabulary is the small one the tiny preset uses."""

from __future__ import annotations

import json

import torch

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from tests.standins.hub import as_json


def clip_text_config(architecture: str, **keys) -> dict:
    """A CLIP text encoder's config.json as SD's and SDXL's repositories hold them, ids and all: their
    bos/eos ids (0 and 2) never matched their tokenizers (2 tells transformers to pool at the highest id)."""
    vocab = json.loads((TINY_CLIP_TOKENIZER / "vocab.json").read_text(encoding="utf-8"))
    config = {
        "architectures": [architecture],
        "attention_dropout": 0.0,
        "bos_token_id": 0,
        "dropout": 0.0,
        "eos_token_id": 2,
        "hidden_act": "quick_gelu",
        "initializer_factor": 1.0,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-05,
        "max_position_embeddings": 77,
        "model_type": "clip_text_model",
        "pad_token_id": 1,
        "vocab_size": len(vocab),
        **keys,
    }
    return dict(sorted(config.items()))


def clip_text_encoder(config: dict, seed: int):
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    torch.manual_seed(seed)
    model = CLIPTextModelWithProjection if config["architectures"] == ["CLIPTextModelWithProjection"] else CLIPTextModel
    return model(CLIPTextConfig(**{k: v for k, v in config.items() if k != "architectures"}))


def clip_tokenizer_files(folder: str, pad_token: str, **keys) -> dict[str, bytes]:
    """A CLIP tokenizer's four files (the tiny vocabulary) as SD's and SDXL's repositories hold them."""
    token = {"lstrip": False, "normalized": True, "rstrip": False, "single_word": False}
    start, end = {"content": "<|startoftext|>", **token}, {"content": "<|endoftext|>", **token}
    config = {
        "add_prefix_space": False,
        "bos_token": {"__type": "AddedToken", **start},
        "do_lower_case": True,
        "eos_token": {"__type": "AddedToken", **end},
        "errors": "replace",
        "model_max_length": 77,
        "pad_token": pad_token,
        "tokenizer_class": "CLIPTokenizer",
        "unk_token": {"__type": "AddedToken", **end},
        **keys,
    }
    return {
        f"{folder}/vocab.json": (TINY_CLIP_TOKENIZER / "vocab.json").read_bytes(),
        f"{folder}/merges.txt": (TINY_CLIP_TOKENIZER / "merges.txt").read_bytes(),
        f"{folder}/tokenizer_config.json": as_json(dict(sorted(config.items()))),
        f"{folder}/special_tokens_map.json": as_json(
            {"bos_token": start, "eos_token": end, "pad_token": pad_token, "unk_token": end}
        ),
    }
