"""Beam search against greedy decoding, on the real recordings (tests/fixtures/recordings.py), through both
backends with Whisper tiny.en's real weights: for each way of decoding, the seconds hearing a song costs
and what musicvid keeps of it (the figures of benchmarks/real_songs.py).

The ways: greedy (openai-whisper's own default: one token at a time at temperature 0, one sample at each
temperature it falls back to), Whisper's command line's (a beam of 5 at temperature 0, the best of 5
samples at each other: faster-whisper's default), and a beam of 5 with one sample where it falls back.

    python -m benchmarks.beam [--backends ...] [--songs chaos_god ...] [--out benchmarks/results/beam-cpu.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import tempfile
from pathlib import Path

import torch

from benchmarks.real_songs import measure
from benchmarks.what_ran import machine
from tests.fixtures.recordings import SUNG, installed, mix
from tests.fixtures.whisper_ct2 import load_tiny_en

DECODINGS = {"greedy": (1, 1), "beam 5, best of 5": (5, 5), "beam 5, best of 1": (5, 1)}  # (beams, samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["faster-whisper", "openai-whisper"])
    parser.add_argument("--songs", nargs="+", default=list(SUNG))
    parser.add_argument("--decodings", nargs="+", default=list(DECODINGS), choices=list(DECODINGS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if not installed():
        raise SystemExit("apt-get install fretsonfire-songs-muldjord fretsonfire-songs-sectoid first")
    results: dict = {"machine": machine(torch.device("cpu")), "songs": {}}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        paths = {name: mix(SUNG[name], folder / f"{name}.wav") for name in args.songs}
        for backend in args.backends:
            asr = load_tiny_en(backend, folder)
            for name, path in paths.items():
                for decoding in args.decodings:
                    beams, samples = DECODINGS[decoding]
                    row = measure(dataclasses.replace(asr, beams=beams, samples=samples), path, aligned=False)
                    results["songs"].setdefault(name, {}).setdefault(backend, {})[decoding] = row
                    print(f"{name:22s} {backend:15s} {decoding:18s} {json.dumps(row)}", flush=True)
                    if args.out:  # as it goes: a run of an hour keeps what it measured
                        args.out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
