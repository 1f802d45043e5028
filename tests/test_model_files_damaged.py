"""Model files damaged in ways last stop's probes left (helper-141): each refused before any work in one sentence,
not as the model loads after the storyboard, with a library's words, or not at all (musicvid.models.pipeline_files,
vipe_files, weights_files, asr_files). Damaged copies of the real-layout stand-ins (tests/standins/)."""

import json
import os
import pickle
import shutil
import subprocess
import sys

import pytest
import torch
from safetensors import safe_open

from musicvid.core.errors import UserError
from musicvid.models.choose import choose_models
from musicvid.models.pipeline_files import check_picture_model
from musicvid.models.published import whisper_dims
from musicvid.settings.presets import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER, SCORER, SD15, TAESD
from tests.fixtures.whisper_ct2 import ct2_variables, tiny_en_dir
from tests.helpers import make_tone, quick, run
from tests.standins.hub import snapshot
from tests.test_model_checks import refused_before_the_work

UNET = "unet/diffusion_pytorch_model.safetensors"


def edit(path, key, value):
    config = json.loads(path.read_text())
    config[key] = value
    path.write_text(json.dumps(config))


def library_unknown(sd):
    edit(sd / "model_index.json", "vae", ["nosuchlib", "AutoencoderKL"])


def vocabulary_emptied(sd):
    (sd / "tokenizer/vocab.json").write_text("{}")


def merges_emptied(sd):
    (sd / "tokenizer/merges.txt").write_bytes(b"")


def no_training_steps(sd):
    edit(sd / "scheduler/scheduler_config.json", "num_train_timesteps", 0)


def shards_elsewhere(sd):
    """The UNet's weights moved out of the folder, its index naming them by a path up and out."""
    (other := sd.parent / "other/unet").mkdir(parents=True)
    shutil.move(sd / UNET, other)
    with safe_open(other / "diffusion_pytorch_model.safetensors", "pt") as opened:
        placed = {key: "../../other/unet/diffusion_pytorch_model.safetensors" for key in opened.keys()}
    (sd / f"{UNET}.index.json").write_text(json.dumps({"metadata": {}, "weight_map": placed}))


def trained_too_long(sd):
    edit(sd / "scheduler/scheduler_config.json", "num_train_timesteps", 10**9)  # (built as it is checked: 4 GB)


def token_added(sd):
    from transformers import CLIPTokenizer

    tokenizer = CLIPTokenizer.from_pretrained(sd / "tokenizer")
    tokenizer.add_tokens(["<my-concept>"])
    tokenizer.save_pretrained(sd / "tokenizer")


def prompts_longer(sd):
    edit(sd / "tokenizer/tokenizer_config.json", "model_max_length", 154)


def prompts_unbounded(sd):  # (transformers reads a tokenizer without model_max_length as int(1e30) long)
    edit(sd / "tokenizer/tokenizer_config.json", "model_max_length", int(1e30))


def own_code_named(sd):
    edit(sd / "model_index.json", "tokenizer", ["transformers", "AutoTokenizer"])
    edit(sd / "tokenizer/tokenizer_config.json", "auto_map", {"AutoTokenizer": ["own.OwnTokenizer", None]})


@pytest.fixture
def sd(standin_hub, tmp_path):
    return shutil.copytree(snapshot(standin_hub, SD15), tmp_path / "sd")  # (links followed: files of its own)


