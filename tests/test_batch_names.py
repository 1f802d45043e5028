"""How `musicvid batch` names its rows' videos and judges the files already at those names: a song retagged since its
video was made (rendered again, its video replaced; a person's file never), names made from long or odd file names
(cut and cleaned, as titles are), rows whose song cannot be read (no part in the clashes), the lock on -o (removed as
the batch lets go of it) and the end table (each row's song beside its output). The renders are faked: they write
their outputs as a render does (write_output), so only what the batch decides is tested."""

import json
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

from musicvid.batch.report import OUTPUT_LOCK, is_at, locked_file
from musicvid.core.files import file_sha256
from musicvid.core.outputs import made_by_a_run, write_output
from musicvid.core.workdir import WORK_ROOT, Workdir
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
        return SimpleNamespace(duration=1.0, workdir=workdir)

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
    assert code == 2 and f"{out / 'm2.mp4'} exists and no run in" in err, err
    assert (out / "m2.mp4").read_text() == "the video as I edited it" and rendered == ["m1.wav", "m2.wav"]
    retagged(songs / "m1.wav")
    (out / "report.json").unlink()  # the bytes are a run's, but no report of -o names the video as this song's
    code, err = run_batch(capsys, songs, out, "--force")
    assert code == 2 and f"{out / 'm1.mp4'} exists and no run in" in err, err
    assert rendered == ["m1.wav", "m2.wav"]


def test_a_long_file_name_is_cut_in_its_middle_so_movements_stay_apart_and_two_cut_alike_are_told_apart(
    tmp_path, capsys, monkeypatch
):
    rendered = faked_renders(monkeypatch)
    songs = tmp_path / "songs"
    songs.mkdir()
    long = "Symphony No 9 in D minor Op 125 Choral - IV Presto - Allegro assai " * 3  # 207 bytes, a legal name
    accented = "Ö" * 55  # 110 bytes: cut on characters' boundaries
    middle = long[:80] + long[80:].replace("Choral", "Chorus", 1)  # differs from `long` only where the cut drops
    stems = (f"{long}1", f"{long}2", f"{accented} part 1", f"{accented} part 2", f"{middle}1", "short")
    for stem in stems:
        make_tone(songs / f"{stem}.wav", 1)
    names = {job.entry.path.stem: job.output.name for job in planned(songs)}
    assert names[f"{long}2"] == f"{long[:62]}…{long[-34:]}2.mp4" and names["short"] == "short.mp4", names
    assert names[f"{accented} part 2"] == f"{'Ö' * 31}…{'Ö' * 14} part 2.mp4", names
    assert names[f"{accented} part 1"] == f"{'Ö' * 31}…{'Ö' * 14} part 1.mp4", names
    hashed = names[f"{long}1"], names[f"{middle}1"]  # cut alike: told apart by their hashes
    assert hashed[0] != hashed[1] and all(n.startswith(f"{long[:62]}…{long[-34:]}1-") for n in hashed), names
    assert all(len(os.fsencode(Path(name).stem)) <= 100 + 9 for name in names.values()), names  # (and a hash)
    code, err = run_batch(capsys, songs, tmp_path / "out")
    assert code == 0 and rendered == [1, 2, 3, 4, 5, 6], err


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
    assert "the song changed" not in err and [s["status"] for s in report_of(out)] == ["done", "done"]
    assert run_batch(capsys, songs, out, "--seed", "7")[0] == 0 and len(rendered) == 4  # made so: skipped
    code, err = run_batch(capsys, songs, out, "--seed", "7", "--force")  # made again, as asked, and no more said
    assert code == 0 and len(rendered) == 6 and "the song changed" not in err and "other settings" not in err, err
    rendered[4:] = []
    (out / "report.json").unlink()  # what they were made with is recorded nowhere: made again
    assert run_batch(capsys, songs, out, "--seed", "7")[0] == 0 and len(rendered) == 6


