"""Songs made for the tests and the benchmarks: espeak-ng lines at known times over a generated band.

The band is loud and busy, as in real songs: chords, a bass line, a kick, a snare and a hi-hat on a
120 bpm beat. The voice is slower and higher than espeak's defaults, more like singing than talking.
"""

from __future__ import annotations

import subprocess
import wave
from pathlib import Path

import numpy as np

from musicvid.ffmpeg import exe as ffmpeg_exe

RATE = 16_000
BEAT = 0.5  # seconds: 120 bpm


def voice(text: str, folder: Path, *, speed: int = 120, pitch: int = 70) -> np.ndarray:
    """One sung line, starting where the voice does."""
    path = folder / "line.wav"
    subprocess.run(
        ["espeak-ng", "-v", "en-us+f3", "-s", str(speed), "-p", str(pitch), "-w", str(path), text], check=True
    )
    with wave.open(str(path)) as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float32) / 32768
        rate = w.getframerate()
    samples = np.interp(np.arange(0, len(samples), rate / RATE), np.arange(len(samples)), samples)
    sounding = np.flatnonzero(np.abs(samples) > 0.02)
    return samples[sounding[0] : sounding[-1] + 1]


def band(seconds: float, seed: int = 0) -> np.ndarray:
    """Chords changing every two bars, a bass on the beat, kick, snare and hi-hat."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    roots = np.array([110.0, 87.3, 130.8, 98.0])[(t // (8 * BEAT)).astype(int) % 4]
    chord = sum(np.sin(2 * np.pi * roots * ratio * t) for ratio in (1.0, 1.26, 1.5, 2.0)) / 4
    bass = np.sin(2 * np.pi * roots / 2 * t) * np.exp(-4 * (t % BEAT))
    since_beat, since_half = t % BEAT, t % (BEAT / 2)
    kick = np.sin(2 * np.pi * (50 + 100 * np.exp(-30 * since_beat)) * since_beat) * np.exp(-12 * since_beat)
    noise = rng.standard_normal(t.size)
    snare = noise * np.exp(-25 * ((t - BEAT) % (2 * BEAT))) * ((t // BEAT) % 2 == 1)
    hihat = np.diff(noise, prepend=0) * np.exp(-80 * since_half)
    return 0.12 * chord + 0.15 * bass + 0.25 * kick + 0.08 * snare + 0.03 * hihat


def make_song(path: Path, seconds: float, lines: list[tuple[float, str]], *, voice_level: float = 0.7) -> Path:
    """`lines` (start in seconds, text) sung over the band; written in the format `path` names."""
    mix = band(seconds)
    for start, text in lines:
        sung = voice(text, path.parent)
        first = int(start * RATE)
        mix[first : first + len(sung)] += voice_level * sung[: len(mix) - first]
    wav = path.with_suffix(".wav")
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(RATE)
        w.writeframes((np.clip(mix, -1, 1) * 32767).astype(np.int16).tobytes())
    if path.suffix != ".wav":
        subprocess.run([ffmpeg_exe(), "-v", "error", "-y", "-i", str(wav), "-b:a", "128k", str(path)], check=True)
    return path
