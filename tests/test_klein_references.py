"""FLUX.2 klein's reference pictures, which its pipeline reads itself, in context (its `image`), in place of the
IP-Adapter Stable Diffusion takes: a render's and a scene's own, keyed by their files, and blended along a morph
between two (the memory plan's count of them, the tokens they add: tests/test_memory_plan_flow.py)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from PIL import Image

from musicvid.core.workdir import Workdir
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.pictures import flow
from musicvid.pictures.cache import load_picture
from musicvid.settings.presets import PRESETS, TINY_KLEIN
from musicvid.settings.resolve import resolve_render_settings
from tests.helpers import make_tone, render

CPU = torch.device("cpu")
LYRICS = "[00:00.40]the sky is burning\n[00:01.60]rivers made of glass and light\n"


def picture(path, colour) -> str:
    y, x = np.mgrid[0:64, 0:64]
    Image.fromarray(np.stack([x * 4, y * 4, np.full_like(x, colour)], axis=2).astype(np.uint8)).save(path)
    return str(path)


def test_a_morph_between_two_references_blends_them_and_keeps_one_where_a_scene_has_none():
    red, blue = torch.full((4, 4, 3), 200.0), torch.full((4, 4, 3), 20.0)
    assert torch.equal(flow.morph_reference(red, blue, 0.25), torch.full((4, 4, 3), 155.0))
    assert flow.morph_reference(red, red.clone(), 0.5) is red  # one picture: the calls stay batched
    assert flow.morph_reference(red, None, 0.4) is red and flow.morph_reference(red, None, 0.6) is None


def test_pictures_of_different_references_in_one_batch_draw_as_each_does_alone():
    pipe = load_diffusion(TINY_KLEIN, CPU, Precision.resolve("float32", CPU))
    settings = resolve_render_settings(PRESETS["tiny-klein"], {"steps": 2})
    [text] = flow.encode_prompts(pipe, ["a lighthouse in a storm"], CPU)
    noise = torch.randn(2, *flow.latent_shape(pipe, settings), generator=torch.Generator().manual_seed(0))
    references = [torch.full((64, 64, 3), 200.0), None]
    with torch.inference_mode():
        together = flow.call(pipe, [text] * 2, [text] * 2, noise, settings, references)
        alone = [flow.call(pipe, [text], [text], noise[i : i + 1], settings, references[i : i + 1]) for i in (0, 1)]
        plain = flow.call(pipe, [text], [text], noise[:1], settings)
    assert torch.allclose(together, torch.cat(alone), atol=1e-5)
    assert not torch.allclose(alone[0], plain, atol=1e-3)  # the reference changes the picture


@pytest.mark.slow
@pytest.mark.ci  # (three klein renders; the plan's count of a reference, above, stays in the suite)
def test_a_reference_changes_every_keyframe_and_another_redraws_them(tmp_path, capsys):
    song = make_tone(tmp_path / "song.mp3", 3.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    common = ["--models", "tiny-klein", "--fps", "5"]
    assert render(song, tmp_path / "plain", *common, "-o", tmp_path / "plain.mp4") == 0
    options = [*common, "--reference", picture(tmp_path / "red.png", 200)]
    assert render(song, tmp_path / "w", *options, "-o", tmp_path / "v.mp4") == 0
    plain, looked = Workdir(tmp_path / "plain"), Workdir(tmp_path / "w")
    assert not np.array_equal(load_picture(plain.keyframe(0)), load_picture(looked.keyframe(0)))
    # another picture of the same name: every picture is drawn again (keyed by the file, not its name)
    picture(tmp_path / "red.png", 20)
    assert render(song, tmp_path / "w", *options, "-o", tmp_path / "again.mp4") == 0
    report = json.loads((tmp_path / "w" / "timings.json").read_text())
    assert report["pictures_drawn"] == len(list((tmp_path / "w" / "keyframes").glob("*.png"))) + len(
        list((tmp_path / "w" / "frames").glob("*.png"))
    )
