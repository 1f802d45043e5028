"""The command line end to end with the tiny models: storyboards, and every bad input as one line + exit 2."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from musicvid.storyboard.board import load_storyboard
from tests.helpers import make_tone, run, valid_board, work_directory


@pytest.mark.ci  # (the demo's whole storyboard: twelve seconds of the suite's 6 minutes; renders of it stay in the suite)
@pytest.mark.slow
def test_storyboard_of_the_demo_song_with_tiny_models(capsys, demo_song, tmp_path):
    code, out, err = run(capsys, "storyboard", demo_song, "--models", "tiny", "--workdir", tmp_path / "w", "--quiet")
    assert code == 0, err
    board = load_storyboard(tmp_path / "w" / "storyboard.json")
    assert board.title == "Lighthouse" and board.artist == "The Tiny Models"  # from the tags
    assert board.scenes[-1].end == pytest.approx(board.duration)
    assert all(s.prompt.strip() for s in board.scenes)
    assert (tmp_path / "w" / "transcript.json").exists()
    assert "kind" in out and "prompt" in out and "storyboard.json" in out
    # the same transcript and seed give the same storyboard (Whisper's part is cached: seconds saved)
    work_directory(tmp_path / "w2")
    shutil.copyfile(tmp_path / "w" / "transcript.json", tmp_path / "w2" / "transcript.json")
    code, again, err = run(capsys, "storyboard", demo_song, "--models", "tiny", "--workdir", tmp_path / "w2", "-q")
    assert code == 0 and again.replace("w2", "w") == out


@pytest.mark.slow
@pytest.mark.ci  # (a storyboard of the demo's lyrics: the lyrics files' storyboard of the fresh songs stays)
def test_storyboard_from_a_lyrics_file(capsys, demo_song, demo_lyrics, tmp_path):
    workdir = tmp_path / "w"
    argv = ["storyboard", demo_song, "--models", "tiny", "--lyrics", demo_lyrics, "--title", "Skyfall"]
    argv += ["--artist", "Adele", "--workdir", workdir, "--quiet"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    board = load_storyboard(workdir / "storyboard.json")
    assert [s.kind for s in board.scenes] == ["intro"] + ["lyric"] * 4 + ["break"] + ["lyric"] * 3 + ["outro"]
    assert board.scenes[1].text == "My heart is a lighthouse in the storm" and board.scenes[1].start == 5.0
    assert (board.title, board.artist) == ("Skyfall", "Adele")
    assert not (workdir / "transcript.json").exists()  # Whisper was skipped
    # A rerun reuses the storyboard, edits included.
    data = json.loads((workdir / "storyboard.json").read_text())
    data["scenes"][2]["prompt"] = "a golden river at dawn"
    (workdir / "storyboard.json").write_text(json.dumps(data))
    code, out, err = run(capsys, *argv)
    assert code == 0 and "a golden river at dawn" in out


@pytest.mark.ci  # (a render by odd names: the batch's renders of such names stay in the suite)
@pytest.mark.slow
def test_a_file_name_with_spaces_and_non_ascii_letters_works(capsys, tmp_path):
    song = make_tone(tmp_path / "Ünïcødé sóng – mix 1.mp3", 3)
    lyrics = tmp_path / "Ünïcødé sóng – mix 1.lrc"
    lyrics.write_text("[00:01.00]ça va très bien\n")
    code, out, err = run(
        capsys,
        "render",
        song,
        "--models",
        "tiny",
        "--lyrics",
        lyrics,
        "-q",
        "--fps",  # (the names are what is tried: few frames)
        "2",
        "--workdir",
        tmp_path / "wörk dir",
        "-o",
        tmp_path / "vidéo finale.mp4",
    )
    assert code == 0, err
    assert (tmp_path / "wörk dir" / "storyboard.json").exists()
    assert (tmp_path / "vidéo finale.mp4").stat().st_size > 0


def bad_inputs(tmp_path, demo_song):
    text = tmp_path / "lyrics.mp3"
    text.write_text("this is not a song\n" * 50)
    truncated = tmp_path / "cut.mp3"
    truncated.write_bytes(demo_song.read_bytes()[:20000])
    empty = tmp_path / "empty.mp3"
    empty.write_bytes(b"")
    folder = tmp_path / "folder.mp3"
    folder.mkdir()
    return {
        "missing file": (tmp_path / "nope.mp3", "not found"),
        "text renamed .mp3": (text, "not audio"),
        "truncated mp3": (truncated, "truncated"),
        "zero-byte file": (empty, "empty"),
        "directory": (folder, "directory"),
    }


@pytest.mark.parametrize("case", ["missing file", "text renamed .mp3", "truncated mp3", "zero-byte file", "directory"])
@pytest.mark.parametrize("command", ["storyboard", "render"])
def test_bad_audio_is_one_line_and_exit_2(capsys, tmp_path, demo_song, case, command):
    path, reason = bad_inputs(tmp_path, demo_song)[case]
    code, out, err = run(capsys, command, path, "--models", "tiny", "--quiet", "--workdir", tmp_path / "w")
    assert code == 2
    assert reason in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "options,reason",
    [
        (["--fps", "0"], "--fps"),
        (["--fps", "-5"], "--fps"),
        (["--size", "500x512"], "multiples of 8"),
        (["--size", "big"], "--size"),
        (["--steps", "0"], "--steps"),
        (["--batch-size", "0"], "--batch-size"),
        (["--context-size", "-1"], "--context-size"),
        (["--models", "huge"], "--models"),
        (["--scheduler", "euler_a"], "--scheduler"),
        (["--compile", "--low-vram"], "--compile and --low-vram"),
        (["--fast", "--steps", "25"], "--fast draws in 1 to 8 steps"),
        # settings that multiply the work: refused with their limit, before any planning
        (["--fps", "1e6"], "from 1 to 60, got 1000000"),  # (as typed: not 1e+06)
        (["--fps", "nan"], "from 1 to 60"),
        (["--break", "inf"], "--break must be above 0 and at most 3600"),  # else storyboard.json holds Infinity
        (["--fps", "0.001"], "from 1 to 60"),  # else a 6 s song has no frame: an MP4 without video
        (["--size", "8192x8192"], "up to 2048x2048"),
        (["--steps", "100000"], "from 1 to 150"),
        (["--batch-size", "1000"], "from 1 to 64"),
        (["--guidance", "1000"], "from 0 to 30"),
        (["--context-size", "1000"], "from 0 to 16"),
        (["--candidates", "1000"], "from 1 to 64"),
        (["--output-fps", "23"], "--output-fps must be one of 24, 25, 30, 60, not 23\n"),  # (argparse said 23.0)
        (["--title", "a\x1b[31mred"], "--title holds a control character (U+001B) at position 2"),  # a terminal's
        (["--title", " "], "--title is blank: give the song's title, or leave it out for the file's tags"),
        (["--style", "oil\x00"], "--style holds a control character (U+0000) at position 4"),
        (["--lyrics", ""], "argument --lyrics: is empty"),  # (Path("") is the current folder)
        (["-o", ""], "argument -o/--output: is empty"),
    ],
)
def test_impossible_settings_exit_2(capsys, tmp_path, options, reason):
    song = make_tone(tmp_path / "song.wav", 2)
    code, out, err = run(capsys, "render", song, "--models", "tiny", "--quiet", "--workdir", tmp_path / "w", *options)
    assert code == 2
    assert reason in err and err.count("\n") == 1
    assert not (tmp_path / "w").exists()  # nothing was decoded or planned


@pytest.mark.parametrize("command", ["render", "storyboard", "plan", "batch", "score"])
def test_an_empty_argument_names_no_folder(capsys, tmp_path, monkeypatch, command):
    monkeypatch.chdir(tmp_path)  # (as the current folder, an empty name was read as "."; a batch rendered it)
    make_tone(tmp_path / "song.wav", 2)
    code, _, err = run(capsys, command, "", *(["-o", "out"] if command == "batch" else []))
    assert code == 2 and "is empty" in err and err.count("\n") == 1 and os.listdir(tmp_path) == ["song.wav"]


@pytest.mark.parametrize("given", [["-song.wav"], ["--lyrics", "-song.wav", "other.wav"]])
def test_a_file_whose_name_starts_with_a_dash_is_said_how_to_give(capsys, tmp_path, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    make_tone(tmp_path / "-song.wav", 2)
    code, _, err = run(capsys, "render", *given, "--models", "tiny", "--workdir", tmp_path / "w")
    assert (
        code == 2
        and err.count("\n") == 1
        and err.endswith("; a file whose name starts with '-' is given as ./-song.wav (see musicvid render --help)\n")
    )
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize("options", [["--upscaler", "lanczos"], ["--video-model", "org/ltx"], ["--captions", "line"]])
def test_storyboard_neither_offers_nor_takes_an_option_of_the_frames_between_keyframes(capsys, tmp_path, options):
    code, out, _ = run(capsys, "storyboard", "--help")
    assert code == 0 and "\n  --keyframes " in out and f"\n  {options[0]} " not in out  # (another's help may name it)
    code, out, err = run(capsys, "storyboard", tmp_path / "song.wav", *options)
    assert code == 2 and f"unrecognized arguments: {' '.join(options)}" in err and err.count("\n") == 1


def test_an_output_that_cannot_be_written_is_refused_before_any_work(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "videos").mkdir()
    (tmp_path / "v.srt").mkdir()  # where v.mp4's .srt goes: not -o, which is not to be given inside it
    for output, reason in [
        (tmp_path / "videos", "is a directory"),
        (song / "video.mp4", "is a file, not a folder"),
        (tmp_path / "v.mp4", f"{tmp_path / 'v.srt'}, where the video's .srt goes beside it, is a folder: give -o"),
    ]:
        code, out, err = run(
            capsys, "render", song, "--models", "tiny", "-q", "--workdir", tmp_path / "w", "-o", output
        )
        assert code == 2 and reason in err and err.count("\n") == 1
        assert not (tmp_path / "w").exists()


@pytest.mark.ci  # (it waits out a pipe's silence: five seconds of the suite's 6 minutes)
@pytest.mark.slow
def test_a_pipe_given_as_the_song_is_refused_not_waited_on(tmp_path):
    import os
    import subprocess
    import sys

    fifo = tmp_path / "song.mp3"
    os.mkfifo(fifo)
    result = subprocess.run(
        [sys.executable, "-m", "musicvid", "storyboard", str(fifo), "--models", "tiny", "-q"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2 and "not a regular file" in result.stderr and result.stderr.count("\n") == 1


def test_a_device_torch_cannot_read_or_this_machine_lacks_exits_2_before_any_work(capsys, tmp_path):
    import torch

    song = make_tone(tmp_path / "song.wav", 2)
    unread = {device: "is not a device musicvid runs on" for device in ("xyz", "meta", "CPU", "cuda:x")}
    lacking = [] if torch.cuda.is_available() else ["cuda", "cuda:0"]
    lacking += [] if torch.backends.mps.is_available() else ["mps"]
    for device, why in {**unread, **dict.fromkeys(lacking, "is not a device here")}.items():
        code, out, err = run(
            capsys, "render", song, "--models", "tiny", "-q", "--workdir", tmp_path / "w", "--device", device
        )
        assert code == 2 and f"--device {device} {why}" in err and "auto, cpu" in err, err
        assert err.count("\n") == 1 and not (tmp_path / "w").exists()


def test_the_cpu_in_torchs_forms_is_a_device():
    from musicvid.settings.model_choice import ModelChoice

    assert [ModelChoice(device=d).device for d in ("auto", "cpu", "cpu:0", "cpu:1")] == [
        "auto",
        "cpu",
        "cpu:0",
        "cpu:1",
    ]


def test_a_song_named_by_an_open_file_of_the_process_is_refused_before_any_work(capsys, tmp_path):
    """/dev/stdin (or /dev/fd/N) redirected from a file is a regular file here, but ffmpeg's process, whose standard
    input is the frames' pipe, would read another."""
    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "self").symlink_to("/proc/self")  # (a link to a folder on the way: round 17)
    with song.open("rb") as opened:
        fd, pid = opened.fileno(), os.getpid()
        for name in (f"/dev/fd/{fd}", f"/proc/{pid}/task/{pid}/fd/{fd}", f"{tmp_path}/self/fd/{fd}"):
            argv = ["render", name, "--models", "tiny", "-q", "--workdir", tmp_path / "w", "-o", tmp_path / "v.mp4"]
            code, out, err = run(capsys, *argv)
            assert code == 2 and f"{name} is a stream this process was given" in err and err.count("\n") == 1, err
            assert not (tmp_path / "w").exists()


