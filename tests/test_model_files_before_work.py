"""The files a picture model draws with besides its own weights, refused before any work in one sentence: a style
or few-step LoRA of another picture family (read from its safetensors header), and a --fast-lora, --fast-decoder or
--ip-adapter that is not there or not what its option says; a LoRA whose header does not say its family is still
refused in one line as it loads."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import torch
from PIL import Image
from safetensors.torch import load_file, save_file

from musicvid.core.errors import UserError
from musicvid.models.drawing import check_drawing_files, fuse_style_loras
from musicvid.models.lora_files import LORA_HALVES, adapted_family, check_lora, check_lycoris, lora_family
from musicvid.models.single_file import read_header
from musicvid.models.tiny import local_diffusion, random_lora
from musicvid.models.tiny_flow import TINY_FLOW, flow_classes
from musicvid.settings.loras import Lora, Loras
from musicvid.settings.presets import FAMILIES, PRESETS, TINY, TINY_KLEIN, TINY_XL, TINY_ZIMAGE
from musicvid.settings.resolve import resolve_render_settings
from tests.helpers import make_tone, quick, run
from tests.standins.loras import diffusers_lora, kohya_lora
from tests.test_model_checks import refused_before_the_work

SD, XL, UNET = frozenset({"sd"}), frozenset({"sdxl"}), frozenset({"sd", "sdxl"})
# The cross-attention's key in each layout, and its down matrix's name
KOHYA = "lora_unet_{}_attentions_0_transformer_blocks_0_attn2_to_k.lora_down.weight"
PEFT = "unet.{}.attentions.0.transformer_blocks.0.attn2.to_k.lora_A.weight"
# LoRAs as their trainers lay them out, by names and shapes (rank 1): what is published, and the families it fits
LAYOUTS = {
    "kohya SD 1.5": ({KOHYA.format("down_blocks_0"): (1, 768), "lora_te_text_model_encoder_layers_0_mlp_fc1.lora_down.weight": (1, 768)}, SD),
    "kohya SD 1.5 in the original block names": ({"lora_unet_input_blocks_1_1_transformer_blocks_0_attn2_to_v.lora_down.weight": (1, 768)}, SD),
    "kohya SD 2.x": ({KOHYA.format("down_blocks_0"): (1, 1024), "lora_te_text_model_encoder_layers_0_mlp_fc1.lora_down.weight": (1, 1024)}, frozenset({"sd2"})),
    "kohya SDXL": ({KOHYA.format("down_blocks_1"): (1, 2048), "lora_te1_text_model_encoder_layers_0_mlp_fc1.lora_down.weight": (1, 768), "lora_te2_text_model_encoder_layers_0_mlp_fc1.lora_down.weight": (1, 1280)}, XL),
    "kohya SDXL, its UNet alone": ({"lora_unet_output_blocks_0_1_transformer_blocks_3_attn2_to_k.lora_down.weight": (1, 2048)}, XL),
    "LCM-LoRA of SD 1.5": ({KOHYA.format("up_blocks_1"): (64, 768), "lora_unet_up_blocks_1_resnets_0_conv1.lora_down.weight": (64, 1280, 3, 3)}, SD),
    "diffusers SD 1.5": ({PEFT.format("down_blocks.0"): (1, 768), "text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight": (1, 768)}, SD),
    "diffusers SD 1.5, lora.down": ({"unet.mid_block.attentions.0.transformer_blocks.0.attn2.to_v.lora.down.weight": (1, 768)}, SD),
    "diffusers SDXL": ({PEFT.format("up_blocks.0"): (1, 2048), "text_encoder_2.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight": (1, 1280)}, XL),
    "diffusers SDXL's text encoders alone beside its UNet's self-attention": ({"unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q.lora_A.weight": (1, 640), "text_encoder.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight": (1, 768), "text_encoder_2.text_model.encoder.layers.0.self_attn.q_proj.lora_A.weight": (1, 1280)}, XL),
    "a UNet's self-attention alone": ({"unet.down_blocks.1.attentions.0.transformer_blocks.0.attn1.to_q.lora_A.weight": (1, 640)}, UNET),
    "widths that disagree": ({KOHYA.format("down_blocks_1"): (1, 2048), KOHYA.format("down_blocks_0"): (1, 768)}, UNET),
    "a width beside another's text encoder names": ({KOHYA.format("down_blocks_1"): (1, 2048), "lora_te_text_model_encoder_layers_0_mlp_fc1.lora_down.weight": (1, 768)}, XL),
    "Z-Image in diffusers' names": ({"transformer.layers.0.attention.to_q.lora_A.weight": (1, 3840)}, frozenset({"zimage"})),
    "Z-Image in its authors' names": ({"diffusion_model.context_refiner.0.attention.qkv.lora_A.weight": (1, 3840)}, frozenset({"zimage"})),
    "FLUX.2 klein in diffusers' names": ({"transformer.single_transformer_blocks.0.attn.to_qkv_mlp_proj.lora_A.weight": (1, 3072)}, frozenset({"klein"})),
    "FLUX.2 klein's double-stream blocks alone": ({"transformer.transformer_blocks.0.attn.to_q.lora_A.weight": (1, 3072)}, frozenset({"klein"})),
    "FLUX in kohya's names": ({"lora_unet_double_blocks_0_img_attn_qkv.lora_down.weight": (1, 3072)}, frozenset({"klein"})),
    "a layout not known here": ({"blocks.0.attn.qkv.lora_A.weight": (1, 64)}, None),
}  # fmt: skip


def written(path: Path, shapes: dict[str, tuple]) -> Path:
    """A safetensors file of `shapes`; a LoRA's every down matrix with its up one, as trainers write them."""
    ups = {
        up.join(key.rsplit(down, 1)): (1, shape[0])
        for key, shape in shapes.items()
        for down, up in LORA_HALVES
        if down in key
    }
    save_file({key: torch.zeros(shape) for key, shape in {**shapes, **ups}.items()}, path)
    return path


