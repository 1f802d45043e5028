"""The IP-Adapter that ``--reference`` loads, as its repository holds it:

- ``h94/IP-Adapter``: models/ip-adapter_sd15.safetensors (float16: the image projection's ``image_proj.proj``
  to 4 tokens and its ``image_proj.norm``, and ``ip_adapter.N.to_k_ip`` and ``.to_v_ip`` for each
  cross-attention N = 1, 3, …, 31), models/ip-adapter_sd15.bin (the same as a pickled dict of two dicts),
  models/image_encoder/ with config.json (CLIPVisionModelWithProjection: ViT-H/14, 1280 wide, 32 layers,
  projection 1024, image size 224), model.safetensors and pytorch_model.bin in float32; README.md;
  models/ip-adapter-plus_sd15.safetensors (plus_image_proj: a resampler reading the encoder's hidden states, to 16
  tokens); models/ip-adapter-full-face_sd15.safetensors (full_face_image_proj: an MLP reading the same hidden states,
  token by token). The other SD 1.5 adapters (plus-face, light) are not read.
- its ``sdxl_models/``: ip-adapter_sdxl.safetensors and .bin as for SD 1.5, and image_encoder/
  (CLIPVisionModelWithProjection: ViT-bigG/14, 1664 wide, 48 layers, projection 1280); the vit-h and plus
  adapters beside them are not read."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models.tiny import random_ip_adapter
from musicvid.settings.presets import IP_ADAPTER, IP_ADAPTER_XL, TINY, TINY_XL
from tests.standins.hub import as_json, pickled, weights
from tests.standins.sd import tiny_unet

IP_ADAPTER_REPO = IP_ADAPTER.split("/models/")[0]
PLUS = "models/ip-adapter-plus_sd15.safetensors"
FULL_FACE = "models/ip-adapter-full-face_sd15.safetensors"
IMAGE_ENCODER_SIZES = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, projection_dim=16
)  # (SDXL's: projection 24)


def ip_adapter_folder(adapter: str, unet_name: str, projection_dim: int, seed: int) -> dict[str, bytes]:
    """One of h94/IP-Adapter's adapters (the hub file `adapter`) for the stand-in UNet `unet_name`: the
    adapter as safetensors and .bin, and the image encoder in the image_encoder/ folder beside it."""
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    encoder_config = {
        "_name_or_path": "./image_encoder",
        "architectures": ["CLIPVisionModelWithProjection"],
        "attention_dropout": 0.0,
        "dropout": 0.0,
        "hidden_act": "gelu",
        "image_size": 224,
        "initializer_factor": 1.0,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-05,
        "model_type": "clip_vision_model",
        "num_channels": 3,
        "patch_size": 14,
        "torch_dtype": "float16",
        "transformers_version": "4.28.0.dev0",
        **IMAGE_ENCODER_SIZES,
        "projection_dim": projection_dim,
    }
    torch.manual_seed(seed)
    encoder = CLIPVisionModelWithProjection(
        CLIPVisionConfig(**{k: v for k, v in encoder_config.items() if k != "architectures"})
    )
    adapter_weights = random_ip_adapter(tiny_unet(unet_name), projection_dim, seed=seed)
    half = {part: {k: v.half() for k, v in weights.items()} for part, weights in adapter_weights.items()}
    flat = {f"{part}.{k}": v for part, weights in half.items() for k, v in weights.items()}
    folder, _, file = adapter.removeprefix(IP_ADAPTER_REPO + "/").rpartition("/")
    return {
        f"{folder}/{file}": safetensors_bytes(flat),
        f"{folder}/{Path(file).stem}.bin": pickled(half),
        f"{folder}/image_encoder/config.json": as_json(encoder_config),
        **{
            f"{folder}/image_encoder/{k}": v
            for k, v in weights(encoder.state_dict(), "model", bin_stem="pytorch_model", fp16=False).items()
        },
    }


def plus_image_proj(hidden: int, text_width: int, seed: int, depth: int = 4, tokens: int = 16) -> dict:
    """IP-Adapter Plus's image projection as h94 saves it (diffusers converts it to IPAdapterPlusImageProjection): 16
    learned queries (`latents`, 64 wide: one head) reading the image encoder's hidden states (`proj_in`, `hidden`
    wide) through `depth` layers of attention (0.norm1, 0.norm2, 0.to_q, 0.to_kv, 0.to_out) and feed-forward (1.0,
    1.1, 1.3), then out to the text's width (`proj_out`, `norm_out`)."""
    generator, width = torch.Generator().manual_seed(seed), 64

    def random(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator) / shape[-1] ** 0.5

    def norm(name: str, size: int) -> dict:
        return {f"{name}.weight": torch.ones(size), f"{name}.bias": torch.zeros(size)}

    projection = {"latents": random(1, tokens, width), "proj_in.weight": random(width, hidden)}
    projection |= {"proj_in.bias": torch.zeros(width), "proj_out.weight": random(text_width, width)}
    projection |= {"proj_out.bias": torch.zeros(text_width), **norm("norm_out", text_width)}
    for layer in range(depth):
        at = f"layers.{layer}"
        projection |= {**norm(f"{at}.0.norm1", width), **norm(f"{at}.0.norm2", width), **norm(f"{at}.1.0", width)}
        projection |= {f"{at}.0.to_q.weight": random(width, width), f"{at}.0.to_kv.weight": random(2 * width, width)}
        projection |= {f"{at}.0.to_out.weight": random(width, width), f"{at}.1.1.weight": random(4 * width, width)}
        projection[f"{at}.1.3.weight"] = random(width, 4 * width)
    return projection


