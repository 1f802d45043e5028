"""The memory plan of --transitions video with LTX-2 and Wan 2.1 FLF2V 14B (musicvid.memory.plan, transitions):
their weights as published, counted on the meta device; on a 24 GB card each layer on the GPU only while it runs,
on an 80 GB one every model resident; a budget that holds not even that refused in one sentence before any work."""

import json

import pytest

from musicvid.settings.presets import LTX2, WAN_FLF2V
from tests.helpers import make_tone, run

# The published sizes in bfloat16 (GB): LTX-2's 18.9B transformer, Gemma 3 12B (its image tower too), connectors,
# VAE, and its sound's audio VAE and vocoder; Wan's 16.4B transformer, UMT5-XXL's encoder, CLIP ViT-H/14 and its VAE
PUBLISHED = {
    LTX2: {
        "transformer": 37.8,
        "text_encoder": 24.4,
        "connectors": 2.9,
        "vae": 2.4,
        "audio_vae": 0.11,
        "vocoder": 0.11,
    },
    WAN_FLF2V: {"transformer": 32.8, "text_encoder": 11.4, "image_encoder": 1.26, "vae": 0.25},
}


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    return make_tone(tmp_path_factory.mktemp("plan") / "song.wav", 3.0)


def transitions_planned(capsys, song, name: str, budget: str) -> dict:
    # (at 256 x 256 a clip's VAE is one tile: its passes are measured in seconds)
    options = ["--models", "tiny", "--size", "256x256", "--transitions", "video", "--video-model", name]
    code, out, err = run(capsys, "plan", song, "--json", "--gpu-memory", budget, *options)
    assert code == 0, err
    plan = json.loads(out)
    return next(stage for stage in plan["stages"] if stage["stage"] == "transitions")


@pytest.mark.slow  # (every pass of the published models on the meta device: about 15 s each)
@pytest.mark.ci
@pytest.mark.parametrize("name", [LTX2, WAN_FLF2V])
def test_a_video_family_fits_24_gb_layer_by_layer_and_80_gb_resident(capsys, song, name):
    small = transitions_planned(capsys, song, name, "24")
    weights = {m["part"]: m["weights_gb"] for m in small["models"]}
    assert weights == pytest.approx(PUBLISHED[name], rel=0.06)
    assert {m["precision"] for m in small["models"]} == {"bfloat16"}
    # the transformer alone is more than 24 GB: only layer by layer
    assert small["offloads"] == ["sequential-offload"] and small["peak_gb"] <= 23.5
    assert small["batches"] == {"transitions": 1, "clip_frames": 121 if name == LTX2 else 81}
    large = transitions_planned(capsys, song, name, "80")
    assert large["offloads"] == [] and sum(weights.values()) < large["peak_gb"] <= 79.5


@pytest.mark.slow
@pytest.mark.ci  # (LTX-2's passes at its published size on the meta device: about 13 s)
def test_a_budget_below_the_video_models_largest_layer_and_pass_is_refused_in_one_sentence(capsys, song):
    options = ["--models", "tiny", "--size", "256x256", "--transitions", "video", "--video-model", LTX2]
    code, out, err = run(capsys, "plan", song, "--gpu-memory", "4", *options)
    assert code == 2 and not out and err.count("\n") == 1
    assert "the transitions stage (Lightricks/LTX-2 in bfloat16) needs" in err and "even with sequential-offload" in err
