"""TFLOP of one --transitions video transition, counted on torch's meta device, for the video models it could
use and the slerp morph it replaces (`python -m benchmarks.transitions --flops`).

A transition is the `frames` frames from one keyframe (SD 1.5's picture) to the next, the two keyframes
included. Each model is built from its published config on torch's meta device (no weights) and run on
the shapes its diffusers pipeline passes, under torch's FLOP counter, as benchmarks/speed.py counts SD:
an estimate of cost to compare architectures by, not a time. A candidate's row gives the TFLOP of one
denoising step (both passes of classifier-free guidance where its recipe guides), of the VAE's decode of
the clip and its encode of the conditioning pictures, the transition's total (steps × step + decode +
encode), that total per second of video, the parameters (billions) and their weights in bfloat16 (GB: the
weights alone, to see whether a 24 GB card can hold them).
The total leaves out the text encoder (and FLF2V's CLIP image encoder), which run once a transition
and are given on their own; the keyframes are drawn either way, so neither is counted.
"""

from __future__ import annotations

from typing import Callable

import torch

from musicvid.models.published import (
    CLIP_VIT_H_14_PROJECTED,
    LTX_TEXT_TOKENS,
    LTX_TRANSFORMER,
    LTX_VAE,
    T5_XXL,
    WAN_FLF2V_14B,
    WAN_TEXT_TOKENS,
)
from musicvid.models.tiny import LOCAL_DIFFUSION
from musicvid.settings.geometry import DRAWN_FPS
from musicvid.settings.presets import SD15_RANDOM

UMT5_XXL_VOCAB = 256384  # Wan's text encoder, google/umt5-xxl: T5-XXL's shape with a multilingual vocabulary
# Wan-AI/Wan2.1-VACE-1.3B-diffusers transformer/config.json, less its bookkeeping keys
WAN_VACE_1_3B = dict(
    added_kv_proj_dim=None,
    attention_head_dim=128,
    cross_attn_norm=True,
    eps=1e-06,
    ffn_dim=8960,
    freq_dim=256,
    image_dim=None,
    in_channels=16,
    num_attention_heads=12,
    num_layers=30,
    out_channels=16,
    patch_size=(1, 2, 2),
    pos_embed_seq_len=None,
    qk_norm="rms_norm_across_heads",
    rope_max_seq_len=1024,
    text_dim=4096,
    vace_in_channels=96,
    vace_layers=tuple(range(0, 30, 2)),
)
# what each pipeline pads its prompts to (LTX-Video's: musicvid.models.published.LTX_TEXT_TOKENS)
SD_TEXT_TOKENS = 77
MORPH_STEPS = 25  # the app's slerp morph: each in-between frame is a picture of its own, 25 guided steps
GPU_GB = 24  # the card a person is likely to have


def tflop(run: Callable[[], object]) -> float:
    """TFLOP that torch counts in `run`."""
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        run()
    return counter.get_total_flops() / 1e12


def billions(*models: torch.nn.Module) -> float:
    return sum(p.numel() for model in models for p in model.parameters()) / 1e9


def text_encoder_counts(vocab_size: int, tokens: int, umt5: bool = False) -> tuple[torch.nn.Module, float]:
    """T5-XXL's encoder (UMT5's with `umt5`) and the TFLOP of one prompt of `tokens` tokens through it."""
    from transformers import T5Config, T5EncoderModel, UMT5Config, UMT5EncoderModel

    config = dict(T5_XXL, vocab_size=vocab_size)
    encoder = UMT5EncoderModel(UMT5Config(**config)) if umt5 else T5EncoderModel(T5Config(**config))
    # no attention mask: transformers asks a mask whether it is all ones (.item(), which the meta device
    # cannot answer), and the padded prompt costs the same with or without one
    return encoder, tflop(lambda: encoder(input_ids=torch.zeros(1, tokens, dtype=torch.long)))


