"""Z-Image-Turbo and FLUX.2 klein, the flow-matching picture families, through their tiny pipelines (the real
diffusers classes with random weights): a render in their half precision whose keyframes land on their frames,
their morphs, the premise that decides how they align, and the options they have nothing for."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import save_file

from musicvid.core.errors import UserError
from musicvid.core.workdir import Workdir
from musicvid.models.choose import choose_models
from musicvid.models.drawing import check_scene_references, fuse_style_loras
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.pictures import flow
from musicvid.pictures.cache import load_picture
from musicvid.pictures.camera import cover
from musicvid.pictures.frames import video_frames
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.slerp import alignment_permutation
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.presets import FAMILIES, KLEIN, PRESETS, TINY_KLEIN, TINY_ZIMAGE, ZIMAGE
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, probe, psnr, render, run, storyboard_with_a_pin

LYRICS = "[00:00.40]the sky is burning\n[00:01.60]rivers made of glass and light\n"
CPU = torch.device("cpu")


@pytest.mark.slow
@pytest.mark.parametrize(
    "preset, precision, look",
    [
        ("tiny-zimage", "bfloat16", {}),
        pytest.param("tiny-klein", "float16", {"look": "music-video", "keyframe_candidates": 2}, marks=pytest.mark.ci),
    ],  # (klein's music-video look in the ci tier: the suite's 6 minutes)
)
def test_a_flow_family_renders_in_bfloat16_with_each_keyframe_on_its_frame(tmp_path, preset, precision, look):
    """float16 asked of a flow-matching family draws in bfloat16, the dtype it is published and trained in; a look's
    16:9 comes in the family's steps of 16 pixels, the best of 2 candidates is a keyframe like any other, and a
    pinned picture is its scene's keyframe, its noise inverted for the morphs (a storyboard the tiny SD made)."""
    song = make_tone(tmp_path / "song.mp3", 3.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    (tmp_path / "pinned.json").write_text(json.dumps(storyboard_with_a_pin(song, tmp_path / "sd", 1)))
    workdir, output = tmp_path / "w", tmp_path / "video.mp4"
    options = [f"--{name.replace('_', '-')}={value}" for name, value in look.items()]
    options += ["--precision", precision, "--fps", "5", "--storyboard", tmp_path / "pinned.json"]
    assert render(song, workdir, "--models", preset, *options, "-o", output) == 0
    settings = resolve_render_settings(PRESETS[preset], {"fps": 5, **look})
    assert settings.width % 16 == 0 and settings.height % 16 == 0
    info = probe(output)
    assert info["frames"] == round(3.03 * settings.video_fps) and info["size"] == settings.video_size
    report = json.loads((workdir / "timings.json").read_text())
    modules = report["models"]["diffusion"]["modules"]
    assert set(modules) == {"text_encoder", "transformer", "vae"} and set(modules.values()) == {"bfloat16"}
    storyboard = load_storyboard(workdir / "storyboard.json")
    schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps)
    frames = list(video_frames(storyboard, schedule, Workdir(workdir), settings))
    for segment in schedule.segments:
        assert np.array_equal(frames[segment.first], load_picture(Workdir(workdir).keyframe(segment.scene)))
    pinned = next(s for s in schedule.segments if s.scene == 1)
    assert (frames[pinned.first] == cover(np.full((64, 64, 3), (200, 40, 90), np.uint8), settings.size)).all()
    morph = next(s for s in schedule.segments if s.target is not None)
    between = frames[morph.first + 1 : morph.end]
    assert between and all(not np.array_equal(f, frames[morph.first]) for f in between)


def draw(pipe, text: torch.Tensor, noise: torch.Tensor, steps: int) -> np.ndarray:
    settings = resolve_render_settings(PRESETS["tiny-zimage"], {"steps": steps})
    with torch.inference_mode():
        latents = flow.call(pipe, [text], [text], noise[None], settings)
        return ((flow.decode(pipe, latents)[0].float() / 2 + 0.5).clamp(0, 1) * 255).permute(1, 2, 0).numpy()


