"""Nothing lost, round 3: a run deletes and replaces only what musicvid made, reuses a work directory only
for the same audio, never writes an input, and caps its work before doing any. Each test is one finding
of a probe of careless and hostile uses (issue 45)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from musicvid.core.errors import UserError
from musicvid.storyboard.board import MAX_SCENES_PER_SECOND, load_storyboard
from tests.helpers import TINY_QUIET, digest, make_tone, quick, run, valid_board, work_directory
from vipe_core.atomic import temporary_of

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


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


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


def test_another_song_in_a_used_work_directory_is_refused(capsys, tmp_path):
    a, b = make_tone(tmp_path / "a.wav", 2), make_tone(tmp_path / "b.wav", 2, "-af", "volume=0.5")
    same = ["--title", "Same", "--artist", "Same", "--workdir", tmp_path / "wd"]
    assert run(capsys, *quick(a, *same, "-o", tmp_path / "a.mp4"))[0] == 0
    before = {p: digest(p) for p in (tmp_path / "wd").rglob("*") if p.is_file()}
    for argv in (quick(b, *same, "-o", tmp_path / "b.mp4"), ["storyboard", b, "--models", "tiny", "-q", *same]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and "holds the work of another song" in err and str(a) in err and err.count("\n") == 1
    assert not (tmp_path / "b.mp4").exists()
    assert {p: digest(p) for p in (tmp_path / "wd").rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("which", ["the song is its video.mp4", "the lyrics are its lyrics.srt", "a pinned keyframe"])
def test_no_file_of_the_work_directory_is_an_input(capsys, tmp_path, which):
    workdir = tmp_path / "wd"
    (work_directory(workdir) / "keyframes").mkdir()  # musicvid's, where a person put inputs later
    song = make_tone(tmp_path / "song.wav", 2)
    argv = quick(song)
    if which == "the song is its video.mp4":
        song = make_tone(workdir / "video.mp4", 2)  # AAC in an MP4, as songs are downloaded
        argv = quick(song)
    elif which == "the lyrics are its lyrics.srt":
        lyrics = workdir / "lyrics.srt"
        lyrics.write_text("1\n00:00:00,500 --> 00:00:01,500\na light in the storm\n")
        argv = [*argv[:-2], "--lyrics", lyrics]
    else:
        Image.new("RGB", (64, 64), "red").save(workdir / "keyframes" / "0000.png")
        board = valid_board() | {"audio": {"path": str(song), "sha256": "", "duration": 2.0}}
        board["scenes"] = [dict(board["scenes"][0], end=2.0, picture=str(workdir / "keyframes" / "0000.png"))]
        (tmp_path / "board.json").write_text(json.dumps(board))
        argv = [*argv, "--storyboard", tmp_path / "board.json"]
    inputs = {p: digest(p) for p in workdir.rglob("*") if p.is_file()}
    code, out, err = run(capsys, *argv, "--workdir", workdir, "-o", tmp_path / "out.mp4")
    assert code == 2 and "which the run writes" in err and err.count("\n") == 1
    assert {p: digest(p) for p in workdir.rglob("*") if p.is_file()} == inputs
    assert not (tmp_path / "out.mp4").exists()


def test_files_beside_the_song_are_replaced_only_when_ours_or_with_overwrite(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    video, subtitles = tmp_path / "song.mp4", tmp_path / "song.srt"
    workdir = ["--workdir", tmp_path / "wd"]
    for persons in (video, subtitles):  # another video of that name; hand-made subtitles
        persons.write_text("a person's file")
        code, out, err = run(capsys, *quick(song, *workdir))
        assert code == 2 and f"{persons} exists and musicvid did not write it for this song" in err
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


def test_o_names_the_video_but_not_the_files_beside_it(capsys, tmp_path):
    song, output = make_tone(tmp_path / "song.wav", 2), tmp_path / "o.mp4"
    output.write_text("an old video the person chose to replace")
    output.with_suffix(".srt").write_text("hand-made")
    code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))
    assert code == 2 and f"{output.with_suffix('.srt')} exists" in err
    output.with_suffix(".srt").unlink()
    assert run(capsys, *quick(song, "--workdir", tmp_path / "wd", "-o", output))[0] == 0
    assert output.read_bytes()[4:8] == b"ftyp"


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


def test_a_storyboard_of_more_scenes_than_the_song_can_hold_is_refused_before_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 6)
    board = valid_board() | {"audio": {"path": str(song), "sha256": "", "duration": 6.0}}
    n = 3_000
    board["scenes"] = [
        {"index": i, "kind": "lyric", "start": 6 * i / n, "end": 6 * (i + 1) / n, "text": "", "prompt": "", "seed": 1}
        for i in range(n)
    ]
    (tmp_path / "board.json").write_text(json.dumps(board))
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--storyboard", tmp_path / "board.json", "--workdir", tmp_path / "w"
    )
    most = 6 * MAX_SCENES_PER_SECOND
    assert code == 2 and f"scenes must be at most {most} for 6 s of song" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()
    board["scenes"] = board["scenes"][:most]
    for i, scene in enumerate(board["scenes"]):
        scene.update(start=i / MAX_SCENES_PER_SECOND, end=(i + 1) / MAX_SCENES_PER_SECOND)
    (tmp_path / "board.json").write_text(json.dumps(board))
    assert len(load_storyboard(tmp_path / "board.json").scenes) == most  # the limit itself is taken


@pytest.mark.parametrize("kind", ["one line of 5 MB", "a file of 5 MB", "a line of too many words"])
def test_lyrics_beyond_any_songs_are_refused_before_work(capsys, tmp_path, kind):
    song = make_tone(tmp_path / "song.wav", 2)
    lyrics = tmp_path / "lyrics.txt"
    text = {
        "one line of 5 MB": "la " * 1_700_000,
        "a file of 5 MB": "la la la\n" * 580_000,
        "a line of too many words": "la " * 1_200,
    }[kind]
    lyrics.write_text(text)
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    reason = "words, more than the 1,000 a line may have" if "words" in kind else "is over 100,000 characters"
    assert code == 2 and reason in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("what", ["-o", "song", "--lyrics", "--workdir"])
def test_a_loop_of_symbolic_links_is_one_sentence(capsys, tmp_path, what):
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    loop = tmp_path / "a"
    argv = {
        "-o": ["render", song, "-o", loop / "v.mp4"],
        "song": ["render", loop],
        "--lyrics": ["render", song, "--lyrics", loop],
        "--workdir": ["render", song, "--workdir", loop / "w"],
    }[what]
    code, out, err = run(capsys, *argv, "--models", "tiny", "-q")
    assert code == 2 and "loop of symbolic links" in err and err.count("\n") == 1


def test_an_output_name_too_long_to_write_is_refused_before_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, *quick(song, "--workdir", tmp_path / "w", "-o", tmp_path / ("v" * 296 + ".mp4")))
    assert code == 2 and "is too long (300 bytes" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()


def cut(path: Path, share: float) -> Path:
    """The file cut to `share` of its bytes (its header still declares the whole length)."""
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * share)])
    return path


def test_a_short_song_is_judged_by_a_tolerance_that_suits_it(tmp_path):
    from musicvid.core.audio import load_audio

    # an MP3 of half a second whose header declares a tenth of a second more than it holds: a song
    short = cut(make_tone(tmp_path / "short.mp3", 0.5), 0.7)
    assert 0.25 < load_audio(short).info.duration < 0.45
    with pytest.raises(UserError, match="looks truncated or corrupt"):  # half of a 10 s song: cut off
        load_audio(cut(make_tone(tmp_path / "long.mp3", 10), 0.5))


@pytest.mark.parametrize("where", ["pinned", "reference"])
def test_a_truncated_picture_is_refused_before_any_work(capsys, tmp_path, where):
    song = make_tone(tmp_path / "song.wav", 2)
    picture = tmp_path / "cut.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (256, 256, 3), np.uint8)).save(picture)
    picture.write_bytes(picture.read_bytes()[: os.path.getsize(picture) // 2])  # its header says 256x256
    board = valid_board() | {"audio": {"path": str(song), "sha256": "", "duration": 2.0}}
    board["scenes"] = [dict(board["scenes"][0], end=2.0, **({"picture": str(picture)} if where == "pinned" else {}))]
    (tmp_path / "board.json").write_text(json.dumps(board))
    extra = ["--reference", picture] if where == "reference" else []
    code, out, err = run(
        capsys,
        "render",
        song,
        *TINY_QUIET,
        "--storyboard",
        tmp_path / "board.json",
        "--workdir",
        tmp_path / "w",
        *extra,
    )
    assert code == 2 and "does not decode whole" in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()
