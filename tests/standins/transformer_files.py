"""Z-Image-Turbo's and FLUX.2 klein's transformers as the one file a model site gives: the tiny pipelines' own
transformers (musicvid.models.tiny_flow, whose weights the stand-in repositories hold), Z-Image's in its authors'
layout under `model.diffusion_model.` (diffusers' conversion read backwards: each attention's query, key and value
in one `qkv`, `out` for `to_out.0`, `q_norm`/`k_norm`, `x_embedder`/`final_layer` for the 2 × 2 patch's), klein's in
diffusers' layout, which diffusers' single-file loading takes as it is."""

from __future__ import annotations

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models.tiny_flow import tiny_klein, tiny_zimage

ZIMAGE_NAMES = [
    ("all_final_layer.2-1.", "final_layer."),
    ("all_x_embedder.2-1.", "x_embedder."),
    (".attention.to_out.0.", ".attention.out."),
    (".attention.norm_k.", ".attention.k_norm."),
    (".attention.norm_q.", ".attention.q_norm."),
]


def zimage_original(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Z-Image's transformer weights under its authors' names."""
    original = {}
    for key, tensor in state.items():
        if ".attention.to_k." in key or ".attention.to_v." in key:
            continue  # fused into qkv with to_q
        if ".attention.to_q." in key:
            parts = [state[key.replace(".to_q.", f".{p}.")] for p in ("to_q", "to_k", "to_v")]
            key, tensor = key.replace(".to_q.", ".qkv."), torch.cat(parts)
        for new, old in ZIMAGE_NAMES:
            key = key.replace(new, old)
        original["model.diffusion_model." + key] = tensor
    return original


def transformer_file(family: str, changed: bool = False, dtype: torch.dtype = torch.bfloat16) -> bytes:
    """The family's tiny transformer as a safetensors file (`changed`: each weight nudged, another fine-tune)."""
    transformer = (tiny_zimage if family == "zimage" else tiny_klein)().transformer
    state = {k: (v + 0.25 if changed else v).to(dtype).contiguous() for k, v in transformer.state_dict().items()}
    return safetensors_bytes(zimage_original(state) if family == "zimage" else state)
