"""ffmpeg, in one place: finding the binary, naming files so that no name is a protocol, probing a
file's declared length (and whether a Matroska file is whole), remuxing a file into another container, and the
one sentence that says why ffmpeg failed."""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
from functools import lru_cache
from pathlib import Path

from musicvid.core.errors import FULL, RenderError
from musicvid.core.paths import file_version


@lru_cache(maxsize=1)
def exe() -> str:
    """The ffmpeg the imageio-ffmpeg wheel ships (the version requirements.lock pins, which the suite runs), or the one
    IMAGEIO_FFMPEG_EXE names: not PATH's, whose older builds read some files otherwise (Debian 12's 5.1 took a video
    cut short for whole, and refuses a 7.1.4 layout)."""
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
    "Decode error rate",  # the decoder's count of the errors it has just named
    "Error initializing filters",
    "Neither number of channels nor channel layout specified",  # a filter given no audio: the decoder failed
)
_PROGRESS = re.compile(r"^(frame|size)=.*\btime=")  # its progress line, which it writes last, error or not


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
    causes = [line for line in lines if not any(words in line for words in _CASCADE) and not _PROGRESS.match(line)]
    return (causes or lines or ["ffmpeg gave no reason"])[-1]


def failed(what: str, stderr: str, returncode: int, written: Path) -> Exception:
    """ffmpeg's failure to `what` ("write the video") as the error to raise: where it ran out of room writing
    `written` (its output says so in the words of a FULL errno, or the size limit's SIGXFSZ stopped it), the
    OSError a write of ours would raise there, which musicvid.core.errors.out_of_room says as one sentence; else a
    RenderError with its reason."""
    lines = stderr.splitlines()
    full = [number for number in FULL if any(os.strerror(number) in line for line in lines)]
    if returncode == -signal.SIGXFSZ:
        full.append(errno.EFBIG)
    if full:
        return OSError(full[0], os.strerror(full[0]), str(written))
    return RenderError(f"ffmpeg could not {what}: {reason(stderr, returncode)}")


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
# A Matroska (WebM) file's first element, and its Segment's, which holds all the rest
_EBML = b"\x1a\x45\xdf\xa3"
_SEGMENT = b"\x18\x53\x80\x67"
_AUDIO_STREAM = re.compile(r"^\s*Stream #0:(\d+).*: Audio: (.*)$", re.MULTILINE)
_FORMAT = re.compile(r", (\d+) Hz, ([^,]+)")  # in an audio stream's line: "mp3 (mp3float), 44100 Hz, mono, fltp"
_OUTPUTS = re.compile(r"^(?:Stream mapping:|Output #)", re.MULTILINE)  # where ffmpeg's description of its input ends
_DEMUXER = re.compile(r"^Input #0, (.+), from '", re.MULTILINE)
# ffmpeg's demuxers that read the files or addresses their input names (playlists, scripts, lists of files): ffmpeg
# follows those names, wherever they lead, so another file's sound would be taken for the song's (file_url guards
# the song's own name alone).
NAMING_OTHERS = frozenset(
    {"hls", "applehttp", "dash", "webm_dash_manifest", "concat", "imf", "sdp", "rtp", "rtsp", "avisynth", "vapoursynth"}
)
# What ffmpeg's concat demuxer says of a list that names a file by an absolute path (it is then not opened at all)
_UNSAFE_NAME = "] Unsafe file name '"


def parse_duration(stderr: str, sound: bool = False, cut_off: bool = False) -> float | None:
    """The length a file's header declares, from ffmpeg's description of its input (None where ffmpeg only estimates
    it); with `sound`, the sound's: None where the file has moving pictures or another audio stream too (the
    container's length is its longest stream's: a video may run on after its song, a second language's track past
    the first), unless the file was found `cut_off` (matroska_cut_off) or its sound was (a decoding's `stderr`):
    then the container's, which its sound was to fill."""
    match = _DURATION.search(stderr)
    if not match or _ESTIMATED in stderr:
        return None
    read = _OUTPUTS.split(stderr, maxsplit=1)[0]  # the input's streams (a decoding's output is one audio stream)
    others = _MOVING_PICTURE.search(read) or len(audio_streams(read)) > 1
    if sound and not (cut_off or _PARTIAL in stderr) and others:
        return None
    hours, minutes, seconds = match.groups()
    return int(hours) * 3600 + int(minutes) * 60 + float(seconds)


def describe(path: str | os.PathLike) -> str:
    """ffmpeg's description of a file as its input (read without decoding the audio), once per version of the file
    (file_version) in a process: a render wants it to check the song's length, to decode it and to mux it; "" where
    ffmpeg could not be run on it (no file there, a timeout: tried again the next time)."""
    try:
        return _description(file_url(path), file_version(os.stat(path)))
    except (OSError, subprocess.TimeoutExpired):
        return ""


