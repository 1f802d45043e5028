"""Stable Diffusion 1.5 and SDXL as the one file a model site gives (`v1-5-pruned-emaonly.safetensors`,
`sd_xl_base_1.0.safetensors`): the stand-ins' own UNet, VAE and text encoders (tests/standins/sd.py, sdxl.py) under
the original (CompVis, Stability's generative-models) names; SD 1.5's with the DDPM schedule's buffers its published
file carries. Loaded, each is its stand-in repository's very weights.

The names are diffusers' conversion read backwards: the UNet's resnets at `.0` and transformers at `.1` of
`input_blocks`/`middle_block`/`output_blocks`, down-samplers as `.0.op`, up-samplers after a block's last layer;
the VAE's `down.N.block.M`, `mid.block_1/attn_1/block_2` and up blocks numbered from the bottom; CLIP ViT-L as
transformers 4 named CLIPTextModel (`text_model.`, with its position_ids); SDXL's second text encoder as OpenCLIP
names ViT-bigG (`transformer.resblocks.N`, each attention's query, key and value in one `in_proj`, the projection
stored transposed).
"""

from __future__ import annotations

import json

import torch

RESNET = [
    ("norm1", "in_layers.0"),
    ("conv1", "in_layers.2"),
    ("norm2", "out_layers.0"),
    ("conv2", "out_layers.3"),
    ("time_emb_proj", "emb_layers.1"),
    ("conv_shortcut", "skip_connection"),
]
VAE_ATTENTION = [("group_norm", "norm"), ("to_q", "q"), ("to_k", "k"), ("to_v", "v"), ("to_out.0", "proj_out")]
UNET_FIXED = {
    "time_embedding.linear_1": "time_embed.0",
    "time_embedding.linear_2": "time_embed.2",
    "conv_in": "input_blocks.0.0",
    "conv_norm_out": "out.0",
    "conv_out": "out.2",
    "add_embedding.linear_1": "label_emb.0.0",
    "add_embedding.linear_2": "label_emb.0.2",
}
OPEN_CLIP = [
    ("layer_norm1", "ln_1"),
    ("layer_norm2", "ln_2"),
    ("mlp.fc1", "mlp.c_fc"),
    ("mlp.fc2", "mlp.c_proj"),
    ("self_attn.out_proj", "attn.out_proj"),
]


def renamed(rest: str, pairs: list[tuple[str, str]]) -> str:
    """`rest` (a module path and its tensor) with its first module renamed by `pairs` (diffusers', original)."""
    head, _, tail = rest.rpartition(".")
    for new, old in pairs:
        if head == new or head.startswith(new + "."):
            return old + head[len(new) :] + "." + tail
    return rest


def unet_key(key: str, per_block: int, up_attention: set[int]) -> str:
    """One UNet2DConditionModel tensor's name in CompVis' UNetModel."""
    parts, head = key.split("."), key.rpartition(".")[0]
    if head in UNET_FIXED:
        return UNET_FIXED[head] + "." + parts[-1]
    if parts[0] == "mid_block":
        rest = ".".join(parts[3:])
        resnet = parts[1] == "resnets"
        return f"middle_block.{2 * int(parts[2])}.{renamed(rest, RESNET)}" if resnet else f"middle_block.1.{rest}"
    block, kind = int(parts[1]), parts[2]
    if parts[0] == "down_blocks" and kind == "downsamplers":
        return f"input_blocks.{(block + 1) * per_block}.0.op.{parts[-1]}"
    if parts[0] == "up_blocks" and kind == "upsamplers":
        return f"output_blocks.{(block + 1) * per_block - 1}.{2 if block in up_attention else 1}.conv.{parts[-1]}"
    rest = ".".join(parts[4:])
    blocks, first = ("input_blocks", 1) if parts[0] == "down_blocks" else ("output_blocks", 0)
    index = first + block * per_block + int(parts[3])
    return f"{blocks}.{index}.0.{renamed(rest, RESNET)}" if kind == "resnets" else f"{blocks}.{index}.1.{rest}"


def vae_key(key: str, blocks: int) -> str:
    """One AutoencoderKL tensor's name in CompVis' autoencoder."""
    parts = key.replace("conv_norm_out", "norm_out").replace("conv_shortcut", "nin_shortcut").split(".")
    side, rest = parts[0], ".".join(parts[4:])
    if len(parts) < 3 or parts[1] not in ("down_blocks", "up_blocks", "mid_block"):
        return ".".join(parts)
    if parts[1] == "mid_block":
        if parts[2] == "resnets":
            return f"{side}.mid.block_{int(parts[3]) + 1}.{rest}"
        return f"{side}.mid.attn_1.{renamed(rest, VAE_ATTENTION)}"
    number = int(parts[2]) if parts[1] == "down_blocks" else blocks - 1 - int(parts[2])
    direction = "down" if parts[1] == "down_blocks" else "up"
    if parts[3] in ("downsamplers", "upsamplers"):
        return f"{side}.{direction}.{number}.{direction}sample.{'.'.join(parts[5:])}"
    return f"{side}.{direction}.{number}.block.{rest}"


