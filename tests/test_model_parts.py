"""A model's own files, checked before any work and refused in one sentence: a --diffusion or --video-model folder a
part of which is missing or damaged, naming the part and the file, and a checkpoint file missing layers (musicvid.models.
pipeline_files), an inpainting UNet among them, and a folder of fp16 weights alone loaded, quietly under -q; an
--asr-model that is no Whisper of its backend, saying what one must be, and a CTranslate2 folder cut short or without
its tokenizer, before Demucs runs (musicvid.models.asr_files); a symbolic link that leads nowhere, a broken path and no
hub name, by the one rule of what a hub name is (musicvid.models.local_names); an --ip-adapter named for a run that
draws no reference picture (musicvid.prepare). Each is a left-out of the last stop's probes of model files."""

import importlib.metadata
import json
import os
import shutil

import pytest
import torch
from safetensors.torch import load, load_file, save, save_file

from musicvid.core.errors import UserError
from musicvid.models.asr_files import ASR_MODELS
from musicvid.models.choose import choose_models
from musicvid.models.loading import load_diffusion, pretrained, refuse_empty_tensors, resolve_device
from musicvid.models.local_names import check_not_missing, is_hub_name, is_local_path
from musicvid.models.names import check_model
from musicvid.models.pipeline_files import check_file_parts, check_picture_model, check_video_model_files
from musicvid.models.weights_files import silenced
from musicvid.settings.presets import LTX2, LTX_VIDEO, SD15, TINY, WAN_FLF2V
from tests.fixtures.whisper_ct2 import tiny_en_dir
from tests.helpers import make_tone, quick
from tests.standins.checkpoint import sd15_checkpoint
from tests.standins.hub import snapshot
from tests.standins.transformer_files import transformer_file
from tests.test_model_checks import refused_before_the_work

UNET, VAE = "unet/diffusion_pytorch_model.safetensors", "vae/diffusion_pytorch_model.safetensors"
DIFFUSERS = importlib.metadata.version("diffusers")


@pytest.fixture(scope="module")
def whole_sd(tmp_path_factory):
    """The tiny Stable Diffusion saved as diffusers saves a pipeline: a folder of parts."""
    from musicvid.models.tiny import local_diffusion

    folder = tmp_path_factory.mktemp("sd") / "sd"
    local_diffusion(TINY).save_pretrained(folder)
    return folder


@pytest.fixture
def sd(whole_sd, tmp_path):
    return shutil.copytree(whole_sd, tmp_path / "sd")


@pytest.fixture
def song(tmp_path):
    return make_tone(tmp_path / "song.wav", 2)


def tensors_without(path, part: str):
    save_file({name: t for name, t in load_file(path).items() if part not in name}, path)


def config_of(path, **changes):
    path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))


def cut_short(path):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def lfs_pointer(path):  # what a clone made without git-lfs holds in place of each weights file
    path.write_text(f"version https://git-lfs.github.com/spec/v1\noid sha256:{'0' * 64}\nsize 3438167536\n")


def as_bin(sd, damage):
    """The UNet's weights as an older diffusers saved them (.bin), then damaged."""
    torch.save(load_file(sd / UNET), sd / "unet/diffusion_pytorch_model.bin")
    (sd / UNET).unlink()
    damage(sd / "unet/diffusion_pytorch_model.bin")


