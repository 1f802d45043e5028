"""What a run writes, replaces and deletes: only what musicvid made. An output is never an input (the song,
the lyrics, a hard link, an input storyboard stays byte-identical), `-o` names a video file and only the video,
every output (the video -o or a batch row names too) is replaced only when musicvid wrote it for this song or
with --overwrite, the default name steps aside from lyrics beside the song, an output and the work directory
never hold each other and no output lies in another song's, a name too long or a folder where no file can be
made is refused before the work, the sweep takes only musicvid's own temporaries, and a storyboard its loader
would refuse is never saved."""

import errno
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from musicvid.core.errors import UserError, out_of_room
from musicvid.core.files import VIDEO_SUFFIXES
from musicvid.core.outputs import write_output
from musicvid.core.workdir import Workdir
from musicvid.delivery import deliver
from musicvid.delivery.mux import encode_video
from musicvid.storyboard.board import Scene, SongAudio, Storyboard
from tests.helpers import TINY_QUIET, dead_pid, digest, make_tone, quick, run, valid_board, video_frames, work_directory
from vipe_core.atomic import new_temporary, temporary_of

REPOSITORY = Path(__file__).parents[1]


def persons_files(*folders: Path) -> dict[Path, str]:
    """Dotfiles, editor swap files and copies a person keeps beside an output or in a work directory."""
    names = [".o.mp4.bak", ".o.srt.swp", ".o.mp4.orig", ".notes.txt", ".my.cnf", ".video.mp4.orig", ".a.b.c"]
    made = {}
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            (folder / name).write_text(f"a person's {name}")
            made[folder / name] = digest(folder / name)
    return made


@pytest.mark.slow
def test_the_sweep_takes_only_our_temporaries_after_render_resume_and_kill(capsys, tmp_path):
    song, workdir, output = make_tone(tmp_path / "song.wav", 2), tmp_path / "w", tmp_path / "out" / "o.mp4"
    kept = persons_files(output.parent)
    # a temporary a killed run of ours left beside the output: the sweep's to take
    ours = output.parent / f".musicvid-{dead_pid()}.o.mp4.abcd_123.mp4"
    ours.write_bytes(b"half a video")
    argv = quick(song, "--workdir", workdir, "-o", output)
    assert run(capsys, *argv)[0] == 0
    assert {path: digest(path) for path in kept} == kept and not ours.exists()
    kept |= persons_files(workdir, workdir / "frames")  # kept in musicvid's own work directory, once it made it
    # killed as it writes its video, then resumed
    (workdir / "video.mp4").unlink()
    command = [sys.executable, "-m", "tests.killer", "*/w/video.mp4", "1", "--", *map(str, argv)]
    killed = subprocess.run(command, capture_output=True, cwd=REPOSITORY)
    assert killed.returncode == -9, killed.stderr.decode()
    assert list(workdir.glob(".musicvid-*.video.mp4.*")), "the killed run left its temporary"
    assert run(capsys, *argv)[0] == 0
    assert {path: digest(path) for path in kept} == kept
    assert not [p for p in workdir.glob(".musicvid-*") if temporary_of(p)]  # its own leftover is gone
    assert {p.name for p in workdir.iterdir() if p.name.startswith(".")} == {
        *(p.name for p in kept if p.parent == workdir),
        ".musicvid-lock",
    }


