"""One command that measures a GPU, at full size with random weights (the cost does not depend on the weights'
values), in one run, with its checks printed at the end, so that a session with a GPU measures it all at once.

    python -m benchmarks.device                 # on a GPU: the sections below, at most 9 minutes
    python -m benchmarks.device --only sd15 song-fast
    python -m benchmarks.device --dry-run       # on the CPU with the tiny models: checks every row and section

Sections, in this order (a song that would run past the run's --budget, 540 s, is stopped and written as not
finished, and a section that would start past it is written as skipped):
  sd15       SD 1.5's architecture at 512², 25 steps, float16: the rows of benchmarks/levers.py (DEVICE_ROWS), each
             in its steady state (benchmarks/steady.py), the baseline first and last, the baseline, --compile and
             --fast rows profiled; the versions that decide the kernels, the GPU's clocks at the start and the end
  song-fast  the headline: a 3-minute song (generated, so it runs offline) from its MP3 to the MP4 with
             `--look music-video --fast` (1080p, 30 fps, karaoke), Whisper large-v2's, ViPE-M's, SD 1.5's and
             Real-ESRGAN x4plus's architectures (--song-upscaler x4v3: the compact one's; --song-compile: with
             --compile): wall time and each stage's share (benchmarks/whole_song.py)
  song-25    the same at SD 1.5's 25 steps
  delivery   the learned upscalers' seconds a 1080p frame (x4plus and x4v3: the default's choice, by cost and,
             given their published weights, PSNR), and a PNG's write and read (what handing frames over saves)
  quality    benchmarks/quality.py's scores of the rows that change pictures (--deep-cache, --fast) beside the
             render as it is, with the tiny models (random weights: a check of the mechanics, not of quality)
and on request (--only): sdxl (its baseline and batch rows at 1024²), pictures (Z-Image and FLUX.2 klein
keyframes), video (one transition per video model), measured on 2026-11-26 and left out of the default run.

Writes benchmarks/results/gpu-<device>-<date>.json after each section (a section is written as running before it
starts: a run cut short shows which one it was in); a section that fails is written with its error. torch.compile's
work is kept in --compile-cache (TORCHINDUCTOR_CACHE_DIR), and with --compile-artifacts loaded from and saved to
one file (torch.compiler's mega-cache), which a later machine can be given so that its compile rows start warm.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import torch

from benchmarks import families
from benchmarks.device_checks import checks, planned, png_round_trip
from benchmarks.what_ran import machine, versions

HERE = Path(__file__).parent
DEVICE_ROWS = (
    "batch-1",
    "attention-unet-flash",
    "compile",
    "compile-autotune",
    "deep-cache-3",
    "fast",
    "fast-compile-32",
)
SONG_SECONDS, DRY_SONG_SECONDS = 180.0, 6.0
QUALITY_VARIANTS = ("deep-cache 3=--deep-cache 3", "fast=--fast")


def sd15(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.speed import drawing_rows

    return drawing_rows(False, list(args.rows), args.dry_run, args.groups, write)


def sdxl(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.speed import drawing_rows

    return drawing_rows(True, ["batch-8"], args.dry_run, args.groups, write)


def pictures(args, write: Callable[[dict], None]) -> dict:
    rows = {
        family: families.keyframes(family, args.device, torch.bfloat16, args.dry_run)
        for family in families.PICTURE_FAMILIES
    }
    rows["text_encoders"] = families.text_encoders(args.device, torch.bfloat16, args.dry_run)
    return rows


def video(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.transitions import timed_transition

    # LTX-Video 0.9.5, as --transitions video draws today: a 3 s morph (a 33-frame clip), 40 steps
    rows = {"ltx-video-0.9.5": timed_transition(args.dry_run, False, 1, 704, 384, 33)}
    for family in families.VIDEO_FAMILIES:
        rows[family] = families.clip(family, args.device, torch.bfloat16, args.dry_run)
    return rows


def delivery(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.delivery import upscaling

    weights = dict(item.split("=", 1) for item in args.upscaler_weights)
    rows = upscaling(SimpleNamespace(quick=args.dry_run, repeats=1 if args.dry_run else 3, weights=weights))
    return {"upscaling": rows, "png": png_round_trip()}


def song(args, given: dict) -> dict:
    """The headline: a song from its MP3 to the MP4, stopped where it would run past the run's budget."""
    from benchmarks.whole_song import whole_song

    left = args.budget - (time.perf_counter() - args.started)
    with tempfile.TemporaryDirectory(prefix="musicvid-device-") as folder:
        seconds = DRY_SONG_SECONDS if args.dry_run else SONG_SECONDS
        row = whole_song(seconds, not args.dry_run, Path(folder), given, max(left, 1.0), args.song_upscaler)
    return row | {"memory_plan": planned(given)}


def quality(args, write: Callable[[dict], None]) -> dict:
    from benchmarks.quality import QUICK_FPS, QUICK_LYRICS, QUICK_SECONDS, VARIANTS, compare, parse_variant
    from tests.fixtures.songs import band, write_song

    with tempfile.TemporaryDirectory(prefix="musicvid-quality-") as temporary:
        folder = Path(temporary)
        song = write_song(folder / "song.wav", band(QUICK_SECONDS), [], 0.0)
        (folder / "song.lrc").write_text(QUICK_LYRICS, encoding="utf-8")
        variants = (VARIANTS[0], *(parse_variant(text) for text in QUALITY_VARIANTS))
        device = "cpu" if args.dry_run else "cuda"
        return compare(song, folder / "song.lrc", folder, variants, "tiny", QUICK_FPS, device)