@pytest.mark.parametrize("name", [TINY_ZIMAGE, TINY_KLEIN])
def test_the_flow_families_read_each_text_row_at_its_position_so_a_permuted_prompt_is_another(name):
    """The premise of CSA fails here: Stable Diffusion's UNet reads the text through cross-attention alone, so the
    aligned target draws the target's picture (tests/test_sdxl.py); these transformers give each text row its
    position, so the same rows in CSA's order draw another picture."""
    pipe = load_diffusion(name, CPU, Precision.resolve("float32", CPU))
    near, far = flow.encode_prompts(pipe, ["a lighthouse in a storm at night", "a quiet meadow of red poppies"], CPU)
    near = flow.common_length(near, max(len(near), len(far)))
    far = flow.common_length(far, len(near))
    order = alignment_permutation(near, far, 4)
    assert not torch.equal(order, torch.arange(len(far)))  # CSA moves rows
    noise = torch.randn(
        flow.latent_shape(pipe, resolve_render_settings(PRESETS["tiny-zimage"])),
        generator=torch.Generator().manual_seed(0),
    )
    drawn, permuted = draw(pipe, far, noise, 2), draw(pipe, far[order], noise, 2)
    assert psnr(drawn, draw(pipe, far, noise, 2)) == float("inf")  # deterministic: the difference is the order's
    assert psnr(drawn, permuted) < 90  # (float rounding alone would leave it near-identical, above 100 dB)


def test_a_shorter_prompt_is_padded_with_its_last_row_and_slerped_at_the_longer_length():
    rows = torch.arange(6.0).reshape(3, 2)
    padded = flow.common_length(rows, 5)
    assert padded.shape == (5, 2) and torch.equal(padded[:3], rows) and torch.equal(padded[3:], rows[[-1, -1]])
    assert flow.common_length(rows, 2) is rows


@pytest.mark.parametrize(
    "option, preset, name",
    [
        (["--fast"], "tiny-klein", "FLUX.2 klein"),
        (["--attention-slicing"], "tiny-klein", "FLUX.2 klein"),
        (["--reference", "r.png"], "tiny-zimage", "Z-Image"),  # (klein reads one itself: test_klein_references)
        (["--size", "72x72"], "tiny-klein", "FLUX.2 klein"),
    ],
)
def test_what_a_flow_family_cannot_draw_with_is_refused_before_any_work(tmp_path, capsys, option, preset, name):
    song = make_tone(tmp_path / "song.mp3", 1.0)
    Image.new("RGB", (8, 8)).save(tmp_path / "r.png")
    code, _, err = run(
        capsys, "render", song, "--models", preset, *option, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4"
    )
    assert code == 2 and err.count("\n") == 1 and name in err, err
    assert not (tmp_path / "w").exists()


@pytest.mark.slow
@pytest.mark.parametrize("preset, repository", [pytest.param("zimage", ZIMAGE, marks=pytest.mark.ci), ("klein", KLEIN)])
def test_the_preset_by_hub_name_renders_in_bfloat16(standin_hub, tmp_path, capsys, preset, repository):
    """`musicvid render song --models zimage|klein` as a first run meets it: every model loaded by its hub name,
    offline, from the stand-ins of the real repositories (tests/standins/)."""
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "song.lrc").write_text("[00:00.50]a light in the storm\n")
    options = ["--models", preset, "--precision", "bfloat16", "--lyrics", tmp_path / "song.lrc", "--size", "64x64"]
    code, out, err = run(capsys, "render", song, *options, "--fps", "2", "-q", "--workdir", tmp_path / "w")
    assert code == 0, err
    report = json.loads((tmp_path / "w" / "timings.json").read_text())
    assert report["models"]["diffusion"]["name"] == repository
    assert set(report["models"]["diffusion"]["modules"].values()) == {"bfloat16"}
    assert probe(Path(out.strip()))["frames"] == 4
    # --diffusion naming the family's model brings the family's steps, guidance and size to the default preset
    chosen = choose_models("default", diffusion=repository)
    family = FAMILIES[preset]
    assert (chosen.steps, chosen.guidance, chosen.size, chosen.fast_lora) == (
        family.steps,
        family.guidance,
        family.size,
        None,
    )


