"""SDXL: two text encoders side by side, a pooled text embedding slerped along morphs, its own size and
models, a VAE kept in float32; drawn end to end by the tiny-xl preset."""

import math

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from musicvid.core.workdir import Workdir
from musicvid.models.choose import choose_models
from musicvid.models.drawing import Drawing, fuse_style_loras, load_drawing
from musicvid.models.tiny import local_diffusion, random_lora
from musicvid.pictures.cache import load_picture
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.frames import video_frames
from musicvid.pictures.grouping import Picture
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.slerp import align, slerp
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.presets import (
    IP_ADAPTER,
    IP_ADAPTER_XL,
    LCM_LORA_XL,
    PRESETS,
    SDXL,
    TAESD_XL,
    TINY,
    TINY_XL,
)
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, load_storyboard
from tests.helpers import TONE_LYRICS, make_tone, probe, render

TINY_XL_MODELS = PRESETS["tiny-xl"]


def board(prompts, pictures=()):
    scenes = [
        Scene(index=i, kind="lyric", start=i, end=i + 1.0, text="", prompt=p, seed=i, picture=pic)
        for i, (p, pic) in enumerate(zip(prompts, [*pictures, *[None] * len(prompts)]))
    ]
    return Storyboard(audio=SongAudio(len(scenes)), scenes=scenes)


def test_the_sdxl_preset_and_an_sdxl_diffusion_bring_sdxl_size_and_models():
    for models in (PRESETS["sdxl"], choose_models("default", diffusion=SDXL)):
        assert models.diffusion == SDXL and models.size == (1024, 1024)
        assert (models.fast_lora, models.fast_decoder, models.ip_adapter) == (LCM_LORA_XL, TAESD_XL, IP_ADAPTER_XL)
    # what a person named stays theirs; the tiny presets' own models stay tiny
    assert choose_models("default", diffusion=SDXL, ip_adapter=IP_ADAPTER).ip_adapter == IP_ADAPTER
    assert choose_models("tiny", diffusion=TINY_XL) == TINY_XL_MODELS and TINY_XL_MODELS.fast_lora == TINY
    # --aspect sizes keep SDXL's pixel count, in SDXL's steps of 64
    width, height = resolve_render_settings(PRESETS["sdxl"], {"aspect": "16:9"}).size
    assert (width, height) == (1344, 768) and abs(math.log(width * height / 1024**2)) < 0.05


def test_sdxl_text_is_both_encoders_side_by_side_and_a_morph_slerps_it_with_the_pooled_text(tmp_path):
    pipe = local_diffusion(TINY_XL)
    settings = resolve_render_settings(TINY_XL_MODELS, {"steps": 2})
    own = pipeline_for(pipe, settings)
    inputs = SceneInputs(own, board(["a red sky over the sea", "rivers made of glass"]), [0, 1], settings)
    widths = pipe.text_encoder.config.hidden_size + pipe.text_encoder_2.config.hidden_size
    assert inputs.text[0].shape == (77, widths) == (77, pipe.unet.config.cross_attention_dim)
    assert inputs.pooled[0].shape == (pipe.text_encoder_2.config.projection_dim,)
    # no negative prompt is zeros, as SDXL's pipeline makes it; a negative prompt is encoded
    assert not inputs.negative.any() and not inputs.negative_pooled.any()
    with_negative = resolve_render_settings(TINY_XL_MODELS, {"negative_prompt": "blurry"})
    assert SceneInputs(own, board(["a", "b"]), [0], with_negative).negative_pooled.any()

    keyframe = inputs.conditioning(Picture(None, "", 0, None, 0.0))
    assert torch.equal(keyframe.text, inputs.text[0]) and torch.equal(keyframe.pooled, inputs.pooled[0])
    middle = inputs.conditioning(Picture(None, "", 0, 1, 0.5))
    aligned = align(inputs.text[0], inputs.text[1], settings.align_chunk)  # CSA over the 2-encoder rows
    assert torch.allclose(middle.text, slerp(inputs.text[0], aligned, 0.5))
    assert torch.allclose(middle.pooled, slerp(inputs.pooled[0], inputs.pooled[1], 0.5))  # one vector: no CSA
    end = inputs.conditioning(Picture(None, "", 0, 1, 1.0))
    assert torch.equal(end.pooled, inputs.pooled[1])

    # CSA is sound for SDXL too: the UNet reads the text through cross-attention only, whatever its rows' order
    order = torch.cat([torch.arange(1), torch.randperm(76, generator=torch.Generator().manual_seed(0)) + 1])
    latents = torch.randn(1, 4, 8, 8, generator=torch.Generator().manual_seed(1))
    sizes = {"text_embeds": inputs.pooled[0][None], "time_ids": torch.tensor([[64.0, 64, 0, 0, 64, 64]])}
    with torch.inference_mode():
        plain, permuted = (
            pipe.unet(latents, 500, encoder_hidden_states=text[None], added_cond_kwargs=sizes).sample
            for text in (inputs.text[0], inputs.text[0][order])
        )
    assert torch.allclose(plain, permuted, atol=1e-5)