def ltx_counts(width: int, height: int, frames: int) -> dict:
    """LTX-Video's parts as LTXConditionPipeline runs them, conditioned on the first and the last picture."""
    from diffusers import AutoencoderKLLTXVideo, LTXVideoTransformer3DModel

    with torch.device("meta"):
        transformer = LTXVideoTransformer3DModel(**LTX_TRANSFORMER)
        vae = AutoencoderKLLTXVideo(**LTX_VAE)
        text_encoder, text = text_encoder_counts(T5_XXL["vocab_size"], LTX_TEXT_TOKENS)
        latent = (LTX_VAE["latent_channels"], (frames - 1) // 8 + 1, height // 32, width // 32)
        # The first picture's latent takes the place of latent frame 0; the last one's (frame_index > 0)
        # is appended to the sequence as tokens of its own: one latent frame more than the clip.
        tokens = (latent[1] + 1) * latent[2] * latent[3]

        def step(batch: int) -> float:
            # as the pipeline does: a timestep per token (the conditioning tokens are less noisy), and the
            # tokens' coordinates for the rotary embedding rather than a grid, which the appended frame is not on
            return tflop(
                lambda: transformer(
                    hidden_states=torch.empty(batch, tokens, LTX_TRANSFORMER["in_channels"]),
                    encoder_hidden_states=torch.empty(batch, LTX_TEXT_TOKENS, LTX_TRANSFORMER["caption_channels"]),
                    timestep=torch.empty(batch, tokens),
                    encoder_attention_mask=torch.empty(batch, LTX_TEXT_TOKENS),
                    video_coords=torch.empty(batch, 3, tokens),
                )
            )

        return {
            "tokens": tokens,
            "step": {1: step(1), 2: step(2)},
            # decode_timestep: the 0.9.5 VAE's decoder is conditioned on a timestep
            "decode": tflop(lambda: vae.decode(torch.empty(1, *latent), torch.empty(1))),
            # each condition picture is a video of one frame, encoded on its own
            "encode": 2 * tflop(lambda: vae.encode(torch.empty(1, 3, 1, height, width))),
            "text_encode": text,
            "params": {
                "transformer": billions(transformer),
                "text_encoder": billions(text_encoder),
                "vae": billions(vae),
            },
        }


def wan_counts(width: int, height: int, frames: int, flf2v: bool) -> dict:
    """Wan 2.1's parts as WanImageToVideoPipeline (FLF2V: image and last_image) or WanVACEPipeline (VACE: a
    video of the first and last pictures with gray between, and its mask) runs them."""
    from diffusers import AutoencoderKLWan, WanTransformer3DModel, WanVACETransformer3DModel
    from transformers import CLIPVisionConfig, CLIPVisionModel

    with torch.device("meta"):
        vae = AutoencoderKLWan()  # its defaults are Wan 2.1's VAE
        text_encoder, text = text_encoder_counts(UMT5_XXL_VOCAB, WAN_TEXT_TOKENS, umt5=True)
        channels = vae.config.z_dim
        latent = ((frames - 1) // 4 + 1, height // 8, width // 8)
        tokens = latent[0] * (latent[1] // 2) * (latent[2] // 2)
        clip = torch.empty(1, 3, frames, height, width)
        parts: dict = {"params": {"text_encoder": billions(text_encoder), "vae": billions(vae)}}
        if flf2v:
            transformer = WanTransformer3DModel(**WAN_FLF2V_14B)
            image_encoder = CLIPVisionModel(CLIPVisionConfig(**CLIP_VIT_H_14_PROJECTED))
            size = CLIP_VIT_H_14_PROJECTED["image_size"]
            # its hidden states, of both pictures at once (the pipeline takes the second to last layer's)
            images = tflop(lambda: image_encoder(torch.empty(2, 3, size, size), output_hidden_states=True))
            tokens_per_image = (size // CLIP_VIT_H_14_PROJECTED["patch_size"]) ** 2 + 1

            # the latents beside the condition: 4 mask channels (the latent frames' 4 frames each) and the
            # latent of the clip given (first and last picture, zeros between)
            def forward(batch: int):
                return transformer(
                    hidden_states=torch.empty(batch, WAN_FLF2V_14B["in_channels"], *latent),
                    timestep=torch.empty(batch),
                    encoder_hidden_states=torch.empty(batch, WAN_TEXT_TOKENS, WAN_FLF2V_14B["text_dim"]),
                    encoder_hidden_states_image=torch.empty(2 * batch, tokens_per_image, WAN_FLF2V_14B["image_dim"]),
                )

            encode = tflop(lambda: vae.encode(clip))  # the whole clip, once
            parts["params"]["image_encoder"] = billions(image_encoder)
        else:
            transformer = WanVACETransformer3DModel(**WAN_VACE_1_3B)
            images = 0.0

            def forward(batch: int):
                return transformer(
                    hidden_states=torch.empty(batch, channels, *latent),
                    timestep=torch.empty(batch),
                    encoder_hidden_states=torch.empty(batch, WAN_TEXT_TOKENS, WAN_VACE_1_3B["text_dim"]),
                    # the latents of the clip's kept and masked parts (16 + 16) and the mask at 8 × 8 (64)
                    control_hidden_states=torch.empty(batch, WAN_VACE_1_3B["vace_in_channels"], *latent),
                )

            # the clip twice: its kept pixels (the two pictures) and its masked ones (the gray between)
            encode = 2 * tflop(lambda: vae.encode(clip))
        one_pass = tflop(lambda: forward(1))
        parts.update(
            tokens=tokens,
            step={1: one_pass, 2: 2 * one_pass},  # Wan's pipelines make guidance's two passes as two calls
            decode=tflop(lambda: vae.decode(torch.empty(1, channels, *latent))),
            encode=encode,
            text_encode=text,
            image_encode=images,
        )
        parts["params"]["transformer"] = billions(transformer)
        return parts


def morph_counts(width: int, height: int, frames: int) -> dict:
    """The slerp morph: each of the frames - 1 frames a morph of 5.6 s at 10 fps has (56 for 57) a picture
    of SD 1.5's of its own, counted as one batch of them all, so that its step is the transition's, as a
    video model's is. The text embeddings are the keyframes' own, slerped: no text encoder runs.
    speed.flops_per_picture counts square pictures only, so SD's models are built here from its sizes."""
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    sizes = LOCAL_DIFFUSION[SD15_RANDOM]
    pictures = frames - 1
    with torch.device("meta"):
        unet = UNet2DConditionModel(in_channels=4, out_channels=4, **sizes["unet"])
        vae = AutoencoderKL(
            down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4, **sizes["vae"]
        )
        text_encoder = CLIPTextModel(CLIPTextConfig(**sizes["text"]))
        latent = (4, height // 8, width // 8)

        def step(batch: int) -> float:
            text = torch.empty(batch, SD_TEXT_TOKENS, unet.config.cross_attention_dim)
            return tflop(lambda: unet(torch.empty(batch, *latent), torch.empty(batch), encoder_hidden_states=text))

        one_picture = {1: step(1), 2: step(2)}
        return {
            "pictures": pictures,
            "step": {batch: pictures * flops for batch, flops in one_picture.items()},
            "decode": pictures * tflop(lambda: vae.decode(torch.empty(1, *latent))),
            "encode": 0.0,
            "text_encode": 0.0,
            "params": {"unet": billions(unet), "text_encoder": billions(text_encoder), "vae": billions(vae)},
        }


def rounded(value: float) -> float:
    return float(f"{value:.4g}")


def candidate_row(parts: dict, steps: int, guidance: float, model: str, note: str, seconds: float) -> dict:
    """A candidate's row: its counted `parts` run as its recipe runs them (`steps` steps, both passes of guidance
    where `guidance` guides), for a transition of `seconds` of video."""
    batch = 2 if guidance > 1 else 1
    step = parts["step"][batch]
    total = steps * step + parts["decode"] + parts["encode"]
    params = {part: round(value, 3) for part, value in parts["params"].items()}
    weights_gb = sum(parts["params"].values()) * 2
    return {
        "model": model,
        "steps": steps,
        "guidance": guidance,
        "batch": batch,
        "tokens": parts.get("tokens"),  # the sequence the transformer attends over
        "tflop_per_step": rounded(step),
        "tflop_decode": rounded(parts["decode"]),
        "tflop_encode": rounded(parts["encode"]),
        "tflop_per_transition": rounded(total),
        "tflop_per_second_of_video": rounded(total / seconds),
        # once a transition, outside the total: the prompt (and, guided, the negative prompt)
        "tflop_text_and_image_encoders": rounded(batch * parts["text_encode"] + parts.get("image_encode", 0.0)),
        "params_billion": params,
        "bf16_gb": round(weights_gb, 1),
        # the denoiser and the VAE, with the text encoder offloaded once the prompts are encoded
        "bf16_gb_without_text_encoder": round((sum(params.values()) - params["text_encoder"]) * 2, 1),
        "fits_24gb": weights_gb < GPU_GB,
        "note": note,
    }


def shape_problem(width: int, height: int, frames: int) -> str | None:
    """Why LTX-Video cannot draw a transition of this shape, in a sentence; None where it can (Wan's 16 and 4k+1
    follow)."""
    if min(width, height) < 32 or width % 32 or height % 32 or frames < 9 or (frames - 1) % 8:
        return f"LTX-Video needs sizes divisible by 32 and 8k+1 frames (9 or more), not {width}x{height}, {frames}"
    return None


def transition_flops(width: int = 704, height: int = 384, frames: int = 57) -> dict:
    """TFLOP of one transition of `frames` frames at width × height, per candidate and recipe."""
    if problem := shape_problem(width, height, frames):
        raise ValueError(problem)
    seconds = (frames - 1) / DRAWN_FPS  # the morph's length at the app's drawing rate: 5.6 s for 57 frames
    ltx = ltx_counts(width, height, frames)
    vace, flf2v = wan_counts(width, height, frames, flf2v=False), wan_counts(width, height, frames, flf2v=True)
    morph = morph_counts(width, height, frames)
    # name: (counted parts, steps, guidance, the model named, note)
    recipes = {
        "ltx-video-0.9.5": (
            ltx,
            40,
            3.0,
            "Lightricks/LTX-Video-0.9.5",
            "40 steps (--transition-steps' default), LTXConditionPipeline's guidance",
        ),
        "ltx-video-distilled": (
            ltx,
            8,
            1.0,
            "Lightricks/LTX-Video-0.9.8-2B-distilled",
            "the same 2B transformer and VAE, 8 steps without guidance, at full size (its recipe's spatial "
            "upsampler pass left out)",
        ),
        "wan-2.1-vace-1.3b": (
            vace,
            50,
            5.0,
            "Wan-AI/Wan2.1-VACE-1.3B-diffusers",
            "WanVACEPipeline's steps and guidance",
        ),
        "wan-2.1-flf2v-14b": (
            flf2v,
            50,
            5.0,
            "Wan-AI/Wan2.1-FLF2V-14B-720P-diffusers",
            f"the 14B transformer ({flf2v['params']['transformer']:.1f}B parameters with its image cross-attention) "
            f"is {flf2v['params']['transformer'] * 2:.0f} GB in bfloat16 by itself: over 24 GB, so only offloaded or "
            "quantized; trained at 720p",
        ),
        "slerp-sd15": (
            morph,
            MORPH_STEPS,
            7.5,
            "SD 1.5 (today's morph)",
            f"{morph['pictures']} pictures of {MORPH_STEPS} guided steps and a decode each",
        ),
    }
    candidates = {name: candidate_row(*recipe, seconds) for name, recipe in recipes.items()}
    return {
        "width": width,
        "height": height,
        "frames": frames,
        "seconds_of_video": seconds,
        "candidates": candidates,
    }
