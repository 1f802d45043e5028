"""musicvid against stable-diffusion-videos: the same prompt walk, weights and settings, run alternately.

    python -m benchmarks.side_by_side                       # SD 1.5 architecture: 512², 25 steps on a GPU,
                                                            # 128x128, 4 steps on a CPU; 5 rounds
    python -m benchmarks.side_by_side --diffusion tiny-random --size 64x64 --steps 4

stable-diffusion-videos does not import with transformers 5, so it runs in its own virtual environment
(.venv-sdv, made on first use from benchmarks/sdv-requirements.txt, or --sdv-python). The weights are
built once (random, from a fixed seed: compute does not depend on their values), saved, and loaded by
both. Each round runs every tool once, in alternating order, each in a fresh process; frames per second
count from loaded pipeline to finished video, and the ratio is of the medians over the rounds. Five
rounds at least: with two, one slow process (157 s against about 50) halved the ratio of a CPU run. musicvid also runs in stable-diffusion-videos'
environment, so that a difference of torch or diffusers versions can be told apart from one of design.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.models.tiny import LOCAL_DIFFUSION, local_diffusion
from musicvid.settings.front_doors import parse_size, parse_whole
from musicvid.settings.presets import SD15_RANDOM
from vipe_core.atomic import write_text

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SDV_VENV = REPO / ".venv-sdv"
PROMPTS = ["a lighthouse on a cliff at night", "a storm over a dark sea", "a small boat in golden morning light"]
SEEDS = [11, 22, 33]


def sdv_python(given: Path | None) -> Path:
    """stable-diffusion-videos' interpreter: the given one, or .venv-sdv, made on first use."""
    if given:
        return given
    python = SDV_VENV / "bin" / "python"
    if not python.exists():
        print(f"making {SDV_VENV} for stable-diffusion-videos (once; a few GB) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(SDV_VENV)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, "-r", str(HERE / "sdv-requirements.txt")], check=True)
        # its own requirements name realesrgan (an optional upscaler) and protobuf 3.20; the walk needs neither
        subprocess.run([*pip, "--no-deps", "stable-diffusion-videos==0.9.2"], check=True)
    return python


def run_walk(python: Path, tool: str, weights: Path, out: Path, args, pythonpath: bool) -> dict:
    command = [
        str(python),
        str(HERE / "walk.py"),
        "--tool",
        tool,
        "--weights",
        str(weights),
        "--out",
        str(out),
        "--prompts",
        *PROMPTS[: args.prompts],
        "--seeds",
        *map(str, SEEDS[: args.prompts]),
        "--frames-per-prompt",
        str(args.frames_per_prompt),
        "--width",
        str(args.width),
        "--height",
        str(args.height),
        "--steps",
        str(args.steps),
        "--batch-size",
        str(args.batch_size),
        "--device",
        args.device,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "DIFFUSERS_VERBOSITY": "error", "TRANSFORMERS_VERBOSITY": "error"}
    if pythonpath:  # musicvid in the other environment: from this checkout
        env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{tool} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def at_least_one(text: str) -> int:
    if (number := parse_whole(text)) < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {number}")
    return number


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.side_by_side", description=__doc__.splitlines()[0])
    parser.add_argument("--diffusion", choices=sorted(LOCAL_DIFFUSION), default=SD15_RANDOM)
    on_gpu = torch.cuda.is_available()
    parser.add_argument("--size", type=parse_size, default="512x512" if on_gpu else "128x128", help="WxH")
    parser.add_argument("--steps", type=at_least_one, default=25 if on_gpu else 4)
    parser.add_argument("--batch-size", type=at_least_one, default=4)
    parser.add_argument("--prompts", type=int, choices=(2, 3), default=3)
    parser.add_argument("--frames-per-prompt", type=at_least_one, default=8)
    parser.add_argument("--rounds", type=at_least_one, default=5)
    parser.add_argument("--device", default="cuda" if on_gpu else "cpu")
    parser.add_argument("--sdv-python", type=Path, help="python of an environment with stable-diffusion-videos")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    args.width, args.height = args.size
    if min(args.size) < 8 or args.width % 8 or args.height % 8:
        parser.error(f"--size must be whole multiples of 8 (the latents' scale), not {args.width}x{args.height}")
    if args.sdv_python and not (args.sdv_python.is_file() and os.access(args.sdv_python, os.X_OK)):
        parser.error(f"--sdv-python {args.sdv_python} is not a program that can be run")
    other = sdv_python(args.sdv_python)
    tools = [
        ("musicvid", Path(sys.executable), "musicvid", False),
        ("musicvid (sdv env)", other, "musicvid", True),
        ("stable-diffusion-videos", other, "stable-diffusion-videos", False),
    ]
    runs: dict[str, list[dict]] = {label: [] for label, *_ in tools}
    with tempfile.TemporaryDirectory(prefix="musicvid-side-by-side-") as tmp:
        weights = Path(tmp) / "weights"
        local_diffusion(args.diffusion).save_pretrained(weights)
        # transformers 5 saves only tokenizer.json, which transformers 4's CLIPTokenizer cannot read:
        # give both the vocabulary files the tokenizer was made from
        shutil.rmtree(weights / "tokenizer")
        shutil.copytree(TINY_CLIP_TOKENIZER, weights / "tokenizer")
        for round_ in range(args.rounds):
            order = tools if round_ % 2 == 0 else tools[::-1]
            for label, python, tool, pythonpath in order:
                out = Path(tmp) / f"{round_}-{tool}-{pythonpath}"
                result = run_walk(python, tool, weights, out, args, pythonpath)
                print(
                    f"round {round_ + 1}: {label}: {result['video_frames']} frames in {result['seconds']:.1f} s",
                    file=sys.stderr,
                )
                runs[label].append(result)

    def rate(label: str) -> float:
        return statistics.median(r["video_frames"] / r["seconds"] for r in runs[label])

    results = {
        "machine": {
            "host": platform.node(),
            "cpu_count": os.cpu_count(),
            "device": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
        },
        "settings": {k: v for k, v in vars(args).items() if k not in ("out", "sdv_python", "size")}
        | {"size": f"{args.width}x{args.height}", "sdv_python": str(other)},
        "runs": runs,
        "frames_per_second": {label: round(rate(label), 3) for label in runs},
        "ratio": round(rate("musicvid") / rate("stable-diffusion-videos"), 3),
        "ratio_same_environment": round(rate("musicvid (sdv env)") / rate("stable-diffusion-videos"), 3),
    }
    out = args.out or HERE / "results" / f"side-by-side-{args.diffusion}-{args.device}.json"
    write_text(out, json.dumps(results, indent=2, allow_nan=False) + "\n")
    size = f"{args.width}x{args.height}"
    print(f"### Side by side: {args.diffusion}, {size}, {args.steps} steps, batch {args.batch_size}, {args.device}")
    print("| tool | torch | frames | pictures | frames/s (median) |\n| --- | --- | ---: | ---: | ---: |")
    for label, rows in runs.items():
        print(
            f"| {label} | {rows[0]['torch']} | {rows[0]['video_frames']} | {rows[0]['pictures']} | {rate(label):.3f} |"
        )
    print(
        f"\nmusicvid / stable-diffusion-videos: ×{results['ratio']} (same environment: ×{results['ratio_same_environment']})"
    )
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
