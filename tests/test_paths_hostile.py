"""Paths the system or the run's records cannot take, refused in one sentence before any work (exit 2): a byte that
is not UTF-8 in a path's absolute form (the current folder's name too), a name over 255 bytes or a path over 4,096,
a folder without search permission, a song that cannot be read (in a batch, its row fails at its turn and the others
are made); and a song's default work directory named so that the file system takes it.

The tests run as root on some machines, where permission bits are not obeyed: a permission the system refuses is
simulated by raising its error from os.stat or Path.open for the path, which is what the system does for a user."""

import errno
import json
import os
from pathlib import Path

import pytest

from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256
from musicvid.core.workdir import WORK_ROOT, Workdir
from musicvid.prepare import check_before_work
from musicvid.settings.presets import PRESETS
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from tests.helpers import make_tone, run

NOT_UTF8 = os.fsdecode(b"d\xe9")  # a folder's name in Latin-1, as the command line hands it over
LONG_NAME = "a" * 300  # over the 255 bytes a file system takes in a name
SHOWN = 40  # a long path's characters shown at each end


def long_path(root: Path) -> Path:
    """A path over the 4,096 bytes the system takes (18 folders of 250 bytes), made of names it takes."""
    return root.joinpath(*["d" * 250] * 18)


def files_under(folder: Path) -> list[str]:
    return sorted(os.fsencode(p.relative_to(folder)).decode("utf-8", "backslashreplace") for p in folder.rglob("*"))


def refused(capsys, *argv) -> str:
    """`musicvid ARGV` with the tiny models, refused in one sentence: its stderr."""
    code, _, err = run(capsys, *argv, "--models", "tiny", "-q")
    assert code == 2 and err.count("\n") == 1 and "rerun with --debug" not in err, err
    return err


def denied(monkeypatch, *, stat_under: Path | None = None, opened: Path | None = None) -> None:
    """The system's refusal, as a user meets it: os.stat of anything under `stat_under` (a folder without search
    permission), and opening `opened` (a file without read permission)."""
    real_stat, real_open = os.stat, Path.open

    def stat(path, *args, **kwargs):
        if (
            stat_under is not None
            and not isinstance(path, int)
            and Path(os.path.abspath(path)).is_relative_to(stat_under)
        ):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    def open_(self, *args, **kwargs):
        if opened is not None and os.path.abspath(self) == str(opened):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    monkeypatch.setattr(Path, "open", open_)


@pytest.fixture
def song(tmp_path) -> Path:
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "a.lrc").write_text("[00:00.20]hello\n")
    return tmp_path / "a.wav"


# --- 1. a byte that is not UTF-8 in a path's absolute form --------------------------------------------------------


def test_a_relative_song_in_a_folder_whose_name_is_not_utf8_is_refused_before_any_work(capsys, tmp_path, monkeypatch):
    folder = tmp_path / NOT_UTF8
    folder.mkdir()
    make_tone(folder / "a.wav", 1)
    (folder / "a.lrc").write_text("[00:00.20]hello\n")
    monkeypatch.chdir(folder)  # the person typed nothing odd: the folder they are in has the byte
    before = files_under(tmp_path)
    err = refused(capsys, "render", "a.wav", "--lyrics", "a.lrc")
    assert "the folder d\\xe9" in err and "not UTF-8" in err and "rename it" in err, err
    assert files_under(tmp_path) == before  # no musicvid-work/, no video


@pytest.mark.parametrize("command", ["render", "batch"])
def test_an_o_that_is_not_utf8_is_refused_before_any_work(capsys, tmp_path, monkeypatch, song, command):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pl.m3u").write_text("a.wav\n")
    before = files_under(tmp_path)
    if command == "render":
        err = refused(capsys, "render", song, "--lyrics", song.with_suffix(".lrc"), "-o", os.fsdecode(b"o\xff.mp4"))
    else:
        err = refused(capsys, "batch", tmp_path / "pl.m3u", "-o", os.fsdecode(b"out\xff"))
    assert "\\xff" in err and "not UTF-8" in err, err
    assert files_under(tmp_path) == before  # in a batch, no -o made, no lock in it


