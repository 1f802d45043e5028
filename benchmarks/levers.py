"""The rows benchmarks/speed.py measures (and benchmarks/device.py's sd15 section), each one change to how the render
draws today against its baseline: the batch, the memory layout, the UNet's attention backend, torch.compile's
modes (musicvid's own --compile), --deep-cache, --deep-share, --fast, a reference picture. Where a row is a musicvid option, it
is drawn through musicvid's own code for it (the settings it sets), so that the row measures what a person gets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import torch

from musicvid.models.drawing import load_reference_adapter
from musicvid.settings.presets import TINY


@dataclass(frozen=True)
class Lever:
    name: str
    what: str
    batch_size: int | None = None  # None: the baseline's (the memory plan's on this card, as a render takes it)
    setup: Callable | None = None  # changes a copy of the pipeline
    settings: dict = field(default_factory=dict)  # musicvid's own options it sets (--compile, --deep-cache)
    compile_mode: str | None = None  # torch.compile's mode, for --compile (musicvid.pictures.switches.COMPILE_MODE)
    fast: bool = False
    reference: bool = False  # every scene drawn after a reference picture (IP-Adapter)
    warm_up: int = 1  # groups drawn before the clock
    profiled: bool = False  # one more group, profiled (benchmarks.profile_split)
    like: str | None = "baseline"  # the row whose pictures its own are compared with (None: others altogether)
    changes_pictures: bool = False  # its pictures differ from those by more than rounding


def channels_last(pipe):
    pipe.unet.to(memory_format=torch.channels_last)
    pipe.vae.to(memory_format=torch.channels_last)


def fused_qkv(pipe):
    from diffusers import AutoencoderKL

    # diffusers: one matrix product for query, key and value (TAESD, --fast's VAE, has no attention)
    pipe.fuse_qkv_projections(vae=isinstance(pipe.vae, AutoencoderKL))


class UNetAttention:
    """diffusers' attention processor for torch's SDPA (AttnProcessor2_0), under one backend: set on the UNet
    alone, as the VAE's middle block has one head of 512, which neither flash nor cuDNN takes."""

    def __init__(self, backend: str):
        from diffusers.models.attention_processor import AttnProcessor2_0
        from torch.nn.attention import SDPBackend

        self.backend, self.inner = getattr(SDPBackend, backend), AttnProcessor2_0()

    def __call__(self, attn, hidden_states, *args, **kwargs):
        from torch.nn.attention import sdpa_kernel

        with sdpa_kernel([self.backend]):
            return self.inner(attn, hidden_states, *args, **kwargs)


def unet_attention(backend: str) -> Callable:
    return lambda pipe: pipe.unet.set_attn_processor(UNetAttention(backend))


def fast_pipeline(pipe):
    """--fast's pipeline at full size: the LoRA fused into the UNet costs nothing once fused (its weights
    are the UNet's), so only the decoder changes: TAESD at its published size."""
    from diffusers import AutoencoderTiny

    torch.manual_seed(0)
    pipe.vae = AutoencoderTiny().to(pipe.device, pipe.unet.dtype)
    return pipe


def levers(on_gpu: bool) -> list[Lever]:
    compiled = dict(settings={"compile": True}, warm_up=2)  # (the first call compiles, the second may settle)
    rows = [
        Lever("baseline", "render's loop as it draws today: eager, the memory plan's batch", profiled=True),
        Lever("batch-1", "one picture at a time: the keyframes as they were drawn before", batch_size=1),
        Lever("batch-8", "8 at a time: the batch before the memory plan chose it", batch_size=8),
        Lever("batch-32", "32 at a time", batch_size=32),
        Lever("channels-last", "UNet and VAE in channels-last memory, eager", setup=channels_last),
        Lever("fused-qkv", "fused query/key/value projections, eager", setup=fused_qkv),
    ]
    # (on the CPU, which has none of them, each row draws with MATH: a dry run checks the rows' mechanics)
    for backend in ("FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION"):
        name, setup = f"attention-unet-{backend.split('_')[0].lower()}", unet_attention(backend if on_gpu else "MATH")
        rows.append(Lever(name, f"the UNet's attention by {backend} only", setup=setup))
    rows += [
        Lever("compile", "--compile: channels-last, one batch shape, torch.compile's default mode", profiled=True,
              **compiled),
        Lever("compile-autotune", "--compile with max-autotune-no-cudagraphs (kernels chosen by timing them)",
              compile_mode="max-autotune-no-cudagraphs", **compiled),
        Lever("compile-cudagraphs", "--compile with reduce-overhead (CUDA graphs)", compile_mode="reduce-overhead",
              **compiled),
        Lever("deep-cache-2", "--deep-cache 2: the UNet's deep blocks every other step", settings={"deep_cache": 2},
              changes_pictures=True),
        Lever("deep-cache-3", "--deep-cache 3: the UNet's deep blocks one step in 3", settings={"deep_cache": 3},
              changes_pictures=True),
        Lever("compile-deep-cache-3", "--compile --deep-cache 3: two compiled graphs, a whole step and a shallow one",
              changes_pictures=True, **(compiled | {"settings": {"compile": True, "deep_cache": 3}})),
        Lever("deep-share-2", "--deep-share 2: the UNet's deep blocks on one in-between frame in 2, blended between",
              settings={"deep_share": 2}, changes_pictures=True),
        Lever("deep-share-2-cache-3", "--deep-share 2 --deep-cache 3: shared between frames and between steps",
              settings={"deep_share": 2, "deep_cache": 3}, changes_pictures=True),
        Lever("compile-deep-share-2-cache-3", "--compile --deep-share 2 --deep-cache 3: every lever of the 25 steps",
              changes_pictures=True, **(compiled | {"settings": {"compile": True, "deep_share": 2, "deep_cache": 3}})),
    ]  # fmt: skip
    rows += [
        Lever("fast", "--fast: LCM-LoRA 4 steps, no guidance, TAESD; the baseline's batch", fast=True, profiled=True,
              like=None),
        Lever("fast-32", "--fast, 32 at a time", batch_size=32, fast=True, like="fast"),
        Lever("fast-compile-32", "--fast --compile, 32 at a time", batch_size=32, fast=True, like="fast", **compiled),
        # the adapter's cost is its extra keys and values in every cross-attention (its image encoder runs once
        # a scene, so a random tiny one stands in for it)
        Lever("reference", "a reference picture through IP-Adapter",
              setup=lambda pipe: load_reference_adapter(pipe, TINY), reference=True, like=None),
    ]  # fmt: skip
    return rows
