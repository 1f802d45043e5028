"""Lyrics on real recordings (tests/fixtures/recordings.py): per song and backend, the segments of 3+ words
Whisper tiny.en (real weights) hears over the whole song with no gate, how many of them musicvid's
storyboard keeps in its lyric scenes, and the words it keeps; over the instrumentals, the words invented
per minute. With --aligned, the lines musicvid recognized are given back as known lyrics and aligned:
how many land within 1 s of where they were heard, and how many are flagged.

    python -m benchmarks.real_songs [--backends faster-whisper openai-whisper] [--songs chaos_god ...]
        [--aligned] [--out benchmarks/results/real-songs-cpu.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.lyrics import BACKENDS, not_installed
from musicvid.core.audio import load_audio
from musicvid.lyrics.align import align_lyrics
from musicvid.lyrics.transcribe import hear, sung_lines
from musicvid.storyboard.scenes import scenes_from_lines
from tests.fixtures.recordings import INSTRUMENTAL, SUNG, counted, kept_in_lyrics, mix, words_per_minute
from tests.fixtures.whisper_ct2 import load_tiny_en
from vipe_core.atomic import write_text


def measure(asr, path: Path, aligned: bool) -> dict:
    """One song's figures through one backend."""
    audio = load_audio(path)
    duration, started = audio.info.duration, time.perf_counter()
    _, silero, heard = hear(asr, audio.samples, quiet=True)
    lines = sung_lines(heard, silero, duration)
    scenes = scenes_from_lines(lines, duration)
    row = {
        "seconds_of_song": round(duration, 1),
        "heard_segments": len(counted(heard)),
        "heard_words": sum(len(s.text.split()) for s in heard),
        "kept_segments": kept_in_lyrics(heard, scenes),
        "kept_lines": len(lines),
        "kept_words": sum(len(line.text.split()) for line in lines),
        "words_per_minute": round(words_per_minute(scenes, duration), 2),
        "recognize_seconds": round(time.perf_counter() - started, 1),
    }
    if aligned and lines:
        known = align_lyrics(asr, audio.samples, [line.text for line in lines], audio.info.sha256, quiet=True)
        errors = [abs(a.start - b.start) for a, b in zip(known.lines, lines)]
        row["aligned_within_1s"] = f"{sum(e <= 1.0 for e in errors)} of {len(lines)}"
        row["aligned_flagged"] = sum(line.confidence is not None and line.confidence < 0.5 for line in known.lines)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.real_songs", description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--songs", nargs="+", choices=[*SUNG, *INSTRUMENTAL], default=[*SUNG, *INSTRUMENTAL])
    parser.add_argument("--aligned", action="store_true", help="also align the recognized lines as known lyrics")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if problem := not_installed(args.songs, "--songs"):
        parser.error(problem)
    results: dict = {}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = {name: mix({**SUNG, **INSTRUMENTAL}[name], folder / f"{name}.wav") for name in args.songs}
        for backend in args.backends:
            asr = load_tiny_en(backend, folder)
            for name, path in paths.items():
                row = measure(asr, path, args.aligned and name in SUNG)
                results.setdefault(name, {})[backend] = row
                print(f"{name:24s} {backend:15s} {json.dumps(row)}", flush=True)
    if args.out:
        write_text(args.out, json.dumps(results, indent=1, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
