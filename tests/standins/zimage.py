"""Z-Image-Turbo as its repository holds it, at the tiny sizes of musicvid.models.tiny_flow (its tiny pipeline's
weights):

- ``Tongyi-MAI/Z-Image-Turbo`` (ZImagePipeline): README.md; model_index.json (diffusers 0.36.0.dev0; the text
  encoder loaded as Qwen3Model, the tokenizer as Qwen2Tokenizer); scheduler/ (FlowMatchEulerDiscreteScheduler:
  shift 3, no dynamic shifting, its three keys alone); text_encoder/ (Qwen3-4B's own files, bfloat16 in three
  shards) and tokenizer/ (tests/standins/qwen.py); transformer/ (ZImageTransformer2DModel's 15 keys, in float32:
  24.6 GB for 6.15B weights, in three shards diffusion_pytorch_model-0000N-of-00003.safetensors with
  diffusion_pytorch_model.safetensors.index.json); vae/ (AutoencoderKL with FLUX.1's 16-channel config, bfloat16:
  168 MB for 84M weights, one diffusion_pytorch_model.safetensors). No variants, no .bin.
"""

from __future__ import annotations

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models import published as P
from musicvid.models.tiny_flow import TINY_FLOW, tiny_zimage
from musicvid.settings.presets import TINY_ZIMAGE
from tests.standins.hub import as_json, sharded, stored
from tests.standins.qwen import qwen3_text_encoder_files, qwen3_tokenizer_files

ZIMAGE_VERSION = {"_diffusers_version": "0.36.0.dev0"}


def zimage_configs() -> dict[str, dict]:
    """model_index.json and each folder's config, by file name, at TINY_FLOW's sizes."""
    sizes = TINY_FLOW[TINY_ZIMAGE]
    model_index = {
        "_class_name": "ZImagePipeline",
        **ZIMAGE_VERSION,
        "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
        "text_encoder": ["transformers", "Qwen3Model"],
        "tokenizer": ["transformers", "Qwen2Tokenizer"],
        "transformer": ["diffusers", "ZImageTransformer2DModel"],
        "vae": ["diffusers", "AutoencoderKL"],
    }
    return {
        "model_index.json": model_index,
        "scheduler/scheduler_config.json": {
            "_class_name": "FlowMatchEulerDiscreteScheduler",
            **ZIMAGE_VERSION,
            **P.ZIMAGE_SCHEDULER,
        },
        "transformer/config.json": {
            "_class_name": "ZImageTransformer2DModel",
            **ZIMAGE_VERSION,
            **sizes["transformer"],
        },
        "vae/config.json": {
            "_class_name": "AutoencoderKL",
            **ZIMAGE_VERSION,
            **sizes["vae"],
            "act_fn": "silu",
            "latents_mean": None,
            "latents_std": None,
        },
    }


def zimage_turbo_files() -> dict[str, bytes]:
    pipe = tiny_zimage()
    transformer = stored(pipe.transformer.state_dict(), torch.float32)
    shards = sharded(transformer, "diffusion_pytorch_model", "diffusion_pytorch_model.safetensors.index.json", 3)
    return {
        "README.md": b"---\nlicense: apache-2.0\npipeline_tag: text-to-image\nlibrary_name: diffusers\n---\n# Z-Image-Turbo (stand-in)\n",
        **{name: as_json(config) for name, config in zimage_configs().items()},
        **qwen3_text_encoder_files(pipe.text_encoder, pipe.tokenizer, shards=3, resaved=False),
        **qwen3_tokenizer_files(),
        **{f"transformer/{name}": data for name, data in shards.items()},
        "vae/diffusion_pytorch_model.safetensors": safetensors_bytes(stored(pipe.vae.state_dict(), torch.bfloat16)),
    }