@pytest.mark.parametrize(
    "damage, said",
    [
        (library_unknown, "'s vae is of the library 'nosuchlib' (AutoencoderKL), which musicvid loads no part from"),
        (vocabulary_emptied, "'s tokenizer: its vocab.json is empty (a download or a copy cut short?)"),
        (merges_emptied, "'s tokenizer: its merges.txt is empty"),
        (no_training_steps, "'s scheduler: its scheduler_config.json describes no PNDMScheduler"),
        (trained_too_long, "'s scheduler: its scheduler_config.json's num_train_timesteps is 1,000,000,000; the"),
        (token_added, "'s tokenizer holds 1537 tokens, and its text_encoder reads 1536: a token added to the"),
        (prompts_longer, "'s tokenizer makes prompts of 154 tokens, and its text_encoder reads 77 at most: set its"),
        (prompts_unbounded, "'s tokenizer makes prompts of no length (no model_max_length), and its text_encoder"),
        (shards_elsewhere, "'s unet: its diffusion_pytorch_model.safetensors.index.json names '../../other/unet/"),
        (own_code_named, "'s tokenizer: its tokenizer_config.json names code of its own to run (auto_map, for"),
    ],
)
def test_a_damaged_picture_model_folder_is_refused_naming_the_part(sd, damage, said):
    check_picture_model(str(sd), "sd")  # (whole, it passes)
    damage(sd)
    with pytest.raises(UserError) as refused:
        check_picture_model(str(sd), "sd")
    assert str(refused.value).startswith(f"--diffusion {sd}{said}"), refused.value


