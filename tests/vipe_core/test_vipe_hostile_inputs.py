"""Hostile input to collect, filter, label, build and evaluate: one sentence, exit code 2, before any work;
outputs never replace inputs; duplicate songs refused; one run per output folder."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from vipe_core.canvas import read_canvas
from vipe_core.errors import VipeError
from vipe_core.guards import hold_folder

from .helpers import make_songs, refused, write_labelled

TEACHER = ["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k", "-q"]  # never reached: refused first


def _song(**changes) -> dict:
    song = {"song_id": "1", "title": "t", "artist": "a", "lyrics": "x y z\n", "rank": 1}
    return {**song, **changes}


@pytest.fixture
def files(tmp_path):
    """A lyrics folder, a lyrics.clean.jsonl and a canvas folder, as the stages write them."""
    songs = make_songs(2)
    (tmp_path / "lyrics").mkdir()
    (tmp_path / "lyrics" / "a.json").write_text(json.dumps({"artist": "a", "artist_id": "1", "songs": [_song()]}))
    (tmp_path / "clean.jsonl").write_text("".join(json.dumps(s.__dict__) + "\n" for s in songs))
    write_labelled(tmp_path / "canvas", songs)
    (tmp_path / "pub.csv").write_text("song_id,line_index,elaboration\n1000,0,a red moon\n")
    return tmp_path


def test_an_output_that_is_an_input_is_refused_and_the_input_kept(files, capsys):
    before = (files / "lyrics" / "a.json").read_text()
    assert "lies in the lyrics folder" in refused(
        ["filter", str(files / "lyrics"), "--out", str(files / "lyrics" / "a.json")], capsys
    )
    assert (files / "lyrics" / "a.json").read_text() == before
    pub = ["build", "--published", str(files / "pub.csv"), "--lyrics", str(files / "clean.jsonl")]
    assert "would overwrite the published elaborations" in refused([*pub, "--out", str(files / "pub.csv")], capsys)
    assert "would overwrite the lyrics file" in refused([*pub, "--out", str(files / "clean.jsonl")], capsys)
    assert (files / "pub.csv").read_text().startswith("song_id,")
    assert "lies in the canvas folder" in refused(
        ["build", str(files / "canvas"), "--out", str(files / "canvas" / "x.json")], capsys
    )
    assert "is a file" in refused(
        ["label", str(files / "clean.jsonl"), "--out", str(files / "clean.jsonl"), *TEACHER], capsys
    )


@pytest.mark.parametrize(
    "make, argv, said",
    [
        (
            lambda d: (d / "bad.jsonl").write_bytes(b"\xff\xfe\n"),
            ["label", "{d}/bad.jsonl", "--out", "{d}/x"],
            "not UTF-8",
        ),
        (lambda d: (d / "dd.jsonl").mkdir(), ["label", "{d}/dd.jsonl", "--out", "{d}/x"], "is a folder"),
        (lambda d: (d / "none.jsonl").write_text(""), ["label", "{d}/none.jsonl", "--out", "{d}/x"], "holds no songs"),
        (
            lambda d: (d / "role.bin").write_bytes(b"\xff\xfe"),
            ["label", "{d}/clean.jsonl", "--out", "{d}/x", "--system-role", "{d}/role.bin"],
            "not UTF-8",
        ),
        (
            lambda d: (d / "role.bin").write_bytes(b"\xff\xfe"),
            ["collect", "--artists", "{d}/role.bin", "--out", "{d}/x"],
            "not UTF-8",
        ),
        (
            lambda d: (d / "lyrics" / "sub.json").mkdir(),
            ["filter", "{d}/lyrics", "--out", "{d}/x.jsonl"],
            "is a folder",
        ),
        # a FIFO is not waited on for a writer; JSON nested past the recursion limit, or with a number of more digits
        # than int() reads, is refused as any JSON that cannot be read (they raised a traceback)
        (lambda d: os.mkfifo(d / "lyrics" / "f.json"), ["filter", "{d}/lyrics", "--out", "{d}/x.jsonl"], "regular"),
        (lambda d: os.mkfifo(d / "f.jsonl"), ["label", "{d}/f.jsonl", "--out", "{d}/x"], "not a regular file"),
        (  # (it was said to be missing)
            lambda d: os.mkfifo(d / "p.csv"),
            ["build", "--published", "{d}/p.csv", "--lyrics", "{d}/clean.jsonl", "--out", "{d}/x.parquet"],
            "p.csv is not a regular file (a pipe or a device)",
        ),
        (
            lambda d: (d / "lyrics" / "a.json").write_text("[" * 100_000 + "]" * 100_000),
            ["filter", "{d}/lyrics", "--out", "{d}/x.jsonl"],
            "is not valid JSON (it is nested too deeply)",
        ),
        (
            lambda d: (d / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n"),
            ["label", "{d}/deep.jsonl", "--out", "{d}/x"],
            "deep.jsonl line 1 is not valid JSON (it is nested too deeply)",
        ),
        (
            lambda d: (d / "lyrics" / "a.json").write_text('{"artist": "a", "rank": ' + "9" * 5000 + "}"),
            ["filter", "{d}/lyrics", "--out", "{d}/x.jsonl"],
            "a number in it has more digits than can be read",
        ),
        (
            lambda d: (d / "canvas" / "deep.json").write_text("[" * 100_000 + "]" * 100_000),
            ["build", "{d}/canvas", "--out", "{d}/x.parquet"],
            "nested too deeply",
        ),
    ],
)
def test_unreadable_files_are_refused(make, argv, said, files, capsys):
    make(files)
    assert said in refused([a.format(d=files) for a in argv] + (TEACHER if argv[0] == "label" else []), capsys)
    assert not (files / "x").exists() and not (files / "x.jsonl").exists()


@pytest.mark.parametrize(
    "change, said",
    [
        ({"lyrics": None}, "its lyrics should be text"),
        ({"song_id": ["x"]}, "its song_id should be text"),
        ({"rank": "1"}, "its rank should be a whole number"),
    ],
)
def test_filter_refuses_a_song_of_the_wrong_types(change, said, files, capsys):
    (files / "lyrics" / "a.json").write_text(json.dumps({"artist": "a", "artist_id": "1", "songs": [_song(**change)]}))
    assert said in refused(["filter", str(files / "lyrics"), "--out", str(files / "x.jsonl")], capsys)


def test_label_refuses_a_numeric_song_id_and_a_repeated_one(files, capsys):
    line = json.dumps({"song_id": 123, "title": "t", "artist": "a", "lines": ["x y"]})
    (files / "int.jsonl").write_text(line + "\n")
    assert "its song_id should be text" in refused(
        ["label", str(files / "int.jsonl"), "--out", str(files / "x"), *TEACHER], capsys
    )
    first, second = (files / "clean.jsonl").read_text().splitlines()
    (files / "dup.jsonl").write_text(first + "\n" + second.replace('"1001"', '"1000"') + "\n")
    line = refused(["label", str(files / "dup.jsonl"), "--out", str(files / "x"), *TEACHER], capsys)
    assert "line 2 repeats song_id '1000' of line 1" in line and not (files / "x").exists()


@pytest.mark.parametrize(
    "change, said",
    [
        ({"song_id": 1001}, "its song_id should be text"),
        (
            {"elaborations": [1] * 16},
            "its elaborations should be a list of texts, not a list whose entry 1 is a number",
        ),
        ({"elaborations": ["a"] * 2 + [None] * 14}, "not a list whose entry 3 is null"),
        ({"lines": [None] * 16}, "its lines should be a list of texts"),
        ({"lines": "abc", "elaborations": "xyz"}, "its lines should be a list of texts"),
        ({"song_id": "1000"}, "both label song_id '1000'"),
    ],
)
def test_build_refuses_a_canvas_file_of_the_wrong_types_or_a_repeated_song(change, said, files, capsys):
    path = files / "canvas" / "1001.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    assert said in refused(["build", str(files / "canvas"), "--out", str(files / "x.parquet")], capsys)
    assert not (files / "x.parquet").exists()


@pytest.mark.parametrize(
    "edit, said",
    [
        (lambda song: [song], "is not a labelled song from `vipe label` (expected an object, got a list)"),
        (
            lambda song: {"elaboration" if k == "elaborations" else k: v for k, v in song.items()},
            "it lacks elaborations",
        ),
    ],
)
def test_build_refuses_a_canvas_file_it_cannot_read_as_a_song_rather_than_leave_the_song_out(edit, said, files, capsys):
    """Round 13: a song file holding a list, or whose elaborations were misspelled by hand, was left out unsaid."""
    path = files / "canvas" / "1001.json"
    path.write_text(json.dumps(edit(json.loads(path.read_text()))))
    assert said in refused(["build", str(files / "canvas"), "--out", str(files / "x.parquet")], capsys)
    assert not (files / "x.parquet").exists()


def test_build_reads_a_canvas_file_saved_with_a_byte_order_mark(files, capsys):
    path = files / "canvas" / "1001.json"
    path.write_text("\ufeff" + path.read_text(), encoding="utf-8")
    from vipe_core.cli import main

    assert main(["build", str(files / "canvas"), "--out", str(files / "x.parquet"), "-q"]) == 0
    assert (files / "x.parquet").exists()


@pytest.mark.parametrize("index", ["", "abc", "1.5"])
def test_build_refuses_a_published_line_index_that_is_not_a_whole_number(index, files, capsys):
    (files / "pub.csv").write_text(f"song_id,line_index,elaboration\n1000,{index},a red moon\n")
    argv = ["build", "--published", str(files / "pub.csv"), "--lyrics", str(files / "clean.jsonl")]
    assert "line_index" in refused([*argv, "--out", str(files / "x.parquet")], capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["label", "c.jsonl", "--timeout", "nan"],
        ["label", "c.jsonl", "--timeout", "-1"],
        ["label", "c.jsonl", "--temperature", "nan"],
        ["label", "c.jsonl", "--price-input", "-1"],
        ["collect", "--artists", "a.txt", "--delay", "inf"],
    ],
)
def test_float_flags_out_of_range_are_refused(argv, capsys):
    assert argv[-2] in refused(argv, capsys)


def test_a_second_label_run_on_the_same_folder_is_refused(files, capsys):
    with hold_folder(files / "canvas2"):
        line = refused(["label", str(files / "clean.jsonl"), "--out", str(files / "canvas2"), *TEACHER], capsys)
    assert "in use by another vipe run" in line


# ---------------------------------------------------------------------------------------------
# evaluate


@pytest.fixture
def checkpoint(tmp_path, tiny_base, monkeypatch):
    """A trained-looking folder (the tiny base as best/); loading a model for work fails the test."""
    best = tmp_path / "ck" / "best"
    shutil.copytree(tiny_base, best)
    (best / "vipe_training.json").write_text('{"context_size": 1}')

    def no_work(*args, **kwargs):
        raise AssertionError("the evaluation began its work before refusing")

    monkeypatch.setattr("vipe_core.evaluate.ViPE.from_pretrained", no_work)
    return tmp_path / "ck"


@pytest.mark.parametrize(
    "extra, damage, said",
    [
        (["--device", "banana"], None, "is not a device"),
        (["--max-new-tokens", "100000"], None, "leaves no room"),
        ([], lambda ck: (ck / "best" / "vipe_training.json").write_text('{"context_size": "seven"}'), "context_size"),
        ([], lambda ck: (ck / "best" / "model.safetensors").write_bytes(b"\x00" * 3000), "could not be read"),
        (["--out", "{data}"], None, "is a file"),
        (["--out", "{ck}/best/evaluation"], None, "best/evaluation lies in"),  # musicvid would take it for another
    ],
)
def test_evaluate_refuses_bad_input_before_work(extra, damage, said, checkpoint, canvas_parquet, capsys):
    if damage:
        damage(checkpoint)
    extra = [a.format(data=canvas_parquet, ck=checkpoint) for a in extra]
    assert said in refused(["evaluate", "--no-profanity", str(checkpoint), str(canvas_parquet), *extra], capsys)


def test_a_pipe_given_as_the_lyriccanvas_is_said_to_be_one(tmp_path):  # (train's and evaluate's data)
    os.mkfifo(tmp_path / "canvas.parquet")
    with pytest.raises(VipeError, match="canvas.parquet is not a regular file"):
        read_canvas(tmp_path / "canvas.parquet")


def test_evaluate_writes_beside_the_checkpoint_by_default(checkpoint, canvas_parquet):
    from vipe_core.evaluate import EvalConfig, check_evaluate

    for named in (checkpoint, checkpoint / "best"):  # a training's --out, or its best/ itself
        _, out = check_evaluate(EvalConfig(checkpoints=[str(named)], data=str(canvas_parquet)))
        assert out == checkpoint / "evaluation-best"


def test_an_output_folder_holding_another_stages_records_is_refused(files, checkpoint, canvas_parquet, capsys):
    # (evaluate's results.json in a lyrics folder was read by filter as an artist's, and refused there)
    lyrics = sorted(p.name for p in (files / "lyrics").iterdir())
    argv = ["evaluate", str(checkpoint), str(canvas_parquet), "--out", str(files / "lyrics"), "-q"]
    assert "holds a.json, a record this stage does not write" in refused(argv, capsys)
    assert sorted(p.name for p in (files / "lyrics").iterdir()) == lyrics


@pytest.mark.parametrize(
    "rows, said",
    [
        (",0,a red moon\n", "pub.csv row 1 has no song_id"),  # (the column became floats: nothing joined, unsaid why)
        ("1000,0,a,b,c\n", "pub.csv has a row of more cells than its header has columns"),  # (read as line_index 'b')
    ],
)
def test_a_published_table_of_a_blank_id_or_a_ragged_row_is_said_so(files, capsys, rows, said):
    (files / "pub.csv").write_text("song_id,line_index,elaboration\n" + rows)
    argv = ["build", "--published", str(files / "pub.csv"), "--lyrics", str(files / "clean.jsonl")]
    assert said in refused([*argv, "--out", str(files / "x.parquet")], capsys)
