"""Audio in: decode any file ffmpeg reads, once, to 16 kHz mono float32 (a stereo song whose channels cancel in
that mix: its side, heard_mix); its duration, hash, tags and beats."""

from __future__ import annotations

import logging
import subprocess
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from musicvid.core import ffmpeg
from musicvid.core.errors import UserError
from musicvid.core.files import MAX_SONG_SECONDS, MAX_TEXT_CHARS, check_file, file_sha256
from musicvid.core.kernels import kernels_compiled
from musicvid.core.paths import shown, without_controls

SAMPLE_RATE = 16_000  # what Whisper expects
# A file that decodes to less than this share of the length its header declares, and misses more than
# half a second of it, is cut off: a valid MP3 of a fraction of a second, whose length without a Xing
# header is estimated from its bit rate, can declare a frame or two (tens of ms) more than it holds.
TRUNCATION_TOLERANCE = 0.9
TRUNCATION_SLACK_SECONDS = 0.5
BEAT_HOP = 256  # 16 ms: an onset value per video frame at up to 60 fps (several at the default 10)
# A data chunk's size from a writer that could not seek back to write it (ffmpeg, arecord, sox to a pipe: 0,
# 0xFFFFFFFF, 0x7FFFFFFF, 0x7FFFF000) is no length; a WAV this big would last over 3 hours at CD quality.
WAV_UNKNOWN_SIZE = 0x7FFF0000
# A mix quieter than this (RMS, -30 dBFS) may be one that cancels itself: only then are its two channels decoded too
# (heard_mix), so a song's mix of ordinary loudness is taken as ffmpeg makes it, at one decoding.
QUIET_MIX_RMS = 0.03
# A mix this much (20 dB) weaker than its side (L-R)/2 is of channels each nearly the other's negation (their
# correlation under -0.98): a stereo song with one channel's phase inverted (an old recording, a bad master, a
# "karaoke" rip), whose mono mix cancels what two speakers play. An ordinary mix's side is at most about as loud as
# its mid (uncorrelated channels).
INVERTED_PHASE_RATIO = 0.1
log = logging.getLogger("musicvid")


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
    side: bool = False  # the samples are the song's side (L-R)/2, its mono mix cancelling itself: heard_mix


def decode(path: Path, rate: int = SAMPLE_RATE, channels: int = 1, max_seconds: float | None = None) -> np.ndarray:
    """All of the song's audio stream (ffmpeg.song_stream) as float32 samples (16 kHz mono unless asked otherwise;
    channels interleaved), one after another: a gap in its timestamps is closed, as the mux closes it. With
    `max_seconds`, ffmpeg stops just past it, so a file whose header lies about its length still cannot fill the
    memory."""
    command = [
        ffmpeg.exe(),
        "-hide_banner",
        "-nostdin",
        "-i",
        ffmpeg.file_url(path),
        *(["-t", f"{max_seconds + 1:.3f}"] if max_seconds is not None else []),
        "-map",
        f"0:a:{ffmpeg.song_stream(path)}",
        "-vn",
        "-ac",
        str(channels),
        "-ar",
        str(rate),
        "-f",
        "f32le",
        "pipe:1",
    ]
    result = subprocess.run(command, capture_output=True)
    stderr = result.stderr.decode("utf-8", "replace")
    if result.returncode != 0 and "moov atom not found" in stderr:  # (an MP4's index, which its writer adds last)
        raise UserError(f"{path} looks truncated: its index (an MP4's moov) is missing; copy or download it again")
    if result.returncode != 0:
        raise UserError(f"{path} is not audio that ffmpeg can read: {ffmpeg.reason(stderr)}")
    samples = np.frombuffer(result.stdout, dtype=np.float32).copy()  # writable, as torch wants
    if samples.size == 0:
        raise UserError(f"{path} contains no audio samples")
    check_numbers(path, samples, rate * channels)
    decoded = samples.size / (rate * channels)
    if max_seconds is not None and decoded > max_seconds:
        raise UserError(too_long(path, decoded, max_seconds))
    declared = declared_seconds(path, stderr)
    if declared and decoded < shortest_whole(declared):
        raise UserError(cut_off(path, declared, decoded, "only"))
    return samples


def cut_off(path: Path, declared: float, found: float, how: str) -> str:
    return f"{path} looks truncated or corrupt: its header says {declared:.1f} s but {how} {found:.1f} s decode"