def test_files_beside_the_song_are_replaced_only_when_ours_or_with_overwrite(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    video, subtitles = tmp_path / "song.mp4", tmp_path / "song.srt"
    workdir = ["--workdir", tmp_path / "wd"]
    for persons in (video, subtitles):  # another video of that name; hand-made subtitles
        persons.write_text("a person's file")
        code, out, err = run(capsys, *quick(song, *workdir))
        assert code == 2 and f"{persons} exists and no run in" in err
        assert "--overwrite" in err and err.count("\n") == 1 and persons.read_text() == "a person's file"
        assert not (tmp_path / "wd").exists()  # refused before any work
        persons.unlink()
    subtitles.write_text("hand-made")
    assert run(capsys, *quick(song, *workdir, "--overwrite"))[0] == 0
    assert "a light in the storm" in subtitles.read_text()
    assert run(capsys, *quick(song, *workdir, "--seed", "3"))[0] == 0  # its own files it replaces
    subtitles.write_text(subtitles.read_text() + "\nedited by hand\n")
    code, out, err = run(capsys, *quick(song, *workdir))
    assert code == 2 and str(subtitles) in err and "edited by hand" in subtitles.read_text()


def test_the_video_o_names_is_replaced_only_when_ours_or_with_overwrite(capsys, tmp_path):
    song, other, output = make_tone(tmp_path / "song.wav", 2), make_tone(tmp_path / "other.wav", 3), tmp_path / "o.mp4"
    for persons in (output, output.with_suffix(".srt")):  # a person's video at the name -o gives; their subtitles
        persons.write_text("a person's file")
        code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))
        assert code == 2 and f"{persons} exists and no run in" in err
        assert err.count("\n") == 1 and persons.read_text() == "a person's file" and not (tmp_path / "wd").exists()
        persons.unlink()
    assert run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))[0] == 0
    assert run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output, "--seed", "3"))[0] == 0  # its own
    ours = digest(output)
    code, out, err = run(capsys, *quick(other, "--workdir", tmp_path / "wd2", "-o", output))  # another song's
    assert code == 2 and f"{output} exists and no run in" in err and err.count("\n") == 1
    assert digest(output) == ours and not (tmp_path / "wd2").exists()
    assert run(capsys, *quick(other, "--workdir", tmp_path / "wd2", "-o", output, "--overwrite"))[0] == 0
    assert digest(output) != ours and output.read_bytes()[4:8] == b"ftyp"


def test_a_batch_rows_named_video_made_by_a_person_is_kept_under_force(capsys, tmp_path):
    make_tone(tmp_path / "a.wav", 2)
    (tmp_path / "mine.csv").write_text("path,output\na.wav,mine.mp4\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "mine.mp4").write_text("a person's video")
    argv = ["batch", tmp_path / "mine.csv", "-o", tmp_path / "out", *TINY_QUIET, "--force", "--workdir", tmp_path / "w"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and "song 1 (a.wav): " in err and "exists and no run in" in err
    assert (tmp_path / "out" / "mine.mp4").read_text() == "a person's video" and not (tmp_path / "w").exists()


@pytest.mark.parametrize("output", ["", ".", "/", "..", "../", "v.mp4/", "http://x.mp4", "s3://b/v.mp4"])
def test_an_o_that_names_no_file_is_refused_in_one_sentence(capsys, tmp_path, output, monkeypatch):
    """`-o v.mp4/` names a folder (it wrote the file v.mp4); `-o http://x.mp4` wrote http:/x.mp4 (round 13)."""
    monkeypatch.chdir(tmp_path)
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "w", "-o", output))
    reason = {"": "argument -o/--output: is empty", "v.mp4/": "'v.mp4/' ends in '/', so it names a folder: give a file"}
    reason |= {
        url: f"'{url}' is a URL: musicvid reads and writes files here" for url in ("http://x.mp4", "s3://b/v.mp4")
    }
    assert code == 2 and reason.get(output, "-o names no file") in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == ["lyrics.lrc", "song.wav"]  # (quick writes the lyrics)


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="no /proc here")
def test_an_o_in_a_folder_where_no_file_can_be_made_is_refused_before_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    for output in ("/proc/x.mp4", "/proc/a/b/x.mp4"):  # /proc: writable to os.access as root, yet no file is made
        code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "w", "-o", output))
        assert code == 2 and f"output {output} cannot be written" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


def test_an_input_storyboard_stays_byte_identical(capsys, tmp_path):
    song, workdir = make_tone(tmp_path / "song.wav", 2), work_directory(tmp_path / "w")
    Image.new("RGB", (64, 64), "teal").save(tmp_path / "pin.png")
    board = valid_board() | {"audio": {"path": "../song.wav", "sha256": "", "duration": 2.0}}
    board["scenes"] = [dict(board["scenes"][0], end=2.0, picture="../pin.png")]  # relative to the file
    storyboard = workdir / "storyboard.json"  # the work directory's own, edited by hand
    storyboard.write_text(json.dumps(board, indent=4))  # not as musicvid writes it
    before = storyboard.read_bytes()
    argv = ["render", song, "--models", "tiny", "-q", "--fps", "2", "--storyboard", storyboard]
    assert run(capsys, *argv, "--workdir", workdir, "-o", tmp_path / "v.mp4")[0] == 0
    assert storyboard.read_bytes() == before


def test_an_output_name_too_long_to_write_is_refused_before_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "w", "-o", tmp_path / ("v" * 296 + ".mp4")))
    assert code == 2 and "is too long (300 bytes" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("case", ["the song", "its subtitles are the lyrics", "a hard link to the song"])
