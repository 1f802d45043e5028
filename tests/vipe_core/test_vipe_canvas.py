"""build: LyricCanvas rows, the split by song, and the join with published elaborations."""

from __future__ import annotations

import pandas as pd
import pytest

from vipe_core.canvas import COLUMNS, examples, read_canvas, rows_from_published, run_build
from vipe_core.cli import main
from vipe_core.context import lyric_context
from vipe_core.errors import VipeError
from vipe_core.records import write_jsonl

from .helpers import make_songs, teacher_elaboration, write_labelled


def test_build_writes_one_row_per_line_and_holds_out_ten_percent_of_songs(tmp_path):
    songs = make_songs(20, lines_per_song=16)
    write_labelled(tmp_path / "canvas", songs)
    (tmp_path / "canvas" / "usage.json").write_text('{"requests": 3}')  # bookkeeping is not a song
    summary = run_build(tmp_path / "lc.parquet", canvas_dir=tmp_path / "canvas")
    frame = read_canvas(tmp_path / "lc.parquet")
    assert list(frame.columns) == COLUMNS
    assert len(frame) == 320 and summary.examples == 320
    assert (summary.train_songs, summary.validation_songs) == (18, 2)
    assert frame.groupby("song_id")["split"].nunique().max() == 1  # no song on both sides
    row = frame[(frame.song_id == songs[3].song_id) & (frame.line_index == 5)].iloc[0]
    assert row.lyric == songs[3].lines[5] and row.elaboration == teacher_elaboration(songs[3].lines[5])
    assert (row.title, row.artist) == (songs[3].title, songs[3].artist)


def test_the_split_is_reproducible_and_follows_the_seed(tmp_path):
    write_labelled(tmp_path / "canvas", make_songs(30, lines_per_song=2))

    def held_out(seed):
        run_build(tmp_path / "lc.parquet", canvas_dir=tmp_path / "canvas", seed=seed)
        frame = read_canvas(tmp_path / "lc.parquet")
        return set(frame[frame.split == "validation"].song_id)

    assert held_out(0) == held_out(0)
    assert held_out(0) != held_out(1)
    assert len(held_out(0)) == 3


@pytest.mark.parametrize("context_size", [0, 1, 3, 5, 7])
def test_examples_use_the_inference_formatter(canvas_parquet, context_size):
    frame = read_canvas(canvas_parquet)
    items = examples(frame, "train", context_size)
    song = frame[frame.song_id == items[0]["song_id"]].sort_values("line_index")
    lines = song.lyric.tolist()
    for item in items[:16]:
        assert item["context"] == lyric_context(lines, item["line_index"], context_size)
    assert {i["song_id"] for i in items}.isdisjoint(set(frame[frame.split == "validation"].song_id))


def test_published_elaborations_join_with_own_lyrics_by_position_or_by_text(tmp_path):
    songs = make_songs(4, lines_per_song=5)
    write_jsonl(tmp_path / "lyrics.jsonl", songs)
    by_position = pd.DataFrame(
        [
            {"sid": s.song_id, "line_index": i, "prompt": f"published {s.song_id}-{i}"}
            for s in songs[:3]
            for i in range(4)  # the last line of each song has no published elaboration
        ]
    )
    by_position.loc[[1, 6], "prompt"] = ["   ", "\t"]  # blank: context, as a missing one is, and no example
    by_position.to_csv(tmp_path / "published.csv", index=False)
    summary = run_build(
        tmp_path / "lc.parquet",
        published=tmp_path / "published.csv",
        lyrics=tmp_path / "lyrics.jsonl",
        columns={"elaboration": "prompt", "song_id": "sid"},
    )
    frame = read_canvas(tmp_path / "lc.parquet")
    assert summary.songs == 3 and summary.rows == 15 and summary.examples == 10
    last = frame[(frame.song_id == songs[0].song_id) & (frame.line_index == 4)].iloc[0]
    assert last.lyric == songs[0].lines[4] and pd.isna(last.elaboration)  # context only
    assert len(examples(frame, "train", 7)) + len(examples(frame, "validation", 7)) == 10

    by_text = pd.DataFrame([{"lyric": songs[3].lines[1].upper() + "!", "elaboration": "shouted"}])
    by_text.to_json(tmp_path / "published.jsonl", orient="records", lines=True)
    rows = rows_from_published(tmp_path / "published.jsonl", tmp_path / "lyrics.jsonl", None)  # (one song: no build)
    assert [r.lyric for r in rows if r.elaboration is not None] == [songs[3].lines[1]]


@pytest.mark.parametrize("fraction", [0, 1])
def test_a_validation_fraction_that_holds_out_nothing_or_everything_is_refused(fraction, tmp_path):
    write_labelled(tmp_path / "canvas", make_songs(4, lines_per_song=3))
    with pytest.raises(VipeError, match=rf"^--validation-fraction must be above 0 and below 1, not {fraction}: `vipe"):
        run_build(tmp_path / "lc.parquet", canvas_dir=tmp_path / "canvas", validation_fraction=fraction)
    assert not (tmp_path / "lc.parquet").exists()


def test_own_labels_win_over_published_ones(tmp_path):
    songs = make_songs(2, lines_per_song=3)
    write_labelled(tmp_path / "canvas", songs[:1])
    write_jsonl(tmp_path / "lyrics.jsonl", songs)
    pd.DataFrame([{"song_id": s.song_id, "line_index": 0, "elaboration": "published"} for s in songs]).to_parquet(
        tmp_path / "published.parquet"
    )
    run_build(
        tmp_path / "lc.parquet",
        canvas_dir=tmp_path / "canvas",
        published=tmp_path / "published.parquet",
        lyrics=tmp_path / "lyrics.jsonl",
    )
    frame = read_canvas(tmp_path / "lc.parquet").set_index(["song_id", "line_index"])
    assert frame.loc[(songs[0].song_id, 0), "elaboration"] == teacher_elaboration(songs[0].lines[0])
    assert frame.loc[(songs[1].song_id, 0), "elaboration"] == "published"


def test_build_errors_are_one_line(tmp_path, capsys):
    assert main(["build", str(tmp_path / "missing")]) == 2
    assert main(["build"]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["build", str(tmp_path / "empty")]) == 2
    (tmp_path / "not.parquet").write_text("hello")
    with pytest.raises(Exception, match="not a parquet file"):
        read_canvas(tmp_path / "not.parquet")
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "Traceback" not in err
