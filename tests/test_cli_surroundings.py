"""What surrounds a run, said in one sentence (a probe's findings): a reader of standard output that went away, a
standard output that is full or closed, a signal that stops the run, the current folder gone, a quota or a file size
limit where the disk is not full, an address-space limit (ulimit -v) that a library or model did not fit in, an
ffmpeg a signal stopped, a standard error that is no terminal (a log file): no bar redrawn in it, musicvid's nor a
library's."""

import contextlib
import errno
import io
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch
import tqdm

from musicvid.cli import COMMANDS, main
from musicvid.core import ffmpeg
from musicvid.core.audio import SAMPLE_RATE
from musicvid.core.errors import RenderError, UserError, out_of_room
from musicvid.core.progress import Progress
from musicvid.lyrics.transcribe import recognize
from musicvid.models.kinds import as_unavailable
from musicvid.models.loading import ASRModel
from tests.helpers import make_tone


@pytest.fixture(scope="module")
def song(tmp_path_factory):
    return make_tone(tmp_path_factory.mktemp("surroundings") / "song.wav", 2.0)


def musicvid(*argv, **how) -> subprocess.Popen:
    """`musicvid ARGV` in a process of its own, its standard output a pipe unless `how` says otherwise."""
    command = [sys.executable, "-m", "musicvid", *map(str, argv)]
    return subprocess.Popen(command, **{"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **how})


def planned_into(stdout, capsys, song) -> tuple[int, str]:
    """`musicvid plan` of `song` (its table printed once the work is done) with `stdout` as standard output: its
    exit code and what it said on standard error."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sys, "stdout", stdout)
        code = main(["plan", str(song), "--models", "tiny", "--gpu-memory", "24"])
    return code, capsys.readouterr().err


# buffered, as a terminal-less run's; line by line, as under PYTHONUNBUFFERED (the usual Docker setting), where the
# command's own print fails rather than the flush once it is done
BUFFERINGS = pytest.mark.parametrize("buffering", [-1, 1], ids=["buffered", "unbuffered"])


@BUFFERINGS
def test_a_reader_that_went_away_ends_the_run_quietly_as_a_unix_tool(song, capsys, buffering):
    read, write = os.pipe()
    os.close(read)  # nobody reads the table
    with os.fdopen(write, "w", buffering=buffering) as pipe:
        assert planned_into(pipe, capsys, song) == (128 + signal.SIGPIPE, "")


@BUFFERINGS
def test_a_full_standard_output_is_said_as_such_not_as_the_disk(song, capsys, buffering):
    full = open("/dev/full", "w", buffering=buffering)
    try:
        said = "musicvid: the work is done, but standard output cannot take it (No space left on device)\n"
        assert planned_into(full, capsys, song) == (1, said)
    finally:
        with contextlib.suppress(OSError):  # (what it could not take is still in its buffer)
            full.close()


def test_a_help_whose_reader_went_away_ends_quietly_as_a_unix_tool():
    read, write = os.pipe()
    os.close(read)  # `musicvid render --help | head -1`, head gone before the help is written
    process = musicvid("render", "--help", stdout=write)
    os.close(write)
    assert process.communicate(timeout=120)[1] == b"" and process.returncode == 128 + signal.SIGPIPE


def test_closed_standard_streams_neither_fail_a_run_nor_trade_places(song, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdout", None)  # `>&-`: the plan is made, its table goes nowhere
    assert main(["plan", str(song), "--models", "tiny", "--gpu-memory", "24"]) == 0
    monkeypatch.undo()
    monkeypatch.setattr(sys, "stderr", None)  # `2>&-`: the error line goes nowhere, not to standard output
    assert main(["plan", str(song.with_name("missing.wav")), "--models", "tiny"]) == 2
    assert capsys.readouterr().out == ""


def test_a_standard_error_whose_reader_went_away_stops_no_run(song, monkeypatch):
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w", buffering=1) as pipe:
        monkeypatch.setattr(sys, "stderr", pipe)
        assert main(["plan", str(song.with_name("missing.wav")), "--models", "tiny"]) == 2


def test_a_current_folder_that_is_gone_is_one_sentence_before_any_library_is_loaded(song, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    process = musicvid("storyboard", song, "--models", "tiny", cwd=gone, preexec_fn=lambda: os.rmdir(gone))
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2 and out == b""
    assert (
        err.decode() == "musicvid: the current folder is gone, or its path is too long: cd to another and run again\n"
    )


def failed_within(error: Exception, handling: Exception) -> Exception:
    """`error` as raised while `handling` was handled: llvmlite names a library it could not load over the loader's
    own words."""
    error.__context__ = handling  # (as `raise error` within `except` sets it)
    return error


NOT_MAPPED = "libtorch_cpu.so: failed to map segment from shared object"
# what importing torch or loading a model said under `ulimit -v` of 2 to 4.5 GB (a probe's findings)
WANT_OF_MEMORY = [
    ImportError(NOT_MAPPED),
    failed_within(OSError("Could not find/load shared object file 'libllvmlite.so'"), OSError(NOT_MAPPED)),
    RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 384000 bytes."),
    MemoryError(),
    SystemError("error return without exception set"),
]


@pytest.fixture
def limited(monkeypatch):
    """An address-space limit of `ulimit -v 4000000` (in KiB)."""
    monkeypatch.setattr(resource, "getrlimit", lambda which: (4_000_000 * 1024, resource.RLIM_INFINITY))


@pytest.mark.parametrize("error", WANT_OF_MEMORY, ids=lambda error: type(error).__name__)
def test_a_run_out_of_its_address_space_says_so_not_a_broken_install(error, tmp_path, capsys, monkeypatch, limited):
    def fail(args):
        raise error

    monkeypatch.setitem(COMMANDS, "score", fail)
    assert main(["score", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "musicvid: the process ran out of the memory it may use, its address-space limit of 3.8 GB (ulimit -v "
        "4000000): raise or lift that limit and run the same command again to continue\n"
    )
    with pytest.raises(UserError, match="ran out of the memory it may use"), as_unavailable("diffusion", "some/model"):
        raise error  # not "could not load the diffusion model 'some/model' (…); it downloads on first use, …"


def test_without_a_limit_only_a_failed_allocation_is_said_as_memory(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda which: (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    failures = iter([MemoryError(), ImportError(NOT_MAPPED)])  # the second: a file system mounted noexec, say

    def fail(args):
        raise next(failures)

    monkeypatch.setitem(COMMANDS, "score", fail)
    assert main(["score", str(tmp_path)]) == 2
    said = "musicvid: the process ran out of memory: free some and run the same command again to continue\n"
    assert capsys.readouterr().err == said
    assert main(["score", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith(f"musicvid: failed: ImportError: {NOT_MAPPED} (rerun")


@pytest.mark.parametrize(
    "number, said, remedy",
    [
        (errno.ENOSPC, "the disk is full", "free some space"),
        (errno.EDQUOT, "the disk quota is used up", "free some space"),
        (errno.EFBIG, "a file outgrew the size limit (ulimit -f)", "raise the limit"),
    ],
)
def test_a_write_that_ran_out_of_room_names_what_ran_out_and_the_file_it_stopped(number, said, remedy):
    # a write through a file object names no file: said as what ran out, whatever standard output is
    nameless = OSError(number, os.strerror(number))
    assert str(out_of_room(nameless)) == f"{said}; {remedy} and run the same command again to continue"
    error = OSError(number, os.strerror(number), "/videos/.musicvid-4242.o.mp4.k3j5h2g1.mp4")
    assert str(out_of_room(error)) == (
        f"{said}, where /videos/o.mp4 was being written; {remedy} and run the same command again to continue"
    )


def test_a_copy_out_to_a_full_disk_names_the_file_it_wrote_not_the_one_it_read():
    # shutil.copyfile's ENOSPC names the work directory's video first, -o's temporary second
    error = OSError(
        errno.ENOSPC, "No space left on device", "/work/wd/video.mp4", None, "/small/.musicvid-42.o.mp4.k3j5h2g1.mp4"
    )
    assert str(out_of_room(error)).startswith("the disk is full, where /small/o.mp4 was being written;")


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP])
def test_a_stopping_signal_is_one_line_and_its_exit_code(number, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(COMMANDS, "score", lambda args: os.kill(os.getpid(), number))
    before = signal.getsignal(number)
    assert main(["score", str(tmp_path)]) == 128 + number
    name = signal.Signals(number).name
    assert capsys.readouterr().err == f"musicvid: stopped ({name}); run the same command again to continue\n"
    assert signal.getsignal(number) == before


def test_a_hangup_nohup_ignores_stays_ignored(tmp_path, monkeypatch):
    monkeypatch.setitem(COMMANDS, "score", lambda args: os.kill(os.getpid(), signal.SIGHUP) or 0)
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert main(["score", str(tmp_path)]) == 0
    finally:
        signal.signal(signal.SIGHUP, before)


def test_an_ffmpeg_a_signal_stopped_is_said_by_the_signal():
    assert (
        ffmpeg.reason("", -signal.SIGXFSZ) == "ffmpeg was stopped by SIGXFSZ: a file outgrew the size limit (ulimit -f)"
    )
    assert ffmpeg.reason("", -signal.SIGKILL) == "ffmpeg was stopped by SIGKILL"
    assert ffmpeg.reason("", -99) == "ffmpeg was stopped by signal 99"
    assert ffmpeg.reason("x\nUnknown encoder 'libx999'\n") == "Unknown encoder 'libx999'"


def test_an_ffmpeg_that_ran_out_of_room_is_said_as_a_full_disk_naming_what_it_wrote():
    """ffmpeg's write of the song's sound to a full work directory was said as the song not decoding, with its log's
    prefix (a probe's finding); what it failed to write is named as our own writes' are (out_of_room)."""
    wav = "/full/wd/.musicvid-42.video.mp4.k3j5h2g1.wav"
    said = "[out#0/wav @ 0x5638f3542080] Error closing file: No space left on device\n"
    assert str(out_of_room(ffmpeg.failed("decode the song", said, 1, Path(wav)))) == (
        "the disk is full, where /full/wd/video.mp4 was being written; free some space and run the same command again "
        "to continue"
    )
    stopped = out_of_room(
        ffmpeg.failed("write the video", "", -signal.SIGXFSZ, Path("/wd/.musicvid-42.v.mp4.k3j5h2g1.mp4"))
    )
    assert str(stopped).startswith("a file outgrew the size limit (ulimit -f), where /wd/v.mp4 was being written")
    other = ffmpeg.failed("write the video", "Unknown encoder 'libx999'\n", 1, Path("/wd/v.mp4"))
    assert (
        isinstance(other, RenderError) and str(other) == "ffmpeg could not write the video: Unknown encoder 'libx999'"
    )


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_off_a_terminal_is_plain_lines_and_on_one_redrawn_in_place(monkeypatch, capsys):
    """A log file gets a bar's start and end as lines of their own (and a line every LOGGED_EVERY seconds between),
    no carriage return redrawing one line; a terminal gets tqdm's bar as it draws it."""
    for stage in ("draw", "align"):
        with Progress(stage, total=50, unit="frame") as bar:
            for _ in range(50):
                bar.advance()
    lines = capsys.readouterr().err.split("\n")
    assert [line.split("|")[0] for line in lines] == ["draw:   0%", "draw: 100%", "align:   0%", "align: 100%", ""]
    assert "50/50" in lines[1] and not any(c in "".join(lines) for c in "\r\x1b")
    monkeypatch.setattr(sys, "stderr", Terminal())
    with Progress("draw", total=2) as bar:
        bar.advance(2)
    assert sys.stderr.getvalue().startswith("\rdraw:   0%") and "\rdraw: 100%" in sys.stderr.getvalue()


def test_whispers_own_bar_is_off_in_a_log_where_the_stage_says_its_start_and_end(monkeypatch, capsys):
    """openai-whisper redraws its bar in place whatever stderr is: in a log it is off (the page tracks it all the
    same), and the stage's own bar writes its first and last lines; on a terminal whisper's bar is drawn alone."""
    import whisper

    asked = []

    def transcribe(model, audio, verbose, **options):
        asked.append(verbose)
        with tqdm.tqdm(total=200, unit="frames", disable=verbose is not False) as bar:  # as openai-whisper draws it
            bar.update(200)
        return {"segments": [{"start": 0.0, "end": 1.0, "text": " la"}]}

    monkeypatch.setattr(whisper, "transcribe", transcribe)
    asr = ASRModel("openai-whisper", "base", torch.nn.Linear(1, 1))
    samples = np.zeros(2 * SAMPLE_RATE, np.float32)
    assert [line.text for line in recognize(asr, samples, "transcribe", "en", show=True)] == ["la"]
    lines = capsys.readouterr().err.split("\n")
    assert [line.split("|")[0] for line in lines] == ["transcribe:   0%", "transcribe: 100%", ""]
    assert "2.0/2.0" in lines[1] and not any(c in "".join(lines) for c in "\r\x1b")
    monkeypatch.setattr(sys, "stderr", Terminal())
    recognize(asr, samples, "translate", "en", show=True)
    assert asked == [None, False] and "200/200" in sys.stderr.getvalue() and "translate" not in sys.stderr.getvalue()


def test_demucs_bar_is_off_in_a_log_where_the_stage_says_its_start_and_end(monkeypatch, capsys, tmp_path):
    """Demucs redraws its bar in place whatever stderr is: in a log it is off and the stage's own bar writes its first
    and last lines; on a terminal Demucs' bar is drawn alone; with --quiet none is."""
    from musicvid.lyrics import vocals

    asked = []

    def stem(model, mix, stem, overlap, progress):
        asked.append(progress)
        return mix

    monkeypatch.setattr(vocals, "demucs_stem", stem)
    song, separator = make_tone(tmp_path / "song.wav", 2), SimpleNamespace(samplerate=SAMPLE_RATE, audio_channels=1)
    assert vocals.separate_vocals(separator, song, 2 * SAMPLE_RATE).size == 2 * SAMPLE_RATE
    lines = capsys.readouterr().err.split("\n")
    assert [line.split("|")[0] for line in lines] == ["separate vocals:   0%", "separate vocals: 100%", ""]
    monkeypatch.setattr(sys, "stderr", Terminal())
    vocals.separate_vocals(separator, song, 2 * SAMPLE_RATE)
    vocals.separate_vocals(separator, song, 2 * SAMPLE_RATE, quiet=True)
    assert asked == [False, True, False] and sys.stderr.getvalue() == ""


def test_the_hubs_download_bars_are_off_in_a_log_and_on_the_page_kept(tmp_path, monkeypatch):
    """huggingface_hub redraws its download bars in place: off where stderr is no terminal (set before it is
    imported, as --quiet sets it), kept on a terminal, and for the page (Gradio tracks them)."""
    import ui.cli

    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "")  # (restored after the test: main sets it)
    monkeypatch.delenv("HF_HUB_DISABLE_PROGRESS_BARS")
    monkeypatch.setitem(COMMANDS, "score", lambda args: 0)
    monkeypatch.setattr(ui.cli, "run", lambda args: 0)
    monkeypatch.setattr(sys, "stderr", Terminal())
    assert main(["score", str(tmp_path)]) == 0 and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert main(["ui"]) == 0 and "HF_HUB_DISABLE_PROGRESS_BARS" not in os.environ
    assert main(["score", str(tmp_path)]) == 0 and os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] == "1"


def one_call(separator, song, samples: int) -> np.ndarray:
    """--separate-vocals' vocals as made before windows: the whole song normalized, separated in one Demucs call,
    put back to its level, downmixed and resampled to 16 kHz (the bytes a workdir's cached vocals were made of)."""
    import librosa

    from musicvid.core.audio import decode
    from musicvid.lyrics.vocals import OVERLAP
    from musicvid.models.internals import demucs_stem

    mix = torch.from_numpy(decode(song, 44100, 2).reshape(-1, 2).T.copy())
    mean, std = mix.mean(0).mean(), mix.mean(0).std().clamp_min(1e-8)
    with torch.inference_mode():
        vocals = (demucs_stem(separator, (mix - mean) / std, "vocals", OVERLAP, False) * std + mean).mean(0)
    heard = librosa.resample(vocals.numpy(), orig_sr=44100, target_sr=SAMPLE_RATE).astype(np.float32)
    return np.pad(heard, (0, max(0, samples - heard.size)))[:samples]


def test_a_song_shorter_than_a_window_gives_the_vocals_of_one_demucs_call_byte_for_byte(tmp_path):
    from musicvid.lyrics.vocals import separate_vocals
    from musicvid.models.tiny import tiny_demucs

    song, separator = make_tone(tmp_path / "song.wav", 3.0), tiny_demucs().eval()
    vocals = separate_vocals(separator, song, 3 * SAMPLE_RATE, quiet=True)
    assert vocals.dtype == np.float32 and vocals.tobytes() == one_call(separator, song, 3 * SAMPLE_RATE).tobytes()


def windows_of(monkeypatch, step: float, overlap: float, margin: float, separate) -> list[int]:
    """The lengths of what `separate` (in demucs_stem's place) is given, windows of `step` + `overlap` seconds
    faded `margin` in from their edges."""
    from musicvid.lyrics import vocals

    given = []
    monkeypatch.setattr(vocals, "WINDOW_STEP_SECONDS", step)
    monkeypatch.setattr(vocals, "WINDOW_OVERLAP_SECONDS", overlap)
    monkeypatch.setattr(vocals, "FADE_MARGIN_SECONDS", margin)
    monkeypatch.setattr(
        vocals,
        "demucs_stem",
        lambda model, mix, *how, **bar: given.append(mix.shape[1]) or separate(model, mix, *how, **bar),
    )
    return given


def test_a_long_song_is_separated_a_window_at_a_time_and_joined_without_a_seam(monkeypatch, tmp_path):
    """A separator that gives the mix back: each window is at most a window long, and the joined vocals are the
    song, whole, with nothing lost or counted twice where windows overlap."""
    from musicvid.core.audio import song_samples
    from musicvid.lyrics.vocals import separate_vocals

    given = windows_of(monkeypatch, 2.0, 1.0, 0.25, lambda model, mix, *how, **bar: mix)
    song, separator = make_tone(tmp_path / "song.wav", 7.5), SimpleNamespace(samplerate=SAMPLE_RATE, audio_channels=1)
    samples = song_samples(song)[0]
    heard = separate_vocals(separator, song, samples.size, quiet=True)
    assert given == [3 * SAMPLE_RATE] * 3 + [SAMPLE_RATE * 3 // 2]  # windows at 0, 2, 4 and 6 s
    assert heard.size == samples.size and np.allclose(heard, samples, atol=1e-6)


@pytest.mark.slow
@pytest.mark.ci  # (22 s: the suite keeps the join's windows and a short song's bytes)
def test_the_tiny_demucs_gives_a_long_song_the_vocals_of_one_call_window_by_window(monkeypatch, tmp_path):
    """Windows start on Demucs' own segment steps (the tiny htdemucs: 7.8 s segments, 5.85 s steps) and fade where
    both are a segment from their edges: there Demucs separated the same segments at the same places and weighed
    them alike, so the joined vocals are one call's up to float rounding (the resampler's: ~3e-7 of the peak here).
    1e-4 of the peak allows for other CPUs' rounding and is still far under a seam (windows off Demucs' steps, each
    with its own segments, miss one call by about the peak itself with this random model)."""
    from musicvid.lyrics.vocals import separate_vocals
    from musicvid.models.internals import demucs_stem
    from musicvid.models.tiny import tiny_demucs

    given = windows_of(monkeypatch, 17.55, 17.55, 7.8, demucs_stem)
    song, separator = make_tone(tmp_path / "song.wav", 36.0), tiny_demucs().eval()
    vocals = separate_vocals(separator, song, 36 * SAMPLE_RATE, quiet=True)
    assert given == [round(35.1 * 44100), round(18.45 * 44100)]
    whole = one_call(separator, song, 36 * SAMPLE_RATE)
    assert vocals.shape == whole.shape and np.abs(whole).max() > 1e-4
    assert np.abs(vocals - whole).max() < 1e-4 * np.abs(whole).max()
