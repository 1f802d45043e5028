"""The work directory: one run holds it (a second is refused; one that waits gets it once the other lets it
go), it holds one song's work (another song's audio is refused), it is musicvid's or empty (a person's folder is
refused, naming a file, and loses nothing, `score`'s too), its files and folders are of the kinds musicvid keeps,
none of its files is an input, and what it records is checked as the option it stands for is (the rate
timings.json holds)."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import av
import pytest
from PIL import Image

from musicvid import prepare
from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256
from musicvid.core.workdir import LOCK, Workdir, is_work_directory
from tests.helpers import dead_pid, digest, make_tone, quick, run, valid_board, video_frames, work_directory


def tree(folder):
    """Every file and folder under `folder`, with each file's digest: what a refused run must leave as it was."""
    return {path: digest(path) if path.is_file() else None for path in sorted(folder.rglob("*"))}


def persons_folder(folder, names):
    """A folder of a person's files, some of them at the names of musicvid's work directory."""
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"the person's own {name}")
    return folder


@pytest.mark.parametrize(
    "names, command, options",
    [
        (["video.mp4", "lyrics.srt", "timings.json", "contact_sheet.png"], "render", ["-o", "out.mp4"]),
        (["keyframes/0000.png", "frames/000001.png"], "render", ["--overwrite"]),
        (["storyboard.json", "transcript.json"], "storyboard", []),
        ([".DS_Store"], "render", ["--overwrite", "-o", "out.mp4"]),
        (["holiday.mov", "notes.txt"], "storyboard", ["--keyframes"]),
    ],
)
def test_a_persons_folder_as_work_directory_is_refused_naming_a_file_and_loses_nothing(
    capsys, tmp_path, names, command, options
):
    song = make_tone(tmp_path / "song.wav", 2)
    lyrics = tmp_path / "song.lrc"
    lyrics.write_text("[00:00.50]a light in the storm\n")
    mine = persons_folder(tmp_path / "mine", names)
    before = tree(mine)
    options = [tmp_path / option if option.endswith(".mp4") else option for option in options]
    code, out, err = run(
        capsys, command, song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", mine, *options
    )
    assert code == 2 and err.count("\n") == 1 and not out
    assert any(f"holds {name.split('/')[0]}, which musicvid did not make" in err for name in names), err
    assert tree(mine) == before and sorted(p.name for p in tmp_path.iterdir()) == ["mine", "song.lrc", "song.wav"]


@pytest.mark.parametrize("given", ["nothere/..", "mine/nothere/../.", "./nothere/../"])
def test_a_work_directory_through_dot_dot_is_checked_as_the_folder_it_names(tmp_path, monkeypatch, given):
    """`nothere/..` with no `nothere/` yet was taken for a new folder, then written as the one it names."""
    mine = persons_folder(tmp_path / "mine", ["video.mp4"])
    monkeypatch.chdir(tmp_path if given.startswith("mine") else mine)
    workdir = Workdir(Path(given))
    assert workdir.root == Path("mine" if given.startswith("mine") else ".")
    with pytest.raises(UserError, match="holds video.mp4, which musicvid did not make"):
        workdir.check()
    (mine / "link").symlink_to(tmp_path)
    assert Workdir(mine / "link" / "x" / "..").root == mine / "link"  # links stay as given: not resolved


def keyframed_render(folder):
    """A render's storyboard and keyframes (what `score` reads), in `folder`."""
    (folder / "storyboard.json").write_text(json.dumps(valid_board()))
    (folder / "keyframes").mkdir()
    for scene in (0, 1):
        Image.new("RGB", (64, 64), (40 * scene, 90, 200)).save(folder / "keyframes" / f"{scene:04d}.png")
    return folder


@pytest.mark.parametrize(
    "names, said",
    [  # musicvid's names alone, a song recorded, in a folder not named for it: maybe an older musicvid's, maybe not
        (["score.png"], "has no .musicvid-lock (older musicvids made none): if musicvid made it, `touch"),
        (["contact_sheet.png", "score.json"], "has no .musicvid-lock"),
        (["notes.txt"], "holds keyframes, which musicvid did not make"),
    ],
)
def test_score_in_a_persons_folder_is_refused_and_replaces_nothing(capsys, tmp_path, names, said):
    (tmp_path / "mine").mkdir()
    mine = persons_folder(keyframed_render(tmp_path / "mine"), names)
    before = tree(mine)
    code, _, err = run(capsys, "score", mine, "--models", "tiny")
    assert code == 2 and said in err and err.count("\n") == 1
    assert tree(mine) == before


