"""Songs made for the tests and the benchmarks: espeak-ng lines at known times over a generated band.

The band is loud and busy, as in real songs: chords, a bass line, a kick, a snare and a hi-hat on a
120 bpm beat. The voice is slower and higher than espeak's defaults, more like singing than talking.
A song with a form (make_form_song) is made of parts, each with its own chords and drums: verses over
one progression, a chorus over another with the drums in, a calm and an energetic instrumental passage.
"""

from __future__ import annotations

import subprocess
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from musicvid.core.ffmpeg import exe as ffmpeg_exe

RATE = 16_000
BPM = 120.0


@dataclass(frozen=True)
class Singer:
    """An espeak-ng voice (a language's voice and a variant of it), its speed in words a minute and its
    pitch (0 to 99)."""

    voice: str = "en-us+f3"
    speed: int = 120
    pitch: int = 70


def voice(text: str, folder: Path, singer: Singer = Singer()) -> np.ndarray:
    """One sung line, starting where the voice does."""
    path = folder / "line.wav"
    subprocess.run(
        ["espeak-ng", "-v", singer.voice, "-s", str(singer.speed), "-p", str(singer.pitch), "-w", str(path), text],
        check=True,
    )
    with wave.open(str(path)) as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
        rate = w.getframerate()
    samples = np.interp(np.arange(0, len(samples), rate / RATE), np.arange(len(samples)), samples)
    sounding = np.flatnonzero(np.abs(samples) > 0.02)
    return samples[sounding[0] : sounding[-1] + 1]


MAJOR, MINOR = (1.0, 1.26, 1.5, 2.0), (1.0, 1.19, 1.5, 2.0)  # a triad and its octave, as frequency ratios
ROOTS = (110.0, 87.3, 130.8, 98.0)  # A, F, C, G


def band(
    seconds: float,
    seed: int = 0,
    *,
    roots: tuple[float, ...] = ROOTS,
    chord: tuple[float, ...] = MAJOR,
    chord_beats: int = 8,
    drums: float = 1.0,
    hats: int = 2,
    bpm: float = BPM,
) -> np.ndarray:
    """Chords (one per `chord_beats` beats, cycling through `roots`), a bass on the beat, kick, snare
    and hi-hat (`hats` to a beat) at `drums` times their usual level; no drums and no bass at 0."""
    rng = np.random.default_rng(seed)
    beat = 60.0 / bpm
    t = np.arange(int(seconds * RATE)) / RATE
    root = np.array(roots)[(t // (chord_beats * beat)).astype(int) % len(roots)]
    chords = sum(np.sin(2 * np.pi * root * ratio * t) for ratio in chord) / len(chord)
    bass = np.sin(2 * np.pi * root / 2 * t) * np.exp(-4 * (t % beat))
    since_beat, since_hat = t % beat, t % (beat / hats)
    kick = np.sin(2 * np.pi * (50 + 100 * np.exp(-30 * since_beat)) * since_beat) * np.exp(-12 * since_beat)
    noise = rng.standard_normal(t.size)
    snare = noise * np.exp(-25 * ((t - beat) % (2 * beat))) * ((t // beat) % 2 == 1)
    hihat = np.diff(noise, prepend=0) * np.exp(-80 * since_hat)
    return 0.12 * chords + drums * (0.15 * bass + 0.25 * kick + 0.08 * snare + 0.03 * hihat)


def make_song(path: Path, seconds: float, lines: list[tuple[float, str]], *, voice_level: float = 0.7) -> Path:
    """`lines` (start in seconds, text) sung over the band; written in the format `path` names."""
    return write_song(path, band(seconds), lines, voice_level)


@dataclass(frozen=True)
class Part:
    """A stretch of a song with a form: its length, its band (musicvid's `band` arguments) and the
    lines sung in it (start in seconds from the part's start, text)."""

    section: str
    seconds: float
    lines: tuple[tuple[float, str], ...] = ()
    band: dict | None = None


def make_form_song(
    path: Path, parts: list[Part], *, voice_level: float = 0.7
) -> tuple[Path, list[tuple[float, str, str]]]:
    """The parts one after another; returns the song and what is sung where: (start, text, section)."""
    mixes, sung, start = [], [], 0.0
    for n, part in enumerate(parts):
        mixes.append(band(part.seconds, seed=n, **(part.band or {})))
        sung += [(start + at, text, part.section) for at, text in part.lines]
        start += part.seconds
    return write_song(path, np.concatenate(mixes), [(at, text) for at, text, _ in sung], voice_level), sung


def write_song(
    path: Path, mix: np.ndarray, lines: list[tuple[float, str]], voice_level: float, singer: Singer = Singer()
) -> Path:
    """`lines` sung over `mix` by `singer`, written in the format `path` names."""
    mix = mix.copy()
    for start, text in lines:
        sung = voice(text, path.parent, singer)
        first = int(start * RATE)
        mix[first : first + len(sung)] += voice_level * sung[: len(mix) - first]
    wav = path.with_suffix(".wav")
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(RATE)
        w.writeframes((np.clip(mix, -1, 1) * 32767).astype(np.int16).tobytes())
    if path.suffix != ".wav":
        subprocess.run([ffmpeg_exe(), "-v", "error", "-y", "-i", str(wav), "-b:a", "128k", str(path)], check=True)
    return path
