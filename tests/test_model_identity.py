"""What the work directory's caches know a model by: a hub name by its name; a checkpoint on this machine by what it
holds, so that one saved again under its name (`vipe train` into the same --out) is another model; the dtype the
pictures are drawn in. A rerun after such a change makes its storyboard or pictures anew (a probe's findings)."""

import dataclasses
import os

import torch

from musicvid.core.files import weights_identity
from musicvid.models.drawing import Drawing
from musicvid.models.precision import Precision
from musicvid.settings.presets import PRESETS
from musicvid.storyboard.make import _same_vipe, vipe_weights

TINY = PRESETS["tiny"]
CPU = torch.device("cpu")


def checkpoint(folder, weights: bytes):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "gpt2"}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_a_checkpoint_on_this_machine_is_known_by_what_it_holds(tmp_path):
    first = weights_identity(str(checkpoint(tmp_path / "out" / "best", b"epoch 1")))
    assert first.startswith("folder ") and weights_identity("fittar/ViPE-M-CTX7") == "fittar/ViPE-M-CTX7"
    assert weights_identity(str(checkpoint(tmp_path / "copy", b"epoch 1"))) == first  # a copy is the same model
    (tmp_path / "out" / "best" / ".cache").mkdir()  # what tools keep beside it is not the model
    (tmp_path / "out" / "best" / ".cache" / "lock").write_text("x")
    assert weights_identity(str(tmp_path / "out" / "best")) == first
    # nor what is put beside the weights: an evaluation's folder, a README
    (tmp_path / "out" / "best" / "evaluation").mkdir()
    (tmp_path / "out" / "best" / "evaluation" / "results.json").write_text("{}")
    (tmp_path / "out" / "best" / "README.md").write_text("# my model")
    assert weights_identity(str(tmp_path / "out" / "best")) == first
    checkpoint(tmp_path / "out" / "best", b"epoch 2")  # trained again into the same folder
    second = weights_identity(str(tmp_path / "out" / "best"))
    assert second != first
    # replaced by a file of the same size and times (`cp -p`, `rsync -t`), in a process that hashed the old one
    weights = tmp_path / "out" / "best" / "model.safetensors"
    newer = tmp_path / "epoch 3"
    newer.write_bytes(b"epoch 3")
    os.utime(newer, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns))
    os.replace(newer, weights)
    assert weights_identity(str(tmp_path / "out" / "best")) not in (first, second)


def test_a_storyboard_is_made_anew_for_other_vipe_weights_or_tokenizer_but_kept_if_made_before(tmp_path):
    folder = checkpoint(tmp_path / "best", b"epoch 1")
    models = dataclasses.replace(TINY, vipe=str(folder))
    made = TINY.describe() | vipe_weights(models)
    assert vipe_weights(TINY) == {"vipe_weights": ""}  # the presets' own: nothing more to say
    checkpoint(folder, b"epoch 2")
    assert not _same_vipe(made, made | vipe_weights(models))
    told = dataclasses.replace(TINY, vipe_tokenizer=str(checkpoint(tmp_path / "tok", b"vocab")))
    assert not _same_vipe(TINY.describe() | vipe_weights(TINY), TINY.describe() | vipe_weights(told))
    before = {"vipe": made["vipe"]}  # a storyboard made before ViPE's weights were recorded: kept, edits and all
    assert _same_vipe(before, made | vipe_weights(models))


def test_the_pictures_keys_say_the_dtype_drawn_in_and_a_folders_weights(tmp_path):
    drawing, cpu = Drawing(), Precision.resolve("auto", CPU)
    assert "dtype" not in drawing.key(TINY, cpu)  # float32: the keys pictures drawn before have
    assert drawing.key(TINY, Precision.resolve("bfloat16", CPU))["dtype"] == "bfloat16"
    assert drawing.key(TINY, Precision.resolve("float16", torch.device("cuda")))["dtype"] == "float16"
    folder = tmp_path / "sd"
    checkpoint(folder / "unet", b"unet 1")
    (folder / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline", "unet": ["x", "y"]}')
    before = drawing.key(dataclasses.replace(TINY, diffusion=str(folder)), cpu)
    checkpoint(folder / "unet", b"unet 2")  # fine-tuned and saved over: a part the pipeline's index names
    assert drawing.key(dataclasses.replace(TINY, diffusion=str(folder)), cpu) != before


def test_the_pictures_keys_know_fast_loras_decoders_and_adapters_by_what_they_hold(tmp_path):
    """--fast-lora, --fast-decoder and --ip-adapter changed in place redraw (a probe's finding); hub names are keyed
    as before."""
    cpu = Precision.resolve("auto", CPU)
    fast, reference = Drawing(fast=True), Drawing(reference=True)
    hub = dataclasses.replace(TINY, fast_lora="org/lcm", fast_decoder="org/taesd", ip_adapter="org/ipa/models/a.bin")
    assert fast.key(hub, cpu)["diffusion"] == f"{TINY.diffusion}+org/lcm+org/taesd"
    assert reference.key(hub, cpu)["reference adapter"] == "org/ipa/models/a.bin"
    (lora := tmp_path / "lcm.safetensors").write_bytes(b"lora 1")
    decoder = checkpoint(tmp_path / "taesd", b"decoder 1")
    (adapter := tmp_path / "ipa" / "a.safetensors").parent.mkdir()
    adapter.write_bytes(b"adapter 1")
    encoder = checkpoint(tmp_path / "ipa" / "image_encoder", b"encoder 1")
    local = dataclasses.replace(TINY, fast_lora=str(lora), fast_decoder=str(decoder), ip_adapter=str(adapter))
    keys = [fast.key(local, cpu), reference.key(local, cpu)]
    lora.write_bytes(b"lora 2")
    assert fast.key(local, cpu) != keys[0]
    keys[0] = fast.key(local, cpu)
    checkpoint(decoder, b"decoder 2")
    assert fast.key(local, cpu) != keys[0]
    adapter.write_bytes(b"adapter 2")
    assert reference.key(local, cpu) != keys[1]
    keys[1] = reference.key(local, cpu)
    checkpoint(encoder, b"encoder 2")  # the image encoder it is loaded with
    assert reference.key(local, cpu) != keys[1]


def test_the_frames_between_keyframes_know_a_video_model_folder_by_what_it_holds(tmp_path):
    from musicvid.core.workdir import Workdir
    from musicvid.pictures.grouping import Picture
    from musicvid.pictures.schedule import frame_schedule
    from musicvid.pictures.transitions import transitions_of
    from musicvid.settings.resolve import resolve_render_settings

    folder = checkpoint(tmp_path / "ltx" / "transformer", b"video 1").parent
    (folder / "model_index.json").write_text('{"_class_name": "LTXPipeline", "transformer": ["x", "y"]}')
    schedule, settings = frame_schedule([0, 4], 8, 2), resolve_render_settings(TINY, {"transitions": "video"})
    keyframes = {scene: Picture(tmp_path / f"{scene}.png", f"key {scene}", scene, None, 0.0) for scene in (0, 1)}

    def keys():
        transitions = transitions_of(schedule, settings, keyframes, str(folder), Workdir(tmp_path / "w"))
        return [picture.key for transition in transitions for picture in transition.pictures]

    before = keys()
    assert before and keys() == before
    checkpoint(folder / "transformer", b"video 2")  # fine-tuned and saved over
    assert set(keys()).isdisjoint(before)