@pytest.mark.slow
def test_a_name_that_looks_like_a_protocol_is_a_file_and_the_video_goes_beside_the_song(capsys, tmp_path, monkeypatch):
    songs, elsewhere = tmp_path / "songs", tmp_path / "elsewhere"
    songs.mkdir(), elsewhere.mkdir()
    make_tone(songs / "Interlude: night.mp3", 2)
    (songs / "Interlude: night.lrc").write_text("[00:00.50]the night\n")
    monkeypatch.chdir(songs)  # relative names, as typed in a shell
    argv = ["Interlude: night.mp3", "--lyrics", "Interlude: night.lrc", "--models", "tiny", "-q"]
    code, out, err = run(capsys, "render", *argv, "--workdir", tmp_path / "w")
    assert code == 0, err
    assert (songs / "Interlude: night.mp4").stat().st_size > 0 and (songs / "Interlude: night.srt").exists()
    assert not list(elsewhere.iterdir())


def test_a_deeply_nested_storyboard_is_one_line_and_exit_2(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    nested = tmp_path / "storyboard.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    code, out, err = run(
        capsys, "render", song, "--models", "tiny", "-q", "--storyboard", nested, "--workdir", tmp_path / "w"
    )
    assert code == 2 and "nested too deeply" in err and err.count("\n") == 1