def older_musicvids_folder(folder, song):
    """`folder` as a render of `song` by a musicvid older than lock files left it (ab2134e): its names alone, no lock,
    no outputs.json, and a storyboard recording the song."""
    board = valid_board() | {"audio": {"path": song.name, "sha256": file_sha256(song), "duration": 2.0}}
    board["scenes"][0]["end"] = board["scenes"][1]["start"] = 1.0
    board["scenes"][1]["end"] = 2.0
    for name in ("frames/000001.png", "keyframes/0000.png", "lyrics.srt", "timings.json", "video.mp4"):
        persons_folder(folder, [name])  # (their bytes are not read before a run replaces them)
    (folder / "storyboard.json").write_text(json.dumps(board, indent=2))
    return folder


def test_an_older_musicvids_work_directory_is_taken_where_named_for_its_song_else_said_how(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    default = Workdir(older_musicvids_folder(tmp_path / Workdir.for_song(song, file_sha256(song)).root, song))
    named = older_musicvids_folder(tmp_path / "old", song)
    before = tree(named)
    code, _, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--workdir", named)
    assert code == 2 and f"`touch {named / LOCK}` and run again" in err and tree(named) == before
    default.check()  # the folder musicvid names for the song it records: taken as it is
    with default.held(sha256=file_sha256(song)):
        pass
    assert is_work_directory(default.root)  # marked musicvid's for good: not given back as a folder found empty is


@pytest.mark.slow
def test_an_older_musicvids_work_directory_is_taken_and_its_storyboard_kept(capsys, caplog, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "song.lrc").write_text("[00:00.50]a light in the storm\n")
    folder = older_musicvids_folder(Workdir.of_song(song, None).root, song)
    board = (folder / "storyboard.json").read_text()
    code, _, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--lyrics", tmp_path / "song.lrc")
    assert code == 0 and is_work_directory(folder), err
    # made anew for these settings: the storyboard, which no outputs.json proves musicvid's own, set aside, and said
    assert (folder / "storyboard.edited-1.json").read_text() == board and "storyboard.edited-1.json" in caplog.text


@pytest.mark.parametrize("name", ["outputs.json", "timings.json", "storyboard.json", "contact_sheet.png"])
def test_a_work_directory_file_that_is_a_folder_is_refused_before_the_work(capsys, tmp_path, name):
    song = make_tone(tmp_path / "song.wav", 2)
    workdir = work_directory(tmp_path / "w")
    (workdir / name / "x").mkdir(parents=True)
    code, _, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "v.mp4"))
    assert code == 2 and f"{workdir / name} is a folder, where musicvid keeps a file" in err and err.count("\n") == 1
    assert sorted(p.name for p in workdir.iterdir()) == [".musicvid-lock", name]  # nothing made


@pytest.mark.parametrize("name", ["keyframes", "storyboard.json"])
def test_a_link_in_place_of_a_work_directory_file_or_folder_is_refused_before_the_work(capsys, tmp_path, name):
    """Round 10: a run wrote its keyframes over the pictures of the person's folder keyframes/ led to; a linked
    storyboard.json was said to be edited while the run drew, and recorded as musicvid's."""
    song = make_tone(tmp_path / "song.wav", 2)
    (mine := tmp_path / "mine").mkdir()
    (mine / "0001.png").write_bytes(b"my picture")
    (mine / "storyboard.json").write_text("{}")
    workdir = work_directory(tmp_path / "w")
    (workdir / name).symlink_to(mine if name == "keyframes" else mine / name)
    code, _, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "v.mp4"))
    assert code == 2 and f"{workdir / name} is a link to {mine}" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in mine.iterdir()) == ["0001.png", "storyboard.json"]
    assert (mine / "0001.png").read_bytes() == b"my picture" and not (tmp_path / "v.mp4").exists()


def test_a_work_directory_folder_that_is_a_file_is_refused_before_the_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    workdir = work_directory(tmp_path / "w")
    (workdir / "keyframes").write_text("not a folder")
    code, _, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "v.mp4"))
    assert code == 2 and "keyframes is a file, where musicvid keeps a folder" in err
    assert sorted(p.name for p in workdir.iterdir()) == [".musicvid-lock", "keyframes"]


@pytest.mark.parametrize("fps", [float("nan"), -4, 0, 0.5, 61, 100000, "ten", True])
def test_a_rate_timings_json_records_is_checked_as_fps_is(capsys, tmp_path, fps):
    workdir = keyframed_render(work_directory(tmp_path / "w"))
    (workdir / "timings.json").write_text(json.dumps({"fps": fps, "frames": 100}))
    code, out, err = run(capsys, "score", workdir, "--models", "tiny")
    assert code == 2 and not out and err.count("\n") == 1
    assert f"{workdir / 'timings.json'} records the rate drawn as" in err and "give --fps" in err, err
    assert sorted(p.name for p in workdir.iterdir()) == [
        ".musicvid-lock",
        "keyframes",
        "storyboard.json",
        "timings.json",
    ]


