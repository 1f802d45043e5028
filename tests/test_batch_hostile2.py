"""`musicvid batch` against hostile input, continued: songs whose names are no folder's (`...wav`, `..wav`) with
--workdir, loops of symbolic links as songs and as cells, a row's files that do not fit its song's length (refused
before the first render), repeats of a row finished with it, a skipped row whose outputs are not all there, the
report's paths, and a row that ran out of memory. The renders are faked where a test needs only what the batch decides."""

import errno
import json
import os
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest

from musicvid.batch import command as batch
from musicvid.batch.names import title_slug
from musicvid.batch.report import Result
from musicvid.core.errors import out_of_memory, out_of_room
from musicvid.core.files import file_sha256
from musicvid.core.outputs import remember
from musicvid.core.workdir import Workdir
from tests.helpers import dead_pid, make_tone, run, valid_board, work_directory
from tests.test_batch_plan import planned

TINY = ("--models", "tiny", "--fps", "2", "-q")


def run_batch(capsys, songs, out, *options):
    """`musicvid batch SONGS -o OUT --models tiny --fps 2 -q OPTIONS`: its exit code and stderr."""
    code, _, err = run(capsys, "batch", songs, "-o", out, *TINY, *options)
    return code, err


def faked_renders(monkeypatch, status: str = "done") -> list[int]:
    """Renders that make nothing and end as `status`; the rows rendered, by number, in order."""
    rendered = []

    def render_locally(registry, jobs, finished):
        for job in jobs:
            rendered.append(job.number)
            error = "it broke" if status == "failed" else ""
            finished(job, Result(str(job.entry.path), status, str(job.output), 1.0, error=error))

    monkeypatch.setattr(batch, "render_locally", render_locally)
    return rendered


def report_of(out: Path) -> list[dict]:
    return json.loads((out / "report.json").read_text())["songs"]


@pytest.mark.ci  # (a second render of the batch's: test_batch_runs keeps one in the suite)
def test_a_song_named_dot_dot_dot_renders_inside_workdir_and_leaves_the_folder_above_untouched(tmp_path, capsys):
    """`...wav` has the stem `..`: its work directory was --workdir's parent, whose video.mp4 was replaced."""
    songs = tmp_path / "songs"
    songs.mkdir()
    make_tone(songs / "...wav", 1)
    (tmp_path / "video.mp4").write_text("my precious video")
    (tmp_path / "transcript.json").write_text('{"my": "notes"}')
    (songs / "list.m3u").write_text("...wav\n")  # (a folder's batch skips it: a name starting with "." is hidden)
    code, err = run_batch(capsys, songs / "list.m3u", tmp_path / "out", "--workdir", tmp_path / "wd")
    assert code == 0, err
    assert (tmp_path / "video.mp4").read_text() == "my precious video"
    assert (tmp_path / "transcript.json").read_text() == '{"my": "notes"}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "songs", "transcript.json", "video.mp4", "wd"]
    [workdir] = (tmp_path / "wd").iterdir()
    assert workdir.name.startswith("..-") and (workdir / "video.mp4").is_file()
    assert [p.name for p in (tmp_path / "out").glob("*.mp4")] == [f"{workdir.name}.mp4"]


def test_songs_named_dot_dot_get_work_directories_inside_workdir(tmp_path):
    for name in ("..wav", "...wav", "b.wav"):
        make_tone(tmp_path / name, 1)
    (tmp_path / "p.m3u").write_text("..wav\n...wav\nb.wav\n")
    jobs = planned(tmp_path / "p.m3u", "--workdir", tmp_path / "wd")
    roots = [Workdir.of_song(job.request.song, job.request.workdir).root for job in jobs]
    assert all(root.parent == tmp_path / "wd" and root.name not in (".", "..") for root in roots), roots
    assert roots[2].name == "b" and len({job.output for job in jobs}) == 3
    assert [job.output for job in planned(tmp_path / "p.m3u", "--workdir", tmp_path / "wd")] == [
        job.output for job in jobs
    ]  # the same names in every rerun


def test_render_with_a_workdir_of_dot_dot_is_checked_as_the_folder_it_names(tmp_path, capsys, monkeypatch):
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "a.lrc").write_text("[00:00.10]hi\n")
    here = tmp_path / "mine"
    here.mkdir()
    (here / "video.mp4").write_text("mine")
    monkeypatch.chdir(here)
    argv = ["render", tmp_path / "a.wav", "--lyrics", tmp_path / "a.lrc", "-o", tmp_path / "o.mp4", *TINY]
    code, _, err = run(capsys, *argv, "--workdir", "nothere/..")
    assert code == 2 and "holds video.mp4, which musicvid did not make" in err, err
    assert sorted(os.listdir(here)) == ["video.mp4"] and (here / "video.mp4").read_text() == "mine"


