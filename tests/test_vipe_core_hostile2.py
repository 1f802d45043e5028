"""vipe_core against hostile input, round 2 (notes: probes10, training): an --out in another run's checkpoint,
a checkpoint replaced while it is evaluated, a LyricCanvas table that repeats lines or splits a song, flags past
their bounds (--lr, --weight-decay, --max-length, --context, an empty --out), best/'s modes, a cut-short best/,
and lyrics lines that are no lines. Each is refused in one sentence before any work."""

from __future__ import annotations

import json
import os
import tempfile

import pandas as pd
import pytest

from tests.vipe_core.helpers import ASSET_TOKENIZER, make_songs, refused, write_labelled
from vipe_core.atomic import UMASK
from vipe_core.canvas import COLUMNS, read_canvas, run_build
from vipe_core.context import MAX_CONTEXT_SIZE
from vipe_core.errors import StageError, VipeError
from vipe_core.guards import LOCK_FILE
from vipe_core.records import MAX_LINE_CHARACTERS, atomic_dir, read_clean_songs
from vipe_core.released import trained_context
from vipe_core.resume import STATE_FILE
from vipe_core.train_checks import check_out_is_ours, check_settings, check_train
from vipe_core.train_config import MIN_LYRIC_TOKENS, MIN_MAX_LENGTH, TRAINING_INFO, TrainConfig

TEACHER = ["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k", "-q"]  # never reached: refused first


@pytest.fixture(scope="module")
def canvas(tmp_path_factory):
    """A LyricCanvas table as `vipe build` writes it (4 songs, one held out)."""
    folder = tmp_path_factory.mktemp("canvas")
    write_labelled(folder / "canvas", make_songs(4, lines_per_song=4))
    run_build(folder / "lc.parquet", canvas_dir=folder / "canvas", validation_fraction=0.25)
    return folder / "lc.parquet"


def a_run(folder):
    """A `vipe train` --out as a run leaves it: its lock, best/ and last/ with the files that mark them vipe's."""
    (folder / "best").mkdir(parents=True)
    (folder / "last").mkdir()
    (folder / LOCK_FILE).touch()
    (folder / "best" / TRAINING_INFO).write_text("{}")
    (folder / "last" / STATE_FILE).write_text("{}")
    return folder


def train_argv(out, *extra: str) -> list[str]:
    return ["train", "lc.parquet", "--base", "no-base", "--out", str(out), "-q", *extra]


@pytest.mark.parametrize("inside", ["best", "last", "best/x", "last/sub/deeper"])
def test_train_into_another_runs_checkpoint_is_refused(inside, tmp_path, capsys):
    run = a_run(tmp_path / "ckA")
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    line = refused(train_argv(run / inside), capsys)
    assert "a checkpoint that the `vipe train` run in" in line and str(run) in line
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


def test_the_place_of_a_checkpoint_not_yet_saved_is_refused(tmp_path, capsys):
    (tmp_path / "ckA").mkdir()
    (tmp_path / "ckA" / LOCK_FILE).touch()  # a run that holds ckA and has not saved best/ yet
    assert "a checkpoint" in refused(train_argv(tmp_path / "ckA" / "best"), capsys)
    assert not (tmp_path / "ckA" / "best").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["build", "canvas", "--out", "{run}/best/lc.parquet"],
        ["filter", "lyrics", "--out", "{run}/last/clean.jsonl"],
        ["label", "clean.jsonl", "--out", "{run}/best/canvas", *TEACHER],
        ["evaluate", "{other}", "{canvas}", "--out", "{run}/best/ev"],
    ],
)
def test_no_stage_writes_into_a_checkpoint(argv, tmp_path, canvas, capsys):
    run, other = a_run(tmp_path / "ckA"), tmp_path / "other"
    other.mkdir()
    for name in ("config.json", "model.safetensors"):  # another model, to be evaluated into ckA/best
        (other / name).write_text("{}")
    assert "a checkpoint" in refused([a.format(run=run, other=other, canvas=canvas) for a in argv], capsys)


