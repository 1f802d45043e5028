"""The video families' tiny pipelines (musicvid.models.tiny_video), built with no download, and how a --video-model
is chosen: each family draws a clip from one keyframe to the next through musicvid's own call (musicvid.pictures.clips)
in a second on the CPU, the same bytes from a fresh build and the same seed, other bytes for another prompt; a
model of another family brings its card's steps, and a pipeline of no family is refused in one sentence."""

import json

import numpy as np
import pytest

from musicvid.core.errors import UserError
from musicvid.models.choose import choose_models
from musicvid.models.tiny_video import tiny_ltx2, tiny_wan
from musicvid.pictures.clips import draw_clip, video_pipeline_for
from musicvid.settings.presets import LTX2, TINY_LTX2, TINY_WAN, VIDEO_FAMILIES, WAN_FLF2V
from musicvid.settings.render import RenderSettings

SETTINGS = RenderSettings(size=(80, 64), transition_steps=2)
ENDS = tuple(np.random.default_rng(n).integers(0, 256, (64, 80, 3), dtype=np.uint8) for n in (1, 2))


def clip(build, prompt: str) -> np.ndarray:
    return draw_clip(video_pipeline_for(build(), SETTINGS), 9, 10, ENDS, prompt, 3, SETTINGS)


@pytest.mark.parametrize("build", [tiny_ltx2, tiny_wan])
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
