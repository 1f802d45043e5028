"""The video families' tiny pipelines (musicvid.models.tiny_video), built with no download, and how a --video-model
is chosen: each family draws a clip from one keyframe to the next through musicvid's own call (musicvid.pictures.clips)
in a second on the CPU, the same bytes from a fresh build and the same seed, other bytes for another prompt; a
model of another family brings its card's steps, and a pipeline of no family is refused in one sentence."""

import json
import warnings
from dataclasses import replace

import numpy as np
import pytest

from musicvid.core.errors import UserError
from musicvid.models.choose import choose_models
from musicvid.models.drawing import check_drawing_options
from musicvid.models.tiny_video import tiny_ltx2, tiny_ltx_video, tiny_wan
from musicvid.pictures.clips import draw_clip, video_pipeline_for
from musicvid.settings.presets import LTX2, TINY_LTX2, TINY_WAN, VIDEO_FAMILIES, WAN_FLF2V
from musicvid.settings.render import RenderSettings
from tests.helpers import TINY_QUIET, make_tone, run

SETTINGS = RenderSettings(size=(80, 64), transition_steps=2)
ENDS = tuple(np.random.default_rng(n).integers(0, 256, (64, 80, 3), dtype=np.uint8) for n in (1, 2))


def clip(build, prompt: str) -> np.ndarray:
    return draw_clip(video_pipeline_for(build(), SETTINGS), 9, 10, ENDS, prompt, 3, SETTINGS)


@pytest.mark.parametrize("build", [tiny_ltx2, pytest.param(tiny_wan, marks=pytest.mark.ci)])  # (Wan's: the ci tier)
def test_a_tiny_video_pipeline_draws_the_same_clip_from_the_same_seed(build):
    first = clip(build, "a red sun, slowly turning into rain on a dark city")
    # 9 frames at the picture size (drawn at 64 x 64 by LTX-2, whose sides come in 32s, and covered)
    assert first.shape == (9, 64, 80, 3) and first.dtype == np.uint8
    assert not np.array_equal(first[1], first[-2])  # it moves
    assert np.array_equal(clip(build, "a red sun, slowly turning into rain on a dark city"), first)
    assert not np.array_equal(clip(build, "the sea at night"), first)  # the prompt reaches the frames


def test_a_video_model_of_another_family_brings_its_steps_unless_the_preset_has_its_own():
    assert choose_models("default").transition_steps == VIDEO_FAMILIES["ltx-video"].steps
    assert choose_models("default", video=WAN_FLF2V).transition_steps == VIDEO_FAMILIES["wan"].steps == 50
    assert choose_models("default", video=LTX2).transition_steps == VIDEO_FAMILIES["ltx2"].steps
    for tiny in (TINY_LTX2, TINY_WAN):  # the tiny preset draws in 2 whichever
        assert choose_models("tiny", video=tiny).transition_steps == 2


def test_a_pipeline_of_no_video_family_is_refused_in_one_sentence(tmp_path):
    # Wan's text-to-video pipeline takes no picture: it cannot draw between two keyframes
    (tmp_path / "model_index.json").write_text(json.dumps({"_class_name": "WanPipeline"}))
    with pytest.raises(UserError) as refused:
        choose_models("tiny", video=str(tmp_path))
    assert "is a WanPipeline, not an LTX-Video, LTX-2 or Wan 2.1 FLF2V pipeline" in str(refused.value)
    assert "\n" not in str(refused.value)
    (tmp_path / "model_index.json").write_text(json.dumps({"_class_name": "WanImageToVideoPipeline"}))
    assert choose_models("default", video=str(tmp_path)).transition_steps == 50


@pytest.mark.parametrize("family, build", [("ltx-video", tiny_ltx_video), ("ltx2", tiny_ltx2), ("wan", tiny_wan)])
def test_each_video_family_draws_at_its_smallest_side_and_a_size_below_it_is_refused_before_any_work(family, build):
    smallest = VIDEO_FAMILIES[family].smallest
    settings = RenderSettings(size=(smallest, smallest), transition_steps=2, transitions="video")
    ends = tuple(np.random.default_rng(n).integers(0, 256, (smallest, smallest, 3), dtype=np.uint8) for n in (3, 4))
    frames = draw_clip(video_pipeline_for(build(), settings), 9, 10, ends, "a lantern in the fog", 3, settings)
    assert frames.shape == (9, smallest, smallest, 3)
    models = choose_models("tiny", video={"ltx-video": None, "ltx2": TINY_LTX2, "wan": TINY_WAN}[family])
    check_drawing_options(models, settings)
    for size in [(8, 8), (24, 24), (smallest, 24), (40, smallest)]:  # drawn at the family's steps of sides
        smaller = RenderSettings(size=size, transitions="video")
        if family == "ltx2":  # (the others draw no side below their step: it is their smallest)
            with pytest.raises(UserError, match=rf"^--size {size[0]}x{size[1]}: LTX-2 draws no side of the frames"):
                check_drawing_options(models, smaller)
        else:
            check_drawing_options(models, smaller)
        check_drawing_options(models, replace(smaller, transitions="slerp"))  # slerp draws any size


def test_ltx2_at_32x32_is_refused_by_render_before_any_keyframe(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2.0)
    argv = [song, *TINY_QUIET, "--transitions", "video", "--video-model", TINY_LTX2, "--size", "32x32"]
    code, out, err = run(capsys, "render", *argv, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "LTX-2 draws no side of the frames between keyframes below 64" in err
    assert not (tmp_path / "w").exists()


def test_a_video_model_in_no_cache_is_refused_in_one_sentence_without_the_hubs_warning(tmp_path, monkeypatch):
    """Its model index is fetched alone (offline here: it cannot be), in the hub's quiet, as every load is: the hub
    warned of an argument diffusers passes, and printed it above the sentence."""
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with warnings.catch_warnings(record=True) as said, pytest.raises(UserError) as refused:
        warnings.simplefilter("always")
        choose_models("tiny", video="someone/absent-video")
    assert "could not load the video model 'someone/absent-video'" in str(refused.value) and not said