@pytest.mark.parametrize(
    "damage, said",
    [
        (lambda sd: shutil.rmtree(sd / "unet"), ": its model_index.json names a unet (UNet2DConditionModel), and there is no unet/ folder"),
        (lambda sd: shutil.rmtree(sd / "text_encoder"), ": its model_index.json names a text_encoder (CLIPTextModel), and there"),
        (lambda sd: cut_short(sd / UNET), "'s unet: its diffusion_pytorch_model.safetensors cannot be read as a safetensors file"),
        (lambda sd: lfs_pointer(sd / UNET), "'s unet: its diffusion_pytorch_model.safetensors is a Git LFS pointer, not the weights it stands for: fetch them (`git lfs pull` in its clone)"),
        (lambda sd: as_bin(sd, lfs_pointer), "'s unet: its diffusion_pytorch_model.bin is a Git LFS pointer"),
        (lambda sd: as_bin(sd, lambda bin: bin.write_text("<!DOCTYPE html><html><body>404</body></html>")), "'s unet: its diffusion_pytorch_model.bin holds no PyTorch weights: neither torch's zip archive nor a pickle (it begins '<!DOCTYPE html><')"),
        (lambda sd: (sd / "vae/config.json").write_text('{"in_channels": NaN}'), "'s vae: its config.json's in_channels is nan, not a number"),
        (lambda sd: (sd / "vae/config.json").write_bytes(b"\x00\xff garbage"), "'s vae: its config.json is not a JSON object"),
        (lambda sd: (sd / "unet/config.json").unlink(), "'s unet holds no config.json"),
        (lambda sd: config_of(sd / "model_index.json", unet=["diffusers", "UNet9ConditionModel"]), f"'s unet is a UNet9ConditionModel, a class diffusers {DIFFUSERS} does not have (saved by a newer diffusers?)"),
        (lambda sd: config_of(sd / "model_index.json", scheduler=["diffusers", "NewScheduler"]), f"'s scheduler is a NewScheduler, a class diffusers {DIFFUSERS} does not have"),
        (lambda sd: (sd / "scheduler/scheduler_config.json").write_text("[1, 2]"), "'s scheduler: its scheduler_config.json is not a JSON"),
        (lambda sd: config_of(sd / "vae/config.json", latent_channels=8), "'s vae: the weights in its diffusion_pytorch_model.safetensors hold encoder.conv_out.weight of 8 x 32 x 3 x 3, where the model its config.json describes has 16 x 32"),
        (lambda sd: tensors_without(sd / UNET, "up_blocks.1."), "'s unet: the weights in its diffusion_pytorch_model.safetensors hold no up_blocks.1.*, which the model"),
        (lambda sd: tensors_without(sd / "text_encoder/model.safetensors", ".layers.0."), "'s text_encoder: the weights in its model.safetensors hold no encoder.layers.0.* that its config.json's 2 layers need"),
        (lambda sd: (sd / VAE).rename(sd / "vae/weights.safetensors"), "'s vae holds no weights: no diffusion_pytorch_model.safetensors"),
        (lambda sd: [file.unlink() for file in (sd / "tokenizer").iterdir()], "'s tokenizer holds no tokenizer.json, nor vocab.json and merges.txt: the files a CLIPTokenizer"),
        (lambda sd: (sd / "tokenizer/tokenizer.json").unlink(), "'s tokenizer holds no tokenizer.json, nor vocab.json and merges.txt"),
        (lambda sd: (sd / "scheduler/scheduler_config.json").unlink(), "'s scheduler holds no scheduler_config.json"),
    ],
)  # fmt: skip
def test_a_diffusion_folder_a_part_of_which_is_missing_or_damaged_is_refused_naming_it(sd, damage, said):
    damage(sd)
    with pytest.raises(UserError) as refused:
        check_picture_model(str(sd), "sd")
    assert str(refused.value).startswith(f"--diffusion {sd}{said}") and "\n" not in str(refused.value)


