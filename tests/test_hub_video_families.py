"""--transitions video with LTX-2 and Wan 2.1 FLF2V as a first run meets them: each repository's stand-in
(tests/standins/ltx2.py, wan.py), loaded by hub name offline through musicvid's own loader in bfloat16, every module
in it to the end of the transitions; each renders a song whose keyframes land on their frames and whose frames
between are the video model's, not the slerp walk's, except a morph longer than the model's longest clip, which is
slerped and said so in timings.json."""

import json

import numpy as np
import pytest
import torch

from musicvid.core.workdir import Workdir
from musicvid.models.loading import load_video_model
from musicvid.models.precision import Precision
from musicvid.pictures.cache import load_picture
from musicvid.pictures.frames import video_frames
from musicvid.pictures.schedule import frame_schedule
from musicvid.settings.presets import LTX2, WAN_FLF2V
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, probe, render
from tests.standins.hub import snapshot

pytestmark = pytest.mark.slow

BF16 = Precision.resolve("bfloat16", torch.device("cpu"))
# a long morph (1.0 s to 6.5 s: longer than Wan's 81 frames at 16 fps, within LTX-2's 121) and a short one
LYRICS = "[00:01.00]the sky is burning\n[00:06.50]rivers made of glass\n[00:07.50]\n"
LAYOUTS = {
    LTX2: [
        *[f"{folder}/{name}" for folder in ("audio_vae", "connectors") for name in ("config.json", "diffusion_pytorch_model.safetensors")],
        "model_index.json",
        "README.md",
        "scheduler/scheduler_config.json",
        "text_encoder/config.json",
        "text_encoder/generation_config.json",
        *[f"text_encoder/model-0000{n}-of-00005.safetensors" for n in range(1, 6)],
        "text_encoder/model.safetensors.index.json",
        *[f"tokenizer/{name}" for name in ("chat_template.jinja", "processor_config.json", "special_tokens_map.json")],
        *[f"tokenizer/{name}" for name in ("tokenizer.json", "tokenizer_config.json")],
        "transformer/config.json",
        *[f"transformer/diffusion_pytorch_model-0000{n}-of-00008.safetensors" for n in range(1, 9)],
        "transformer/diffusion_pytorch_model.safetensors.index.json",
        *[f"{folder}/{name}" for folder in ("vae", "vocoder") for name in ("config.json", "diffusion_pytorch_model.safetensors")],
    ],
    WAN_FLF2V: [
        "image_encoder/config.json",
        "image_encoder/model.safetensors",
        *[f"image_processor/{name}" for name in ("merges.txt", "preprocessor_config.json", "special_tokens_map.json")],
        *[f"image_processor/{name}" for name in ("tokenizer.json", "tokenizer_config.json", "vocab.json")],
        "model_index.json",
        "README.md",
        "scheduler/scheduler_config.json",
        "text_encoder/config.json",
        *[f"text_encoder/model-0000{n}-of-00005.safetensors" for n in range(1, 6)],
        "text_encoder/model.safetensors.index.json",
        *[f"tokenizer/{name}" for name in ("special_tokens_map.json", "spiece.model", "tokenizer.json")],
        "tokenizer/tokenizer_config.json",
        "transformer/config.json",
        *[f"transformer/diffusion_pytorch_model-{n:05d}-of-00014.safetensors" for n in range(1, 15)],
        "transformer/diffusion_pytorch_model.safetensors.index.json",
        "vae/config.json",
        "vae/diffusion_pytorch_model.safetensors",
    ],
}  # fmt: skip


def not_bfloat16(pipe) -> list[str]:
    """The floating-point weights and buffers of the pipeline's modules that are not in bfloat16."""
    modules = {name: m for name, m in pipe.components.items() if isinstance(m, torch.nn.Module)}
    tensors = {f"{name}.{t}": x for name, m in modules.items() for t, x in [*m.named_parameters(), *m.named_buffers()]}
    return [name for name, x in tensors.items() if x.is_floating_point() and x.dtype != torch.bfloat16]


