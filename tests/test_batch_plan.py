"""What `musicvid batch` plans from its playlist before any song is rendered: the playlist read (M3U, a folder,
a CSV whose rows carry their own settings, a shape and a look), each row's output named (a repeated row made
once, two rows that would share a name refused), and every row's values and files checked before the first
render, an upscaler and another row's outputs included."""

import json
import re
from pathlib import Path

import pytest

from musicvid import cli
from musicvid.batch import command as batch
from musicvid.batch.playlist import Job
from musicvid.core.errors import UserError
from musicvid.core.files import file_sha256
from musicvid.core.workdir import Workdir
from musicvid.models.choose import choose_models
from musicvid.settings.model_choice import ModelChoice
from tests.helpers import make_tone, run, run_batch, valid_board, work_directory


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
    return batch.jobs_of(args, batch.read_playlist(args.playlist), ModelChoice(**ModelChoice.given(args)))


def test_every_row_gets_its_own_output_and_a_repeated_row_is_made_once(tmp_path):
    (tmp_path / "b").mkdir()
    for song in ("a.wav", "b/a.wav"):  # (a song that cannot be read takes no other row's name)
        (tmp_path / song).write_bytes(b"x")
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
    "rows, second, what",
    [
        ("a.wav,clip\nb.wav,CLIP.mp4\n", "song 2 (b.wav)", "clip.mp4"),  # two songs, one name (on any file system)
        ("a.wav,clip.mp4\na.wav,clip.mkv\n", "song 2 (a.wav)", "clip.srt"),  # two videos, one clip.srt
    ],
)
def test_two_rows_that_name_one_output_are_refused(tmp_path, capsys, rows, second, what):
    (tmp_path / "s.csv").write_text("path,output\n" + rows)
    assert run_batch(tmp_path / "s.csv", "-o", tmp_path / "out", "--models", "tiny", "-q") == 2
    err = capsys.readouterr().err
    assert f"song 1 (a.wav) and {second} would both write {what} in -o" in err and err.count("\n") == 1
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


@pytest.mark.parametrize(
    "column, value, reason",
    [
        ("align", "y", "--align must be yes or no"),
        ("preview", "maybe", "preview must be yes or no"),
        ("help", "1", "column 'help' is not a per-song setting"),
        ("models", "tiny", "the whole batch shares it"),
        ("fps", "1e6", "from 1 to 60"),
        ("break", "inf", "--break must be above 0 and at most 3600"),  # else storyboard.json holds Infinity
        ("break", "abc", "b.mp3): --break must be a number, not 'abc'"),  # its option's name, as every door's
        ("steps", "many", "--steps must be a whole number"),
        ("size", "huge", "size must look like 512x512"),
        ("aspect", "21:9", "--aspect must be one of 16:9, 9:16, 1:1, 4:5, not '21:9'"),
        ("output", "../b.mp4", "output '../b.mp4' must be a plain file name inside -o"),
        ("output", "/tmp/b.mp4", "must be a plain file name"),
        ("output", "..", "must be a plain file name"),
        ("output", ".musicvid-batch-lock.mp4", "output '.musicvid-batch-lock.mp4' must not start with a dot"),
        ("output", "b.srt", "must end in .mp4, .m4v, .mov, .mkv or have no suffix"),
        ("output", '"a\nb"', "output 'a\\nb' holds a control character"),  # (not a folder)
        ("output", "x" * 300, "is longer than a file system takes"),
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
    (tmp_path / "s.csv").write_text("path,separate-vocals\na.wav,no\n")
    assert run_batch(tmp_path / "s.csv", *common, "--separator", tmp_path / "junk.pth") == 2
    assert "--separator only acts with --separate-vocals" in capsys.readouterr().err and not out.exists()


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


def test_a_song_in_o_whose_video_would_replace_it_or_its_lyrics_is_named_as_render_names_it(tmp_path):
    from tests.helpers import make_tone

    out = tmp_path / "out"
    out.mkdir()
    make_tone(out / "s.mp4", 1, "-c:a", "aac")  # an audio-only MP4, in -o
    make_tone(out / "t.wav", 1)
    (out / "t.srt").write_text("1\n00:00:00,000 --> 00:00:01,000\nla\n")  # its lyrics, where its captions would be
    (tmp_path / "s.csv").write_text("path,lyrics,output\nout/s.mp4,,\nout/t.wav,out/t.srt,\n")
    assert [job.output.name for job in planned(tmp_path / "s.csv")] == ["s.video.mp4", "t.video.mp4"]
    # another row's song, there or not (v.mp4): a title that names it, in a playlist that has no output column
    make_tone(out / "u.wav", 1)
    (tmp_path / "p.m3u").write_text("#EXTM3U\n#EXTINF:1,s\nout/u.wav\nout/s.mp4\n#EXTINF:1,v\nout/u.wav\nout/v.mp4\n")
    jobs = planned(tmp_path / "p.m3u")
    assert jobs[2].output.name == "v.video.mp4" and not {job.output for job in jobs} & {job.song for job in jobs}


def test_an_m3u_entry_naming_a_folder_by_no_name_fails_at_its_turn_alone(tmp_path, monkeypatch):
    """`.`, `/`, `\\` or `file:///%2e` in an M3U given by a relative path stopped the whole batch with an internal
    error: the lyrics beside such a song were looked up by a name it does not have."""
    monkeypatch.chdir(tmp_path)
    make_tone(tmp_path / "one.wav", 1)
    (tmp_path / "p.m3u").write_text("#EXTM3U\none.wav\n.\n/\n\\\nfile:///%2e\n")
    jobs = planned(Path("p.m3u"))
    assert [str(job.entry.path) for job in jobs] == ["one.wav", ".", "/", "/", "/"]
    assert [batch.song_problem(job) for job in jobs[1:3]] == [
        f"{path} is a directory, not a file (audio file wanted)" for path in (".", "/")
    ]


@pytest.mark.parametrize(
    "cells, options, said",
    [
        ("transition-steps\na.wav,5", [], "--transition-steps only acts with --transitions video"),
        ("align-chunk,align\na.wav,8,no", [], "--align-chunk only acts with the alignment"),
        ("deep-share\na.wav,2", ["--preview"], "--deep-share only acts where the frames between are drawn"),
        (
            "storyboard,seed,separate-vocals\na.wav,b.json,5,yes",
            [],
            "--seed, --separate-vocals only act where a storyboard is made, not beside the row's storyboard",
        ),
    ],
)
def test_a_rows_cell_that_acts_only_beside_another_is_refused_as_the_option_is(tmp_path, cells, options, said):
    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "s.csv").write_text(f"path,{cells}\n")
    with pytest.raises(UserError, match=f"s.csv song 1 \\(a.wav\\): {said}"):
        planned(tmp_path / "s.csv", *options)


def test_a_storyboard_making_option_is_refused_where_every_row_names_its_storyboard(tmp_path, capsys):
    from tests.helpers import run

    make_tone(tmp_path / "a.wav", 1)
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "s.csv").write_text("path,storyboard\na.wav,b.json\n")
    out = tmp_path / "out"
    code, _, err = run(capsys, "batch", tmp_path / "s.csv", "-o", out, "--models", "tiny", "-q", "--seed", "7")
    assert code == 2 and "--seed only acts where a storyboard is made, and every row names its storyboard" in err, err
    assert not out.exists()
    (tmp_path / "s.csv").write_text("path,storyboard\na.wav,b.json\na.wav,\n")  # (a row that makes one)
    assert len(planned(tmp_path / "s.csv", "--seed", "7")) == 2