def test_a_workdir_that_is_o_is_refused_before_any_render(tmp_path, capsys):
    (tmp_path / "songs").mkdir()
    make_tone(tmp_path / "songs" / "report.json.mp3", 1)  # (its work directory would be -o's report.json)
    (tmp_path / "out").mkdir()
    os.symlink(tmp_path / "out", tmp_path / "same")
    for workdir in (tmp_path / "out", tmp_path / "same"):
        code, err = run_batch(capsys, tmp_path / "songs", tmp_path / "out", "--workdir", workdir)
        assert code == 2 and f"--workdir {workdir} is -o: a row's work directory" in err and err.count("\n") == 1, err
    assert os.listdir(tmp_path / "out") == []


def looping(folder: Path) -> None:
    """loop1.wav and loop2.wav, links to each other, and loopd, a link into itself."""
    (folder / "loop1.wav").symlink_to("loop2.wav")
    (folder / "loop2.wav").symlink_to("loop1.wav")
    (folder / "loopd").symlink_to("loopd/x")


def test_a_song_in_a_loop_of_links_fails_at_its_turn(tmp_path, capsys):
    looping(tmp_path)
    (tmp_path / "junk.wav").write_bytes(b"not audio" * 50)
    for options in ([], ["--workdir", tmp_path / "wd"]):
        (tmp_path / "p.m3u").write_text("junk.wav\nloop1.wav\nloop1.wav\n")
        code, err = run_batch(capsys, tmp_path / "p.m3u", tmp_path / "out", *options)
        assert code == 1 and "RuntimeError" not in err, err
        report = report_of(tmp_path / "out")
        assert [s["status"] for s in report] == ["failed"] * 3
        assert "Too many levels of symbolic links" in report[1]["error"]


@pytest.mark.parametrize("column, cell", [("lyrics", "loopd/x.lrc"), ("storyboard", "loopd/x.json")])
def test_a_cell_in_a_loop_of_links_is_refused_naming_its_row(tmp_path, capsys, column, cell):
    looping(tmp_path)
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "s.csv").write_text(f"path,{column}\na.wav,\na.wav,{cell}\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1, err
    assert "s.csv song 2 (a.wav): " in err and f"{cell} leads into a loop of symbolic links" in err
    assert not (tmp_path / "out").exists()


MISFITS = {  # a row's file that does not fit a song of 1 s: its name, its text, and what the refusal says
    "late": ("lyrics", "s.lrc", "[99:00.00]way after the end\n", "has no timed lines inside the song's 1.0 s"),
    "many": ("lyrics", "s.lrc", "".join(f"[00:{i * 0.06:05.2f}]l {i}\n" for i in range(17)), "has 17 lines, more than"),
    "many plain": ("lyrics", "s.txt", "line\n" * 60, "has 60 lines, more than"),
    "storyboard": ("storyboard", "s.json", json.dumps(valid_board()), "is for audio of 10.00 s, but"),
}


@pytest.mark.parametrize("misfit", MISFITS)
def test_a_rows_files_that_do_not_fit_its_song_stop_the_batch_before_any_render(tmp_path, capsys, monkeypatch, misfit):
    column, name, text, said = MISFITS[misfit]
    rendered = faked_renders(monkeypatch)
    make_tone(tmp_path / "a.wav", 1)
    make_tone(tmp_path / "b.wav", 1)
    (tmp_path / name).write_text(text)
    (tmp_path / "s.csv").write_text(f"path,{column}\na.wav,\nb.wav,{name}\n")
    code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path / "out", "--workdir", tmp_path / "wd")
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert "s.csv song 2 (b.wav): " in err
    assert rendered == [] and not (tmp_path / "out").exists() and not (tmp_path / "wd").exists()


@pytest.mark.parametrize("playlist", ["folder", "csv"])
def test_a_song_too_short_for_one_frame_fails_at_its_turn_and_the_others_are_made(
    tmp_path, capsys, monkeypatch, playlist
):
    # a stray click in an album's folder is a song musicvid cannot take, as an empty file is: it stops no batch
    rendered = faked_renders(monkeypatch)
    songs = tmp_path / "songs"
    songs.mkdir()
    for name, seconds in [("a.wav", 1), ("b.wav", 0.02), ("c.wav", 1)]:
        make_tone(songs / name, seconds)
    (tmp_path / "s.csv").write_text("path,fps\nsongs/a.wav,\nsongs/b.wav,10\nsongs/c.wav,\n")
    code, err = run_batch(capsys, songs if playlist == "folder" else tmp_path / "s.csv", tmp_path / "out")
    assert code == 1 and "b.wav: failed: the song lasts 0.020 s: at --fps " in err, err
    assert rendered == [1, 3] and [s["status"] for s in report_of(tmp_path / "out")] == ["done", "failed", "done"]


