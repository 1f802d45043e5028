"""The report of a render, timings.json: where the time went, what was made, and what ran where — the
device, and each model role's name, dtype and device as its stage left it (read back from its weights,
musicvid.models.readback) — with the one line the command line ends on."""

from __future__ import annotations

import time

import torch

from musicvid.core.progress import seconds_text
from musicvid.core.workdir import Workdir
from musicvid.delivery.upscale import Upscaler
from musicvid.pictures.draw import Pictures
from musicvid.pictures.schedule import to_frame
from musicvid.pictures.transitions import transitions_report
from musicvid.review.checks import morph_key, morph_paths, prompt_key
from musicvid.run import Run


def device_text(device: torch.device) -> str:
    """The device by its kind and, for a GPU, its name."""
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return device.type


def run_summary(
    run: Run, pictures: Pictures, drawn: int, keyframe_candidates: int, upscale: Upscaler | None, started: float
) -> dict:
    """What timings.json keeps of a render of `pictures`: seconds per stage with their peak memory, the models as
    they ran, the rate and frames drawn and those in the video, the pictures drawn anew (and the keyframe candidates
    drawn to pick from), with --transitions video which morphs the video model drew, the upscaler's cost, the wall
    time since `started`, each morph's pictures' keys hashed (morph_keys) and each keyframe's key and prompt
    (keyframes_drawn)."""
    settings, schedule, family = run.settings, pictures.schedule, pictures.family
    return {
        "device": device_text(run.registry.device),
        **run.timings.summary(),
        "fps": settings.fps,
        "batch_size": settings.batch,  # the pictures drawn at once, after the memory plan
        "frames": schedule.frame_count,
        "video_frames": to_frame(pictures.storyboard.duration, settings.video_fps),
        "pictures_drawn": drawn,
        "keyframe_candidates_drawn": keyframe_candidates,
        "morph_keys": morph_keys(run.workdir, pictures),
        "keyframes": keyframes_drawn(pictures),
        **({"transitions": transitions_report(schedule, run.registry.models.video, family)} if family else {}),
        **({"upscale": upscale.cost()} if upscale else {}),
        "wall_seconds": round(time.perf_counter() - started, 4),
    }


def keyframes_drawn(pictures: Pictures) -> dict[str, list[str]]:
    """Each shown scene's keyframe by its scene: its key, and its prompt hashed (prompt_key), so that `musicvid score`
    scores it only against the prompt it was drawn for (a storyboard made again since leaves the old pictures)."""
    scenes = pictures.storyboard.scenes
    keyframes = (p for group in pictures.groups for p in group if p.target is None)
    return {str(p.scene): [p.key, prompt_key(scenes[p.scene].prompt)] for p in keyframes}


def morph_keys(workdir: Workdir, pictures: Pictures) -> dict[str, str]:
    """Each morph the render drew (none in a preview), by its scene: its pictures' keys hashed (morph_key), so that
    `musicvid score` measures only its frames, not those an earlier render left or drew towards other keyframes."""
    keys = {p.path: p.key for group in pictures.groups for p in group}
    keys |= {p.path: p.key for transition in pictures.transitions for p in transition.pictures}
    morphs = [s for s in pictures.schedule.segments if s.target is not None]
    paths = {str(s.scene): morph_paths(workdir, s) for s in morphs}
    return {scene: morph_key(keys[p] for p in drawn) for scene, drawn in paths.items() if all(p in keys for p in drawn)}


def report_line(summary: dict) -> str:
    """One line of a run's report: 'video_frames frames (N pictures drawn) in S s on DEVICE; diffusion
    float16, ...; peak G GB'."""
    dtypes = ", ".join(f"{role} {model['dtype']}" for role, model in summary["models"].items() if model["dtype"])
    peak = max(summary["peak_memory_gb"].values(), default=None)
    drawn = summary["pictures_drawn"]
    parts = [
        f"{summary['video_frames']} frames ({drawn} picture{'' if drawn == 1 else 's'} drawn) in "
        f"{seconds_text(summary['wall_seconds'])} on {summary['device']}",
        dtypes,
        f"peak {peak:.1f} GB" if peak is not None else "",
    ]
    return "; ".join(part for part in parts if part)
