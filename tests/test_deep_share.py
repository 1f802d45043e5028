"""--deep-share N (musicvid.pictures.deep_share): in a group of in-between frames, one in N of each morph's run and
its last run the UNet's deep blocks, the frames between take their outputs blended by t; anchors come out as drawn
whole, the groups fixed by the frame numbers and the batch (both keyed), so a killed render resumes to the same
bytes; a pipeline kept loaded is set both ways; the families it does not go with are refused."""

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

from musicvid.core.errors import UserError
from musicvid.core.workdir import Workdir
from musicvid.models.drawing import check_drawing_options
from musicvid.models.timing import Timings
from musicvid.models.tiny import local_diffusion
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.deep_cache import CachedBlock
from musicvid.pictures.deep_share import plan
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture, picture_groups
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import PRESETS, TINY
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import check_used, resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.helpers import render

STEPS = 4
TS = (0.1, 0.2, 0.35, 0.4, 0.5)


def test_the_plan_anchors_one_in_n_of_each_run_and_its_last_and_blends_by_t():
    shared = plan(["a"] * 5 + ["b"] * 2, [0.1, 0.2, 0.35, 0.4, 0.5, 0.7, 0.8], 2)
    assert shared.anchors == (0, 2, 4, 5, 6)  # run a: 0, 2, 4 (its last); run b: 5 and 6 (its last)
    assert shared.before == (0, 0, 1, 1, 2, 3, 4) and shared.after == (0, 1, 1, 2, 2, 3, 4)
    assert shared.weight == pytest.approx([0, 0.4, 0, 1 / 3, 0, 0, 0])  # (0.2 − 0.1) / (0.35 − 0.1) …
    three = plan(["a"] * 5, [0.0, 0.1, 0.2, 0.3, 0.4], 3)
    assert three.anchors == (0, 3, 4) and three.weight == pytest.approx([0, 1 / 3, 2 / 3, 0, 0])
    # padded to a compiled UNet's batch: the padding takes what the last picture takes
    padded = plan(["a"] * 3, [0.0, 0.1, 0.2], 4, rows=5)
    assert padded.anchors == (0, 2) and padded.before == (0, 0, 1, 1, 1) and padded.weight[3:] == (0.0, 0.0)


@pytest.fixture(scope="module")
def pipe():
    return local_diffusion(TINY)


def draw(pipe, share: int, ts=TS, deep_cache: int = 1, heard: list | None = None, compile=False, batch=5) -> np.ndarray:
    """A morph's pictures at `ts` in one group; `heard` gets the middle block's output (within the block that spreads
    it) at each step."""
    prompts = ["a red kite", "a city of glass"]
    scenes = [
        Scene(index=i, kind="lyric", start=i, end=i + 1, text="", prompt=p, seed=7 + i) for i, p in enumerate(prompts)
    ]
    board = Storyboard(SongAudio(2.0), scenes=scenes)
    given = dict(deep_share=share, deep_cache=deep_cache, compile=compile, batch_size=batch)
    settings = RenderSettings(size=(64, 64), steps=STEPS, **given)
    own = pipeline_for(pipe, settings)
    middle = own.unet.mid_block
    hook = middle.register_forward_hook(lambda m, a, out: heard.append(out)) if heard is not None else None
    inputs = SceneInputs(own, board, [0, 1], settings)
    pixels = draw_group(own, inputs, [Picture(Path("unused"), "", 0, 1, t) for t in ts], settings, Timings())
    if hook:
        hook.remove()
    return pixels


def test_anchors_come_out_as_drawn_whole_and_the_frames_between_take_the_blend(pipe):
    alone, spread = [], []
    whole, shared = draw(pipe, 1, heard=alone), draw(pipe, 2, heard=spread)
    inner = []  # the middle block's own passes: on the anchors alone, under guidance twice
    hook = pipe.unet.mid_block.block.register_forward_hook(lambda m, a, out: inner.append(out.shape[0]))
    assert np.array_equal(draw(pipe, 2), shared)  # drawn again, the same bytes
    hook.remove()
    assert inner == [2 * 3] * STEPS  # anchors 0, 2, 4 of 5
    assert np.abs(shared.astype(int) - whole).reshape(len(TS), -1)[[0, 2, 4]].max() <= 2
    # the first step's deep features: the anchors' their own, the frames between the blend, not theirs
    apart = (spread[0] - alone[0]).flatten(1).norm(dim=1) / alone[0].flatten(1).norm(dim=1)
    assert (apart[[0, 2, 4, 5, 7, 9]] < 1e-4).all() and (apart[[1, 3, 6, 8]] > 1e-3).all()
    for step in spread:  # frame 1 between anchors 0 and 2: (0.2 − 0.1) / (0.35 − 0.1) of the way, in each half
        for half in (0, 5):
            blend = torch.lerp(step[half + 0], step[half + 2], 0.4)
            assert torch.allclose(step[half + 1], blend, atol=1e-5)


def test_with_deep_cache_the_shared_outputs_are_kept_between_steps_and_a_kept_pipeline_is_set_both_ways(pipe):
    whole = draw(pipe, 1)
    both = draw(pipe, 2, deep_cache=2)
    assert both.shape == whole.shape and not np.array_equal(both, draw(pipe, 2))
    assert any(isinstance(m, CachedBlock) for m in pipe.unet.modules())
    assert np.array_equal(draw(pipe, 1), whole)  # its blocks put back: drawn whole as before
    assert not any(isinstance(m, CachedBlock) for m in pipe.unet.modules())