def test_a_song_whose_header_declares_no_length_is_left_to_its_turn(tmp_path, capsys, monkeypatch):
    rendered = faked_renders(monkeypatch)
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "late.lrc").write_text("[99:00.00]way after the end\n")
    (tmp_path / "s.csv").write_text("path,lyrics\na.wav,late.lrc\n")
    monkeypatch.setattr("musicvid.batch.lengths.declared_duration", lambda *_, **__: None)
    assert run_batch(capsys, tmp_path / "s.csv", tmp_path / "out")[0] == 0
    assert rendered == [1]


@pytest.mark.parametrize("status", ["done", "failed"])
def test_a_repeat_finishes_with_its_row_and_its_outcome(tmp_path, capsys, monkeypatch, status):
    faked_renders(monkeypatch, status)
    make_tone(tmp_path / "a.wav", 1)
    make_tone(tmp_path / "b.wav", 1)
    (tmp_path / "p.m3u").write_text("a.wav\nb.wav\na.wav\n")
    monkeypatch.chdir(tmp_path)
    code, err = run_batch(capsys, "p.m3u", "out")
    lines = err.splitlines()
    assert [line.split(":")[0] for line in lines] == ["[1/3] a.wav", "[2/3] a.wav", "[3/3] b.wav"], err
    report = report_of(tmp_path / "out")
    if status == "failed":
        assert code == 1 and "[2/3] a.wav: failed: same as song 1, which failed: it broke" in err
        assert [(s["status"], s["same_as"]) for s in report] == [("failed", None), ("failed", None), ("failed", 1)]
        assert report[2]["error"] == "same as song 1, which failed: it broke"
    else:
        assert code == 0 and lines[1] == "[2/3] a.wav: repeat: same as song 1"
        assert [s["status"] for s in report] == ["done", "done", "repeat"] and report[2]["duration"] == 1.0
    # the report's paths are absolute, as the Ray engine's are: a report read from elsewhere finds its files
    assert report[0]["song"] == str(tmp_path / "a.wav") and report[0]["output"] == str(tmp_path / "out" / "a.mp4")


def test_a_row_is_skipped_only_where_its_every_output_is_there_and_its_dead_temporaries_are_swept(
    tmp_path, capsys, monkeypatch
):
    rendered = faked_renders(monkeypatch)
    monkeypatch.chdir(tmp_path)  # where the song's work directory is: musicvid-work/
    song = make_tone(tmp_path / "a.wav", 1)
    out = tmp_path / "out"
    out.mkdir()
    workdir = Workdir(work_directory(Workdir.for_song(song, file_sha256(song)).root))
    (out / "a.mp4").write_bytes(b"a.wav's video")
    remember(workdir, out / "a.mp4", out / "a.mp4")  # as a batch killed before it placed a.srt left it
    leftover = out / f".musicvid-{dead_pid()}.a.srt.abcd_123.srt"
    leftover.write_text("half an srt")
    (tmp_path / "a.m3u").write_text("a.wav\n")
    assert run_batch(capsys, tmp_path / "a.m3u", out)[0] == 0
    assert rendered == [1] and [s["status"] for s in report_of(out)] == ["done"]
    (out / "a.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\nhi\n")
    remember(workdir, out / "a.srt", out / "a.srt")
    assert run_batch(capsys, tmp_path / "a.m3u", out)[0] == 0
    assert rendered == [1] and [s["status"] for s in report_of(out)] == ["skipped"]
    assert not leftover.exists() and (out / "a.srt").is_file()


def test_a_decomposed_title_keeps_its_accents_in_the_videos_name():
    assert title_slug(unicodedata.normalize("NFD", "Déjà vu: live!")) == "Déjà-vu-live"


