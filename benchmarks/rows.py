"""The rows of benchmarks/speed.py and benchmarks/device.py's sd15 section, each a lever (benchmarks/levers.py)
drawn in its steady state (benchmarks/steady.py) by render's own code, on a copy of one pipeline of random weights:
its rate and spread, its warm-up, its own peak memory (benchmarks/peaks.py), its pictures against the row it is
like, and for some a profile of one more group (benchmarks/profile_split.py). The baseline is drawn first and
again last; the run is void where the two differ by more than 5%."""

from __future__ import annotations

import copy
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator

import torch
from PIL import Image

from benchmarks.budget import RowBudget
from benchmarks.levers import Lever, fast_pipeline
from benchmarks.peaks import SpanPeak, gpu_allocated
from benchmarks.profile_split import split
from benchmarks.steady import GROUPS, Clock, baselines, difference, full_groups, steady_rate
from benchmarks.what_ran import models_ran
from musicvid.core.workdir import Workdir
from musicvid.models.timing import Timings
from musicvid.pictures import switches
from musicvid.pictures.conditioning import SceneInputs
from musicvid.pictures.denoise import batch_inputs, decode, denoise, draw_group, padded_size
from musicvid.pictures.grouping import Picture, picture_groups
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.switches import compute_device, pipeline_for
from musicvid.settings.looks import FAST
from musicvid.settings.presets import ModelSet
from musicvid.settings.render import RenderSettings
from musicvid.storyboard.board import Storyboard


def in_between(board: Storyboard, settings: RenderSettings, pictures: int) -> list[Picture]:
    """The first `pictures` in-between frames, in the video's order, keyed as render keys them."""
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, settings.fps)
    groups = picture_groups(board, schedule, settings, {"diffusion": "benchmark"}, Workdir(Path("unused")))
    frames = sorted((p for group in groups for p in group if p.target is not None), key=lambda p: int(p.path.stem))
    if len(frames) < pictures:
        raise ValueError(f"the storyboard has fewer than {pictures} in-between frames")
    return frames[:pictures]


def plan_batch(models: ModelSet, settings: RenderSettings, device: torch.device) -> int:
    """The batch a render takes on this card without --batch-size, the card empty as a render finds it: the
    memory plan's (musicvid.memory.plan.batched_as_planned); off CUDA the default."""
    if device.type != "cuda":
        return settings.batch
    from musicvid.memory.plan import batched_as_planned, plan_memory
    from musicvid.models.precision import Precision

    total = torch.cuda.get_device_properties(device).total_memory / 1e9
    free = replace(settings, batch_size=None)
    plan = plan_memory(models, free, Precision.resolve("auto", device), total, "the card", transcribe=False)
    return batched_as_planned(free, plan).batch_size


@contextmanager
def compile_mode(mode: str | None) -> Iterator[None]:
    """--compile's torch.compile mode, for one row (musicvid.pictures.switches.COMPILE_MODE)."""
    kept, switches.COMPILE_MODE = switches.COMPILE_MODE, mode
    try:
        yield
    finally:
        switches.COMPILE_MODE = kept


def prepared(base_pipe, lever: Lever, settings: RenderSettings, batch: int, stack: ExitStack):
    """A copy of the pipeline set up as the row says, and the render's own pipeline over it, and its settings."""
    pipe = copy.deepcopy(base_pipe)
    if lever.fast:
        pipe = fast_pipeline(pipe)
    if lever.setup:
        lever.setup(pipe)
    given = {"batch_size": batch, **lever.settings, **({"fast": True, **FAST} if lever.fast else {})}
    if lever.reference:
        given["reference"] = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="musicvid-"))) / "look.png"
        Image.new("RGB", (320, 240), (200, 40, 90)).save(given["reference"])
    settings = replace(settings, **given)
    with compile_mode(lever.compile_mode):
        return pipe, pipeline_for(pipe, settings), settings


