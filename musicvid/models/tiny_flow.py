"""The flow-matching picture families' tiny pipelines: Z-Image-Turbo's and FLUX.2 klein 4B's diffusers classes with
random weights, built here from a fixed seed with no download, as musicvid.models.tiny builds Stable Diffusion's.

Both families read a prompt through Qwen3-4B after Qwen3's chat template; here the text encoder is TINY_QWEN3
wide and its tokenizer the tiny one of assets/tokenizers/tiny-qwen3 (Qwen3's special tokens and conversation
format over a vocabulary of 512). Every size is defined here once: the tests' stand-ins of the two repositories
(tests/standins/zimage.py, klein.py, qwen.py) and the benchmarks' --dry-run (benchmarks/families.py) build these.
"""

from __future__ import annotations

import math

import torch

from musicvid.core.assets import TINY_QWEN3_TOKENIZER
from musicvid.models import published as P
from musicvid.models.tiny import TINY_SEED
from musicvid.settings.presets import KNOWN_FAMILIES, TINY_KLEIN, TINY_ZIMAGE

# Qwen3-4B (2560 wide, 32 query and 8 key-value heads of 128) at 32 wide, 4 query and 2 key-value heads of 8.
# Its 36 layers stay: Z-Image reads the second-to-last of its 37 hidden states, klein the 9th, 18th and 27th,
# none of them the last (which the final norm has gone over).
TINY_QWEN3 = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=P.QWEN3_4B["num_hidden_layers"], num_attention_heads=4,
    num_key_value_heads=2, head_dim=8,
)  # fmt: skip
QWEN3_VOCAB_MULTIPLE = 64  # the embedding has rows past the added tokens, as Qwen3's 151936 has past its 151669

# Each family's transformer and VAE, cut to a layer or two a few channels wide. What ties them is kept: each
# attention head's width is the sum of its rotary axes; Z-Image's transformer reads one hidden state of Qwen3
# (cap_feat_dim), klein's three side by side (joint_attention_dim); Z-Image's VAE keeps FLUX.1's 16 latent
# channels, klein's patchifies its latents 2 x 2 into the transformer's input channels.
TINY_FLOW = {
    TINY_ZIMAGE: {
        "transformer": {
            **P.ZIMAGE_TRANSFORMER, "dim": 64, "n_layers": 1, "n_refiner_layers": 1, "n_heads": 2, "n_kv_heads": 2,
            "axes_dims": (8, 12, 12), "cap_feat_dim": TINY_QWEN3["hidden_size"],
        },
        "vae": {**P.FLUX1_VAE, "block_out_channels": (16, 16, 16, 16), "norm_num_groups": 8, "layers_per_block": 1},
    },
    TINY_KLEIN: {
        "transformer": {
            **P.KLEIN_TRANSFORMER, "num_layers": 1, "num_single_layers": 1, "attention_head_dim": 16,
            "num_attention_heads": 2, "axes_dims_rope": (4, 4, 4, 4), "in_channels": 8 * 2 * 2,
            "joint_attention_dim": len(P.KLEIN_TEXT_LAYERS) * TINY_QWEN3["hidden_size"],
        },
        "vae": {
            **P.FLUX2_VAE, "block_out_channels": (16, 16, 16, 16), "norm_num_groups": 8, "layers_per_block": 1,
            "latent_channels": 8,
        },
    },
}  # fmt: skip


def tiny_qwen3_tokenizer():
    from transformers import Qwen2Tokenizer

    return Qwen2Tokenizer.from_pretrained(TINY_QWEN3_TOKENIZER)


def qwen3_config(tokenizer) -> dict:
    """Qwen3-4B's config at TINY_QWEN3's sizes, with the vocabulary and the ids of `tokenizer` (the tiny one)."""
    rows = QWEN3_VOCAB_MULTIPLE * math.ceil(len(tokenizer) / QWEN3_VOCAB_MULTIPLE)
    ids = dict(bos_token_id=tokenizer.convert_tokens_to_ids("<|endoftext|>"), eos_token_id=tokenizer.eos_token_id)
    return {**P.QWEN3_4B, **TINY_QWEN3, "vocab_size": rows, **ids}


def flow_classes(family: str) -> dict:
    """The pipeline, text encoder, transformer and VAE classes of the flow-matching `family` (FLOW_FAMILIES)."""
    from diffusers import (
        AutoencoderKL,
        AutoencoderKLFlux2,
        Flux2KleinPipeline,
        Flux2Transformer2DModel,
        ZImagePipeline,
        ZImageTransformer2DModel,
    )
    from transformers import Qwen3ForCausalLM, Qwen3Model

    if family == "zimage":
        return dict(
            pipeline=ZImagePipeline, text_encoder=Qwen3Model, transformer=ZImageTransformer2DModel, vae=AutoencoderKL
        )
    # klein's text encoder keeps Qwen3's language-model head, which it never runs
    return dict(
        pipeline=Flux2KleinPipeline,
        text_encoder=Qwen3ForCausalLM,
        transformer=Flux2Transformer2DModel,
        vae=AutoencoderKLFlux2,
    )


def flow_modules(family: str, text: dict, transformer: dict, vae: dict) -> dict:
    """The text encoder, transformer and VAE of the flow-matching `family` from their configs (each a dict; the
    text encoder's a Qwen3Config's), built in this order (a seeded build draws their weights so)."""
    from transformers import Qwen3Config

    classes = flow_classes(family)
    return {
        "text_encoder": classes["text_encoder"](Qwen3Config(**text)),
        "transformer": classes["transformer"].from_config(transformer),
        "vae": classes["vae"].from_config(vae),
    }


def tiny_flow_pipeline(name: str):
    """The pipeline of the family `name` at TINY_FLOW's sizes, its modules built in a fixed order from TINY_SEED."""
    from diffusers import FlowMatchEulerDiscreteScheduler

    classes = flow_classes(KNOWN_FAMILIES[name])
    tokenizer = tiny_qwen3_tokenizer()
    torch.manual_seed(TINY_SEED)
    modules = flow_modules(KNOWN_FAMILIES[name], qwen3_config(tokenizer), **TINY_FLOW[name])
    for module in modules.values():
        module.eval()  # as from_pretrained leaves them
    if name == TINY_ZIMAGE:
        scheduler = FlowMatchEulerDiscreteScheduler(**P.ZIMAGE_SCHEDULER)
        return classes["pipeline"](scheduler=scheduler, tokenizer=tokenizer, **modules)
    scheduler = FlowMatchEulerDiscreteScheduler(**P.KLEIN_SCHEDULER)
    # klein 4B is distilled, as its model index says: it draws without classifier-free guidance
    return classes["pipeline"](scheduler=scheduler, tokenizer=tokenizer, is_distilled=True, **modules)


def tiny_zimage():
    return tiny_flow_pipeline(TINY_ZIMAGE)


def tiny_klein():
    return tiny_flow_pipeline(TINY_KLEIN)


FLOW_DIFFUSION = {TINY_ZIMAGE: tiny_zimage, TINY_KLEIN: tiny_klein}
