"""What the work directory's caches know a model by: a hub name by its name; a checkpoint on this machine by what it
holds, so that one saved again under its name (`vipe train` into the same --out) is another model; the dtype the
pictures are drawn in. A rerun after such a change makes its storyboard or pictures anew (a probe's findings)."""

import dataclasses

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
    assert weights_identity(str(tmp_path / "out" / "best")) != first


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
