"""How `musicvid batch` names its rows' videos and judges the files already at those names: a song retagged since its
video was made (rendered again, its video replaced; a person's file never), names made from long or odd file names
(cut and cleaned, as titles are), rows whose song cannot be read (no part in the clashes), the lock on -o (removed as
the batch lets go of it) and the end table (each row's song beside its output). The renders are faked: they write
their outputs as a render does (write_output), so only what the batch decides is tested."""

import os
from pathlib import Path
from types import SimpleNamespace

from musicvid.batch.report import OUTPUT_LOCK, is_at, locked_file
from musicvid.core.files import file_sha256
from musicvid.core.outputs import write_output
from musicvid.core.workdir import Workdir
from tests.helpers import make_tone, run
from tests.test_batch_hostile2 import faked_renders, report_of, run_batch
from tests.test_batch_plan import planned


def writing_renders(monkeypatch) -> list[str]:
    """Renders that write each output as a render does, recorded in the song's work directory; the songs rendered."""
    import musicvid.pipeline

    rendered = []

    def make_video(request, settings, registry, output, wait):
        rendered.append(request.song.name)
        workdir = Workdir.of_song(request.song, request.workdir)
        with workdir.held(wait):
            for path in settings.outputs(output):
                text = f"{path.name} of {file_sha256(request.song)}"
                write_output(workdir, path, request.overwrite, text=text, beside=None if path == output else output)
        return SimpleNamespace(duration=1.0)

    monkeypatch.setattr(musicvid.pipeline, "make_video", make_video)
    return rendered


def retagged(song: Path) -> None:
    """The song with a title in its tags: the same audio, other bytes."""
    make_tone(song, 1, "-metadata", "title=Fixed Title")


def two_songs_made(tmp_path, capsys, monkeypatch) -> tuple[Path, Path, list[str]]:
    monkeypatch.chdir(tmp_path)  # (where the songs' work directories are: musicvid-work/)
    songs, out = tmp_path / "songs", tmp_path / "out"
    songs.mkdir()
    make_tone(songs / "m1.wav", 1)
    make_tone(songs / "m2.wav", 1)
    rendered = writing_renders(monkeypatch)
    assert run_batch(capsys, songs, out)[0] == 0 and rendered == ["m1.wav", "m2.wav"]
    return songs, out, rendered


def test_a_song_retagged_since_its_video_was_made_is_rendered_again_and_its_video_replaced(
    tmp_path, capsys, monkeypatch
):
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    retagged(songs / "m2.wav")
    code, err = run_batch(capsys, songs, out)
    assert code == 0 and rendered == ["m1.wav", "m2.wav", "m2.wav"], err
    assert f"{songs / 'm2.wav'}: the song changed since its video was made: rendering again" in err
    assert [s["status"] for s in report_of(out)] == ["skipped", "done"]
    now = file_sha256(songs / "m2.wav")
    assert (out / "m2.mp4").read_text() == f"m2.mp4 of {now}" and (out / "m2.srt").read_text() == f"m2.srt of {now}"
    assert run_batch(capsys, songs, out)[0] == 0 and rendered == ["m1.wav", "m2.wav", "m2.wav"]  # then skipped
    assert not (out / OUTPUT_LOCK).exists()  # (let go of, and removed)


def test_a_file_no_run_wrote_as_it_is_stays_protected_when_its_song_changed(tmp_path, capsys, monkeypatch):
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    retagged(songs / "m2.wav")
    (out / "m2.mp4").write_text("the video as I edited it")  # bytes no run recorded
    code, err = run_batch(capsys, songs, out)
    assert code == 2 and f"{out / 'm2.mp4'} exists and musicvid did not write it" in err, err
    assert (out / "m2.mp4").read_text() == "the video as I edited it" and rendered == ["m1.wav", "m2.wav"]
    retagged(songs / "m1.wav")
    (out / "report.json").unlink()  # the bytes are a run's, but no report of -o names the video as this song's
    code, err = run_batch(capsys, songs, out, "--force")
    assert code == 2 and f"{out / 'm1.mp4'} exists and musicvid did not write it" in err, err
    assert rendered == ["m1.wav", "m2.wav"]


def test_a_long_file_name_is_cut_as_a_title_is_and_two_cut_alike_are_told_apart(tmp_path, capsys, monkeypatch):
    rendered = faked_renders(monkeypatch)
    songs = tmp_path / "songs"
    songs.mkdir()
    long = "Symphony No 9 in D minor Op 125 Choral - IV Presto - Allegro assai " * 3  # 207 bytes, a legal name
    for name in (f"{long}A.wav", f"{long}B.wav", "short.wav"):
        make_tone(songs / name, 1)
    names = [job.output.name for job in planned(songs)]
    assert names[2] == "short.mp4" and len(set(names)) == 3, names
    assert all(len(os.fsencode(Path(name).stem)) <= 100 + 9 for name in names), names  # (and a hash)
    assert names[0].startswith(long[:90]) and names[0] != names[1]
    code, err = run_batch(capsys, songs, tmp_path / "out")
    assert code == 0 and rendered == [1, 2, 3], err


