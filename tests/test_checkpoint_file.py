"""`--diffusion model.safetensors`: a checkpoint as one file (musicvid.models.single_file). Its family is read from
its header, its configs come from the family's repository in the cache, it draws what the same weights draw in
diffusers' layout, and its pictures are keyed by its bytes, not its name. A file of another kind is refused in one
sentence that says what it holds, before any work."""

import io

import numpy as np
import pytest
import torch
from PIL import Image
from safetensors.torch import load, save, save_file

from musicvid.core.errors import UserError
from musicvid.models.loading import load_diffusion
from musicvid.models.precision import Precision
from musicvid.models.single_file import single_file_family
from musicvid.settings.presets import SD15, SDXL
from tests.helpers import make_tone, run
from tests.standins.checkpoint import sd15_checkpoint, sdxl_checkpoint
from tests.standins.sd import sd15_files
from tests.standins.sdxl import sdxl_files
from tests.test_keyframes import LYRICS, pictures

TINY = torch.zeros(2, 2)
WHOLE = {"model.diffusion_model.input_blocks.0.0.weight": TINY, "first_stage_model.encoder.conv_in.weight": TINY}


def tensors(path, names: dict[str, torch.Tensor]):
    save_file({name: tensor.clone() for name, tensor in names.items()}, str(path))
    return path


@pytest.fixture
def song(tmp_path):
    song = make_tone(tmp_path / "song.mp3", 4.0)
    (tmp_path / "song.lrc").write_text(LYRICS)
    return song


def keyframes_with(capsys, song, diffusion, workdir) -> tuple[str, dict]:
    """What `storyboard --keyframes` printed, and each keyframe's pixels (its PNG also holds its key)."""
    argv = [song, "--models", "tiny", "--lyrics", song.with_suffix(".lrc"), "--workdir", workdir, "-q"]
    code, out, err = run(capsys, "storyboard", *argv, "--keyframes", "--diffusion", diffusion)
    assert code == 0, err
    return out, {name: np.asarray(Image.open(io.BytesIO(png))).tobytes() for name, png in pictures(workdir).items()}


@pytest.mark.parametrize("marks", [{"v_pred"}, {"v_pred", "ztsnr"}])
def test_a_checkpoint_files_training_marks_reach_the_renders_sampler(standin_hub, tmp_path, marks):
    """Round 10: a v-prediction file (NoobAI-XL's marks: `v_pred`, and `ztsnr` for zero terminal SNR) was sampled
    as an epsilon model, its every picture wrong, with no word said."""
    from diffusers import DDIMScheduler, DPMSolverMultistepScheduler

    weights = load(sd15_checkpoint(sd15_files())) | {mark: torch.tensor([]) for mark in marks}
    (checkpoint := tmp_path / "v.safetensors").write_bytes(save(weights))
    loaded = load_diffusion(str(checkpoint), torch.device("cpu")).scheduler.config
    for kind in (DDIMScheduler, DPMSolverMultistepScheduler):  # (the render's samplers, made from its config)
        config = kind.from_config(loaded).config
        assert config.prediction_type == "v_prediction"
        assert (config.rescale_betas_zero_snr, config.timestep_spacing == "trailing") == ("ztsnr" in marks,) * 2


@pytest.mark.slow
@pytest.mark.ci  # (two renders from a single-file checkpoint; its refusals stay in the suite)
def test_a_checkpoint_file_draws_as_its_weights_do_and_is_keyed_by_its_bytes(capsys, standin_hub, song, tmp_path):
    files = sd15_files()
    checkpoint = tmp_path / "models" / "my-model.safetensors"
    checkpoint.parent.mkdir()
    checkpoint.write_bytes(sd15_checkpoint(files))
    _, from_repository = keyframes_with(capsys, song, SD15, tmp_path / "repository")
    out, from_file = keyframes_with(capsys, song, checkpoint, tmp_path / "file")
    assert from_file == from_repository and len(from_file) >= 2  # the same weights draw the same keyframes
    assert f"keyframes: {len(from_file)} drawn" in out
    renamed = checkpoint.rename(checkpoint.with_name("renamed.safetensors"))
    out, again = keyframes_with(capsys, song, renamed, tmp_path / "file")
    assert "keyframes: 0 drawn" in out and again == from_file  # its bytes are its key, not its name
    half = load_diffusion(str(renamed), torch.device("cpu"), Precision.resolve("bfloat16", torch.device("cpu")))
    for part in ("unet", "vae", "text_encoder"):  # every module of the file in bfloat16, as asked
        assert {x.dtype for x in getattr(half, part).parameters()} == {torch.bfloat16}, part
    unet = "unet/diffusion_pytorch_model.safetensors"  # the same names, other weights: every keyframe is redrawn
    weights = {name: tensor + 0.05 if name == "conv_in.bias" else tensor for name, tensor in load(files[unet]).items()}
    renamed.write_bytes(sd15_checkpoint(files | {unet: save(weights)}))
    out, redrawn = keyframes_with(capsys, song, renamed, tmp_path / "file")
    assert f"keyframes: {len(from_file)} drawn" in out and redrawn != from_file


