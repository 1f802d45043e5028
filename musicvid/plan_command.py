"""`musicvid plan SONG [options] [--gpu-memory GB] [--json]`: the memory plan of a render (musicvid.memory.plan),
printed before any work. It reads the song's length from its header alone (nothing is decoded), counts the
models from their published architectures (nothing is loaded or downloaded), and plans for --gpu-memory, else
for the memory free on this machine's CUDA device, else for a card of DEFAULT_GPU_GB. A render that cannot fit
is refused in one sentence (exit 2), as the render itself would refuse it."""

from __future__ import annotations

import json

import torch

from musicvid.core import ffmpeg
from musicvid.core.audio import too_long
from musicvid.core.errors import UserError
from musicvid.core.files import check_file
from musicvid.lyrics.known import check_lyrics_file
from musicvid.memory.plan import plan_memory, stages_before_pictures
from musicvid.models.choose import models_of
from musicvid.models.drawing import check_drawing_options
from musicvid.models.loading import resolve_device
from musicvid.models.precision import Precision
from musicvid.models.readback import GB
from musicvid.models.scorer import check_scorer
from musicvid.pictures.schedule import to_frame
from musicvid.settings.model_choice import DEFAULT_GPU_GB, ModelChoice
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest


def song_seconds(request: SongRequest) -> float:
    """The song's length as its header declares it, refused where it declares none or too much."""
    check_file(request.song, "audio file")
    seconds = ffmpeg.declared_duration(request.song)
    if seconds is None:
        raise UserError(f"{request.song} declares no length that ffmpeg can read: is it audio?")
    if seconds > request.max_seconds:
        raise UserError(too_long(request.song, seconds, request.max_seconds))
    return seconds


def budget_of(gpu_memory: float | None, device: str) -> tuple[float, str]:
    """The budget (GB) and, in words, where it comes from."""
    if gpu_memory is not None:  # (checked on the command line: musicvid.settings.model_choice.check_gpu_memory)
        return gpu_memory, "--gpu-memory"
    on = resolve_device(device)
    if on.type == "cuda":
        return torch.cuda.mem_get_info(on)[0] / GB, f"free on {torch.cuda.get_device_name(on)}"
    return DEFAULT_GPU_GB, f"no CUDA device here: a {DEFAULT_GPU_GB:g} GB card; --gpu-memory GB plans for another"


def run(request: SongRequest, settings: RenderSettings, choice: ModelChoice, gpu_memory: float | None, as_json: bool):
    seconds = song_seconds(request)
    budget, where = budget_of(gpu_memory, choice.device)
    # planned for a GPU: the precision --precision means on CUDA
    precision = Precision.resolve(choice.precision, torch.device("cuda"))
    models = models_of(choice)
    scored = check_scorer(models, settings)  # counted where it loads; refused where picks need it and it cannot
    check_drawing_options(models, settings)
    timed = request.lyrics_file is not None and check_lyrics_file(request.lyrics_file).timed
    stages = stages_before_pictures(request, timed)
    plan = plan_memory(models, settings, precision, budget, where, **stages, scored=scored)
    frames = to_frame(seconds, settings.fps)
    if as_json:
        song = {"song": str(request.song), "seconds": round(seconds, 3), "frames": frames}
        print(json.dumps({**song, **plan.as_dict()}, indent=2, allow_nan=False))  # strict JSON: every number finite
    else:
        print(f"{request.song}: {seconds:.1f} s, {frames} frames at {settings.fps:g} fps; the render's GPU memory")
        print(plan.table())
    return 0