def check_numbers(path: Path, samples: np.ndarray, per_second: int) -> None:
    """Refuse a song with samples that are not numbers (a float file's NaN or infinity): every stage would take it,
    up to librosa's check or the AAC encoder, after the models' work."""
    bad = np.flatnonzero(~np.isfinite(samples))
    if bad.size:
        raise UserError(
            f"{path} holds samples that are not numbers (NaN or infinity), the first at {bad[0] / per_second:.1f} s: "
            "export it again"
        )


def declared_seconds(path: Path, description: str) -> float | None:
    """The length the song's file declares for its sound: ffmpeg's (declared_duration, from its `description`), else,
    where ffmpeg only estimates it, a WAV's data chunk's (ffmpeg estimates a WAV cut short from its size, which is all
    that decodes)."""
    declared = ffmpeg.declared_duration(path, sound=True, description=description)
    return declared if declared is not None else wav_seconds(path)


def _wav_info(path: Path):
    """A WAV's header as mutagen reads it; None for any other file."""
    import mutagen.wave

    try:
        return mutagen.wave.WAVE(path).info
    except (mutagen.MutagenError, OSError, ValueError):
        return None


def wav_seconds(path: Path) -> float | None:
    """The length a WAV declares in its data chunk; None for any other file, and where its writer could not know the
    size (it wrote to a pipe)."""
    info = _wav_info(path)
    if info is None:
        return None
    size = info.length * info.sample_rate * info.channels * info.bits_per_sample / 8
    return info.length if 0 < size < WAV_UNKNOWN_SIZE else None


def wav_held_seconds(path: Path) -> float | None:
    """The most sound a WAV's file holds, by its size (its header's bytes counted as sound: at most this); None for
    any other file."""
    info = _wav_info(path)
    per_second = info and info.sample_rate * info.channels * info.bits_per_sample / 8
    return path.stat().st_size / per_second if per_second else None


def shortest_whole(declared: float) -> float:
    """The least a song whose header declares `declared` seconds decodes to and is not refused as cut off."""
    return declared - max((1 - TRUNCATION_TOLERANCE) * declared, TRUNCATION_SLACK_SECONDS)


def too_long(path: Path, seconds: float, max_seconds: float) -> str:
    return f"{path} lasts {seconds / 60:.1f} minutes; the limit is {max_seconds / 60:g} minutes"


def check_length(path: Path, max_seconds: float) -> None:
    """Refuse a song longer than the limit by what its header declares, before decoding any of it; and a file that
    names other files for ffmpeg to read (ffmpeg.list_at_head, ffmpeg.naming_others), whose sound is theirs; and one
    ffmpeg could not describe within its time (one that names a pipe no one writes: decoded, it would wait forever)."""
    listed = ffmpeg.list_at_head(path)
    description = "" if listed else ffmpeg.describe(path)
    if demuxer := listed or ffmpeg.naming_others(description):
        raise UserError(
            f"{path} is a list of other files that ffmpeg would read as the song ({demuxer}), not a song: "
            "give the audio file itself"
        )
    if not description:
        raise UserError(f"ffmpeg could not read {path} within a minute: give the audio file itself")
    declared = declared_seconds(path, description)
    if declared is not None and declared > max_seconds:
        held = wav_held_seconds(path)  # (a WAV cut off, whose header says hours: not a long song)
        if held is not None and held < shortest_whole(declared):
            raise UserError(cut_off(path, declared, held, "at most"))
        raise UserError(too_long(path, declared, max_seconds))


def read_tags(path: Path) -> tuple[str, str]:
    """(title, artist) from the file's tags (mutagen's, else the container's as ffmpeg reads them: a WAV's RIFF
    INFO, which mutagen does not read), else from an "Artist - Title" file name, else the stem."""
    title, artist = tagged(path)
    if not title:
        stem = path.stem
        if " - " in stem:
            name_artist, name_title = (part.strip() for part in stem.split(" - ", 1))
            title, artist = name_title, artist or name_artist
        else:
            title = stem
    return title, artist


def tagged(path: Path) -> tuple[str, str]:
    """(title, artist) as the file's tags give them, each "" where none does; each cut to what a person may type
    as a title (a tag may be megabytes), its spaces and control characters one space each. Tags are a convenience:
    an unreadable tag block means no tags."""
    tags: dict[str, str] = {}
    try:
        import mutagen

        found = mutagen.File(path, easy=True)
        if found is not None and found.tags is not None:
            tags = {key: (found.get(key) or [""])[0] for key in ("title", "artist")}
    except Exception:
        pass
    if not any(value.strip() for value in tags.values()):
        try:
            import av  # (faster-whisper's, so always here)

            with av.open(str(path), metadata_errors="ignore") as container:
                tags = {key.lower(): value for key, value in container.metadata.items()}
        except Exception:
            pass
    # (and without control characters, each a space: the page fills its Title and Artist with them, which a typed
    # control character is refused in, and they name the video and go into ViPE's prompt)
    return tuple(
        " ".join(without_controls(str(tags.get(key) or "")).split())[:MAX_TEXT_CHARS] for key in ("title", "artist")
    )