@pytest.mark.slow
def test_an_sdxl_checkpoint_file_loads_as_its_repositorys_weights_its_vae_in_float32_beside_float16(
    standin_hub, tmp_path
):
    checkpoint = tmp_path / "sd_xl_base_1.0.safetensors"
    checkpoint.write_bytes(sdxl_checkpoint(sdxl_files()))
    cpu = torch.device("cpu")
    from_file, from_repository = load_diffusion(str(checkpoint), cpu), load_diffusion(SDXL, cpu)
    assert type(from_file) is type(from_repository)
    for part in ("unet", "vae", "text_encoder", "text_encoder_2"):
        ours, theirs = getattr(from_file, part).state_dict(), getattr(from_repository, part).state_dict()
        assert ours.keys() == theirs.keys() and all(torch.equal(ours[k], theirs[k]) for k in theirs), part
    half = load_diffusion(str(checkpoint), cpu, Precision.resolve("float16", cpu))  # as on CUDA
    for part, dtype in (
        ("unet", torch.float16),
        ("text_encoder", torch.float16),
        ("text_encoder_2", torch.float16),
        ("vae", torch.float32),
    ):
        tensors = [*getattr(half, part).parameters(), *getattr(half, part).buffers()]
        assert {x.dtype for x in tensors if x.is_floating_point()} == {dtype} and {x.device for x in tensors} == {cpu}


@pytest.mark.parametrize(
    "names, holds",
    [
        ({**WHOLE, "cond_stage_model.model.transformer.resblocks.0.ln_1.weight": TINY}, "Stable Diffusion 2.x"),
        ({**WHOLE, "conditioner.embedders.0.model.ln_final.weight": TINY}, "the SDXL refiner"),
        ({"lora_unet_down_blocks_0_attentions_0_proj_in.lora_down.weight": TINY}, "a LoRA (give it with --lora)"),
        ({"unet.down_blocks.0.attentions.0.proj_in.lora_A.weight": TINY}, "a LoRA (give it with --lora)"),
        ({"double_blocks.0.img_attn.qkv.weight": TINY}, "a FLUX.1 transformer"),
        ({"encoder.down.0.block.0.conv1.weight": TINY}, "a VAE alone"),
        ({"model.diffusion_model.input_blocks.0.0.weight": TINY}, "a UNet without its VAE and text encoder"),
        ({"layers.0.weight": TINY, "embed.weight": TINY}, "tensors named like embed.weight, layers.0.weight"),
    ],
)
def test_a_file_of_another_kind_is_refused_saying_what_it_holds(capsys, tmp_path, names, holds):
    song = make_tone(tmp_path / "song.mp3", 2.0)
    path = tensors(tmp_path / "model.safetensors", names)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "--diffusion", path, "--workdir", tmp_path / "w")
    assert code == 2 and len(err.strip().splitlines()) == 1 and holds in err
    assert "Traceback" not in err and not (tmp_path / "w").exists()  # before any work


def test_a_pickle_or_a_file_that_is_no_safetensors_is_refused(capsys, tmp_path):
    song = make_tone(tmp_path / "song.mp3", 2.0)
    pickle, broken = tmp_path / "model.ckpt", tmp_path / "broken.safetensors"
    torch.save(WHOLE, pickle)
    broken.write_bytes(b"\xff" * 64)
    capitals = tensors(tmp_path / "MODEL.SAFETENSORS", WHOLE)  # (diffusers would read it as a pickle)
    for path, says in (
        (pickle, "is not a .safetensors file"),
        (broken, "cannot be read as a safetensors file"),
        (capitals, "diffusers knows a weights file by its suffix in lower case: rename it MODEL.safetensors"),
    ):
        code, _, err = run(capsys, "render", song, "--models", "tiny", "--diffusion", path)
        assert code == 2 and says in err and len(err.strip().splitlines()) == 1