def test_a_work_directory_that_is_not_utf8_is_refused(capsys, tmp_path, monkeypatch, song):
    folder = tmp_path / NOT_UTF8
    folder.mkdir()
    monkeypatch.chdir(folder)  # the default work directory, musicvid-work/, would be made here
    err = refused(capsys, "render", song, "--lyrics", song.with_suffix(".lrc"), "-o", tmp_path / "v.mp4")
    assert "the work directory musicvid-work/" in err and "the folder d\\xe9" in err, err
    assert not (folder / WORK_ROOT).exists()


# --- 2. a song that cannot be read ----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["no read permission", "a folder without search permission"])
@pytest.mark.parametrize("command", ["render", "storyboard"])
def test_a_song_that_cannot_be_read_is_refused_in_one_sentence(capsys, tmp_path, monkeypatch, song, where, command):
    if where == "no read permission":
        denied(monkeypatch, opened=song)
    else:
        folder = tmp_path / "nox"
        folder.mkdir()
        song = song.rename(folder / song.name)
        denied(monkeypatch, stat_under=folder)
    before = files_under(tmp_path)
    err = refused(capsys, command, song, "--lyrics", tmp_path / "a.lrc", "--workdir", tmp_path / "wd")
    assert "Permission denied" in err and song.name in err, err
    assert files_under(tmp_path) == before


def test_a_batch_reports_a_song_that_cannot_be_read_as_failed_and_makes_the_others(capsys, tmp_path, monkeypatch):
    from musicvid.batch import command
    from musicvid.batch.report import Result

    make_tone(tmp_path / "a.wav", 1)
    make_tone(tmp_path / "u.wav", 1)
    (tmp_path / "pl.m3u").write_text("u.wav\na.wav\n")
    monkeypatch.chdir(tmp_path)
    denied(monkeypatch, opened=tmp_path / "u.wav")
    rendered = []

    def render_locally(registry, jobs, finished):  # (the render itself is tested elsewhere)
        for job in jobs:
            rendered.append(job.entry.path.name)
            finished(job, Result(str(job.entry.path), "done", str(job.output)))

    monkeypatch.setattr(command, "render_locally", render_locally)
    code, _, err = run(capsys, "batch", tmp_path / "pl.m3u", "-o", tmp_path / "out", "--models", "tiny", "-q")
    assert code == 1 and "rerun with --debug" not in err, err
    assert rendered == ["a.wav"]
    songs = json.loads((tmp_path / "out" / "report.json").read_text())["songs"]
    assert [row["status"] for row in songs] == ["failed", "done"]
    assert "Permission denied" in songs[0]["error"]


# --- 3. paths the system cannot take --------------------------------------------------------------------------------


@pytest.mark.parametrize("too_long", ["a name over 255 bytes", "a path over 4,096 bytes"])
@pytest.mark.parametrize("given", ["the song", "-o's folder", "--workdir", "a batch's -o"])
def test_a_path_the_system_cannot_take_is_refused_in_one_short_sentence(capsys, tmp_path, song, too_long, given):
    path = tmp_path / LONG_NAME if too_long.startswith("a name") else long_path(tmp_path)
    lyrics, out = tmp_path / "a.lrc", tmp_path / "v.mp4"
    if given == "a batch's -o":
        (tmp_path / "pl.m3u").write_text("a.wav\n")
        argv = ["batch", tmp_path / "pl.m3u", "-o", path]
    else:
        argv = {
            "the song": ["render", path / "a.wav", "--lyrics", lyrics, "-o", out, "--workdir", tmp_path / "wd"],
            "-o's folder": ["render", song, "--lyrics", lyrics, "-o", path / "v.mp4", "--workdir", tmp_path / "wd"],
            "--workdir": ["render", song, "--lyrics", lyrics, "-o", out, "--workdir", path],
        }[given]
    before = files_under(tmp_path)
    err = refused(capsys, *argv)
    assert ("File name too long" in err or "too long (300 bytes" in err) and "…" in err, err
    assert len(err) < 4 * SHOWN + 120, err
    assert files_under(tmp_path) == before


@pytest.mark.parametrize("given", ["-o", "--workdir", "a batch's -o"])
def test_a_name_too_long_below_a_folder_not_there_is_refused_before_a_folder_is_made(capsys, tmp_path, song, given):
    path = tmp_path / "new" / "sub" / LONG_NAME  # (the system says so only when the run makes the folders above it)
    (tmp_path / "pl.m3u").write_text("a.wav\n")
    argv = {
        "-o": ["render", song, "--lyrics", tmp_path / "a.lrc", "-o", path, "--workdir", tmp_path / "wd"],
        "--workdir": ["render", song, "--lyrics", tmp_path / "a.lrc", "-o", tmp_path / "v.mp4", "--workdir", path],
        "a batch's -o": ["batch", tmp_path / "pl.m3u", "-o", path],
    }[given]
    before = files_under(tmp_path)
    err = refused(capsys, *argv)
    assert f"the name {LONG_NAME[:SHOWN]}" in err and "is too long (300 bytes; a file system takes 255)" in err, err
    assert files_under(tmp_path) == before and not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", ["render", "batch"])