class Runs:
    """A pickle that runs a command as it loads: it leaves a file behind."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_pytorch_file_of_anything_but_tensors_is_refused_unread_and_an_older_one_of_tensors_passes(sd, tmp_path):
    bins = [sd / "unet" / name for name in os.listdir(sd / "unet") if name.endswith((".safetensors", ".bin"))]
    tensors = torch.load(sd / "unet/diffusion_pytorch_model.bin", weights_only=True)
    for path in bins:
        path.unlink()
    older = sd / "unet/diffusion_pytorch_model.bin"
    torch.save(tensors, older, _use_new_zipfile_serialization=False)  # (torch's format before 1.6: no zip)
    check_picture_model(str(sd), "sd")
    marker = tmp_path / "ran"
    for save in (
        lambda: pickle.dump({"a": Runs(marker)}, older.open("wb"), protocol=4),
        lambda: torch.save({"a": Runs(marker)}, older),
    ):
        save()
        with pytest.raises(UserError, match="its diffusion_pytorch_model.bin holds more than tensors, and musicvid"):
            check_picture_model(str(sd), "sd")
    assert not marker.exists()


def test_a_vipe_or_lora_pickle_that_runs_code_is_refused_before_any_work_unread(standin_hub, capsys, tmp_path):
    song, marker = make_tone(tmp_path / "song.wav", 2), tmp_path / "ran"
    vipe = shutil.copytree(snapshot(standin_hub, DEFAULT_VIPE), tmp_path / "vipe")
    for weights in vipe.glob("*model*"):
        weights.unlink()
    with (vipe / "pytorch_model.bin").open("wb") as opened:
        pickle.dump({"transformer.wte.weight": Runs(marker)}, opened, protocol=4)
    torch.save({"lora_unet_down.lora_down.weight": Runs(marker)}, lora := tmp_path / "lora.bin")
    for option, given in (("--vipe", vipe), ("--lora", lora)):
        argv = [*quick(song), option, given]
        refused_before_the_work(capsys, tmp_path, argv, f"{option} {given}", "holds more than tensors")
    assert not marker.exists()


def test_a_tiny_decoder_cut_short_or_of_another_scale_is_refused_before_any_work(standin_hub, capsys, tmp_path):
    song, decoder = make_tone(tmp_path / "song.wav", 2), shutil.copytree(snapshot(standin_hub, TAESD), tmp_path / "t")
    weights = decoder / "diffusion_pytorch_model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    argv = [*quick(song), "--fast", "--fast-decoder", decoder]
    refused_before_the_work(capsys, tmp_path, argv, f"--fast-decoder {decoder}: its {weights.name} cannot be read")
    shutil.copy(snapshot(standin_hub, TAESD) / weights.name, weights)
    edit(decoder / "config.json", "upsampling_scaling_factor", 0)  # (it failed after the storyboard; plan, exit 1)
    said = "its config.json's upsampling_scaling_factor 0 over 4 decoder blocks does not make pictures 8 times"
    refused_before_the_work(capsys, tmp_path, argv, said)
    code, out, err = run(capsys, "plan", song, "--fast", "--fast-decoder", decoder, "--gpu-memory", "24")
    assert code == 2 and said in err and err.count("\n") == 1, err


def test_a_whisper_checkpoint_without_its_dims_or_of_sizes_no_whisper_has_or_running_code_is_refused(tmp_path):
    dims = whisper_dims("tiny")
    torch.save({"dims": dims, "model_state_dict": {}}, whole := tmp_path / "whole.pt")
    assert choose_models("tiny", asr=str(whole)).asr == str(whole)
    torch.save({"dims": {k: v for k, v in dims.items() if k != "n_mels"}, "model_state_dict": {}}, tmp_path / "x.pt")
    with pytest.raises(UserError, match=r"x.pt is an openai-whisper checkpoint whose dims lack n_mels: the sizes"):
        choose_models("tiny", asr=str(tmp_path / "x.pt"))
    torch.save({"dims": dims, "model_state_dict": {}, "x": Runs(tmp_path / "ran")}, tmp_path / "runs.pt")
    with pytest.raises(
        UserError, match=r"runs.pt holds more than tensors, .* \(openai-whisper's own .pt files hold their"
    ):
        choose_models("tiny", asr=str(tmp_path / "runs.pt"))  # (refused as its names are read, not as it loads)
    assert not (tmp_path / "ran").exists()
    torch.save({"dims": {**dims, "n_vocab": 10**700}, "model_state_dict": {}}, tmp_path / "x.pt")  # (pickle's LONG4)
    with pytest.raises(UserError, match=r"x.pt holds a whole number of over 600 digits, which no weights hold"):
        choose_models("tiny", asr=str(tmp_path / "x.pt"))  # (runs no code: not said to)
    # sizes no Whisper has, refused before it is built (10⁹ layers filled the memory; 0 heads divided by nothing)
    for key, value, said in (
        ("n_text_layer", 10**9, "dims describe a Whisper of 2,359,296.0 billion parameters; large-v3 has 1.55"),
        ("n_vocab", 10**400, "dims describe a Whisper of over a billion billion parameters"),  # (past a float)
        ("n_audio_ctx", 2**31, "n_audio_ctx is 2147483648; openai-whisper hears 30 s windows, of 1500 positions"),
        ("n_text_head", 0, "n_text_head is 0, not a size a model has"),
        ("n_mels", "80", "n_mels is '80', not a size a model has"),
        ("n_mels", 96, "n_mels is 96; openai-whisper computes 80 or 128 mel bins"),
        ("n_audio_head", 5, "n_audio_state is 384, which its n_audio_head, 5, does not divide"),
    ):
        torch.save({"dims": {**dims, key: value}, "model_state_dict": {}}, tmp_path / "x.pt")
        with pytest.raises(UserError) as refused:
            choose_models("tiny", asr=str(tmp_path / "x.pt"))
        assert str(refused.value).startswith(f"--asr-model {tmp_path / 'x.pt'}: its ") and said in str(refused.value)


OWN_CODE = """import pathlib
pathlib.Path({marker!r}).touch()
from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast
class OwnConfig(GPT2Config):
    model_type = "owngpt"
class OwnForCausalLM(GPT2LMHeadModel):
    config_class = OwnConfig
class OwnTokenizer(GPT2TokenizerFast):
    pass
