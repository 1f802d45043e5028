"""--compile compiles the UNet and the VAE's decoder once per loaded pipeline, for throughput (channels-last, one batch
shape): later renders, pinned pictures and a pipeline kept loaded reuse the graphs, and a render's set-up keeps the
levers the models were given; what inductor compiled is kept in the user's cache for the next process."""

from dataclasses import replace

import pytest
import torch
from diffusers.utils.torch_utils import is_compiled_module
from PIL import Image

from musicvid.models.drawing import Drawing
from musicvid.models.registry import ModelRegistry
from musicvid.models.tiny import local_diffusion
from musicvid.pictures.switches import compile_cache, pipeline_for
from musicvid.pipeline import make_video
from musicvid.settings.presets import PRESETS
from musicvid.settings.render import RenderSettings
from musicvid.settings.resolve import resolve_render_settings
from musicvid.settings.song import SongRequest
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, run


def processor_kinds(module) -> set[str]:
    return {type(p).__name__ for p in module.attn_processors.values()}


def test_a_job_keeps_the_fused_projections_and_slices_attention_only_when_asked():
    pipe = local_diffusion()
    pipe.fuse_qkv_projections()  # benchmarks/speed.py's fused-qkv lever
    pipeline_for(pipe, RenderSettings())
    assert processor_kinds(pipe.unet) == processor_kinds(pipe.vae) == {"FusedAttnProcessor2_0"}
    pipeline_for(pipe, RenderSettings(attention_slicing=True))
    assert processor_kinds(pipe.unet) == {"SlicedAttnProcessor"}
    pipeline_for(pipe, RenderSettings())  # a pipeline kept loaded: the last render's slicing is undone
    assert processor_kinds(pipe.unet) == {"AttnProcessor2_0"}


@pytest.mark.ci  # (torch.compile's first compile of each model on the CPU)
@pytest.mark.slow
def test_compiled_models_compile_once_across_jobs_pinned_pictures_and_a_pipeline_kept_loaded(tmp_path, monkeypatch):
    from torch._dynamo.utils import counters

    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "eager")  # the graphs dynamo traces, without inductor's minutes
    song = make_tone(tmp_path / "song.mp3", 3.0)
    registry = ModelRegistry(PRESETS["tiny"], "cpu", keep_loaded=True)

    def render(name: str, lyrics: str, **given) -> int:
        (tmp_path / f"{name}.lrc").write_text(lyrics)
        request = SongRequest(song=song, lyrics_file=tmp_path / f"{name}.lrc", workdir=tmp_path / name, quiet=True)
        settings = resolve_render_settings(PRESETS["tiny"], {"compile": True, "batch_size": 4, "fps": 4, **given})
        return make_video(request, settings, registry, output=tmp_path / f"{name}.mp4").pictures_drawn

    torch._dynamo.reset()  # (what an earlier test in this process compiled, a benchmark's rows, is traced anew)
    counters.clear()
    with torch._dynamo.config.patch(error_on_recompile=True):
        assert render("first", "[00:00.50]the sky is burning\n[00:01.60]rivers made of glass\n") > 0
        # another render on the pipeline kept loaded: other prompts, sampler, guidance, steps, style, and no
        # --compile of its own (the pipeline stays compiled, and its groups are padded as before)
        other = "[00:00.50]a lighthouse in the rain\n[00:01.60]the city wakes\n"
        assert render("second", other, scheduler="ddim", guidance=5.0, steps=3, style="ink", compile=False) > 0
        # a pinned picture, inverted by the UNet one picture at a time
        Image.new("RGB", (80, 60), (200, 40, 90)).save(tmp_path / "pin.png")
        board = load_storyboard(tmp_path / "first" / "storyboard.json")
        board = board.with_scenes({1: replace(board.scenes[1], picture=str(tmp_path / "pin.png"))})
        (tmp_path / "first" / "storyboard.json").write_text(board.text())
        assert render("first", "[00:00.50]the sky is burning\n[00:01.60]rivers made of glass\n") > 0
    assert counters["stats"]["unique_graphs"] == 2  # the UNet's and the decoder's, each traced once
    with registry.use(Drawing()) as pipe:
        assert is_compiled_module(pipe.unet) and is_compiled_module(pipe.vae.decoder)
        # for throughput: the convolutions' weights in channels-last memory
        channels_last = torch.channels_last
        assert pipe.unet.conv_in.weight.is_contiguous(memory_format=channels_last)
        assert pipe.vae.decoder.conv_in.weight.is_contiguous(memory_format=channels_last)


def test_compiled_code_is_kept_in_the_users_cache_unless_a_person_named_torchs_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "placeholder")  # (put back after the test, set or not)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert compile_cache() == tmp_path / "musicvid" / "torch-compile"  # outlives /tmp, torch's own default
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "mine"))
    assert compile_cache() == tmp_path / "mine"


def test_a_compile_backend_torch_does_not_know_exits_2_before_any_work(capsys, tmp_path, monkeypatch):
    song = make_tone(tmp_path / "song.wav", 2)
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "garbage")
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--compile", "--workdir", tmp_path / "w")
    assert code == 2 and "MUSICVID_COMPILE_BACKEND='garbage' is not a torch.compile backend" in err
    assert "inductor" in err and err.count("\n") == 1 and not (tmp_path / "w").exists()
