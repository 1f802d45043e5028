"""Where a render's time goes, how its cost grows with song length, and denoising batch sizes.

    python -m benchmarks.render                 # everything, on this machine (tiny + full-size SD 1.5)
    python -m benchmarks.render --quick         # the smallest setting: checks the script still works

Writes JSON (default benchmarks/results/render-<host>.json) and prints markdown tables. Timings on
shared machines are noisy: compare ratios from one run, not numbers across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import psutil
import torch

from musicvid.assets import ASSETS_DIR
from musicvid.audio import SAMPLE_RATE, ffmpeg_exe
from musicvid.models import PRESETS, SD15_RANDOM, ModelRegistry
from musicvid.pipeline import SongRequest
from musicvid.render import RenderSettings, render_song
from musicvid.timing import MODEL_STAGES, Timings

LINE_EVERY_SECONDS = 3.0


def synthesize_song(folder: Path, seconds: float) -> Path:
    """A song of `seconds`: a chord over a beat, and timed lyrics (a line every 3 s) beside it."""
    import subprocess
    import wave

    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    chord = sum(np.sin(2 * np.pi * f * t) for f in (220.0, 277.2, 329.6)) / 3
    beat = np.exp(-20 * (t % 0.5)) * np.sin(2 * np.pi * 55 * t)
    samples = (0.3 * chord + 0.3 * beat).clip(-1, 1)
    wav = folder / f"song-{seconds:g}s.wav"
    with wave.open(str(wav), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(SAMPLE_RATE)
        w.writeframes((samples * 32767).astype(np.int16).tobytes())
    mp3 = wav.with_suffix(".mp3")
    subprocess.run([ffmpeg_exe(), "-v", "error", "-y", "-i", str(wav), str(mp3)], check=True)
    corpus = [l for l in (ASSETS_DIR / "texts" / "tiny_corpus.txt").read_text().splitlines() if l.strip()]
    starts = np.arange(1.0, seconds - 1.0, LINE_EVERY_SECONDS)
    lyrics = "".join(f"[{int(s // 60):02d}:{s % 60:05.2f}]{corpus[i % len(corpus)]}\n" for i, s in enumerate(starts))
    mp3.with_suffix(".lrc").write_text(lyrics)
    return mp3


class MemorySampler:
    """Peak resident memory (and peak GPU memory) per stage, sampled every few milliseconds."""

    def __init__(self, interval: float = 0.005):
        self.interval = interval
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        process = psutil.Process()
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), process.memory_info().rss))
            time.sleep(self.interval)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def peaks(self, timings: Timings) -> dict[str, float]:
        peaks: dict[str, float] = {}
        for stage, start, end in timings.intervals:
            inside = [rss for t, rss in self.samples if start <= t <= end]
            if inside:
                peaks[stage] = max(peaks.get(stage, 0.0), max(inside) / 2**20)
        return {k: round(v, 1) for k, v in peaks.items()}


def render_once(song: Path, workdir: Path, settings: RenderSettings, registry: ModelRegistry) -> dict:
    """One render from nothing; its stage seconds, frames per second and peak memory per stage."""
    timings = Timings()
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=workdir, quiet=True)
    if registry.device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    with MemorySampler() as memory:
        started = time.perf_counter()
        render_song(request, settings, registry, output=workdir / "out.mp4", timings=timings)
        wall = time.perf_counter() - started
    summary = timings.summary()
    drawn = json.loads((workdir / "timings.json").read_text())["pictures_drawn"]
    seconds = summary["seconds"]
    drawing = sum(seconds.get(k, 0.0) for k in ("encode prompts", "denoise", "decode", "write frames"))
    result = {
        "wall_seconds": round(wall, 3),
        "stages": seconds,
        "share": {k: round(v / summary["total"], 4) for k, v in seconds.items()},
        "model_share": summary["model_share"],
        # overhead: everything but the networks and the loading of them
        "non_model_share": round(
            sum(v for k, v in seconds.items() if k not in MODEL_STAGES and not k.startswith("load "))
            / summary["total"], 4,
        ),  # fmt: skip
        "pictures_drawn": drawn,
        "frames_per_second": round(drawn / drawing, 3) if drawing else None,
        "peak_rss_mib": memory.peaks(timings),
    }
    if registry.device.type == "cuda":
        result["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1)
    return result


def stage_breakdown(folder: Path, song_seconds: float, models: str, settings: RenderSettings) -> dict:
    preset = PRESETS["tiny"]
    if models == SD15_RANDOM:
        preset = replace(preset, diffusion=SD15_RANDOM)
    registry = ModelRegistry(preset)
    song = synthesize_song(folder, song_seconds)
    return {"models": models, "song_seconds": song_seconds, "settings": vars(settings).copy(),
            **render_once(song, folder / f"work-{models}", settings, registry)}  # fmt: skip


def scaling(folder: Path, lengths: list[float], settings: RenderSettings) -> list[dict]:
    rows = []
    for seconds in lengths:
        song = synthesize_song(folder, seconds)
        result = render_once(song, folder / f"scale-{seconds:g}", settings, ModelRegistry(PRESETS["tiny"]))
        rows.append({"song_seconds": seconds, "wall_seconds": result["wall_seconds"],
                     "seconds_per_audio_second": round(result["wall_seconds"] / seconds, 4),
                     "stages": result["stages"]})  # fmt: skip
    return rows


def batch_sweep(folder: Path, sizes: list[int], song_seconds: float, settings: RenderSettings) -> list[dict]:
    """Frames per second of drawing (denoise + decode) for each batch size, models kept loaded."""
    song = synthesize_song(folder, song_seconds)
    registry = ModelRegistry(PRESETS["tiny"], keep_loaded=True)
    rows = []
    for size in sizes:
        result = render_once(song, folder / f"batch-{size}", replace(settings, batch_size=size), registry)
        drawing = result["stages"]["denoise"] + result["stages"]["decode"]
        rows.append({"batch_size": size, "pictures": result["pictures_drawn"],
                     "frames_per_second": round(result["pictures_drawn"] / drawing, 2)})  # fmt: skip
    return rows


def markdown(results: dict) -> str:
    out = []
    for run in results["stage_breakdown"]:
        out.append(f"\n### Stage breakdown: {run['models']}, {run['song_seconds']:g} s song, "
                   f"{run['settings']['width']}x{run['settings']['height']}, {run['settings']['steps']} steps")  # fmt: skip
        out.append("| stage | seconds | share | peak RSS (MiB) |\n| --- | ---: | ---: | ---: |")
        for stage, seconds in run["stages"].items():
            out.append(f"| {stage} | {seconds:.3f} | {run['share'][stage]:.1%} | {run['peak_rss_mib'].get(stage, '')} |")
        out.append(f"\nframes/s drawn: {run['frames_per_second']}; model share {run['model_share']:.1%}; "
                   f"non-model overhead {run['non_model_share']:.1%}")  # fmt: skip
    out.append("\n### Scaling (tiny preset)\n| song (s) | wall (s) | s per audio s |\n| ---: | ---: | ---: |")
    out += [f"| {r['song_seconds']:g} | {r['wall_seconds']:.2f} | {r['seconds_per_audio_second']:.3f} |" for r in results["scaling"]]
    out.append("\n### Denoising batch size (tiny preset)\n| batch | frames/s |\n| ---: | ---: |")
    out += [f"| {r['batch_size']} | {r['frames_per_second']} |" for r in results["batch_sweep"]]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting (seconds): for the test suite")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    parser.add_argument("--lengths", type=float, nargs="+", default=[15, 30, 60, 120])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--full-size", default="256x256:2", help="WxH:steps of the SD 1.5-sized run ('' to skip)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")  # the tiny CLIP truncates noise prompts: no news

    tiny = RenderSettings(width=64, height=64, steps=4)
    if args.quick:
        args.lengths, args.batch_sizes, args.full_size = [3], [1, 2], ""
    results: dict = {
        "machine": {"host": platform.node(), "cpu_count": os.cpu_count(), "torch": torch.__version__,
                    "cuda": torch.cuda.get_device_name() if torch.cuda.is_available() else None},  # fmt: skip
        "stage_breakdown": [],
    }
    with tempfile.TemporaryDirectory(prefix="musicvid-bench-") as tmp:
        folder = Path(tmp)
        results["stage_breakdown"].append(stage_breakdown(folder, 3 if args.quick else 30, "tiny", tiny))
        if args.full_size:
            size, steps = args.full_size.split(":")
            width, height = (int(v) for v in size.split("x"))
            full = RenderSettings(width=width, height=height, steps=int(steps), batch_size=2)
            # an intro and one line: two scenes' frames are enough to see the shares
            results["stage_breakdown"].append(stage_breakdown(folder, 3.2, SD15_RANDOM, full))
        results["scaling"] = scaling(folder, args.lengths, tiny)
        results["batch_sweep"] = batch_sweep(folder, args.batch_sizes, 3 if args.quick else 15, tiny)

    out = args.out or Path("benchmarks/results") / f"render-{platform.node() or 'host'}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
