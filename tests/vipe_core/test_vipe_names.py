"""Names no file system takes, outputs below a file or on a device, flags past use, and a model config of sizes no
model has: each stage refuses them in one sentence before any work (they were tracebacks), and a song or artist of
a long name gets a file."""

from __future__ import annotations

import json
import shutil

import pytest

from vipe_core.atomic import NAME_BYTES
from vipe_core.collect import artist_file
from vipe_core.teacher import song_file

from .helpers import make_songs, refused, write_labelled
from .test_vipe_train_guards import train_args

LONG = "y" * 300


@pytest.mark.parametrize(
    "argv",
    [
        ["filter", "lyrics", "--out", f"{LONG}.jsonl"],
        ["filter", LONG],
        ["build", "canvas", "--out", f"{LONG}/x.parquet"],
        ["train", f"{LONG}.parquet", "--base", "base"],
        ["evaluate", "ck", "data.parquet", "--out", LONG],
    ],
)
def test_a_name_longer_than_a_file_system_takes_is_refused_as_given(tmp_path, monkeypatch, capsys, argv):
    monkeypatch.chdir(tmp_path)
    said = refused(argv, capsys)
    assert f" bytes long; a file system takes {NAME_BYTES}" in said and not list(tmp_path.iterdir())


def test_a_song_or_artist_of_a_long_name_gets_a_file_a_file_system_takes(tmp_path):
    for made in (song_file(tmp_path, "9" * 300), artist_file(tmp_path, "a" * 300), song_file(tmp_path, "é" * 200)):
        assert len(made.name.encode()) < NAME_BYTES - 40  # (room for its temporary's marks)
        made.write_text("{}")
    assert song_file(tmp_path, "9" * 300) != song_file(tmp_path, "9" * 299 + "8")  # (two songs stay two)


@pytest.mark.parametrize("stage", ["filter", "build"])
def test_an_output_below_a_file_is_refused_before_the_work(tmp_path, monkeypatch, capsys, stage):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "lyrics").mkdir()
    (tmp_path / "lyrics" / "a.json").write_text(json.dumps({"artist": "a", "artist_id": "1", "songs": []}))
    write_labelled(tmp_path / "canvas", make_songs(2))
    source = "lyrics" if stage == "filter" else "canvas"
    said = refused([stage, source, "--out", "notes.txt/x.out"], capsys)
    assert "lies in notes.txt, which is a file, not a folder" in said
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_base_whose_config_has_a_size_no_model_has_is_refused_before_the_work(
    tmp_path, tiny_base, canvas_parquet, capsys, no_work
):
    base = shutil.copytree(tiny_base, tmp_path / "base")
    config = json.loads((base / "config.json").read_text())
    (base / "config.json").write_text(json.dumps({**config, "n_layer": -1}))
    said = refused(train_args(canvas_parquet, base, tmp_path / "run"), capsys)
    assert "config.json's n_layer is -1, not a number a model can have" in said
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "argv, said",
    [
        (["train", "d.parquet", "--epochs", "1" + "0" * 20], "--epochs: 1000000"),  # (a run of years)
        (["label", "c.jsonl", "--price-input", "1e308"], "from 0 to 1e+06"),  # (the tally was Infinity)
        (["train", "d.parquet", "--out", "/dev/null"], "is a special file (a device or a pipe)"),
    ],
)
def test_a_flag_past_what_a_run_can_use_is_refused(argv, said, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert said in refused(argv, capsys)