def test_a_name_still_too_long_says_what_a_row_can_do(tmp_path, capsys, monkeypatch):
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "s.csv").write_text("path,output\na.wav," + "x" * 60 + "\n")
    monkeypatch.setattr("musicvid.core.outputs.os.pathconf", lambda path, name: 100)  # a file system of short names
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and "s.csv song 1 (a.wav): the file name xxx" in err, err
    assert "rename the song, or give its row a shorter output (a CSV's output cell)" in err and "-o a" not in err


def test_a_newline_in_a_songs_name_is_no_newline_in_its_videos_name_nor_in_a_line(tmp_path, capsys, monkeypatch):
    rendered = faked_renders(monkeypatch)
    songs = tmp_path / "songs"
    songs.mkdir()
    make_tone(songs / "a\nb.wav", 1)
    make_tone(songs / "good.wav", 1)
    assert [job.output.name for job in planned(songs)] == ["a-b.mp4", "good.mp4"]
    code, err = run_batch(capsys, songs, tmp_path / "out")
    assert code == 0 and rendered == [1, 2] and "a\nb" not in err and "aU+000Ab.wav: done" in err, err


def test_a_row_whose_song_cannot_be_read_takes_no_other_rows_name(tmp_path):
    make_tone(tmp_path / "two.wav", 1)
    (tmp_path / "p.m3u").write_text("#EXTINF:2,Two\nmissing/two.wav\ntwo.wav\n")
    assert [job.output.name for job in planned(tmp_path / "p.m3u")] == ["Two.mp4", "two.mp4"]


def test_the_end_table_names_each_rows_song_beside_its_output(tmp_path, capsys, monkeypatch):
    faked_renders(monkeypatch)
    (tmp_path / "b").mkdir()
    make_tone(tmp_path / "intro.wav", 1)
    make_tone(tmp_path / "b" / "intro.wav", 1)
    (tmp_path / "p.m3u").write_text("intro.wav\nb/intro.wav\n")
    code, table, _ = run(capsys, "batch", tmp_path / "p.m3u", "-o", tmp_path / "out", "--models", "tiny", "-q")
    lines = table.splitlines()
    assert code == 0 and lines[0].split() == ["status", "time", "duration", "song", "output", "note"]
    assert [line.split()[-2] for line in lines[1:3]] == [str(tmp_path / "intro.wav"), str(tmp_path / "b/intro.wav")]
    assert not (tmp_path / "out" / OUTPUT_LOCK).exists()


def test_a_lock_file_another_batch_removed_as_this_one_opened_it_is_taken_anew(tmp_path, monkeypatch):
    path, opened = tmp_path / OUTPUT_LOCK, []
    real_open = os.open

    def opening(name, flags, mode=0o777):
        fd = real_open(name, flags, mode)
        if not opened:
            os.unlink(name)  # the batch that held it let go of it, removing it, after this one opened it
        opened.append(name)
        return fd

    monkeypatch.setattr(os, "open", opening)
    fd = locked_file(path, "busy")
    try:
        assert len(opened) == 2 and is_at(fd, path)  # the file at the name, not the one removed
    finally:
        os.close(fd)


def test_a_rerun_with_other_settings_renders_again_and_replaces_its_own_videos(tmp_path, capsys, monkeypatch):
    """A preview made small, then the batch rerun big: every row was skipped, "2/2 songs ok", the videos small."""
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    assert run_batch(capsys, songs, out)[0] == 0 and rendered == ["m1.wav", "m2.wav"]  # the same settings: skipped
    code, err = run_batch(capsys, songs, out, "--seed", "7")
    assert code == 0 and rendered == ["m1.wav", "m2.wav"] * 2, err
    assert f"{songs / 'm1.wav'}: made with other settings: rendering again" in err
    assert [s["status"] for s in report_of(out)] == ["done", "done"]
    assert run_batch(capsys, songs, out, "--seed", "7")[0] == 0 and len(rendered) == 4  # made so: skipped
    (out / "report.json").unlink()  # what they were made with is recorded nowhere: made again
    assert run_batch(capsys, songs, out, "--seed", "7")[0] == 0 and len(rendered) == 6


def test_a_video_a_batch_made_named_as_a_song_fails_at_its_turn(tmp_path, capsys, monkeypatch):
    """A playlist made with `find` over the project folder named a batch's own video: it was rendered as a song."""
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    (songs / "all.m3u").write_text("m1.wav\n../out/m1.mp4\n")
    code, err = run_batch(capsys, songs / "all.m3u", out)
    rows = report_of(out)
    assert code == 1 and rendered == ["m1.wav", "m2.wav"] and [r["status"] for r in rows] == ["skipped", "failed"]
    video = songs / "../out/m1.mp4"
    assert rows[1]["error"] == f"{video} is a video musicvid made for {songs / 'm1.wav'}, not a song", err
    (out / "report.json").unlink()  # its work directory's record knows it too
    code, _ = run_batch(capsys, songs / "all.m3u", tmp_path / "out2")
    [row] = [r for r in report_of(tmp_path / "out2") if r["status"] == "failed"]
    assert code == 1 and row["error"].startswith(f"{video} is a video musicvid made for the song of musicvid-work/m1-")
