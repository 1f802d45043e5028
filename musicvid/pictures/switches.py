"""A pipeline for one render: the loaded models, shared, with the render's own sampler and switches
(attention slicing, --deep-cache, VAE slicing and tiling, offloading, compilation, the reference adapter's scale), and
what is read off a pipeline (where its models run, its family)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Collection

import torch

from musicvid.core.errors import UserError
from musicvid.models.internals import execution_device, has_offload_hooks, is_compiled, per_picture_reference
from musicvid.models.loading import pipeline_over
from musicvid.pictures.deep_cache import set_deep_cache
from musicvid.settings.presets import FLOW_FAMILIES, PIPELINE_FAMILIES
from musicvid.settings.render import RenderSettings

log = logging.getLogger("musicvid")


def pipeline_for(pipe, settings: RenderSettings, offloads: Collection[str] | None = None):
    """A pipeline for one render: the loaded models, shared, with a sampler of the render's own. A kept-
    loaded pipeline (batch, web page) is never changed under another render's denoising loop: its
    scheduler keeps state per call. The models' own switches below are set for this render; the callers
    run one render at a time per loaded model set (the page holds a lock). `offloads`: the memory plan's
    switches (musicvid.memory.plan), by default those the settings ask for."""
    from diffusers import DDIMScheduler, DPMSolverMultistepScheduler, FlowMatchEulerDiscreteScheduler

    from musicvid.pictures.sampler import SharedNoiseLCMScheduler

    offloads = settings.offloads_asked() if offloads is None else offloads

    # The full samplers add no noise per step, so nearby t give nearby pictures. --fast's does, but each
    # picture's noise is given, slerped like its initial latent (musicvid.pictures.sampler). The flow-matching
    # families draw with their own Euler sampler, deterministic too.
    if is_flow(pipe):
        scheduler = FlowMatchEulerDiscreteScheduler.from_config(pipe.scheduler.config)
    elif settings.fast:
        scheduler = SharedNoiseLCMScheduler.from_config(pipe.scheduler.config)
    elif settings.scheduler == "ddim":
        scheduler = DDIMScheduler.from_config(pipe.scheduler.config)
    else:
        scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config, algorithm_type="dpmsolver++")
    # Set both ways: a pipeline kept loaded (batch, web UI) may carry the last render's choice. Attention
    # slicing has no kind for the reference adapter's attention: setting it either way would drop the adapter.
    if has_reference_adapter(pipe):
        if settings.attention_slicing:
            log.warning("attention slicing does not go with reference pictures; drawing without it")
    elif not is_flow(pipe):  # (a transformer's attention has no sliced kind: refused with them, check_drawing_options)
        set_attention_slicing(pipe, "attention-slicing" in offloads)
    if "vae-slicing" in offloads:
        pipe.vae.enable_slicing()
    else:
        pipe.vae.disable_slicing()
    if "vae-tiling" in offloads:
        pipe.vae.enable_tiling()
    else:
        pipe.vae.disable_tiling()
    offload(pipe, offloads)
    # (with offloading, pipe.device says "cpu": the models run on compute_device(pipe))
    if settings.compile and not is_compiled(denoiser(pipe)):
        compile_for_throughput(pipe)
    if not is_flow(pipe):  # (after compiling: its hook on the compiled wrapper, outside the graph)
        set_deep_cache(pipe.unet, settings.deep_cache, shares=settings.deep_share > 1)
    kind = type(pipe)
    if has_reference_adapter(pipe):
        pipe.set_ip_adapter_scale(settings.reference_strength)
        kind = per_picture_reference(kind)
    own = pipeline_over(pipe, kind, scheduler=scheduler)
    own.set_progress_bar_config(disable=True)  # our own bar counts frames
    return own


# torch.compile's mode for --compile: its default. benchmarks/levers.py measures "max-autotune-no-cudagraphs" (kernels
# chosen by timing them, the choice cached with the rest) and "reduce-overhead" (CUDA graphs) beside it.
COMPILE_MODE: str | None = None


def compile_for_throughput(pipe) -> None:
    """--compile: the denoiser and the VAE's decoder compiled for throughput, once per loaded pipeline (a pipeline
    kept loaded stays compiled for later renders). Their weights in channels-last memory, the layout the fastest
    convolution kernels take (with compile, ×1.49 on an A100: fal-ai/stable-diffusion-benchmarks); every group
    padded to one batch shape (musicvid.pictures.denoise.padded_size), so each is compiled once; what was compiled
    kept in compile_cache() for the next process. By inductor unless MUSICVID_COMPILE_BACKEND names another
    backend (the tests' "eager" checks the graphs quickly)."""
    backend = compile_backend()
    mode = {"mode": COMPILE_MODE} if backend == "inductor" else {}
    compile_cache()
    # (whole for a UNet; Z-Image's transformer enters a device context, which breaks its graph there)
    whole = denoiser_name(pipe) == "unet"
    if whole:
        pipe.unet.to(memory_format=torch.channels_last)
    pipe.vae.to(memory_format=torch.channels_last)
    setattr(pipe, denoiser_name(pipe), torch.compile(denoiser(pipe), fullgraph=whole, backend=backend, **mode))
    pipe.vae.decoder = torch.compile(pipe.vae.decoder, backend=backend, **mode)


def compile_backend() -> str:
    """torch.compile's backend for --compile: MUSICVID_COMPILE_BACKEND's, else inductor; one torch does not know is
    refused before any work (musicvid.prepare), not by the first compiled step, after the storyboard."""
    backend = os.environ.get("MUSICVID_COMPILE_BACKEND", "inductor")
    if backend not in torch.compiler.list_backends(exclude_tags=()):  # with the debugging ones: the tests' "eager"
        raise UserError(
            f"MUSICVID_COMPILE_BACKEND={backend!r} is not a torch.compile backend; torch has "
            f"{', '.join(torch.compiler.list_backends())} and debugging ones such as eager"
        )
    return backend


def compile_cache() -> Path:
    """Where torch.compile keeps what it compiled (inductor's graphs, Triton's kernels, the autotuning), read by
    every later process that compiles the same models on the same GPU and torch: TORCHINDUCTOR_CACHE_DIR where a
    person set it, else musicvid's folder in the user's cache, which outlives /tmp (torch's own default)."""
    user_cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(user_cache / "musicvid" / "torch-compile"))
    return Path(os.environ["TORCHINDUCTOR_CACHE_DIR"])


