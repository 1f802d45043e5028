#!/usr/bin/env python3
"""Regenerate the demo song ``demo.mp3`` and its timed lyrics ``demo.lrc``.

The song ("Lighthouse" by "The Tiny Models") is fully synthetic:

* a soft backing track (I-V-vi-IV chord pads, plucked bass, a gentle beat and
  an arpeggio in the instrumental parts) rendered with numpy, and
* spoken lyric lines from ``espeak-ng`` (English voice), placed at fixed,
  known start times and mixed clearly louder than the music so that a small
  Whisper model can transcribe them.

Structure (~41 s): intro 5 s | verse 1 (4 lines) | break ~7 s |
verse 2 (3 lines) | outro ~5 s.

Every line's start time in ``demo.lrc`` is the exact sample where its speech
begins (leading espeak silence is trimmed before placement).

Requirements: numpy, scipy, ``espeak-ng`` on PATH, and an ffmpeg with
libmp3lame (``imageio_ffmpeg``'s bundled binary is used when available,
otherwise ``ffmpeg`` from PATH).  The output is deterministic for a given
espeak-ng / ffmpeg version (fixed random seed, bit-exact muxing flags).

Usage::

    python assets/demo/make_demo.py            # writes next to this script
    python assets/demo/make_demo.py --out DIR  # writes DIR/demo.mp3, DIR/demo.lrc
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import wave
from pathlib import Path

import numpy as np
from scipy.signal import butter, resample_poly, sosfilt

TITLE = "Lighthouse"
ARTIST = "The Tiny Models"
ALBUM = "musicvid demo"

SR = 44100  # output sample rate
BPM = 96.0
BEAT = 60.0 / BPM  # 0.625 s
BAR = 4 * BEAT  # 2.5 s
DURATION = 41.0  # seconds

VOICE = "en-us"
SPEECH_RATE = 120  # espeak-ng words per minute

# (start time in seconds, lyric line, espeak pitch 0-99).  Start times are where
# speech begins; each line is ~2.5-3.3 s long, so lines 3.5 s apart leave gaps.
LYRICS: list[tuple[float, str, int]] = [
    # verse 1
    (5.0, "My heart is a lighthouse in the storm", 45),
    (8.5, "Your voice is a river made of gold", 50),
    (12.0, "The city sleeps beneath a paper moon", 45),
    (15.5, "And every window holds a tiny sun", 55),
    # instrumental break (~7 s)
    # verse 2
    (25.5, "Time is a feather drifting on the sea", 45),
    (29.0, "Our shadows dance like candles in the wind", 50),
    (32.5, "I will carry your light back home", 55),
]

# Chord progression, one chord per bar: C - G - Am - F (MIDI note numbers).
PROGRESSION = [
    (48, [60, 64, 67]),  # C  : bass C3, pad C4 E4 G4
    (43, [59, 62, 67]),  # G  : bass G2, pad B3 D4 G4
    (45, [60, 64, 69]),  # Am : bass A2, pad C4 E4 A4
    (41, [60, 65, 69]),  # F  : bass F2, pad C4 F4 A4
]

SEED = 1234


# --------------------------------------------------------------------------
# small synthesis helpers
# --------------------------------------------------------------------------


def midi_hz(note: float) -> float:
    return 440.0 * 2.0 ** ((note - 69) / 12.0)


def add_at(buf: np.ndarray, start_s: float, sig: np.ndarray) -> None:
    """Add ``sig`` into ``buf`` starting at ``start_s`` seconds (clipped to buf)."""
    i = int(round(start_s * SR))
    if i >= len(buf):
        return
    n = min(len(sig), len(buf) - i)
    buf[i : i + n] += sig[:n]


def tone(freq: float, dur: float, harmonics=(1.0,), detune_cents: float = 0.0) -> np.ndarray:
    t = np.arange(int(dur * SR)) / SR
    out = np.zeros_like(t)
    for k, amp in enumerate(harmonics, start=1):
        f = freq * k
        out += amp * np.sin(2 * np.pi * f * t)
        if detune_cents:
            fd = f * 2 ** (detune_cents / 1200.0)
            out += amp * np.sin(2 * np.pi * fd * t + 0.7)
    return out


def adsr(n: int, attack: float, release: float) -> np.ndarray:
    env = np.ones(n)
    a = min(n, int(attack * SR))
    r = min(n - a, int(release * SR))
    if a:
        env[:a] = np.linspace(0.0, 1.0, a)
    if r:
        env[n - r :] = np.linspace(1.0, 0.0, r)
    return env


def pluck_env(n: int, decay: float) -> np.ndarray:
    t = np.arange(n) / SR
    env = np.exp(-t / decay)
    a = min(n, int(0.004 * SR))
    env[:a] *= np.linspace(0.0, 1.0, a)
    return env


def filt(x: np.ndarray, kind: str, freq) -> np.ndarray:
    sos = butter(4, freq, btype=kind, fs=SR, output="sos")
    return sosfilt(sos, x)


# --------------------------------------------------------------------------
# backing track
# --------------------------------------------------------------------------


def render_backing(rng: np.random.Generator, vocal_spans: list[tuple[float, float]]) -> np.ndarray:
    n = int(DURATION * SR)
    pads = np.zeros(n)
    bass = np.zeros(n)
    arp = np.zeros(n)
    drums = np.zeros(n)

    n_bars = int(np.ceil(DURATION / BAR))
    for b in range(n_bars):
        t0 = b * BAR
        root, chord = PROGRESSION[b % len(PROGRESSION)]
        last = b == n_bars - 1

        # warm pad: detuned sines with a soft 2nd harmonic, overlapping bars
        dur = BAR + 0.4
        for note in chord:
            sig = tone(midi_hz(note), dur, harmonics=(1.0, 0.25), detune_cents=6.0)
            pads_sig = sig * adsr(len(sig), 0.35, 0.6) * 0.05
            add_at(pads, t0, pads_sig)

        # plucked bass on beats 1 and 3 (and a pickup on the "and" of 4)
        for beat, vel in ((0, 1.0), (2, 0.8), (3.5, 0.5)):
            sig = tone(midi_hz(root), 0.9, harmonics=(1.0, 0.5, 0.2))
            add_at(bass, t0 + beat * BEAT, sig * pluck_env(len(sig), 0.35) * 0.22 * vel)

        # drums (leave them out of the very first bar and the last bar)
        if 0 < b and not last:
            for beat in range(4):
                tb = t0 + beat * BEAT
                if beat in (0, 2):  # kick: sine sweep 110 -> 45 Hz
                    m = int(0.35 * SR)
                    t = np.arange(m) / SR
                    f = 45 + 65 * np.exp(-t / 0.04)
                    kick = np.sin(2 * np.pi * np.cumsum(f) / SR) * np.exp(-t / 0.12)
                    add_at(drums, tb, kick * 0.45)
                else:  # soft snare: band-passed noise burst
                    m = int(0.25 * SR)
                    noise = filt(rng.standard_normal(m), "bandpass", (800, 5000))
                    add_at(drums, tb, noise * pluck_env(m, 0.06) * 0.12)
            for eighth in range(8):  # closed hi-hat on eighth notes
                m = int(0.06 * SR)
                noise = filt(rng.standard_normal(m), "highpass", 7000)
                vel = 0.06 if eighth % 2 else 0.04
                add_at(drums, t0 + eighth * BEAT / 2, noise * pluck_env(m, 0.015) * vel)

        # arpeggio (sixteenth-note-ish pattern on chord tones, one octave up)
        pattern = [0, 1, 2, 1, 0, 2, 1, 2]
        for k, idx in enumerate(pattern):
            note = chord[idx] + 12
            sig = tone(midi_hz(note), 0.5, harmonics=(1.0, 0.0, 0.3, 0.0, 0.1))
            add_at(arp, t0 + k * BEAT / 2, sig * pluck_env(len(sig), 0.18) * 0.07)

    # the arpeggio only plays where nobody is singing (with smooth fades)
    arp_gain = np.ones(n)
    for s, e in vocal_spans:
        arp_gain[int((s - 0.6) * SR) : int((e + 0.3) * SR)] = 0.0
    arp_gain = smooth(arp_gain, 0.4)

    music = pads + bass + drums + arp * arp_gain

    # duck the whole band under the vocals so the words stay intelligible
    duck = np.ones(n)
    for s, e in vocal_spans:
        duck[int((s - 0.25) * SR) : int((e + 0.15) * SR)] = 0.5
    music *= smooth(duck, 0.25)

    # global fade in / fade out
    fade_in = int(0.5 * SR)
    fade_out = int(3.0 * SR)
    music[:fade_in] *= np.linspace(0, 1, fade_in)
    music[-fade_out:] *= np.linspace(1, 0, fade_out) ** 1.5
    return music


def smooth(x: np.ndarray, seconds: float) -> np.ndarray:
    k = max(1, int(seconds * SR))
    kernel = np.ones(k) / k
    return np.convolve(x, kernel, mode="same")


# --------------------------------------------------------------------------
# vocals
# --------------------------------------------------------------------------


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        sr = w.getframerate()
        ch = w.getnchannels()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16)
    x = data.astype(np.float64) / 32768.0
    if ch > 1:
        x = x.reshape(-1, ch).mean(axis=1)
    return x, sr


def speak(text: str, pitch: int, workdir: Path, idx: int) -> np.ndarray:
    """Render one line with espeak-ng, resample to SR, trim silence, normalise."""
    wav = workdir / f"line{idx}.wav"
    subprocess.run(
        ["espeak-ng", "-v", VOICE, "-s", str(SPEECH_RATE), "-p", str(pitch), "-a", "150", "-w", str(wav), text],
        check=True,
    )
    x, sr = read_wav(wav)
    if sr != SR:
        from math import gcd

        g = gcd(SR, sr)
        x = resample_poly(x, SR // g, sr // g)
    thr = 0.02 * np.max(np.abs(x))
    loud = np.nonzero(np.abs(x) > thr)[0]
    x = x[loud[0] : loud[-1] + 1]  # speech starts exactly at sample 0
    x = x / np.max(np.abs(x))
    tail = int(0.02 * SR)  # tiny fade at the end to avoid clicks
    x[-tail:] *= np.linspace(1, 0, tail)
    return x


def render_vocals(workdir: Path) -> tuple[np.ndarray, list[tuple[float, float]]]:
    n = int(DURATION * SR)
    vox = np.zeros(n)
    spans = []
    for i, (start, text, pitch) in enumerate(LYRICS):
        x = speak(text, pitch, workdir, i)
        end = start + len(x) / SR
        if spans and start < spans[-1][1] + 0.1:
            raise SystemExit(f"line {i} ({text!r}) overlaps the previous one; adjust LYRICS")
        add_at(vox, start, x)
        spans.append((start, end))
    # a touch of room: two quiet early reflections
    room = np.zeros_like(vox)
    for delay, gain in ((0.043, 0.12), (0.071, 0.08)):
        d = int(delay * SR)
        room[d:] += vox[:-d] * gain
    return vox + room, spans


# --------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------


def ffmpeg_exe() -> str:
    try:
        import imageio_ffmpeg

        return imageio_ffmpeg.get_ffmpeg_exe()
    except Exception:  # pragma: no cover - fallback
        exe = shutil.which("ffmpeg")
        if not exe:
            raise SystemExit("ffmpeg not found (pip install imageio-ffmpeg)") from None
        return exe


def write_wav(path: Path, x: np.ndarray) -> None:
    pcm = np.clip(np.round(x * 32767.0), -32768, 32767).astype("<i2")
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(pcm.tobytes())


def encode_mp3(wav: Path, mp3: Path) -> None:
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-y",
            "-i",
            str(wav),
            "-c:a",
            "libmp3lame",
            "-b:a",
            "64k",
            "-ar",
            str(SR),
            "-ac",
            "1",
            "-id3v2_version",
            "3",
            "-metadata",
            f"title={TITLE}",
            "-metadata",
            f"artist={ARTIST}",
            "-metadata",
            f"album={ALBUM}",
            "-fflags",
            "+bitexact",
            "-flags:a",
            "+bitexact",
            str(mp3),
        ],
        check=True,
    )


def lrc_time(t: float) -> str:
    cs = int(round(t * 100))
    return f"{cs // 6000:02d}:{(cs // 100) % 60:02d}.{cs % 100:02d}"


def write_lrc(path: Path) -> None:
    lines = [f"[ti:{TITLE}]", f"[ar:{ARTIST}]", f"[al:{ALBUM}]", f"[length:{lrc_time(DURATION)[:5]}]"]
    lines += [f"[{lrc_time(start)}]{text}" for start, text, _ in LYRICS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parent, help="output folder (default: next to this script)"
    )
    ap.add_argument("--wav", action="store_true", help="also keep demo.wav")
    args = ap.parse_args()
    if not shutil.which("espeak-ng"):
        raise SystemExit("espeak-ng not found on PATH (apt-get install espeak-ng)")
    args.out.mkdir(parents=True, exist_ok=True)

    rng = np.random.default_rng(SEED)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        vox, spans = render_vocals(tmp)
        music = render_backing(rng, spans)

        # speech peaks ~0.8, music ~0.2 under the vocals (about 12 dB below)
        music = music / np.max(np.abs(music)) * 0.4
        mix = 0.8 * vox + music
        mix = mix / max(1.0, np.max(np.abs(mix)) / 0.95)

        wav = (args.out if args.wav else tmp) / "demo.wav"
        write_wav(wav, mix)
        encode_mp3(wav, args.out / "demo.mp3")
    write_lrc(args.out / "demo.lrc")

    for (start, text, _), (_, end) in zip(LYRICS, spans):
        print(f"{lrc_time(start)} - {lrc_time(end)}  {text}")
    print(f"wrote {args.out / 'demo.mp3'} and {args.out / 'demo.lrc'}")


if __name__ == "__main__":
    main()