"""


def test_a_model_or_tokenizer_with_code_of_its_own_is_refused_and_its_code_never_run(standin_hub, tmp_path):
    """transformers asks on the terminal whether to run a folder's own code (auto_map), and runs it on a yes."""
    song, marker = make_tone(tmp_path / "song.wav", 2), tmp_path / "ran"
    vipe = shutil.copytree(snapshot(standin_hub, DEFAULT_VIPE), tmp_path / "vipe")
    (tokenizer := tmp_path / "tokenizer").mkdir()
    shutil.copy(snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER) / "tokenizer.json", tokenizer)
    for folder in (vipe, tokenizer):
        (folder / "own.py").write_text(OWN_CODE.format(marker=str(marker)))
    auto = {"AutoConfig": "own.OwnConfig", "AutoModelForCausalLM": "own.OwnForCausalLM"}
    edit(vipe / "config.json", "auto_map", auto)
    edit(vipe / "config.json", "model_type", "owngpt")
    own = {"tokenizer_class": "OwnTokenizer", "auto_map": {"AutoTokenizer": ["own.OwnTokenizer", "own.OwnTokenizer"]}}
    (tokenizer / "tokenizer_config.json").write_text(json.dumps(own))
    scorer = shutil.copytree(snapshot(standin_hub, SCORER), tmp_path / "scorer")
    (scorer / "own.py").write_text(OWN_CODE.format(marker=str(marker)) + "class OwnProcessor(OwnTokenizer): pass\n")
    edit(scorer / "preprocessor_config.json", "auto_map", {"AutoImageProcessor": "own.OwnProcessor"})
    edit(scorer / "preprocessor_config.json", "image_processor_type", "OwnProcessor")
    for options in (
        ["--vipe", vipe],
        ["--vipe", snapshot(standin_hub, DEFAULT_VIPE), "--vipe-tokenizer", tokenizer],
        ["--scorer", scorer, "--keyframe-candidates", "2"],
    ):
        argv = [*quick(song), *options, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4"]
        done = subprocess.run(
            [sys.executable, "-m", "musicvid", *map(str, argv)], input="y\ny\n", capture_output=True, text=True
        )
        assert not marker.exists(), f"{options}: its code ran"
        assert done.returncode == 2 and "contains custom code" in done.stderr and not (tmp_path / "w").exists()


def test_a_scorer_of_another_models_tokenizer_or_type_is_refused_before_any_work(standin_hub, tmp_path):
    from musicvid.models.names import check_model

    scorer = shutil.copytree(snapshot(standin_hub, SCORER), tmp_path / "scorer")
    check_model("scorer", str(scorer))
    edit(scorer / "config.json", "model_type", "siglip")
    with pytest.raises(
        UserError, match="scorer is a CLIPModel of model_type 'siglip', not a CLIP model \\(model_type clip\\)"
    ):
        check_model("scorer", str(scorer))
    edit(scorer / "config.json", "model_type", "clip")
    for name in ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"):
        (scorer / name).unlink()
        if (snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER) / name).is_file():  # (GPT-2's: 50257 tokens and more)
            shutil.copy(snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER) / name, scorer)
    with pytest.raises(
        UserError, match=r"its tokenizer's vocabulary \(5025\d\) is larger than its text model's \(\d+\): another"
    ):
        check_model("scorer", str(scorer))


def test_an_upscaler_of_nan_weights_is_refused_before_any_work(standin_hub, capsys, tmp_path):
    """spandrel loads it, and every upscaled frame came out black, exit 0."""
    [whole] = snapshot(standin_hub, "2kpr/Real-ESRGAN").glob("*.pth")
    state = torch.load(whole, weights_only=True)
    for tensors in (value for value in state.values() if isinstance(value, dict)):
        for tensor in tensors.values():
            tensor.fill_(float("nan"))
    torch.save(state, nan := tmp_path / "nan.pth")
    argv = [*quick(make_tone(tmp_path / "song.wav", 2)), "--resolution", "720p", "--upscaler", nan]
    refused_before_the_work(capsys, tmp_path, argv, f"--upscaler {nan}: its weights hold NaN or infinite values (")


