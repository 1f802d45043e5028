"""Frames per second of drawing on one GPU, lever by lever, against the render loop before them, in one run.

    python -m benchmarks.speed                    # on a GPU: SD 1.5's architecture, 512², 25 steps, float16
    python -m benchmarks.speed --song 180         # and then a 3-minute song end to end
    python -m benchmarks.speed --levers baseline fast-16   # some rows only
    python -m benchmarks.speed --sdxl --levers blocks-8 reference   # SDXL's architecture, 1024², 25 steps
    python -m benchmarks.speed --quick            # tiny models on the CPU: checks that the script still works
    python -m benchmarks.speed --flops            # TFLOP per picture of SD 1.5 and SDXL, counted on any machine

The weights are random (the cost does not depend on their values), built once from a fixed seed; each
lever draws with a copy of them. The baseline is the loop as it was before cross-scene groups: the
in-between frames grouped within their scene, 8 at a time, eager. Each lever is measured alone against
it, then the levers that paid (by 3 % or more) together ("kept"). A row gives the frames per second
after the first group, its ratio to the baseline, the delay before the first group's pictures
(compiling included), and the largest difference of its pictures from the baseline's, in 1/255 (the
goal: at most 2). --fast draws other pictures (4 steps of LCM, TAESD), so its rows have no difference,
and neither has "reference" (a reference picture's look through IP-Adapter): its ratio is the adapter's cost.

--song adds the whole pipeline on a song of that many seconds: Whisper large-v2's architecture aligning
the lyrics, ViPE-M's elaborating them and SD 1.5's drawing every frame, with each stage's share and the
time the GPU waited between them. Writes JSON (default benchmarks/results/speed-<device>.json) after
each row and prints markdown tables.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
import tempfile
import time
from contextlib import ExitStack, nullcontext
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from benchmarks.levers import Lever, combine, fast_pipeline, levers
from benchmarks.what_ran import machine, models_ran
from benchmarks.whole_song import song_markdown, whole_song
from musicvid.core.workdir import Workdir
from musicvid.models.timing import Timings
from musicvid.models.tiny import LOCAL_DIFFUSION, local_diffusion
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.denoise import Batch, batch_inputs, decode, denoise, draw_group, padded_size
from musicvid.pictures.grouping import picture_groups
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.switches import compute_device, pipeline_for
from musicvid.settings.looks import FAST
from musicvid.settings.presets import SD15_RANDOM, SDXL_RANDOM, TINY, TINY_XL
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


def morph_pictures(board: Storyboard, settings: RenderSettings, pictures: int) -> list[list]:
    """The first `pictures` in-between frames in render's own groups (blocks of frame numbers)."""
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, settings.fps)
    groups = [
        g
        for g in picture_groups(board, schedule, settings, {"diffusion": "benchmark"}, Workdir(Path("unused")))
        if g[0].target
    ]
    kept, count = [], 0
    for group in groups:
        kept.append(group[: pictures - count])
        count += len(kept[-1])
        if count == pictures:
            return kept
    raise ValueError(f"the storyboard has fewer than {pictures} in-between frames")


def within_scenes(groups: list[list], size: int) -> list[list]:
    """The same pictures grouped as before cross-scene groups: `size` at a time within each morph."""
    by_scene: dict[int, list] = {}
    for picture in (p for group in groups for p in group):
        by_scene.setdefault(picture.scene, []).append(picture)
    return [pictures[i : i + size] for pictures in by_scene.values() for i in range(0, len(pictures), size)]


