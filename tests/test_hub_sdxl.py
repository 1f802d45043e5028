"""SDXL and what is made for it as a first run meets them, loaded by hub name offline (tests/standins/sdxl.py):
its pipeline, size, LCM-LoRA, TAESD and IP-Adapter, a local copy known by its model index, and its VAE kept in
float32 under a float16 pipeline."""

import json

import pytest
import torch

from musicvid.models.choose import choose_models
from musicvid.models.drawing import Drawing, load_drawing
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.pictures.denoise import decode
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.presets import SD15, SDXL
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone
from tests.helpers import run as run_cli
from tests.standins.hub import snapshot
from tests.standins.ip_adapter import IP_ADAPTER_REPO

pytestmark = pytest.mark.slow

TEXT_ENCODER_FILES = ("config.json", "model.fp16.safetensors", "model.safetensors")


TOKENIZER_FILES = ("merges.txt", "special_tokens_map.json", "tokenizer_config.json", "vocab.json")


DIFFUSERS_MODEL_FILES = (
    "config.json",
    "diffusion_pytorch_model.fp16.safetensors",
    "diffusion_pytorch_model.safetensors",
)


@pytest.mark.ci  # (a first run by hub name: the ci tier; SDXL's tiny render stays in the suite)
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
    code, _, err = run_cli(capsys, "storyboard", "--keyframes", "song.mp3", "--diffusion", other)
    assert code == 2 and err.count("\n") == 1 and "is a FluxPipeline, not a Stable Diffusion" in err
    (tmp_path / "sd_xl_base_1.0.safetensors").write_bytes(b"")
    code, _, err = run_cli(
        capsys, "storyboard", "--keyframes", "song.mp3", "--diffusion", tmp_path / "sd_xl_base_1.0.safetensors"
    )
    assert code == 2 and err.count("\n") == 1 and "cannot be read as a safetensors file" in err

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
    # a render over the loaded SDXL draws with its modules as loaded: none cast, the kept pipeline unchanged
    from musicvid.settings.render import RenderSettings

    loaded = {name: (m, m.dtype) for name, m in xl.components.items() if isinstance(m, torch.nn.Module)}
    own = pipeline_for(xl, RenderSettings())
    assert {name: (m, m.dtype) for name, m in own.components.items() if name in loaded} == loaded
    assert {name: (m, m.dtype) for name, m in xl.components.items() if name in loaded} == loaded
