"""FLUX.2 klein 4B as its repository holds it, at the tiny sizes of musicvid.models.tiny_flow (its tiny pipeline's
weights):

- ``black-forest-labs/FLUX.2-klein-4B`` (Flux2KleinPipeline): README.md; model_index.json (diffusers 0.37.0.dev0,
  ``is_distilled``; the text encoder Qwen3ForCausalLM, the tokenizer Qwen2TokenizerFast); scheduler/ (klein's own
  file was not found: FLUX.2-dev's keys, with dynamic shifting, which the pipeline's empirical mu needs);
  text_encoder/ (as a newer transformers saved Qwen3-4B again, bfloat16 in two shards) and tokenizer/ (Qwen3's
  four files, as Z-Image's: their tokenizer.json is the same file) from tests/standins/qwen.py; transformer/
  (Flux2Transformer2DModel's 14 keys, bfloat16 in one diffusion_pytorch_model.safetensors: 7.75 GB for 3.9B weights,
  under diffusers' 10 GB shard size, as the listing's size says; the folder's own listing was not found); vae/
  (AutoencoderKLFlux2 with FLUX.2-dev's config, ``_name_or_path`` and all, bfloat16: 168 MB). The root's
  flux-2-klein-4b.safetensors, BFL's own single file, is left out: diffusers does not read it.
"""

from __future__ import annotations

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models import published as P
from musicvid.models.tiny_flow import TINY_FLOW, tiny_klein
from musicvid.settings.presets import TINY_KLEIN
from tests.standins.hub import as_json, stored
from tests.standins.qwen import qwen3_text_encoder_files, qwen3_tokenizer_files

KLEIN_VERSION = {"_diffusers_version": "0.37.0.dev0"}


def klein_configs() -> dict[str, dict]:
    """model_index.json and each folder's config, by file name, at TINY_FLOW's sizes."""
    sizes = TINY_FLOW[TINY_KLEIN]
    model_index = {
        "_class_name": "Flux2KleinPipeline",
        **KLEIN_VERSION,
        "is_distilled": True,
        "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
        "text_encoder": ["transformers", "Qwen3ForCausalLM"],
        "tokenizer": ["transformers", "Qwen2TokenizerFast"],
        "transformer": ["diffusers", "Flux2Transformer2DModel"],
        "vae": ["diffusers", "AutoencoderKLFlux2"],
    }
    scheduler = {
        "_class_name": "FlowMatchEulerDiscreteScheduler",
        **KLEIN_VERSION,
        **P.KLEIN_SCHEDULER,
        "invert_sigmas": False,
        "shift_terminal": None,
        "stochastic_sampling": False,
        "use_beta_sigmas": False,
        "use_exponential_sigmas": False,
        "use_karras_sigmas": False,
    }
    transformer = {
        "_class_name": "Flux2Transformer2DModel",
        **KLEIN_VERSION,
        **sizes["transformer"],
        "out_channels": None,
    }
    vae = {
        "_class_name": "AutoencoderKLFlux2",
        **KLEIN_VERSION,
        "_name_or_path": "black-forest-labs/FLUX.2-dev",
        **sizes["vae"],
        "act_fn": "silu",
        "force_upcast": True,
    }
    return {
        "model_index.json": model_index,
        "scheduler/scheduler_config.json": scheduler,
        "transformer/config.json": transformer,
        "vae/config.json": vae,
    }


def flux2_klein_files() -> dict[str, bytes]:
    pipe = tiny_klein()
    return {
        "README.md": b"---\nlicense: apache-2.0\npipeline_tag: image-to-image\nlibrary_name: diffusers\n---\n# FLUX.2 [klein] 4B (stand-in)\n",
        **{name: as_json(config) for name, config in klein_configs().items()},
        **qwen3_text_encoder_files(pipe.text_encoder, pipe.tokenizer, shards=2, resaved=True),
        **qwen3_tokenizer_files(),
        "transformer/diffusion_pytorch_model.safetensors": safetensors_bytes(
            stored(pipe.transformer.state_dict(), torch.bfloat16)
        ),
        "vae/diffusion_pytorch_model.safetensors": safetensors_bytes(stored(pipe.vae.state_dict(), torch.bfloat16)),
    }