def test_an_sdxl_keyframe_pinned_to_a_picture_inverts_under_the_pooled_text_and_size(tmp_path):
    from PIL import Image

    y, x = np.mgrid[0:64, 0:64]
    Image.fromarray(np.stack([x * 4, y * 4, x * 0 + 90], axis=2).astype(np.uint8)).save(tmp_path / "pin.png")
    settings = resolve_render_settings(TINY_XL_MODELS, {"steps": 2})
    own = pipeline_for(local_diffusion(TINY_XL), settings)
    pinned = SceneInputs(own, board(["a", "b"], [str(tmp_path / "pin.png")]), [0, 1], settings)
    plain = SceneInputs(own, board(["a", "b"]), [0, 1], settings)
    assert pinned.noise[0].shape == plain.noise[0].shape == (4, 8, 8)
    assert not torch.equal(pinned.noise[0], plain.noise[0]) and torch.isfinite(pinned.noise[0]).all()
    assert torch.equal(pinned.noise[1], plain.noise[1])


def test_style_loras_fuse_into_sdxls_unet_and_both_text_encoders(tmp_path):
    """kohya's SDXL layout: lora_unet_, and lora_te1_ and lora_te2_ for the two text encoders."""
    plain = local_diffusion(TINY_XL)
    state = random_lora(plain.unet, seed=3, targets=("to_q", "to_k", "to_v", "to_out.0"))
    for prefix, encoder in (("lora_te1_", plain.text_encoder), ("lora_te2_", plain.text_encoder_2)):
        state |= random_lora(encoder, seed=4, prefix=prefix, targets=("q_proj", "k_proj", "v_proj", "out_proj"))
    save_file({k: v.half().contiguous() for k, v in state.items()}, tmp_path / "style.safetensors")
    styled = local_diffusion(TINY_XL)
    fuse_style_loras(styled, Loras([Lora(str(tmp_path / "style.safetensors"), 0.7)]))
    for part in ("unet", "text_encoder", "text_encoder_2"):
        before, after = getattr(plain, part).state_dict(), getattr(styled, part).state_dict()
        assert any(not torch.equal(before[k], after[k]) for k in before), part
        assert not any("lora" in k for k in after)


def test_a_drawing_with_fast_and_a_reference_loads_for_sdxl():
    pipe = load_drawing(TINY_XL_MODELS, Drawing(fast=True, reference=True), torch.device("cpu"))
    assert type(pipe).__name__ == "StableDiffusionXLPipeline" and type(pipe.vae).__name__ == "AutoencoderTiny"
    assert pipe.unet.encoder_hid_proj is not None


@pytest.mark.slow
def test_tiny_xl_renders_a_valid_mp4_with_each_scene_on_its_keyframe(tmp_path):
    song = make_tone(tmp_path / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(TONE_LYRICS)
    output = tmp_path / "video.mp4"
    assert render(song, tmp_path / "w", "--models", "tiny-xl", "-o", output) == 0
    info = probe(output)
    assert info["video_codec"] == "h264" and info["frames"] == 60 and info["size"] == (64, 64)
    storyboard = load_storyboard(tmp_path / "w" / "storyboard.json")
    settings = resolve_render_settings(TINY_XL_MODELS)
    schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps)
    frames = list(video_frames(storyboard, schedule, Workdir(tmp_path / "w"), settings))
    for segment in schedule.segments:
        assert np.array_equal(frames[segment.first], load_picture(Workdir(tmp_path / "w").keyframe(segment.scene)))
    middle = schedule.segments[1]
    assert not np.array_equal(frames[middle.first + 3], frames[middle.first])
    # drawn by SDXL's classes: SD 1.5's tiny model draws other keyframes from the same storyboard
    assert render(song, tmp_path / "sd", "--models", "tiny") == 0
    sd_keyframe = load_picture(Workdir(tmp_path / "sd").keyframe(middle.scene))
    assert not np.array_equal(sd_keyframe, load_picture(Workdir(tmp_path / "w").keyframe(middle.scene)))
