"""The default models as a real first run meets them: loaded by hub name, offline, from a cache holding
stand-ins laid out like the real repositories (tests/standins/)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import huggingface_hub.constants
import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from musicvid.cli import main
from musicvid.core.assets import TINY_GPT2_TOKENIZER
from musicvid.core.audio import load_audio
from musicvid.lyrics.transcript import Transcript
from musicvid.lyrics.vocals import separate_vocals
from musicvid.models.choose import choose_models
from musicvid.models.drawing import Drawing, load_drawing
from musicvid.models.loading import load_diffusion, load_separator, load_video_model, resolve_device
from musicvid.models.precision import Precision
from musicvid.models.timing import Timings
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.job import job_pipeline
from musicvid.pictures.plan import Picture
from musicvid.pictures.render import decode, draw
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.presets import (
    DEMUCS,
    IP_ADAPTER,
    LCM_LORA,
    LTX_VIDEO,
    PRESETS,
    SCORER,
    SD15,
    SDXL,
    TAESD,
)
from musicvid.settings.render import resolve_render_settings
from musicvid.storyboard.board import Scene, Storyboard, load_storyboard
from tests.fixtures.gpt2 import GPT2_EOS, GPT2_VOCAB
from tests.fixtures.songs import make_song
from tests.helpers import make_tone, probe
from tests.helpers import run as run_cli
from tests.standins.demucs import HTDEMUCS_KWARGS
from tests.standins.ip_adapter import IP_ADAPTER_REPO
from tests.standins.loras import KOHYA_LORA
from vipe_core.errors import VipeError
from vipe_core.inference import ViPE
from vipe_core.released import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER

pytestmark = pytest.mark.slow


TEXT_ENCODER_FILES = ("config.json", "model.fp16.safetensors", "model.safetensors")
TOKENIZER_FILES = ("merges.txt", "special_tokens_map.json", "tokenizer_config.json", "vocab.json")
DIFFUSERS_MODEL_FILES = (
    "config.json",
    "diffusion_pytorch_model.fp16.safetensors",
    "diffusion_pytorch_model.safetensors",
)


def snapshot(hub: Path, repo_id: str) -> Path:
    return next((hub / f"models--{repo_id.replace('/', '--')}" / "snapshots").iterdir())


def test_the_default_preset_by_hub_name_renders_every_scene_from_vipe(standin_home, tiny_en, demo_song, tmp_path):
    """`musicvid render song.mp3` with the default models, as a new user's first run (only Whisper large
    is replaced: a faster-whisper model does the recognition)."""
    env = {**os.environ, "HF_HOME": str(standin_home), "HF_HUB_OFFLINE": "1"}
    workdir, video = tmp_path / "w", tmp_path / "song.mp4"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "musicvid",
            "render",
            str(demo_song),
            "--asr",
            "faster-whisper",
            "--asr-model",
            tiny_en,
            "--workdir",
            str(workdir),
            "-o",
            str(video),
            "--size",
            "64x64",
            "--steps",
            "2",
            "--fps",
            "2",
            "-q",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    board = load_storyboard(workdir / "storyboard.json")
    assert board.settings["models"]["vipe"] == DEFAULT_VIPE and board.settings["models"]["diffusion"] == SD15
    lyric = [s for s in board.scenes if s.kind == "lyric"]
    assert len(lyric) >= 3
    # every prompt came from the model: none fell back to its lyric, and none is its lyric or context
    assert not any(s.fallback for s in board.scenes) and "kept their lyric" not in run.stderr
    assert all(s.prompt.strip() and s.prompt != s.text for s in board.scenes)
    info = probe(video)
    assert info["video_codec"] == "h264" and info["size"] == (64, 64)
    assert info["frames"] == round(board.duration * 2)


def test_a_render_by_hub_name_without_the_scorer_in_the_cache_makes_its_video_unscored(
    standin_hub, tmp_path, monkeypatch, capsys, caplog
):
    """The drawing models on this machine, the scorer not: it costs the scores, said in one line (issue 50)."""
    hub = tmp_path / "hub"  # the stand-ins' cache without the scorer's repository
    hub.mkdir()
    for repository in standin_hub.iterdir():
        if repository.name != f"models--{SCORER.replace('/', '--')}":
            (hub / repository.name).symlink_to(repository)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "song.lrc").write_text("[00:00.50]a light in the storm\n")
    options = ["--lyrics", tmp_path / "song.lrc", "--size", "64x64", "--steps", "2", "--fps", "2", "-q"]
    code, out, err = run_cli(capsys, "render", song, *options, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4")
    assert code == 0 and out.strip() == str(tmp_path / "v.mp4"), err
    assert probe(tmp_path / "v.mp4")["frames"] == 4
    [said] = [record.getMessage() for record in caplog.records if SCORER in record.getMessage()]
    assert said.startswith("the keyframes are not scored, and the render goes on") and "\n" not in said
    timings = json.loads((tmp_path / "w" / "timings.json").read_text())
    assert timings["models"]["diffusion"]["name"] == SD15 and "scorer" not in timings["models"]
    # picked by their scores, the keyframes need it: refused before the work
    code, _, err = run_cli(capsys, "render", song, *options, "--keyframe-candidates", "2", "--workdir", tmp_path / "w2")
    assert code == 2 and "pick keyframes by their scores" in err and not (tmp_path / "w2").exists()


def test_the_released_vipe_checkpoint_gets_gpt2_mediums_tokenizer(standin_hub):
    vipe = ViPE.from_pretrained(DEFAULT_VIPE)  # by hub name: the checkpoint ships no tokenizer
    assert (len(vipe.tokenizer), vipe.tokenizer.eos_token_id) == (GPT2_VOCAB, GPT2_EOS)
    assert vipe.tokenizer("a lighthouse in the storm")["input_ids"] == [64, 46371, 287, 262, 6388]
    [candidates] = vipe.sample(["my heart is a lighthouse in the storm"], candidates=3, seed=0)
    assert len(candidates) == 3 and all(candidates)


def test_a_checkpoint_without_tokenizer_files_loads_with_the_named_tokenizer(tmp_path):
    from transformers import AutoTokenizer, GPT2Config, GPT2LMHeadModel

    tokenizer = AutoTokenizer.from_pretrained(TINY_GPT2_TOKENIZER)
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_embd=32,
        n_layer=1,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    GPT2LMHeadModel(config).save_pretrained(tmp_path / "ckpt")
    assert not any(p.name.startswith(("tokenizer", "vocab")) for p in (tmp_path / "ckpt").iterdir())
    vipe = ViPE.from_pretrained(str(tmp_path / "ckpt"), str(TINY_GPT2_TOKENIZER))
    assert len(vipe.tokenizer) == len(tokenizer) and vipe.tokenizer("the sun is rising")["input_ids"]
    assert all(vipe.elaborate(["the sun is rising", "the night is falling"], seed=1))
    # Without a tokenizer to fall back on, transformers 5 makes one of 1 token: every context became
    # [0, 0] and every prompt empty. That tokenizer is refused now, naming both sides.
    with pytest.raises(VipeError, match=r"vocabulary 1, .*vocabulary 1536"):
        ViPE.from_pretrained(str(tmp_path / "ckpt"), str(tmp_path / "ckpt"))


def test_a_tokenizer_that_does_not_fit_its_model_stops_the_run_in_one_sentence(
    standin_hub, demo_song, demo_lyrics, tmp_path, capsys
):
    vipe = snapshot(standin_hub, DEFAULT_VIPE)
    with pytest.raises(VipeError) as error:
        ViPE.from_pretrained(DEFAULT_VIPE, str(TINY_GPT2_TOKENIZER))
    assert "vocabulary 1536, end-of-text id 1535" in str(
        error.value
    ) and "vocabulary 50257, end-of-text id 50256" in str(error.value)
    code = main(
        [
            "storyboard",
            str(demo_song),
            "--models",
            "tiny",
            "--lyrics",
            str(demo_lyrics),
            "--vipe",
            str(vipe),
            "--vipe-tokenizer",
            str(TINY_GPT2_TOKENIZER),
            "--workdir",
            str(tmp_path / "w"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "does not match the ViPE model" in err and "--vipe-tokenizer" in err
    assert not (tmp_path / "w" / "storyboard.json").exists()


def test_stable_diffusion_loads_its_fp16_weights_where_the_repository_has_them(standin_hub, tmp_path, monkeypatch):
    from diffusers import StableDiffusionPipeline
    from safetensors.torch import load_file

    cpu, float16 = torch.device("cpu"), Precision.resolve("float16", torch.device("cpu"))
    assert Precision.resolve("auto", torch.device("cuda")).weights_variant == "fp16"
    assert Precision.resolve("auto", cpu).weights_variant is None
    variants, from_pretrained = [], StableDiffusionPipeline.from_pretrained

    def record(*args, **kwargs):
        variants.append(kwargs.get("variant"))
        return from_pretrained(*args, **kwargs)

    monkeypatch.setattr(StableDiffusionPipeline, "from_pretrained", record)
    files = snapshot(standin_hub, SD15)
    full = load_diffusion(SD15, cpu)
    half = load_diffusion(SD15, cpu, float16)  # as on CUDA
    assert variants == [None, "fp16"]
    stored = load_file(files / "unet" / "diffusion_pytorch_model.fp16.safetensors")
    name = "conv_in.weight"
    assert half.unet.dtype == torch.float16 and torch.equal(half.unet.state_dict()[name], stored[name])
    # a model without fp16 files (a user's own) loads its full weights instead, cast
    own = tmp_path / "own-sd"
    for path in files.rglob("*"):
        if path.is_file() and ".fp16." not in path.name:
            (own / path.relative_to(files)).parent.mkdir(parents=True, exist_ok=True)
            (own / path.relative_to(files)).write_bytes(path.read_bytes())
    own_half = load_diffusion(str(own), cpu, float16)
    assert variants[2:] == ["fp16", None]
    assert torch.equal(own_half.unet.state_dict()[name], full.unet.state_dict()[name].half())


def test_the_stand_ins_keep_the_real_repositories_layouts(standin_hub):
    vipe = snapshot(standin_hub, DEFAULT_VIPE)
    assert sorted(p.name for p in vipe.iterdir()) == [
        "README.md",
        "config.json",
        "generation_config.json",
        "pytorch_model.bin",
    ]
    tokenizer = snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER)
    assert json.loads((tokenizer / "tokenizer_config.json").read_text()) == {"model_max_length": 1024}
    sd = snapshot(standin_hub, SD15)
    index = json.loads((sd / "model_index.json").read_text())
    assert index["safety_checker"] == ["stable_diffusion", "StableDiffusionSafetyChecker"]
    for folder in ("unet", "vae"):
        assert {p.name for p in (sd / folder).iterdir()} >= {
            "config.json",
            "diffusion_pytorch_model.safetensors",
            "diffusion_pytorch_model.fp16.safetensors",
            "diffusion_pytorch_model.bin",
            "diffusion_pytorch_model.fp16.bin",
        }


def test_fast_loads_lcm_lora_and_taesd_by_hub_name_and_draws_a_morph(standin_hub):
    """--fast's first run: SD, then the LoRA file fused into its UNet, then TAESD, all by hub name."""
    from diffusers import AutoencoderTiny

    assert sorted(p.name for p in snapshot(standin_hub, LCM_LORA).iterdir()) == [
        "README.md",
        "pytorch_lora_weights.safetensors",
    ]
    assert sorted(p.name for p in snapshot(standin_hub, TAESD).iterdir()) == [
        "README.md",
        "config.json",
        "diffusion_pytorch_model.bin",
        "diffusion_pytorch_model.safetensors",
    ]
    plain = load_diffusion(SD15, torch.device("cpu"))
    fast = load_drawing(PRESETS["default"], Drawing(fast=True), torch.device("cpu"))
    lora = load_file(snapshot(standin_hub, LCM_LORA) / "pytorch_lora_weights.safetensors")
    changed = {k for k, v in plain.unet.state_dict().items() if not torch.equal(v, fast.unet.state_dict()[k])}
    assert len(changed) == len(lora) // 3  # every layer the file adapts, and nothing else
    assert isinstance(fast.vae, AutoencoderTiny) and list(fast.vae.config.num_decoder_blocks) == [3, 3, 3, 1]

    scenes = [Scene(index=i, kind="lyric", start=i, end=i + 1.0, text="", prompt=p, seed=i) for i, p in enumerate("ab")]
    board = Storyboard(audio={"duration": 2.0}, title="", artist="", language="en", settings={}, scenes=scenes)
    settings = resolve_render_settings(PRESETS["default"], {"fast": True, "size": (64, 64)})
    job = job_pipeline(fast, settings)
    pictures = [Picture(None, "", 0, None, 0.0), Picture(None, "", 0, 1, 0.5)]
    drawn = draw(job, SceneInputs(job, board, [0, 1], settings), pictures, settings, Timings())
    assert drawn.shape == (2, 64, 64, 3) and drawn.dtype == np.uint8


