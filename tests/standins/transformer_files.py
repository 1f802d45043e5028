"""Z-Image-Turbo's and FLUX.2 klein's transformers as the one file a model site gives: the tiny pipelines' own
transformers (musicvid.models.tiny_flow, whose weights the stand-in repositories hold), Z-Image's in its authors'
layout under `model.diffusion_model.` (diffusers' conversion read backwards: each attention's query, key and value
in one `qkv`, `out` for `to_out.0`, `q_norm`/`k_norm`, `x_embedder`/`final_layer` for the 2 × 2 patch's), klein's in
diffusers' layout, which diffusers' single-file loading takes as it is, or in Black Forest Labs' (klein_original:
`double_blocks`, `single_blocks`, `img_in`, ...), under `model.diffusion_model.` as ComfyUI saves it."""

from __future__ import annotations

import re

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


# FLUX.2's names, diffusers' (as its converter writes them) to Black Forest Labs': outside the blocks, in the double
# blocks (each attention's query, key and value fused in one `qkv`), in the single blocks
KLEIN_OUTSIDE = {
    "x_embedder": "img_in",
    "context_embedder": "txt_in",
    "time_guidance_embed.timestep_embedder.linear_1": "time_in.in_layer",
    "time_guidance_embed.timestep_embedder.linear_2": "time_in.out_layer",
    **{f"{m}.linear": f"{m}.lin" for m in ("double_stream_modulation_img", "double_stream_modulation_txt")},
    "single_stream_modulation.linear": "single_stream_modulation.lin",
    "proj_out": "final_layer.linear",
}
KLEIN_DOUBLE = {
    **{f"attn.norm_{q}": f"img_attn.norm.{n}_norm" for q, n in (("q", "query"), ("k", "key"))},
    **{f"attn.norm_added_{q}": f"txt_attn.norm.{n}_norm" for q, n in (("q", "query"), ("k", "key"))},
    "attn.to_out.0": "img_attn.proj",
    "attn.to_add_out": "txt_attn.proj",
    **{f"ff.linear_{io}": f"img_mlp.{n}" for io, n in (("in", 0), ("out", 2))},
    **{f"ff_context.linear_{io}": f"txt_mlp.{n}" for io, n in (("in", 0), ("out", 2))},
}
KLEIN_SINGLE = {"attn.to_qkv_mlp_proj": "linear1", "attn.to_out": "linear2"}
KLEIN_SINGLE |= {f"attn.norm_{q}": f"norm.{n}_norm" for q, n in (("q", "query"), ("k", "key"))}
QKV = {"img": ("to_q", "to_k", "to_v"), "txt": ("add_q_proj", "add_k_proj", "add_v_proj")}


def klein_original(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """FLUX.2 klein's transformer weights under Black Forest Labs' names (a norm's weight is its `scale`; the last
    modulation's shift and scale halves in their order), under `model.diffusion_model.`."""
    original = {}
    for key, tensor in state.items():
        name, part = key.rsplit(".", 1)
        if block := re.fullmatch(r"transformer_blocks\.(\d+)\.(.+)", name):
            number, inner = block.groups()
            for stream, names in QKV.items():
                if inner == f"attn.{names[0]}":
                    fused = [state[f"transformer_blocks.{number}.attn.{n}.{part}"] for n in names]
                    original[f"double_blocks.{number}.{stream}_attn.qkv.{part}"] = torch.cat(fused)
            if inner in KLEIN_DOUBLE:
                name = f"double_blocks.{number}.{KLEIN_DOUBLE[inner]}"
            else:
                continue  # (fused above)
        elif block := re.fullmatch(r"single_transformer_blocks\.(\d+)\.(.+)", name):
            name = f"single_blocks.{block[1]}.{KLEIN_SINGLE[block[2]]}"
        elif name == "norm_out.linear":
            name, tensor = "final_layer.adaLN_modulation.1", torch.cat(tensor.chunk(2)[::-1])
        else:
            name = KLEIN_OUTSIDE[name]
        part = "scale" if name.endswith("_norm") and part == "weight" else part
        original[f"{name}.{part}"] = tensor
    return {f"model.diffusion_model.{key}": tensor for key, tensor in original.items()}


def transformer_file(
    family: str, changed: bool = False, dtype: torch.dtype = torch.bfloat16, bfl: bool = False
) -> bytes:
    """The family's tiny transformer as a safetensors file (`changed`: each weight nudged, another fine-tune; `bfl`:
    klein's in Black Forest Labs' layout)."""
    transformer = (tiny_zimage if family == "zimage" else tiny_klein)().transformer
    state = {k: (v + 0.25 if changed else v).to(dtype).contiguous() for k, v in transformer.state_dict().items()}
    return safetensors_bytes(zimage_original(state) if family == "zimage" else klein_original(state) if bfl else state)
