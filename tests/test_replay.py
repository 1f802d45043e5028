"""benchmarks/replay.py: a hearing recorded once replays to what the song heard live gives (a generated song judged
as the lyric matrix judges it, and as JamendoLyrics songs are judged), and against a commit's rules."""

import json
import shutil
import subprocess

import pytest

from benchmarks.replay import ROOT, changed, judged, main, replayed, summary
from musicvid.core.audio import load_audio
from musicvid.lyrics.transcribe import transcribe
from tests.fixtures.fresh_songs import fresh_song, judged_timing, lyric_scenes, timing_passed
from tests.fixtures.jamendo import found_lines
from tests.fixtures.whisper_ct2 import load_tiny_en

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed"),
]
SONG = ("refrain", 7)


@pytest.fixture(scope="module")
def hearings(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hearings")
    main(["record", str(folder), "--seeds", str(SONG[1]), "--kinds", SONG[0]])
    return folder


def test_a_replayed_hearing_is_judged_as_the_song_heard_live(hearings, tmp_path):
    song = fresh_song(*SONG, tmp_path)
    audio = load_audio(song.make(tmp_path))
    lines = transcribe(load_tiny_en("faster-whisper", tmp_path), audio.samples, "", quiet=True).lines
    live = judged_timing(lines, audio.info.duration, song.sung)
    [row] = replayed(hearings)
    assert row == {"song": song.name, **live, "passed": timing_passed(live)}

    # judged as a JamendoLyrics song: its lines by their starts and texts
    record = json.loads((hearings / f"{song.name}.json").read_text())
    del record["sung"]
    record["lines"] = [(start, text) for start, _, text in song.sung]
    scenes = [(s.start, s.text) for s in lyric_scenes(lines, audio.info.duration)]
    found = found_lines(record["lines"], scenes)
    starts = [round(start, 2) for start, _ in scenes]
    assert judged(record) == {"song": song.name, "lines": len(song.sung), "found": found, "starts": starts}
    assert judged(record)["found"] > 0

    # a hearing of nothing finds nothing
    record["heard"]["lines"] = []
    assert judged(record)["found"] == 0


def test_against_a_commit_the_songs_whose_result_differs_are_named(hearings, capsys):
    if subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True).returncode:
        pytest.skip("not a git checkout: no commit to replay against")
    main(["replay", str(hearings), "--base", "HEAD"])
    out = capsys.readouterr().out.splitlines()
    assert out[-3].startswith("this tree: generated ") and out[-2] == out[-3].replace("this tree", "HEAD")
    assert out[-1] == "no song's result differs"


def test_the_summary_counts_both_kinds_of_song():
    rows = [
        {"song": "a", "lines": 3, "within": 3, "errors": [0.1, 0.0, -0.2], "passed": True},
        {"song": "b", "lines": 4, "within": 2, "errors": [0.1, None, 0.9, 0.0], "passed": False},
        {"song": "c", "lines": 10, "found": 7, "starts": [1.0, 5.5]},
    ]
    assert summary(rows) == "generated 1/2 passed, lines within 0.5 s 5/7, JamendoLyrics lines found 7/10"
    base = [rows[0], {**rows[1], "errors": [0.1, 0.2, 0.1, 0.0], "passed": True}, {**rows[2], "starts": [1.0, 5.2]}]
    assert changed(rows, base) == [
        "b: passed True -> False; line 2 0.2 -> None, line 3 0.1 -> 0.9",
        "c: found 7 -> 7; starts -[5.2] +[5.5]",
    ]


def test_a_damaged_hearing_or_a_commit_that_is_none_is_said_in_one_sentence(tmp_path):
    (tmp_path / "refrain-1.json").write_text('{"song": "refrain-1", "duration": 9.0}')
    with pytest.raises(SystemExit, match=r"refrain-1.json is no hearing this records \(KeyError: 'voice'\)"):
        main(["replay", str(tmp_path)])
    (tmp_path / "refrain-1.json").unlink()
    with pytest.raises(SystemExit, match="no rules of no-such-commit to replay through: "):
        main(["replay", str(tmp_path), "--base", "no-such-commit"])