def full_face_image_proj(hidden: int, text_width: int, seed: int) -> dict:
    """IP-Adapter full face's image projection as h94 saves it (diffusers converts it to IPAdapterFullImageProjection):
    each of the encoder's hidden states through `proj.0` (`hidden` to `hidden`), a GELU, `proj.2` (to the text's
    width) and the layer norm `proj.3`."""
    generator = torch.Generator().manual_seed(seed)
    projection = {"proj.0.weight": torch.randn(hidden, hidden, generator=generator) / hidden**0.5}
    projection |= {"proj.2.weight": torch.randn(text_width, hidden, generator=generator) / hidden**0.5}
    projection |= {"proj.0.bias": torch.zeros(hidden), "proj.2.bias": torch.zeros(text_width)}
    return projection | {"proj.3.weight": torch.ones(text_width), "proj.3.bias": torch.zeros(text_width)}


def hidden_states_adapter(unet_name: str, hidden: int, seed: int, image_proj=plus_image_proj) -> bytes:
    """An adapter reading the image encoder's hidden states (safetensors, float16) for the stand-in UNet `unet_name`:
    Plus's, or with `image_proj` another projection (full_face_image_proj)."""
    unet = tiny_unet(unet_name)
    parts = {"image_proj": image_proj(hidden, unet.config.cross_attention_dim, seed)}
    parts["ip_adapter"] = random_ip_adapter(unet, hidden, seed=seed)["ip_adapter"]
    return safetensors_bytes({f"{part}.{k}": v.half() for part, tensors in parts.items() for k, v in tensors.items()})


def ip_adapter_files() -> dict[str, bytes]:
    """The SD 1.5 adapter (models/, its encoder ViT-H/14) and SDXL's (sdxl_models/, its encoder ViT-bigG/14)."""
    return {
        "README.md": b"---\nlicense: apache-2.0\nlanguage:\n- en\nlibrary_name: diffusers\n---\n# IP-Adapter (stand-in)\n",
        **ip_adapter_folder(IP_ADAPTER, TINY, IMAGE_ENCODER_SIZES["projection_dim"], seed=8),
        **ip_adapter_folder(IP_ADAPTER_XL, TINY_XL, 24, seed=14),
        PLUS: hidden_states_adapter(TINY, IMAGE_ENCODER_SIZES["hidden_size"], seed=9),
        FULL_FACE: hidden_states_adapter(TINY, IMAGE_ENCODER_SIZES["hidden_size"], 10, full_face_image_proj),
    }
