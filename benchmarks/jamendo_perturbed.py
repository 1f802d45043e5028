"""Lyrics against the truth on audio the rules were not tuned on: the JamendoLyrics songs (benchmarks.jamendo) played
faster and slower (atempo 1.08 and 0.92), two semitones higher at the same tempo, under pink noise 15 dB below the
song's level after 3 s of it alone, and as a 48 kbps 16 kHz mono MP3 after 4.5 s of silence; every annotated time
moved with its audio. Each variant's known lyrics are timed as benchmarks.jamendo times the songs, musicvid beside
stable-ts with the same Whisper base, and its thresholds reported for each variant (not gated: docs/lyrics.md,
"Against the truth").

    python -m benchmarks.jamendo_perturbed [--songs ../shared/songs/jamendolyrics] [--variants ...]
        [--backends faster-whisper] [--out benchmarks/results/jamendo-perturbed.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from benchmarks.jamendo import BACKENDS, failures, known
from benchmarks.what_ran import machine
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.core.ffmpeg import file_url
from tests.fixtures.jamendo import SONGS, read_songs
from tests.fixtures.whisper_ct2 import load_whisper_base
from vipe_core.atomic import write_text

RATE = 44100
TIMES = {"lines": ("start_time", "end_time"), "words": ("word_start", "word_end", "line_end")}  # each table's times
SEMITONES = 2 ** (2 / 12)


@dataclass(frozen=True)
class Variant:
    filters: list[str]  # ffmpeg's audio filters and encoding
    moved: Callable[[float], float]  # an annotated time, in the variant's audio
    noise_db: float | None = None  # pink noise this far below the song's RMS, over the whole variant
    lead_in: float = 0.0  # seconds of it alone before the song (with noise_db)


VARIANTS = {
    "tempo1.08": Variant(["-af", "atempo=1.08"], lambda t: t / 1.08),
    "tempo0.92": Variant(["-af", "atempo=0.92"], lambda t: t / 0.92),
    "pitch+2": Variant(["-af", f"asetrate={RATE * SEMITONES:.3f},aresample={RATE},atempo={1 / SEMITONES:.6f}"], float),
    "noise_leadin": Variant([], lambda t: t + 3.0, noise_db=-15.0, lead_in=3.0),
    "lowfi_pad": Variant(["-af", "adelay=4500:all=1", "-ac", "1", "-ar", "16000", "-b:a", "48k"], lambda t: t + 4.5),
}


def decoded(path: Path, filters: list[str]) -> np.ndarray:
    """The audio of `path` through `filters`, as 44.1 kHz stereo float samples."""
    command = [
        ffmpeg_exe(),
        "-v",
        "error",
        "-i",
        file_url(path),
        *filters,
        "-f",
        "f32le",
        "-ac",
        "2",
        "-ar",
        str(RATE),
        "-",
    ]
    return np.frombuffer(subprocess.run(command, capture_output=True, check=True).stdout, np.float32).reshape(-1, 2)


def pink(frames: int, seed: int) -> np.ndarray:
    """Stereo pink noise (power falling 3 dB an octave) of unit RMS."""
    spectrum = np.fft.rfft(np.random.default_rng(seed).standard_normal((frames, 2)), axis=0)
    spectrum /= np.sqrt(np.maximum(np.fft.rfftfreq(frames, 1 / RATE), RATE / frames))[:, None]
    noise = np.fft.irfft(spectrum, n=frames, axis=0)
    return noise / np.sqrt(np.mean(noise**2))


def make(variant: Variant, songs: Path, folder: Path) -> None:
    """`songs`' folder as `variant` plays it, into `folder`: each MP3 made anew, its texts as they are, its tables'
    times moved."""
    folder.mkdir(parents=True)
    shutil.copy(songs / "songs.csv", folder / "songs.csv")
    for seed, song in enumerate(sorted(songs.glob("*.mp3"))):
        for text in songs.glob(f"{glob_escaped(song.stem)}*.txt"):
            shutil.copy(text, folder / text.name)
        for table, columns in TIMES.items():
            with open(songs / f"{song.stem}.{table}.csv", newline="", encoding="utf-8") as opened:
                rows = list(csv.DictReader(opened))
            with open(folder / f"{song.stem}.{table}.csv", "w", newline="", encoding="utf-8") as opened:
                writer = csv.DictWriter(opened, fieldnames=list(rows[0]))
                writer.writeheader()
                for row in rows:
                    writer.writerow({k: moved(v, variant) if k in columns else v for k, v in row.items()})
        encode = [ffmpeg_exe(), "-v", "error", "-y"]
        if variant.noise_db is None:
            subprocess.run([*encode, "-i", file_url(song), *variant.filters, file_url(folder / song.name)], check=True)
            continue
        samples = decoded(song, variant.filters).astype(np.float64)
        level = np.sqrt(np.mean(samples**2))  # (the song's, decoded once; its lead-in is silence added here)
        samples = np.concatenate([np.zeros((round(variant.lead_in * RATE), 2)), samples])
        mixed = samples + pink(len(samples), seed) * level * 10 ** (variant.noise_db / 20)
        mixed *= min(1.0, 0.999 / np.abs(mixed).max())
        pipe = ["-f", "f32le", "-ac", "2", "-ar", str(RATE), "-i", "-", "-b:a", "128k", file_url(folder / song.name)]
        subprocess.run([*encode, *pipe], input=mixed.astype(np.float32).tobytes(), check=True)


def glob_escaped(name: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def moved(value: str, variant: Variant) -> str:
    return value if value.strip().lower() in ("", "nan") else f"{variant.moved(float(value)):.9f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.jamendo_perturbed", description=__doc__.splitlines()[0])
    parser.add_argument("--songs", type=Path, default=SONGS, help="a folder of JamendoLyrics songs (its songs.csv)")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=["faster-whisper"])
    parser.add_argument("--out", type=Path, help="write the rows here, as JSON")
    args = parser.parse_args(argv)
    if not (args.songs / "songs.csv").is_file():
        print(f"no JamendoLyrics songs in {args.songs} (its songs.csv is missing)", file=sys.stderr)
        return 2
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.variants:
            make(VARIANTS[name], args.songs, Path(scratch) / name)
        for backend in args.backends:
            asr = load_whisper_base(backend, Path(scratch) / "models")
            for name in args.variants:
                for song in read_songs(Path(scratch) / name):
                    for row in known(asr, song):
                        rows.append({"variant": name, "backend": backend, **row})
                        print(json.dumps(rows[-1]), flush=True)
    for name in args.variants:
        for sentence in failures([row for row in rows if row["variant"] == name]):
            print(f"{name}: missed: {sentence}")
    if args.out:
        write_text(args.out, json.dumps({"machine": machine(torch.device("cpu")), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
