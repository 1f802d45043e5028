"""--deep-cache N: the UNet's deep features reused between denoising steps (DeepCache, Ma et al., CVPR 2024).

From one step to the next the UNet's deep blocks (every level but the outermost: the down blocks after the first,
the middle block, the up blocks before the last) change little, while its outermost level, at the latent's full
size, carries the detail. So one step in N runs the whole UNet and keeps what each deep block returned; the N−1
steps after it run only the outermost level (conv_in, the first down block, the last up block, conv_out) and take
the deep blocks' outputs as kept. A step of the outermost level alone costs about a third of a whole one at 512²
on SD 1.5 (its attention is at 4096 tokens; counted on the meta device by benchmarks.levers). Each picture is
computed as before, apart from its batch: a picture's bytes depend on its own inputs and N only, so a killed render
resumes to the same bytes. The pictures differ a little from those drawn whole: benchmarks/device.py's deep-cache
rows give the difference, and benchmarks/quality.py's score.

The steps are told apart by the timestep each UNet pass is given: it falls along one pipeline call and rises at
the next (and through the ascending inversion of a pinned picture every pass is a first step, run whole). With
--compile the hook that tells them apart is on the compiled UNet's wrapper, outside its graph, and sets one flag the
blocks read (`reuse`), so torch.compile traces two graphs: a step run whole, and a step of the outermost level.
The flag is cleared after each pass, so that a pass that does not come through the wrapper (a pinned picture
inverted by the uncompiled UNet, musicvid.pictures.conditioning) runs whole.

The same blocks carry --deep-share (musicvid.pictures.deep_share): a block run, not reused, runs on the anchors of
the group being drawn (`share`, set for its pipeline call by `sharing`) and spreads their outputs.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch

from musicvid.models.internals import deep_unet_blocks
from musicvid.pictures.deep_share import Plan, Sharing


class DeepCache:
    """Which step of its pipeline call a UNet's pass is, and so whether it reuses the deep features."""

    def __init__(self, interval: int):
        self.interval, self.step, self.last = interval, 0, None
        self.reuse = False  # (a bool, not the step: a compiled UNet's graph is traced once for each value it reads)
        self.share: Sharing | None = None

    def before_pass(self, unet, args: tuple, kwargs: dict) -> None:
        timestep = args[1] if len(args) > 1 else kwargs["timestep"]
        # (a float of a CUDA tensor waits for the GPU: once a step, microseconds beside a step of a batch)
        now = float(timestep.flatten()[0]) if isinstance(timestep, torch.Tensor) else float(timestep)
        self.step = 0 if self.last is None or now >= self.last else self.step + 1
        self.last = now
        self.reuse = self.step % self.interval != 0

    def after_pass(self, unet, args: tuple, output) -> None:
        self.reuse = False


class CachedBlock(torch.nn.Module):
    """A deep block of the UNet: run on a step that runs whole, its output kept for the steps that reuse it."""

    def __init__(self, block: torch.nn.Module, cache: DeepCache):
        super().__init__()
        self.block, self.cache, self.kept = block, cache, None

    def forward(self, *args, **kwargs):
        if self.cache.reuse and self.kept is not None:
            return self.kept
        share = self.cache.share
        self.kept = self.block(*args, **kwargs) if share is None else share.run(self.block, args, kwargs)
        return self.kept

    def __getattr__(self, name: str):
        try:
            return super().__getattr__(name)
        except AttributeError:  # what the UNet's forward reads of its blocks (has_cross_attention, resnets)
            return getattr(super().__getattr__("block"), name)


def set_deep_cache(unet: torch.nn.Module, interval: int, shares: bool = False) -> None:
    """The UNet's deep blocks reused for interval − 1 of every `interval` steps, or (1) each run every step; and
    where `shares` (--deep-share), ready to be shared between a group's pictures. Set both ways, for each render: a
    UNet kept loaded may carry the last render's. `unet`: the module the pipeline calls (with --compile,
    torch.compile's wrapper, whose blocks are the UNet's)."""
    for parent, key in deep_unet_blocks(unet):
        block = parent[key] if isinstance(key, int) else getattr(parent, key)
        if isinstance(block, CachedBlock):
            for hook in block.cache.hooks:
                hook.remove()
            block = block.block
        put(parent, key, block)
    if interval == 1 and not shares:
        return
    cache = DeepCache(interval)
    cache.hooks = (
        unet.register_forward_pre_hook(cache.before_pass, with_kwargs=True),
        unet.register_forward_hook(cache.after_pass),
    )
    for parent, key in deep_unet_blocks(unet):
        put(parent, key, CachedBlock(parent[key] if isinstance(key, int) else getattr(parent, key), cache))


def put(parent: torch.nn.Module, key: int | str, block: torch.nn.Module) -> None:
    if isinstance(key, int):
        parent[key] = block
    else:
        setattr(parent, key, block)


@contextmanager
def sharing(unet: torch.nn.Module, shared: Plan | None, device: torch.device):
    """Within it, the deep blocks of `unet` (set by set_deep_cache with `shares`) shared as `shared` plans; None:
    each picture's own."""
    if shared is None:
        yield
        return
    parent, key = deep_unet_blocks(unet)[0]  # (a down block: a CachedBlock, and so is every deep block)
    cache = parent[key].cache
    cache.share = Sharing(shared, device)
    try:
        yield
    finally:
        cache.share = None