@pytest.mark.parametrize(
    "shapes, said",
    [
        ({"weight": (4, 4)}, "is not a LoRA: none of its tensors is named as a LoRA's are (it holds weight)"),
        ({"lora_unet_down.lora_down.weight": (1, 4)}, "its lora_unet_down.lora_down.weight has no lora_unet_down.lora_up"),
        ({PEFT.format("down_blocks.0"): (1, 768), "unet.a.lora_A.weight": (1, 4), "unet.a.lora_B.weight": (4, 1)}, "no unet.down_blocks.0.attentions.0.transformer_blocks.0.attn2.to_k.lora_B.weight beside"),
        ({"lora_unet_a.lora_down.weight": (4, 8), "lora_unet_a.lora_up.weight": (8, 8)}, "is not a whole LoRA: its lora_unet_a.lora_down.weight is of rank 4 and its lora_unet_a.lora_up.weight of rank 8"),
    ],
)  # fmt: skip
def test_a_file_named_as_no_lora_or_a_lora_missing_an_up_matrix_is_refused_from_its_header(tmp_path, shapes, said):
    save_file({key: torch.zeros(shape) for key, shape in shapes.items()}, tmp_path / "x.safetensors")
    for family in (None, "sd"):  # before, and whatever, its family
        with pytest.raises(UserError, match="^style LoRA x.safetensors is not a") as refused:
            check_lora(tmp_path / "x.safetensors", "style LoRA x.safetensors", family)
        assert said in str(refused.value)


def test_a_lycoris_file_is_refused_for_a_family_diffusers_loads_it_into_for_none(tmp_path):
    """LyCORIS's LoKr and LoHa are named a LoRA's kind, but diffusers converts a LoKr only into Z-Image's and FLUX.2
    klein's transformers, and a LoHa into none: a Stable Diffusion one would fail after the storyboard."""
    layer = "lora_unet_down_blocks_1_attentions_0_proj_in"
    lokr = {f"{layer}.lokr_w1": (2, 2), f"{layer}.lokr_w2": (16, 16), f"{layer}.alpha": ()}
    loha = {f"{layer}.hada_w1_a": (32, 4), f"{layer}.hada_w1_b": (4, 32), f"{layer}.alpha": ()}
    for name, shapes in (("lokr", lokr), ("loha", loha)):
        save_file({key: torch.zeros(shape) for key, shape in shapes.items()}, path := tmp_path / f"{name}.safetensors")
        kind, into = (
            ("LoKr", "only into FLUX.2 klein and Z-Image") if name == "lokr" else ("LoHa", "into no picture model")
        )
        for family in ("sd", "sdxl"):
            with pytest.raises(
                UserError, match=f"^style LoRA x is a LyCORIS {kind}, which diffusers loads {into}: give"
            ):
                check_lora(path, "style LoRA x", family)
    with pytest.raises(UserError, match="LoHa"):
        check_lora(tmp_path / "loha.safetensors", "style LoRA x", "klein")
    check_lycoris({f"{layer}.lokr_w1": [2, 2]}, "style LoRA x", "klein")  # (its loader converts it)