def test_a_reference_picture_and_a_kohya_lora_load_by_hub_name_and_draw_a_morph(standin_hub, tmp_path):
    """--reference's and --lora's first run: h94/IP-Adapter's SD 1.5 adapter with its image encoder from
    the folder beside it, and a kohya LoRA given as a hub file, fused into the UNet and the text encoder."""
    from PIL import Image

    adapter = snapshot(standin_hub, IP_ADAPTER_REPO) / "models"
    assert sorted(p.name for p in adapter.iterdir()) == [
        "image_encoder",
        "ip-adapter_sd15.bin",
        "ip-adapter_sd15.safetensors",
    ]
    assert sorted(p.name for p in (adapter / "image_encoder").iterdir()) == [
        "config.json",
        "model.safetensors",
        "pytorch_model.bin",
    ]
    plain = load_diffusion(SD15, torch.device("cpu"))
    drawing = Drawing(loras=Loras([Lora(KOHYA_LORA, 0.8)]), reference=True)
    styled = load_drawing(PRESETS["default"], drawing, torch.device("cpu"))
    assert PRESETS["default"].ip_adapter == IP_ADAPTER
    assert styled.image_encoder.config.image_size == 224 and styled.unet.encoder_hid_proj is not None
    for part in ("unet", "text_encoder"):  # kohya's file adapts both; the fused weights stay, the LoRA layers go
        before, after = getattr(plain, part).state_dict(), getattr(styled, part).state_dict()
        assert any(not torch.equal(before[k], after[k]) for k in before if k in after)
        assert not any("lora" in k for k in after)

    Image.new("RGB", (300, 200), (200, 40, 90)).save(tmp_path / "look.png")
    scenes = [Scene(index=i, kind="lyric", start=i, end=i + 1.0, text="", prompt=p, seed=i) for i, p in enumerate("ab")]
    board = Storyboard(audio={"duration": 2.0}, title="", artist="", language="en", settings={}, scenes=scenes)
    settings = resolve_render_settings(
        PRESETS["default"], {"size": (64, 64), "steps": 2, "reference": tmp_path / "look.png"}
    )
    job = job_pipeline(styled, settings)
    pictures = [Picture(None, "", 0, None, 0.0), Picture(None, "", 0, 1, 0.5)]
    drawn = draw(job, SceneInputs(job, board, [0, 1], settings), pictures, settings, Timings())
    assert drawn.shape == (2, 64, 64, 3) and drawn.dtype == np.uint8