def test_an_output_that_is_an_input_is_refused_before_any_work(capsys, tmp_path, case):
    song = make_tone(tmp_path / "song.mp3", 2)
    lyrics = tmp_path / "song.srt"
    lyrics.write_text("1\n00:00:00,500 --> 00:00:01,500\na light in the storm\n")
    link = tmp_path / "link.mp4"
    os.link(song, link)
    output = {"the song": song, "its subtitles are the lyrics": tmp_path / "song.mp4", "a hard link to the song": link}
    kept = {path: digest(path) for path in (song, lyrics)}
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--lyrics", lyrics, "--workdir", tmp_path / "w", "-o", output[case]
    )
    assert code == 2 and "would write over it" in err and err.count("\n") == 1
    assert {path: digest(path) for path in kept} == kept
    assert not (tmp_path / "w").exists()  # nothing was decoded, nothing transcribed


def test_the_default_name_steps_aside_from_lyrics_beside_the_song(tmp_path):
    from musicvid.prepare import default_output
    from musicvid.settings.render import RenderSettings
    from musicvid.settings.song import SongRequest

    song = tmp_path / "song.mp3"
    lyrics = tmp_path / "song.srt"
    assert default_output(SongRequest(song=song), RenderSettings()) == tmp_path / "song.mp4"
    assert default_output(SongRequest(song=song, lyrics_file=lyrics), RenderSettings()) == tmp_path / "song.video.mp4"
    clip = tmp_path / "clip.mp4"
    preview = RenderSettings(preview=True)
    assert default_output(SongRequest(song=clip), preview) == tmp_path / "clip.preview.mp4"


def test_o_takes_only_video_names(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "-o", tmp_path / "v.srt")
    assert code == 2 and "must name a video file ending in .mp4" in err
    assert not (tmp_path / "v.srt").exists()


@pytest.mark.parametrize("suffix", VIDEO_SUFFIXES)
def test_every_name_o_takes_is_written_as_a_video(tmp_path, suffix):
    frames = [np.full((64, 64, 3), level, np.uint8) for level in (0, 128, 255)]
    output = tmp_path / f"v{suffix}"
    encode_video(frames, width=64, height=64, fps=10, audio=None, output=output)
    with av.open(str(output)) as container:
        assert container.streams.video[0].codec_context.name == "h264"
    assert video_frames(output) == 3


def test_a_storyboard_its_loader_would_refuse_is_never_saved(tmp_path):
    scene = Scene(0, "lyric", 0.0, 2.0, "a light", "a lighthouse", 1, confidence="high")
    storyboard = Storyboard(SongAudio(2.0), scenes=[scene])
    with pytest.raises(UserError, match=r"scenes\[0\].confidence must be a number"):
        (tmp_path / "storyboard.json").write_text(storyboard.text())
    assert not (tmp_path / "storyboard.json").exists()


@pytest.mark.parametrize(
    "output, workdir, says",
    [
        ("v.mp4", "v.mp4/wd", "lies under"),  # -o would be made a folder by the work directory
        ("a/v.mkv", "a/v.mkv/b/c/wd", "lies under"),
        ("v.mp4", "v.srt/wd", "lies under"),  # the .srt beside the video
        ("wd/v.mp4", "wd", "lies in the work directory"),
        ("wd/frames/v.mov", "wd", "lies in the work directory"),
    ],
)
def test_an_output_and_the_work_directory_never_hold_each_other(capsys, tmp_path, output, workdir, says):
    song = make_tone(tmp_path / "song.wav", 2)
    code, _, err = run(capsys, *quick(song, "--workdir", tmp_path / workdir, "-o", tmp_path / output))
    assert code == 2 and says in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lyrics.lrc", "song.wav"]  # nothing made, no work


@pytest.mark.parametrize("output", ["wdA/video.mp4", "wdA/lyrics.srt.mp4", "wdA/keyframes/v.mp4", "wdA/new/v.mkv"])
def test_an_output_in_another_songs_work_directory_is_refused(capsys, tmp_path, output):
    song, other = make_tone(tmp_path / "song.wav", 2), work_directory(tmp_path / "wdA")  # another song's, locked
    (other / "keyframes").mkdir()
    (other / "video.mp4").write_bytes(b"song A's video")
    before = sorted(p.relative_to(other) for p in other.rglob("*"))
    code, _, err = run(capsys, *quick(song, "--workdir", tmp_path / "wdt", "-o", tmp_path / output))
    assert code == 2 and f"lies in the work directory {other}" in err and err.count("\n") == 1
    assert sorted(p.relative_to(other) for p in other.rglob("*")) == before and not (tmp_path / "wdt").exists()
    assert (other / "video.mp4").read_bytes() == b"song A's video"


