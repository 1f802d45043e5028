"""The models a person names, checked before anything loads: a folder that is not there, a URL, a checkpoint of
another family, read from its folder or the Hugging Face cache; the scorer is a report's model, which a render goes
without where it cannot be had (unless the keyframes are picked by it), and `score` takes the scorer the render
recorded (the memory plan's part: tests/test_memory_plan.py). Each test is a finding of a probe of careless and
hostile uses (issue 50), tried on variants."""

import dataclasses
import json
import re
import shutil
from pathlib import Path

import huggingface_hub.constants
import pytest

from musicvid.core.errors import UserError
from musicvid.models.choose import choose_models
from musicvid.models.names import check_weights, vipe_context
from musicvid.prepare import check_before_work
from musicvid.settings.presets import PRESETS
from musicvid.settings.song import SongRequest
from tests.fixtures.whisper_ct2 import tiny_en_dir
from tests.helpers import make_tone, quick, run, valid_board, work_directory
from tests.standins.hub import as_json, write_repo
from vipe_core.released import RELEASED_CONTEXT
from vipe_core.train_config import TRAINING_INFO

BERT = {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": 32}
CLIP = {"model_type": "clip", "architectures": ["CLIPModel"], "projection_dim": 16}
SD = {"_class_name": "StableDiffusionPipeline", "unet": ["diffusers", "UNet2DConditionModel"]}


@pytest.fixture
def song(tmp_path):
    return make_tone(tmp_path / "song.wav", 2)


def refused_before_the_work(capsys, tmp_path, argv, *said):
    """`musicvid ARGV` with a work directory and -o in `tmp_path`: exit 2, one line saying each of `said`, and
    no work directory made (nothing was loaded, transcribed or drawn)."""
    code, out, err = run(capsys, *argv, "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4")
    assert code == 2 and err.count("\n") == 1 and not out, err
    assert all(words in err for words in said), err
    assert not (tmp_path / "w").exists() and not (tmp_path / "v.mp4").exists()


@pytest.mark.parametrize(
    "option, name, said",
    [
        ("--scorer", "./nope", "there is no such folder"),
        ("--vipe", "../nope/vipe", "there is no such folder"),
        ("--diffusion", "~/no-such-model", "there is no such folder"),
        ("--video-model", "/no/such/ltx", "there is no such folder"),
        ("--diffusion", "my-model.safetensors", "there is no such file"),  # a file's name, not a hub name
        ("--vipe", "models/vipe.bin", "there is no such file"),
        ("--video-model", "ltx.ckpt", "there is no such file"),
        ("--scorer", "http://127.0.0.1:9/clip", "is a URL"),
        ("--vipe", "https://huggingface.co/fittar/ViPE-M-CTX7", "is a URL"),
        ("--diffusion", "file:///models/sd", "is a URL"),
    ],
)
def test_a_model_folder_that_is_not_there_or_a_url_is_refused_before_anything_loads(
    capsys, tmp_path, song, option, name, said
):
    video = ["--transitions", "video"] if option == "--video-model" else []
    refused_before_the_work(capsys, tmp_path, [*quick(song), option, name, *video], f"{option} {name}", said)


def checkpoint(folder, files: dict):
    folder.mkdir(parents=True)
    for name, config in files.items():
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text(json.dumps(config))
    return folder


@pytest.mark.parametrize(
    "option, files, said",
    [
        ("--scorer", {"config.json": BERT}, "is a BertModel, not a CLIP model (model_type clip)"),
        ("--scorer", {"config.json": {"model_type": "clip_vision_model"}}, "is a clip_vision_model, not a CLIP"),
        ("--vipe", {"config.json": CLIP}, "is a CLIPModel, not a causal language model"),
        ("--diffusion", {"config.json": CLIP}, "holds no model_index.json"),
        ("--video-model", {"config.json": BERT}, "holds no model_index.json"),
        ("--scorer", {"model_index.json": SD}, "holds no config.json"),
        ("--scorer", {"config.json": "not a config"}, "is a checkpoint of no kind"),
        ("--vipe", {"best/config.json": CLIP}, "is a `vipe train` run's folder: give its checkpoint, "),
        ("--fast-decoder", {"config.json": {"_class_name": "AutoencoderKL"}}, "is an AutoencoderKL, not a tiny"),
    ],
)
def test_a_checkpoint_of_another_family_is_refused_before_anything_loads(capsys, tmp_path, song, option, files, said):
    folder = checkpoint(tmp_path / "model", files)
    video = {"--video-model": ["--transitions", "video"], "--fast-decoder": ["--fast"]}.get(option, [])
    refused_before_the_work(capsys, tmp_path, [*quick(song), option, folder, *video], said)


@pytest.mark.parametrize("option, config, said", [("--scorer", BERT, "BertModel"), ("--vipe", CLIP, "CLIPModel")])
def test_a_hub_name_of_another_family_is_told_from_the_cache_before_anything_loads(
    capsys, tmp_path, song, monkeypatch, option, config, said
):
    hub = tmp_path / "hub"
    write_repo(hub, "someone/checkpoint", {"config.json": as_json(config)})
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    argv = [*quick(song), option, "someone/checkpoint"]
    refused_before_the_work(capsys, tmp_path, argv, f"{option} someone/checkpoint is a {said}, not")


@pytest.mark.parametrize("picks", [["--keyframe-candidates", "2"], ["--reroll-below", "0.4"]])
def test_a_scorer_that_cannot_be_had_is_refused_before_the_work_where_the_keyframes_are_picked_by_it(
    capsys, tmp_path, song, picks
):
    # offline (conftest), and in no cache; without picks the render goes on unscored (tests/test_hub_first_run.py)
    argv = [*quick(song), "--scorer", "someone/absent-scorer", *picks]
    refused_before_the_work(capsys, tmp_path, argv, "pick keyframes by their scores", "someone/absent-scorer")


def test_score_takes_the_scorer_its_work_directory_records_checked_as_scorer_is(capsys, tmp_path):
    workdir = work_directory(tmp_path / "w")
    (workdir / "storyboard.json").write_text("{}")
    for recorded, said in (("./gone", "there is no such folder"), ("http://x.org/clip", "is a URL")):
        (workdir / "timings.json").write_text(json.dumps({"fps": 10, "models": {"scorer": {"name": recorded}}}))
        code, _, err = run(capsys, "score", workdir)
        assert code == 2 and f"the scorer {recorded} that {workdir / 'timings.json'} records" in err and said in err
    # `storyboard --keyframes` keeps no timings.json: its picks name the scorer
    (workdir / "timings.json").unlink()
    board = valid_board()
    pick = dict(from_seed=2, candidates=2, rounds=1, kept=1, lyric=0.4, prompt=0.6, scorer="../gone", key="k")
    board["scenes"][1]["pick"] = pick
    (workdir / "storyboard.json").write_text(json.dumps(board))
    code, _, err = run(capsys, "score", workdir)
    assert code == 2 and f"the scorer ../gone that {workdir / 'storyboard.json'} records" in err


GPT2 = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": 10, "n_embd": 8}


def cut_short(path):
    path.write_bytes(path.read_bytes()[:-40])


def lfs_pointer(path):
    path.write_text(f"version https://git-lfs.github.com/spec/v1\noid sha256:{'0' * 64}\nsize 1420000000\n")


def wider_config(folder):
    (folder / "config.json").write_text(json.dumps({**GPT2, "n_embd": 16}))


@pytest.mark.parametrize(
    "weights, damage, said",
    [
        ("model.safetensors", cut_short, "its model.safetensors cannot be read as a safetensors file"),
        ("model.safetensors", wider_config, "holds token embeddings of 10 x 8, and its config.json says 10 x 16"),
        ("pytorch_model.bin", cut_short, "its pytorch_model.bin is cut short"),
        ("pytorch_model.bin", lfs_pointer, "its pytorch_model.bin is a Git LFS pointer, not the weights"),
    ],
)
def test_a_vipe_folder_whose_weights_are_damaged_is_refused_before_anything_loads(
    capsys, tmp_path, song, weights, damage, said
):
    import torch
    from safetensors.torch import save_file

    folder = checkpoint(tmp_path / "vipe", {"config.json": GPT2})
    tensors = {"transformer.wte.weight": torch.zeros(10, 8), "transformer.wpe.weight": torch.zeros(16, 8)}
    save = save_file if weights.endswith(".safetensors") else torch.save
    save(tensors, str(folder / weights))
    damage(folder if damage is wider_config else folder / weights)
    refused_before_the_work(capsys, tmp_path, [*quick(song), "--vipe", folder], f"--vipe {folder}: ", said)
    if weights == "pytorch_model.bin" and damage is lfs_pointer:  # beside a model.safetensors, never read: no matter
        save_file(tensors, str(folder / "model.safetensors"))
        check_weights(folder, GPT2, "--vipe it")


def test_a_lora_file_that_is_no_lora_is_refused_before_anything_loads(capsys, tmp_path, song):
    import torch
    from safetensors.torch import save_file

    (junk := tmp_path / "junk.safetensors").write_bytes(bytes(range(256)) * 20)
    save_file(
        {"encoder.down.0.block.0.conv1.weight": torch.zeros(4, 3, 3, 3)}, str(vae := tmp_path / "vae.safetensors")
    )
    for lora, said in ((junk, "cannot be read as a safetensors file"), (vae, "is not a LoRA: it holds a VAE alone")):
        refused_before_the_work(capsys, tmp_path, [*quick(song), "--lora", lora], f"--lora {lora}", said)


def test_vipe_reads_as_many_lines_as_its_checkpoint_learned_unless_told(tmp_path):
    song, trained = make_tone(tmp_path / "song.wav", 2), tmp_path / "best"
    trained.mkdir()
    (trained / TRAINING_INFO).write_text(json.dumps({"context_size": 3, "epochs": 5}))
    models = dataclasses.replace(PRESETS["tiny"], vipe=str(trained))
    assert check_before_work(SongRequest(song=song), models, video=False).context_size == 3
    assert check_before_work(SongRequest(song=song, context_size=5), models, video=False).context_size == 5
    for name, lines in (("fittar/ViPE-M-CTX7", 7), ("someone/ViPE-S-CTX3", 3), ("someone/vipe", RELEASED_CONTEXT)):
        assert vipe_context(name) == lines
    (trained / TRAINING_INFO).write_text(json.dumps({"context_size": "seven"}))
    with pytest.raises(UserError, match=f"--vipe {trained}: .* is damaged: its context_size should be a whole"):
        check_before_work(SongRequest(song=song), models, video=False)


@pytest.mark.parametrize(
    "damage, said",
    [
        (lfs_pointer, ": its model.bin is a Git LFS pointer, not the weights it stands for"),
        (lambda bin: bin.write_text("<!DOCTYPE html><html>Sign in</html>"), ": its model.bin is no CTranslate2 model"),
        (lambda bin: bin.write_bytes(bin.read_bytes().replace(b"WhisperSpec", b"Transformer", 1)), " is a CTranslate2 Transformer, not a Whisper"),
    ],
)  # fmt: skip
def test_a_ctranslate2_folders_model_bin_that_is_no_whisper_is_refused_before_demucs(tmp_path, damage, said):
    """A clone without git-lfs, a page saved in its place, another model converted: each loaded only after Demucs."""
    folder = shutil.copytree(tiny_en_dir(), tmp_path / "ct2")
    damage(folder / "model.bin")
    with pytest.raises(UserError, match=f"^--asr-model {folder}{re.escape(said)}"):
        choose_models("tiny", asr_backend="faster-whisper", asr=str(folder))


@pytest.mark.parametrize(
    "asr",
    [["--asr-model", "base"], *(["--asr", "faster-whisper", "--asr-model", f] for f in ("tiny", "owner/whisper-x"))],
)
def test_a_whisper_not_downloaded_is_refused_offline_where_whisper_hears_the_song(capsys, tmp_path, monkeypatch, asr):
    """Its load came after the song's decoding and Demucs (openai-whisper tried its own server regardless of
    HF_HUB_OFFLINE); timed lyrics stand in for Whisper, which then needs nothing."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # (openai-whisper's downloads: none)
    song = make_tone(tmp_path / "song.wav", 2)
    (words := tmp_path / "words.txt").write_text("a light in the storm\n")
    name = asr[-1]
    argv = ["render", song, "--models", "tiny", "-q", "--lyrics", words, *asr]
    said = f"--asr-model {name}: {name} is not downloaded, and HF_HUB_OFFLINE keeps this run from downloading it"
    refused_before_the_work(capsys, tmp_path, argv, said)
    code, _, err = run(capsys, "plan", song, *asr, "--models", "tiny")  # (a plan reads the published sizes alone)
    assert "is not downloaded" not in err


def test_a_separator_path_not_there_or_of_no_demucs_model_is_refused_before_any_work(capsys, tmp_path):
    from tests.standins.loras import kohya_lora

    song = make_tone(tmp_path / "song.wav", 2)
    (lora := tmp_path / "style.safetensors").write_bytes(kohya_lora())
    (upscaler := tmp_path / "x4.pth").write_bytes(b"PK")
    lfs_pointer(pointer := tmp_path / "htdemucs.th")
    (words := tmp_path / "words.txt").write_text("a light in the storm\n")
    for given, said in [
        (tmp_path / "gone" / "x.th", "there is no such file"),  # (a typo, not a model to download)
        (pointer, "is a Git LFS pointer, not the weights"),
        (lora, "is not a Demucs model: it holds a LoRA"),
        (upscaler, "is no Demucs model's file: it reads .th or .safetensors"),
        (tmp_path, "is a folder"),
        (pickle_running(tmp_path / "evil.th", tmp_path / "ran"), "holds more than a Demucs model's class, settings"),
    ]:
        argv = ["render", song, "--models", "tiny", "-q", "--lyrics", words, "--separate-vocals", "--separator", given]
        refused_before_the_work(capsys, tmp_path, argv, f"--separator {given}", said)
    assert not (tmp_path / "ran").exists()  # (demucs' own loader ran the file's code: it made this file)


def pickle_running(path, marker):
    """A .th file whose pickle makes the file `marker` as it is read."""
    import pathlib

    import torch

    class Runs:
        def __reduce__(self):
            return pathlib.Path.touch, (pathlib.Path(marker),)

    torch.save({"klass": Runs()}, path)
    return path


def test_a_demucs_models_th_file_is_read_without_running_code_and_separates(tmp_path):
    import torch

    from musicvid.models.internals import demucs_model, demucs_stem
    from musicvid.models.loading import check_separator
    from musicvid.models.tiny import tiny_htdemucs

    model = tiny_htdemucs()
    args, kwargs = model._init_args_kwargs  # (as demucs.states.serialize_model saves a model)
    package = {"klass": type(model), "args": args, "kwargs": kwargs, "state": model.state_dict(), "training_args": {}}
    torch.save(package, tmp_path / "mine.th")
    check_separator(str(tmp_path / "mine.th"))
    loaded = demucs_model(str(tmp_path / "mine.th"))
    vocals = demucs_stem(loaded, torch.zeros(2, 44100), "vocals", 0.25, False)
    assert vocals.shape == (2, 44100)
    torch.save({**package, "kwargs": {**kwargs, "channels": 10**6}}, tmp_path / "huge.th")  # (said as no memory)
    with pytest.raises(UserError, match="huge.th: its settings describe a HTDemucs whose .* where its weights hold"):
        check_separator(str(tmp_path / "huge.th"))


@pytest.mark.parametrize("part", ["scorer", "image encoder"])
@pytest.mark.parametrize(
    "change, said",
    [
        ({"projection_dim": -3}, "describes no CLIP"),
        ({"projection_dim": 64}, "its weights hold visual_projection.weight of"),
    ],
)
def test_a_scorer_or_image_encoder_whose_config_its_weights_do_not_fill_is_refused_before_the_work(
    capsys, tmp_path, song, standin_hub, part, change, said
):
    """Both were said at their load, after the song's analysis (the scorer's as a model "to download")."""
    from PIL import Image

    from musicvid.settings.presets import SCORER
    from tests.standins.hub import snapshot

    if part == "scorer":
        folder = tmp_path / "scorer"
        shutil.copytree(snapshot(standin_hub, SCORER), folder)
        argv, named = ["--scorer", folder, "--keyframe-candidates", "2"], f"--scorer {folder}: "
    else:
        shutil.copytree(snapshot(standin_hub, "h94/IP-Adapter") / "models", tmp_path / "adapter")
        folder, adapter = tmp_path / "adapter" / "image_encoder", tmp_path / "adapter" / "ip-adapter_sd15.safetensors"
        Image.new("RGB", (64, 64), (200, 100, 50)).save(tmp_path / "ref.png")
        argv = ["--reference", tmp_path / "ref.png", "--ip-adapter", adapter]
        named = f"--ip-adapter {adapter}'s image encoder {folder}: "
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **change}))
    refused_before_the_work(capsys, tmp_path, [*quick(song), *argv], named, said)


@pytest.mark.parametrize(
    "option, part, key, value",
    [
        ("--diffusion", "unet/config.json", "layers_per_block", 10**9),  # (built to be counted: minutes, gigabytes)
        ("--diffusion", "unet/config.json", "layers_per_block", -1),  # (a crash mid-render, exit 1)
        ("--diffusion", "text_encoder/config.json", "num_hidden_layers", 10**8),
        ("--diffusion", "scheduler/scheduler_config.json", "beta_end", float("nan")),  # (said as NaN weights)
        ("--vipe", "config.json", "n_layer", 10**9),
    ],
)
def test_a_config_with_a_number_no_model_has_is_refused_before_the_work(
    capsys, tmp_path, song, standin_hub, option, part, key, value
):
    from musicvid.settings.presets import SD15
    from tests.standins.hub import snapshot
    from vipe_core.released import DEFAULT_VIPE

    folder = tmp_path / "model"
    shutil.copytree(snapshot(standin_hub, SD15 if option == "--diffusion" else DEFAULT_VIPE), folder)
    config = json.loads((folder / part).read_text())
    (folder / part).write_text(json.dumps({**config, key: value}))
    said = f"its {Path(part).name}'s {key} is {value}, not a number a model can have"
    refused_before_the_work(capsys, tmp_path, [*quick(song), option, folder], said)