def measure(base_pipe, board: Storyboard, settings: RenderSettings, lever: Lever, batch: int, groups: int = GROUPS):
    """One row: `groups` full groups of `batch` timed after the lever's warm-up; its figures, and its pictures by
    key."""
    on_gpu = compute_device(base_pipe).type == "cuda"
    held = gpu_allocated()  # (the base pipeline, resident beside the row's own copy of it: in its peak)
    with ExitStack() as stack:
        pipe, own, settings = prepared(base_pipe, lever, settings, batch, stack)
        chunks = full_groups(
            in_between(board, settings, (lever.warm_up + groups) * batch), batch, lever.warm_up + groups
        )
        needed = sorted({s for group in chunks for p in group for s in (p.scene, p.target)})
        drawn, clock = {}, Clock(on_gpu)
        with SpanPeak() as peak, torch.inference_mode():
            inputs = SceneInputs(own, board, needed, settings)
            started = time.perf_counter()
            for number, group in enumerate(chunks):
                if number == lever.warm_up:
                    clock.mark()
                    warm = time.perf_counter() - started
                drawn.update(zip((p.path for p in group), draw_group(own, inputs, group, settings, Timings())))
                if number >= lever.warm_up:
                    clock.mark()
            row = {"what": lever.what, "fast": lever.fast, "batch_size": batch, **steady_rate(clock.seconds(), batch)}
            if settings.compile:  # the backend that compiled it: eager's compiles nothing (MUSICVID_COMPILE_BACKEND)
                row["compile_backend"] = switches.compile_backend()
            if lever.profiled:
                row["profile"] = profile_group(own, inputs, chunks[-1], settings, on_gpu)
        row |= {"warm_up_groups": lever.warm_up, "warm_up_seconds": round(warm, 2), "ran": models_ran(diffusion=pipe)}
        if on_gpu:
            row |= {
                "peak_gpu_gb": peak.gb,
                "held_before_gb": round(held / 2**30, 3),
                "raised_run_peak": peak.raised_run_peak,
            }
        del pipe, own
    if on_gpu:
        torch.cuda.empty_cache()
    return row, drawn


def profile_group(own, inputs: SceneInputs, group: list[Picture], settings: RenderSettings, on_gpu: bool) -> dict:
    """One more group, split by kind of work (benchmarks.profile_split), or the error that stopped it: the row's rate
    stands without its split (a baseline lost to its profile would void the run)."""
    try:
        size = padded_size(own, settings)
        return split(
            lambda: denoise(own, batch_inputs(own, inputs, group, size), settings),
            lambda latents: decode(own, latents),
            on_gpu,
        )
    except Exception as error:  # noqa: BLE001 - whatever the profiler or its trace raises
        return {"error": f"{type(error).__name__}: {error}"[:400]}


def beside_baseline(row: dict, baseline: dict | None) -> dict:
    """The row's rate as a ratio of the baseline's (the baseline itself, drawn first: 1); none where the baseline
    failed, and why."""
    if baseline is None:
        return {"ratio": 1.0}
    if "frames_per_second" not in baseline:
        return {"ratio": None, "ratio_missing": "the baseline failed: no rate to compare with"}
    return {"ratio": round(row["frames_per_second"] / baseline["frames_per_second"], 3)}


def run_rows(
    base_pipe,
    board: Storyboard,
    settings: RenderSettings,
    chosen: list[Lever],
    batch: int,
    groups: int = GROUPS,
    after_each: Callable[[dict], object] = lambda rows: None,
    budget: RowBudget | None = None,
) -> dict:
    """The rows, the baseline first and again last; each row beside the baseline, and its pictures beside the row
    it is like. A row that fails (a backend this GPU or torch lacks) is written with its error; one the `budget`
    has no time for is written as skipped, and the baseline is drawn again all the same."""
    rows: dict[str, dict] = {}
    kept: dict[str, dict] = {}  # the pictures of the rows others are like
    likes = {lever.like for lever in chosen}
    again = replace(chosen[0], name="baseline-again", what="the baseline, drawn again at the end", profiled=False)
    for lever in [*chosen, again]:
        started = time.perf_counter()
        skipped = None if budget is None or lever is again else budget.why_not(lever, batch, groups)
        if skipped:
            rows[lever.name] = {"what": lever.what, "fast": lever.fast, "skipped": skipped}
            after_each(rows)
            continue
        try:
            row, drawn = measure(base_pipe, board, settings, lever, lever.batch_size or batch, groups)
        except Exception as error:  # recorded, and the next row runs
            row = rows[lever.name] = {
                "what": lever.what,
                "fast": lever.fast,
                "error": f"{type(error).__name__}: {error}"[:400],
            }
        else:
            row |= beside_baseline(row, rows.get("baseline"))
            if lever.like in kept:
                row["difference"] = {"from": lever.like, **difference(drawn, kept[lever.like])}
                row["changes_pictures"] = lever.changes_pictures
            if lever.name in likes:
                kept[lever.name] = drawn
            rows[lever.name] = row
        seconds = time.perf_counter() - started
        if budget is not None:
            budget.took(lever, batch, groups, seconds, row)
        print(f"[{lever.name}: {seconds:.0f} s]", file=sys.stderr, flush=True)
        after_each(rows)
    if "error" not in rows["baseline"] and "error" not in rows["baseline-again"]:
        rows["baseline-again"]["baselines"] = baselines(rows["baseline"], rows["baseline-again"])
    return rows
