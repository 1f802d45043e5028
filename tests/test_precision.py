"""--precision: each model's dtype resolved once for the device, kept through every render to the end of a render,
and read back into the run report (timings.json) from the weights themselves."""

import gc
import json
import weakref

import pytest
import torch

from musicvid.cli import main
from musicvid.models import registry as registry_module
from musicvid.models.drawing import Drawing
from musicvid.models.loading import load_asr
from musicvid.models.precision import Precision, half_whisper
from musicvid.models.readback import describe_model
from musicvid.models.registry import LOADERS, ModelRegistry
from musicvid.models.timing import Timings
from musicvid.settings.presets import PRESETS, TINY
from tests.helpers import make_tone, render, storyboard_with_a_pin

CUDA, CPU = torch.device("cuda"), torch.device("cpu")
LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"


def test_auto_is_half_precision_on_cuda_and_float32_on_the_cpu():
    gpu, cpu = Precision.resolve("auto", CUDA), Precision.resolve("auto", CPU)
    assert (gpu.compute, gpu.video, gpu.asr, gpu.asr_compute_type) == (
        torch.float16,
        torch.bfloat16,  # LTX-Video's T5 overflows in float16
        torch.float16,
        "float16",
    )
    assert gpu.vae(force_upcast=True) == torch.float32 and gpu.vae(force_upcast=False) == torch.float16
    assert gpu.weights_variant == "fp16" and cpu.weights_variant is None
    assert (cpu.compute, cpu.video, cpu.asr, cpu.asr_compute_type) == (torch.float32,) * 3 + ("int8",)


def test_a_precision_asked_holds_where_the_model_can_run_in_it():
    bf16 = Precision.resolve("bfloat16", CPU)
    assert (bf16.compute, bf16.video, bf16.vae(force_upcast=True)) == (torch.bfloat16,) * 3  # bf16 has float32's range
    assert bf16.asr == torch.float32  # openai-whisper decodes in half precision on CUDA alone
    assert bf16.separator == torch.float32
    assert bf16.upscaler(supports_half=True, supports_bfloat16=False) == torch.float32
    fp16 = Precision.resolve("float16", CUDA)
    assert (fp16.vae(force_upcast=True), fp16.video) == (torch.float32, torch.bfloat16)
    assert Precision.resolve("float32", CUDA).asr == torch.float32
    assert Precision.resolve("float16", CPU).asr_compute_type == "float32"  # CTranslate2 has no float16 on a CPU


def test_precision_is_an_option_of_every_front_door(demo_song, capsys):
    from musicvid.cli import build_parser

    for command in (["render", "s.mp3"], ["storyboard", "s.mp3"], ["batch", "list.m3u", "-o", "out"], ["ui"]):
        assert build_parser().parse_args([*command, "--precision", "bfloat16"]).precision == "bfloat16"
    assert main(["render", str(demo_song), "--models", "tiny", "--precision", "half"]) == 2
    assert "--precision" in capsys.readouterr().err


def test_every_role_loads_in_the_precision_asked_and_says_so():
    registry = ModelRegistry(PRESETS["tiny"], "cpu", keep_loaded=True, precision="bfloat16")
    timings = Timings()
    for role in [*LOADERS, Drawing()]:
        with registry.use(role, timings):
            pass
    models = timings.summary()["models"]
    assert set(models) == {"asr", "vipe", "separator", "upscaler", "video", "scorer", "diffusion"}
    assert models["diffusion"]["name"] == TINY and models["diffusion"]["device"] == "cpu"
    for role in ("diffusion", "video"):
        assert set(models[role]["modules"].values()) == {"bfloat16"}, models[role]
    assert models["vipe"]["dtype"] == models["scorer"]["dtype"] == "bfloat16"
    assert models["asr"]["dtype"] == models["separator"]["dtype"] == "float32"
    assert models["upscaler"]["dtype"] is None  # auto on the CPU is Lanczos: no network


def test_whisper_in_float16_keeps_its_layer_norms_in_float32_and_decodes():
    import whisper

    asr = load_asr("openai-whisper", TINY, CPU)
    model = half_whisper(asr.model)
    norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert norms and all(m.weight.dtype == torch.float32 for m in norms)
    assert describe_model(model)["dtype"] == "float16"
    mel = torch.zeros(1, model.dims.n_mels, 3000, dtype=torch.float16)
    options = whisper.DecodingOptions(fp16=True, language="en", without_timestamps=True, sample_len=3)
    assert whisper.decode(model, mel, options)[0].tokens is not None


@pytest.mark.ci  # (the suite's 6 minutes: a second of its area)
def test_the_drawing_pipeline_is_gone_before_the_video_model_loads(tmp_path, monkeypatch):
    """A render's Stable Diffusion is released when its stage ends: nothing holds it while LTX-Video loads."""
    drawn = []
    load_drawing, load_video_model = registry_module.load_drawing, registry_module.LOADERS["video"]

    def load_and_watch(*args):
        pipe = load_drawing(*args)
        drawn.append(weakref.ref(pipe.unet))
        return pipe

    def load_video(models, device, precision):
        gc.collect()
        assert drawn and drawn[-1]() is None, "Stable Diffusion is still held while the video model loads"
        return load_video_model(models, device, precision)

    monkeypatch.setattr(registry_module, "load_drawing", load_and_watch)
    monkeypatch.setattr(registry_module, "LOADERS", {**registry_module.LOADERS, "video": load_video})
    song = make_tone(tmp_path / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    assert render(song, tmp_path / "work", "--transitions", "video", "-o", tmp_path / "video.mp4") == 0
    assert len(drawn) == 1


@pytest.mark.slow
# (float16's in the ci tier: sixteen seconds of the suite's 6 minutes; bfloat16's stays)
@pytest.mark.parametrize(
    "precision, transitions", [("bfloat16", "video"), pytest.param("float16", "slerp", marks=pytest.mark.ci)]
)
def test_a_half_precision_render_keeps_it_to_the_end_and_its_report_says_so(tmp_path, capsys, precision, transitions):
    """Pictures, a pinned picture (inverted into the morphs around it) and the frames between, in half precision
    on the CPU: every module of the drawing and video models is still in it when their stages end."""
    song = make_tone(tmp_path / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    workdir = tmp_path / "work"
    board = storyboard_with_a_pin(song, workdir, 1)
    (tmp_path / "edited.json").write_text(json.dumps(board))
    options = ["--precision", precision, "--transitions", transitions, "--storyboard", tmp_path / "edited.json"]
    assert render(song, workdir, *options, "-o", tmp_path / "video.mp4") == 0
    report = json.loads((workdir / "timings.json").read_text())
    assert report["device"] == "cpu"
    video_dtype = "bfloat16"  # LTX-Video's T5 overflows in float16: bfloat16 stands in for it
    for role in ("diffusion", "video") if transitions == "video" else ("diffusion",):
        expected = {precision if role == "diffusion" else video_dtype}
        assert set(report["models"][role]["modules"].values()) == expected, report["models"][role]
    # the scorer that picked the keyframes drew its verdicts in the render's precision too
    assert report["models"]["scorer"]["dtype"] == precision, report["models"]["scorer"]
    assert {"denoise", "decode", "score keyframes"} <= set(report["peak_memory_gb"])
    assert all(0 < gb < 64 for gb in report["peak_memory_gb"].values())
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"{report['video_frames']} frames") and f"diffusion {precision}" in line
    assert "on cpu" in line