@pytest.mark.parametrize(
    "error", [MemoryError(), OSError(errno.ENOSPC, "No space left on device", "/o/.musicvid-42.a.mp4.k3j5h2g1.mp4")]
)
def test_a_row_that_runs_out_of_memory_or_room_says_so_and_the_batch_goes_on(tmp_path, capsys, monkeypatch, error):
    """A render that fails for want of memory (after its models loaded) or of room on the disk is reported in the
    sentence the command line says it in, not as a bare MemoryError or OSError; the next row is rendered."""
    import musicvid.pipeline

    songs = tmp_path / "songs"
    songs.mkdir()
    make_tone(songs / "a.wav", 1)
    make_tone(songs / "b.wav", 1)
    rendered = []

    def make_video(request, settings, registry, output, wait):
        rendered.append(request.song.name)
        if len(rendered) == 1:
            raise error
        return SimpleNamespace(duration=1.0, workdir=Workdir.of_song(request.song, None))

    monkeypatch.setattr(musicvid.pipeline, "make_video", make_video)
    code, err = run_batch(capsys, songs, tmp_path / "out")
    said = str(out_of_memory(error) or out_of_room(error))
    assert code == 1 and rendered == ["a.wav", "b.wav"]
    assert said.startswith(("the process ran out of", "the disk is full, where /o/a.mp4 was being written"))
    assert [(row["status"], row["error"]) for row in report_of(tmp_path / "out")] == [("failed", said), ("done", "")]
    assert f"a.wav: failed: {said}\n" in err


def test_a_row_naming_an_open_file_of_the_batchs_is_refused_and_no_other_rows_repeat(tmp_path, capsys, monkeypatch):
    # /proc/self/fd/N resolves to the file it has open (`batch p.m3u < song.wav`): matched with the row naming that
    # file, the good row failed with the stream's refusal, or the stream passed as a repeat of the good row
    rendered = faked_renders(monkeypatch)
    make_tone(tmp_path / "song.wav", 2)
    with open(tmp_path / "song.wav", "rb") as opened:
        stream = f"/proc/self/fd/{opened.fileno()}"
        for order, statuses in (((stream, "song.wav"), ["failed", "done"]), (("song.wav", stream), ["done", "failed"])):
            (tmp_path / "p.m3u").write_text("\n".join(order) + "\n")
            rendered.clear()
            assert run_batch(capsys, tmp_path / "p.m3u", out := tmp_path / f"out-{statuses[0]}")[0] == 1
            report = report_of(out)
            assert [s["status"] for s in report] == statuses and rendered == [statuses.index("done") + 1]
            assert f"{stream} is a stream this process was given" in report[statuses.index("failed")]["error"]


def test_a_rows_output_never_replaces_a_picture_another_rows_storyboard_pins(tmp_path, capsys, monkeypatch):
    from PIL import Image

    rendered = faked_renders(monkeypatch)
    monkeypatch.chdir(tmp_path)
    make_tone(tmp_path / "a.wav", 10)
    make_tone(tmp_path / "b.wav", 10)
    Image.new("RGB", (64, 64), "red").save(tmp_path / "photo.ass", format="PNG")  # (a person's picture, so named)
    # (row 2 draws its keyframes there: a work directory a run of it left)
    picture = work_directory(Workdir.of_song(Path("b.wav"), None).root) / "keyframes" / "0000.png"
    picture.parent.mkdir()
    Image.new("RGB", (64, 64), "blue").save(picture)
    for name, pinned in (("board.json", "photo.ass"), ("inside.json", str(picture))):
        board = valid_board()
        board["scenes"][1]["picture"] = str(tmp_path / pinned)
        (tmp_path / name).write_text(json.dumps(board))
    before = file_sha256(tmp_path / "photo.ass")
    for board, said in (
        ("board.json", "its photo.ass would write over the pinned picture of scene 1 of song 1 (a.wav)"),
        ("inside.json", f"its pinned picture of scene 1 {tmp_path / picture} is the keyframes/ of song 2 (b.wav)'s"),
    ):
        (tmp_path / "s.csv").write_text(f"path,storyboard,captions,output\na.wav,{board},,\nb.wav,,line,photo\n")
        code, err = run_batch(capsys, tmp_path / "s.csv", tmp_path, "--overwrite")
        assert code == 2 and err.count("\n") == 1 and said in err, err
    assert rendered == [] and file_sha256(tmp_path / "photo.ass") == before
    make_tone(tmp_path / "photo.wav", 10)  # an automatic name that would write over it takes .video, as beside a song
    (tmp_path / "s.csv").write_text("path,storyboard,captions\na.wav,board.json,\nphoto.wav,,line\n")
    assert run_batch(capsys, tmp_path / "s.csv", tmp_path, "--overwrite")[0] == 0
    assert [Path(row["output"]).name for row in report_of(tmp_path)] == ["a.mp4", "photo.video.mp4"]
    assert file_sha256(tmp_path / "photo.ass") == before
