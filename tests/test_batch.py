"""`musicvid batch`: playlist readers, failure isolation, one model load per batch, resume by skipping."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from musicvid import cli
from musicvid.batch import command as batch
from musicvid.batch.playlist import Job
from musicvid.core.errors import UserError
from musicvid.models.choose import choose_models
from musicvid.settings.model_choice import ModelChoice
from tests.helpers import make_tone, valid_board


def run_batch(*argv):
    """`musicvid batch ...`, in this process."""
    return cli.main(["batch", *(str(a) for a in argv)])


def test_m3u_extinf_relative_comments_bom_crlf(tmp_path):
    (tmp_path / "sub").mkdir()
    text = "\ufeff#EXTM3U\r\n\r\n# a comment\r\n#EXTINF:123,Adele - Skyfall\r\nsub/a.mp3\r\n\r\n/abs/b.mp3\r\n"
    (tmp_path / "list.m3u8").write_bytes(text.encode("utf-8"))
    entries = batch.read_playlist(tmp_path / "list.m3u8")
    assert [e.path for e in entries] == [tmp_path / "sub" / "a.mp3", batch.Path("/abs/b.mp3")]
    assert (entries[0].title, entries[0].artist) == ("Skyfall", "Adele")
    assert (entries[1].title, entries[1].artist) == (None, None)


def test_folder_sorted_audio_only(tmp_path):
    for name in ("b.mp3", "a.wav", "notes.txt", "c.FLAC"):
        (tmp_path / name).write_bytes(b"x")
    assert [e.path.name for e in batch.read_playlist(tmp_path)] == ["a.wav", "b.mp3", "c.FLAC"]


def test_csv_with_overrides(tmp_path):
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.render import RenderSettings
    from musicvid.settings.song import SongRequest

    (tmp_path / "s.csv").write_text(
        "path,title,artist,fps,captions,align,size,lyrics\r\nx/a.mp3,Song,Band,2,karaoke,no,128x64,words/a.lrc\r\nb.mp3,,,,,,,\r\n"
    )
    entries = batch.read_playlist(tmp_path / "s.csv")
    assert entries[0].path == tmp_path / "x" / "a.mp3" and entries[0].title == "Song"
    base = SongRequest(song=Path("-")), {}, PRESETS["default"]  # no options given; the default models
    request, settings = batch.song_settings(entries[0], *base, tmp_path, "row 1")
    assert (settings.fps, settings.captions, settings.align, settings.width, settings.height) == (
        2.0,
        "karaoke",
        False,
        128,
        64,
    )
    assert (request.song, request.title, request.artist) == (tmp_path / "x" / "a.mp3", "Song", "Band")
    assert request.lyrics_file == tmp_path / "words" / "a.lrc"  # beside the CSV, like its songs
    assert batch.song_settings(entries[1], *base, tmp_path, "row 2")[1] == RenderSettings()


@pytest.mark.parametrize(
    "name, text",
    [("bad.csv", "song,title\nx.mp3,T\n"), ("e.m3u", "#EXTM3U\n"), ("list.txt", "a.mp3\n")],
)
def test_unusable_playlist_exits_2(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    with pytest.raises(UserError):
        batch.read_playlist(tmp_path / name)
    assert run_batch(tmp_path / name, "-o", tmp_path / "out", "--models", "tiny") == 2
    assert run_batch(tmp_path / "missing.m3u", "-o", tmp_path / "out", "--models", "tiny") == 2


def planned(playlist: Path, *options) -> list[Job]:
    """The jobs `musicvid batch PLAYLIST -o out --models tiny OPTIONS` would run, planned, not run."""
    argv = ["batch", playlist, "-o", playlist.parent / "out", "--models", "tiny", *options]
    args = cli.build_parser().parse_args([str(a) for a in argv])
    return batch.plan(args, batch.read_playlist(args.playlist), ModelChoice(**ModelChoice.given(args)))


def test_every_row_gets_its_own_output_and_a_repeated_row_is_made_once(tmp_path):
    (tmp_path / "s.csv").write_text(
        "path,title,output,style,preview\n"
        "a.wav,,,oil,\n"  # 1: its stem, shared with songs 2, 8 and 9: a hash
        "a.wav,,,ink,\n"  # 2
        "a.wav,,,oil,no\n"  # 3: the same song and settings as song 1
        "a.wav,Déjà vu: live!,,,\n"  # 4: its title
        "a.wav,,clip,,\n"  # 5: its own name, .mp4
        "a.wav,,clip.MKV,,yes\n"  # 6: a preview of it, beside it
        "a.wav,Clip,,,\n"  # 7: a title that clashes with the name song 5 gave: a hash
        "b/a.wav,,,,\n"  # 8: another song of the same name
        "a.wav,,,oil,yes\n"  # 9: a preview of song 1
        "a.wav,,,,yes\n"  # 10: the same as song 6, which named its video
    )
    jobs = planned(tmp_path / "s.csv")
    names = [job.output.name for job in jobs]
    hashed = r"-[0-9a-f]{8}"
    for name, pattern in zip(
        names,
        [
            f"a{hashed}.mp4",
            f"a{hashed}.mp4",
            names[0],
            "Déjà-vu-live.mp4",
            "clip.mp4",
            "clip.preview.MKV",
            f"Clip{hashed}.mp4",
            f"a{hashed}.mp4",
            f"a{hashed}.preview.mp4",
            names[5],
        ],
    ):
        assert re.fullmatch(pattern, name), (name, pattern)
    assert [job.same_as for job in jobs] == [None, None, 1, *[None] * 6, 6]
    made = [name.casefold() for job, name in zip(jobs, names) if job.same_as is None]
    assert (
        len(set(made)) == len(made) == 8
        and names[0][:10] == names[8][:10]
        and all(job.output.parent == tmp_path / "out" for job in jobs)
    )
    # the names are the same in a rerun, and with other options for every row
    assert [job.output.name for job in planned(tmp_path / "s.csv", "--steps", "3", "--style", "ink")] == names
    with_workdir = planned(tmp_path / "s.csv", "--workdir", tmp_path / "work")
    assert [job.request.workdir.name for job in with_workdir][:2] == [Path(n).stem for n in names[:2]]


def test_a_thousand_identical_rows_are_one_render(tmp_path):
    (tmp_path / "s.csv").write_text("path,seed\n" + "a.wav,3\n" * 1000)
    jobs = planned(tmp_path / "s.csv")
    assert [job.same_as for job in jobs] == [None] + [1] * 999
    assert {job.output.name for job in jobs} == {"a.mp4"}


@pytest.mark.parametrize(
    "rows, second",
    [
        ("a.wav,clip\nb.wav,CLIP.mp4\n", "song 2 (b.wav)"),  # two songs, one name (on any file system)
        ("a.wav,clip.mp4\na.wav,clip.mkv\n", "song 2 (a.wav)"),  # two videos, one clip.srt
    ],
)
def test_two_rows_that_name_one_output_are_refused(tmp_path, capsys, rows, second):
    (tmp_path / "s.csv").write_text("path,output\n" + rows)
    assert run_batch(tmp_path / "s.csv", "-o", tmp_path / "out", "--models", "tiny", "-q") == 2
    err = capsys.readouterr().err
    assert f"song 1 (a.wav) and {second} would both be named clip" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_rows_files_are_found_from_the_csvs_folder_and_may_lie_outside_it(tmp_path, monkeypatch):
    lists, words = tmp_path / "lists", tmp_path / "words"
    lists.mkdir()
    words.mkdir()
    (words / "a.lrc").write_text("[00:00.00]one\n")
    (lists / "s.csv").write_text(f"path,lyrics\n../a.wav,../words/a.lrc\n{tmp_path / 'a.wav'},{words / 'a.lrc'}\n")
    monkeypatch.chdir(words)  # not from the working directory
    jobs = planned(lists / "s.csv")
    assert jobs[0].request.lyrics_file.resolve() == words / "a.lrc"
    assert jobs[1].same_as == 1  # the same files, named two ways
    batch.check_jobs(jobs[:1], jobs, lists / "s.csv", choose_models("tiny"))  # accepted


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
    from musicvid.models import choose

    registries = []
    real_registry = choose.registry_of

    def counting_registry(choice, keep_loaded=False):
        registries.append(real_registry(choice, keep_loaded=keep_loaded))
        return registries[-1]

    monkeypatch.setattr(choose, "registry_of", counting_registry)
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


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("align", "y", "align must be yes or no"),
        ("preview", "maybe", "preview must be yes or no"),
        ("help", "1", "column 'help' is not a per-song setting"),
        ("models", "tiny", "the whole batch shares it"),
        ("fps", "1e6", "from 1 to 60"),
        ("steps", "many", "steps must be a whole number"),
        ("size", "huge", "--size"),
        ("aspect", "21:9", "--aspect must be one of 16:9, 9:16, 1:1, 4:5, not '21:9'"),
        ("output", "../b.mp4", "output '../b.mp4' must be a plain file name inside -o"),
        ("output", "/tmp/b.mp4", "must be a plain file name"),
        ("output", "..", "must be a plain file name"),
        ("output", "b.srt", "must end in .mp4, .m4v, .mov, .mkv or have no suffix"),
    ],
)
def test_a_bad_csv_value_exits_2_before_any_song(tmp_path, capsys, column, value, reason):
    (tmp_path / "s.csv").write_text(f"path,{column}\na.mp3,\nb.mp3,{value}\n")
    assert run_batch(tmp_path / "s.csv", "-o", tmp_path / "out", "--models", "tiny", "-q") == 2
    err = capsys.readouterr().err
    assert reason in err and "song 2 (b.mp3)" in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "cells, reason",
    [
        ("missing.lrc,,", "lyrics file not found"),
        ("pipe.lrc,,", "is not a regular file (a pipe or a device?)"),
        ("words.lrc,,", "is a directory"),
        (",broken.json,", "is not valid JSON"),
        (",pinned.json,", "pinned picture of scene 1 not found"),
        ("out/b.srt,,b", "is the lyrics file: the run would write over it"),
        (",,x.mkv", "its x.srt would write over the lyrics file of song 3 (c.wav)"),
    ],
)
def test_every_file_a_row_names_is_checked_before_the_first_render(tmp_path, capsys, cells, reason):
    import os

    make_tone(tmp_path / "a.wav", 2)
    make_tone(tmp_path / "b.wav", 2)
    os.mkfifo(tmp_path / "pipe.lrc")
    (tmp_path / "words.lrc").mkdir()
    (tmp_path / "broken.json").write_text("{")
    board = valid_board()
    board["scenes"][1]["picture"] = "missing.png"
    (tmp_path / "pinned.json").write_text(json.dumps(board))
    out = tmp_path / "out"
    out.mkdir()
    for lyrics in ("b.srt", "x.srt"):  # lyrics in -o, where a video's subtitles may go
        (out / lyrics).write_text("1\n00:00:00,000 --> 00:00:01,000\nhi\n")
    rows = f"a.wav,,,\nb.wav,{cells}\nc.wav,out/x.srt,,\n"
    (tmp_path / "s.csv").write_text(f"path,lyrics,storyboard,output\n{rows}")
    assert run_batch(tmp_path / "s.csv", "-o", out, "--models", "tiny", "--fps", "2", "-q") == 2
    err = capsys.readouterr().err
    assert "song 2 (b.wav): " in err and reason in err and err.count("\n") == 1
    assert not list(out.glob("*.mp4")) and not (out / "report.json").exists()


def test_the_upscaler_is_checked_before_the_first_render_and_refused_where_unused(tmp_path, capsys):
    make_tone(tmp_path / "a.wav", 2)
    (tmp_path / "junk.pth").write_bytes(b"not weights" * 10)
    (tmp_path / "s.csv").write_text("path,resolution,seed\na.wav,,1\na.wav,720p,2\n")
    out = tmp_path / "out"
    common = ["-o", out, "--models", "tiny", "--fps", "2", "-q"]
    assert run_batch(tmp_path / "s.csv", *common, "--upscaler", tmp_path / "junk.pth") == 2
    assert "upscaler" in capsys.readouterr().err and not out.exists()
    (tmp_path / "s.csv").write_text("path,seed\na.wav,1\n")
    assert run_batch(tmp_path / "s.csv", *common, "--upscaler", "lanczos") == 2
    err = capsys.readouterr().err
    assert "--upscaler only acts with --resolution" in err and err.count("\n") == 1 and not out.exists()


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


def test_a_csv_row_may_ask_for_a_shape_and_a_look(tmp_path):
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.song import SongRequest

    (tmp_path / "s.csv").write_text("path,aspect,look,output-fps\na.mp3,16:9,,\nb.mp3,4:5,,\nc.mp3,,music-video,24\n")
    wide, tall, look = batch.read_playlist(tmp_path / "s.csv")
    base = SongRequest(song=Path("-")), {}, PRESETS["default"]  # 512x512 pictures
    assert batch.song_settings(wide, *base, tmp_path, "row 1")[1].size == (704, 384)
    assert batch.song_settings(tall, *base, tmp_path, "row 2")[1].size == (448, 576)
    video = batch.song_settings(look, *base, tmp_path, "row 3")[1]  # the look, but the row's own rate
    assert (video.size, video.output_fps, video.fps, video.resolution, video.captions) == (
        (704, 384),
        24,
        12,
        "1080p",
        "karaoke",
    )
