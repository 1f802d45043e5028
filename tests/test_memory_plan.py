"""The memory plan (musicvid.memory.plan) and `musicvid plan`: the weights as published, counted on the meta device;
what fits a 24 GB card; what a small budget offloads or refuses; the registry's eviction by the same budget."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from musicvid.delivery.upscale import Upscaler
from musicvid.memory.plan import batched_as_planned, plan_memory, plan_on_device, planned_upscaling, stage_offloads
from musicvid.models import registry as registry_module
from musicvid.models import sizes
from musicvid.models.footprint import UPSCALER_ROLES, role_weights_gb
from musicvid.models.loading import load_upscaler
from musicvid.models.precision import Precision
from musicvid.models.published import whisper_dims
from musicvid.models.registry import ModelRegistry
from musicvid.models.tiny import local_diffusion
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import PRESETS, TINY, UPSCALE_BATCH
from musicvid.settings.render import DEFAULT_BATCH, RenderSettings
from musicvid.settings.song import SongRequest
from tests.fixtures.whisper_ct2 import tiny_en_dir
from tests.helpers import make_tone, run
from tests.standins.faster_whisper import FASTER_WHISPER_LARGE, HEADS, LAYERS, WIDTH
from tests.standins.hub import write_repo
from tests.standins.upscaler import realesrgan_files, realesrgan_general_files


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    return make_tone(tmp_path_factory.mktemp("plan") / "song.wav", 3.0)


def strictly(out: str) -> dict:
    """JSON as strict parsers read it: no Infinity, no NaN."""

    def refused(constant):
        raise AssertionError(f"not strict JSON: {constant}")

    return json.loads(out, parse_constant=refused)


def planned(capsys, song, *options) -> dict:
    code, out, err = run(capsys, "plan", song, "--json", *options)
    assert code == 0, err
    return strictly(out)


def weights_of(plan: dict, stage: str, part: str) -> dict:
    stage_plan = next(s for s in plan["stages"] if s["stage"] == stage)
    return next(m for m in stage_plan["models"] if m["part"] == part)


def scorer_planned(plan: dict) -> bool:
    [pictures] = [stage for stage in plan["stages"] if stage["stage"] == "pictures"]
    return any(model["part"] == "scorer" for model in pictures["models"])


def test_the_plan_counts_the_scorer_only_where_it_loads(capsys, song):
    assert scorer_planned(planned(capsys, song, "--models", "tiny"))
    # a scorer that cannot be had (offline, in no cache) is not loaded: the render goes on unscored
    assert not scorer_planned(planned(capsys, song, "--models", "tiny", "--scorer", "someone/absent-scorer"))
    code, _, err = run(capsys, "plan", song, "--models", "tiny", "--scorer", "x/absent", "--keyframe-candidates", "3")
    assert code == 2 and "pick keyframes by their scores" in err and err.count("\n") == 1


@pytest.mark.slow
def test_the_smallest_pictures_a_render_draws_are_planned(capsys, song):
    """A 16 × 16 picture is a 1 × 1 latent deep in the tiny UNet: the plan's batch of one there has one value a
    group norm's group, which counts as memory though torch's check refuses it as statistics."""
    assert planned(capsys, song, "--models", "tiny", "--size", "16x16")["stages"]


def test_a_plan_takes_finite_budgets_only_and_its_json_is_strict(capsys, song):
    for budget in ("inf", "-inf", "1e999", "nan", "0", "-3"):
        code, out, err = run(capsys, "plan", song, "--models", "tiny", "--json", f"--gpu-memory={budget}")
        said = ": must be a number a float can hold" if budget == "1e999" else " must be a number of GB above 0"
        assert code == 2 and not out and f"--gpu-memory{said}" in err, budget
    code, out, err = run(capsys, "plan", song, "--models", "tiny", "--json", "--gpu-memory", "1e300")
    assert code == 0 and strictly(out)["budget_gb"] == 1e300


@pytest.mark.ci  # (the default models' plan at their published sizes: SD's and the video families' stay)
def test_the_plan_gives_the_default_models_weights_as_published_and_fits_24_gb(capsys, song):
    plan = planned(capsys, song, "--gpu-memory", "24")
    assert plan["budget_gb"] == 24 and plan["budget"] == "--gpu-memory"
    unet, whisper = weights_of(plan, "pictures", "unet"), weights_of(plan, "transcribe", "whisper")
    # SD 1.5's UNet (859.5M weights) and Whisper large-v2's (1.54G) in half precision
    assert unet["weights_gb"] == pytest.approx(1.72, rel=0.02) and unet["precision"] == "float16"
    assert whisper["weights_gb"] == pytest.approx(3.09, rel=0.02) and whisper["name"] == "openai-whisper:large-v2"
    assert [s["stage"] for s in plan["stages"]] == ["transcribe", "elaborate", "pictures"]
    for stage in plan["stages"]:
        assert set(stage) == {"stage", "models", "batches", "offloads", "passes", "peak_gb"}
        assert all(set(m) == {"name", "part", "precision", "weights_gb"} for m in stage["models"])
        assert 0 < stage["peak_gb"] <= 24 - plan["reserve_gb"] and stage["offloads"] == []
    assert weights_of(plan, "pictures", "unet")["name"] == PRESETS["default"].diffusion
    # no --batch-size: the most the plan fits, up to 16 at 512x512 (musicvid.memory.pictures.most_pictures), keyframes too
    assert next(s for s in plan["stages"] if s["stage"] == "pictures")["batches"] == {
        "keyframes": 16,
        "morphs": 16,
        "vae_decode": 16,
    }


def test_without_a_batch_size_the_plan_takes_the_most_that_fits_and_the_cpu_its_default(capsys, song):
    def morphs(*options) -> int:
        stage = next(s for s in planned(capsys, song, *options)["stages"] if s["stage"] == "pictures")
        return stage["batches"]["morphs"]

    assert morphs("--gpu-memory", "24", "--batch-size", "4") == 4  # given: the most it takes
    small = morphs("--gpu-memory", "5.2")
    assert 1 <= small < 16 and small == morphs("--gpu-memory", "5.2", "--batch-size", "64")  # the most that fits
    assert morphs("--gpu-memory", "80", "--size", "1024x1024") == 4  # as many pixels as 16 at 512x512
    # off a GPU there is no plan: the default batch, as before
    assert batched_as_planned(RenderSettings(), None).batch_size == RenderSettings().batch == DEFAULT_BATCH == 4


# (SDXL's in the ci tier: seven seconds of the suite's 6 minutes)
@pytest.mark.parametrize(
    "options", [("--transitions", "video"), pytest.param(("--models", "sdxl"), marks=pytest.mark.ci)]
)
def test_video_transitions_and_sdxl_fit_a_24_gb_card(capsys, song, options):
    plan = planned(capsys, song, "--gpu-memory", "24", *options)
    assert max(s["peak_gb"] for s in plan["stages"]) <= 24 - plan["reserve_gb"]
    if "video" in options:  # LTX-Video's transformer, T5-XXL and VAE, in bfloat16
        video = next(s for s in plan["stages"] if s["stage"] == "transitions")
        assert {m["part"]: m["precision"] for m in video["models"]} == {
            "transformer": "bfloat16",
            "text_encoder": "bfloat16",
            "vae": "bfloat16",
        }
    else:  # SDXL's VAE decodes in float32 (it overflows in float16)
        assert weights_of(plan, "pictures", "vae")["precision"] == "float32"


def test_whisper_is_planned_where_it_runs_by_what_the_lyrics_file_holds(capsys, song, tmp_path):
    """Lyrics saved as .txt with LRC times are timed lyrics: no Whisper (nor the vocals it would listen to)."""
    timed, plain = tmp_path / "timed.txt", tmp_path / "plain.txt"
    timed.write_text("[00:00.50] a line\n[00:01.50] another line\n")
    plain.write_text("a line\nanother line\n")
    stages = {}
    for lyrics, vocals in ((timed, ()), (plain, ("--separate-vocals",))):
        plan = planned(capsys, song, "--lyrics", str(lyrics), *vocals, "--gpu-memory", "24")
        stages[lyrics.name] = [stage["stage"] for stage in plan["stages"]]
        parts = {model["part"] for stage in plan["stages"] for model in stage["models"]}
        assert ("separator" in parts) == (lyrics is plain), parts
    assert stages == {"timed.txt": ["elaborate", "pictures"], "plain.txt": ["transcribe", "elaborate", "pictures"]}
    code, _, err = run(capsys, "plan", song, "--lyrics", timed, "--separate-vocals")  # it would do nothing
    assert code == 2 and "--separate-vocals does nothing with timed lyrics" in err


@pytest.mark.ci  # (a render under a 6 GB budget and one refused: ten seconds of the suite's 6 minutes)
def test_a_6_gb_budget_offloads_and_half_a_gb_is_refused_in_one_sentence(capsys, song):
    small = planned(capsys, song, "--gpu-memory", "6", "--models", "sdxl", "--transitions", "video")
    for stage in ("pictures", "transitions"):
        offloads = next(s for s in small["stages"] if s["stage"] == stage)["offloads"]
        assert {"model-offload", "sequential-offload"} & set(offloads), (stage, offloads)
    assert max(s["peak_gb"] for s in small["stages"]) <= 6 - small["reserve_gb"]
    code, out, err = run(capsys, "plan", song, "--gpu-memory", "0.5")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "GPU memory" in err and "0.5 GB" in err
    # the table's columns stay apart however long a stage's batches are (a probe saw "vae_decode 1sequential-offload")
    (lyrics := song.with_suffix(".lrc")).write_text("[00:00.50]the sky is burning\n")  # (Whisper large needs more)
    code, out, err = run(capsys, "plan", song, "--gpu-memory", "2.5", "--lyrics", lyrics)
    [row] = [line for line in out.splitlines() if line.strip().startswith("pictures")]
    assert code == 0 and row.split()[-2:] == ["sequential-offload,", "vae-slicing"] and " 1  sequential" in row


def test_the_plan_opens_no_weights_and_a_model_it_cannot_size_is_named(capsys, song, tmp_path, monkeypatch):
    def no(*args, **kwargs):
        raise AssertionError("the plan opened a model's file")

    torch.save({"dims": whisper_dims("tiny"), "model_state_dict": {}}, tmp_path / "mine.pt")  # (its shape)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "empty"))
    monkeypatch.setattr("huggingface_hub.hf_hub_download", no)
    load = torch.load
    monkeypatch.setattr(torch, "load", lambda *args, **kwargs: (kwargs.get("map_location") == "meta" or no()) and load)
    monkeypatch.setattr("safetensors.torch.load_file", no)
    code, out, err = run(capsys, "plan", song, "--gpu-memory", "24")
    assert code == 0 and "for 24 GB (--gpu-memory)" in out and "float16, 1.72 GB" in out
    # a Whisper .pt is sized by the dims it pickles (its weights left on the meta device), as its size's name is
    monkeypatch.setattr(
        torch, "load", lambda *a, **k: (k["map_location"] == "meta" and k["weights_only"]) and load(*a, **k)
    )
    code, out, err = run(capsys, "plan", song, "--asr-model", str(tmp_path / "mine.pt"), "--gpu-memory", "24")
    assert code == 0 and f"openai-whisper:{tmp_path / 'mine.pt'} whisper (float16, 0.08 GB)" in out, out + err
    assert run(capsys, "plan", song, "--asr-model", "tiny", "--gpu-memory", "24")[1].count("(float16, 0.08 GB)") == 1


def test_a_ctranslate2_whisper_is_sized_by_its_model_bins_header(capsys, song, standin_hub):
    # a folder here, or a hub name's in the cache (the stand-in of large-v2: 2 layers of 64 a side), read to its sizes
    faster = ("plan", song, "--asr", "faster-whisper", "--gpu-memory", "24", "--asr-model")
    assert sizes.converted_dims(str(tiny_en_dir())) == whisper_dims("tiny.en")
    assert f"{tiny_en_dir()} whisper (float16, 0.08 GB)" in run(capsys, *faster, str(tiny_en_dir()))[1]
    assert sizes.converted_dims(FASTER_WHISPER_LARGE) == {**whisper_dims("large-v2"), **STANDIN_DIMS}
    code, out, err = run(capsys, *faster, FASTER_WHISPER_LARGE)
    assert code == 0 and f"faster-whisper:{FASTER_WHISPER_LARGE} whisper (float16, 0.01 GB)" in out, out + err
    code, out, err = run(capsys, *faster, "someone/whisper-not-here")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "cannot size the asr model" in err
    assert "or its CTranslate2 folder" in err and "folders with a config.json" not in err  # (as a folder is not)


STANDIN_DIMS = {
    f"n_{half}_{what}": n
    for half in ("audio", "text")
    for what, n in zip(("state", "head", "layer"), (WIDTH, HEADS, LAYERS))
}


class CudaRegistry:
    """What plan_on_device reads of a ModelRegistry, as on a GPU with `free` GB free."""

    device, precision = torch.device("cuda"), Precision.resolve("auto", torch.device("cuda"))

    def __init__(self, models, free: float):
        self.models, self.free = models, free

    def budget(self) -> float:
        return self.free


def test_a_render_follows_the_plan_and_a_cpu_render_has_none(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda device: "a test card")
    # a storyboard given: no Whisper, no ViPE; SD 1.5 and the upscaler in 3 GB
    request = SongRequest(song=tmp_path / "song.wav", storyboard_file=tmp_path / "storyboard.json")
    settings = RenderSettings(batch_size=8, resolution="4k")
    registry = CudaRegistry(PRESETS["default"], free=3.5)
    before = dict(vars(registry))
    plan = plan_on_device(registry, request, settings, scored=True, timed_lyrics=False)
    assert (
        vars(registry) == before and plan.budget == "free on a test card"
    )  # the plan is the run's, not the registry's
    assert [s.stage for s in plan.stages] == ["pictures", "upscale"]
    pictures = plan.stage("pictures")
    assert "vae-slicing" in pictures.offloads and pictures.peak_gb <= 3.0
    assert batched_as_planned(settings, plan).batch_size == pictures.batch("morphs") <= 8
    assert planned_upscaling(plan)["batch"] == plan.stage("upscale").batch("frames")
    assert (
        plan_on_device(ModelRegistry(PRESETS["tiny"], "cpu"), request, settings, scored=True, timed_lyrics=False)
        is None
    )
    assert batched_as_planned(settings, None) == settings and planned_upscaling(None) == {}
    # each drawing stage's switches: the plan's, else (no plan, or no such stage in it) those the settings ask for
    low = RenderSettings(low_vram=True)
    assert stage_offloads(plan, low) == {
        "pictures": pictures.offloads,
        "transitions": low.offloads_asked("transitions"),
    }
    assert stage_offloads(None, low) == {stage: low.offloads_asked(stage) for stage in ("pictures", "transitions")}
    # the pipeline takes the plan's switches, and without them the settings' own
    pipe = local_diffusion(TINY)
    pipeline_for(pipe, RenderSettings(), ("vae-slicing", "vae-tiling"))
    assert pipe.vae.use_slicing and pipe.vae.use_tiling
    pipeline_for(pipe, RenderSettings())
    assert not pipe.vae.use_slicing and not pipe.vae.use_tiling


def test_the_upscaler_takes_the_plans_smaller_input():
    model = load_upscaler(TINY, torch.device("cpu"))
    frame = np.random.default_rng(0).integers(0, 255, (64, 64, 3), dtype=np.uint8)
    seen = []
    model.model.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0].shape[-2:]))
    (upscaled,) = Upscaler(model, (100, 100), batch=1, input_size=(25, 25))([frame])
    assert upscaled.shape == (100, 100, 3) and seen == [(25, 25)]


def test_kept_models_are_released_least_recently_used_first_for_the_next_to_fit(monkeypatch):
    sizes = {"asr": 3.0, "vipe": 1.0, "separator": 2.0}
    monkeypatch.setattr(registry_module, "role_weights_gb", lambda models, role, precision: sizes[role])
    loaders = {role: (lambda models, device, precision: object()) for role in sizes}
    registry = ModelRegistry(PRESETS["tiny"], "cpu", keep_loaded=True, loaders=loaders, budget_gb=5.5)
    for role in ("asr", "vipe", "asr"):  # Whisper the most recently used
        with registry.use(role):
            pass
    with registry.use("asr"), registry.use("separator"):  # 3 + 1 + 2 > 5.5 - 0.5: ViPE goes, Whisper is in use
        assert list(registry._loaded) == ["asr", "separator"]
    with registry.use("vipe"):  # 3 + 2 + 1 > 5: Whisper, now the least recently used, goes
        assert list(registry._loaded) == ["separator", "vipe"]
    assert registry.loads == {"asr": 1, "vipe": 2, "separator": 1}


@pytest.mark.parametrize("preset", ["default", "tiny"])
def test_every_role_the_registry_loads_is_sized_for_its_room(preset):
    """A role sized 0 GB would be loaded beside the others with no room made for it (the scorer was)."""
    models, precision = PRESETS[preset], Precision.resolve("auto", torch.device("cuda"))
    roles = ("asr", "vipe", "scorer", *UPSCALER_ROLES.values())
    sized = {role: role_weights_gb(models, role, precision) for role in roles}
    assert all(gb > 0 for gb in sized.values()), sized
    if preset == "default":  # CLIP ViT-L/14's 428M parameters in float16; x4plus's 16.7M, --fast's x4v3's 1.2M
        assert 0.8 < sized["scorer"] < 0.9
        assert sized["upscaler"] == pytest.approx(0.0334, abs=1e-3) and sized["fast_upscaler"] == pytest.approx(
            0.0024, abs=1e-4
        )


def test_with_fast_the_plan_upscales_by_the_compact_network_in_far_less():
    """--fast's upscaler (auto's: x4v3) is the one the plan holds beside the drawing, not x4plus."""
    cuda = Precision.resolve("auto", torch.device("cuda"))
    upscale = {}
    for fast in (False, True):
        settings = RenderSettings(resolution="1080p", fast=fast, steps=4 if fast else 25)
        plan = plan_memory(PRESETS["default"], settings, cuda, 80.0, "given", transcribe=False, elaborate=False)
        upscale[fast] = plan.stage("upscale")
    assert upscale[True].batch("frames") == upscale[False].batch("frames") == UPSCALE_BATCH  # 80 GB: room for all
    assert upscale[True].peak_gb < upscale[False].peak_gb / 3


@pytest.mark.parametrize("files", [realesrgan_files, realesrgan_general_files])
@pytest.mark.parametrize("where", ["here", "cache"])
def test_an_upscaler_file_is_planned_by_the_network_it_holds(capsys, song, tmp_path, monkeypatch, files, where):
    """`plan` refused every --upscaler file, which the render takes, as a model it could not size (round 11): a file
    here, or a hub file in the cache that is none of the presets."""
    import huggingface_hub.constants

    [(name, data)] = files().items()
    (upscaler := tmp_path / name).write_bytes(data)
    if where == "cache":
        write_repo(tmp_path / "hub", "someone/upscalers", {name: data})
        monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    given = str(upscaler) if where == "here" else f"someone/upscalers/{name}"
    plan = planned(capsys, song, "--resolution", "720p", "--upscaler", given, "--gpu-memory", "24")
    assert weights_of(plan, "upscale", "upscaler")["name"] == given
    loaded = load_upscaler(str(upscaler), torch.device("cpu"))
    held = sum(t.numel() for t in [*loaded.model.parameters(), *loaded.model.buffers()])
    assert sizes.counted("upscaler", given)["upscaler"][0] == held > 0
    assert sizes.upscaler_scale(given) == loaded.scale == 4
