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
import platform
import shutil
import sys
import tempfile
import time
from contextlib import ExitStack, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from PIL import Image

from musicvid.models.loading import ModelRegistry, load_reference_adapter
from musicvid.models.presets import PRESETS, SD15_RANDOM, SDXL_RANDOM, TINY, TINY_XL
from musicvid.models.tiny import LOCAL_DIFFUSION, local_diffusion
from musicvid.pictures.render import (
    Batch,
    SceneInputs,
    batch_inputs,
    compute_device,
    decode,
    denoise,
    draw,
    job_pipeline,
    plan_pictures,
)
from musicvid.pictures.schedule import frame_schedule
from musicvid.settings import FAST, RenderSettings, resolve_render_settings
from musicvid.storyboard import Scene, Storyboard
from musicvid.timing import MODEL_STAGES, Timings
from musicvid.workdir import Workdir

HERE = Path(__file__).parent
# Lines of 2.3 to 4.1 s, as a song's are: the morphs are 23 to 41 frames at 10 fps
LINE_SECONDS = (2.3, 3.1, 4.1, 2.7, 3.6)
FLOP_COUNTS = ((SD15_RANDOM, 512), (SDXL_RANDOM, 1024))
PAYS = 1.03  # a lever is kept if it makes drawing at least 3 % faster


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
    return Storyboard({"duration": starts[-1]}, "Benchmark", "Random Weights", "en", {}, scenes)