def ddpm_buffers(scheduler: dict) -> dict[str, torch.Tensor]:
    """The schedule's buffers LatentDiffusion saves with its weights (scaled-linear betas)."""
    steps, start, end = scheduler["num_train_timesteps"], scheduler["beta_start"], scheduler["beta_end"]
    betas = torch.linspace(start**0.5, end**0.5, steps, dtype=torch.float64) ** 2
    cumprod = torch.cumprod(1.0 - betas, dim=0)
    previous = torch.cat([torch.ones(1, dtype=torch.float64), cumprod[:-1]])
    variance = betas * (1.0 - previous) / (1.0 - cumprod)
    buffers = {
        "betas": betas,
        "alphas_cumprod": cumprod,
        "alphas_cumprod_prev": previous,
        "sqrt_alphas_cumprod": cumprod.sqrt(),
        "sqrt_one_minus_alphas_cumprod": (1.0 - cumprod).sqrt(),
        "log_one_minus_alphas_cumprod": (1.0 - cumprod).log(),
        "sqrt_recip_alphas_cumprod": (1.0 / cumprod).sqrt(),
        "sqrt_recipm1_alphas_cumprod": (1.0 / cumprod - 1).sqrt(),
        "posterior_variance": variance,
        "posterior_log_variance_clipped": torch.cat([variance[1:2], variance[1:]]).log(),
        "posterior_mean_coef1": betas * previous.sqrt() / (1.0 - cumprod),
        "posterior_mean_coef2": (1.0 - previous) * (1.0 - betas).sqrt() / (1.0 - cumprod),
    }
    return {name: value.float() for name, value in buffers.items()}


def open_clip(text: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A CLIPTextModelWithProjection's tensors under OpenCLIP's names."""
    text = {(k if k.startswith(("text_model.", "text_projection")) else "text_model." + k): v for k, v in text.items()}
    out = {"text_projection": text["text_projection.weight"].T}
    layers = {int(key.split(".")[3]) for key in text if key.startswith("text_model.encoder.layers.")}
    for n in layers:
        layer, block = f"text_model.encoder.layers.{n}.", f"transformer.resblocks.{n}."
        for kind in ("weight", "bias"):
            out[f"{block}attn.in_proj_{kind}"] = torch.cat([text[f"{layer}self_attn.{x}_proj.{kind}"] for x in "qkv"])
            out |= {f"{block}{old}.{kind}": text[f"{layer}{new}.{kind}"] for new, old in OPEN_CLIP}
    out["token_embedding.weight"] = text["text_model.embeddings.token_embedding.weight"]
    out["positional_embedding"] = text["text_model.embeddings.position_embedding.weight"]
    return out | {f"ln_final.{kind}": text[f"text_model.final_layer_norm.{kind}"] for kind in ("weight", "bias")}


def unet_and_vae(files: dict[str, bytes]) -> dict[str, torch.Tensor]:
    """A repository's UNet and VAE under their CompVis names."""
    from safetensors.torch import load

    config = {folder: json.loads(files[f"{folder}/config.json"]) for folder in ("unet", "vae")}
    unet = load(files["unet/diffusion_pytorch_model.safetensors"])
    vae = load(files["vae/diffusion_pytorch_model.safetensors"])
    per_block = config["unet"]["layers_per_block"] + 1
    up_attention = {int(k.split(".")[1]) for k in unet if k.startswith("up_blocks.") and ".attentions." in k}
    blocks = len(config["vae"]["up_block_types"])
    checkpoint = {"model.diffusion_model." + unet_key(k, per_block, up_attention): v for k, v in unet.items()}
    for key, value in vae.items():
        flat_attention = ".mid_block.attentions." in key and value.dim() == 2  # CompVis' are 1x1 convolutions
        checkpoint["first_stage_model." + vae_key(key, blocks)] = value[:, :, None, None] if flat_attention else value
    return checkpoint


def clip_vit_l(files: dict[str, bytes], folder: str) -> dict[str, torch.Tensor]:
    """A CLIPTextModel's tensors as transformers 4 named them, with its position_ids."""
    from safetensors.torch import load

    text = load(files[f"{folder}/model.safetensors"])
    text = {(k if k.startswith("text_model.") else "text_model." + k): v for k, v in text.items()}
    positions = json.loads(files[f"{folder}/config.json"])["max_position_embeddings"]
    return text | {"text_model.embeddings.position_ids": torch.arange(positions)[None]}


def sd15_checkpoint(sd15: dict[str, bytes]) -> bytes:
    """The stand-in repository's files `sd15` (tests.standins.sd.sd15_files) as one CompVis checkpoint's bytes."""
    from safetensors.torch import save

    checkpoint = unet_and_vae(sd15)
    checkpoint |= {"cond_stage_model.transformer." + k: v for k, v in clip_vit_l(sd15, "text_encoder").items()}
    checkpoint |= ddpm_buffers(json.loads(sd15["scheduler/scheduler_config.json"]))
    return save({k: v.contiguous() for k, v in sorted(checkpoint.items())})


def sdxl_checkpoint(sdxl: dict[str, bytes]) -> bytes:
    """The stand-in repository's files `sdxl` (tests.standins.sdxl.sdxl_files) as Stability's one file."""
    from safetensors.torch import load, save

    checkpoint = unet_and_vae(sdxl)
    checkpoint |= {"conditioner.embedders.0.transformer." + k: v for k, v in clip_vit_l(sdxl, "text_encoder").items()}
    bigg = open_clip(load(sdxl["text_encoder_2/model.safetensors"]))
    checkpoint |= {"conditioner.embedders.1.model." + k: v for k, v in bigg.items()}
    return save({k: v.contiguous() for k, v in sorted(checkpoint.items())})