def test_vocals_are_taken_from_the_band_by_the_published_htdemucs_loaded_by_name(standin_hub, tiny_en, tmp_path):
    from demucs.apply import BagOfModels
    from demucs.htdemucs import HTDemucs

    song = make_song(tmp_path / "song.mp3", 12.0, [(3.0, "the morning sun is rising over the hills")])
    separator = load_separator(DEMUCS, resolve_device("cpu"))  # demucs' own loading: the hub, safetensors
    assert isinstance(separator, BagOfModels) and [type(m) for m in separator.models] == [HTDemucs]
    assert separator.sources[-1] == "vocals" and (separator.samplerate, separator.audio_channels) == (44100, 2)
    with torch.device("meta"):  # the published architecture, nothing allocated: the same tensors by name
        published = HTDemucs(**{**HTDEMUCS_KWARGS, "segment": 7.8}).state_dict()
    assert set(separator.models[0].state_dict()) == set(published) and len(published) == 533
    samples = load_audio(song).samples
    vocals = separate_vocals(separator, song, samples.size, quiet=True)
    assert vocals.shape == samples.shape and vocals.dtype == np.float32 and np.isfinite(vocals).all()
    assert np.array_equal(vocals, separate_vocals(separator, song, samples.size, quiet=True))

    workdir = tmp_path / "w"
    command = [
        "storyboard",
        str(song),
        "--models",
        "tiny",
        "--separate-vocals",
        "--separator",
        DEMUCS,
        "--asr",
        "faster-whisper",
        "--asr-model",
        tiny_en,
        "--workdir",
        str(workdir),
        "-q",
    ]
    assert main(command) == 0
    assert Transcript.load(workdir / "transcript.json").model == f"faster-whisper:{tiny_en}+vocals:{DEMUCS}"


