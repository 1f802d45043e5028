"""Every input a run reads is checked before any work (exit 2, one sentence, no work directory made): a song
shorter than a frame or cut off (judged by a tolerance that suits its length), pictures too big or truncated,
a file that is no upscaler and an upscaler without a resolution, transcripts and subtitles with impossible
fields or times, lyrics and storyboards beyond any song's, and loops of symbolic links."""

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from musicvid.core.errors import UserError
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.storyboard.board import MAX_SCENES_PER_SECOND, Scene, SongAudio, Storyboard, load_storyboard
from tests.helpers import TINY_QUIET, make_tone, run, timed_lyrics, valid_board


def test_a_song_shorter_than_one_frame_is_refused(capsys, tmp_path):
    song = make_tone(tmp_path / "blip.wav", 0.3)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--fps", "1", "--workdir", tmp_path / "w")
    assert code == 2 and "not one frame of video" in err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize(
    "upscaler, said",
    [
        ("/etc/passwd", "is not an upscaler spandrel can load"),
        ("random.pth", "holds no PyTorch weights: neither torch's zip archive nor a pickle"),
        ("cut.pth", "is cut short (no whole zip archive)"),  # (spandrel said "[Errno 22] Invalid argument")
        (
            "gray.pth",
            "gray.pth makes 1-channel pictures of 1-channel ones, and frames are RGB",
        ),  # (failed after the frames)
    ],
)
def test_a_file_that_is_no_upscaler_is_named_before_any_work(capsys, tmp_path, upscaler, said):
    import torch

    (tmp_path / "random.pth").write_bytes(np.random.default_rng(0).bytes(4096))
    torch.save({"conv_first.weight": torch.zeros(64, 3, 3, 3)}, tmp_path / "cut.pth")
    os.truncate(tmp_path / "cut.pth", (tmp_path / "cut.pth").stat().st_size // 2)
    gray = {"body.0.weight": torch.zeros(8, 1, 3, 3), "body.0.bias": torch.zeros(8), "body.1.weight": torch.zeros(8)}
    torch.save(
        {"params": {**gray, "body.2.weight": torch.zeros(16, 8, 3, 3), "body.2.bias": torch.zeros(16)}},
        tmp_path / "gray.pth",
    )
    path = upscaler if upscaler.startswith("/") else tmp_path / upscaler
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--workdir", tmp_path / "w", "--resolution", "720p", "--upscaler", path
    )
    assert code == 2 and said in err and err.count("\n") == 1 and "--models tiny" not in err
    assert not (tmp_path / "w").exists()  # refused before the transcription and the drawing


@pytest.mark.parametrize(
    "option",
    [
        ["--steps", "7"],
        ["--fast"],
        ["--reference-strength", "0.2"],
        ["--diffusion", "org/sd"],
        ["--ip-adapter", "x"],
        ["--scorer", "tiny-random"],  # (it picks among keyframe candidates)
        ["--batch-size", "2"],  # (how fast pictures are drawn)
        ["--compile"],
    ],
)
def test_a_drawing_option_for_a_storyboard_alone_is_refused_and_one_it_is_made_with_is_not(capsys, tmp_path, option):
    song = make_tone(tmp_path / "song.wav", 2)
    lyrics = tmp_path / "song.lrc"
    lyrics.write_text("[00:00.50]a light in the storm\n")
    alone = ["storyboard", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"]
    code, out, err = run(capsys, *alone, *option)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{option[0]} only acts with --keyframes (a storyboard alone draws nothing)" in err
    assert not (tmp_path / "w").exists()
    if option == ["--fast"]:  # (the device and precision make the storyboard too)
        code, out, err = run(capsys, *alone, "--precision", "float32", "--device", "cpu")
        assert code == 0 and (tmp_path / "w" / "storyboard.json").is_file(), err


@pytest.mark.parametrize(
    "option, said",
    [
        (["--upscaler", "http://x/y.pth"], "--upscaler http://x/y.pth is a URL: musicvid loads a model by its hub"),
        (["--upscaler", "LANCZOS"], "nor lanczos or auto; the name is lanczos"),
    ],
)
def test_a_model_file_given_by_url_or_a_name_in_capitals_is_named_so(capsys, tmp_path, option, said):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--workdir", tmp_path / "w", "--resolution", "720p", *option
    )
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "w").exists()


