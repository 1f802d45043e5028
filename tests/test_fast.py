"""--fast: LCM-LoRA's few steps with the noise of each step shared along a morph, and TAESD."""

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from diffusers import AutoencoderTiny, LCMScheduler

from musicvid.core.workdir import Workdir
from musicvid.models.drawing import Drawing, load_drawing
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.models.timing import Timings
from musicvid.pictures import denoise
from musicvid.pictures.cache import stored_key
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture, picture_groups
from musicvid.pictures.sampler import SharedNoiseLCMScheduler
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import PRESETS, TINY
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, load_storyboard
from tests.helpers import make_tone, probe, render


def test_given_the_noise_lcm_would_draw_the_sampler_takes_lcms_own_steps():
    config = load_diffusion(TINY, torch.device("cpu")).scheduler.config
    ours, lcm = SharedNoiseLCMScheduler.from_config(config), LCMScheduler.from_config(config)
    for scheduler in (ours, lcm):
        scheduler.set_timesteps(4)
    shape = (2, 4, 8, 8)
    # LCM draws its noise after each step but the last from the generator: the same draws, given
    drawn = torch.Generator().manual_seed(5)
    ours.step_noise = torch.stack([torch.randn(shape, generator=drawn) for _ in range(3)])
    generator = torch.Generator().manual_seed(5)
    sample = ours_sample = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    for timestep in lcm.timesteps:
        output = torch.randn(shape, generator=torch.Generator().manual_seed(int(timestep)))
        sample = lcm.step(output, timestep, sample, generator=generator).prev_sample
        ours_sample = ours.step(output, timestep, ours_sample).prev_sample
        assert torch.allclose(ours_sample, sample, atol=1e-6)


@pytest.fixture(scope="module")
def fast():
    """The tiny --fast pipeline, a render of it, and two scenes' inputs."""
    scenes = [
        Scene(index=i, kind="lyric", start=float(i), end=i + 1.0, text="", prompt=prompt, seed=10 + i)
        for i, prompt in enumerate(["a red sky over the city", "blue water under a bridge"])
    ]
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    settings = resolve_render_settings(PRESETS["tiny"], {"fast": True})
    own = pipeline_for(load_drawing(PRESETS["tiny"], Drawing(fast=True), torch.device("cpu")), settings)
    return own, SceneInputs(own, board, [0, 1], settings), settings


def morph(fast, ts, inputs=None) -> np.ndarray:
    own, scene_inputs, settings = fast
    pictures = [Picture(path=None, key="", scene=0, target=1, t=t) for t in ts]
    return draw_group(own, inputs or scene_inputs, pictures, settings, Timings()).astype(float)


def test_fast_draws_in_four_unguided_steps_with_the_lora_fused_and_taesd():
    settings = resolve_render_settings(PRESETS["tiny"], {"fast": True})
    assert (settings.steps, settings.guidance) == (4, 1.0)
    plain = load_diffusion(TINY, torch.device("cpu"))
    fast = load_drawing(PRESETS["tiny"], Drawing(fast=True), torch.device("cpu"))
    assert isinstance(fast.vae, AutoencoderTiny)
    changed = [k for k, v in plain.unet.state_dict().items() if not torch.equal(v, fast.unet.state_dict()[k])]
    assert len(changed) > 50 and all(k.endswith(".weight") for k in changed)  # fused into the weights
    assert set(plain.unet.state_dict()) == set(fast.unet.state_dict())  # and the LoRA's layers gone


def test_shared_step_noise_keeps_a_morph_continuous_where_fresh_noise_flickers(fast):
    ts = [0.0, 0.01, 0.5, 1.0]
    frames = morph(fast, ts)
    step = np.abs(frames[1] - frames[0]).mean()  # one hundredth of a morph
    assert 0 < step < np.abs(frames[2] - frames[0]).mean() / 5

    # with each frame's own step noise (what LCM's sampler draws), the next frame is another picture
    _, inputs, _ = fast

    class FreshNoise(SceneInputs):
        def __init__(self):
            self.__dict__ = inputs.__dict__

        def conditioning(self, picture):
            given = inputs.conditioning(picture)
            noise = torch.randn(given.step_noise.shape, generator=torch.Generator().manual_seed(int(picture.t * 1e4)))
            return replace(given, step_noise=noise)

    flicker = morph(fast, ts[:2], FreshNoise())
    assert np.abs(flicker[1] - flicker[0]).mean() > 5 * step

    # the morph lands on the next keyframe: at t = 1, scene 1's own inputs (its text up to CSA's row order)
    own, inputs, settings = fast
    keyframe = draw_group(own, inputs, [Picture(None, "", 1, None, 0.0)], settings, Timings()).astype(float)
    assert np.abs(frames[3] - keyframe[0]).max() <= 2


@pytest.mark.ci  # (the suite's 6 minutes: a second of its area)
@pytest.mark.slow
def test_a_fast_render_killed_mid_way_resumes_to_the_same_frames_and_is_keyed_apart(tmp_path, monkeypatch):
    song = make_tone(tmp_path / "song.mp3", 3.0)
    song.with_suffix(".lrc").write_text("[00:00.80]the sky is burning\n[00:01.90]rivers made of glass\n")
    whole, broken = tmp_path / "whole", tmp_path / "broken"
    assert render(song, whole, "--fast", "--fps", "5", "-o", tmp_path / "whole.mp4") == 0
    assert probe(tmp_path / "whole.mp4")["frames"] == 15

    written, save = [], denoise.save_picture

    def save_until_full(path, pixels, key):
        if len(written) == 6:
            raise OSError(28, "No space left on device")
        written.append(path)
        save(path, pixels, key)

    monkeypatch.setattr(denoise, "save_picture", save_until_full)
    assert render(song, broken, "--fast", "--fps", "5", "-o", tmp_path / "broken.mp4") == 1
    kept = len(list(broken.glob("*/*.png")))
    monkeypatch.setattr(denoise, "save_picture", save)
    assert render(song, broken, "--fast", "--fps", "5", "-o", tmp_path / "broken.mp4") == 0
    pictures = {p.relative_to(whole): p.read_bytes() for p in whole.glob("*/*.png")}
    assert json.loads((broken / "timings.json").read_text())["pictures_drawn"] == len(pictures) - kept > 0
    assert pictures == {p.relative_to(broken): p.read_bytes() for p in broken.glob("*/*.png")}

    # the plain sampler's pictures are other pictures: no key of the fast ones is theirs
    board = load_storyboard(broken / "storyboard.json")
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, 5)

    def keys(fast: bool) -> set[str]:
        settings = resolve_render_settings(PRESETS["tiny"], {"fast": fast, "fps": 5.0})
        groups = picture_groups(
            board,
            schedule,
            settings,
            Drawing(fast).key(PRESETS["tiny"], Precision.resolve("auto", torch.device("cpu"))),
            Workdir(broken),
        )
        return {p.key for group in groups for p in group}

    assert {stored_key(p) for p in broken.glob("*/*.png")} == keys(True) and not keys(True) & keys(False)