def test_sdxl_base_and_the_models_made_for_it_load_by_hub_name(standin_hub, capsys, tmp_path):
    """`--diffusion stabilityai/stable-diffusion-xl-base-1.0`'s first run: the pipeline class its model index
    names, SDXL's size, and SDXL's own LCM-LoRA, TAESD and IP-Adapter (with its ViT-bigG encoder)."""
    files = snapshot(standin_hub, SDXL)
    assert sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file()) == [
        "README.md",
        "model_index.json",
        "scheduler/scheduler_config.json",
        *[f"{folder}/{name}" for folder in ("text_encoder", "text_encoder_2") for name in TEXT_ENCODER_FILES],
        *[f"{folder}/{name}" for folder in ("tokenizer", "tokenizer_2") for name in TOKENIZER_FILES],
        *[f"{folder}/{name}" for folder in ("unet", "vae") for name in DIFFUSERS_MODEL_FILES],
    ]
    assert json.loads((files / "tokenizer_2" / "special_tokens_map.json").read_text())["pad_token"] == "!"
    assert sorted(p.name for p in (snapshot(standin_hub, IP_ADAPTER_REPO) / "sdxl_models").iterdir()) == [
        "image_encoder",
        "ip-adapter_sdxl.bin",
        "ip-adapter_sdxl.safetensors",
    ]
    models = choose_models("default", diffusion=SDXL)
    pipe = load_drawing(models, Drawing(fast=True, reference=True), torch.device("cpu"))
    assert type(pipe).__name__ == "StableDiffusionXLPipeline" and pipe.config.force_zeros_for_empty_prompt
    assert type(pipe.vae).__name__ == "AutoencoderTiny" and pipe.image_encoder.config.projection_dim == 24
    # a local copy is known by its model index; a pipeline of another kind is refused in one sentence
    own = tmp_path / "my-sdxl"
    for path in files.rglob("*"):
        if path.is_file():
            (own / path.relative_to(files)).parent.mkdir(parents=True, exist_ok=True)
            (own / path.relative_to(files)).write_bytes(path.read_bytes())
    assert choose_models("default", diffusion=str(own)).size == (1024, 1024)
    other = tmp_path / "other"
    other.mkdir()
    (other / "model_index.json").write_text(json.dumps({"_class_name": "FluxPipeline"}))
    capsys.readouterr()  # (the loads' progress bars)
    code, _, err = run_cli(capsys, "storyboard", "song.mp3", "--diffusion", other)
    assert code == 2 and err.count("\n") == 1 and "is a FluxPipeline, not a Stable Diffusion" in err
    (tmp_path / "sd_xl_base_1.0.safetensors").write_bytes(b"")
    code, _, err = run_cli(capsys, "storyboard", "song.mp3", "--diffusion", tmp_path / "sd_xl_base_1.0.safetensors")
    assert code == 2 and err.count("\n") == 1 and "is a single file" in err and "save_pretrained" in err

    # drawn by name from the command line (with the tiny preset's other models, at its size)
    song = make_tone(tmp_path / "song.mp3", 4.0)
    (tmp_path / "song.lrc").write_text("[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n")
    common = ["--models", "tiny", "--lyrics", tmp_path / "song.lrc", "--workdir", tmp_path / "w", "-q"]
    code, out, err = run_cli(capsys, "storyboard", song, *common, "--diffusion", SDXL, "--keyframes")
    assert code == 0, err
    assert load_storyboard(tmp_path / "w" / "storyboard.json").scenes and "keyframes: " in out


