"""`musicvid batch` running: a failed song isolated, the models loaded once for the whole batch, a rerun that
skips what is done, a killed batch (and a Ray worker that dies) resumed to the same videos, the rows of one song
made once and waiting for its work directory, and a pipe in the playlist reported, not waited on."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from musicvid.batch import command as batch
from musicvid.batch.report import Result, table
from tests.helpers import make_tone, run_batch


def test_ray_without_ray_says_how_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if it were not installed
    (tmp_path / "a.mp3").write_bytes(b"x")
    assert run_batch(tmp_path, "-o", tmp_path / "out", "--engine", "ray") == 2
    assert "pip install" in capsys.readouterr().err


@pytest.mark.slow
def test_batch_isolates_failures_loads_models_once_and_resumes(tmp_path, monkeypatch):
    songs = tmp_path / "songs"
    (songs / "one").mkdir(parents=True)
    (songs / "two").mkdir()
    make_tone(songs / "one" / "song.wav", 4)
    (songs / "broken.wav").write_bytes(b"not audio" * 50)
    make_tone(songs / "two" / "song.wav", 4)
    (songs / "list.m3u").write_text("one/song.wav\nbroken.wav\ntwo/song.wav\n")
    from musicvid.models import registry as registry_module

    registries = []
    real_registry = registry_module.registry_of

    def counting_registry(choice, keep_loaded=False):
        registries.append(real_registry(choice, keep_loaded=keep_loaded))
        return registries[-1]

    monkeypatch.setattr(registry_module, "registry_of", counting_registry)
    out, work = tmp_path / "out", tmp_path / "work"
    argv = [songs / "list.m3u", "-o", out, "--models", "tiny", "--fps", "2", "--workdir", work, "-q"]
    assert run_batch(*argv) == 1

    report = json.loads((out / "report.json").read_text())["songs"]
    assert [s["status"] for s in report] == ["done", "failed", "done"]
    assert "broken.wav" in report[1]["error"] and report[0]["output"] != report[2]["output"]
    assert all(batch.Path(report[i]["output"]).stat().st_size > 0 for i in (0, 2))
    assert report[0]["duration"] == pytest.approx(4.0, abs=0.1)
    assert len(registries) == 1 and max(registries[0].loads.values()) == 1
    assert len([p for p in work.iterdir() if p.name.startswith("song-")]) == 2  # one per song.wav

    # A rerun after a kill: the missing video is rendered again, the complete one skipped.
    batch.Path(report[2]["output"]).unlink()
    assert run_batch(*argv) == 1
    report = json.loads((out / "report.json").read_text())["songs"]
    assert [s["status"] for s in report] == ["skipped", "failed", "done"]


def assert_same_pictures(work_a: Path, work_b: Path) -> None:
    """The same pictures, up to one rounding step: a Ray actor computes with the one CPU it asks for,
    and a float reduced over another number of threads may round the other way."""
    names = sorted(p.relative_to(work_a) for p in work_a.glob("*/*/*.png"))
    assert names and names == sorted(p.relative_to(work_b) for p in work_b.glob("*/*/*.png"))
    for name in names:
        a, b = (np.asarray(Image.open(root / name), dtype=np.int16) for root in (work_a, work_b))
        assert np.abs(a - b).max() <= 1, name


@pytest.mark.slow
@pytest.mark.ci
def test_ray_engine_gives_the_same_videos_and_report_and_retries_a_worker_that_dies(tmp_path):
    ray = pytest.importorskip("ray")
    songs = tmp_path / "songs"
    songs.mkdir()
    make_tone(songs / "Band - First.wav", 4)
    (songs / "Band - Second.mp3").write_bytes(b"broken" * 100)
    make_tone(songs / "Band - Third.wav", 4)
    lyrics = tmp_path / "lyrics.lrc"  # three scenes, so that each song has several pictures to draw
    lyrics.write_text("[00:00.00]one\n[00:01.50]two\n[00:03.00]three\n")
    common = ["--models", "tiny", "--fps", "2", "--batch-size", "1", "-q", "--lyrics", lyrics]
    assert run_batch(songs, "-o", tmp_path / "local", "--workdir", tmp_path / "wl", *common) == 1
    groups = json.loads((tmp_path / "wl" / "Band - Third" / "timings.json").read_text())["pictures_drawn"]
    # The actor's process kills itself (tests/killer.py) as it is about to save a picture of the third
    # song, after more than half of them are saved; its restarted successor resumes that song and
    # finishes it before reaching that count (one picture per group).
    kill_at = groups // 2 + 2
    kill = {"MUSICVID_TEST_KILL": f"*/Band - Third/*.png {kill_at}", "PYTHONPATH": str(Path(__file__).parents[1])}
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": kill, "worker_process_setup_hook": "tests.killer.from_env"},
    )
    try:
        remote_run = run_batch(songs, "-o", tmp_path / "ray", "--workdir", tmp_path / "wr", "--engine", "ray", *common)
    finally:
        ray.shutdown()
    assert remote_run == 1
    local = json.loads((tmp_path / "local" / "report.json").read_text())["songs"]
    remote = json.loads((tmp_path / "ray" / "report.json").read_text())["songs"]

    def outcome(songs):
        return [(s["song"], s["status"], batch.Path(s["output"]).name, s["duration"], s["error"]) for s in songs]

    assert outcome(remote) == outcome(local)
    assert [s["status"] for s in remote] == ["done", "failed", "done"]
    retried = json.loads((tmp_path / "wr" / "Band - Third" / "timings.json").read_text())
    assert retried["pictures_drawn"] == groups - (kill_at - 1)  # the retry drew only what the dead worker had not
    assert_same_pictures(tmp_path / "wl", tmp_path / "wr")


@pytest.mark.slow
@pytest.mark.ci
def test_a_killed_batch_reruns_only_what_was_missing(tmp_path):
    import subprocess

    songs = tmp_path / "songs"
    songs.mkdir()
    # three timed lines each, so that the scenes (at frames 0, 3 and 6) do not depend on what Whisper hears
    lyrics = songs / "lyrics.lrc"
    lyrics.write_text("[00:00.00]one\n[00:01.50]two\n[00:03.00]three\n")
    playlist = songs / "songs.csv"
    playlist.write_text("path,lyrics\n" + "".join(f"{make_tone(songs / f'{n}.wav', 4)},{lyrics}\n" for n in "abc"))
    out, work = tmp_path / "out", tmp_path / "work"
    command = [
        "batch",
        str(playlist),
        "-o",
        str(out),
        "--workdir",
        str(work),
        "--models",
        "tiny",
        "-q",
        "--fps",
        "2",
        "--batch-size",
        "1",
    ]
    # each song is 8 frames at 2 fps, 7 pictures: song a is finished, and the batch killed as it saves
    # the 4th picture of song b (tests/killer.py)
    killed = subprocess.run(
        [sys.executable, "-m", "tests.killer", f"{work}/b/*.png", "4", "--", *command],
        capture_output=True,
        cwd=Path(__file__).parents[1],
    )
    assert killed.returncode == -9, killed.stderr.decode()
    report = json.loads((out / "report.json").read_text())["songs"]
    assert [s["status"] for s in report] == ["done"]
    assert (out / "a.mp4").exists() and not (out / "b.mp4").exists()

    rerun = subprocess.run([sys.executable, "-m", "musicvid", *command], capture_output=True)
    assert rerun.returncode == 0, rerun.stderr.decode()
    report = json.loads((out / "report.json").read_text())["songs"]
    assert [s["status"] for s in report] == ["skipped", "done", "done"]
    drawn = {name: json.loads((work / name / "timings.json").read_text())["pictures_drawn"] for name in "bc"}
    assert drawn["b"] == drawn["c"] - 3  # song b only finished what the kill left undone


@pytest.mark.ci  # (the suite's 6 minutes: a second of its area, or a benchmark's quick run)
@pytest.mark.slow
def test_a_repeated_row_is_made_once_and_rows_of_a_song_wait_for_its_work_directory(
    tmp_path, monkeypatch, capsys, caplog
):
    import threading

    from musicvid.core.files import file_sha256
    from musicvid.core.workdir import Workdir

    monkeypatch.chdir(tmp_path)  # where the songs' work directories are made: musicvid-work/
    song = make_tone(tmp_path / "a.wav", 2)
    (tmp_path / "s.csv").write_text("path,preview\na.wav,\na.wav,no\na.wav,yes\n")
    argv = [tmp_path / "s.csv", "-o", tmp_path / "out", "--models", "tiny", "--fps", "2", "-q"]
    # another run (a Ray worker on another row of the song) holds the song's work directory a while
    holding, release = threading.Event(), threading.Event()

    def other_run():
        with Workdir.for_song(song, file_sha256(song)).held():
            holding.set()
            release.wait(30)

    other = threading.Thread(target=other_run)
    other.start()
    holding.wait(30)
    threading.Timer(2, release.set).start()
    try:
        assert run_batch(*argv) == 0
    finally:
        release.set()
        other.join()
    assert "waiting for another run to finish with the work directory" in caplog.text
    assert "same as song 1" in capsys.readouterr().out  # in the table
    report = json.loads((tmp_path / "out" / "report.json").read_text())["songs"]
    assert [(s["status"], Path(s["output"]).name, s["same_as"]) for s in report] == [
        ("done", "a.mp4", None),
        ("repeat", "a.mp4", 1),
        ("done", "a.preview.mp4", None),
    ]
    assert len(list((tmp_path / "musicvid-work").iterdir())) == 1  # the rows of one song share its work
    assert run_batch(*argv) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())["songs"]
    assert [s["status"] for s in report] == ["skipped", "repeat", "skipped"]


@pytest.mark.slow
def test_csv_booleans_and_previews_and_a_pipe_in_the_playlist(tmp_path):
    import os

    songs = tmp_path / "songs"
    songs.mkdir()
    make_tone(songs / "a.wav", 3)
    os.mkfifo(songs / "pipe.wav")
    out = tmp_path / "out"
    argv = [songs / "list.csv", "-o", out, "--models", "tiny", "--fps", "2", "--workdir", tmp_path / "work", "-q"]
    (songs / "list.csv").write_text("path,preview,align\na.wav,yes,yes\npipe.wav,,\n")
    assert run_batch(*argv) == 1  # the pipe is reported, not waited on
    report = json.loads((out / "report.json").read_text())["songs"]
    assert [(s["status"], Path(s["output"]).name) for s in report] == [
        ("done", "a.preview.mp4"),
        ("failed", "pipe.mp4"),
    ]
    assert "not a regular file" in report[1]["error"]
    # the full video is not the preview: a later run without preview makes it
    (songs / "list.csv").write_text("path,preview,align\na.wav,no,yes\n")
    assert run_batch(*argv) == 0
    assert [s["status"] for s in json.loads((out / "report.json").read_text())["songs"]] == ["done"]
    assert (out / "a.mp4").exists() and (out / "a.preview.mp4").exists()


def test_the_table_says_a_quick_rows_time_in_milliseconds_and_none_for_a_row_not_rendered():
    """A render that found everything made takes milliseconds, not "0.0"; a skipped row and a repeat took no render
    of their own; a failed row made no output, whatever name it was planned under."""
    rows = [Result("a.wav", "done", "a.mp4", 2.0, seconds=12.34), Result("b.wav", "done", "b.mp4", 2.0, seconds=0.004)]
    rows += [Result("c.wav", "skipped", "c.mp4", 2.0), Result("d.wav", "repeat", "d.mp4", 2.0, same_as=2)]
    rows += [Result("C:\\e.wav", "failed", "C:\\e.mp4", seconds=0.5, error="no such file")]
    assert table(rows).split("\n") == [
        "status   time    duration  song      output  note",
        "done     12.3 s  2.0       a.wav     a.mp4   ",
        "done     4 ms    2.0       b.wav     b.mp4   ",
        "skipped          2.0       c.wav     c.mp4   ",
        "repeat           2.0       d.wav     d.mp4   same as song 2",
        "failed   0.5 s             C:\\e.wav          no such file",
    ]
