"""`musicvid plan SONG [options] [--gpu-memory GB] [--json]`: the memory plan of a render (musicvid.memory.plan),
printed before any work. It checks what a render checks before its work (musicvid.prepare.check_before_work: the
options against the models, the inputs, the work directory; nothing is written), measures the song's length as a
render does, by decoding its sound once (a header's length may be a bit rate's estimate, a cut-off file's the
whole file's, a video's its pictures'), checks the files against it as the render does (its lyrics' lines, its
storyboard's length: musicvid.batch.lengths.length_checks), counts the models from their published architectures
(nothing is loaded or downloaded), and plans for --gpu-memory, else for the memory free on this machine's CUDA
device, else for a card of DEFAULT_GPU_GB. What a render refuses, or a render that cannot fit, is refused in one sentence (exit 2), as
the render itself would refuse it."""

from __future__ import annotations

import json

import torch

from musicvid.batch.lengths import length_checks
from musicvid.core.audio import SAMPLE_RATE, song_samples
from musicvid.core.errors import UserError
from musicvid.memory.plan import plan_memory, stages_before_pictures
from musicvid.models.choose import models_of
from musicvid.models.loading import resolve_device
from musicvid.models.precision import Precision
from musicvid.models.readback import GB
from musicvid.pictures.schedule import check_one_frame, to_frame
from musicvid.prepare import check_before_work, timed_alone
from musicvid.settings.model_choice import DEFAULT_GPU_GB, ModelChoice, check_device_here
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest


def song_seconds(request: SongRequest, fps: float) -> float:
    """The length of the song's sound as the render measures it, refused as a render refuses it (too long, cut off,
    no audio stream, under a frame at `fps`)."""
    seconds = song_samples(request.song, request.max_seconds)[0].size / SAMPLE_RATE
    check_one_frame(seconds, fps)
    return seconds


def check_device(gpu_memory: float | None, device: str) -> None:
    """Refuse a --device that plans no GPU memory (a render on the CPU or MPS follows no plan: it would describe a
    render that does not happen), and one this machine has not, as a render does, unless --gpu-memory plans for
    another machine."""
    if device in ("cpu", "mps"):
        raise UserError(
            f"--device {device}: a render there follows no memory plan (only CUDA's is planned): leave --device out, "
            "or give cuda"
        )
    if gpu_memory is not None:
        return
    try:
        check_device_here(device)
    except UserError as error:
        raise UserError(f"{error}; --gpu-memory GB plans for another machine") from None


def budget_of(gpu_memory: float | None, device: str) -> tuple[float, str]:
    """The budget (GB) and, in words, where it comes from (a device named: one this machine has, check_device)."""
    if gpu_memory is not None:  # (checked on the command line: musicvid.settings.model_choice.check_gpu_memory)
        return gpu_memory, "--gpu-memory"
    on = resolve_device(device)
    if on.type == "cuda":
        return torch.cuda.mem_get_info(on)[0] / GB, f"free on {torch.cuda.get_device_name(on)}"
    return DEFAULT_GPU_GB, f"no CUDA device here: a {DEFAULT_GPU_GB:g} GB card; --gpu-memory GB plans for another"


def run(
    request: SongRequest,
    settings: RenderSettings,
    choice: ModelChoice,
    reference_only: tuple[str, ...],
    gpu_memory: float | None,
    as_json: bool,
):
    check_device(gpu_memory, choice.device)  # (first, as a render's registry_of)
    models = models_of(choice)
    # a render's checks before its work, in its sentences; no video is named, so nothing is made or written
    checked = check_before_work(
        request, models, settings, output=None, video=False, reference_only=reference_only, draws=False
    )
    seconds = song_seconds(request, settings.fps)
    for check, _ in length_checks(request, settings, checked):  # (as a render refuses them, once the song is decoded)
        check(seconds)
    budget, where = budget_of(gpu_memory, choice.device)
    # planned for a GPU: the precision --precision means on CUDA
    precision = Precision.resolve(choice.precision, torch.device("cuda"))
    timed = timed_alone(checked.lyrics, models)
    stages = stages_before_pictures(request, timed, checked.storyboard is not None and checked.storyboard.unwritten)
    plan = plan_memory(
        models, settings, precision, budget, where, **stages, scored=checked.scored, references=checked.references
    )
    frames = to_frame(seconds, settings.fps)
    if as_json:
        song = {"song": str(request.song), "seconds": round(seconds, 3), "frames": frames}
        print(json.dumps({**song, **plan.as_dict()}, indent=2, allow_nan=False))  # strict JSON: every number finite
    else:
        print(f"{request.song}: {seconds:.1f} s, {drawn_frames(frames, seconds, settings)}; the render's GPU memory")
        print(plan.table())
    return 0


def drawn_frames(frames: int, seconds: float, settings: RenderSettings) -> str:
    """The frames the render draws at --fps (a preview: its keyframes alone), and the video's at --output-fps."""
    said = f"{frames} frames at {settings.fps:g} fps" + (
        " (a preview draws its keyframes alone)" if settings.preview else ""
    )
    if settings.output_fps is None:
        return said
    return f"{said}, {to_frame(seconds, settings.output_fps)} in the video at {settings.output_fps:g} fps"