# Each section takes the run's options and `write`, which records the figures it has so far (sd15's and sdxl's rows
# as they come, so that a run cut short keeps them).
SECTIONS = {
    "sd15": sd15,
    "delivery": delivery,
    "song-fast": lambda args, write: song(args, {"look": "music-video", "fast": True, **args.song_options}),
    "song-25": lambda args, write: song(args, {"look": "music-video", **args.song_options}),
    "quality": quality,
    "sdxl": sdxl,
    "pictures": pictures,
    "video": video,
}
DEFAULT = ("sd15", "song-fast", "song-25", "delivery", "quality")


def results_file(device_name: str) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")
    return HERE / "results" / f"gpu-{slug}-{datetime.date.today().isoformat()}.json"


def compile_cache(args) -> None:
    """torch.compile's caches in --compile-cache, and the mega-cache of --compile-artifacts loaded."""
    if args.compile_cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(args.compile_cache.resolve())
    if args.compile_artifacts and args.compile_artifacts.is_file():
        torch.compiler.load_cache_artifacts(args.compile_artifacts.read_bytes())


def save_compile_artifacts(args) -> None:
    saved = torch.compiler.save_cache_artifacts() if args.compile_artifacts else None
    if saved:
        args.compile_artifacts.parent.mkdir(parents=True, exist_ok=True)
        args.compile_artifacts.write_bytes(saved[0])


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.device", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), default=list(DEFAULT), help="these sections")
    parser.add_argument("--rows", nargs="+", default=list(DEVICE_ROWS), help="sd15's rows besides the baseline")
    parser.add_argument("--groups", type=int, help="groups timed a row (default 10; 2 in a dry run)")
    parser.add_argument("--dry-run", action="store_true", help="on the CPU with tiny models: checks the script")
    parser.add_argument("--budget", type=float, default=540.0, help="seconds: a song is stopped there")
    parser.add_argument("--compile-cache", type=Path, help="torch.compile's cache folder (TORCHINDUCTOR_CACHE_DIR)")
    parser.add_argument("--compile-artifacts", type=Path, help="torch.compile's mega-cache: loaded, then saved")
    parser.add_argument("--upscaler-weights", nargs="+", default=[], metavar="NAME=FILE", help="x4plus=, x4v3=")
    parser.add_argument("--song-upscaler", choices=("x4plus", "x4v3"), default="x4plus", help="the songs' upscaler")
    parser.add_argument("--song-compile", action="store_true", help="the songs rendered with --compile too")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    if not args.dry_run and not torch.cuda.is_available():
        parser.error("no GPU here: --dry-run checks the script on the CPU")
    from benchmarks.levers import levers

    known = [lever.name for lever in levers(True)]
    if unknown := sorted(set(args.rows) - set(known)):
        parser.error(f"unknown rows: {', '.join(unknown)}; known: {', '.join(known)}")
    args.groups = args.groups or (2 if args.dry_run else 10)
    args.song_options = {"compile": True} if args.song_compile else {}
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")  # random prompts truncated by CLIP: no news
    if args.dry_run:  # inductor on two cores takes minutes a row: the graphs alone are checked
        os.environ.setdefault("MUSICVID_COMPILE_BACKEND", "eager")
    compile_cache(args)
    args.device = torch.device("cpu" if args.dry_run else "cuda")
    report = {"machine": machine(args.device) | {"versions": versions()}, "dry_run": args.dry_run, "sections": {}}
    # a dry run's figures are no measurement: they stay out of benchmarks/results
    dry = Path(tempfile.gettempdir()) / "musicvid-gpu-dry-run.json"
    out = args.out or (dry if args.dry_run else results_file(torch.cuda.get_device_name(0)))
    out.parent.mkdir(parents=True, exist_ok=True)
    args.started = time.perf_counter()

    def so_far(name: str):  # a section's figures so far, written as they come (the section still running)
        def write(figures: dict) -> None:
            report["sections"][name] = {"running": "started, not finished: the run was cut short here", **figures}
            out.write_text(json.dumps(report, indent=2) + "\n")

        return write

    for name in args.only:
        if time.perf_counter() - args.started > args.budget:
            report["sections"][name] = {"skipped": f"past the budget of {args.budget:g} s"}
            continue
        report["sections"][name] = {"running": "started, not finished: the run was cut short here"}
        out.write_text(json.dumps(report, indent=2) + "\n")
        began = time.perf_counter()
        try:
            result = SECTIONS[name](args, so_far(name))
        except Exception as error:  # recorded, and the next section runs
            traceback.print_exc()
            result = {"error": f"{type(error).__name__}: {error}"[:500]}
        report["sections"][name] = {"seconds": round(time.perf_counter() - began, 1), **result}
        print(f"[{name}: {report['sections'][name]['seconds']} s]", file=sys.stderr, flush=True)
        if name == "sd15":
            save_compile_artifacts(args)
        if args.device.type == "cuda":
            torch.cuda.empty_cache()
        out.write_text(json.dumps(report, indent=2) + "\n")
    report["checks"] = checks(report)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print("\n".join(line["line"] for line in report["checks"]))
    print(f"results: {out}")
    failed = [name for name, section in report["sections"].items() if "error" in section]
    return 1 if args.dry_run and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