def test_an_o_in_a_folder_without_search_permission_is_refused_in_one_sentence(
    capsys, tmp_path, monkeypatch, song, command
):
    folder = tmp_path / "nox"
    folder.mkdir()
    denied(monkeypatch, stat_under=folder)
    (tmp_path / "pl.m3u").write_text("a.wav\n")
    if command == "render":
        argv = ["render", song, "--lyrics", tmp_path / "a.lrc", "--workdir", tmp_path / "wd", "-o", folder / "o.mp4"]
    else:
        argv = ["batch", tmp_path / "pl.m3u", "-o", folder / "out"]
    err = refused(capsys, *argv)
    assert "Permission denied" in err and "nox/o" in err, err
    assert not (tmp_path / "wd").exists()


# --- 4. the default work directory of a song with a long name ------------------------------------------------------


def test_a_long_song_name_gives_a_work_directory_name_the_file_system_takes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sha = "0123456789abcdef"
    for stem in ("a" * 245, "a" * 251, "é" * 127):  # 245 to 254 bytes: with the hash, over 255
        root = Workdir.for_song(f"{stem}.wav", sha).root
        assert len(os.fsencode(root.name)) <= 255 and root.name.endswith("-0123456789"), root
        with Workdir(root).held():  # made, locked and given back
            assert root.is_dir()
    assert Workdir.for_song("é" * 127 + ".wav", sha).root.name == "é" * 50 + "-0123456789"  # on a boundary
    # a name that fits is kept as it always was: the work directory of a song worked on before is found again
    for stem in ("song", "My Song (live)", "a" * 244, "日本" * 40):
        expected = "My_Song_live" if stem.startswith("My") else stem
        assert Workdir.for_song(f"{stem}.mp3", sha).root == WORK_ROOT / f"{expected}-0123456789"


def test_a_work_directory_that_cannot_be_made_leaves_no_folder_above_it(tmp_path):
    root = tmp_path / "musicvid-work" / LONG_NAME  # (Workdir.check refuses it first; held gives back what it made)
    with pytest.raises(UserError, match="cannot be made: File name too long"):
        with Workdir(root).held():
            pass
    assert files_under(tmp_path) == []


def test_a_run_started_inside_a_work_directory_is_refused_not_nested(capsys, tmp_path, monkeypatch, song):
    held = tmp_path / "wd"
    held.mkdir()
    (held / ".musicvid-lock").write_text("")  # a work directory of musicvid's
    monkeypatch.chdir(held)  # the default work directory would be made inside it
    assert "lies in the work directory" in refused(capsys, "storyboard", song)
    assert sorted(p.name for p in held.iterdir()) == [".musicvid-lock"]


# --- 5. a control character in a path the run makes ------------------------------------------------------------------


@pytest.mark.parametrize(
    "given, control",
    [
        ("-o", "\n"),
        ("-o's folder", "\x1b"),
        ("--workdir", "\t"),
        ("a batch's -o", "\x85"),
        ("the current folder", "\x7f"),
    ],
)
def test_a_path_the_run_makes_with_a_control_character_is_refused_in_one_sentence(
    capsys, tmp_path, monkeypatch, song, given, control
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pl.m3u").write_text("a.wav\n")
    odd = f"a{control}b"
    if given == "the current folder":  # the default work directory, musicvid-work/, would be made in it
        (tmp_path / odd).mkdir()
        monkeypatch.chdir(tmp_path / odd)
    argv = {
        "-o": ["render", song, "--lyrics", "a.lrc", "-o", f"{odd}.mp4", "--workdir", tmp_path / "wd"],
        "-o's folder": ["render", song, "--lyrics", "a.lrc", "-o", f"{odd}/v.mp4", "--workdir", tmp_path / "wd"],
        "--workdir": ["render", song, "--lyrics", "a.lrc", "-o", "v.mp4", "--workdir", odd],
        "a batch's -o": ["batch", "pl.m3u", "-o", odd],
        "the current folder": ["render", song, "--lyrics", tmp_path / "a.lrc", "-o", tmp_path / "v.mp4"],
    }[given]
    before = files_under(tmp_path)
    err = refused(capsys, *argv)  # (one line: the name is shown with its control character as a code point)
    code = f"U+{ord(control):04X}"
    assert f"a{code}b" in err and f"holds a control character ({code})" in err and control not in err[:-1], err
    assert files_under(tmp_path) == before


def test_a_name_with_non_ascii_letters_and_symbols_is_taken(tmp_path, song):
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=tmp_path / "wd ♪ é")
    output = tmp_path / "café ♪.mp4"
    checked = check_before_work(request, PRESETS["tiny"], RenderSettings(), output=output)
    assert checked.output == output and checked.workdir.root == tmp_path / "wd ♪ é"
    assert files_under(tmp_path) == ["a.lrc", "a.wav"]  # checked, nothing written