def test_an_older_bin_lora_that_holds_no_weights_is_refused_from_its_first_bytes(tmp_path):
    """A .bin is read only as it loads, after the storyboard; a page or a Git LFS pointer saved in its place is told
    apart from torch's archive and an older pickle by its first bytes."""
    torch.save({"lora_unet_a.lora_down.weight": torch.zeros(1, 4)}, older := tmp_path / "older.bin")
    check_lora(older, "style LoRA older.bin", "sd")
    (lfs := tmp_path / "lfs.bin").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:00\nsize 9\n")
    (page := tmp_path / "page.bin").write_text("<html><head><title>Sign in")
    for path, said in ((lfs, "is a Git LFS pointer"), (page, "holds no PyTorch weights: neither torch's zip archive")):
        with pytest.raises(UserError, match=f"^style LoRA {path.name} {said}"):
            check_lora(path, f"style LoRA {path.name}", "sd")


def test_a_lora_diffusers_cannot_load_is_refused_in_a_sentence_not_a_bare_keyerror(tmp_path):
    """What a header check lets through fails as it loads, in words (here a LoRA missing an up matrix, which the
    check refuses first)."""
    lora = tmp_path / "half.safetensors"
    save_file({"lora_unet_down.lora_down.weight": torch.zeros(1, 4)}, lora)
    with pytest.raises(UserError) as refused:
        fuse_style_loras(local_diffusion(TINY), Loras([Lora(str(lora))]))
    assert str(refused.value).endswith(
        "half.safetensors is not a LoRA of this picture model (it has no tensor lora_unet_down.lora_up.weight, which "
        "diffusers looks for in a LoRA of its layout)"
    )


def test_a_kohya_lora_whose_text_encoder_attention_lacks_out_proj_is_refused_as_diffusers_would_load_it_in_part(
    tmp_path,
):
    from safetensors.torch import load

    from tests.standins.loras import kohya_lora

    whole = load(kohya_lora())
    part = {key: value for key, value in whole.items() if not ("lora_te_" in key and "out_proj" in key)}
    changed = []
    for state in (whole, part):
        save_file(state, lora := tmp_path / f"{len(state)}.safetensors")
        pipe = local_diffusion(TINY)
        before = {key: value.clone() for key, value in pipe.text_encoder.state_dict().items()}
        fuse_style_loras(pipe, Loras([Lora(str(lora))]))
        changed.append(sum(not torch.equal(before[k], v) for k, v in pipe.text_encoder.state_dict().items()))
    assert changed == [12, 4]  # (without out_proj, diffusers fused the MLP's fc1 and fc2 alone: q, k and v left out)
    check_lora(tmp_path / f"{len(whole)}.safetensors", "style LoRA x", "sd")
    said = "^style LoRA x: its text encoder's layer lora_te_text_model_encoder_layers_0 adapts q_proj, k_proj and v_pr"
    with pytest.raises(UserError, match=said):
        check_lora(lora, "style LoRA x", "sd")


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_loras_family_is_read_from_its_header_and_another_familys_refused(tmp_path, layout):
    shapes, fits = LAYOUTS[layout]
    lora = written(tmp_path / "style.safetensors", shapes)
    assert (lora_family(read_header(lora, "x")) or (None,))[0] == fits
    for family in FAMILIES:
        if fits is None or family in fits:
            check_lora(lora, "--lora style.safetensors", family)
        else:
            with pytest.raises(UserError, match=r"^--lora style.safetensors: a LoRA of .*, not of "):
                check_lora(lora, "--lora style.safetensors", family)


def kohya_xl_lora(path: Path) -> Path:
    """A kohya LoRA of the tiny SDXL: lora_unet_, lora_te1_ and lora_te2_ (as test_sdxl fuses)."""
    pipe = local_diffusion(TINY_XL)
    state = random_lora(pipe.unet, targets=("to_q", "to_k", "to_v"))
    for prefix, encoder in (("lora_te1_text_model_", pipe.text_encoder), ("lora_te2_text_model_", pipe.text_encoder_2)):
        state |= random_lora(encoder, prefix=prefix, targets=("q_proj", "k_proj", "v_proj", "out_proj"))
    save_file(state, path)
    return path