def test_a_broken_storyboard_exits_2_naming_the_field(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 10)
    overlapping, seedless = valid_board(), valid_board()  # (storyboards as musicvid writes them, of a song as long)
    overlapping["scenes"][1]["start"] -= 1.0
    del seedless["scenes"][0]["seed"]
    edited = tmp_path / "edited.json"
    for data, said in (overlapping, ("scenes[1].start", "overlaps")), (seedless, ("scenes[0].seed",)):
        edited.write_text(json.dumps(data))
        argv = ["render", song, "--models", "tiny", "--storyboard", edited, "--workdir", tmp_path / "w"]
        code, out, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1 and all(words in err for words in said), err
        assert not (tmp_path / "w").exists()


@pytest.mark.ci  # (a render's checks of its models: tests/test_model_registry.py's sentences stay in the suite)
@pytest.mark.slow
def test_an_unreachable_model_is_one_sentence(capsys, tmp_path):
    song = make_tone(tmp_path / "song.wav", 2)
    vipe = ["--vipe", "nobody/no-such-model"]
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", *vipe, "--workdir", tmp_path / "w", "-q")
    assert code == 2 and err.count("\n") == 1, err
    # offline (tests/conftest.py), refused before Whisper hears the song, as the other models' hub names are
    assert "--vipe nobody/no-such-model: nobody/no-such-model is not in the model cache, and HF_HUB_OFFLINE" in err
    assert not (tmp_path / "w").exists()