def test_an_upscaler_without_a_resolution_is_refused(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "-q", "--upscaler", "lanczos")
    assert code == 2 and "--upscaler only acts with --resolution" in err


@pytest.mark.parametrize("size", [(30000, 30000), (10000, 10000)])
def test_a_pinned_picture_too_big_is_refused_from_its_header(capsys, tmp_path, size):
    picture = tmp_path / "huge.png"
    Image.new("1", size).save(picture)  # a few hundred KB on disk, gigabytes decoded
    song = make_tone(tmp_path / "song.wav", 2)
    scene = Scene(0, "intro", 0.0, 2.0, prompt="a lighthouse", seed=1, picture=str(picture))
    storyboard = Storyboard(SongAudio(2.0, str(song), ""), scenes=[scene])
    (tmp_path / "storyboard.json").write_text(storyboard.text())
    code, out, err = run(
        capsys, "render", song, *TINY_QUIET, "--storyboard", tmp_path / "storyboard.json", "--workdir", tmp_path / "w"
    )
    assert code == 2 and "more than the 40 megapixels a picture may have" in err
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize(
    "change,field",
    [
        ({"confidence": "high"}, "lines[0].confidence must be a number"),
        ({"text_en": 123}, "lines[0].text_en must be a string"),
        ({"start": None}, "lines[0].start must be a number"),
        ({"words": [{"start": 1, "end": 2}]}, "lines[0].words[0].text must be a string"),
        ({"end": 0.5}, "lines[0].end (0.5) is before its start (1.0)"),
        ({"start": -3}, "lines[0].start (-3) is before the song starts"),  # (was moved to 0, unsaid)
    ],
)
def test_a_bad_transcript_json_names_its_field_and_leaves_nothing(capsys, tmp_path, change, field):
    song = make_tone(tmp_path / "song.wav", 3)
    lyrics = tmp_path / "t.json"
    lyrics.write_text(json.dumps({"lines": [{"start": 1.0, "end": 2.0, "text": "a light", **change}]}))
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--lyrics", lyrics, "--workdir", tmp_path / "w"
    )
    assert code == 2 and field in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()  # a refused run leaves no empty work directory
    assert not (tmp_path / "song.mp4").exists()


