"""ffmpeg, in one place: finding the binary, naming files so that no name is a protocol, probing a
file's declared length, remuxing a file into another container, and the one sentence that says why ffmpeg
failed."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from functools import lru_cache
from pathlib import Path

from musicvid.core.errors import RenderError


@lru_cache(maxsize=1)
def exe() -> str:
    """ffmpeg from PATH if there is one, else the binary shipped by the imageio-ffmpeg wheel."""
    found = shutil.which("ffmpeg")
    if found:
        return found
    import imageio_ffmpeg

    return imageio_ffmpeg.get_ffmpeg_exe()


def file_url(path: str | os.PathLike) -> str:
    """A local file as ffmpeg must be told it: `Interlude: night.mp3` or `http:x.mp3` would otherwise be
    read as a protocol (and a name starting with '-' as an option)."""
    return "file:" + str(Path(path).absolute())


# What ffmpeg says after the error itself, as each of its threads gives up: never the reason
_CASCADE = (
    "Nothing was written into output file",
    "Terminating thread",
    "Task finished with error code",
    "Could not open encoder before EOF",
    "Error sending frames to consumers",
    "Error reinitializing filters",
    "Failed to configure",
    "Error while opening encoder",
    "Conversion failed",
)


def reason(stderr: str, returncode: int = 1) -> str:
    """The line of ffmpeg's error output that says what went wrong: the last one that is not the cascade after it;
    or, for an ffmpeg a signal stopped (`returncode` below 0), which (it wrote no reason)."""
    if returncode < 0:
        named = {number.value: number.name for number in signal.Signals}
        limit = ": a file outgrew the size limit (ulimit -f)" if -returncode == signal.SIGXFSZ else ""
        return f"ffmpeg was stopped by {named.get(-returncode, f'signal {-returncode}')}{limit}"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if "matches no streams" in line:
            return "it has no audio stream"
    causes = [line for line in lines if not any(words in line for words in _CASCADE)]
    return (causes or lines or ["ffmpeg gave no reason"])[-1]


# ffmpeg's own line for its input's length is indented by two spaces; the tags it prints before it, by four or more
# (a tag's text may say "Duration: 01:30:00").
_DURATION = re.compile(r"^  Duration: (\d+):(\d+):(\d+(?:\.\d+)?)", re.MULTILINE)
# ffmpeg's word that its length is the file's size over its first frames' bit rate (raw AAC, a VBR MP3 without its
# index, a WAV cut short): 3 to 28 times off for a song that starts quietly, so no length to judge a song by.
_ESTIMATED = "Estimating duration from bitrate"
# A stream of moving pictures (not a cover's still): the container's length may then be the pictures', not the song's.
_MOVING_PICTURE = re.compile(r"^\s*Stream #.*: Video: (?!.*\(attached pic\))", re.MULTILINE)
# The MP4 demuxer's word that the file's index lists sound past its end: the file was cut off.
_PARTIAL = ": partial file"
_AUDIO_STREAM = re.compile(r"^\s*Stream #0:\d+.*: Audio: (.*)$", re.MULTILINE)


def parse_duration(stderr: str, sound: bool = False) -> float | None:
    """The length a file's header declares, from ffmpeg's description of its input (None where ffmpeg only estimates
    it); with `sound`, the sound's: None where the file has moving pictures too (a video may run on after its song),
    unless its sound was found cut off (a decoding's `stderr`): then the container's, which its sound was to fill."""
    match = _DURATION.search(stderr)
    if not match or _ESTIMATED in stderr or (sound and _PARTIAL not in stderr and _MOVING_PICTURE.search(stderr)):
        return None
    hours, minutes, seconds = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def describe(path: str | os.PathLike) -> str:
    """ffmpeg's description of a file as its input (read without decoding the audio); "" if ffmpeg could not read it."""
    try:
        probe = subprocess.run(
            [exe(), "-hide_banner", "-nostdin", "-i", file_url(path)], capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return probe.stderr.decode("utf-8", "replace")


def declared_duration(path: str | os.PathLike, sound: bool = False) -> float | None:
    """Seconds, as the file's header says (with `sound`, parse_duration's); None if it says nothing."""
    return parse_duration(describe(path), sound)


def song_stream(path: str | os.PathLike) -> int:
    """Which of a file's audio streams is its song, counted among them as `-map 0:a:N` counts them: the one the file
    marks default (the one a player plays), else the first. The analysis and the mux both take this one."""
    streams = _AUDIO_STREAM.findall(describe(path))
    return next((number for number, line in enumerate(streams) if "(default)" in line), 0)


def remux(source: str | os.PathLike, target: str | os.PathLike, container: str) -> None:
    """Every stream of `source`, as it is (no re-encode), written at `target` in ffmpeg's `container` (its muxer's
    name: "matroska"). Bit-exact: without it the muxer writes random ids, so a render resumed or run again would
    write other bytes than the one before."""
    done = subprocess.run(
        [exe(), "-v", "error", "-nostdin", "-y", "-i", file_url(source), "-map", "0", "-c", "copy"]
        + ["-fflags", "+bitexact", "-f", container, file_url(target)],
        capture_output=True,
    )
    if done.returncode != 0:
        raise RenderError(
            f"ffmpeg could not remux the video: {reason(done.stderr.decode('utf-8', 'replace'), done.returncode)}"
        )