def test_a_whole_folder_passes_in_older_attention_names_too_and_each_variant_is_read(sd):
    check_picture_model(str(sd), "sd")
    # a clone that fetched the safetensors alone, as SD 1.5's repository names them: each .bin (never read) beside
    # its twin, fp16's too, is a Git LFS pointer; transformers' parts name theirs pytorch_model(.fp16).bin
    for part in ["unet", "vae", "text_encoder"]:
        shutil.copy(next((sd / part).glob("*.safetensors")), sd / part / "twin")
        stem = "diffusion_pytorch_model" if part != "text_encoder" else "model"
        (sd / part / "twin").rename(sd / part / f"{stem}.fp16.safetensors")
        for variant in ["", ".fp16"]:
            lfs_pointer(sd / part / f"{'pytorch_model' if stem == 'model' else stem}{variant}.bin")
    check_picture_model(str(sd), "sd")
    (sd / "text_encoder/model.fp16.safetensors").unlink()  # (where its twin is not there, the .bin is read)
    with pytest.raises(UserError, match="'s text_encoder: its pytorch_model.fp16.bin is a Git LFS pointer"):
        check_picture_model(str(sd), "sd")
    (sd / "text_encoder/pytorch_model.fp16.bin").unlink()
    # a folder an older diffusers saved names its safety checker's feature extractor by a class transformers renamed
    config_of(sd / "model_index.json", feature_extractor=["transformers", "CLIPFeatureExtractor"])
    (sd / "feature_extractor").mkdir()
    (sd / "feature_extractor/preprocessor_config.json").write_text('{"feature_extractor_type": "CLIPFeatureExtractor"}')
    check_picture_model(str(sd), "sd")
    older = {".to_q.": ".query.", ".to_k.": ".key.", ".to_v.": ".value.", ".to_out.0.": ".proj_attn."}
    renamed = {}
    for name, tensor in load_file(sd / VAE).items():  # as VAEs were saved before diffusers 0.14, which it renames
        for new, old in older.items():
            name = name.replace(new, old) if "attentions" in name else name
        renamed[name] = tensor
    assert any(".query." in name for name in renamed)
    save_file(renamed, sd / VAE)
    check_picture_model(str(sd), "sd")
    (sd / "vae/diffusion_pytorch_model.fp16.safetensors").write_bytes((sd / VAE).read_bytes()[:200])
    with pytest.raises(UserError, match="'s vae: its diffusion_pytorch_model.fp16.safetensors cannot be read"):
        check_picture_model(str(sd), "sd")


def test_a_damaged_diffusion_folder_is_refused_before_any_work(capsys, tmp_path, song, sd):
    shutil.rmtree(sd / "unet")
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--diffusion", sd], f"--diffusion {sd}: its model_index")


def test_an_inpainting_unet_under_the_text_to_image_class_is_refused_before_any_work(capsys, tmp_path, song, sd):
    from diffusers import UNet2DConditionModel

    from musicvid.models.tiny import LOCAL_DIFFUSION

    shutil.rmtree(sd / "unet")  # (community conversions keep StableDiffusionPipeline in model_index.json)
    UNet2DConditionModel(in_channels=9, out_channels=4, **LOCAL_DIFFUSION[TINY]["unet"]).save_pretrained(sd / "unet")
    said = f"--diffusion {sd}'s unet takes 9 input channels, where its vae's latents have 4: an inpainting model, not a"
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--diffusion", sd], said)


def test_a_folder_of_fp16_weights_alone_loads_in_the_runs_dtype_its_load_quiet_under_q(capfd, tmp_path):
    from musicvid.models.tiny import local_diffusion

    local_diffusion(TINY).to(torch.float16).save_pretrained(half := tmp_path / "half", variant="fp16")
    assert not list(half.glob("*/*pytorch_model.safetensors")) and list(half.glob("unet/*.fp16.safetensors"))
    check_picture_model(str(half), "sd")
    capfd.readouterr()
    load_diffusion(str(half), resolve_device("cpu"))  # (shown: what -q hides below)
    assert "Loading pipeline components" in capfd.readouterr().err
    from huggingface_hub.utils import disable_progress_bars, enable_progress_bars

    disable_progress_bars()  # as -q does in a process that imported the hub before (musicvid.cli)
    try:
        with silenced():  # (as a check builds a model on the meta device: transformers' bars switch the hub's)
            pass
        pipe = load_diffusion(str(half), resolve_device("cpu"))  # (its full weights tried first, as off CUDA)
    finally:
        enable_progress_bars()
    assert {pipe.unet.dtype, pipe.vae.dtype, pipe.text_encoder.dtype} == {torch.float32}
    err = capfd.readouterr().err
    assert "Loading pipeline components" not in err and "An error occurred" not in err, err


