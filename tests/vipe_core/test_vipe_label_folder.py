"""`vipe label --out` names a folder it reads before it writes: what it did not write there is refused before any
request is paid for, and left as it was."""

from __future__ import annotations

import json

import pytest

from vipe_core.records import write_jsonl

from .helpers import ChatServer, make_songs, refused, standin_teacher

USAGE = {"requests": 1, "retries": 0, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.0}


@pytest.mark.parametrize(
    "name, text, said",
    [
        ("usage.json", '{"x": 1}', "usage.json is not a usage tally vipe wrote"),  # a person's file of that name
        ("usage.json", '{"prompt_tokens": "x", "completion_tokens": 1}', "is not a usage tally vipe wrote"),
        ("usage.json", "[1, 2]", "is not a usage tally vipe wrote"),
        ("failed.jsonl", "[1]\n", "failed.jsonl is not a failures journal vipe wrote"),
        ("failed.jsonl", '{"song_id": ["a"]}\n', "failed.jsonl is not a failures journal vipe wrote"),
        ("partial/s0.json", '{"0-16": 5}', "s0.json is not an unfinished song vipe wrote"),
        ("partial/s0.json", '{"0-16": ["only one", ""]}', "s0.json is not an unfinished song vipe wrote"),
        ("s9.json", "hi", "s9.json"),  # (not a song it labelled: it would be counted as one, and build refuse it)
    ],
)
def test_a_label_folder_holding_what_label_did_not_write_is_refused_before_any_request(
    tmp_path, capsys, name, text, said
):
    write_jsonl(tmp_path / "songs.jsonl", make_songs(2, lines_per_song=4))
    (out := tmp_path / "person").mkdir()
    (out / "usage.json").write_text(json.dumps(USAGE))  # (a tally of its own, where another file is damaged)
    (out / name).parent.mkdir(exist_ok=True)
    (out / name).write_text(text)
    with ChatServer(standin_teacher) as server:
        argv = ["label", str(tmp_path / "songs.jsonl"), "--out", str(out), "--base-url", server.url, "--api-key", "k"]
        assert said in refused([*argv, "--quiet"], capsys)
    assert not server.hits and (out / name).read_text() == text
    assert not (out / ".vipe.lock").exists()
