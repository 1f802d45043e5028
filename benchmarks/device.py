"""One command that measures a GPU: everything the benchmarks time, at full size with random weights (the cost
does not depend on the weights' values), in one run of a few minutes, so that the first session with a GPU
measures it all at once.

    python -m benchmarks.device                 # on a GPU: every section, about 6 minutes on an H100
    python -m benchmarks.device --only sd15 video
    python -m benchmarks.device --dry-run       # on the CPU with the tiny models: checks the script (the suite runs it)

Sections, in this order:
  sd15      SD 1.5's architecture at 512², 25 steps, float16: render's frames per second, lever by lever
            (benchmarks/speed.py's rows: the batch, memory layout, attention backends, --fast, a reference
            picture; `--compile` adds torch.compile, which costs minutes to warm up)
  sdxl      SDXL's at 1024², the same rows for its baseline and batch
  pictures  Z-Image-Turbo (8 steps) and FLUX.2 klein 4B (4 steps) keyframes at 1024², bfloat16, 1 and 4 at a
            time; one prompt through each family's text encoder (Qwen3-4B, UMT5-XXL, Gemma 3 12B)
  video     one transition clip between two keyframes per video model: LTX-Video 0.9.5 through musicvid's own
            code, Wan 2.1 FLF2V 14B and LTX-2 through their pipelines (steps timed, the card's steps extrapolated)
  delivery  the learned upscalers to 1080p, batches of 1, 4 and 8 frames
  song      a 30 s song end to end (Whisper large-v2's, ViPE-M's and SD 1.5's architectures), each stage's peak
            memory beside what the memory plan (musicvid plan) predicted for it

Writes benchmarks/results/gpu-<device>-<date>.json after each section (a run cut short keeps what it
measured), with the machine, and each model's dtype, device and size as read back from its modules.
A section that fails is recorded with its error, and the run goes on.
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

import torch

from benchmarks import families
from benchmarks.what_ran import machine

HERE = Path(__file__).parent
SD15_LEVERS = ("blocks-16", "blocks-32", "channels-last", "fused-qkv", "sdpa-flash_attention",
               "sdpa-cudnn_attention", "fast-16", "reference")  # fmt: skip
SDXL_LEVERS = ("blocks-8",)
SONG_SECONDS = 30.0


def speed_rows(sdxl: bool, levers: tuple[str, ...], pictures: int, dry_run: bool) -> dict:
    """benchmarks/speed.py's rows: the baseline and `levers`, `pictures` in-between frames each."""
    from benchmarks.levers import levers as catalogue
    from benchmarks.speed import main as speed

    known = {lever.name for lever in catalogue(not dry_run)}
    levers = tuple(name for name in levers if name in known)  # the CPU has one attention backend
    with tempfile.TemporaryDirectory(prefix="musicvid-device-") as folder:
        out = Path(folder) / "speed.json"
        argv = ["--levers", *levers, "--pictures", str(pictures), "--out", str(out)]
        speed(argv + ["--sdxl"] * sdxl + ["--quick"] * dry_run)
        return json.loads(out.read_text())


def sd15(args) -> dict:
    levers = SD15_LEVERS + (("compile",) if args.compile else ())
    rows = speed_rows(False, levers, 12 if args.dry_run else 32, args.dry_run)
    rows["memory_plan"] = {f"batch {n}": planned_pictures(n) for n in (8, 16, 32)}
    return rows


def planned_pictures(batch: int) -> dict | str:
    """The memory plan's pictures stage for SD 1.5 on this card at `batch` morphs, beside which the rows' peak
    GPU memory is read (the plan also holds the keyframes' scorer, which the rows do not load)."""
    from musicvid.memory.plan import plan_memory
    from musicvid.models.precision import Precision
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.render import resolve_render_settings

    if not torch.cuda.is_available():
        return "no plan off CUDA"
    models = PRESETS["default"]
    settings = resolve_render_settings(models, {"batch_size": batch})
    total = torch.cuda.get_device_properties(0).total_memory / 2**30
    precision = Precision.resolve("auto", torch.device("cuda"))
    try:
        plan = plan_memory(models, settings, precision, total, "the card", transcribe=False, elaborate=False)
    except Exception as error:  # a model the plan cannot size: say which
        return f"{type(error).__name__}: {error}"
    stage = plan.stage("pictures").as_dict()
    scorer = sum(m["weights_gb"] for m in stage["models"] if m["name"] == models.scorer)
    return {**stage, "peak_gb_without_scorer": round(stage["peak_gb"] - scorer, 2)}


