"""Audio in: decode any file ffmpeg reads, once, to 16 kHz mono float32; its duration, hash and tags."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from musicvid.errors import UserError

SAMPLE_RATE = 16_000  # what Whisper expects
# A file that decodes to less than this share of the length its header declares is cut off.
TRUNCATION_TOLERANCE = 0.9


@lru_cache(maxsize=1)
def ffmpeg_exe() -> str:
    """ffmpeg from PATH if there is one, else the binary shipped by the imageio-ffmpeg wheel."""
    found = shutil.which("ffmpeg")
    if found:
        return found
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


@dataclass(frozen=True)
class AudioInfo:
    path: str
    sha256: str
    duration: float
    title: str
    artist: str


@dataclass(frozen=True)
class Audio:
    info: AudioInfo
    samples: np.ndarray  # float32, mono, SAMPLE_RATE


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_readable(path: Path, what: str = "audio file") -> None:
    """Refuse, in one sentence, a path that is not a readable, non-empty file."""
    if not path.exists():
        raise UserError(f"{what} not found: {path}")
    if path.is_dir():
        raise UserError(f"{path} is a directory, not an {what}")
    try:
        with path.open("rb") as f:
            empty = not f.read(1)
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from None
    if empty:
        raise UserError(f"{path} is empty (0 bytes)")


def _ffmpeg_reason(stderr: str) -> str:
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    for line in reversed(lines):
        if "matches no streams" in line:
            return "it has no audio stream"
    return lines[-1] if lines else "ffmpeg gave no reason"


def _declared_duration(stderr: str) -> float | None:
    match = re.search(r"Duration: (\d+):(\d+):(\d+(?:\.\d+)?)", stderr)
    if not match:
        return None
    hours, minutes, seconds = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def decode(path: Path, rate: int = SAMPLE_RATE, channels: int = 1) -> np.ndarray:
    """All of the first audio stream as float32 samples (16 kHz mono unless asked otherwise; channels
    interleaved)."""
    command = [
        ffmpeg_exe(), "-hide_banner", "-nostdin", "-i", str(path),
        "-map", "0:a:0", "-vn", "-ac", str(channels), "-ar", str(rate), "-f", "f32le", "pipe:1",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True)
    stderr = result.stderr.decode("utf-8", "replace")
    if result.returncode != 0:
        raise UserError(f"{path} is not audio that ffmpeg can read: {_ffmpeg_reason(stderr)}")
    samples = np.frombuffer(result.stdout, dtype=np.float32).copy()  # writable, as torch wants
    if samples.size == 0:
        raise UserError(f"{path} contains no audio samples")
    decoded = samples.size / (rate * channels)
    declared = _declared_duration(stderr)
    if declared and decoded < TRUNCATION_TOLERANCE * declared:
        raise UserError(
            f"{path} looks truncated or corrupt: its header says {declared:.1f} s but only {decoded:.1f} s decode"
        )
    return samples


def read_tags(path: Path) -> tuple[str, str]:
    """(title, artist) from the file's tags, else from an "Artist - Title" file name, else the stem."""
    title = artist = ""
    try:
        import mutagen

        tags = mutagen.File(path, easy=True)
        if tags is not None and tags.tags is not None:
            title = (tags.get("title") or [""])[0].strip()
            artist = (tags.get("artist") or [""])[0].strip()
    except Exception:  # tags are a convenience: any unreadable tag block just means "no tags"
        pass
    if not title:
        stem = path.stem
        if " - " in stem:
            name_artist, name_title = (part.strip() for part in stem.split(" - ", 1))
            title, artist = name_title, artist or name_artist
        else:
            title = stem
    return title, artist


def beat_times(samples: np.ndarray) -> list[float]:
    """Where the beats fall (seconds), by librosa's beat tracker."""
    import librosa

    _, frames = librosa.beat.beat_track(y=samples, sr=SAMPLE_RATE)
    return librosa.frames_to_time(frames, sr=SAMPLE_RATE).tolist()


def load_audio(path: str | Path) -> Audio:
    path = Path(path)
    check_readable(path)
    samples = decode(path)
    title, artist = read_tags(path)
    info = AudioInfo(
        path=str(path), sha256=file_sha256(path), duration=samples.size / SAMPLE_RATE, title=title, artist=artist
    )
    return Audio(info=info, samples=samples)