@pytest.mark.parametrize("nested", ["best/best/" + TRAINING_INFO, "last/o/" + LOCK_FILE, "best/r/train_result.json"])
def test_a_run_whose_checkpoint_holds_another_output_is_refused(nested, tmp_path):
    run = a_run(tmp_path / "ckA")
    check_out_is_ours(run)  # its own resume: taken
    (run / nested).parent.mkdir(parents=True)
    (run / nested).write_text("{}")
    with pytest.raises(VipeError, match="the output of another vipe run, which this run would delete"):
        check_out_is_ours(run)


@pytest.mark.parametrize("stage", [["train", "lc.parquet"], ["label", "c.jsonl", *TEACHER], ["evaluate", "c", "d"]])
def test_an_empty_out_is_refused(stage, capsys):
    assert "argument --out: it is empty" in refused([*stage, "--out", ""], capsys)


def test_a_checkpoint_replaced_while_it_loads_is_refused(tmp_path, monkeypatch):
    from vipe_core import evaluate

    checkpoint = tmp_path / "best"
    checkpoint.mkdir()
    (checkpoint / "model.safetensors").write_bytes(b"old")

    def load(path, device):
        (checkpoint / "model.safetensors").write_bytes(b"new weights")  # as a `vipe train` swapping best/ in
        return "model"

    monkeypatch.setattr(evaluate.ViPE, "from_pretrained", staticmethod(lambda path, device: "model"))
    model, version = evaluate.load_checkpoint(checkpoint, "cpu")
    assert version == evaluate.version_of(checkpoint)  # the journal's name: what was loaded
    monkeypatch.setattr(evaluate.ViPE, "from_pretrained", staticmethod(load))
    with pytest.raises(StageError, match="changed while it was loaded"):
        evaluate.load_checkpoint(checkpoint, "cpu")


def test_a_cut_short_checkpoint_is_refused_before_the_output_is_made(tmp_path, canvas, capsys):
    cut = tmp_path / "ck" / ".best.abcdefgh"  # what a run killed while saving best/ leaves
    cut.mkdir(parents=True)
    (cut / "config.json").write_text("{}")
    line = refused(["evaluate", str(cut), str(canvas), "--out", str(tmp_path / "ev"), "--no-profanity"], capsys)
    assert line.endswith("holds no weights: give a folder with model.safetensors (or pytorch_model.bin).")
    assert not (tmp_path / "ev").exists()


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda f: pd.concat([f, f]), "more than once"),
        (lambda f: f.assign(split=f["split"].where(f["line_index"] < 2, "validation")), "in more than one split"),
    ],
)
def test_a_table_that_repeats_lines_or_splits_a_song_is_refused(change, said, canvas, tmp_path):
    frame = read_canvas(canvas)
    assert list(frame.columns) == COLUMNS
    change(frame).to_parquet(tmp_path / "bad.parquet", index=False)
    with pytest.raises(VipeError, match=said):
        read_canvas(tmp_path / "bad.parquet")


@pytest.mark.parametrize(
    "setting, said",
    [
        ({"lr": 1.5}, "--lr must be a number above 0 and at most 1"),
        ({"lr": 1e308}, "--lr must be"),
        ({"weight_decay": 2.0}, "--weight-decay must be a number from 0 to 1"),
        ({"context_size": MAX_CONTEXT_SIZE + 1}, f"--context must be a whole number from 0 to {MAX_CONTEXT_SIZE}"),
        ({"max_length": MIN_MAX_LENGTH - 1}, f"--max-length must be at least {MIN_MAX_LENGTH}"),
    ],
)
def test_settings_past_their_bounds_are_refused(setting, said):
    check_settings(TrainConfig(data="lc.parquet", lr=1.0, weight_decay=1.0, max_length=MIN_MAX_LENGTH))  # the edges
    with pytest.raises(VipeError, match=said):
        check_settings(TrainConfig(data="lc.parquet", **setting))


@pytest.mark.parametrize(
    "flag, value", [("--lr", "1e308"), ("--weight-decay", "1e308"), ("--max-length", "4"), ("--context", "17")]
)
def test_flags_past_their_bounds_are_refused_by_the_command_line(flag, value, tmp_path, capsys):
    assert f"argument {flag}: {value} is not" in refused(train_argv(tmp_path / "o", flag, value), capsys)
    assert not (tmp_path / "o").exists()


