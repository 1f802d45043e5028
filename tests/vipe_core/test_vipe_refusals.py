"""A hostile tester's findings on build, evaluate and vipe's options: a person's files at an output's name are
refused and kept, a table `train` would refuse is not built, a model that is not ViPE's kind is refused before any
work, and every refusal is one whole sentence that says what a flag takes."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from vipe_core.canvas import read_canvas, run_build
from vipe_core.errors import VipeError

from .helpers import make_songs, refused, write_labelled

QUIET = ["-q", "--no-profanity"]


def _evaluate(checkpoint, data, out) -> list[str]:
    return ["evaluate", str(checkpoint), str(data), "--out", str(out), *QUIET]


# ---------------------------------------------------------------------------------------------
# A person's files at an output's name


def test_evaluate_refuses_a_results_file_or_journal_it_did_not_write(tiny_base, canvas_parquet, tmp_path, capsys):
    out = tmp_path / "scores"
    out.mkdir()
    (out / "results.json").write_text("mine\n")
    said = refused(_evaluate(tiny_base, canvas_parquet, out), capsys)
    assert "results.json is not a result vipe wrote" in said
    assert (out / "results.json").read_text() == "mine\n"
    (out / "results.json").unlink()
    journal = out / "generations-model-0123abcd-ctx1.jsonl"  # a name evaluate appends to
    for text in ("mine\n", '{"key": "1:0", "text": "a"}\nmy notes\n'):
        journal.write_text(text)
        assert "is not a generations journal vipe wrote" in refused(_evaluate(tiny_base, canvas_parquet, out), capsys)
        assert journal.read_text() == text


def test_evaluate_refuses_to_write_into_another_models_folder(tiny_base, canvas_parquet, tmp_path, capsys):
    other = tmp_path / "other-model"
    shutil.copytree(tiny_base, other)
    before = sorted(path.name for path in other.iterdir())
    said = refused(_evaluate(tiny_base, canvas_parquet, other), capsys)
    assert f"--out {other} holds a model (its config.json): evaluate writes beside a model, never in it" in said
    assert sorted(path.name for path in other.iterdir()) == before


def test_build_refuses_to_replace_a_file_it_did_not_write(tmp_path, capsys):
    write_labelled(tmp_path / "canvas", make_songs(4, lines_per_song=2))
    parquet = tmp_path / "theirs.parquet"
    pd.DataFrame({"a": [1]}).to_parquet(parquet)
    (tmp_path / "my.parquet").write_text("not parquet at all")
    (tmp_path / "mynotes.txt").write_text("my notes\n")
    for name in ("mynotes.txt", "my.parquet", "theirs.parquet"):
        before = (tmp_path / name).read_bytes()
        said = refused(["build", str(tmp_path / "canvas"), "--out", str(tmp_path / name)], capsys)
        assert "is not a LyricCanvas table vipe wrote" in said
        assert (tmp_path / name).read_bytes() == before
    run_build(tmp_path / "lc.parquet", canvas_dir=tmp_path / "canvas")
    (tmp_path / "link.parquet").symlink_to(tmp_path / "lc.parquet")  # (refused, as filter's --out refuses one)
    said = refused(["build", str(tmp_path / "canvas"), "--out", str(tmp_path / "link.parquet")], capsys)
    assert "link.parquet is a link, and vipe writes through none" in said and (tmp_path / "link.parquet").is_symlink()
    (tmp_path / "loop").symlink_to(tmp_path / "loop")  # (a traceback, resolving it)
    said = refused(["build", str(tmp_path / "canvas"), "--out", str(tmp_path / "loop")], capsys)
    assert "loop is a link that leads round in a loop" in said
    run_build(tmp_path / "lc.parquet", canvas_dir=tmp_path / "canvas", seed=3)  # its own table it replaces


# ---------------------------------------------------------------------------------------------
# Tables `train` would refuse


def test_build_refuses_a_table_without_a_validation_song(tmp_path, capsys):
    write_labelled(tmp_path / "canvas", make_songs(1, lines_per_song=4))
    said = refused(["build", str(tmp_path / "canvas"), "--out", str(tmp_path / "lc.parquet")], capsys)
    assert "validation split would hold no labelled line (1 song in all" in said
    assert not (tmp_path / "lc.parquet").exists()


@pytest.mark.parametrize(
    "line, said",
    [
        ("", "is blank"),
        ("   ", "is blank"),
        ("one\ntwo", "holds a line break"),
        ("x" * 1001, "is 1001 characters long"),
    ],
)
def test_build_and_read_canvas_refuse_lines_that_are_no_lyric_lines(line, said, tmp_path, capsys):
    songs = make_songs(2, lines_per_song=3)
    write_labelled(tmp_path / "canvas", songs)
    labelled = tmp_path / "canvas" / f"{songs[1].song_id}.json"
    data = json.loads(labelled.read_text())
    data["lines"][2] = line
    labelled.write_text(json.dumps(data))
    assert said in refused(["build", str(tmp_path / "canvas"), "--out", str(tmp_path / "lc.parquet")], capsys)
    rows = [
        {"song_id": "1", "line_index": i, "lyric": lyric, "elaboration": "e", "title": "t", "artist": "a"}
        for i, lyric in enumerate(["a line", line])
    ]
    pd.DataFrame(rows).assign(split="train").to_parquet(tmp_path / "hand.parquet")
    with pytest.raises(VipeError, match=f"its row 2 {said}"):
        read_canvas(tmp_path / "hand.parquet")


def test_a_folder_given_as_the_table_is_said_to_be_a_folder(tmp_path):
    with pytest.raises(VipeError, match="is a folder"):
        read_canvas(tmp_path)


# ---------------------------------------------------------------------------------------------
# Checkpoints evaluate cannot use, refused before any work


def test_evaluate_refuses_a_model_that_is_no_causal_language_model(tokenizer, canvas_parquet, tmp_path, capsys):
    from transformers import BertConfig, BertModel

    config = BertConfig(
        vocab_size=len(tokenizer), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16
    )
    BertModel(config).save_pretrained(tmp_path / "bert")
    tokenizer.save_pretrained(tmp_path / "bert")
    said = refused(_evaluate(tmp_path / "bert", canvas_parquet, tmp_path / "out"), capsys)
    assert "is a BertModel, not a causal language model" in said
    assert not (tmp_path / "out").exists()


def test_evaluate_says_a_missing_tokenizer_is_missing(tiny_base, canvas_parquet, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("vipe_core.evaluate.DEFAULT_VIPE_TOKENIZER", "nobody/no-such-tokenizer", raising=False)
    checkpoint = tmp_path / "notok"
    checkpoint.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy(tiny_base / name, checkpoint / name)
    said = refused(_evaluate(checkpoint, canvas_parquet, tmp_path / "out"), capsys)
    assert "notok holds no tokenizer" in said and "copy the tokenizer files" in said
    assert not (tmp_path / "out").exists()


def test_a_tokenizer_that_does_not_fit_is_said_in_a_whole_sentence(tiny_base, canvas_parquet, tmp_path, capsys):
    from transformers import AutoTokenizer

    checkpoint = tmp_path / ("a-checkpoint-with-a-long-name" * 3)
    shutil.copytree(tiny_base, checkpoint)
    grown = AutoTokenizer.from_pretrained(checkpoint)
    grown.add_tokens([f"extra{i}" for i in range(200)])
    grown.save_pretrained(checkpoint)
    said = refused(_evaluate(checkpoint, canvas_parquet, tmp_path / "out"), capsys)
    assert said.endswith("use the tokenizer the model was trained with."), said


# ---------------------------------------------------------------------------------------------
# Options


@pytest.mark.parametrize(
    "argv, said",
    [
        (["train", "d", "--tokenizer", ""], "argument --tokenizer: it is empty"),
        (["evaluate", "c", "d", "--context", "1,,3"], "'1,,3' has an empty entry"),
        (["evaluate", "c", "d", "--context", "1,"], "'1,' has an empty entry"),
        (["evaluate", "c", "d", "--context", "1,3,1"], "names context size 1 more than once"),
        (["evaluate", "c", "d", "--context", "nan"], "nan is not a context size from 0 to 16"),
        (["evaluate", "c", "d", "--limit", "nan"], "nan is not a whole number of at least 1"),
        (["evaluate", "c", "d", "--batch-size", "1e9"], "1e9 is not a whole number of at least 1"),
        (["train", "d", "--epochs", "1e9"], "1e9 is not a whole number from 1 to 1000"),
        (["train", "d", "--epochs", ""], "'' is not a whole number from 1 to 1000"),
        # (torch's sampler took it, and failed past sys.maxsize with a traceback after the base model loaded)
        (["train", "d", "--batch-size", "1" + "0" * 20], "is not a whole number from 1 to 65536"),
        (["train", "d", "--warmup-steps", "1e20"], "1e20 is not a whole number of at least 0"),
        (["train", "d", "--context", "nan"], "nan is not a context size from 0 to 16"),
        (["train", "d", "--seed", "x"], "x is not a seed from 0"),
        (["build", "c", "--seed", "-1"], "-1 is not a seed from 0"),
        (["build", "c", "--validation-fraction", "x"], "x is not a finite number above 0 and below 1"),
        (["build", "c", "--validation-fraction", "1"], "1 is not a finite number above 0 and below 1"),
    ],
)
def test_an_option_refusal_says_what_the_flag_takes(argv, said, capsys):
    line = refused(argv, capsys)
    assert said in line and "invalid" not in line, line


def test_distinct_context_sizes_are_taken_in_order():
    from vipe_core.options import build_parser

    args = build_parser().parse_args(["evaluate", "c", "d", "--context", "3, 1,0"])
    assert args.context == [3, 1, 0]


def test_results_written_by_evaluate_are_its_own(tmp_path):
    from vipe_core.evaluate import _results_ours

    (tmp_path / "r.json").write_text(json.dumps({"data": "d", "split": "validation", "cider_d": []}))
    assert _results_ours(tmp_path / "r.json")


def test_a_reason_quoted_in_a_refusal_is_cut_after_a_word():
    from vipe_core.resume import reason

    said = reason(ValueError("a tokenizer " * 20 + "\nsecond line"))
    assert said.endswith(" a…") and len(said) <= 161 and "second" not in said  # (not "a tok…")
    assert reason(ValueError("short\nmore")) == "short" and reason(ValueError()) == "ValueError"


def test_a_data_file_that_is_a_link_to_nothing_is_named_so(tmp_path, capsys):
    (link := tmp_path / "gone.parquet").symlink_to(tmp_path / "nowhere.parquet")
    said = refused(["train", str(link)], capsys)
    assert said.endswith(
        f"gone.parquet is a link to {tmp_path / 'nowhere.parquet'}, where nothing is (run `vipe build` to make one)."
    )