def test_an_output_written_by_another_run_meanwhile_is_never_replaced(tmp_path):
    """Two renders checked the same free -o before either began; the later to finish refuses, and leaves the
    earlier's video (another work directory's, so not ours) as it is, with no temporary beside it."""
    mine, theirs = Workdir(work_directory(tmp_path / "mine")), Workdir(work_directory(tmp_path / "theirs"))
    output = tmp_path / "out" / "video.srt"
    write_output(theirs, output, False, "their lines")
    with pytest.raises(UserError, match="written by something else while this render ran"):
        write_output(mine, output, False, "my lines")
    assert output.read_text() == "their lines" and os.listdir(output.parent) == ["video.srt"]
    write_output(theirs, output, False, "their lines, again")  # its own: replaced
    link = tmp_path / "out" / "link.srt"
    link.symlink_to(tmp_path / "nowhere.srt")  # a person's link, even one to nothing, is theirs
    with pytest.raises(UserError):
        write_output(mine, link, False, "my lines")
    assert link.is_symlink() and output.read_text() == "their lines, again"
    write_output(mine, output, True, "my lines")  # --overwrite
    assert output.read_text() == "my lines"


def test_an_outputs_folder_another_run_took_as_its_work_directory_meanwhile_is_left_alone(tmp_path):
    output = tmp_path / "shared" / "video.srt"
    work_directory(output.parent)  # `musicvid render other.mp3 --workdir shared`, begun after this run's checks
    with pytest.raises(UserError, match="lies in the work directory"):
        write_output(Workdir(work_directory(tmp_path / "mine")), output, False, "my lines")
    assert not output.exists()


@pytest.mark.slow
@pytest.mark.parametrize("meanwhile", ["replaced", "removed"])
def test_a_song_changed_while_it_is_rendered_is_never_muxed_under_its_old_pictures(
    capsys, tmp_path, monkeypatch, meanwhile
):
    song, other, output = make_tone(tmp_path / "song.wav", 2), make_tone(tmp_path / "other.wav", 3), tmp_path / "o.mp4"
    muxed = deliver.encode_video

    def changed_then_muxed(*args, **kwargs):  # the person saves another take under the song's name mid-render
        song.unlink()
        if meanwhile == "replaced":
            other.rename(song)
        muxed(*args, **kwargs)

    monkeypatch.setattr(deliver, "encode_video", changed_then_muxed)
    code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))
    assert code == 2 and f"the song {song} changed or went while it was rendered" in err and err.count("\n") == 1
    assert not output.exists() and not list((tmp_path / "wd").glob("*.mp4"))


@pytest.mark.slow
def test_a_render_sent_sigterm_ends_as_ctrl_c_does_and_resumes(capsys, tmp_path, monkeypatch):
    song, output = make_tone(tmp_path / "song.wav", 2), tmp_path / "o.mp4"
    muxed = deliver.encode_video

    def terminated_then_muxed(*args, **kwargs):  # `kill PID` as the video is muxed
        os.kill(os.getpid(), signal.SIGTERM)
        muxed(*args, **kwargs)

    monkeypatch.setattr(deliver, "encode_video", terminated_then_muxed)
    code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))
    assert code == 143 and "musicvid: stopped (SIGTERM); run the same command again" in err and err.count("\n") == 1
    assert not output.exists() and not list(tmp_path.rglob(".musicvid-[0-9]*"))  # no temporary left
    monkeypatch.setattr(deliver, "encode_video", muxed)
    assert run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))[0] == 0  # the lock was let go


def test_a_full_disk_names_the_file_it_stopped_not_its_temporary():
    error = OSError(errno.ENOSPC, "No space left on device", "/videos/.musicvid-4242.o.mp4.k3j5h2g1.mp4")
    assert str(out_of_room(error)).startswith(
        "the disk is full, where /videos/o.mp4 was being written; free some space"
    )


def test_a_temporary_of_a_name_with_a_line_break_is_known_as_ours(tmp_path):
    output = tmp_path / "o\nn.mp4"
    made = new_temporary(output)
    assert temporary_of(made) == (os.getpid(), "o\nn.mp4")