@pytest.mark.parametrize("given", ["song.wav", "storyboard.json", "link"])
def test_score_of_a_file_says_it_is_a_file(capsys, tmp_path, given):
    make_tone(tmp_path / "song.wav", 1)
    (tmp_path / "storyboard.json").write_text(json.dumps(valid_board()))
    (tmp_path / "link").symlink_to(tmp_path / "song.wav")
    code, _, err = run(capsys, "score", tmp_path / given, "--models", "tiny")
    assert code == 2 and "is a file, not a folder" in err and "does not exist" not in err


@pytest.mark.slow
@pytest.mark.ci  # (a render in a process of its own, paused at its last rename: about 20 s)
def test_a_second_run_on_a_held_work_directory_is_refused_and_the_first_keeps_the_song(capsys, tmp_path, monkeypatch):
    song = make_tone(tmp_path / "clip.mp4", 2)  # a common download: AAC in an MP4, no video
    before = digest(song)
    workdir, go = tmp_path / "w", tmp_path / "go"
    # the first run (no -o) is paused with its video encoded under a temporary name, about to be
    # renamed: the moment a second run's sweep of leftovers would take it away
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.killer",
            "--pause-until",
            go,
            "*/w/video.mp4",
            "1",
            "--",
            *quick(song, "--workdir", workdir),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while not Path(f"{go}.paused").exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert list(workdir.glob(".musicvid-*.video.mp4.*")), (
            first.stderr.read().decode() if first.poll() is not None else ""
        )
        monkeypatch.setattr(prepare, "load_audio", lambda *args: pytest.fail("the song was decoded first"))
        code, out, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "second.mp4"))
        assert code == 2 and "is in use by another musicvid run" in err and err.count("\n") == 1
    finally:
        go.touch()  # the first run goes on, whatever the second did (a test that failed leaves no process)
    try:
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first.returncode == 0, err.decode()
    # the video does not take the song's name: clip.mp4 is still the song
    video = tmp_path / "clip.video.mp4"
    assert out.decode().strip() == str(video) and video_frames(video) == 4
    assert digest(song) == before and (tmp_path / "clip.video.srt").exists()
    assert not (tmp_path / "second.mp4").exists()


def test_a_run_that_waits_gets_the_work_directory_once_the_other_lets_it_go(tmp_path):
    taken, order = threading.Event(), []

    def other() -> None:
        with Workdir(tmp_path / "w").held():
            taken.set()
            time.sleep(0.5)
            order.append("other done")

    thread = threading.Thread(target=other)
    thread.start()
    taken.wait()
    with pytest.raises(UserError, match="in use"):
        with Workdir(tmp_path / "w").held():
            pass
    with Workdir(tmp_path / "w").held(wait=True):
        order.append("waited")
    thread.join()
    assert order == ["other done", "waited"]


def test_a_taken_work_directory_is_cleared_of_a_killed_runs_temporaries_and_of_nothing_else(tmp_path):
    workdir, output = Workdir(tmp_path / "w"), tmp_path / "out" / "song.mp4"
    (tmp_path / "w" / "keyframes").mkdir(parents=True)
    output.parent.mkdir()
    dead = dead_pid()
    leftovers = [
        tmp_path / "w" / f".musicvid-{dead}.storyboard.json.abcd_123.json",
        tmp_path / "w" / "keyframes" / f".musicvid-{dead}.0001.png.abcd_123.png",
        output.parent / f".musicvid-{dead}.song.srt.abcd_123.srt",  # beside the output: its .srt's
    ]
    persons = [tmp_path / "w" / ".notes.txt", output.parent / ".musicvid-mine.txt"]
    for path in leftovers + persons:
        path.write_text("x")
    with workdir.held(output=output):
        assert not any(p.exists() for p in leftovers) and all(p.exists() for p in persons)


def test_a_work_directory_that_is_a_file_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "w").write_text("not a folder")
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--workdir", tmp_path / "w")
    assert code == 2 and "is a file: move it away, or give --workdir another folder" in err
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--workdir", "/dev/null")
    assert code == 2 and "work directory /dev/null is a special file: move it away" in err
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--workdir", tmp_path / "gone")
    assert code == 2 and f"is a link to {tmp_path / 'nowhere'}, where nothing is: give a folder" in err
    assert (tmp_path / "gone").is_symlink() and not (tmp_path / "nowhere").exists()  # (left as it was)
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "-q", "--workdir", tmp_path / "gone" / "w")
    assert code == 2 and f"{tmp_path / 'gone'} is a symbolic link to {tmp_path / 'nowhere'}, where nothing" in err, err