# The command line's answers that need no model: help, and refusals of bad arguments (benchmarks/command_line.py
# times them); one process runs them all, then says which model libraries it imported
NO_WORK = [
    ["--help"],
    ["render", "--help"],
    ["storyboard", "--help"],
    ["render", "song.mp3", "--fps", "0"],
    ["render", "song.mp3", "--size", "7x7", "--look", "music-video"],
    ["render", "song.mp3", "--nonsense"],
    ["storyboard", "song.mp3", "--models", "nope"],
    ["render", "song.mp3", "--diffusion", "no/such/folder"],
    ["plan", "song.mp3", "--gpu-memory", "-1"],
    ["batch", "missing.m3u", "-o", "out"],
    ["score", "work", "--fps", "0"],
]


@pytest.mark.slow
def test_help_and_every_refusal_of_a_bad_argument_import_no_model_library(tmp_path):
    script = (
        "import json, sys\nfrom musicvid.cli import main\n"
        f"codes = [main(argv) for argv in {NO_WORK!r}]\n"
        "print(json.dumps([codes, [m for m in ('torch', 'diffusers', 'transformers') if m in sys.modules]]))"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    codes, imported = json.loads(done.stdout.strip().splitlines()[-1])
    assert codes == [0, 0, 0] + [2] * (len(NO_WORK) - 3), done.stderr
    assert imported == [] and list(tmp_path.iterdir()) == []  # and nothing was written


def test_usage_errors_exit_2(capsys):
    code, out, err = run(capsys, "render")
    assert code == 2 and err.count("\n") == 1


@pytest.mark.slow
def test_an_instrumental_song_gets_scenes_cut_on_its_beats(capsys, tmp_path):
    import wave

    import numpy as np

    from musicvid.core.audio import find_beats, load_audio
    from musicvid.core.files import file_sha256
    from musicvid.lyrics.transcript import Transcript

    rate, t = 16_000, np.arange(45 * 16_000) / 16_000
    drums = np.exp(-25 * (t % 0.6)) * np.sin(2 * np.pi * 60 * t)  # a kick every 0.6 s
    song = tmp_path / "instrumental.wav"
    with wave.open(str(song), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(rate)
        w.writeframes((0.5 * drums * 32767).astype(np.int16).tobytes())
    workdir = work_directory(tmp_path / "w")
    # what Whisper found in it: no words (cached, so the test needs no recognition run)
    Transcript([], "en", "openai-whisper:tiny-random", file_sha256(song)).save(workdir / "transcript.json")
    code, out, err = run(capsys, "storyboard", song, "--models", "tiny", "--workdir", workdir, "-q")
    assert code == 0, err
    board = load_storyboard(workdir / "storyboard.json")
    bar = 4 * 0.6  # four kicks
    assert {s.kind for s in board.scenes} == {"intro"} and len(board.scenes) >= 45 / (4 * bar)
    assert all(s.duration <= 4 * bar + 0.2 for s in board.scenes)  # at most --bars-per-scene's 4 bars each
    beats = find_beats(load_audio(song).samples).seconds
    for scene in board.scenes[1:]:
        assert min(abs(scene.start - b) for b in beats) < 1e-6 and scene.cut in ("bars", "music")


def test_each_aspect_is_an_sd_friendly_size_near_the_models_pixel_count():
    from musicvid.settings.geometry import ASPECTS, size_for_aspect

    for aspect, ratio in ASPECTS.items():
        for near, unit in (((512, 512), 64), ((64, 64), 8)):
            width, height = size_for_aspect(aspect, near)
            assert width % unit == 0 and height % unit == 0
            assert abs(width / height / ratio - 1) < 0.1 and 0.8 < width * height / (near[0] * near[1]) < 1.25
    assert size_for_aspect("16:9", (512, 512)) == (704, 384) and size_for_aspect("9:16", (512, 512)) == (384, 704)


@pytest.mark.slow
def test_a_portrait_video_by_aspect_and_aspect_with_size_refused(capsys, tmp_path):
    import av

    song = make_tone(tmp_path / "song.wav", 2)
    (tmp_path / "song.lrc").write_text("[00:00.50]up\n")
    common = ["--models", "tiny", "-q", "--lyrics", tmp_path / "song.lrc", "--fps", "2", "--workdir", tmp_path / "w"]
    code, out, err = run(capsys, "render", song, "--aspect", "9:16", "-o", tmp_path / "story.mp4", *common)
    assert code == 0, err
    with av.open(str(tmp_path / "story.mp4")) as container:
        video = container.streams.video[0].codec_context
        assert (video.width, video.height) == (48, 88)  # 9:16 at about the tiny models' 64x64
    code, out, err = run(capsys, "render", song, "--aspect", "9:16", "--size", "64x64", *common)
    assert code == 2 and "give --aspect or --size, not both" in err
