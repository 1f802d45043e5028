"""--transitions video's model as a first run meets it: LTX-Video 0.9.5, loaded by hub name offline
(tests/standins/ltx_video.py), draws the transitions; a pipeline of another kind is refused in one sentence."""

import pytest
import torch

from musicvid.models.loading import load_video_model
from musicvid.settings.presets import LTX_VIDEO, SD15
from tests.helpers import make_tone, probe
from tests.helpers import run as run_cli
from tests.standins.hub import snapshot

pytestmark = pytest.mark.slow


@pytest.mark.ci  # (a first run by hub name: the ci tier; the tiny LTX-Video's transitions stay in the suite)
def test_ltx_video_loads_by_hub_name_and_draws_the_transitions(standin_hub, capsys, tmp_path):
    """--transitions video's model as a first run meets it: LTX-Video 0.9.5's repository (its model index says
    LTXPipeline, its T5 tokenizer is a sentencepiece file alone, its weights are sharded), loaded by name."""
    files = snapshot(standin_hub, LTX_VIDEO)
    assert sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file()) == [
        "README.md",
        "model_index.json",
        "scheduler/scheduler_config.json",
        "text_encoder/config.json",
        *[f"text_encoder/model-0000{n}-of-00004.safetensors" for n in range(1, 5)],
        "text_encoder/model.safetensors.index.json",
        *[f"tokenizer/{name}" for name in ("added_tokens.json", "special_tokens_map.json", "spiece.model")],
        "tokenizer/tokenizer_config.json",
        "transformer/config.json",
        *[f"transformer/diffusion_pytorch_model-0000{n}-of-00002.safetensors" for n in (1, 2)],
        "transformer/diffusion_pytorch_model.safetensors.index.json",
        "vae/config.json",
        "vae/diffusion_pytorch_model.safetensors",
    ]
    pipe = load_video_model(LTX_VIDEO, torch.device("cpu"))
    assert type(pipe).__name__ == "LTXConditionPipeline" and pipe.tokenizer.model_max_length == 128
    assert pipe.tokenizer.convert_ids_to_tokens(pipe.tokenizer("the red sun").input_ids)[-1] == "</s>"
    assert pipe.vae.spatial_compression_ratio == 32 and pipe.vae.temporal_compression_ratio == 8

    song = make_tone(tmp_path / "song.mp3", 4.0)
    (tmp_path / "song.lrc").write_text("[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n")
    common = ["--models", "tiny", "--lyrics", tmp_path / "song.lrc", "--workdir", tmp_path / "w", "-q"]
    capsys.readouterr()  # (the loads' progress bars)
    # a pipeline of another kind is refused in one sentence, before any work
    code, _, err = run_cli(capsys, "render", song, *common, "--transitions", "video", "--video-model", SD15)
    assert code == 2 and err.count("\n") == 1 and "is a StableDiffusionPipeline" in err and "LTX-Video" in err
    assert not (tmp_path / "w").exists()
    code, _, err = run_cli(capsys, "render", song, *common, "--transitions", "video", "--video-model", LTX_VIDEO)
    assert code == 0, err
    # the frames between the intro's keyframe and the first line's (9), and the first line's and the second's (13)
    assert len(list((tmp_path / "w" / "frames").iterdir())) == 9 + 13
    assert probe(tmp_path / "song.mp4")["frames"] == 40
