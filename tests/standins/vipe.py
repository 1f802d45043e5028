"""ViPE and the GPT-2 Medium it was fine-tuned from, as their repositories hold them:

- ``fittar/ViPE-M-CTX7``: README.md, config.json, generation_config.json, pytorch_model.bin. No
  tokenizer: its authors always load gpt2-medium's.
- ``openai-community/gpt2-medium`` (``gpt2-medium`` redirects here): config.json (no tokenizer class
  in it), generation_config.json, vocab.json, merges.txt, tokenizer.json, tokenizer_config.json
  holding only ``{"model_max_length": 1024}``, model.safetensors, pytorch_model.bin.

The GPT-2 vocabulary is GPT-2's own (50,257 tokens, end-of-text id 50,256), rebuilt from the BPE
ranks that openai-whisper ships (tests/fixtures/gpt2.py)."""

from __future__ import annotations

import torch
from safetensors.torch import save as safetensors_bytes

from tests.fixtures.gpt2 import GPT2_EOS, GPT2_VOCAB
from tests.standins.hub import as_json, pickled


def gpt2_config(**overrides) -> dict:
    """gpt2-medium's config.json keys; tiny sizes unless `overrides` say otherwise."""
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": GPT2_EOS,
        "embd_pdrop": 0.1,
        "eos_token_id": GPT2_EOS,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": 1024,
        "n_embd": 32,
        "n_head": 2,
        "n_layer": 2,
        "n_positions": 1024,
        "n_special": 0,
        "predict_special_tokens": True,
        "resid_pdrop": 0.1,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": GPT2_VOCAB,
        **overrides,
    }


def gpt2_state(config: dict, seed: int) -> dict[str, torch.Tensor]:
    """Random weights with the state-dict keys a GPT2LMHeadModel saves (the head is tied to wte)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(**{k: v for k, v in config.items() if k != "architectures"}))
    return {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}


def vipe_checkpoint_files(config: dict | None = None, seed: int = 1) -> dict[str, bytes]:
    """fittar/ViPE-M-CTX7: a GPT-2 Medium fine-tune saved by transformers 4.29 as a pickled .bin."""
    config = config or gpt2_config(
        _name_or_path="gpt2-medium", torch_dtype="float32", transformers_version="4.29.2", use_cache=True
    )
    state = gpt2_state(config, seed)
    # A random GPT-2 with its head tied to the input embedding mostly repeats its last input token, and
    # every input ends in end-of-text: shrink that token's embedding so the stand-in talks, as ViPE does.
    state["transformer.wte.weight"][config["eos_token_id"]] *= 0.1
    # transformers 4.29 still saved the attention masks as buffers (the .bin's BoolStorage pickle import).
    for layer in range(config["n_layer"]):
        positions = config["n_positions"]
        state[f"transformer.h.{layer}.attn.bias"] = torch.tril(torch.ones(positions, positions, dtype=torch.bool))[
            None, None
        ]
        state[f"transformer.h.{layer}.attn.masked_bias"] = torch.tensor(-1e4)
    return {
        "README.md": b"---\nlanguage:\n- en\npipeline_tag: text2text-generation\nlicense: mit\n---\n# ViPE-M-CTX7 (stand-in)\n",
        "config.json": as_json(config),
        "generation_config.json": as_json(
            {
                "_from_model_config": True,
                "bos_token_id": GPT2_EOS,
                "eos_token_id": GPT2_EOS,
                "transformers_version": "4.29.2",
            }
        ),
        "pytorch_model.bin": pickled(state),
    }


def gpt2_medium_files(tokenizer: dict[str, bytes]) -> dict[str, bytes]:
    config = gpt2_config()
    return {
        "README.md": b"---\nlanguage: en\nlicense: mit\n---\n# GPT-2 Medium (stand-in)\n",
        "config.json": as_json(config),
        "generation_config.json": as_json(
            {
                "_from_model_config": True,
                "bos_token_id": GPT2_EOS,
                "eos_token_id": GPT2_EOS,
                "transformers_version": "4.27.0.dev0",
            }
        ),
        "model.safetensors": safetensors_bytes(gpt2_state(config, seed=2)),
        **tokenizer,
    }