@dataclass(frozen=True)
class Beats:
    """The song's pulse, once for all that follows it: the scenes' cuts and the morphs' pacing."""

    onset: np.ndarray  # onset strength per hop
    times: np.ndarray  # the time of each hop (s)
    beats: np.ndarray  # hops where a beat falls

    @property
    def seconds(self) -> list[float]:
        """Where the beats fall (s)."""
        return self.times[self.beats].tolist()


@contextmanager
def short_song_windows():
    """Within it, librosa's warning that its window is longer than the song is not the person's: a song of a second
    or two is shorter than chroma's lowest octave's window, one of 0.05 s than any (each still gives its frames)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "n_fft=.* is too large", UserWarning)
        yield


def find_beats(samples: np.ndarray) -> Beats:
    """librosa's onset strength (spectral flux: where a sound starts) and its beat tracker on it."""
    import librosa

    with kernels_compiled("beats"), short_song_windows():  # (numba's: one process at a time)
        onset = librosa.onset.onset_strength(y=samples, sr=SAMPLE_RATE, hop_length=BEAT_HOP)
        _, beats = librosa.beat.beat_track(onset_envelope=onset, sr=SAMPLE_RATE, hop_length=BEAT_HOP)
    times = librosa.frames_to_time(np.arange(onset.size), sr=SAMPLE_RATE, hop_length=BEAT_HOP)
    return Beats(onset, times, np.asarray(beats, dtype=int))


def song_samples(path: Path, max_seconds: float = MAX_SONG_SECONDS) -> tuple[np.ndarray, bool]:
    """The song's sound decoded (decode), refused (before decoding, where its header tells) if longer than
    `max_seconds`: its size / SAMPLE_RATE is the song's length, as every stage after it measures it. And whether
    they are its side (heard_mix)."""
    check_file(path, "audio file")
    check_length(path, max_seconds)
    return heard_mix(path, decode(path, max_seconds=max_seconds), max_seconds)


def heard_mix(path: Path, mix: np.ndarray, max_seconds: float) -> tuple[np.ndarray, bool]:
    """The song's sound as its analysis hears it (its voice, beats and loudness, Whisper): `mix`, ffmpeg's mono mix of
    it; but where that is quiet (QUIET_MIX_RMS) and far weaker than its side (INVERTED_PHASE_RATIO: a channel's phase
    inverted, so that the mix cancels what a player plays), the side (L-R)/2, said in a warning. And whether it is the
    side."""
    if loudness(mix) >= QUIET_MIX_RMS:
        return mix, False
    stereo = decode(path, channels=2, max_seconds=max_seconds).reshape(-1, 2)
    side = (stereo[:, 0] - stereo[:, 1]) / 2
    if not cancelling(mix, side):  # (ffmpeg's mix, a mono song's: no side)
        return mix, False
    log.warning(
        "%s: its left and right channels are nearly opposite (one's phase inverted), so that its mono mix is all but "
        "silent: the analysis hears their difference instead",
        shown(path),
    )
    return side, True


def cancelling(mix: np.ndarray, side: np.ndarray) -> bool:
    """Whether a stereo song's channels cancel in its mono `mix`: it is quiet (QUIET_MIX_RMS) and far weaker than its
    `side` (L-R)/2 (INVERTED_PHASE_RATIO)."""
    return loudness(mix) < QUIET_MIX_RMS and loudness(mix) < INVERTED_PHASE_RATIO * loudness(side)


def loudness(samples: np.ndarray) -> float:
    """The samples' RMS."""
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))


def load_audio(path: str | Path, max_seconds: float = MAX_SONG_SECONDS) -> Audio:
    """The song decoded (song_samples), with its hash and tags."""
    path = Path(path)
    samples, side = song_samples(path, max_seconds)
    title, artist = read_tags(path)
    info = AudioInfo(
        path=str(path), sha256=file_sha256(path), duration=samples.size / SAMPLE_RATE, title=title, artist=artist
    )
    return Audio(info=info, samples=samples, side=side)