def morph_pictures(board: Storyboard, settings: RenderSettings, pictures: int) -> list[list]:
    """The first `pictures` in-between frames in render's own groups (blocks of frame numbers)."""
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, settings.fps)
    groups = [
        g
        for g in plan_pictures(board, schedule, settings, {"diffusion": "benchmark"}, Workdir(Path("unused")))
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


@dataclass(frozen=True)
class Lever:
    name: str
    what: str
    batch_size: int = 8
    within_scenes: bool = False  # the baseline's groups
    setup: Callable | None = None  # changes a copy of the pipeline
    loop: str = "draw"  # draw (render's own), ahead (every group's inputs first) or overlap (decode beside denoise)
    attention: str | None = None  # an SDPA backend to insist on
    fast: bool = False
    compile: bool = False  # pad groups to the batch size (one shape for a compiled UNet)
    reference: bool = False  # every scene drawn after a reference picture (IP-Adapter)


def channels_last(pipe):
    pipe.unet.to(memory_format=torch.channels_last)
    pipe.vae.to(memory_format=torch.channels_last)


def fused_qkv(pipe):
    from diffusers import AutoencoderKL

    # diffusers: one matrix product for query, key and value (TAESD, --fast's VAE, has no attention)
    pipe.fuse_qkv_projections(vae=isinstance(pipe.vae, AutoencoderKL))


def compiled(mode: str | None):
    def setup(pipe):
        pipe.unet = torch.compile(pipe.unet, mode=mode, fullgraph=True)
        pipe.vae.decoder = torch.compile(pipe.vae.decoder, mode=mode)

    return setup


def levers(on_gpu: bool) -> list[Lever]:
    rows = [
        Lever("baseline", "groups within each scene, batch 8, eager (the loop before)", within_scenes=True),
        Lever("blocks-8", "groups across scenes by frame number, batch 8"),
        Lever("blocks-16", "groups across scenes, batch 16", batch_size=16),
        Lever("blocks-32", "groups across scenes, batch 32", batch_size=32),
        Lever("channels-last", "UNet and VAE in channels-last memory", setup=channels_last),
        Lever("fused-qkv", "fused query/key/value projections", setup=fused_qkv),
        Lever("inputs-ahead", "every group's inputs prepared first, copied from pinned memory", loop="ahead"),
        Lever("overlap-decode", "VAE decode on a second stream beside the next group's denoise", loop="overlap"),
    ]
    backends = ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH") if on_gpu else ("MATH",)
    rows += [Lever(f"sdpa-{b.lower()}", f"attention by {b} only", attention=b) for b in backends]
    rows += [
        Lever("compile", "torch.compile, default mode (today's --compile)", setup=compiled(None), compile=True),
        Lever(
            "compile-autotune",
            "torch.compile max-autotune-no-cudagraphs",
            setup=compiled("max-autotune-no-cudagraphs"),
            compile=True,
        ),
        Lever(
            "compile-cudagraphs",
            "torch.compile reduce-overhead (CUDA graphs)",
            setup=compiled("reduce-overhead"),
            compile=True,
        ),
    ]
    rows += [
        Lever(f"fast-{b}", f"--fast: LCM-LoRA 4 steps, no guidance, TAESD; batch {b}", batch_size=b, fast=True)
        for b in (8, 16, 32)
    ]
    # the adapter's cost is its extra keys and values in every cross-attention (its image encoder runs once
    # a scene, so a random tiny one stands in for it)
    rows.append(
        Lever(
            "reference",
            "a reference picture through IP-Adapter",
            setup=lambda pipe: load_reference_adapter(pipe, TINY),
            reference=True,
        )
    )
    return rows


def combine(rows: dict[str, dict], catalogue: dict[str, Lever], fast: bool) -> Lever:
    """The levers that paid, together: the best batch, the best of each kind, and every other that paid."""
    base = rows["baseline"]["frames_per_second"]
    paid = {n: r for n, r in rows.items() if n in catalogue and r.get("frames_per_second", 0) >= PAYS * base}

    def best(prefix: str) -> Lever | None:
        named = [n for n in paid if n.startswith(prefix)]
        return catalogue[max(named, key=lambda n: paid[n]["frames_per_second"])] if named else None

    batch = best("fast-" if fast else "blocks-") or catalogue["fast-8" if fast else "blocks-8"]
    # the models' own changes first, compiling last, so that it traces the changed models
    chosen = [catalogue[n] for n in ("channels-last", "fused-qkv") if n in paid]
    chosen += [lever for lever in (best("sdpa-"), best("compile")) if lever]
    loop = next((n for n in ("inputs-ahead", "overlap-decode") if n in paid), None)
    setups = [lever.setup for lever in chosen if lever.setup]

    def setup(pipe):
        for step in setups:
            step(pipe)

    return Lever(
        "fast-kept" if fast else "kept",
        " + ".join([batch.name] + [lever.name for lever in chosen] + ([loop] if loop else [])),
        batch_size=batch.batch_size,
        setup=setup,
        loop=catalogue[loop].loop if loop else "draw",
        attention=next((lever.attention for lever in chosen if lever.attention), None),
        fast=fast,
        compile=any(lever.compile for lever in chosen),
    )


def fast_pipeline(pipe):
    """--fast's pipeline at full size: the LoRA fused into the UNet costs nothing once fused (its weights
    are the UNet's), so only the decoder changes: TAESD at its published size."""
    from diffusers import AutoencoderTiny

    torch.manual_seed(0)
    pipe.vae = AutoencoderTiny().to(pipe.device, pipe.unet.dtype)
    return pipe


def run_groups(pipe, board: Storyboard, groups: list[list], settings: RenderSettings, loop: str):
    """Draws the groups; yields (pictures, seconds since the start) after each group."""
    device = compute_device(pipe)
    on_gpu = device.type == "cuda"
    needed = sorted({s for g in groups for p in g for s in (p.scene, p.target)})
    inputs = SceneInputs(pipe, board, needed, settings)
    size = settings.batch_size if settings.compile else None
    started = time.perf_counter()
    if loop == "draw":
        for group in groups:
            yield draw(pipe, inputs, group, settings, Timings()), time.perf_counter() - started
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
    with ExitStack() as stack:  # (the reference picture's folder)
        pipe = copy.deepcopy(base_pipe)
        if lever.fast:
            pipe = fast_pipeline(pipe)
        if lever.setup:
            lever.setup(pipe)
        given = {"batch_size": lever.batch_size, "compile": lever.compile}
        if lever.reference:
            given["reference"] = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="musicvid-"))) / "look.png"
            Image.new("RGB", (320, 240), (200, 40, 90)).save(given["reference"])
        settings = replace(settings, **given, **({"fast": True, **FAST} if lever.fast else {}))
        groups = morph_pictures(board, settings, pictures)
        if lever.within_scenes:
            groups = within_scenes(groups, lever.batch_size)
        job = job_pipeline(pipe, replace(settings, compile=False))  # compiled, if at all, by the lever itself
        attention = nullcontext()
        if lever.attention:
            from torch.nn.attention import SDPBackend, sdpa_kernel

            attention = sdpa_kernel([getattr(SDPBackend, lever.attention)])
        drawn, times = [], []
        with torch.inference_mode(), attention:
            for pixels, seconds in run_groups(job, board, groups, settings, lever.loop):
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
        }
        del pipe, job
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        return row, list(np.concatenate(drawn))


