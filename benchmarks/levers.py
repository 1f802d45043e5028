"""The levers benchmarks/speed.py measures, each a change to the drawing against the loop before them: the
batch and its groups, the models' memory layout and attention, torch.compile's modes, --fast, a reference
picture; and the levers that paid, combined."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

from musicvid.models.drawing import load_reference_adapter
from musicvid.settings.presets import TINY

PAYS = 1.03  # a lever is kept if it makes drawing at least 3 % faster


@dataclass(frozen=True)
class Lever:
    name: str
    what: str
    batch_size: int = 8
    within_scenes: bool = False  # the baseline's groups
    setup: Callable | None = None  # changes a copy of the pipeline
    loop: str = "draw"  # draw (render's own), ahead (every group's inputs first) or overlap (decode beside denoise)
    attention: str | None = None  # an SDPA backend to insist on
    fast: bool = False
    reference: bool = False  # every scene drawn after a reference picture (IP-Adapter)


def channels_last(pipe):
    pipe.unet.to(memory_format=torch.channels_last)
    pipe.vae.to(memory_format=torch.channels_last)


def fused_qkv(pipe):
    from diffusers import AutoencoderKL

    # diffusers: one matrix product for query, key and value (TAESD, --fast's VAE, has no attention)
    pipe.fuse_qkv_projections(vae=isinstance(pipe.vae, AutoencoderKL))


def compiled(mode: str | None):
    def setup(pipe):
        pipe.unet = torch.compile(pipe.unet, mode=mode, fullgraph=True)
        pipe.vae.decoder = torch.compile(pipe.vae.decoder, mode=mode)

    return setup


def levers(on_gpu: bool) -> list[Lever]:
    rows = [
        Lever("baseline", "groups within each scene, batch 8, eager (the loop before)", within_scenes=True),
        Lever("blocks-8", "groups across scenes by frame number, batch 8"),
        Lever("blocks-16", "groups across scenes, batch 16", batch_size=16),
        Lever("blocks-32", "groups across scenes, batch 32", batch_size=32),
        Lever("channels-last", "UNet and VAE in channels-last memory", setup=channels_last),
        Lever("fused-qkv", "fused query/key/value projections", setup=fused_qkv),
        Lever("inputs-ahead", "every group's inputs prepared first, copied from pinned memory", loop="ahead"),
        Lever("overlap-decode", "VAE decode on a second stream beside the next group's denoise", loop="overlap"),
    ]
    backends = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH") if on_gpu else ("MATH",)
    rows += [Lever(f"sdpa-{b.lower()}", f"attention by {b} only", attention=b) for b in backends]
    rows += [
        Lever("compile", "torch.compile, default mode (today's --compile)", setup=compiled(None)),
        Lever(
            "compile-autotune", "torch.compile max-autotune-no-cudagraphs", setup=compiled("max-autotune-no-cudagraphs")
        ),
        Lever("compile-cudagraphs", "torch.compile reduce-overhead (CUDA graphs)", setup=compiled("reduce-overhead")),
    ]
    rows += [
        Lever(f"fast-{b}", f"--fast: LCM-LoRA 4 steps, no guidance, TAESD; batch {b}", batch_size=b, fast=True)
        for b in (8, 16, 32)
    ]
    # the adapter's cost is its extra keys and values in every cross-attention (its image encoder runs once
    # a scene, so a random tiny one stands in for it)
    rows.append(
        Lever(
            "reference",
            "a reference picture through IP-Adapter",
            setup=lambda pipe: load_reference_adapter(pipe, TINY),
            reference=True,
        )
    )
    return rows


def combine(rows: dict[str, dict], catalogue: dict[str, Lever], fast: bool) -> Lever:
    """The levers that paid, together: the best batch, the best of each kind, and every other that paid."""
    base = rows["baseline"]["frames_per_second"]
    paid = {n: r for n, r in rows.items() if n in catalogue and r.get("frames_per_second", 0) >= PAYS * base}

    def best(prefix: str) -> Lever | None:
        named = [n for n in paid if n.startswith(prefix)]
        return catalogue[max(named, key=lambda n: paid[n]["frames_per_second"])] if named else None

    batch = best("fast-" if fast else "blocks-") or catalogue["fast-8" if fast else "blocks-8"]
    # the models' own changes first, compiling last, so that it traces the changed models
    chosen = [catalogue[n] for n in ("channels-last", "fused-qkv") if n in paid]
    chosen += [lever for lever in (best("sdpa-"), best("compile")) if lever]
    loop = next((n for n in ("inputs-ahead", "overlap-decode") if n in paid), None)
    setups = [lever.setup for lever in chosen if lever.setup]

    def setup(pipe):
        for step in setups:
            step(pipe)

    return Lever(
        "fast-kept" if fast else "kept",
        " + ".join([batch.name] + [lever.name for lever in chosen] + ([loop] if loop else [])),
        batch_size=batch.batch_size,
        setup=setup,
        loop=catalogue[loop].loop if loop else "draw",
        attention=next((lever.attention for lever in chosen if lever.attention), None),
        fast=fast,
    )


def fast_pipeline(pipe):
    """--fast's pipeline at full size: the LoRA fused into the UNet costs nothing once fused (its weights
    are the UNet's), so only the decoder changes: TAESD at its published size."""
    from diffusers import AutoencoderTiny

    torch.manual_seed(0)
    pipe.vae = AutoencoderTiny().to(pipe.device, pipe.unet.dtype)
    return pipe
