"""Nothing lost, round 4: a work directory is musicvid's or empty, and everything a run will write is checked
before the work: its outputs against its work directory, the kinds of the work directory's files, the rate a
render's timings.json records, and a batch row's song against every file another row writes. Each test is one
finding of a probe of careless and hostile uses (issue 50), tried on variants of it."""

import json

import pytest
from PIL import Image

from musicvid.core.files import file_sha256
from musicvid.core.workdir import Workdir
from tests.helpers import digest, make_tone, quick, run, valid_board, work_directory


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


def keyframed_render(folder):
    """A render's storyboard and keyframes (what `score` reads), in `folder`."""
    (folder / "storyboard.json").write_text(json.dumps(valid_board()))
    (folder / "keyframes").mkdir()
    for scene in (0, 1):
        Image.new("RGB", (64, 64), (40 * scene, 90, 200)).save(folder / "keyframes" / f"{scene:04d}.png")
    return folder


@pytest.mark.parametrize("names", [["score.png"], ["contact_sheet.png", "score.json"], ["notes.txt"]])
def test_score_in_a_persons_folder_is_refused_and_replaces_nothing(capsys, tmp_path, names):
    (tmp_path / "mine").mkdir()
    mine = persons_folder(keyframed_render(tmp_path / "mine"), names)
    before = tree(mine)
    code, _, err = run(capsys, "score", mine, "--models", "tiny")
    assert code == 2 and "which musicvid did not make" in err and err.count("\n") == 1
    assert tree(mine) == before


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


@pytest.mark.parametrize("name", ["outputs.json", "timings.json", "storyboard.json", "contact_sheet.png"])
def test_a_work_directory_file_that_is_a_folder_is_refused_before_the_work(capsys, tmp_path, name):
    song = make_tone(tmp_path / "song.wav", 2)
    workdir = work_directory(tmp_path / "w")
    (workdir / name / "x").mkdir(parents=True)
    code, _, err = run(capsys, *quick(song, "--workdir", workdir, "-o", tmp_path / "v.mp4"))
    assert code == 2 and f"{workdir / name} is a folder, where musicvid keeps a file" in err and err.count("\n") == 1
    assert sorted(p.name for p in workdir.iterdir()) == [".musicvid-lock", name]  # nothing made


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


def another_rows_file(tmp_path, default_workdirs: bool, name: str):
    """A CSV of two rows, the second of which reads the file `name` of the first row's work directory (there
    from an earlier run, as an audio file where it is a song)."""
    first = make_tone(tmp_path / "a.wav", 2)
    root = Workdir.for_song(first, file_sha256(first)).root if default_workdirs else tmp_path / "w" / "a"
    workdir = work_directory(root if root.is_absolute() else tmp_path / root)
    if name == "lyrics.srt":
        (workdir / name).write_text("1\n00:00:00,500 --> 00:00:01,500\na light\n")
        make_tone(tmp_path / "b.wav", 2)
        return f"path,lyrics\na.wav,\nb.wav,{workdir / name}\n"
    make_tone(workdir / name, 2)
    return f"path\na.wav\n{workdir / name}\n"


@pytest.mark.parametrize(
    "default_workdirs, name", [(False, "video.mp4"), (True, "video.mp4"), (False, "lyrics.srt"), (True, "preview.mp4")]
)
def test_a_batch_row_that_reads_a_file_another_row_writes_is_refused_before_the_first(
    capsys, tmp_path, monkeypatch, default_workdirs, name
):
    monkeypatch.chdir(tmp_path)  # (the default work directories, musicvid-work/, are made here)
    (tmp_path / "s.csv").write_text(another_rows_file(tmp_path, default_workdirs, name))
    workdirs = [] if default_workdirs else ["--workdir", tmp_path / "w"]
    code, _, err = run(capsys, "batch", tmp_path / "s.csv", "-o", tmp_path / "out", "--models", "tiny", "-q", *workdirs)
    assert code == 2 and "song 2" in err and f"is the {name} of song 1 (a.wav)'s work directory" in err, err
    assert not (tmp_path / "out").exists()  # refused before the first row
