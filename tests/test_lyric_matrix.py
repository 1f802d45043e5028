"""The lyric matrix's parts (benchmarks/lyrics.py): the fresh songs it makes, the measure it judges by, and the
docs' tables, which must be the ones its results make."""

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchmarks import lyrics, real_songs
from benchmarks.lyric_table import BEGIN, END, generated_cell, results, sung_cell, tables
from musicvid.lyrics.transcript import Line
from tests.fixtures.fresh_songs import LONG_SECONDS, fresh_song, judged_timing, moved_words

ROOT = Path(__file__).resolve().parents[1]
needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")


def test_the_docs_lyric_tables_are_the_ones_the_results_make():
    page = (ROOT / "docs" / "lyrics.md").read_text()
    shown = page.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == tables(results(ROOT / "benchmarks" / "results")), "python -m benchmarks.lyrics --table --docs"


def test_a_line_counts_where_a_scene_starts_within_half_a_second_of_it_and_no_scene_starts_unsung():
    sung = [(3.0, 6.0, "the morning sun"), (30.0, 33.0, "the quiet town")]
    lines = [Line(2.45, 6.0, "the morning sun"), Line(17.0, 18.0, "an invention"), Line(30.4, 33.0, "the quiet town")]
    judged = judged_timing(lines, 40.0, sung)
    assert judged["errors"] == [None, 0.4] and judged["within"] == 1  # 0.55 s early: not where it is sung
    assert judged["unsung_scenes"] == [2.45, 17.0]  # an early start, and an invention


def test_a_scene_opening_with_the_last_word_of_the_line_before_counts_as_moved():
    sung = [(3.0, 6.0, "over the hills"), (7.0, 10.0, "a burning candle"), (20.0, 23.0, "hills of home")]
    moved = [Line(3.0, 6.5, "over the"), Line(6.9, 10.0, "hills A burning candle"), Line(20.0, 23.0, "hills of home")]
    assert moved_words(moved, 30.0, sung) == 1  # (the third opens its own line with that word: not moved)
    kept = [Line(3.0, 6.5, "Over the hills,"), Line(7.0, 10.0, "a burning candle"), Line(20.0, 23.0, "hills of home")]
    assert moved_words(kept, 30.0, sung) == 0


@needs_espeak
def test_fresh_songs_are_drawn_from_their_seed_in_every_hard_kind(tmp_path):
    again = fresh_song("gaps", 3, tmp_path)
    assert again == fresh_song("gaps", 3, tmp_path) and again != fresh_song("gaps", 4, tmp_path)
    gaps = [b[0] - a[1] for a, b in zip(again.sung, again.sung[1:])]
    assert sorted(round(g) for g in gaps)[-3:] == [10, 17, 25]
    intro = fresh_song("intro", 3, tmp_path)
    assert intro.sung[0][0] == 20.0 and (intro.singer, intro.bpm) != (again.singer, again.bpm)
    refrain = fresh_song("refrain", 3, tmp_path)
    assert [text for *_, text in refrain.sung].count(refrain.sung[-1][2]) == 3
    assert fresh_song("loud", 3, tmp_path).voice_level < 0.5
    long = fresh_song("long", 3, tmp_path)
    assert long.seconds == LONG_SECONDS and long.sung[-1][1] <= LONG_SECONDS - 3


@pytest.mark.parametrize("out_dir, docs", [("empty", "lyrics.md"), ("results", "missing.md"), ("results", "plain.md")])
def test_the_tables_are_refused_from_no_results_or_into_a_page_without_their_markers(out_dir, docs, tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "plain.md").write_text("# a page of my own\n")
    (tmp_path / "lyrics.md").write_text((ROOT / "docs" / "lyrics.md").read_text())
    folder = {"empty": tmp_path / "empty", "results": ROOT / "benchmarks" / "results"}[out_dir]
    with pytest.raises(SystemExit) as refused:
        lyrics.main(["--table", "--out-dir", str(folder), "--docs", str(tmp_path / docs)])
    assert refused.value.code == 2 and capsys.readouterr().err.count("error:") == 1
    assert (tmp_path / "lyrics.md").read_text() == (ROOT / "docs" / "lyrics.md").read_text()
    assert (tmp_path / "plain.md").read_text() == "# a page of my own\n"


