"""Stable Diffusion 1.5 and what is made for it as a first run meets them, loaded by hub name offline
(tests/standins/sd.py, ip_adapter.py, loras.py): its fp16 weights where the repository has them, --fast's
LCM-LoRA and TAESD, --reference's IP-Adapter and a kohya LoRA, each drawing a morph."""

import dataclasses

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from musicvid.models.drawing import Drawing, check_drawing_files, load_drawing
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.models.timing import Timings
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.denoise import draw_group
from musicvid.pictures.grouping import Picture
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.presets import IP_ADAPTER, LCM_LORA, PRESETS, SD15, TAESD
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.standins.hub import snapshot
from tests.standins.ip_adapter import IP_ADAPTER_REPO
from tests.standins.loras import KOHYA_LORA

pytestmark = pytest.mark.slow


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
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    settings = resolve_render_settings(PRESETS["default"], {"fast": True, "size": (64, 64)})
    check_drawing_files(PRESETS["default"], settings, references=False)  # the real layouts pass the checks before work
    own = pipeline_for(fast, settings)
    pictures = [Picture(None, "", 0, None, 0.0), Picture(None, "", 0, 1, 0.5)]
    drawn = draw_group(own, SceneInputs(own, board, [0, 1], settings), pictures, settings, Timings())
    assert drawn.shape == (2, 64, 64, 3) and drawn.dtype == np.uint8


def test_a_reference_picture_and_a_kohya_lora_load_by_hub_name_and_draw_a_morph(standin_hub, tmp_path):
    """--reference's and --lora's first run: h94/IP-Adapter's SD 1.5 adapter with its image encoder from
    the folder beside it, and a kohya LoRA given as a hub file, fused into the UNet and the text encoder."""
    from PIL import Image

    adapter = snapshot(standin_hub, IP_ADAPTER_REPO) / "models"
    assert sorted(p.name for p in adapter.iterdir()) == [
        "image_encoder",
        "ip-adapter-full-face_sd15.safetensors",
        "ip-adapter-plus_sd15.safetensors",
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
    board = Storyboard(audio=SongAudio(2.0), scenes=scenes)
    settings = resolve_render_settings(
        PRESETS["default"], {"size": (64, 64), "steps": 2, "reference": tmp_path / "look.png"}
    )
    checked = dataclasses.replace(settings, lora=Loras([Lora(KOHYA_LORA, 0.8)]))
    check_drawing_files(PRESETS["default"], checked, references=True)  # the real layouts pass the checks before work
    own = pipeline_for(styled, settings)
    pictures = [Picture(None, "", 0, None, 0.0), Picture(None, "", 0, 1, 0.5)]
    drawn = draw_group(own, SceneInputs(own, board, [0, 1], settings), pictures, settings, Timings())
    assert drawn.shape == (2, 64, 64, 3) and drawn.dtype == np.uint8
