"""Frames per second of drawing on one GPU, row by row, each in its steady state, against the render as it draws
today (benchmarks/rows.py, benchmarks/steady.py).

    python -m benchmarks.speed                    # on a GPU: SD 1.5's architecture, 512², 25 steps, float16
    python -m benchmarks.speed --song 180         # and then a 3-minute song end to end
    python -m benchmarks.speed --levers compile fast      # some rows only (the baseline always, first and last)
    python -m benchmarks.speed --sdxl --levers batch-8    # SDXL's architecture, 1024², 25 steps
    python -m benchmarks.speed --quick            # tiny models on the CPU: checks that the script still works
    python -m benchmarks.speed --flops            # TFLOP per picture of SD 1.5 and SDXL, counted on any machine

The weights are random (the cost does not depend on their values), built once from a fixed seed; each
row draws with a copy of them. The baseline is render's loop as it is: eager, at the batch the memory plan
takes on this card without --batch-size. Each row times 10 full groups of one shape after its warm-up, with CUDA
events, and gives the median group's frames per second with the spread of the groups' rates, its ratio to the
baseline, the warm-up's seconds (compiling included), its own peak GPU memory, and its pictures against the row
it is like (the baseline, or --fast's): the largest and mean difference in 1/255 and the PSNR (the goal where a
row does not mean to change the pictures: at most 2). The baseline is drawn again last: the run is void where the
two differ by more than 5%. The baseline, --compile and --fast rows also profile one more group
(benchmarks/profile_split.py: convolutions, matrix products, attention, elementwise work, the VAE, the GPU's idle
time, and the attention backend each shape took).

--song adds the whole pipeline on a song of that many seconds: Whisper large-v2's architecture aligning
the lyrics, ViPE-M's elaborating them and SD 1.5's drawing every frame, with each stage's share and the
time the GPU waited between them. Writes JSON (default benchmarks/results/speed-<device>.json) after
each row and prints markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Callable

import torch

from benchmarks.budget import RowBudget
from benchmarks.device_checks import void_flag
from benchmarks.levers import levers
from benchmarks.peaks import run_peak_gb
from benchmarks.rows import plan_batch, run_rows
from benchmarks.steady import GROUPS
from benchmarks.what_ran import gpu_clocks, machine, versions
from benchmarks.whole_song import song_markdown, whole_song
from musicvid.models.tiny import LOCAL_DIFFUSION, local_diffusion
from musicvid.settings.presets import PRESETS, SD15, SD15_RANDOM, SDXL, SDXL_RANDOM, TINY, TINY_XL
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Scene, SongAudio, Storyboard

HERE = Path(__file__).parent
# Lines of 2.3 to 4.1 s, as a song's are: the morphs are 23 to 41 frames at 10 fps
LINE_SECONDS = (2.3, 3.1, 4.1, 2.7, 3.6)
FLOP_COUNTS = ((SD15_RANDOM, 512), (SDXL_RANDOM, 1024))


def storyboard(pictures: int, fps: float = 10.0) -> Storyboard:
    """Scenes of LINE_SECONDS in turn, enough for `pictures` in-between frames."""
    starts = [0.0]
    while (starts[-1] - len(starts) / fps) * fps < pictures + 1:
        starts.append(starts[-1] + LINE_SECONDS[len(starts) % len(LINE_SECONDS)])
    prompts = ["a lighthouse in a storm", "a city of glass at dawn", "rivers of light", "a red kite over hills"]
    scenes = [
        Scene(index=i, kind="lyric", start=s, end=e, text="", prompt=prompts[i % len(prompts)], seed=100 + i)
        for i, (s, e) in enumerate(zip(starts, starts[1:]))
    ]
    return Storyboard(SongAudio(starts[-1]), "Benchmark", "Random Weights", scenes=scenes)


def flops_per_picture(name: str, size: int) -> dict:
    """TFLOP of one picture of the architecture `name` at size² (25 guided steps, the VAE's decode), counted
    by torch on the meta device: no weights, no drawing, so it runs anywhere in seconds. An estimate of
    cost, to compare architectures by; the frames per second are what the rows measure. Beside it, a guided step
    of an in-between frame under --deep-share N (shared_step)."""
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from torch.utils.flop_counter import FlopCounterMode

    sizes = LOCAL_DIFFUSION[name]
    with torch.device("meta"):
        unet = UNet2DConditionModel(in_channels=4, out_channels=4, **sizes["unet"])
        vae = AutoencoderKL(
            down_block_types=("DownEncoderBlock2D",) * 4, up_block_types=("UpDecoderBlock2D",) * 4, **sizes["vae"]
        )
        latents = torch.empty(2, 4, size // 8, size // 8)  # the picture and its unguided twin
        text = torch.empty(2, 77, unet.config.cross_attention_dim)
        extra = None
        if unet.config.addition_embed_type == "text_time":  # SDXL: the pooled text and the six sizes
            pooled = unet.config.projection_class_embeddings_input_dim - 6 * unet.config.addition_time_embed_dim
            extra = {"text_embeds": torch.empty(2, pooled), "time_ids": torch.empty(2, 6)}
        with FlopCounterMode(display=False) as step:
            unet(latents, torch.tensor([500, 500]), encoder_hidden_states=text, added_cond_kwargs=extra)
        with FlopCounterMode(display=False) as decode:
            vae.decode(latents[:1])
    step_flops, decode_flops = step.get_total_flops(), decode.get_total_flops()
    tflop = {"guided_step": step_flops, "decode": decode_flops, "picture_25_steps": 25 * step_flops + decode_flops}
    for n in SHARED:
        tflop[f"guided_step_deep_share_{n}"] = shared_step(unet, latents, text, extra, n)
    return {part: float(f"{flops / 1e12:.4g}") for part, flops in tflop.items()}


SHARED, SHARED_GROUP = (2, 3), 16  # --deep-share's N counted, in a group of 16 in-between frames of one morph


def shared_step(unet, latents: torch.Tensor, text: torch.Tensor, extra: dict | None, n: int) -> float:
    """FLOPs a picture of one guided step of a group of SHARED_GROUP frames of one morph under --deep-share n."""
    from torch.utils.flop_counter import FlopCounterMode

    from musicvid.pictures.deep_cache import set_deep_cache, sharing
    from musicvid.pictures.deep_share import plan

    rows = 2 * SHARED_GROUP  # the group and its unguided twins

    def group(x: torch.Tensor) -> torch.Tensor:
        return torch.empty(rows, *x.shape[1:], device="meta")

    more = {k: group(v) for k, v in extra.items()} if extra else None
    shared = plan(["morph"] * SHARED_GROUP, [i / SHARED_GROUP for i in range(SHARED_GROUP)], n)
    set_deep_cache(unet, 1, shares=True)
    with sharing(unet, shared, torch.device("meta")), FlopCounterMode(display=False) as step:
        unet(group(latents), torch.tensor(500), encoder_hidden_states=group(text), added_cond_kwargs=more)
    set_deep_cache(unet, 1)
    return step.get_total_flops() / SHARED_GROUP


def markdown(results: dict) -> str:
    out = [f"### Drawing, {results['settings']} on {results['machine']['device']}"]
    out.append("| row | frames/s | × baseline | spread | warm-up (s) | max diff (/255) | PSNR (dB) | peak GB | what |")
    out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, row in results["levers"].items():
        if "error" in row:
            out.append(f"| {name} | – | – | – | – | – | – | – | {row['what']}: {row['error']} |")
            continue
        diff = row.get("difference", {})
        out.append(
            f"| {name} | {row['frames_per_second']} | {row['ratio'] or '–'} | ±{row['spread']['relative']:.1%} | "
            f"{row['warm_up_seconds']} | {diff.get('max_difference', '')} | {diff.get('psnr_db') or ''} | "
            f"{row.get('peak_gpu_gb', '')} | {row['what']} |"
        )
    checked = results["levers"].get("baseline-again", {}).get("baselines")
    if checked:
        verdict = "VOID" if checked["void"] else "valid"
        out.append(
            f"\nbaselines {checked['first']} and {checked['last']} frames/s, {checked['apart']:.1%} apart: {verdict}"
        )
    if "song" in results:
        out += song_markdown(results["song"])
    return "\n".join(out)


def architecture(sdxl: bool, quick: bool) -> tuple[str, RenderSettings]:
    """The architecture drawn and its settings: SD 1.5's (or SDXL's) at full size on a GPU, the tiny one else."""
    if quick or not torch.cuda.is_available():
        return TINY_XL if sdxl else TINY, RenderSettings(size=(64, 64), steps=4)
    if sdxl:
        return SDXL_RANDOM, RenderSettings(size=(1024, 1024), steps=25, guidance=5.0)
    return SD15_RANDOM, RenderSettings(size=(512, 512), steps=25, guidance=7.5)


def drawing_rows(
    sdxl: bool,
    names: list[str],
    quick: bool,
    groups: int = GROUPS,
    written: Callable[[dict], object] = print,
    budget: RowBudget | None = None,
) -> dict:
    """The rows named (the baseline first and last, whatever the names), measured; `written` is given the results
    so far after each row (a run cut short keeps its rows); a row `budget` has no time for is skipped."""
    name, settings = architecture(sdxl, quick)
    device = torch.device("cuda" if torch.cuda.is_available() and not quick else "cpu")
    catalogue = {lever.name: lever for lever in levers(device.type == "cuda")}
    chosen = [catalogue[n] for n in dict.fromkeys(["baseline", *names]) if n in catalogue]
    dtype = torch.float16 if device.type == "cuda" else torch.float32
    base = local_diffusion(name).to(dtype=dtype).to(device)
    base.set_progress_bar_config(disable=True)
    models = replace(PRESETS["default"], diffusion=SDXL if sdxl else SD15)  # what a render plans by
    batch = plan_batch(models, settings, device)
    most = max([lever.batch_size or batch for lever in chosen]) * (max(lever.warm_up for lever in chosen) + groups)
    results = {
        "machine": machine(device) | {"versions": versions(), "clocks_at_start": gpu_clocks()},
        "settings": f"{name}, {settings.width}x{settings.height}, {settings.steps} steps, guidance "
        f"{settings.guidance}, {str(dtype).removeprefix('torch.')}",
        "baseline_batch": batch,
        "groups_timed": groups,
    }

    board = storyboard(most + 40)
    rows = run_rows(base, board, settings, chosen, batch, groups, lambda r: written(results | {"levers": r}), budget)
    results |= {
        "levers": rows,
        **void_flag(rows),
        "clocks_at_end": gpu_clocks(),
        "run_peak_gpu_gb": run_peak_gb(device) if device.type == "cuda" else None,
    }
    written(results)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny models, a few groups: checks the script")
    parser.add_argument("--levers", nargs="+", help="only these rows (the baseline is always drawn, first and last)")
    parser.add_argument("--groups", type=int, default=GROUPS, help=f"groups timed a row (default {GROUPS})")
    parser.add_argument("--song", type=float, help="also a song of this many seconds, end to end")
    parser.add_argument("--sdxl", action="store_true", help="SDXL's architecture (1024², 25 steps), not SD 1.5's")
    parser.add_argument("--flops", action="store_true", help="only count SD 1.5's and SDXL's TFLOP per picture")
    parser.add_argument("--out", type=Path, help="JSON file to write")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("DIFFUSERS_VERBOSITY", "error")  # random prompts truncated by CLIP: no news
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if args.flops:
        counted = {f"{name} {size}x{size}": flops_per_picture(name, size) for name, size in FLOP_COUNTS}
        print(json.dumps(counted, indent=2))
        return 0
    on_gpu = torch.cuda.is_available() and not args.quick
    if args.quick or not on_gpu:
        os.environ.setdefault("MUSICVID_COMPILE_BACKEND", "eager")  # inductor on two cores: minutes a row
    known = [lever.name for lever in levers(on_gpu)]
    unknown = set(args.levers or ()) - set(known)
    if unknown:
        parser.error(f"unknown levers: {', '.join(sorted(unknown))}; known: {', '.join(known)}")
    out = args.out or HERE / "results" / f"speed-{'sdxl-' * args.sdxl}{'quick' if args.quick else 'gpu'}.json"
    out.parent.mkdir(parents=True, exist_ok=True)

    def write(results: dict) -> None:
        out.write_text(json.dumps(results, indent=2) + "\n")

    results = drawing_rows(args.sdxl, args.levers or known, args.quick, args.groups, write)
    if args.song:
        with tempfile.TemporaryDirectory(prefix="musicvid-speed-") as tmp:
            results["song"] = whole_song(args.song, on_gpu, Path(tmp))
        out.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
