"""Where a render's time goes, how its cost grows with song length, and denoising batch sizes.

    python -m benchmarks.render                 # everything, on this machine (tiny + full-size SD 1.5)
    python -m benchmarks.render --quick         # the smallest setting: checks the script still works

On a GPU it renders the full-size SD 1.5 architecture at 512x512, 25 steps, in float16, and adds a
batch-size sweep of it, torch.compile against eager, --low-vram's peak GPU memory, and the share of
the FLOP bound reached (benchmarks/flop_bound.py: FLOPs counted on the model itself, peak measured by a
large matrix product).

Writes JSON (default benchmarks/results/render-<host>.json; --quick's, render-<host>-quick.json) and prints
markdown tables. Timings on
shared machines are noisy: compare ratios from one run, not numbers across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from benchmarks.flop_bound import best_batch, flop_bound, fraction_of_bound
from benchmarks.peaks import MemorySampler, run_peak_gb
from benchmarks.what_ran import machine
from musicvid.core.assets import ASSETS_DIR
from musicvid.core.audio import SAMPLE_RATE
from musicvid.core.ffmpeg import exe as ffmpeg_exe
from musicvid.models.registry import ModelRegistry
from musicvid.models.timing import MODEL_STAGES, Timings
from musicvid.pipeline import make_video
from musicvid.settings.presets import PRESETS, SD15_RANDOM
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest
from vipe_core.atomic import write_text

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
    corpus = [line for line in (ASSETS_DIR / "texts" / "tiny_corpus.txt").read_text().splitlines() if line.strip()]
    starts = np.arange(1.0, seconds - 1.0, LINE_EVERY_SECONDS)
    lyrics = "".join(f"[{int(s // 60):02d}:{s % 60:05.2f}]{corpus[i % len(corpus)]}\n" for i, s in enumerate(starts))
    mp3.with_suffix(".lrc").write_text(lyrics)
    return mp3


def render_once(song: Path, workdir: Path, settings: RenderSettings, registry: ModelRegistry) -> dict:
    """One render from nothing; its stage seconds, frames per second and peak memory per stage."""
    on_gpu = registry.device.type == "cuda"
    timings = Timings()
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=workdir, quiet=True)
    with MemorySampler() as memory:
        started = time.perf_counter()
        made = make_video(request, settings, registry, output=workdir.with_suffix(".mp4"), timings=timings)
        wall = time.perf_counter() - started
    summary = timings.summary()
    drawn = made.pictures_drawn
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
            / summary["total"],
            4,
        ),
        "pictures_drawn": drawn,
        "frames_per_second": round(drawn / drawing, 3) if drawing else None,
        "ran": summary["models"],  # as each stage left its model, read back from the modules
        "peak_rss_mib": {k: round(gb * 1024, 1) for k, gb in memory.stage_peaks(timings, column=1).items()},
    }
    if on_gpu:  # each stage's own (sampled), and the run's (never reset)
        result["peak_gpu_mib"] = {k: round(gb * 1024, 1) for k, gb in memory.stage_peaks(timings).items()}
        result["run_peak_gpu_gb"] = run_peak_gb(registry.device)
    return result


def preset_for(models: str):
    """The tiny preset, with the full-size SD 1.5 architecture (random weights) when asked for."""
    return replace(PRESETS["tiny"], diffusion=SD15_RANDOM) if models == SD15_RANDOM else PRESETS["tiny"]


def stage_breakdown(folder: Path, song_seconds: float, models: str, settings: RenderSettings) -> dict:
    registry = ModelRegistry(preset_for(models))
    song = synthesize_song(folder, song_seconds)
    return {
        "models": models,
        "song_seconds": song_seconds,
        "settings": vars(settings).copy(),
        **render_once(song, folder / f"work-{models}", settings, registry),
    }


def scaling(folder: Path, lengths: list[float], settings: RenderSettings) -> list[dict]:
    rows = []
    for seconds in lengths:
        song = synthesize_song(folder, seconds)
        result = render_once(song, folder / f"scale-{seconds:g}", settings, ModelRegistry(PRESETS["tiny"]))
        rows.append(
            {
                "song_seconds": seconds,
                "wall_seconds": result["wall_seconds"],
                "seconds_per_audio_second": round(result["wall_seconds"] / seconds, 4),
                "stages": result["stages"],
            }
        )
    return rows


def drawing_rate(result: dict) -> float:
    """Pictures per second of denoising and decoding alone."""
    return round(result["pictures_drawn"] / (result["stages"]["denoise"] + result["stages"]["decode"]), 3)


def batch_sweep(
    folder: Path, sizes: list[int], song_seconds: float, settings: RenderSettings, models: str = "tiny"
) -> list[dict]:
    """Frames per second of drawing (denoise + decode) for each batch size, models kept loaded."""
    song = synthesize_song(folder, song_seconds)
    registry = ModelRegistry(preset_for(models), keep_loaded=True)
    rows = []
    for size in sizes:
        result = render_once(song, folder / f"batch-{models}-{size}", replace(settings, batch_size=size), registry)
        row = {"batch_size": size, "pictures": result["pictures_drawn"], "frames_per_second": drawing_rate(result)}
        if "peak_gpu_mib" in result:
            row["peak_gpu_mib"] = max(result["peak_gpu_mib"].values())
        rows.append(row)
    return rows


def compile_speedup(folder: Path, song_seconds: float, settings: RenderSettings) -> dict:
    """Eager against torch.compile on the same song: the compiled run's first render pays for compiling,
    its second shows the steady rate."""
    song = synthesize_song(folder, song_seconds)
    eager = render_once(song, folder / "eager", settings, ModelRegistry(preset_for(SD15_RANDOM), keep_loaded=True))
    registry = ModelRegistry(preset_for(SD15_RANDOM), keep_loaded=True)
    compiled = replace(settings, compile=True)
    first = render_once(song, folder / "compiled-1", compiled, registry)
    second = render_once(song, folder / "compiled-2", compiled, registry)
    return {
        "batch_size": settings.batch_size,
        "eager_frames_per_second": drawing_rate(eager),
        "compiled_frames_per_second": drawing_rate(second),
        "speedup": round(drawing_rate(second) / drawing_rate(eager), 3),
        "first_compiled_render_extra_seconds": round(first["wall_seconds"] - eager["wall_seconds"], 1),
    }


def low_vram_memory(folder: Path, settings: RenderSettings) -> dict:
    """Peak GPU memory of a render at batch size 1 with and without --low-vram."""
    song = synthesize_song(folder, 3.2)
    rows = {}
    for low_vram in (False, True):
        run = replace(settings, batch_size=1, low_vram=low_vram)
        result = render_once(song, folder / f"low-vram-{low_vram}", run, ModelRegistry(preset_for(SD15_RANDOM)))
        rows["low_vram" if low_vram else "default"] = {
            "peak_gpu_mib": max(result["peak_gpu_mib"].values()),
            "frames_per_second": drawing_rate(result),
        }
    return rows


def markdown(results: dict) -> str:
    out = []
    for run in results["stage_breakdown"]:
        out.append(
            f"\n### Stage breakdown: {run['models']}, {run['song_seconds']:g} s song, "
            f"{'x'.join(map(str, run['settings']['size']))}, {run['settings']['steps']} steps"
        )
        out.append("| stage | seconds | share | peak RSS (MiB) |\n| --- | ---: | ---: | ---: |")
        for stage, seconds in run["stages"].items():
            out.append(
                f"| {stage} | {seconds:.3f} | {run['share'][stage]:.1%} | {run['peak_rss_mib'].get(stage, '')} |"
            )
        out.append(
            f"\nframes/s drawn: {run['frames_per_second']}; model share {run['model_share']:.1%}; "
            f"non-model overhead {run['non_model_share']:.1%}"
        )
    if "scaling" in results:
        out.append("\n### Scaling (tiny preset)\n| song (s) | wall (s) | s per audio s |\n| ---: | ---: | ---: |")
        out += [
            f"| {r['song_seconds']:g} | {r['wall_seconds']:.2f} | {r['seconds_per_audio_second']:.3f} |"
            for r in results["scaling"]
        ]
    if "batch_sweep" in results:
        out.append("\n### Denoising batch size (tiny preset)\n| batch | frames/s |\n| ---: | ---: |")
        out += [f"| {r['batch_size']} | {r['frames_per_second']} |" for r in results["batch_sweep"]]
    gpu = results.get("gpu", {})
    if "batch_sweep" in gpu:
        out.append(
            f"\n### GPU: SD 1.5 architecture, {gpu['settings']}\n| batch | frames/s | peak GPU MiB |\n| ---: | ---: | ---: |"
        )
        out += [f"| {r['batch_size']} | {r['frames_per_second']} | {r['peak_gpu_mib']} |" for r in gpu["batch_sweep"]]
    if "fraction_of_peak" in gpu.get("flop_bound", {}):
        f = gpu["flop_bound"]
        out.append(
            f"\nFLOP bound: {f['tflop_per_picture']} TFLOP/picture; {f['reached_tflops']} of "
            f"{f['matmul_peak_tflops']} TFLOP/s reached ({f['fraction_of_peak']:.1%}); bound {f['bound_frames_per_second']} frames/s"
        )
    if "low_vram" in gpu:
        m = gpu["low_vram"]
        out.append(
            f"\npeak GPU memory at batch 1: {m['default']['peak_gpu_mib']} MiB; --low-vram "
            f"{m['low_vram']['peak_gpu_mib']} MiB ({m['low_vram']['frames_per_second']} frames/s)"
        )
    if "compile" in gpu:
        c = gpu["compile"]
        out.append(
            f"\ntorch.compile: {c['eager_frames_per_second']} → {c['compiled_frames_per_second']} frames/s "
            f"(×{c['speedup']}), first render +{c['first_compiled_render_extra_seconds']} s"
        )
    return "\n".join(out)


def options(argv: list[str] | None, on_gpu: bool) -> argparse.Namespace:
    """The benchmark's options, with the defaults of this machine (and --quick's)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.render", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smallest setting (seconds): for the test suite")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    parser.add_argument("--lengths", type=float, nargs="+", default=[15, 30, 60, 120])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument(
        "--full-size",
        help="WxH:steps of the SD 1.5-sized run ('' to skip; default 512x512:25 on a GPU, 256x256:2 on a CPU)",
    )
    parser.add_argument(
        "--phases",
        nargs="+",
        choices=("tiny", "full", "scaling", "batch", "gpu-flops", "gpu-batch", "gpu-low-vram", "gpu-compile"),
        help="run only these parts (default: all that fit the machine)",
    )
    args = parser.parse_args(argv)
    if args.full_size is None:
        args.full_size = "512x512:25" if on_gpu else "256x256:2"
    if args.quick:
        args.lengths, args.batch_sizes, args.full_size = [3], [1, 2], ""
    return args