@pytest.mark.skipif(not shutil.which("setpriv"), reason="setpriv (util-linux) runs the command as another user")
@pytest.mark.ci  # (as another user: the work directory's other refusals stay in the suite)
@pytest.mark.slow
def test_a_read_only_work_directory_is_refused_before_any_work(demo_song):
    # as root every folder is writable: the run is made as nobody, for whom this one is read-only
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        folder.chmod(0o777)
        song = shutil.copyfile(demo_song, folder / "song.mp3")
        (folder / "locked").mkdir(mode=0o555)
        (folder / "ours" / "keyframes").mkdir(parents=True)  # a work directory of musicvid's, keyframes/ read-only
        (folder / "ours" / LOCK).touch()
        for path, mode in (("ours", 0o777), (f"ours/{LOCK}", 0o666), ("ours/keyframes", 0o555)):
            (folder / path).chmod(mode)  # (mkdir's mode is masked)
        for workdir in (folder / "locked" / "w", folder / "ours"):
            command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m", "musicvid"]
            command += ["render", str(song), "--models", "tiny", "-q", "--workdir", str(workdir)]
            done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "HOME": str(folder)})
            assert done.returncode == 2, done.stderr
            assert "cannot be written" in done.stderr and "is read-only" in done.stderr, done.stderr
            assert "Traceback" not in done.stderr
        assert sorted(p.name for p in (folder / "ours").iterdir()) == [LOCK, "keyframes"]  # (nothing written)


def test_another_song_in_a_used_work_directory_is_refused(capsys, tmp_path):
    a, b = make_tone(tmp_path / "a.wav", 2), make_tone(tmp_path / "b.wav", 2, "-af", "volume=0.5")
    same = ["--title", "Same", "--artist", "Same", "--workdir", tmp_path / "wd"]
    assert run(capsys, *quick(a, *same, "-o", tmp_path / "a.mp4"))[0] == 0
    with av.open(str(tmp_path / "a.mp4")) as video:  # (the title and artist a player lists)
        assert {k: video.metadata.get(k) for k in ("title", "artist")} == {"title": "Same", "artist": "Same"}
    before = {p: digest(p) for p in (tmp_path / "wd").rglob("*") if p.is_file()}
    for argv in (quick(b, *same, "-o", tmp_path / "b.mp4"), ["storyboard", b, "--models", "tiny", "-q", *same]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and "holds the work of another song" in err and str(a) in err and err.count("\n") == 1
    assert not (tmp_path / "b.mp4").exists()
    assert {p: digest(p) for p in (tmp_path / "wd").rglob("*") if p.is_file()} == before
    shutil.copyfile(b, a)  # round 13: the same name, other bytes, was "another song (a.wav), not a.wav"
    code, out, err = run(capsys, "storyboard", a, "--models", "tiny", "-q", *same)
    assert code == 2 and f"holds the work of {a} as it was before its bytes changed: give another --workdir" in err


@pytest.mark.parametrize(
    "which", ["the song is its video.mp4", "the lyrics are its lyrics.srt", "a pinned keyframe", "a hard link to one"]
)
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
    elif which == "a hard link to one":  # (the same file by another name, outside the work directory)
        Image.new("RGB", (64, 64), "red").save(workdir / "keyframes" / "0000.png")
        os.link(workdir / "keyframes" / "0000.png", tmp_path / "reference.png")
        argv = [*argv, "--reference", tmp_path / "reference.png"]
    else:
        Image.new("RGB", (64, 64), "red").save(workdir / "keyframes" / "0000.png")
        board = valid_board() | {"audio": {"path": str(song), "sha256": "", "duration": 2.0}}
        board["scenes"] = [dict(board["scenes"][0], end=2.0, picture=str(workdir / "keyframes" / "0000.png"))]
        (tmp_path / "board.json").write_text(json.dumps(board))
        argv = [*argv, "--storyboard", tmp_path / "board.json"]
    inputs = {p: digest(p) for p in workdir.rglob("*") if p.is_file()}
    code, out, err = run(capsys, *argv, "--workdir", workdir, "-o", tmp_path / "out.mp4")
    said = (
        "which holds musicvid's own files, not a song"
        if which == "the song is its video.mp4"
        else "which the run writes"
    )
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert {p: digest(p) for p in workdir.rglob("*") if p.is_file()} == inputs
    assert not (tmp_path / "out.mp4").exists()
