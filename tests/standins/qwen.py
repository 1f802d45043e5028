"""Qwen3-4B, the text encoder of Z-Image-Turbo and FLUX.2 klein 4B, as their repositories hold it, at the tiny
sizes of musicvid.models.tiny_flow:

- tokenizer/: vocab.json, merges.txt, tokenizer.json and tokenizer_config.json (Qwen2Tokenizer; the chat template
  inline: Z-Image's folder holds these four files alone, no chat_template.jinja), the tiny Qwen3 tokenizer's files
  (assets/tokenizers/tiny-qwen3) as they are.
- text_encoder/: config.json (Qwen3-4B's 26 keys, ``architectures`` Qwen3ForCausalLM whichever class the model
  index loads it as), generation_config.json (Qwen3-4B's sampling settings), and the weights in bfloat16 under
  Qwen3ForCausalLM's names (model.embed_tokens, model.layers.N, model.norm; no lm_head.weight, the head being tied
  to the embedding: Z-Image's index lists 398 tensors, 36 layers of 11 and those two) in
  model-0000N-of-0000M.safetensors shards with model.safetensors.index.json.

Z-Image-Turbo holds Qwen3-4B's own files (transformers 4.51: its config.json is 726 bytes, its
generation_config.json 239, as these keys at the published values make them); FLUX.2 klein 4B's text_encoder/ was
saved again by a newer transformers, which writes ``dtype`` for ``torch_dtype`` and lists the 36 layers'
``layer_types`` (1.54 kB, 68 lines, as its 9B sibling's; the version written here, 4.57.3, is a guess of the same
length: the file's text was not found).
"""

from __future__ import annotations

import torch

from musicvid.core.assets import TINY_QWEN3_TOKENIZER
from musicvid.models.tiny_flow import qwen3_config
from tests.standins.hub import as_json, sharded, stored

QWEN3_TOKENIZER_FILES = ("merges.txt", "tokenizer.json", "tokenizer_config.json", "vocab.json")
QWEN3_4B_TRANSFORMERS = "4.51.0"  # the transformers version Qwen3-4B's own files name
RESAVED_TRANSFORMERS = "4.57.3"


def qwen3_tokenizer_files() -> dict[str, bytes]:
    return {f"tokenizer/{name}": (TINY_QWEN3_TOKENIZER / name).read_bytes() for name in QWEN3_TOKENIZER_FILES}


def qwen3_text_config(tokenizer, resaved: bool) -> dict:
    """text_encoder/config.json at the tiny sizes: Qwen3-4B's own, or (`resaved`) as klein's newer transformers wrote it."""
    config = {
        **qwen3_config(tokenizer),
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "hidden_act": "silu",
        "initializer_range": 0.02,
        "model_type": "qwen3",
        "rope_scaling": None,
        "sliding_window": None,
        "torch_dtype": "bfloat16",
        "transformers_version": QWEN3_4B_TRANSFORMERS,
        "use_cache": True,
        "use_sliding_window": False,
    }
    config["max_window_layers"] = config["num_hidden_layers"]
    if resaved:
        del config["torch_dtype"]
        layer_types = ["full_attention"] * config["num_hidden_layers"]
        config |= {"dtype": "bfloat16", "layer_types": layer_types, "transformers_version": RESAVED_TRANSFORMERS}
    return config


def qwen3_generation_config(tokenizer, resaved: bool) -> dict:
    """text_encoder/generation_config.json: Qwen3-4B's sampling settings for its thinking mode, with the tiny ids."""
    end, turn_end = tokenizer.convert_tokens_to_ids("<|endoftext|>"), tokenizer.eos_token_id
    return {
        "bos_token_id": end,
        "do_sample": True,
        "eos_token_id": [turn_end, end],
        "pad_token_id": end,
        "temperature": 0.6,
        "top_k": 20,
        "top_p": 0.95,
        "transformers_version": RESAVED_TRANSFORMERS if resaved else QWEN3_4B_TRANSFORMERS,
    }


def qwen3_text_encoder_files(encoder, tokenizer, shards: int, resaved: bool) -> dict[str, bytes]:
    """text_encoder/ holding `encoder` (a tiny pipeline's Qwen3Model or Qwen3ForCausalLM, whose weights these are)."""
    # the head is tied to the embedding, so saved once; Qwen3Model's names as Qwen3ForCausalLM's
    state = {name: t for name, t in encoder.state_dict().items() if name != "lm_head.weight"}
    state = {name if name.startswith("model.") else "model." + name: t for name, t in state.items()}
    weights = stored(state, torch.bfloat16)
    files = {
        "config.json": as_json(qwen3_text_config(tokenizer, resaved)),
        "generation_config.json": as_json(qwen3_generation_config(tokenizer, resaved)),
        **sharded(weights, "model", "model.safetensors.index.json", shards),
    }
    return {f"text_encoder/{name}": data for name, data in files.items()}