def test_the_family_is_read_from_the_header(tmp_path):
    sdxl = {**WHOLE, "conditioner.embedders.0.transformer.text_model.final_layer_norm.weight": TINY}
    sdxl["conditioner.embedders.1.model.ln_final.weight"] = TINY
    assert single_file_family(str(tensors(tmp_path / "xl.safetensors", sdxl)), "it") == "sdxl"
    width = {"cond_stage_model.transformer.text_model.final_layer_norm.weight": torch.zeros(8)}
    reads = {"model.diffusion_model.middle_block.1.transformer_blocks.0.attn2.to_k.weight": torch.zeros(4, 8)}
    assert single_file_family(str(tensors(tmp_path / "sd.safetensors", WHOLE | width | reads)), "it") == "sd"
    other = {"model.diffusion_model.middle_block.1.transformer_blocks.0.attn2.to_k.weight": torch.zeros(4, 16)}
    with pytest.raises(Exception, match="text encoder does not fit its UNet"):  # a UNet that reads another width
        single_file_family(str(tensors(tmp_path / "odd.safetensors", WHOLE | width | other)), "it")
    older = {"cond_stage_model.transformer.embeddings.token_embedding.weight": torch.zeros(4, 8)}  # (no text_model.)
    with pytest.raises(Exception, match="text encoder is named the older way .*, which diffusers does not load"):
        single_file_family(str(tensors(tmp_path / "older.safetensors", WHOLE | older | reads)), "it")


def test_a_checkpoint_whose_configs_are_not_in_the_cache_is_refused_offline(capsys, tmp_path, monkeypatch):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    checkpoint = tmp_path / "model.safetensors"
    checkpoint.write_bytes(sd15_checkpoint(sd15_files()))
    song = make_tone(tmp_path / "song.mp3", 2.0)
    code, _, err = run(capsys, "render", song, "--models", "tiny", "--diffusion", checkpoint)
    assert code == 2 and f"takes its configs from {SD15}" in err and "not in the model cache" in err


def lora_of(modules: list[str], layout: str) -> dict[str, torch.Tensor]:
    """A LoRA of the layers `modules` (named as a model's file names them) in one trainer's layout."""
    down, up = torch.zeros(4, 8), torch.zeros(8, 4)
    if layout == "kohya":  # lora_unet_<module, dots as underscores>.lora_down / .lora_up / .alpha
        named = {f"lora_unet_{m.replace('.', '_')}": None for m in modules}
        return {k: t for n in named for k, t in ((f"{n}.lora_down.weight", down), (f"{n}.lora_up.weight", up))}
    prefix = {"authors'": "", "ComfyUI's": "diffusion_model.", "diffusers'": "transformer."}[layout]
    return {
        k: t for m in modules for k, t in ((f"{prefix}{m}.lora_A.weight", down), (f"{prefix}{m}.lora_B.weight", up))
    }


# Layers each family's LoRAs adapt, under its authors' names: FLUX.2 klein's (its one modulation of all single blocks,
# which only klein has), Z-Image's (its layers beside its context refiner), SD's UNet's
LORA_LAYERS = {
    "FLUX.2 klein": ["single_stream_modulation.lin", "double_blocks.0.img_attn.qkv", "single_blocks.0.linear1"],
    "Z-Image": ["layers.0.adaLN_modulation.0", "layers.0.attention.qkv", "context_refiner.0.attention.qkv"],
    "SD 1.5": ["model.diffusion_model.input_blocks.1.1.proj_in", "first_stage_model.encoder.conv_in"],
}


@pytest.mark.parametrize("layout", ["authors'", "ComfyUI's", "diffusers'", "kohya"])
@pytest.mark.parametrize("family", LORA_LAYERS)
def test_a_lora_given_as_a_checkpoint_is_named_a_lora_whatever_its_family(tmp_path, family, layout):
    path = tensors(tmp_path / "lora.safetensors", lora_of(LORA_LAYERS[family], layout))
    with pytest.raises(UserError, match=r"^--diffusion lora.safetensors holds a LoRA \(give it with --lora\): "):
        single_file_family(str(path), "--diffusion lora.safetensors")


def test_a_klein_lora_given_with_diffusion_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.mp3", 2.0)
    path = tensors(tmp_path / "klein-style.safetensors", lora_of(LORA_LAYERS["FLUX.2 klein"], "authors'"))
    code, out, err = run(capsys, "render", song, "--models", "tiny", "--diffusion", path, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "holds a LoRA (give it with --lora)" in err
    assert "Traceback" not in err and not (tmp_path / "w").exists()


def test_a_vae_alone_is_named_and_a_whole_checkpoint_keeps_its_family(tmp_path):
    vae = {"encoder.down_blocks.0.resnets.0.conv1.weight": TINY, "decoder.up_blocks.0.resnets.0.conv1.weight": TINY}
    with pytest.raises(UserError, match="holds a VAE alone"):
        single_file_family(str(tensors(tmp_path / "vae.safetensors", vae)), "it")
    width = {"cond_stage_model.transformer.text_model.final_layer_norm.weight": torch.zeros(8)}
    reads = {"model.diffusion_model.middle_block.1.transformer_blocks.0.attn2.to_k.weight": torch.zeros(4, 8)}
    whole = WHOLE | width | reads | {"first_stage_model.encoder.down.0.block.0.conv1.weight": TINY}
    assert single_file_family(str(tensors(tmp_path / "sd.safetensors", whole)), "it") == "sd"
