"""The JamendoLyrics benchmark's gate (benchmarks/jamendo.py) and its measures (tests/fixtures/jamendo.py), on rows
and annotations made by hand: each threshold it misses is named, and nothing where all hold."""

from pathlib import Path

import pytest

from benchmarks import jamendo
from benchmarks.jamendo import failures
from tests.fixtures.jamendo import Song, found_lines, scored

SONG = Song(
    "song",
    Path("song.mp3"),
    "fr",
    ["un deux trois", "quatre cinq"],
    [(1.0, "un deux trois"), (5.0, "quatre, cinq!")],
    [1.0, 1.5, 2.0, 5.0, 5.6],
)


def row(aligner: str, song: str, l05: int, w03: int, timed: int = 10) -> dict:
    scores = {"lines": 10, "words": 10, "timed": timed, "l05": l05, "l1": l05, "w03": w03}
    return {"backend": "faster-whisper", "mode": "known", "aligner": aligner, "song": song, **scores}


def test_line_and_word_starts_are_scored_against_the_annotation():
    found = scored(SONG, [1.2, 1.6, 2.0, 4.1])  # the last word not timed; the second line 0.9 s early
    assert found == {"lines": 2, "words": 5, "timed": 4, "l05": 1, "l1": 2, "w03": 3, "word_mae": 0.3}


def test_a_recognized_line_is_found_near_its_start_with_half_its_words():
    assert found_lines(SONG.lines, [(1.8, "Un deux"), (5.5, "six sept")]) == 1  # none of the second's words
    assert found_lines(SONG.lines, [(2.1, "un deux trois"), (4.2, "quatre cinq")]) == 1  # the first starts 1.1 s late
    # the annotation writes some lyrics without the accents Whisper writes, or with them where it does not
    spanish = [(1.0, "cancion del corazon"), (4.0, "Über Straße")]
    assert found_lines(spanish, [(1.2, "Canción del corazón."), (4.1, "uber strasse")]) == 2


def test_the_gate_names_each_threshold_missed_and_nothing_where_all_hold():
    good = [row("musicvid", "a", 10, 9), row("stable-ts", "a", 9, 9), row("musicvid", "b", 10, 8)]
    assert failures([*good, row("stable-ts", "b", 10, 8)]) == []
    missed = failures([*good, row("stable-ts", "b", 10, 9), row("musicvid", "c", 6, 5, 9), row("stable-ts", "c", 8, 5)])
    assert missed == [
        "faster-whisper: fewer than 90% of all lines start within 0.5 s",
        "faster-whisper: fewer than 95% of all lines start within 1 s",
        "faster-whisper, b: 8 word starts within 0.3 s, stable-ts 9",
        "faster-whisper, c: 1 words not timed",
        "faster-whisper, c: 6 of 10 lines within 0.5 s",
    ]


def test_a_songs_csv_listing_no_song_is_refused_before_whisper_is_loaded(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(jamendo, "load_whisper_base", lambda *given: pytest.fail("loaded"))
    (tmp_path / "songs.csv").write_text("Filepath,Language\n")
    assert jamendo.main(["--songs", str(tmp_path), "--out", str(tmp_path / "out.json")]) == 2
    assert "lists none" in capsys.readouterr().err and not (tmp_path / "out.json").exists()


def test_a_perturbed_variant_moves_each_annotated_time_with_its_audio(tmp_path):
    import subprocess

    from benchmarks.jamendo_perturbed import VARIANTS, make
    from musicvid.core.audio import load_audio
    from musicvid.core.ffmpeg import exe as ffmpeg_exe

    (songs := tmp_path / "songs").mkdir()
    tone = ["-f", "lavfi", "-i", "sine=frequency=440:duration=4", "-ac", "2"]
    subprocess.run([ffmpeg_exe(), "-v", "error", *tone, str(songs / "a b.mp3")], check=True)
    (songs / "songs.csv").write_text("URL,Filepath,Language\nx,a b.mp3,French\n")
    (songs / "a b.txt").write_text("un deux\n")
    (songs / "a b.lines.csv").write_text("start_time,end_time,lyrics_line\n1.0,2.0,un deux\n")
    (songs / "a b.words.csv").write_text("word_start,word_end,line_end\n1.0,1.5,nan\n1.5,2.0,2.0\n")
    for name, length, start in (("tempo1.08", 4 / 1.08, 1 / 1.08), ("noise_leadin", 7.0, 4.0), ("pitch+2", 4.0, 1.0)):
        make(VARIANTS[name], songs, made := tmp_path / name)
        assert abs(load_audio(made / "a b.mp3").info.duration - length) < 0.1, name
        lines = (made / "a b.lines.csv").read_text().splitlines()
        assert float(lines[1].split(",")[0]) == pytest.approx(start) and lines[1].endswith(",un deux")
        assert (made / "a b.words.csv").read_text().splitlines()[1].endswith(",nan")
        assert (made / "a b.txt").read_text() == "un deux\n"