@pytest.mark.parametrize(
    "damage, said",
    [
        ("tokenizer.json", "its tokenizer.json is not a Whisper's: it has no <|startoftranscript|>"),
        ("vocabulary.txt", "its vocabulary.txt is empty (a download or a copy cut short?)"),
        (
            "preprocessor_config.json",
            "its preprocessor_config.json's feature_size is 128, where its model.bin reads 80",
        ),
    ],
)
def test_a_faster_whisper_folder_of_another_tokenizer_or_mel_count_is_refused(standin_hub, tmp_path, damage, said):
    """Each failed in faster-whisper's own words as the song was heard, exit 1."""
    (folder := tmp_path / "converted").mkdir()
    for name in ("model.bin", "config.json", "vocabulary.txt", "tokenizer.json"):
        (folder / name).symlink_to(tiny_en_dir() / name)
    assert choose_models("tiny", asr_backend="faster-whisper", asr=str(folder)).asr == str(folder)
    (folder / damage).unlink(missing_ok=True)
    if damage == "tokenizer.json":
        shutil.copy(snapshot(standin_hub, DEFAULT_VIPE_TOKENIZER) / damage, folder)  # (GPT-2's)
    else:
        (folder / damage).write_text('{"feature_size": 128}' if damage.endswith(".json") else "")
    with pytest.raises(UserError) as refused:
        choose_models("tiny", asr_backend="faster-whisper", asr=str(folder))
    assert str(refused.value).startswith(f"--asr-model {folder}: {said}"), refused.value


def test_a_faster_whisper_folder_of_sizes_no_whisper_has_is_refused(tmp_path):
    # its heads are in its model.bin's header alone: 0 divided by nothing as the plan sized it (round 17)
    shutil.copytree(tiny_en_dir(), folder := tmp_path / "converted")
    data = bytearray((folder / "model.bin").read_bytes())
    [at] = [at for name, _, at in ct2_variables(bytes(data)) if name == "decoder/num_heads"]
    data[at : at + 2] = (0).to_bytes(2, "little")
    (folder / "model.bin").write_bytes(bytes(data))
    with pytest.raises(UserError) as refused:
        choose_models("tiny", asr_backend="faster-whisper", asr=str(folder))
    assert (
        str(refused.value) == f"--asr-model {folder}: its model.bin's sizes' n_text_head is 0, not a size a model has"
    )


def test_an_ip_adapter_beside_another_models_image_encoder_is_refused_before_any_work(standin_hub, capsys, tmp_path):
    """SDXL's encoder (24 wide) beside SD 1.5's adapter (reading 16): a matrix product failed after the storyboard."""
    from PIL import Image

    h94 = snapshot(standin_hub, "h94/IP-Adapter")
    (folder := tmp_path / "adapter").mkdir()
    shutil.copy(h94 / "models/ip-adapter_sd15.safetensors", folder)
    shutil.copytree(h94 / "sdxl_models/image_encoder", folder / "image_encoder")
    Image.new("RGB", (64, 64), "red").save(picture := tmp_path / "ref.png")
    argv = [*quick(make_tone(tmp_path / "song.wav", 2)), "--reference", picture]
    said = "reads image embeddings 16 wide (image_proj.proj.weight), where the image encoder beside it makes them 24"
    refused_before_the_work(capsys, tmp_path, [*argv, "--ip-adapter", folder / "ip-adapter_sd15.safetensors"], said)


def test_the_published_upscalers_checked_as_they_load_keep_bfloat16_to_the_end(standin_hub):
    from musicvid.models.loading import load_upscaler
    from musicvid.models.precision import Precision
    from musicvid.settings.presets import REAL_ESRGAN, REAL_ESRGAN_FAST

    cpu = torch.device("cpu")
    for name in (REAL_ESRGAN, REAL_ESRGAN_FAST):  # x4plus, and --fast's compact x4v3 (its PReLUs too)
        loaded = load_upscaler(name, cpu, precision=Precision.resolve("bfloat16", cpu))
        assert {(p.dtype, p.device.type) for p in loaded.model.parameters()} == {(torch.bfloat16, "cpu")}, name
        made = loaded(torch.rand(1, 3, 8, 8, dtype=torch.bfloat16))
        assert made.dtype == torch.bfloat16 and made.shape == (1, 3, 32, 32) and bool(made.isfinite().all()), name