def flow_lora(name: str, path: Path) -> Path:
    """A LoRA of the tiny flow transformer's attention, in diffusers' layout (as test_flow_families fuses)."""
    transformer = flow_classes(FAMILIES_OF[name])["transformer"].from_config(TINY_FLOW[name]["transformer"])
    state = {
        f"transformer.{layer}.{matrix}.weight": torch.zeros(4, 4)
        for layer, module in transformer.named_modules()
        if isinstance(module, torch.nn.Linear) and layer.endswith(("to_q", "to_k"))
        for matrix in ("lora_A", "lora_B")
    }
    save_file(state, path)
    return path


FAMILIES_OF = {TINY_ZIMAGE: "zimage", TINY_KLEIN: "klein"}


def test_the_stand_in_loras_fit_their_own_family_alone(tmp_path):
    (kohya := tmp_path / "kohya.safetensors").write_bytes(kohya_lora())
    made = {
        kohya: "sd",
        kohya_xl_lora(tmp_path / "xl.safetensors"): "sdxl",
        **{flow_lora(name, tmp_path / f"{family}.safetensors"): family for name, family in FAMILIES_OF.items()},
    }
    for lora, own in made.items():
        for family in FAMILIES:
            if family == own:
                check_lora(lora, "--lora x", family)
            else:
                with pytest.raises(UserError, match="a LoRA of"):
                    check_lora(lora, "--lora x", family)
    check_lora(diffusers_lora(tmp_path), "--lora x", "sdxl")  # a UNet's attention at no telling width: left to load


def test_an_sd_folder_whose_unet_reads_text_1024_wide_takes_stable_diffusion_2_loras_alone(tmp_path):
    """An SD 2.x folder is drawn as SD's: an SD 1.x LoRA passed the check and failed after the storyboard (round 10)."""
    (tmp_path / "sd2" / "unet").mkdir(parents=True)
    (tmp_path / "sd2" / "unet" / "config.json").write_text(json.dumps({"cross_attention_dim": 1024}))
    assert [adapted_family(str(tmp_path / "sd2"), family) for family in ("sd", "sdxl")] == ["sd2", "sdxl"]
    assert adapted_family("nobody/not-in-the-cache", "sd") == adapted_family(str(tmp_path), "sd") == "sd"
    sd15 = written(tmp_path / "sd15.safetensors", {KOHYA.format("down_blocks_1"): (1, 768)})
    with pytest.raises(UserError, match="^--lora x: a LoRA of Stable Diffusion 1.x, not of Stable Diffusion 2.x$"):
        check_lora(sd15, "--lora x", "sd2")
    check_lora(written(tmp_path / "sd2.safetensors", {KOHYA.format("down_blocks_1"): (1, 1024)}), "--lora x", "sd2")


@pytest.fixture
def song(tmp_path):
    return make_tone(tmp_path / "song.wav", 2)


@pytest.mark.parametrize(
    "models, said",
    [("tiny-xl", "Stable Diffusion 1.x, not of SDXL"), ("tiny-zimage", "Stable Diffusion 1.x, not of Z-Image")],
)
def test_a_style_lora_of_another_family_is_refused_before_any_work(capsys, tmp_path, song, models, said):
    (lora := tmp_path / "sd.safetensors").write_bytes(kohya_lora())
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--models", models, "--lora", lora], said)


@pytest.mark.parametrize("flag", ["--lora", "--fast-lora"])
@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_a_lora_whose_weights_are_not_finite_is_refused_before_any_work(capsys, tmp_path, song, flag, value):
    (good := tmp_path / "sd.safetensors").write_bytes(kohya_lora())
    tensors = load_file(good)
    last = sorted(tensors)[-1]
    tensors[last].view(-1)[0] = value  # one value is enough to draw black
    save_file(tensors, lora := tmp_path / "bad.safetensors")
    fast = ["--fast"] if flag == "--fast-lora" else []
    said = f"{flag} {lora}: its weights hold NaN or infinite values ({last})"
    refused_before_the_work(capsys, tmp_path, [*quick(song), *fast, flag, lora], said)