def test_sdxls_vae_stays_in_float32_under_a_float16_pipeline(standin_hub):
    """SDXL's VAE overflows in float16 (force_upcast): it is kept in float32, and decoding takes half latents."""
    cpu = torch.device("cpu")
    xl, sd = (load_diffusion(name, cpu, Precision.resolve("float16", cpu)) for name in (SDXL, SD15))
    assert xl.unet.dtype == torch.float16 and xl.vae.dtype == torch.float32
    assert sd.vae.dtype == torch.float16  # SD 1.5's runs in float16, as diffusers runs it
    pixels = decode(xl, torch.randn(1, 4, 8, 8, dtype=torch.float16))
    assert pixels.shape == (1, 64, 64, 3) and pixels.dtype == torch.uint8
    # a job over the loaded SDXL draws with its modules as loaded: none cast, the kept pipeline unchanged
    from musicvid.pictures.job import job_pipeline
    from musicvid.settings.render import RenderSettings

    loaded = {name: (m, m.dtype) for name, m in xl.components.items() if isinstance(m, torch.nn.Module)}
    job = job_pipeline(xl, RenderSettings())
    assert {name: (m, m.dtype) for name, m in job.components.items() if name in loaded} == loaded
    assert {name: (m, m.dtype) for name, m in xl.components.items() if name in loaded} == loaded


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