@pytest.mark.parametrize("name", [LTX2, WAN_FLF2V])
def test_a_video_family_loads_by_hub_name_in_bfloat16_from_its_published_layout(standin_hub, name):
    files = snapshot(standin_hub, name)
    assert sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file()) == sorted(LAYOUTS[name])
    pipe = load_video_model(name, torch.device("cpu"), BF16)
    assert not not_bfloat16(pipe)
    if name == LTX2:
        assert type(pipe).__name__ == "LTX2ConditionPipeline" and type(pipe.text_encoder).__name__.startswith("Gemma3")
        # Gemma 3's tokenizer puts <bos> first; its chat template (which the pipeline does not use) is there
        assert pipe.tokenizer.convert_ids_to_tokens(pipe.tokenizer("the red sun").input_ids)[0] == "<bos>"
        chat = pipe.tokenizer.apply_chat_template([{"role": "user", "content": "a red sun"}], tokenize=False)
        assert chat == "<bos><start_of_turn>user\na red sun<end_of_turn>\n"
        # the connectors read every hidden state of Gemma (its layers and the embedding's), each its width
        config = pipe.connectors.config
        assert config.text_proj_in_factor == pipe.text_encoder.config.text_config.num_hidden_layers + 1
    else:
        assert type(pipe).__name__ == "WanImageToVideoPipeline"
        assert type(pipe.image_encoder).__name__ == "CLIPVisionModelWithProjection"
        assert type(pipe.image_processor).__name__ == "CLIPProcessor"
        assert pipe.image_processor.image_processor.crop_size == {"height": 224, "width": 224}
        assert len([t for t in pipe.tokenizer.all_special_tokens if t.startswith("<extra_id_")]) == 300
        # two pictures of CLIP ViT-H/14's 257 tokens each
        assert pipe.transformer.config.pos_embed_seq_len == 2 * 257


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    folder = tmp_path_factory.mktemp("families")
    song = make_tone(folder / "song.mp3", 8.0)
    song.with_suffix(".lrc").write_text(LYRICS)
    return song


@pytest.fixture(scope="module")
def slerped(song):
    assert render(song, song.parent / "slerp", "--precision", "bfloat16", "-o", song.parent / "slerp.mp4") == 0
    return song.parent / "slerp"


def frames_of(workdir):
    board = load_storyboard(workdir / "storyboard.json")
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, RenderSettings().fps)
    return schedule, list(video_frames(board, schedule, Workdir(workdir), RenderSettings(size=(64, 64))))


@pytest.mark.ci  # (two renders through each family's stand-in: a minute and a half of the suite's 6)
@pytest.mark.parametrize("name, slerped_morphs", [(LTX2, 0), (WAN_FLF2V, 1)])
def test_a_video_family_by_hub_name_draws_the_frames_between_the_keyframes(
    standin_hub, song, slerped, name, slerped_morphs
):
    workdir = song.parent / name.replace("/", "_")
    options = ["--precision", "bfloat16", "--transitions", "video", "--video-model", name]
    assert render(song, workdir, *options, "-o", workdir.with_suffix(".mp4")) == 0
    assert probe(workdir.with_suffix(".mp4"))["frames"] == 80
    report = json.loads((workdir / "timings.json").read_text())
    assert report["models"]["video"]["name"] == name
    assert set(report["models"]["video"]["modules"].values()) == {"bfloat16"}  # to the end of the transitions
    assert report["transitions"]["morphs_slerped"] == slerped_morphs
    schedule, frames = frames_of(workdir)
    _, slerp = frames_of(slerped)
    morphs = [s for s in schedule.segments if s.target is not None]
    assert report["transitions"]["morphs_by_video"] == len(morphs) - slerped_morphs > 0
    for segment in schedule.segments:  # every keyframe on its frame, the same as the slerp walk's
        keyframe = load_picture(Workdir(workdir).keyframe(segment.scene))
        assert np.array_equal(frames[segment.first], keyframe) and np.array_equal(slerp[segment.first], keyframe)
    longest = max(morphs, key=lambda s: s.length)
    for segment in morphs:
        between = range(segment.first + 1, segment.end)
        difference = min(np.abs(frames[k].astype(int) - slerp[k]).mean() for k in between)
        if slerped_morphs and segment == longest:
            assert difference == 0  # Wan's longest clip is 5 s: this morph is the slerp walk's
        else:
            assert difference > 5  # the video model's, none the slerp walk's