def test_a_lora_of_another_model_that_its_header_does_not_tell_is_refused_in_one_line(capfd, tmp_path):
    """diffusers' own log of each layer that does not fit is silenced: musicvid's sentence is the one line."""
    lora = diffusers_lora(tmp_path)  # of the tiny SD's UNet, whose widths the tiny SDXL's are not
    pipe = local_diffusion(TINY_XL)
    capfd.readouterr()
    with pytest.raises(UserError, match="is not a LoRA of this picture model"):
        fuse_style_loras(pipe, Loras([Lora(str(lora))]))
    assert capfd.readouterr().err == ""


def picture(path: Path) -> Path:
    Image.new("RGB", (32, 32), "red").save(path)
    return path


@pytest.mark.parametrize(
    "given, said",
    [
        ("--fast --fast-lora {tmp}/nope.safetensors", "--fast-lora {tmp}/nope.safetensors: there is no such file"),
        ("--fast --fast-lora {tmp}/vae.safetensors", "is not a LoRA: it holds a VAE alone"),
        ("--fast --fast-lora {tmp}/xl.safetensors", "a LoRA of SDXL, not of Stable Diffusion 1.x"),
        ("--fast --fast-decoder {tmp}/empty", "--fast-decoder {tmp}/empty holds no config.json"),
        ("--fast --fast-decoder {tmp}/unet", "is a UNet2DConditionModel, not a tiny autoencoder"),
        ("--fast --fast-decoder {tmp}/taef1", "decodes latents of 16 channels, where Stable Diffusion 1.x draws 4"),
        ("--fast --fast-lora {tmp}/sd2.safetensors", "a LoRA of Stable Diffusion 2.x, not of Stable Diffusion 1.x"),
        ("--reference {tmp}/ref.png --ip-adapter {tmp}/nope.safetensors", "nope.safetensors: there is no such file"),
        ("--reference {tmp}/ref.png --ip-adapter {tmp}/sd.safetensors", "is not an IP-Adapter: it holds a LoRA"),
        ("--reference {tmp}/ref.png --ip-adapter {tmp}/adapter.safetensors", "no image_encoder/config.json beside"),
        ("--reference {tmp}/ref.png --ip-adapter {tmp}/xl_adapter.safetensors", "an IP-Adapter of SDXL, not of Stable"),
    ],
)
def test_a_fast_lora_decoder_or_adapter_not_there_or_not_so_is_refused_before_any_work(
    capsys, tmp_path, song, given, said
):
    written(tmp_path / "vae.safetensors", {"encoder.down.0.block.0.conv1.weight": (4, 3, 3, 3)})
    written(tmp_path / "xl.safetensors", {KOHYA.format("down_blocks_1"): (1, 2048)})
    written(tmp_path / "adapter.safetensors", {"image_proj.proj.weight": (4, 4), "ip_adapter.1.to_k_ip.weight": (4, 4)})
    written(
        tmp_path / "xl_adapter.safetensors",
        {"image_proj.proj.weight": (4, 4), "ip_adapter.1.to_k_ip.weight": (4, 2048)},
    )
    (tmp_path / "sd.safetensors").write_bytes(kohya_lora())
    (tmp_path / "empty").mkdir()
    (tmp_path / "unet").mkdir()
    (tmp_path / "unet" / "config.json").write_text(json.dumps({"_class_name": "UNet2DConditionModel"}))
    (tmp_path / "taef1").mkdir()  # FLUX's tiny decoder
    (tmp_path / "taef1" / "config.json").write_text(
        json.dumps({"_class_name": "AutoencoderTiny", "latent_channels": 16})
    )
    written(tmp_path / "sd2.safetensors", {KOHYA.format("down_blocks_1"): (1, 1024)})
    picture(tmp_path / "ref.png")
    argv = [*quick(song), *given.format(tmp=tmp_path).split()]
    refused_before_the_work(capsys, tmp_path, argv, said.format(tmp=tmp_path))


@pytest.mark.parametrize(
    "given",
    [
        "--fast --fast-lora ./nope/x.safetensors",
        "--reference ref.png --ip-adapter ./nope/x.safetensors",
        "--lora ./nope/x.safetensors",
        "--lora a..b/c/x.safetensors",  # no hub repository's name either
        "--resolution 720p --upscaler ../nope/x.pth",
        "--resolution 720p --upscaler ~/nope/x.pth",
    ],
)
def test_a_path_typed_wrong_is_said_to_be_missing_not_advised_to_be_downloaded(
    capsys, tmp_path, monkeypatch, song, given
):
    monkeypatch.chdir(tmp_path)
    picture(tmp_path / "ref.png")
    *options, name = given.split()
    argv = [*quick(song), *options, name]
    refused_before_the_work(capsys, tmp_path, argv, f"{options[-1]} {name}: there is no such file")