@pytest.mark.parametrize(
    "cue,reason",
    [
        ("00:00:02,000 --> 00:00:01,000", "cue 2 ends before it starts (00:00:02,000 --> 00:00:01,000)"),
        ("-00:00:01,000 --> 00:00:01,000", "cue 2 has a negative time"),
        # round 13: a cue of no time was a scene to the next cue, or to the song's end, unsaid
        ("00:00:05,000 --> 00:00:05,000", "cue 2 ends as it starts (00:00:05,000 --> 00:00:05,000): give it its sung"),
    ],
)
def test_srt_cues_with_impossible_times_are_named(tmp_path, cue, reason):
    lyrics = tmp_path / "song.srt"
    lyrics.write_text(f"1\n00:00:00,500 --> 00:00:01,000\nfirst\n\n2\n{cue}\nsecond\n")
    with pytest.raises(UserError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        timed_lyrics(lyrics, 10.0)


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


def test_a_song_whose_file_name_is_not_utf8_is_refused_before_any_work(capsys, tmp_path):
    """A Latin-1 byte in a file's name reaches Python as half of a UTF-16 pair: no record, title or prompt could
    be written with it, so the run stops now, not after ViPE."""
    song = make_tone(tmp_path / os.fsdecode(b"caf\xe9.wav"), 2)
    code, out, err = run(capsys, "render", song, *TINY_QUIET, "--workdir", tmp_path / "w")
    assert code == 2 and err.count("\n") == 1 and "the name caf\\xe9.wav is not UTF-8" in err, err
    assert err.startswith("musicvid: the song ") and "rename it in UTF-8" in err and not (tmp_path / "w").exists()
    # in a folder named in Latin-1, the folder is named, not the file (its name is fine)
    (folder := tmp_path / os.fsdecode(b"lat\xe9")).mkdir()
    song = song.rename(tmp_path / "s.wav")
    for option in ("--lyrics", "--workdir"):
        code, out, err = run(capsys, "render", song, *TINY_QUIET, option, folder / "x")
        assert code == 2 and f"{option} " in err and "the folder lat\\xe9 is not UTF-8" in err, err


def test_a_songs_length_is_its_sound_not_its_tags_text_nor_its_pictures(tmp_path):
    from musicvid.core.audio import load_audio
    from musicvid.core.ffmpeg import declared_duration

    tagged = make_tone(tmp_path / "tagged.mp3", 3, "-metadata", "comment=Duration: 01:30:00.00 (live set)")
    assert declared_duration(tagged) == pytest.approx(3, abs=0.1)
    assert load_audio(tagged, max_seconds=60).info.duration == pytest.approx(3, abs=0.1)
    song = make_tone(tmp_path / "song.wav", 2)
    video = tmp_path / "video.mp4"  # a music video whose pictures run on 4 s after its song
    picture = ["-f", "lavfi", "-i", "testsrc=s=64x64:d=6", "-i", song, "-map", "0:v", "-map", "1:a", "-c:v", "libx264"]
    subprocess.run([ffmpeg_exe(), "-v", "error", "-y", *picture, video], check=True)
    assert declared_duration(video) == pytest.approx(6, abs=0.1) and declared_duration(video, sound=True) is None
    assert load_audio(video).info.duration == pytest.approx(2, abs=0.1)


@pytest.mark.parametrize("typed, meant", [("promt", "prompt"), ("Picture", "picture"), ("sed", "seed")])
def test_a_scenes_field_misspelt_is_named_not_ignored(tmp_path, typed, meant):
    board = valid_board()
    board["scenes"][0][typed] = board["scenes"][0].pop(meant, "red.png")  # the edit, under a misspelt name
    (tmp_path / "storyboard.json").write_text(json.dumps(board))
    with pytest.raises(UserError, match=rf"scenes\[0\]\.{typed} is no field of a scene: is it {meant}\?"):
        load_storyboard(tmp_path / "storyboard.json")


def test_a_key_of_a_persons_own_in_a_scene_is_left_alone(tmp_path):
    board = valid_board()
    board["scenes"][0]["note"] = "try it in blue"
    (tmp_path / "storyboard.json").write_text(json.dumps(board))
    assert load_storyboard(tmp_path / "storyboard.json").scenes[0].prompt == "a sky"


@pytest.mark.parametrize(
    "argv, unknown",
    [
        # `--max-jobs 3` was --max-jobs-gb 3, a 3 GB bound never asked for (-1: read so, refused, not a page started)
        (["ui", "--max-jobs", "-1"], "--max-jobs -1"),
        (["plan", "song.mp3", "--models", "tiny", "--gpu-mem", "24"], "--gpu-mem 24"),
        (["render", "song.mp3", "--models", "tiny", "--batch", "3"], "--batch 3"),
    ],
)
def test_an_option_is_taken_by_its_whole_name_never_a_prefix(capsys, tmp_path, argv, unknown):
    code, _, err = run(capsys, *argv)
    assert code == 2 and err == f"musicvid: unrecognized arguments: {unknown} (see musicvid --help)\n"


def test_vipe_takes_an_option_by_its_whole_name_never_a_prefix(capsys):
    from vipe_core.cli import main as vipe

    with pytest.raises(SystemExit) as refused:
        vipe(["train", "d.parquet", "--out", "o", "--batch", "3"])
    assert (
        refused.value.code == 2
        and "vipe: unrecognized arguments: --batch 3 (see vipe --help)" in capsys.readouterr().err
    )