def main(argv: list[str] | None = None) -> int:
    on_gpu = torch.cuda.is_available()
    args = options(argv, on_gpu)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")  # the tiny CLIP truncates noise prompts: no news

    tiny = RenderSettings(size=(64, 64), steps=4)
    name = f"render-{platform.node() or 'host'}{'-quick' if args.quick else ''}.json"  # quick: never the full run's
    out = args.out or Path(__file__).resolve().parent / "results" / name
    results: dict = {
        "machine": machine(torch.device("cuda" if on_gpu else "cpu")),
        "quick": args.quick,
        "stage_breakdown": [],
    }
    full = None
    if args.full_size:
        size, steps = args.full_size.split(":")
        width, height = (int(v) for v in size.split("x"))
        full = RenderSettings(size=(width, height), steps=int(steps), batch_size=8 if on_gpu else 2)
    # An intro and one line (3.2 s) are enough to see the shares on a CPU; a GPU gets two lines (7.2 s).
    full_song = 7.2 if on_gpu else 3.2
    phases = {
        "tiny": lambda folder: results["stage_breakdown"].append(
            stage_breakdown(folder, 3 if args.quick else 30, "tiny", tiny)
        ),
        "full": lambda folder: results["stage_breakdown"].append(stage_breakdown(folder, full_song, SD15_RANDOM, full)),
        "scaling": lambda folder: results.update(scaling=scaling(folder, args.lengths, tiny)),
        "batch": lambda folder: results.update(
            batch_sweep=batch_sweep(folder, args.batch_sizes, 3 if args.quick else 15, tiny)
        ),
        # the full-size architecture on a GPU; torch.compile last, as it takes longest
        "gpu-flops": lambda folder: gpu.update(flop_bound=flop_bound(full, preset_for(SD15_RANDOM))),
        "gpu-batch": lambda folder: gpu.update(
            batch_sweep=batch_sweep(folder, args.batch_sizes, full_song, full, SD15_RANDOM)
        ),
        "gpu-low-vram": lambda folder: gpu.update(low_vram=low_vram_memory(folder, full)),
        "gpu-compile": lambda folder: gpu.update(
            compile=compile_speedup(
                folder,
                full_song,
                replace(full, batch_size=best_batch(gpu)["batch_size"] if "batch_sweep" in gpu else 8),
            )
        ),
    }
    if on_gpu and full:
        results["gpu"] = gpu = {"settings": f"{full.width}x{full.height}, {full.steps} steps, float16"}
    chosen = args.phases or [
        p for p in phases if (p != "full" or full) and (not p.startswith("gpu") or "gpu" in results)
    ]
    with tempfile.TemporaryDirectory(prefix="musicvid-bench-") as tmp:
        for phase in chosen:
            started = time.perf_counter()
            phases[phase](Path(tmp))
            if "gpu" in results:
                fraction_of_bound(results["gpu"])
            print(f"[{phase}: {time.perf_counter() - started:.0f} s]", file=sys.stderr, flush=True)
            # after each phase: a cut-off run keeps its data
            write_text(out, json.dumps(results, indent=2, allow_nan=False) + "\n")

    print(markdown(results))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