def test_fast_and_adapter_models_are_checked_only_where_they_act_and_nothing_is_downloaded(tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # a hub name not cached loads later
    nope = str(tmp_path / "nope.safetensors")
    models = dataclasses.replace(PRESETS["tiny"], fast_lora=nope, fast_decoder=nope, ip_adapter=nope)
    check_drawing_files(models, resolve_render_settings(models), references=False)  # neither --fast nor a reference
    hub = dataclasses.replace(
        PRESETS["tiny"],
        fast_lora="someone/not-in-the-cache",
        fast_decoder="someone/taesd-not-in-the-cache",
        ip_adapter="someone/adapter/models/not-in-the-cache.safetensors",
    )
    fast = resolve_render_settings(hub, {"fast": True})
    check_drawing_files(hub, fast, references=True)  # (nothing fetched now: its load fetches it)
    klein = dataclasses.replace(PRESETS["tiny-klein"], ip_adapter=nope)  # klein reads its references itself
    check_drawing_files(klein, resolve_render_settings(klein), references=True)


@pytest.mark.parametrize(
    "given",
    [
        "--fast --fast-lora owner/typo",
        "--fast --fast-lora owner/typo/x.safetensors",
        "--fast --fast-decoder owner/typo",
        "--fast --fast-decoder typo",
        "--reference {tmp}/ref.png --ip-adapter owner/typo/x.safetensors",
        # a family known by its name is not fetched before its load, which came after the storyboard
        "--diffusion stabilityai/stable-diffusion-xl-base-1.0",
        "--transitions video --video-model Lightricks/LTX-2",
        "--vipe owner/typo",  # (ViPE loads after Whisper has heard the song)
    ],
)
def test_a_hub_name_not_in_the_cache_is_refused_offline_before_any_work(capsys, tmp_path, song, given):
    picture(tmp_path / "ref.png")  # (the tests run with HF_HUB_OFFLINE: tests/conftest.py)
    *options, name = given.format(tmp=tmp_path).split()
    said = f"{options[-1]} {name}: {name.split('/x.')[0]} is not in the model cache, and HF_HUB_OFFLINE keeps"
    refused_before_the_work(capsys, tmp_path, [*quick(song), *options, name], said)


def test_a_storyboards_own_reference_a_family_cannot_draw_is_refused_before_any_work(capsys, tmp_path, song):
    board = {
        "version": 1,
        "audio": {"duration": 2.0},
        "scenes": [
            {"index": 0, "kind": "lyric", "start": 0.0, "end": 2.0, "text": "a line", "prompt": "a sky", "seed": 1}
        ],
    }
    board["scenes"][0]["reference"] = str(tmp_path / "look.png")
    Image.new("RGB", (64, 64), (20, 90, 200)).save(tmp_path / "look.png")
    (tmp_path / "board.json").write_text(json.dumps(board))
    argv = ["render", song, "--models", "tiny-zimage", "-q", "--fps", "2", "--storyboard", tmp_path / "board.json"]
    refused_before_the_work(
        capsys, tmp_path, argv, "the storyboard's reference pictures take an IP-Adapter, which Z-Image"
    )


def test_a_reference_typed_into_the_work_directorys_storyboard_a_family_cannot_draw_is_refused_before_drawing(
    capsys, tmp_path, song
):
    """The edited storyboard.json kept by a rerun on another picture model: refused before a keyframe is drawn."""
    argv, made = quick(song), ["--models", "tiny", "--workdir", tmp_path / "w"]
    assert run(capsys, "storyboard", song, "--lyrics", quick(song)[-1], *made)[0] == 0
    board = json.loads((tmp_path / "w" / "storyboard.json").read_text())
    Image.new("RGB", (64, 64), (20, 90, 200)).save(tmp_path / "look.png")
    board["scenes"][-1]["reference"] = str(tmp_path / "look.png")
    (tmp_path / "w" / "storyboard.json").write_text(json.dumps(board))
    code, out, err = run(
        capsys, *argv, "--models", "tiny-zimage", "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4"
    )
    assert code == 2 and err.count("\n") == 1, err
    assert "reference pictures take an IP-Adapter, which Z-Image has not" in err
    assert not (tmp_path / "w" / "keyframes").exists() and not (tmp_path / "v.mp4").exists()