@lru_cache(maxsize=64)
def _description(url: str, version: tuple[int, ...]) -> str:
    """ffmpeg's description of the file at `url`, cached by its `version` too."""
    probe = subprocess.run([exe(), "-hide_banner", "-nostdin", "-i", url], capture_output=True, timeout=60)
    return probe.stderr.decode("utf-8", "replace")


def naming_others(description: str) -> str | None:
    """The demuxer ffmpeg's `description` of its input names where it is one that reads other files the input names
    (NAMING_OTHERS: an HLS playlist, an ffconcat list); None for any other."""
    found = _DEMUXER.search(description)
    if found is None and _UNSAFE_NAME in description:
        return "concat"
    names = found[1].split(",") if found else []
    return next((name for name in names if name in NAMING_OTHERS), None)


def list_at_head(path: str | os.PathLike) -> str | None:
    """The demuxer of NAMING_OTHERS that a file's first bytes name as a list, as ffmpeg's probes read them (an ffconcat
    list's "ffconcat version", an M3U's "#EXTM3U": no song starts so), before ffmpeg opens what it names (a pipe
    named there would hold it); None for any other file."""
    try:
        with open(path, "rb") as file:
            head = file.read(64).removeprefix(b"\xef\xbb\xbf")
    except OSError:
        return None
    return "concat" if head.startswith(b"ffconcat version") else "hls" if head.startswith(b"#EXTM3U") else None


def declared_duration(path: str | os.PathLike, sound: bool = False, description: str | None = None) -> float | None:
    """Seconds, as the file's header says (with `sound`, parse_duration's), from ffmpeg's `description` of it where
    the caller has one (a decoding's may say the file was cut off), else describe's; None if it says nothing, or if
    it is a Matroska file whose Segment declares no size (matroska_cut_off)."""
    cut_off = matroska_cut_off(path)
    if cut_off is None:
        return None
    return parse_duration(describe(path) if description is None else description, sound, cut_off)


def matroska_cut_off(path: str | os.PathLike) -> bool | None:
    """Whether a Matroska (WebM, MKA) file is shorter than the size its Segment declares: cut off, wherever the cut
    falls (ffmpeg says so only for most cuts). The muxer writes that size when it finishes, seeking back, as it does
    the Duration (and ffmpeg the streams' DURATION tags): None where the Segment declares no size, as its writer could
    not seek back (a pipe, a live recording, a writer killed), so that any Duration in it was written before its sound
    was (ffmpeg writes -t's) and is no length. False for any other file."""
    try:
        with open(path, "rb") as file:
            head = file.read(4096)  # (the EBML header is a few dozen bytes)
        size = os.path.getsize(path)
    except OSError:
        return False
    if not head.startswith(_EBML):
        return False
    try:
        header, at = _ebml_number(head, len(_EBML))
        at += header
        if header < 0 or head[at : at + len(_SEGMENT)] != _SEGMENT:
            return False
        segment, at = _ebml_number(head, at + len(_SEGMENT))
    except IndexError:  # a header cut inside its first bytes, or none at all
        return False
    return None if segment < 0 else size < at + segment


def _ebml_number(data: bytes, at: int) -> tuple[int, int]:
    """The EBML element size that starts at `at`, as its value (-1 for "unknown": all its bits set) and the byte after
    it. Its first byte's leading zeros say how many bytes follow."""
    length = 9 - data[at].bit_length()
    if length > 8 or at + length > len(data):
        raise IndexError(at)
    value = int.from_bytes(data[at : at + length], "big") & ((1 << (7 * length)) - 1)
    return (-1 if value == (1 << (7 * length)) - 1 else value), at + length


def song_stream(path: str | os.PathLike) -> int:
    """Which of a file's audio streams is its song, counted among them as `-map 0:a:N` counts them: the one the file
    marks default (the one a player plays), else the first. The analysis and the mux both take this one."""
    streams = audio_streams(describe(path))
    return next((number for number, line in enumerate(streams) if "(default)" in line), 0)


def song_format(path: str | os.PathLike) -> tuple[int, int]:
    """The song's stream's (song_stream) sample rate and channels as its file begins: 1 for mono, else 2 (AAC takes
    no 7.1.4: more channels are mixed down to two); 48 kHz stereo where ffmpeg's description says neither."""
    streams = audio_streams(describe(path))
    found = _FORMAT.search(streams[song_stream(path)]) if streams else None
    if found is None:
        return 48_000, 2
    return int(found[1]), 1 if found[2] in ("mono", "1 channels") else 2


def audio_streams(description: str) -> list[str]:
    """The audio streams of ffmpeg's `description` of its input (not of its output: a decoding's), each once (it
    lists a stream under each MPEG-TS program that holds it), in the order `-map 0:a:N` counts them."""
    found = {int(number): line for number, line in _AUDIO_STREAM.findall(_OUTPUTS.split(description, maxsplit=1)[0])}
    return [found[number] for number in sorted(found)]


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
        raise failed("remux the video", done.stderr.decode("utf-8", "replace"), done.returncode, target)