def in_between_keys(settings: RenderSettings) -> tuple[dict, dict]:
    scenes = [
        Scene(index=i, kind="lyric", start=i * 2.0, end=i * 2.0 + 2, text="", prompt="p", seed=i) for i in range(3)
    ]
    board = Storyboard(SongAudio(6.0), scenes=scenes)
    schedule = frame_schedule([s.start for s in scenes], 6.0, settings.fps)
    groups = picture_groups(board, schedule, settings, {"diffusion": "tiny"}, Workdir(Path("unused")))
    pictures = [p for group in groups for p in group]
    return ({p.path.name: p.key for p in pictures if p.target is None}, {p.path: p.key for p in pictures if p.target})


def test_the_in_between_keys_hold_n_and_the_batch_and_keyframes_keep_theirs():
    keyframes, between = in_between_keys(RenderSettings())
    assert in_between_keys(RenderSettings(batch_size=8)) == (keyframes, between)  # (off: the batch changes nothing)
    shared_keyframes, shared = in_between_keys(RenderSettings(deep_share=2))
    assert shared_keyframes == keyframes and not set(shared.values()) & set(between.values())
    assert not set(in_between_keys(RenderSettings(deep_share=2, batch_size=8))[1].values()) & set(shared.values())
    assert not set(in_between_keys(RenderSettings(deep_share=3))[1].values()) & set(shared.values())


def test_what_it_does_not_go_with_is_refused():
    models = replace(PRESETS["tiny"], diffusion=PRESETS["zimage"].diffusion)
    with pytest.raises(UserError, match="--deep-share is made for Stable Diffusion and SDXL"):
        check_drawing_options(models, resolve_render_settings(models, {"deep_share": 2}))
    # a preview draws no frames between, so it would do nothing there; a batch's row that draws them uses it
    preview, whole = (resolve_render_settings(PRESETS["tiny"], {"preview": p}) for p in (True, False))
    with pytest.raises(UserError, match=r"^--deep-share only acts where the frames between are drawn, not in a --pre"):
        check_used({"deep_share": 2}, [preview])
    check_used({"deep_share": 2}, [preview, whole])


def drawn_count(workdir: Path) -> int:
    return json.loads((workdir / "timings.json").read_text())["pictures_drawn"]


@pytest.mark.slow
def test_a_render_redraws_the_frames_between_and_a_killed_one_resumes_to_the_same_bytes(tmp_path, tone_render):
    workdir = shutil.copytree(tone_render / "w", tmp_path / "w")
    keyframes = len(list((workdir / "keyframes").glob("*.png")))
    every = drawn_count(workdir)
    assert render(tone_render / "song.mp3", workdir, "--deep-share", "3", "-o", tmp_path / "a.mp4") == 0
    assert drawn_count(workdir) == every - keyframes  # the frames between alone
    frames = sorted((workdir / "frames").glob("*.png"))
    made = {path.name: path.read_bytes() for path in frames}
    for path in frames[1::4]:  # as a render killed midway leaves them: some frames not yet written
        path.unlink()
    assert render(tone_render / "song.mp3", workdir, "--deep-share", "3", "-o", tmp_path / "b.mp4") == 0
    assert 0 < drawn_count(workdir) < every - keyframes
    assert {path.name: path.read_bytes() for path in sorted((workdir / "frames").glob("*.png"))} == made


@pytest.mark.slow
def test_with_compile_it_draws_what_it_draws_eager_and_a_new_plan_traces_nothing_anew(monkeypatch):
    """--compile --deep-share: the plan reaches the compiled UNet as tensors, so a group of other anchors is drawn by
    the graphs already traced (their shapes dynamic once they change), and the pictures are eager's."""
    from torch._dynamo.utils import counters

    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "eager")  # (the graphs dynamo traces, without inductor's minutes)
    eager = draw(local_diffusion(TINY), 2)
    compiled = local_diffusion(TINY)
    torch._dynamo.reset()
    counters.clear()
    first = draw(compiled, 2, compile=True, batch=8)  # (padded to 8: one shape for the compiled UNet)
    assert np.abs(first.astype(int) - eager).max() <= 2  # (channels-last kernels round apart)
    traced = counters["stats"]["unique_graphs"]
    draw(compiled, 2, ts=(0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4), compile=True, batch=8)  # 4 anchors
    draw(compiled, 2, ts=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), compile=True, batch=8)  # 5
    draw(compiled, 2, ts=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6), compile=True, batch=8)  # 4
    assert counters["stats"]["unique_graphs"] <= traced + 1  # (once more: the anchors' count made dynamic)


def test_in_bfloat16_the_blended_features_and_every_module_keep_their_dtype():
    """A GPU draws in half precision: the anchors' outputs are blended in their own dtype, never cast."""
    pipe, spread = local_diffusion(TINY).to(torch.bfloat16), []
    pixels = draw(pipe, 2, deep_cache=2, heard=spread)
    kept = [block.kept for block in pipe.unet.modules() if isinstance(block, CachedBlock)]
    assert {x.dtype for x in spread} == {torch.bfloat16}
    assert kept and {t.dtype for t in kept if isinstance(t, torch.Tensor)} == {torch.bfloat16}
    assert {(p.dtype, p.device.type) for p in pipe.unet.parameters()} == {(torch.bfloat16, "cpu")}
    assert pixels.shape == (len(TS), 64, 64, 3) and 0 < pixels.std()
