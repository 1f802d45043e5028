"""Stable Diffusion 1.5 as the one file a model site gives (`v1-5-pruned-emaonly.safetensors`): the SD 1.5
stand-in's own UNet, VAE and text encoder (tests/standins/sd.py) under the original (CompVis) names, with the
DDPM schedule's buffers the published file carries, float32. Loaded, it is the stand-in repository's very weights.

The names are diffusers' conversion read backwards: the UNet's resnets at `.0` and transformers at `.1` of
`input_blocks`/`middle_block`/`output_blocks`, down-samplers as `.0.op`, up-samplers after a block's last layer;
the VAE's `down.N.block.M`, `mid.block_1/attn_1/block_2` and up blocks numbered from the bottom; the text
encoder as transformers 4 named CLIPTextModel (`text_model.`, with its position_ids).
"""

from __future__ import annotations

import json

import torch

RESNET = [("norm1", "in_layers.0"), ("conv1", "in_layers.2"), ("norm2", "out_layers.0"), ("conv2", "out_layers.3"),
          ("time_emb_proj", "emb_layers.1"), ("conv_shortcut", "skip_connection")]  # fmt: skip
VAE_ATTENTION = [("group_norm", "norm"), ("to_q", "q"), ("to_k", "k"), ("to_v", "v"), ("to_out.0", "proj_out")]
UNET_FIXED = {"time_embedding.linear_1": "time_embed.0", "time_embedding.linear_2": "time_embed.2",
              "conv_in": "input_blocks.0.0", "conv_norm_out": "out.0", "conv_out": "out.2"}  # fmt: skip


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


def sd15_checkpoint(sd15: dict[str, bytes]) -> bytes:
    """The stand-in repository's files `sd15` (tests.standins.sd.sd15_files) as one CompVis checkpoint's bytes."""
    from safetensors.torch import load, save

    config = {folder: json.loads(sd15[f"{folder}/config.json"]) for folder in ("unet", "vae", "text_encoder")}
    unet = load(sd15["unet/diffusion_pytorch_model.safetensors"])
    vae = load(sd15["vae/diffusion_pytorch_model.safetensors"])
    text = load(sd15["text_encoder/model.safetensors"])
    per_block = config["unet"]["layers_per_block"] + 1
    up_attention = {int(k.split(".")[1]) for k in unet if k.startswith("up_blocks.") and ".attentions." in k}
    blocks = len(config["vae"]["up_block_types"])
    checkpoint = {"model.diffusion_model." + unet_key(k, per_block, up_attention): v for k, v in unet.items()}
    for key, value in vae.items():
        flat_attention = ".mid_block.attentions." in key and value.dim() == 2  # CompVis' are 1x1 convolutions
        checkpoint["first_stage_model." + vae_key(key, blocks)] = value[:, :, None, None] if flat_attention else value
    text = {(k if k.startswith("text_model.") else "text_model." + k): v for k, v in text.items()}
    text["text_model.embeddings.position_ids"] = torch.arange(config["text_encoder"]["max_position_embeddings"])[None]
    checkpoint |= {"cond_stage_model.transformer." + k: v for k, v in text.items()}
    checkpoint |= ddpm_buffers(json.loads(sd15["scheduler/scheduler_config.json"]))
    return save({k: v.contiguous() for k, v in sorted(checkpoint.items())})