def lora_of(transformer: torch.nn.Module, path: Path) -> Path:
    """A random LoRA of the transformer's attention projections, in diffusers' layout (peft's lora_A and lora_B)."""
    generator, state = torch.Generator().manual_seed(1), {}
    for name, module in transformer.named_modules():
        if isinstance(module, torch.nn.Linear) and name.endswith(("to_q", "to_k", "to_v")):
            state[f"transformer.{name}.lora_A.weight"] = torch.randn(4, module.in_features, generator=generator) * 0.3
            state[f"transformer.{name}.lora_B.weight"] = torch.randn(module.out_features, 4, generator=generator) * 0.3
    save_file(state, path)
    return path


@pytest.mark.parametrize("name", [TINY_ZIMAGE, TINY_KLEIN])
def test_a_style_lora_in_the_familys_diffusers_layout_is_fused_into_its_transformer(tmp_path, name):
    pipe = load_diffusion(name, CPU, Precision.resolve("float32", CPU))
    before = {k: v.clone() for k, v in pipe.transformer.state_dict().items()}
    lora = lora_of(pipe.transformer, tmp_path / "style.safetensors")
    fuse_style_loras(pipe, Loras((Lora(str(lora), 0.8),)))
    after = pipe.transformer.state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert (
        after.keys() == before.keys()
        and changed
        and all(k.endswith(("to_q.weight", "to_k.weight", "to_v.weight")) for k in changed)
    )
    other = load_diffusion(TINY_KLEIN if name == TINY_ZIMAGE else TINY_ZIMAGE, CPU, Precision.resolve("float32", CPU))
    with pytest.raises(UserError, match="is not a LoRA of this picture model"):
        fuse_style_loras(other, Loras((Lora(str(lora), 1.0),)))


@pytest.mark.parametrize("name", [TINY_ZIMAGE, TINY_KLEIN])
def test_the_noise_inverted_from_what_a_noise_drew_draws_it_again(name):
    """A pinned picture's noise: its latents taken back up the sampler's noise levels (flow.invert_latents) draw
    the same latents again, within a rounding of the Euler steps, where another noise draws another picture."""
    pipe = load_diffusion(name, CPU, Precision.resolve("float32", CPU))
    settings = resolve_render_settings(PRESETS["tiny-klein" if name == TINY_KLEIN else "tiny-zimage"])
    [text] = flow.encode_prompts(pipe, ["a lighthouse in a storm"], CPU)
    shape = flow.latent_shape(pipe, settings)
    noise, other = (torch.randn(shape, generator=torch.Generator().manual_seed(seed)) for seed in (1, 2))
    with torch.inference_mode():
        drawn = flow.call(pipe, [text], [text], noise[None], settings)
        # (klein's pipeline leaves its latents as its VAE reads them: back into its sampler's patches)
        inverted = flow.invert_latents(
            pipe, flow.sampler_latents(pipe, drawn) if name == TINY_KLEIN else drawn, text, settings.steps
        )
        again, elsewhere = (flow.call(pipe, [text], [text], n[None], settings) for n in (inverted, other))
    error = lambda latents: float((latents - drawn).norm() / drawn.norm())  # noqa: E731
    assert error(again) < 0.2 and error(elsewhere) > 1.0
    assert float((inverted - noise).norm() / noise.norm()) < 0.2


def test_a_storyboards_own_reference_pictures_are_refused_with_a_flow_family_naming_it():
    with pytest.raises(UserError, match="reference pictures take an IP-Adapter, which Z-Image has not"):
        check_scene_references(PRESETS["tiny-zimage"])