def test_a_batch_run_again_from_another_folder_finds_its_outputs_by_the_work_directories_its_report_names(
    tmp_path, capsys, monkeypatch
):
    """Its musicvid-work/ is another there: the rows were refused as "no run in … wrote it", not skipped."""
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    assert {r["workdir"] for r in report_of(out)} == {str(p.absolute()) for p in (tmp_path / WORK_ROOT).iterdir()}
    (elsewhere := tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(elsewhere)
    code, err = run_batch(capsys, songs, out)
    assert code == 0 and rendered == ["m1.wav", "m2.wav"], err  # made so: skipped
    assert [r["status"] for r in report_of(out)] == ["skipped"] * 2 and all(r["workdir"] for r in report_of(out))
    code, err = run_batch(capsys, songs, out, "--seed", "7")  # made otherwise: made again, replacing its own
    assert code == 0 and rendered == ["m1.wav", "m2.wav"] * 2, err
    assert {r["workdir"] for r in report_of(out)} == {str(p.absolute()) for p in (elsewhere / WORK_ROOT).iterdir()}
    (out / "m1.srt").write_text("my own subtitles")  # a person's edit: refused as ever, from any folder
    monkeypatch.chdir(tmp_path)
    code, err = run_batch(capsys, songs, out, "--seed", "8")
    assert code == 2 and f"{out / 'm1.srt'} exists and no run in" in err, err
    assert (out / "m1.srt").read_text() == "my own subtitles"


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


def test_a_copy_or_hard_link_of_a_video_a_batch_made_fails_at_its_turn_as_no_song(tmp_path, capsys, monkeypatch):
    """Found by its bytes, under any name: the copy, hard link or moved video of a batch's own was rendered as a song."""
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    share = tmp_path / "share"
    share.mkdir()
    shutil.copyfile(out / "m1.mp4", share / "copy.mp4")
    os.link(out / "m2.mp4", share / "hard.mp4")
    (share / "same size.mp4").write_bytes(b"x" * (out / "m1.mp4").stat().st_size)  # a person's: other bytes
    assert made_by_a_run(share / "same size.mp4", [WORK_ROOT]) is None
    (share / "l.m3u").write_text("copy.mp4\nhard.mp4\n")
    code, err = run_batch(capsys, share / "l.m3u", tmp_path / "out2")
    rows = report_of(tmp_path / "out2")
    assert code == 1 and rendered == ["m1.wav", "m2.wav"] and [r["status"] for r in rows] == ["failed"] * 2, err
    assert rows[0]["error"].startswith(f"{share / 'copy.mp4'} is a video musicvid made for "), rows
    assert rows[1]["error"].startswith(f"{share / 'hard.mp4'} is a video musicvid made for "), rows


def test_a_video_a_run_made_renamed_as_a_song_fails_at_its_turn_known_by_its_container(tmp_path, capsys, monkeypatch):
    """Its copy named .mp3 or .m4a was rendered as a song: an MP4 is known by its 'ftyp' box, whatever its name."""
    from musicvid.core.outputs import remember
    from tests.helpers import work_directory

    monkeypatch.chdir(tmp_path)  # (where the songs' work directories are: musicvid-work/)
    song = make_tone(tmp_path / "a.wav", 1)
    video = tmp_path / "a.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypisom" + os.urandom(64))  # as a render of a.wav records its video
    remember(Workdir(work_directory(Workdir.for_song(song, file_sha256(song)).root)), video, video)
    for name in ("sneaky.mp3", "sneaky.m4a"):
        shutil.copyfile(video, tmp_path / name)
    (tmp_path / "s.csv").write_text("path\nsneaky.mp3\nsneaky.m4a\n")
    rendered = writing_renders(monkeypatch)
    code, _ = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    rows = report_of(tmp_path / "out")
    assert code == 1 and rendered == [] and [r["status"] for r in rows] == ["failed"] * 2
    for row, name in zip(rows, ("sneaky.mp3", "sneaky.m4a")):
        assert row["error"].startswith(f"{tmp_path / name} is a video musicvid made for "), row


def test_lyrics_edited_beside_a_song_since_its_video_was_made_render_it_again(tmp_path, capsys, monkeypatch):
    """The .lrc fixed, the folder rerun: the row was `skipped`, its video and .srt of the old lyrics kept."""
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    (songs / "m1.lrc").write_text("[00:00.10]hello little star\n")
    assert run_batch(capsys, songs, out)[0] == 0 and rendered == ["m1.wav", "m2.wav", "m1.wav"]
    assert run_batch(capsys, songs, out)[0] == 0 and len(rendered) == 3  # the same lyrics: skipped
    (songs / "m1.lrc").write_text("[00:00.10]fixed first line\n")
    code, err = run_batch(capsys, songs, out)
    assert code == 0 and rendered[3:] == ["m1.wav"] and [s["status"] for s in report_of(out)] == ["done", "skipped"]


def test_batches_of_two_folders_into_one_o_keep_each_others_rows(tmp_path, capsys, monkeypatch):
    """Each batch wrote report.json with its own rows: the other folder's rows rendered again on every run, and its
    retagged song was refused as a video musicvid did not write."""
    monkeypatch.chdir(tmp_path)
    a, b, out = tmp_path / "A", tmp_path / "B", tmp_path / "out"
    a.mkdir(), b.mkdir()
    make_tone(a / "x.wav", 1), make_tone(b / "y.wav", 1)
    rendered = writing_renders(monkeypatch)
    for songs in (a, b, a, b):
        assert run_batch(capsys, songs, out)[0] == 0
    assert rendered == ["x.wav", "y.wav"]  # then each skipped
    report = json.loads((out / "report.json").read_text())
    assert [Path(row["song"]).name for row in report["songs"]] == ["y.wav"] and report["total"] == 1
    assert [Path(row["song"]).name for row in report["other_batches"]] == ["x.wav"]
    retagged(a / "x.wav")
    code, err = run_batch(capsys, a, out)
    assert code == 0 and rendered[2:] == ["x.wav"] and "the song changed since its video was made" in err, err
    (out / "y.mp4").unlink()  # a video no longer there: its row is not kept
    assert run_batch(capsys, a, out)[0] == 0 and json.loads((out / "report.json").read_text())["other_batches"] == []


def test_o_reached_through_a_link_is_the_same_o(tmp_path, capsys, monkeypatch):
    songs, out, rendered = two_songs_made(tmp_path, capsys, monkeypatch)
    (tmp_path / "link").symlink_to(out)
    for where in (tmp_path / "link", out, tmp_path / "link"):
        code, err = run_batch(capsys, songs, where)
        assert code == 0 and len(rendered) == 2 and "made with other settings" not in err, err


def test_a_link_at_the_lock_files_name_is_refused_before_any_work(tmp_path, capsys, monkeypatch):
    rendered = faked_renders(monkeypatch)
    (tmp_path / "songs").mkdir(), (tmp_path / "out").mkdir()
    make_tone(tmp_path / "songs" / "a.wav", 1)
    (tmp_path / "precious.txt").write_text("mine")
    (tmp_path / "out" / OUTPUT_LOCK).symlink_to("../precious.txt")
    code, err = run_batch(capsys, tmp_path / "songs", tmp_path / "out")
    assert code == 2 and err == f"musicvid: {tmp_path / 'out' / OUTPUT_LOCK} is a link: remove it\n" and not rendered
    assert (tmp_path / "precious.txt").read_text() == "mine" and (tmp_path / "out" / OUTPUT_LOCK).is_symlink()