def test_a_tiny_decoder_folder_of_fp16_weights_alone_loads_as_a_picture_models_does(tmp_path):
    """--fast-decoder's check took such a folder, and its load failed after the storyboard (round 10)."""
    from diffusers import AutoencoderTiny

    AutoencoderTiny().to(torch.float16).save_pretrained(half := tmp_path / "taesd", variant="fp16")
    with pytest.raises(OSError):
        AutoencoderTiny.from_pretrained(half)
    for dtype in (torch.float32, torch.bfloat16):  # (the run's compute precision: float32 here, half on a GPU)
        decoder = pretrained(AutoencoderTiny, str(half), None, dtype=dtype)
        assert {p.dtype for p in [*decoder.parameters(), *decoder.buffers()] if p.is_floating_point()} == {dtype}


def test_a_checkpoint_file_missing_layers_is_refused_naming_the_part(standin_hub, tmp_path):
    folder = snapshot(standin_hub, SD15)
    files = {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    whole = tmp_path / "sd15.safetensors"
    whole.write_bytes(sd15_checkpoint(files))
    check_file_parts(whole, "sd", "--diffusion sd15.safetensors")
    for gone, part in [("model.diffusion_model.output_blocks.1.", "unet"), (".encoder.layers.0.", "text_encoder")]:
        save_file({k: t for k, t in load_file(whole).items() if gone not in k}, cut := tmp_path / "cut.safetensors")
        with pytest.raises(UserError, match=rf"^--diffusion cut holds [\d,]+ weights for the {part}, where {SD15}'s"):
            check_file_parts(cut, "sd", "--diffusion cut")
    first = "model.diffusion_model.input_blocks.0.0.weight"  # an inpainting UNet's reads 9 channels, pix2pix's 8
    for channels, what in [(9, "an inpainting model"), (8, "a model drawn over a picture")]:
        tensors = load_file(whole)
        tensors[first] = torch.zeros(tensors[first].shape[0], channels, *tensors[first].shape[2:])
        save_file(tensors, more := tmp_path / f"in{channels}.safetensors")
        said = f"^--diffusion in{channels}'s unet takes {channels} input channels, where {SD15}'s vae's latents have 4: {what}"
        with pytest.raises(UserError, match=said):
            check_file_parts(more, "sd", f"--diffusion in{channels}")
    transformer = load(transformer_file("klein"))
    (klein := tmp_path / "klein.safetensors").write_bytes(save(dict(list(transformer.items())[1:])))
    with pytest.raises(UserError, match="holds [\\d,]+ weights for the transformer, .*: it is missing layers$"):
        check_file_parts(klein, "klein", "--diffusion klein.safetensors")


@pytest.fixture
def ltx(standin_hub, tmp_path):
    """LTX-Video 0.9.5's stand-in copied out of the cache: a --video-model folder, its text encoder in shards."""
    return shutil.copytree(snapshot(standin_hub, LTX_VIDEO), tmp_path / "ltx")


@pytest.mark.parametrize(
    "damage, said",
    [
        (lambda ltx: shutil.rmtree(ltx / "vae"), ": its model_index.json names a vae (AutoencoderKLLTXVideo), and there is no vae/ folder"),
        (lambda ltx: (ltx / "transformer/config.json").write_text("[1, 2]"), "'s transformer: its config.json is not a JSON object"),
        (lambda ltx: cut_short(ltx / "text_encoder/model-00002-of-00004.safetensors"), "'s text_encoder: its model-00002-of-00004.safetensors cannot be read as a safetensors file"),
    ],
)  # fmt: skip
def test_a_video_model_folder_a_part_of_which_is_missing_or_damaged_is_refused_naming_it(ltx, damage, said):
    damage(ltx)
    with pytest.raises(UserError) as refused:
        check_video_model_files(str(ltx))
    assert str(refused.value).startswith(f"--video-model {ltx}{said}") and "\n" not in str(refused.value)


def test_the_video_stand_ins_pass_and_a_damaged_video_model_is_refused_before_any_work(
    capsys, tmp_path, song, ltx, standin_hub
):
    for name in (LTX_VIDEO, LTX2, WAN_FLF2V):
        check_video_model_files(str(snapshot(standin_hub, name)))
    (ltx / "vae/config.json").write_bytes(b"\x00\xff garbage")
    argv = [*quick(song), "--transitions", "video", "--video-model", ltx]
    refused_before_the_work(capsys, tmp_path, argv, f"--video-model {ltx}'s vae: its config.json is not a JSON object")


def test_a_pipeline_left_with_an_empty_tensor_is_refused_in_one_sentence():
    from musicvid.models.tiny import local_diffusion

    pipe = local_diffusion(TINY)
    refuse_empty_tensors(pipe, "--diffusion x")
    pipe.text_encoder.get_input_embeddings().weight = torch.nn.Parameter(torch.empty(3, 2, device="meta"))
    with pytest.raises(UserError, match="^--diffusion x holds no weights for its text_encoder's .*token_embedding"):
        refuse_empty_tensors(pipe, "--diffusion x")


def a_file(tmp_path):
    (file := tmp_path / "afile.txt").write_text("not a model")
    return str(file)


def archive(tmp_path, held) -> str:
    torch.save(held, path := tmp_path / "mine.pt")
    return str(path)


@pytest.mark.parametrize(
    "backend, given, said",
    [
        ("openai-whisper", a_file, "is no openai-whisper checkpoint (no whole torch archive)"),
        (
            "openai-whisper",
            lambda tmp_path: archive(tmp_path, {"state_dict": {"a": torch.zeros(2)}}),
            "is a torch archive but no openai-whisper checkpoint (no dims and model_state_dict",
        ),
        ("openai-whisper", lambda tmp_path: str(tiny_en_dir()), "is a folder (a CTranslate2 one is faster-whisper's"),
        ("openai-whisper", lambda tmp_path: "large-v9", "is no openai-whisper model size, nor a file here"),
        ("faster-whisper", a_file, "is a single file"),
        ("faster-whisper", lambda tmp_path: str(tmp_path), "holds no model.bin"),
        ("faster-whisper", lambda tmp_path: "huge", "is no faster-whisper model size, nor a folder here"),
    ],
)
def test_an_asr_model_that_is_no_whisper_of_its_backend_says_what_one_must_be(tmp_path, backend, given, said):
    name = given(tmp_path)
    with pytest.raises(UserError) as refused:
        choose_models("tiny", asr_backend=backend, asr=name)
    must = f"with --asr {backend}, an ASR model is {ASR_MODELS[backend]}"
    assert str(refused.value).startswith(f"--asr-model {name} {said}") and str(refused.value).endswith(must)


def test_a_ctranslate2_folder_with_its_tokenizer_passes_and_one_without_is_refused(tmp_path):
    (folder := tmp_path / "converted").mkdir()  # (as ct2-transformers-converter writes it unless told)
    for name in ("model.bin", "config.json", "vocabulary.txt"):
        (folder / name).symlink_to(tiny_en_dir() / name)
    with pytest.raises(UserError) as refused:
        choose_models("tiny", asr_backend="faster-whisper", asr=str(folder))
    assert str(refused.value).startswith(f"--asr-model {folder} holds no tokenizer.json, without which faster-whisper")
    assert str(refused.value).endswith(
        "(ct2-transformers-converter --model MODEL --output_dir DIR --copy_files tokenizer.json preprocessor_config.json)"
    )
    (folder / "tokenizer.json").symlink_to(tiny_en_dir() / "tokenizer.json")
    assert choose_models("tiny", asr_backend="faster-whisper", asr=str(folder)).asr == str(folder)


def test_a_ctranslate2_whisper_of_128_mel_bins_is_refused_without_the_preprocessor_config_that_says_so(tmp_path):
    """A large-v3 converted with `--copy_files tokenizer.json` alone: faster-whisper computed 80 mel bins for it and
    failed after the song was decoded, in a ValueError of shapes."""
    from tests.standins.faster_whisper import whisper_spec

    folder = tmp_path / "large-v3"
    folder.mkdir()
    whisper_spec(["a", "b", "c"], {}, mels=128).save(str(folder))
    (folder / "tokenizer.json").symlink_to(tiny_en_dir() / "tokenizer.json")
    with pytest.raises(UserError) as refused:
        choose_models("tiny", asr_backend="faster-whisper", asr=str(folder))
    said = f"--asr-model {folder} is a Whisper of 128 mel bins (as large-v3's), and holds no preprocessor_config.json"
    assert str(refused.value).startswith(said) and "--copy_files tokenizer.json preprocessor_config.json" in str(
        refused.value
    )
    (folder / "preprocessor_config.json").write_text('{"feature_size": 128, "n_fft": 400}')
    assert choose_models("tiny", asr_backend="faster-whisper", asr=str(folder)).asr == str(folder)


def test_a_whisper_cut_short_is_refused_before_demucs_runs(capsys, tmp_path, song):
    folder = shutil.copytree(tiny_en_dir(), tmp_path / "tiny.en")
    for whole in (str(tiny_en_dir()), "large-v2", "Systran/faster-whisper-small"):  # (names are not looked up here)
        assert choose_models("tiny", asr_backend="faster-whisper", asr=whole).asr == whole
    cut_short(folder / "model.bin")
    argv = ["render", song, "--models", "tiny", "-q", "--separate-vocals", "--asr", "faster-whisper"]
    said = f"--asr-model {folder}: its model.bin is cut short (its variable "
    refused_before_the_work(capsys, tmp_path, [*argv, "--asr-model", folder], said, "runs past its end")
    whole = (tiny_en_dir() / "model.bin").read_bytes()
    spec = 4 + 2 + int.from_bytes(whole[4:6], "little") + 4 + 4  # (version, the spec's name, its revision, count)
    (folder / "model.bin").write_bytes(whole[: spec + 2 + 3])  # (into the first variable's name)
    refused_before_the_work(capsys, tmp_path, [*argv, "--asr-model", folder], "variable 1's name runs past its end")


def test_a_symbolic_link_that_leads_nowhere_is_a_broken_path_not_a_hub_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.symlink("loop", "loop")
    os.symlink("gone", "dangling")
    assert is_hub_name("loop") and is_hub_name("dangling")  # (as names, both could be the hub's)
    for name, said in [("loop", "loop leads into a loop of symbolic links"), ("loop/x", "loop/x leads into a loop")]:
        with pytest.raises(UserError, match=f"^--diffusion {name}: {said}"):
            check_model("diffusion", name)
        with pytest.raises(UserError, match=f"^--lora {name}: {said}"):
            check_not_missing("--lora", name)
    with pytest.raises(UserError, match="^--diffusion dangling is a broken path: a symbolic link to gone, which is"):
        check_model("diffusion", "dangling")
    with pytest.raises(UserError, match="^--asr-model loop: loop leads into a loop"):
        choose_models("tiny", asr="loop")


@pytest.mark.parametrize(
    "name, hub",
    [
        ("owner/name", True),
        ("name", True),
        ("a--b", False),  # (a rule of musicvid's own took these)
        ("a..b/c", False),
        ("x" * 97, False),
        ("a/b/c", False),
        ("./name", False),
        ("~/name", False),
        ("/models/name", False),
    ],
)
def test_one_rule_says_which_names_are_the_hubs(tmp_path, monkeypatch, name, hub):
    monkeypatch.chdir(tmp_path)
    assert is_hub_name(name) is hub
    assert is_local_path(name) is (not is_hub_name("/".join(name.split("/")[:2])))
    if hub:  # a hub name not in the cache is taken as named: its load says what it is
        assert check_model("scorer", name) is None
    else:
        with pytest.raises(UserError, match="there is no such folder"):
            check_model("scorer", name)
