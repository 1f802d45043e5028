"""The model registry and its loaders: each role of the tiny preset is built here, and a model that
cannot be loaded stops the run with one sentence naming the option that takes a local copy."""

from dataclasses import replace

import pytest
import torch

from musicvid.core.errors import UserError
from musicvid.models.drawing import Drawing, load_drawing
from musicvid.models.footprint import UPSCALER_ROLES
from musicvid.models.kinds import ModelUnavailable
from musicvid.models.loading import load_asr, load_diffusion, load_separator, load_upscaler, load_vipe
from musicvid.models.registry import LOADERS, ModelRegistry
from musicvid.models.timing import Timings
from musicvid.settings.presets import PRESETS

CPU = torch.device("cpu")


def test_every_role_of_the_tiny_preset_loads_once_with_no_download():
    registry = ModelRegistry(PRESETS["tiny"], "cpu", keep_loaded=True)
    roles = [*LOADERS, Drawing(), Drawing(fast=True)]
    for role in roles:
        with registry.use(role) as model, registry.use(role) as again:
            # the preset's upscaler is auto: Lanczos on the CPU, which is no model
            assert (model is None if role in UPSCALER_ROLES.values() else model is not None) and again is model
    assert registry.loads == {role: 1 for role in roles}
    assert load_upscaler(PRESETS["tiny"].auto_upscaler, CPU) is not None  # what auto takes on a GPU
    timings = Timings()  # --fast's upscaler is reported as the upscaler, named by what auto took (on the CPU: none)
    with ModelRegistry(PRESETS["tiny"], "cpu").use(UPSCALER_ROLES[True], timings):
        pass
    assert list(timings.seconds) == ["load upscaler"] and timings.models["upscaler"]["name"] == "lanczos"


@pytest.mark.parametrize(
    "load, flag",
    [
        (lambda missing: load_asr("openai-whisper", missing, CPU), "--asr-model"),
        (lambda missing: load_asr("faster-whisper", missing, CPU), "--asr-model"),
        (lambda missing: load_vipe(missing, None, CPU), "--vipe"),
        (lambda missing: load_diffusion(missing, CPU), "--diffusion"),
        (
            lambda missing: load_drawing(replace(PRESETS["tiny"], fast_lora=missing), Drawing(fast=True), CPU),
            "--fast-lora",
        ),
        (
            lambda missing: load_drawing(replace(PRESETS["tiny"], fast_decoder=missing), Drawing(fast=True), CPU),
            "--fast-decoder",
        ),
        (lambda missing: load_separator(missing, CPU), "--separator"),
        (lambda missing: load_upscaler(f"{missing}/model.pth", CPU), "--upscaler"),  # a hub file
    ],
)
def test_a_model_that_cannot_be_loaded_is_one_sentence_naming_the_way_to_a_local_copy(load, flag):
    with pytest.raises(ModelUnavailable) as refused:
        load("nobody/no-such-model")  # offline (conftest), and in no cache
    message = str(refused.value)
    assert "'nobody/no-such-model" in message and f"pass a local copy with {flag} PATH" in message
    assert "\n" not in message


def test_a_file_that_holds_no_upscaler_is_named_without_download_advice(tmp_path):
    file = tmp_path / "notes.safetensors"  # (a .pth of no weights is told from its first bytes: tests/test_inputs.py)
    file.write_bytes(b"not a model")
    with pytest.raises(UserError) as refused:
        load_upscaler(str(file), CPU)
    assert not isinstance(refused.value, ModelUnavailable)
    assert str(refused.value).startswith(f"--upscaler {file}: {file} is not an upscaler spandrel can load")


def test_a_model_kept_loaded_is_loaded_again_once_its_files_change_and_only_then(tmp_path):
    """A batch keeps its models loaded; a model folder saved over between two songs is another model (the caches
    key it by what its files hold), so its next use loads it again, never under a job using it."""
    folder = tmp_path / "my-vipe"
    folder.mkdir()
    (folder / "config.json").write_text('{"n_layer": 1}')
    loaded = []
    registry = ModelRegistry(
        replace(PRESETS["tiny"], vipe=str(folder)),
        "cpu",
        keep_loaded=True,
        loaders={"vipe": lambda models, device, precision: loaded.append(models.vipe) or len(loaded)},
    )
    with registry.use("vipe") as first:
        (folder / "config.json").write_text('{"n_layer": 24}')  # saved over while a song uses it (another size)
        with registry.use("vipe") as same:
            assert same == first == 1
    with registry.use("vipe") as second, registry.use("vipe") as still:
        assert second == still == 2
    (folder / "notes.md").write_text("not read by its loaders")
    with registry.use("vipe") as third:
        assert third == 2 and registry.loads["vipe"] == 2


def test_a_role_the_registry_loads_with_its_own_loader_is_not_checked_as_a_file_its_name_would_be(tmp_path):
    from musicvid.prepare import check_before_work
    from musicvid.settings.resolve import resolve_render_settings
    from musicvid.settings.song import SongRequest
    from tests.helpers import make_tone

    # a benchmark's upscaler of random weights, named for its report: no file and no hub name
    models = replace(PRESETS["tiny"], upscaler="x4plus-random")
    registry = ModelRegistry(models, "cpu", loaders={"upscaler": lambda *_: None})
    assert registry.own == {"upscaler"} and ModelRegistry(models, "cpu").own == frozenset()
    settings = resolve_render_settings(models, {"resolution": "720p"})
    request = SongRequest(song=make_tone(tmp_path / "song.wav", 2.0), workdir=tmp_path / "work")
    with pytest.raises(UserError, match="--upscaler x4plus-random is neither a file nor a hub file"):
        check_before_work(request, models, settings, tmp_path / "song.mp4")
    assert check_before_work(request, models, settings, tmp_path / "song.mp4", own=registry.own).lyrics is None
    # Whisper and Demucs of a benchmark's own, offline: no size of theirs to find downloaded, no file to read
    models = replace(PRESETS["tiny"], asr="base-random", asr_backend="faster-whisper", separator="htdemucs-random")
    request = replace(request, separate_vocals=True)
    with pytest.raises(UserError, match="--asr-model base-random: base-random is not downloaded"):
        check_before_work(request, models, settings, tmp_path / "song.mp4")
    own = ModelRegistry(models, "cpu", loaders={"asr": print, "separator": print}).own
    assert check_before_work(request, models, settings, tmp_path / "song.mp4", own=own).lyrics is None