def whole_song(seconds: float, on_gpu: bool, folder: Path) -> dict:
    """The pipeline on a song end to end at full size, stage by stage, and where the GPU waited."""
    from benchmarks.elaborate import MEDIUM
    from benchmarks.elaborate import load as vipe_of_size
    from benchmarks.render import synthesize_song
    from musicvid.audio import load_audio
    from musicvid.lyrics.align import align_lyrics
    from musicvid.models.loading import ASRModel
    from musicvid.models.tiny import random_whisper
    from musicvid.pipeline import make_video
    from musicvid.settings import SongRequest

    class FullSize(ModelRegistry):
        """The default models' architectures with random weights (the cost does not depend on their values)."""

        def _load(self, role: str):
            if role == "asr" and on_gpu:
                model = random_whisper(**WHISPER_LARGE_V2).to(self.device).half()
                return ASRModel("openai-whisper", "large-v2 (random)", model)
            if role == "vipe" and on_gpu:
                return vipe_of_size(MEDIUM, self.device)
            return super()._load(role)

    models = replace(PRESETS["tiny"], diffusion=SD15_RANDOM, size=(512, 512), steps=25) if on_gpu else PRESETS["tiny"]
    registry = FullSize(models, keep_loaded=False)
    song = synthesize_song(folder, seconds)
    timed = [line.removeprefix("[").split("]", 1) for line in song.with_suffix(".lrc").read_text().splitlines()]
    lines = [text for _, text in timed]
    # Whisper runs only where its voice detector hears a voice: sing the lines where espeak-ng can
    voiced = shutil.which("espeak-ng") is not None
    if voiced:
        from benchmarks.songs import make_song

        sung = [(int(t[:2]) * 60 + float(t[3:]), text) for t, text in timed]
        make_song(song, seconds, sung)
    timings = Timings()
    # Whisper aligning the known lines: its cost over the whole song, whatever random weights make of it
    audio = load_audio(song)
    with registry.use("asr", timings) as asr, timings.measure("align", registry.device):
        align_lyrics(asr, audio.samples, lines, audio.info.sha256, quiet=True)
    # then the rest from the timed lyrics, so that the scenes fall every 3 s as sung
    settings = resolve_render_settings(models, {"batch_size": 8})
    request = SongRequest(song=song, lyrics_file=song.with_suffix(".lrc"), workdir=folder / "song", quiet=True)
    started = time.perf_counter()
    made = make_video(request, settings, registry, output=folder / "song.mp4", timings=timings)
    wall = time.perf_counter() - started + timings.seconds["align"] + timings.seconds.get("load asr", 0.0)
    busy = sum(end - start for stage, start, end in timings.intervals if stage in MODEL_STAGES or stage == "align")
    gaps = sorted(
        (
            (round(later[1] - earlier[2], 2), f"{earlier[0]} → {later[0]}")
            for earlier, later in zip(timings.intervals, timings.intervals[1:])
            if later[1] - earlier[2] > 0.05
        ),
        reverse=True,
    )
    return {
        "song_seconds": seconds,
        "models": "Whisper large-v2, ViPE-M, SD 1.5 architectures" if on_gpu else "tiny",
        "sung": voiced,  # without a voice Whisper's stage is its voice detector alone
        "frames": made.frames,
        "pictures_drawn": made.pictures_drawn,
        "wall_seconds": round(wall, 1),
        "stages": {k: round(v, 2) for k, v in timings.seconds.items()},
        "share": {k: round(v / wall, 4) for k, v in timings.seconds.items()},
        "gpu_busy_share": round(busy / wall, 4),
        "gpu_idle_seconds": round(wall - busy, 1),
        "largest_gaps_seconds": gaps[:5],
    }


# Whisper large-v2's dimensions (its checkpoint's "dims")
WHISPER_LARGE_V2 = dict(
    n_mels=80,
    n_audio_ctx=1500,
    n_audio_state=1280,
    n_audio_head=20,
    n_audio_layer=32,
    n_vocab=51865,
    n_text_ctx=448,
    n_text_state=1280,
    n_text_head=20,
    n_text_layer=32,
)


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
        song = results["song"]
        out.append(f"\n### A {song['song_seconds']:g} s song end to end ({song['models']})")
        out.append("| stage | seconds | share |\n| --- | ---: | ---: |")
        out += [f"| {k} | {v} | {song['share'][k]:.1%} |" for k, v in song["stages"].items()]
        out.append(
            f"\nwall {song['wall_seconds']} s for {song['frames']} frames; GPU busy {song['gpu_busy_share']:.1%}, "
            f"idle {song['gpu_idle_seconds']} s; largest gaps: {song['largest_gaps_seconds']}"
        )
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
        "machine": {
            "host": platform.node(),
            "device": torch.cuda.get_device_name() if on_gpu else f"CPU ({os.cpu_count()} cores)",
            "torch": torch.__version__,
        },
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