def sdxl(args) -> dict:
    return speed_rows(True, SDXL_LEVERS, 4 if args.dry_run else 16, args.dry_run)


def pictures(args) -> dict:
    rows = {
        family: families.keyframes(family, args.device, torch.bfloat16, args.dry_run)
        for family in families.PICTURE_FAMILIES
    }
    rows["text_encoders"] = families.text_encoders(args.device, torch.bfloat16, args.dry_run)
    return rows


def video(args) -> dict:
    from benchmarks.transitions import timed_transition

    # LTX-Video 0.9.5, as --transitions video draws today: a 3 s morph (a 33-frame clip), 40 steps
    rows = {"ltx-video-0.9.5": timed_transition(args.dry_run, False, 1, 704, 384, 33)}
    for family in families.VIDEO_FAMILIES:
        rows[family] = families.clip(family, args.device, torch.bfloat16, args.dry_run)
    return rows


def delivery(args) -> dict:
    from benchmarks.delivery import upscaling

    return upscaling(SimpleNamespace(quick=args.dry_run, repeats=1 if args.dry_run else 3))


def song(args) -> dict:
    """A song end to end, and each stage's measured peak beside the memory plan's for the same models."""
    from benchmarks.whole_song import whole_song

    full_size = not args.dry_run
    with tempfile.TemporaryDirectory(prefix="musicvid-device-") as folder:
        row = whole_song(5.0 if args.dry_run else SONG_SECONDS, full_size, Path(folder))
    row["memory_plan"] = planned(full_size)
    return row


def planned(full_size: bool) -> dict | str:
    """What musicvid's memory plan predicts for the song's models on this card, stage by stage."""
    from benchmarks.whole_song import FULL_SIZE
    from musicvid.memory.plan import plan_memory
    from musicvid.models.precision import Precision
    from musicvid.settings.presets import PRESETS
    from musicvid.settings.render import resolve_render_settings

    if not torch.cuda.is_available():
        return "no plan off CUDA"
    models = PRESETS["default"] if full_size else FULL_SIZE
    settings = resolve_render_settings(models, {"batch_size": 8})
    total = torch.cuda.get_device_properties(0).total_memory / 2**30
    try:
        plan = plan_memory(models, settings, Precision.resolve("auto", torch.device("cuda")), total, "the card")
    except Exception as error:  # a model the plan cannot size: say which
        return f"{type(error).__name__}: {error}"
    return plan.as_dict()


SECTIONS = {"pictures": pictures, "video": video, "sd15": sd15, "delivery": delivery, "sdxl": sdxl, "song": song}


def results_file(device_name: str) -> Path:
    slug = re.sub(r"[^a-z0-9]+", "-", device_name.lower()).strip("-")
    return HERE / "results" / f"gpu-{slug}-{datetime.date.today().isoformat()}.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.device", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), default=list(SECTIONS), help="these sections")
    parser.add_argument("--dry-run", action="store_true", help="on the CPU with tiny models: checks the script")
    parser.add_argument("--compile", action="store_true", help="also SD 1.5 compiled (minutes of warm-up)")
    parser.add_argument("--budget", type=float, default=480.0, help="seconds: no section starts after this")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if not args.dry_run and not torch.cuda.is_available():
        parser.error("no GPU here: --dry-run checks the script on the CPU")
    args.device = torch.device("cpu" if args.dry_run else "cuda")
    report = {"machine": machine(args.device), "dry_run": args.dry_run, "sections": {}}
    # a dry run's figures are no measurement: they stay out of benchmarks/results
    dry = Path(tempfile.gettempdir()) / "musicvid-gpu-dry-run.json"
    out = args.out or (dry if args.dry_run else results_file(torch.cuda.get_device_name(0)))
    out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for name in args.only:
        if time.perf_counter() - started > args.budget:
            report["sections"][name] = {"skipped": f"past the budget of {args.budget:g} s"}
            continue
        began = time.perf_counter()
        try:
            result = SECTIONS[name](args)
        except Exception as error:  # recorded, and the next section runs
            traceback.print_exc()
            result = {"error": f"{type(error).__name__}: {error}"[:500]}
        seconds = round(time.perf_counter() - began, 1)
        report["sections"][name] = {"seconds": seconds, **result}
        print(f"[{name}: {seconds} s]", file=sys.stderr, flush=True)
        if args.device.type == "cuda":
            torch.cuda.empty_cache()
        out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"results: {out}")
    failed = [name for name, section in report["sections"].items() if "error" in section]
    return 1 if args.dry_run and failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
