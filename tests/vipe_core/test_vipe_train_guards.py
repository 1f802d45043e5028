"""train: everything checked before any work, a person's files kept, one run per --out, a resume only with
the same settings, and a diverged run exit 1 without a best checkpoint it did not save."""

from __future__ import annotations

import json
import math
import shutil

import huggingface_hub
import pytest

from vipe_core.cli import main
from vipe_core.errors import VipeError
from vipe_core.guards import hold_folder
from vipe_core.train import TrainConfig, train

from .conftest import _no_work
from .helpers import make_songs, refused, write_labelled


def train_args(data, base, out, *extra: str) -> list[str]:
    common = ["--context", "1", "--batch-size", "16", "--epochs", "1", "--lr", "3e-3", "--warmup-steps", "2", "-q"]
    return ["train", str(data), "--base", str(base), "--out", str(out), *common, *extra]


@pytest.fixture(scope="module")
def short_run(tmp_path_factory, tiny_base, canvas_parquet):
    """A run stopped after one step: an --out with best/, last/ and train_result.json."""
    out = tmp_path_factory.mktemp("short") / "ckpt"
    assert main(train_args(canvas_parquet, tiny_base, out, "--max-steps", "1", "--eval-every", "1")) == 0
    return out


@pytest.mark.parametrize("name", ["best", "last", "train_result.json"])
def test_a_persons_files_in_out_are_kept(name, tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    mine = tmp_path / "mine" / name
    if name.endswith(".json"):
        mine.parent.mkdir()
        mine.write_text('{"my": "results"}')
    else:
        mine.mkdir(parents=True)
        (mine / "notes.txt").write_text("precious")
    line = refused(train_args(canvas_parquet, tiny_base, tmp_path / "mine"), capsys)
    assert str(mine) in line and ("vipe did not write" in line or "not a result vipe wrote" in line)
    kept = mine if mine.is_file() else mine / "notes.txt"
    assert kept.read_text() in ('{"my": "results"}', "precious")


def test_an_output_that_is_an_input_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    data = tmp_path / "lc.parquet"
    shutil.copy(canvas_parquet, data)
    assert "is a file" in refused(train_args(data, tiny_base, data), capsys)
    assert data.read_bytes() == canvas_parquet.read_bytes()
    base = tmp_path / "ckpt" / "best"
    shutil.copytree(tiny_base, base)
    assert "would overwrite the base model" in refused(train_args(data, base, tmp_path / "ckpt"), capsys)


def test_an_out_in_or_holding_the_hugging_face_cache_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    """Round 13: with a base by hub name, --out its repository's folder in the cache (or the cache, or HF_HOME) was
    taken, and the run wrote best/ and last/ among the snapshots it read."""
    cache = tmp_path / "hf" / "hub"
    (cache / "models--openai-community--gpt2-medium" / "snapshots").mkdir(parents=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
        for out in (cache / "models--openai-community--gpt2-medium", cache, cache.parent):
            line = refused(train_args(canvas_parquet, tiny_base, out), capsys)
            assert "the Hugging Face cache" in line and str(cache) in line
    assert sorted(p.name for p in cache.rglob("*")) == ["models--openai-community--gpt2-medium", "snapshots"]


@pytest.mark.parametrize(
    "flag, value", [("--lr", "nan"), ("--lr", "-1"), ("--lr", "inf"), ("--weight-decay", "-1"), ("--seed", "-1")]
)
def test_flags_out_of_range_are_refused(flag, value, tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    assert flag in refused(train_args(canvas_parquet, tiny_base, tmp_path / "o", flag, value), capsys)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("setting", [{"lr": math.nan}, {"weight_decay": -1.0}, {"seed": 2**32}, {"lr": math.inf}])
def test_train_config_out_of_range_is_refused(setting, tmp_path, tiny_base, canvas_parquet, no_work):
    with pytest.raises(VipeError, match="must be"):
        train(TrainConfig(data=str(canvas_parquet), out=str(tmp_path / "o"), base=str(tiny_base), **setting))


def _cut(path, size):
    path.write_bytes(path.read_bytes()[:size])


@pytest.mark.parametrize(
    "damage, said",
    [
        (lambda last: _cut(last / "trainer_state.json", 20), "trainer_state.json"),
        (lambda last: _cut(last / "pytorch_model.bin", 1000), "pytorch_model.bin"),
        (lambda last: (last / "optimizer.bin").unlink(), "optimizer.bin missing"),
    ],
)
def test_a_damaged_last_is_refused_before_work(
    damage, said, short_run, tmp_path, tiny_base, canvas_parquet, capsys, no_work
):
    out = tmp_path / "ckpt"
    shutil.copytree(short_run, out)
    damage(out / "last")
    line = refused(train_args(canvas_parquet, tiny_base, out, "--max-steps", "2"), capsys)
    assert "is damaged" in line and said in line and "--restart" in line


def test_a_damaged_base_is_refused_before_work(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    base = tmp_path / "base"
    shutil.copytree(tiny_base, base)
    _cut(base / "model.safetensors", 5000)
    assert "model.safetensors could not be read" in refused(train_args(canvas_parquet, base, tmp_path / "o"), capsys)


def test_a_resume_with_other_data_is_refused(short_run, tmp_path, tiny_base, capsys, no_work):
    from vipe_core.canvas import run_build

    write_labelled(tmp_path / "canvas", make_songs(8, seed=1))
    other = tmp_path / "other.parquet"
    run_build(other, canvas_dir=tmp_path / "canvas", validation_fraction=0.5, seed=7)
    assert "data_sha256" in refused(train_args(other, tiny_base, short_run), capsys)
    assert json.loads((short_run / "train_result.json").read_text())["steps"] == 1  # kept as it was


def test_a_resume_with_another_lr_seed_or_epochs_is_refused(short_run, tiny_base, canvas_parquet, capsys, no_work):
    for flag, value, said in [("--lr", "0.004", "lr 0.003 -> 0.004"), ("--seed", "5", "seed 0 -> 5")]:
        assert said in refused(train_args(canvas_parquet, tiny_base, short_run, flag, value), capsys)
    assert "epochs 1 -> 3" in refused(train_args(canvas_parquet, tiny_base, short_run, "--epochs", "3"), capsys)


def test_a_second_run_on_the_same_out_is_refused(tmp_path, tiny_base, canvas_parquet, capsys, no_work):
    out = tmp_path / "both"
    with hold_folder(out):  # as a first run does while it trains
        line = refused(train_args(canvas_parquet, tiny_base, out), capsys)
    assert "in use by another vipe run;" in line
    assert sorted(p.name for p in out.iterdir()) == [".vipe.lock"]


def test_a_diverged_run_exits_1_and_names_no_best(tmp_path, tiny_base, canvas_parquet, capsys, one_thread, monkeypatch):
    from vipe_core import train as training

    out, losses = tmp_path / "inf", [training.validation_loss]
    # --lr is bounded, and no lr within the bounds makes the tiny model diverge in a step: the loss after the
    # first step is made NaN, as a diverged run's is.
    monkeypatch.setattr(training, "validation_loss", lambda *a: losses.pop()(*a) if losses else math.nan)
    code = main(
        train_args(
            canvas_parquet,
            tiny_base,
            out,
            "--warmup-steps",
            "0",
            "--max-steps",
            "1",
            "--eval-every",
            "1",
        )
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and err[-1].startswith("vipe train: training diverged (validation loss nan at step 1)")
    assert not (out / "best").exists()
    if (out / "train_result.json").exists():
        json.loads((out / "train_result.json").read_text(), parse_constant=_no_work)


def test_train_result_is_strict_json_naming_the_saved_best(short_run):
    result = json.loads((short_run / "train_result.json").read_text(), parse_constant=_no_work)
    assert (short_run / "best" / "vipe_training.json").is_file() and result["best"] == str(short_run / "best")


def test_ctrl_c_while_the_libraries_load_is_one_sentence(tmp_path, tiny_base, canvas_parquet, capsys, monkeypatch):
    """Ctrl-C in a run's first seconds (transformers' import, which --quiet makes first) is said as later, no
    traceback, and nothing is made."""
    from transformers.utils import logging as transformers_logging

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(transformers_logging, "disable_progress_bar", interrupted)
    assert main(train_args(canvas_parquet, tiny_base, tmp_path / "out")) == 130
    err = capsys.readouterr().err
    assert err == "vipe train: interrupted; run the same command again to continue.\n"
    assert not (tmp_path / "out").exists()
