"""train: a tiny GPT-2 built locally learns a small LyricCanvas; checkpoints load and resume."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from vipe_core.canvas import examples, read_canvas
from vipe_core.cli import main, train_summary
from vipe_core.inference import GenerationSettings, ViPE
from vipe_core.train import TRAINING_INFO, TrainConfig, load_base, train

from .helpers import subprocess_env
from .test_vipe_train_guards import train_args


@pytest.mark.slow
def test_validation_loss_falls(trained):
    _, result = trained
    assert result["history"][0]["at"] == "start"
    assert result["best_val_loss"] < 0.25 * result["initial_val_loss"]
    losses = [h["val_loss"] for h in result["history"]]
    assert losses[-1] < losses[len(losses) // 2] < losses[0]


@pytest.mark.slow
def test_greedy_generation_reproduces_training_elaborations(trained, canvas_parquet, one_thread):
    out, _ = trained
    vipe = ViPE.from_pretrained(str(out / "best"))
    vipe.generation = GenerationSettings(do_sample=False, max_new_tokens=24)
    items = examples(read_canvas(canvas_parquet), "train", 1)[:8]
    generated = vipe.elaborate([e["context"] for e in items])
    exact = sum(g == e["elaboration"] for g, e in zip(generated, items))
    assert exact >= 4, list(zip(generated, [e["elaboration"] for e in items]))


@pytest.mark.slow
def test_the_best_checkpoint_is_a_save_pretrained_folder_with_its_tokenizer(trained):
    out, result = trained
    best = out / "best"
    assert (best / "config.json").is_file() and (best / "model.safetensors").is_file()
    assert (best / "tokenizer_config.json").is_file()
    info = json.loads((best / TRAINING_INFO).read_text())
    assert info["context_size"] == 1 and info["val_loss"] == result["best_val_loss"]
    state = json.loads((out / "last" / "trainer_state.json").read_text())
    assert state["finished"] and state["epoch"] == 24


def _weights(folder):
    from safetensors.torch import load_file

    return load_file(str(folder / "model.safetensors"))


def test_a_stopped_run_resumes_where_it_stopped(tmp_path, tiny_base, canvas_parquet, one_thread):
    """3 steps, stop, 3 more steps == 6 steps in one go (model, optimizer, schedule and order restored)."""
    common = dict(
        data=str(canvas_parquet),
        base=str(tiny_base),
        context_size=1,
        batch_size=16,
        lr=3e-3,
        warmup_steps=2,
        patience=0,
        save_every=0,
        eval_every=3,
        progress=False,
        epochs=2,
    )
    straight = train(TrainConfig(out=str(tmp_path / "straight"), max_steps=6, **common))
    first = train(TrainConfig(out=str(tmp_path / "resumed"), max_steps=3, **common))
    assert first["steps"] == 3
    resumed = train(TrainConfig(out=str(tmp_path / "resumed"), max_steps=6, **common))
    assert resumed["steps"] == 6
    assert [h["step"] for h in resumed["history"]] == [0, 3, 6]
    assert abs(resumed["best_val_loss"] - straight["best_val_loss"]) < 1e-5
    a, b = _weights(tmp_path / "straight" / "best"), _weights(tmp_path / "resumed" / "best")
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    # the seconds trained are the whole run's, the first part's too; and a run that has nothing left to train,
    # run again, leaves its result as it was (its seconds not taken for 0)
    assert resumed["seconds"] >= first["seconds"] >= 0
    result = (tmp_path / "resumed" / "train_result.json").read_bytes()
    assert train(TrainConfig(out=str(tmp_path / "resumed"), max_steps=6, **common)) == resumed
    assert (tmp_path / "resumed" / "train_result.json").read_bytes() == result


def test_train_command(tmp_path, tiny_base, canvas_parquet, capsys, one_thread):
    def train_command(context: str, *extra: str) -> int:
        out = str(tmp_path / "ckpt")
        return main(
            [
                "train",
                str(canvas_parquet),
                "--base",
                str(tiny_base),
                "--context",
                context,
                "--out",
                out,
                "--epochs",
                "1",
                "--batch-size",
                "32",
                "--quiet",
                *extra,
            ]
        )

    assert train_command("0", "--warmup-steps", "0") == 0
    assert "validation loss" in capsys.readouterr().out
    assert ViPE.from_pretrained(str(tmp_path / "ckpt" / "best")).elaborate(["I saw the moon tonight"], seed=1)
    # The same --out with another context size is another run: refused, not silently mixed.
    assert train_command("3") == 2
    assert "context_size 0 -> 3" in capsys.readouterr().err


def test_the_base_learns_by_the_causal_loss_which_transformers_need_not_warn_of(tiny_base):
    _, model = load_base(str(tiny_base))  # a GPT2LMHeadModel: transformers finds no loss by its name
    assert type(model).__name__ == "GPT2LMHeadModel" and model.loss_type == "ForCausalLM"


def test_a_run_that_never_beat_the_loss_before_training_says_so(
    tmp_path, tiny_base, canvas_parquet, capsys, monkeypatch
):
    losses = iter([1.5, 2.5, 2.0])  # before training, then two evaluations, each worse (a --lr too high)
    monkeypatch.setattr("vipe_core.train.validation_loss", lambda *args: next(losses))
    out = tmp_path / "out"
    assert main(train_args(canvas_parquet, tiny_base, out, "--max-steps", "2", "--eval-every", "1")) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "validation loss 1.5000 before training, best 2.0000 after 2 steps: training made the model worse than it "
        f"was (a --lr too high?); the least bad checkpoint: {out / 'best'}"
    )
    unchanged = {"initial_val_loss": 1.5, "best_val_loss": 1.5, "steps": 1, "best": "b"}  # a first step at rate 0
    assert "after 1 steps: training has not changed it (too few steps past the" in train_summary(unchanged)
    assert train_summary(unchanged | {"best_val_loss": 1.4}).endswith("after 1 steps; best checkpoint: b")


def test_train_refuses_bad_input_in_one_line(tmp_path, tiny_base, canvas_parquet, capsys):
    assert main(["train", str(tmp_path / "none.parquet"), "--base", str(tiny_base)]) == 2
    assert main(["train", str(canvas_parquet), "--base", str(tmp_path / "no-model"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "does not exist" in err[0]
    assert err[1].endswith(
        f"the base model {tmp_path / 'no-model'} is not there: give a model's folder (as "
        "save_pretrained writes one), or a hub name."
    )
    assert main(["train", str(canvas_parquet), "--base", "no-such-org/no-model", "--out", str(tmp_path / "o")]) == 2
    assert "could not load the base model 'no-such-org/no-model'" in capsys.readouterr().err  # a hub name, offline


@pytest.mark.slow
@pytest.mark.ci
def test_accelerate_launch_runs_the_trainer(tmp_path, tiny_base, canvas_parquet):
    env = subprocess_env()
    command = [
        sys.executable,
        "-m",
        "accelerate.commands.launch",
        "--cpu",
        "--num_processes",
        "1",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "-m",
        "vipe_core",
        "train",
        str(canvas_parquet),
        "--base",
        str(tiny_base),
        "--out",
        str(tmp_path / "ckpt"),
        "--context",
        "1",
        "--batch-size",
        "16",
        "--max-steps",
        "2",
        "--quiet",
    ]
    done = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "ckpt" / "best" / "config.json").is_file()