def run_groups(pipe, board: Storyboard, groups: list[list], settings: RenderSettings, loop: str):
    """Draws the groups; yields (pictures, seconds since the start) after each group."""
    device = compute_device(pipe)
    on_gpu = device.type == "cuda"
    needed = sorted({s for g in groups for p in g for s in (p.scene, p.target)})
    inputs = SceneInputs(pipe, board, needed, settings)
    size = padded_size(pipe, settings)
    started = time.perf_counter()
    if loop == "draw":
        for group in groups:
            yield draw_group(pipe, inputs, group, settings, Timings()), time.perf_counter() - started
        return
    batches: list[Batch] = [batch_inputs(pipe, inputs, g, size, pin=on_gpu) for g in groups]
    if loop == "ahead" or not on_gpu:
        for group, batch in zip(groups, batches):
            pixels = decode(pipe, denoise(pipe, batch, settings))[: len(group)].cpu().numpy()
            yield pixels, time.perf_counter() - started
        return
    # overlap: group g's decode runs on a side stream while group g+1 is denoised on the main one
    side, pending = torch.cuda.Stream(), None
    for group, batch in [*zip(groups, batches), (None, None)]:
        latents = denoise(pipe, batch, settings) if group else None
        if pending:
            done, host = pending
            done.synchronize()
            yield host.numpy(), time.perf_counter() - started
        if group:
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                latents.record_stream(side)
                pixels = decode(pipe, latents)[: len(group)]
                host = torch.empty(pixels.shape, dtype=pixels.dtype, pin_memory=True)
                host.copy_(pixels, non_blocking=True)
                done = torch.cuda.Event()
                done.record(side)
            pending = (done, host)


def measure(base_pipe, board: Storyboard, settings: RenderSettings, lever: Lever, pictures: int) -> tuple[dict, list]:
    on_gpu = torch.cuda.is_available() and compute_device(base_pipe).type == "cuda"
    if on_gpu:
        torch.cuda.reset_peak_memory_stats()
    with ExitStack() as stack:  # (the reference picture's folder)
        pipe = copy.deepcopy(base_pipe)
        if lever.fast:
            pipe = fast_pipeline(pipe)
        if lever.setup:
            lever.setup(pipe)
        given = {"batch_size": lever.batch_size}
        if lever.reference:
            given["reference"] = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="musicvid-"))) / "look.png"
            Image.new("RGB", (320, 240), (200, 40, 90)).save(given["reference"])
        settings = replace(settings, **given, **({"fast": True, **FAST} if lever.fast else {}))
        groups = morph_pictures(board, settings, pictures)
        if lever.within_scenes:
            groups = within_scenes(groups, lever.batch_size)
        own = pipeline_for(pipe, settings)  # compiled, if at all, by the lever itself
        attention = nullcontext()
        if lever.attention:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            attention = sdpa_kernel([getattr(SDPBackend, lever.attention)])
        drawn, times = [], []
        with torch.inference_mode(), attention:
            for pixels, seconds in run_groups(own, board, groups, settings, lever.loop):
                drawn.append(pixels)
                times.append(seconds)
        # the rate after the first group, which pays for compiling and warming up (all of it if one group)
        first, since = (len(groups[0]), times[0]) if len(times) > 1 else (0, 0.0)
        row = {
            "what": lever.what,
            "batch_size": lever.batch_size,
            "groups": len(groups),
            "pictures": pictures,
            "first_group_seconds": round(times[0], 3),
            "frames_per_second": round((pictures - first) / (times[-1] - since), 3),
            "ran": models_ran(diffusion=pipe),
        }
        if on_gpu:  # less the base pipeline this one is a copy of: what one render's drawing holds
            held = sum(
                p.numel() * p.element_size()
                for m in base_pipe.components.values()
                if isinstance(m, torch.nn.Module)
                for p in m.parameters()
            )
            row["peak_gpu_gb"] = round((torch.cuda.max_memory_allocated() - held) / 2**30, 2)
        del pipe, own
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return row, list(np.concatenate(drawn))


def flops_per_picture(name: str, size: int) -> dict:
    """TFLOP of one picture of the architecture `name` at size² (25 guided steps, the VAE's decode), counted
    by torch on the meta device: no weights, no drawing, so it runs anywhere in seconds. An estimate of
    cost, to compare architectures by; the frames per second are what the rows measure."""
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
    return {part: float(f"{flops / 1e12:.4g}") for part, flops in tflop.items()}


