"""What several test files use: songs made on the spot, `musicvid` run in this process, a video probed and its
frames counted, a valid storyboard's JSON."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import av
import numpy as np

from musicvid.cli import main
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.core.workdir import LOCK
from musicvid.lyrics.known import check_lyrics_file, read_lyrics
from musicvid.lyrics.transcript import Transcript

TINY_QUIET = ("--models", "tiny", "-q")  # the tiny models, without progress bars
# A 6.03 s song's lines (make_tone): an intro, two lyric scenes and an outro
TONE_LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"


def timed_lyrics(path: Path, duration: float) -> Transcript:
    """A timed lyrics file as a render reads it: checked (read there, once), then fitted to the song."""
    return read_lyrics(check_lyrics_file(path), duration)


def make_tone(path: Path, seconds: float, *extra: str) -> Path:
    """A short synthetic song (a chord of sines) in whatever format `path`'s suffix names."""
    subprocess.run(
        [
            ffmpeg_exe(),
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"sine=frequency=220:duration={seconds},volume=0.3",
            *extra,
            str(path),
        ],
        check=True,
    )
    return path


def click_track(seconds: float, bpm: float, rate: int = 16_000) -> tuple[np.ndarray, np.ndarray]:
    """Clicks (short bursts of noise) on every beat; the samples and the beat times."""
    samples = np.zeros(int(seconds * rate), dtype=np.float32)
    beats = np.arange(0.25, seconds - 0.1, 60 / bpm)
    burst = np.random.default_rng(0).standard_normal(400).astype(np.float32) * np.exp(-np.arange(400) / 80)
    for beat in beats:
        start = int(beat * rate)
        samples[start : start + burst.size] += 0.8 * burst
    return samples, beats


def run(capsys, *argv):
    """`musicvid ARGV` in this process: its exit code, and what it wrote to stdout and stderr."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_batch(*argv):
    """`musicvid batch ...`, in this process."""
    return main(["batch", *(str(a) for a in argv)])


def render(song, workdir, *options):
    """`musicvid render` of `song` with the tiny models and the timed lyrics beside it (its .lrc)."""
    argv = ["render", song, "--models", "tiny", "--lyrics", song.with_suffix(".lrc"), "--workdir", workdir, "-q"]
    return main([str(a) for a in argv + list(options)])


def probe(path):
    """What a video file holds: codecs, pixel format, rate, frames (decoded and counted), length, size."""
    with av.open(str(path)) as container:
        video = container.streams.video[0]
        audio = container.streams.audio[0]
        frames = sum(1 for _ in container.decode(video=0))
        return {
            "video_codec": video.codec_context.name,
            "pix_fmt": video.codec_context.pix_fmt,
            "audio_codec": audio.codec_context.name,
            "fps": video.average_rate,
            "frames": frames,
            "duration": float(container.duration / av.time_base),
            "size": (video.codec_context.width, video.codec_context.height),
        }


def valid_board() -> dict:
    """A storyboard's JSON as musicvid writes it: an intro and one lyric scene over 10 s."""
    return {
        "version": 1,
        "audio": {"path": "song.mp3", "sha256": "5" * 64, "duration": 10.0},
        "title": "Song",
        "artist": "Band",
        "language": "en",
        "settings": {
            "context_size": 7,
            "seed": 0,
            "break_seconds": 4.0,
            "bars_per_scene": 4,
            "candidates": 1,
            "lens": None,
            "transcript": "faster-whisper:tiny.en",
            "title": "Song",
            "artist": "Band",
            "models": {"asr": "faster-whisper:tiny.en", "vipe": "fittar/ViPE-M-CTX7", "diffusion": "tiny-random"},
        },
        "scenes": [
            {"index": 0, "kind": "intro", "start": 0.0, "end": 4.0, "text": "", "prompt": "a sky", "seed": 1},
            {"index": 1, "kind": "lyric", "start": 4.0, "end": 10.0, "text": "hi", "prompt": "a sea", "seed": 2},
        ],
    }


def referencing_board(folder: Path, song: Path, seconds: float) -> Path:
    """folder/refs.json: a storyboard of `song` (`seconds` long) whose two scenes each name folder/ref.png, a picture
    written there, as their own reference."""
    from PIL import Image

    from musicvid.core.files import file_sha256

    Image.new("RGB", (64, 64), (200, 40, 90)).save(folder / "ref.png")
    board = valid_board()
    board["audio"] = {"path": str(song), "sha256": file_sha256(song), "duration": seconds}
    board["scenes"][0]["end"] = board["scenes"][1]["start"] = 1.0
    board["scenes"][1]["end"] = seconds
    for scene in board["scenes"]:
        scene["reference"] = str(folder / "ref.png")
    (folder / "refs.json").write_text(json.dumps(board))
    return folder / "refs.json"


def digest(path: Path) -> str:
    """A file's SHA-256, read anew: what a test holds against a file it must find unchanged."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def quick(song: Path, *options) -> list:
    """`musicvid render` arguments for `song` that skip Whisper (a timed line beside it) and draw few frames."""
    lyrics = song.with_name("lyrics.lrc")
    lyrics.write_text("[00:00.50]a light in the storm\n")
    return ["render", song, "--models", "tiny", "-q", "--fps", "2", "--lyrics", lyrics, *options]


def storyboard_with_a_pin(song: Path, workdir: Path, scene: int) -> dict:
    """The storyboard musicvid makes of `song` (timed lyrics beside it, the tiny models) in `workdir`, as JSON,
    with a picture pinned to scene `scene` (a red square beside the song)."""
    from PIL import Image

    options = ["--models", "tiny", "--lyrics", song.with_suffix(".lrc"), "--workdir", workdir, "-q"]
    assert main([str(a) for a in ["storyboard", song, *options]]) == 0
    board = json.loads((workdir / "storyboard.json").read_text())
    pinned = song.with_name("pinned.png")
    Image.new("RGB", (64, 64), (200, 40, 90)).save(pinned)
    board["scenes"][scene]["picture"] = str(pinned)
    return board


def work_directory(folder: Path) -> Path:
    """`folder` as a run leaves a work directory it made, marked by its lock file: musicvid's, so that a test may
    put there what a run keeps (a transcript, to skip recognition) or what a person adds later."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / LOCK).touch()
    return folder


def video_frames(path: Path) -> int:
    """The frames the video decodes to, counted one by one (not as its header says)."""
    with av.open(str(path)) as container:
        return sum(1 for _ in container.decode(video=0))


def decoded(path, indices: set[int]) -> dict[int, np.ndarray]:
    """The video's frames at `indices`, as RGB arrays."""
    with av.open(str(path)) as container:
        return {k: f.to_ndarray(format="rgb24") for k, f in enumerate(container.decode(video=0)) if k in indices}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    """The peak signal-to-noise ratio of two 8-bit pictures, in dB."""
    return 10 * math.log10(255**2 / np.mean((a.astype(float) - b.astype(float)) ** 2))


def dead_pid() -> int:
    """The id of a process that has ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def ray_node(gpus: float, alive: bool = True) -> dict:
    """One node as ray.nodes() describes it: whether it is up, and what it offers."""
    return {"Alive": alive, "Resources": {"CPU": 4.0, "GPU": gpus}}