def set_attention_slicing(pipe, sliced: bool) -> None:
    """The UNet's attention sliced or not, its processors replaced only where they are not so already: a
    replacement drops what the loaded models were set up with (fused query, key and value projections:
    benchmarks/speed.py), and one of another kind makes a compiled UNet compile again."""
    from diffusers.models.attention_processor import SlicedAttnAddedKVProcessor, SlicedAttnProcessor

    processors = pipe.unet.attn_processors.values()
    if any(isinstance(p, (SlicedAttnProcessor, SlicedAttnAddedKVProcessor)) for p in processors) == sliced:
        return
    if sliced:
        pipe.enable_attention_slicing()
    else:
        pipe.disable_attention_slicing()


# The devices whose models offloading keeps on the CPU between passes (on the CPU itself it would move nothing)
OFFLOADED_FROM = frozenset({"cuda"})


def offload(pipe, offloads: Collection[str]) -> None:
    """A pipeline on CUDA offloaded as `offloads` says: each model (accelerate's model offload) or each layer
    (sequential offload) on the GPU only while it runs, the weights waiting on the CPU. Else not offloaded: a
    kept-loaded pipeline a past render offloaded is back on its device, unhooked (its hooks would move every
    model on and off the GPU for a render that has the memory to keep them there)."""
    device = compute_device(pipe)  # (pipe.device says "cpu" while the models are offloaded)
    if device.type in OFFLOADED_FROM and "sequential-offload" in offloads:
        pipe.enable_sequential_cpu_offload(device=device)
    elif device.type in OFFLOADED_FROM and "model-offload" in offloads:
        pipe.enable_model_cpu_offload(device=device)
    elif any(has_offload_hooks(module) for module in pipe.components.values() if isinstance(module, torch.nn.Module)):
        pipe.remove_all_hooks()
        pipe.to(device)


def has_reference_adapter(pipe) -> bool:
    return getattr(getattr(pipe, "unet", None), "encoder_hid_proj", None) is not None


def denoiser_name(pipe) -> str:
    """The pipeline's model that denoises: Stable Diffusion's UNet, or the transformer of a flow-matching family
    or a video model."""
    return "unet" if getattr(pipe, "unet", None) is not None else "transformer"


def denoiser(pipe) -> torch.nn.Module:
    return getattr(pipe, denoiser_name(pipe))


def family_of(pipe) -> str:
    """The family (FAMILIES) of a loaded picture pipeline, by its class or the class it was made from."""
    return next(PIPELINE_FAMILIES[kind.__name__] for kind in type(pipe).__mro__ if kind.__name__ in PIPELINE_FAMILIES)


def is_flow(pipe) -> bool:
    """A picture pipeline of a flow-matching family (musicvid.pictures.flow)."""
    return family_of(pipe) in FLOW_FAMILIES


def compute_device(pipe) -> torch.device:
    """Where the pipeline's models run: their own device, or under --low-vram's offloading (the weights
    wait on the CPU between passes) the one each is moved to for its pass (the denoiser's)."""
    return execution_device(denoiser(pipe))


def is_xl(pipe) -> bool:
    """An SDXL pipeline: two text encoders, and a UNet conditioned on the pooled text and the picture's size."""
    return denoiser_name(pipe) == "unet" and pipe.unet.config.addition_embed_type == "text_time"