def markdown(results: dict) -> str:
    out = [f"### Drawing, {results['settings']} on {results['machine']['device']}"]
    out.append("| lever | frames/s | × baseline | first group (s) | max diff (/255) | what |")
    out.append("| --- | ---: | ---: | ---: | ---: | --- |")
    for name, row in results["levers"].items():
        if "error" in row:
            out.append(f"| {name} | – | – | – | – | {row['what']}: {row['error']} |")
            continue
        diff = row.get("max_difference")
        out.append(
            f"| {name} | {row['frames_per_second']} | {row.get('ratio', '')} | {row['first_group_seconds']} | "
            f"{'' if diff is None else diff} | {row['what']} |"
        )
    if "song" in results:
        out += song_markdown(results["song"])
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny models, a few pictures: checks the script")
    parser.add_argument("--levers", nargs="+", help="only these rows (baseline is always measured)")
    parser.add_argument("--pictures", type=int, help="in-between frames per row (default 96 on a GPU)")
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
    on_gpu = torch.cuda.is_available()
    device = torch.device("cuda" if on_gpu else "cpu")
    if args.quick or not on_gpu:
        name, settings = TINY_XL if args.sdxl else TINY, RenderSettings(size=(64, 64), steps=4)
        pictures = args.pictures or 12
    elif args.sdxl:
        name, settings = SDXL_RANDOM, RenderSettings(size=(1024, 1024), steps=25, guidance=5.0)
        pictures = args.pictures or 32
    else:
        name, settings = SD15_RANDOM, RenderSettings(size=(512, 512), steps=25, guidance=7.5)
        pictures = args.pictures or 96
    catalogue = {lever.name: lever for lever in levers(on_gpu)}
    chosen = ["baseline", *(args.levers or [n for n in catalogue if on_gpu or not n.startswith("compile")])]
    chosen = list(dict.fromkeys(chosen))
    unknown = set(chosen) - set(catalogue) - {"kept", "fast-kept"}
    if unknown:
        parser.error(f"unknown levers: {', '.join(sorted(unknown))}; known: {', '.join(catalogue)}, kept, fast-kept")
    if not args.levers:
        chosen += ["kept", "fast-kept"]
    dtype = torch.float16 if on_gpu else torch.float32
    base = local_diffusion(name).to(dtype=dtype).to(device)
    base.set_progress_bar_config(disable=True)
    board = storyboard(pictures + 40)
    results: dict = {
        "machine": machine(device),
        "settings": f"{name}, {settings.width}x{settings.height}, {settings.steps} steps, guidance "
        f"{settings.guidance}, {str(dtype).removeprefix('torch.')}",
        "levers": {},
    }
    out = args.out or HERE / "results" / f"speed-{'sdxl-' * args.sdxl}{'quick' if args.quick else device.type}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    reference, baseline = None, None
    for lever_name in chosen:
        if lever_name in ("kept", "fast-kept"):
            lever = combine(results["levers"], catalogue, fast=lever_name == "fast-kept")
        else:
            lever = catalogue[lever_name]
        started = time.perf_counter()
        try:
            row, drawn = measure(base, board, settings, lever, pictures)
        except Exception as error:  # a backend this GPU or torch lacks: say so and go on
            results["levers"][lever_name] = {"what": lever.what, "error": f"{type(error).__name__}: {error}"[:300]}
        else:
            if lever_name == "baseline":
                reference, baseline = drawn, row["frames_per_second"]
            elif not (lever.fast or lever.reference):
                row["max_difference"] = int(max(np.abs(a.astype(int) - b).max() for a, b in zip(drawn, reference)))
            row["ratio"] = round(row["frames_per_second"] / baseline, 3)
            results["levers"][lever_name] = row
        print(f"[{lever_name}: {time.perf_counter() - started:.0f} s]", file=sys.stderr, flush=True)
        out.write_text(json.dumps(results, indent=2) + "\n")  # after each row: a cut-off run keeps its rows
    if args.song:
        with tempfile.TemporaryDirectory(prefix="musicvid-speed-") as tmp:
            results["song"] = whole_song(args.song, on_gpu and not args.quick, Path(tmp))
        out.write_text(json.dumps(results, indent=2) + "\n")
    print(markdown(results))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
