"""--deep-cache N (musicvid.pictures.deep_cache): the UNet's deep blocks run one step in N, each picture depends on its
own inputs and N alone (so a resume draws the same bytes), a pipeline kept loaded is set both ways, the keys of
pictures drawn without it stay, and the families and switches it does not go with are refused before any work."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from musicvid.core.errors import UserError
from musicvid.models.drawing import check_drawing_options
from musicvid.models.internals import deep_unet_blocks, is_compiled
from musicvid.models.timing import Timings
from musicvid.models.tiny import local_diffusion
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.deep_cache import CachedBlock
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture, common_inputs
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import PRESETS, TINY
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard

STEPS = 6


@pytest.fixture(scope="module")
def pipe():
    return local_diffusion(TINY)


def draw(pipe, deep_cache: int, count: list[int] | None = None, ts=(0.25, 0.5, 0.75), compile=False) -> np.ndarray:
    """A morph's first pictures, at --deep-cache `deep_cache` (and --compile); `count` hears of each pass of the
    middle block."""
    prompts = ["a red kite", "a city of glass"]
    scenes = [
        Scene(index=i, kind="lyric", start=i, end=i + 1, text="", prompt=p, seed=7 + i) for i, p in enumerate(prompts)
    ]
    board = Storyboard(SongAudio(2.0), scenes=scenes)
    settings = RenderSettings(size=(64, 64), steps=STEPS, deep_cache=deep_cache, compile=compile, batch_size=3)
    own = pipeline_for(pipe, settings)
    middle = own.unet.mid_block
    middle = getattr(middle, "block", middle)  # (within the block that keeps its output, with --deep-cache)
    hook = middle.register_forward_hook(lambda *a: count.append(1)) if count is not None else None
    inputs = SceneInputs(own, board, [0, 1], settings)
    group = [Picture(Path("unused"), "", 0, 1, t) for t in ts]
    pixels = draw_group(own, inputs, group, settings, Timings())
    if hook:
        hook.remove()
    return pixels


def test_the_deep_blocks_run_one_step_in_n_and_a_picture_depends_on_its_own_inputs_and_n(pipe):
    whole, passes = draw(pipe, 1), []
    cached = draw(pipe, 3, passes)
    assert len(passes) == STEPS // 3  # the middle block ran on steps 0 and 3 of 6
    assert cached.shape == whole.shape and not np.array_equal(cached, whole)
    assert np.array_equal(draw(pipe, 3), cached)  # drawn again, the same bytes
    # each picture apart from its batch: the first of a batch of one is the first of a batch of three (up to rounding)
    assert np.abs(draw(pipe, 3, ts=(0.25,))[0].astype(int) - cached[0]).max() <= 2


def test_a_pipeline_kept_loaded_is_set_both_ways(pipe):
    whole = draw(pipe, 1)
    draw(pipe, 2)
    blocks = [
        parent[key] if isinstance(key, int) else getattr(parent, key) for parent, key in deep_unet_blocks(pipe.unet)
    ]
    assert all(isinstance(block, CachedBlock) for block in blocks)
    assert np.array_equal(draw(pipe, 1), whole)  # its blocks put back: drawn whole as before
    assert not any(isinstance(m, CachedBlock) for m in pipe.unet.modules())
    assert len(pipe.unet._forward_pre_hooks) == 0


@pytest.mark.slow
def test_with_compile_the_unet_is_traced_twice_and_draws_what_it_draws_eager(monkeypatch):
    """--compile --deep-cache: the compiled UNet's two graphs (a whole step, a step of the outermost level) draw what
    the eager UNet draws, again and again without tracing anew; the flag is cleared after each pass, so that one that
    does not come through the compiled wrapper (a pinned picture's inversion) runs whole."""
    from torch._dynamo.utils import counters

    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "eager")  # (the graphs dynamo traces, without inductor's minutes)
    eager = draw(local_diffusion(TINY), 3)
    compiled = local_diffusion(TINY)
    torch._dynamo.reset()
    counters.clear()
    first = draw(compiled, 3, compile=True)
    assert np.array_equal(draw(compiled, 3, compile=True), first)
    # (within 2 levels of 255: the compiled UNet's weights are in channels-last memory, whose kernels round apart)
    assert is_compiled(compiled.unet) and np.abs(first.astype(int) - eager).max() <= 2
    assert counters["stats"]["unique_graphs"] == 3  # the UNet's two, and the decoder's
    kept = [block for block in compiled.unet.modules() if isinstance(block, CachedBlock)]
    assert kept and not any(block.cache.reuse for block in kept)  # cleared after the last pass
    assert not np.array_equal(draw(compiled, 1, compile=True), first)  # the deep blocks were reused, not run


def tensors(held) -> list:
    """The tensors in a block's output (a down block's: the sample and a tuple of the skips)."""
    return [t for item in held for t in tensors(item)] if isinstance(held, (tuple, list)) else [held]


def test_in_bfloat16_the_kept_features_and_every_module_keep_their_dtype():
    """A GPU draws in half precision: the blocks' kept outputs are the blocks' own, never cast."""
    pipe = local_diffusion(TINY).to(torch.bfloat16)
    pixels = draw(pipe, 3)
    kept = [block.kept for block in pipe.unet.modules() if isinstance(block, CachedBlock)]
    assert kept and {t.dtype for t in tensors(kept)} == {torch.bfloat16}
    assert {(p.dtype, p.device.type) for p in pipe.unet.parameters()} == {(torch.bfloat16, "cpu")}
    assert pixels.shape == (3, 64, 64, 3) and 0 < pixels.std()


def test_the_keys_of_pictures_drawn_without_it_stay_and_what_it_does_not_go_with_is_refused():
    drawn_by = {"diffusion": "tiny"}
    assert "deep_cache" not in common_inputs(RenderSettings(), drawn_by)
    assert common_inputs(RenderSettings(deep_cache=3), drawn_by)["deep_cache"] == 3
    models = replace(PRESETS["tiny"], diffusion=PRESETS["zimage"].diffusion)
    with pytest.raises(UserError, match="--deep-cache is made for Stable Diffusion and SDXL"):
        check_drawing_options(models, resolve_render_settings(models, {"deep_cache": 2}))