def test_the_least_max_length_keeps_lyric_tokens_and_both_separators():
    from transformers import AutoTokenizer

    from vipe_core.train import encode_example

    tokenizer = AutoTokenizer.from_pretrained(ASSET_TOKENIZER)
    line, elaboration = "my heart is a lighthouse in the storm " * 5, "a lighthouse on a cliff at night " * 5
    ids, prompt = encode_example(tokenizer, line, elaboration, MIN_MAX_LENGTH)
    eos = tokenizer.eos_token_id
    assert len(ids) <= MIN_MAX_LENGTH and ids[0] == ids[prompt - 1] == ids[-1] == eos
    assert prompt - 2 >= MIN_LYRIC_TOKENS and eos not in ids[1 : prompt - 1]


def test_a_base_whose_window_holds_no_example_is_refused(tmp_path, canvas):
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_positions": MIN_MAX_LENGTH - 1}))
    with pytest.raises(VipeError, match=f"reads {MIN_MAX_LENGTH - 1} tokens at most: an example needs"):
        check_train(TrainConfig(data=str(canvas), out=str(tmp_path / "o"), base=str(base)))
    # one that holds an example but not the prompt ViPE writes (round 12: trained, then refused by --vipe and evaluate)
    (base / "config.json").write_text(json.dumps({"model_type": "gpt2", "n_positions": 48}))
    with pytest.raises(
        VipeError, match="reads 48 tokens at most, and the prompt ViPE writes takes 50 of them: what it"
    ):
        check_train(TrainConfig(data=str(canvas), out=str(tmp_path / "o"), base=str(base)))


def test_evaluate_context_and_a_trained_record_past_the_bound_are_refused(tmp_path, capsys):
    assert "from 0 to 16" in refused(["evaluate", "c", "d", "--context", f"0,{MAX_CONTEXT_SIZE + 1}"], capsys)
    (tmp_path / TRAINING_INFO).write_text(json.dumps({"context_size": 100_000_000}))
    with pytest.raises(VipeError, match=f"from 0 to {MAX_CONTEXT_SIZE} .*not 100000000"):
        trained_context(tmp_path)


def test_a_saved_checkpoint_gets_the_usual_modes(tmp_path):
    with atomic_dir(tmp_path / "best", "marker") as tmp:
        fd, weights = tempfile.mkstemp(dir=tmp)  # owner-only, as safetensors' own temporary is
        os.close(fd)
        os.replace(weights, tmp / "model.safetensors")
        (tmp / "marker").write_text("{}")
    assert (tmp_path / "best").stat().st_mode & 0o777 == 0o777 & ~UMASK
    assert (tmp_path / "best" / "model.safetensors").stat().st_mode & 0o777 == 0o666 & ~UMASK


@pytest.mark.parametrize(
    "line, said",
    [
        ("hello\n2. injected line", "holds a line break"),
        ("x" * (MAX_LINE_CHARACTERS + 1), "characters long"),
        ("a\x00b", "holds a control character"),  # (sent to the teacher as it was)
    ],
)
def test_label_refuses_lines_that_are_no_lyric_lines_before_any_request(line, said, tmp_path, capsys):
    song = {"song_id": "1", "title": "t", "artist": "a", "lines": ["a first line", line]}
    (tmp_path / "clean.jsonl").write_text(json.dumps(song) + "\n")
    with pytest.raises(VipeError, match=said):
        read_clean_songs(tmp_path / "clean.jsonl")
    assert said in refused(["label", str(tmp_path / "clean.jsonl"), "--out", str(tmp_path / "cv"), *TEACHER], capsys)
    assert not (tmp_path / "cv").exists()


@pytest.mark.parametrize(
    "argv, name",
    [
        (["filter", ""], "lyrics"),
        (["train", ""], "data"),
        (["evaluate", "c", ""], "CKPT... DATA"),
        (["collect", "--artists", ""], "--artists"),
        (["build", "--published", "", "--lyrics", "l"], "--published"),
    ],
)
def test_an_empty_path_is_refused_not_read_as_the_working_folder(argv, name, capsys):
    assert f"argument {name}: it is empty" in refused(argv, capsys)