def test_the_matrix_refuses_no_song_and_songs_not_installed_but_needs_only_those_asked_for(tmp_path, monkeypatch):
    monkeypatch.setattr(lyrics, "run_matrix", lambda args, folder: {})
    (tmp_path / "song.ogg").write_bytes(b"")
    monkeypatch.setitem(lyrics.SUNG, "chaos_god", tmp_path)  # installed
    monkeypatch.setitem(lyrics.SUNG, "armygeddon", tmp_path / "gone")  # not
    for argv in (["--seeds", "--real"], ["--seeds", "--real", "chaos_god", "armygeddon"]):
        with pytest.raises(SystemExit) as refused:
            lyrics.main(argv)
        assert refused.value.code == 2
    assert lyrics.main(["--seeds", "--real", "chaos_god"]) == 0
    for argv in (["--songs", "bogus"], ["--backends", "bogus"], ["--songs", "armygeddon"]):
        with pytest.raises(SystemExit) as refused:
            real_songs.main(argv)
        assert refused.value.code == 2


def test_a_song_where_nothing_was_heard_is_not_measured_rather_than_passed(monkeypatch, capsys):
    audio = SimpleNamespace(info=SimpleNamespace(duration=60.0), samples=None)
    monkeypatch.setattr(lyrics, "load_audio", lambda path: audio)
    monkeypatch.setattr(lyrics, "hear", lambda asr, samples, quiet: (None, None, []))  # no segment heard
    monkeypatch.setattr(lyrics, "sung_lines", lambda heard, silero, duration: [])
    [row] = lyrics.real(None, "chaos_god", Path("chaos_god.wav"), instrumental=False)
    assert (row["heard"], row["passed"]) == (0, None) and sung_cell(row) == "0 of 0, nothing heard: not measured"
    assert lyrics.verdict({1.0: [{**row, "backend": "openai-whisper", "sharpness": 1.0}]}) == 0
    assert "not measured (nothing heard): chaos_god openai-whisper" in capsys.readouterr().err


def test_the_peer_is_judged_as_musicvid_is_by_each_line_start_and_shown_beside_it(monkeypatch):
    sung = [(3.0, 6.0, "the morning sun"), (10.0, 13.0, "the quiet town"), (20.0, 23.0, "an empty road")]
    aligned = [[3.4, 4.0], []]  # the second line's words untimed, the third line's segment missing
    monkeypatch.setattr(lyrics, "peer_aligned", lambda asr, samples, texts, language, published: aligned)
    peer = lyrics.peer_timing(None, None, sung, "tiny.en")
    assert (peer["errors"], peer["within"]) == ([0.4, None, None], 1)
    ours = {**judged_timing([Line(s, e, t) for s, e, t in sung], 30.0, sung), "moved_words": 0}
    assert generated_cell([ours]) == "3/3, ≤ 0.00 s"  # (results from before --peer)
    assert generated_cell([{**ours, "peer": peer}] * 2) == "6/6, ≤ 0.00 s; stable-ts 2/6, ≤ 0.40 s"


def test_the_peer_is_refused_before_any_song_where_stable_ts_is_not_installed(monkeypatch, capsys):
    monkeypatch.setattr(lyrics, "run_matrix", lambda args, folder: pytest.fail("a song was measured"))
    monkeypatch.setattr(lyrics.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(SystemExit) as refused:
        lyrics.main(["--seeds", "1", "--real", "--peer"])
    assert refused.value.code == 2 and "stable-ts" in capsys.readouterr().err