def test_a_song_named_with_a_control_character_is_shown_on_one_line(capsys, tmp_path, song):
    song = song.rename(tmp_path / "a\nb\x1b[31m.wav")  # the person's file: read, and named in a message as it prints
    err = refused(capsys, "render", song, "--lyrics", tmp_path / "a.lrc", "--workdir", tmp_path / "wd")
    assert "aU+000AbU+001B[31m.mp4" in err and "holds a control character (U+000A)" in err, err


@pytest.mark.parametrize("song", [".", "/", ".."])
def test_a_song_named_as_a_folder_alone_is_refused_before_a_video_is_named_after_it(
    capsys, tmp_path, monkeypatch, song
):
    monkeypatch.chdir(tmp_path)  # ("." and ".." name no file, so no video beside them can be named for the song)
    for command in ("render", "storyboard", "plan"):
        assert refused(capsys, command, song) == f"musicvid: {song} is a directory, not a file (audio file wanted)\n"
    assert not any(tmp_path.iterdir())


def test_a_video_a_render_made_or_a_file_in_a_work_directory_is_refused_as_a_song(capsys, tmp_path, monkeypatch):
    """No output is ever an input: `render clip.mp4`, its copy as .m4a, or a work directory's own video.mp4 rendered
    musicvid's own video as a song (a batch refused the same files)."""
    from musicvid.core.outputs import remember
    from tests.helpers import work_directory

    monkeypatch.chdir(tmp_path)  # (where the songs' work directories are: musicvid-work/)
    song = make_tone(tmp_path / "a.wav", 1)
    video = tmp_path / "clip.mp4"
    video.write_bytes(b"\x00\x00\x00\x18ftypisom" + os.urandom(64))  # as a render of a.wav records its video
    workdir = Workdir(work_directory(Workdir.for_song(song, file_sha256(song)).root))
    remember(workdir, video, video)
    (tmp_path / "copy.m4a").write_bytes(video.read_bytes())
    for made in (video, tmp_path / "copy.m4a"):
        err = refused(capsys, "render", made)  # (the work directory here records no song: it was never rendered)
        assert err == f"musicvid: {made} is a video musicvid made for the song of {workdir.root}, not a song\n"
    inside = workdir.root / "video.mp4"
    inside.write_bytes(os.urandom(64))  # (not recorded: a work directory's own)
    err = refused(capsys, "render", inside, "-o", tmp_path / "v.mp4")
    assert f"lies in the work directory {workdir.root.resolve()}, which holds musicvid's own files" in err, err
    assert not (tmp_path / "v.mp4").exists()


@pytest.mark.parametrize(
    "given, hint",
    [
        (["-o", "-y.mp4"], "; a value that starts with '-' is given as --output=-y.mp4"),
        (["--title", "-T"], "; a value that starts with '-' is given as --title=-T"),
        (["-o", "-q"], ""),  # (an option of its own: the value was left out)
    ],
)
def test_a_value_that_starts_with_a_dash_is_said_how_to_give(capsys, tmp_path, monkeypatch, given, hint):
    monkeypatch.chdir(tmp_path)
    make_tone(tmp_path / "song.wav", 2)
    code, _, err = run(capsys, "render", "song.wav", "--models", "tiny", *given)
    assert code == 2 and err.count("\n") == 1
    assert err.endswith(f"expected one argument{hint} (see musicvid render --help)\n")
    assert os.listdir(tmp_path) == ["song.wav"]
