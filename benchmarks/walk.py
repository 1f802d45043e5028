"""One timed prompt-to-prompt walk, drawn by musicvid's renderer or by stable-diffusion-videos.

Run as a script by benchmarks.side_by_side, once per tool, each in its own Python environment
(stable-diffusion-videos needs transformers 4), on the same saved weights with the same scheduler,
steps, size, guidance, batch size and frame count. Prints one JSON line: seconds from loaded
pipeline to finished video, frames in the video, pictures denoised.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch


def musicvid_walk(args, device: torch.device) -> dict:
    from musicvid.core.workdir import Workdir
    from musicvid.delivery.mux import encode_video
    from musicvid.models.loading import load_diffusion
    from musicvid.models.timing import Timings
    from musicvid.pictures.denoise import draw_groups
    from musicvid.pictures.frames import video_frames
    from musicvid.pictures.grouping import picture_groups
    from musicvid.pictures.schedule import frame_schedule
    from musicvid.pictures.switches import pipeline_for
    from musicvid.settings.render import RenderSettings
    from musicvid.storyboard.board import Scene, SongAudio, Storyboard

    started = time.perf_counter()
    pipe = load_diffusion(str(args.weights), device)
    loaded = time.perf_counter()
    settings = RenderSettings(
        fps=args.fps,
        size=(args.width, args.height),
        steps=args.steps,
        guidance=args.guidance,
        scheduler="dpm++",
        batch_size=args.batch_size,
    )
    pipe = pipeline_for(pipe, settings)
    # Scene i starts at frame i·N; the last scene lasts one frame: (K−1)·N + 1 frames, every transition
    # N frames from keyframe to keyframe like stable-diffusion-videos' clips.
    step = args.frames_per_prompt / args.fps
    starts = [i * step for i in range(len(args.prompts))]
    duration = starts[-1] + 1 / args.fps
    scenes = [
        Scene(index=i, kind="lyric", start=start, end=(starts + [duration])[i + 1], prompt=prompt, seed=seed)
        for i, (start, prompt, seed) in enumerate(zip(starts, args.prompts, args.seeds))
    ]
    storyboard = Storyboard(audio=SongAudio(duration), scenes=scenes)
    schedule = frame_schedule(starts, duration, args.fps)
    groups = picture_groups(storyboard, schedule, settings, {"diffusion": "benchmark"}, Workdir(args.out))
    timings = Timings()
    every = {p.path for group in groups for p in group}  # a fresh folder: every picture is to draw
    drawn = draw_groups(pipe, storyboard, groups, every, settings, timings, quiet=True)
    video_started = time.perf_counter()
    encode_video(
        video_frames(storyboard, schedule, Workdir(args.out), settings),
        width=args.width,
        height=args.height,
        fps=args.fps,
        audio=None,
        output=args.out / "walk.mp4",
    )
    finished = time.perf_counter()
    return {
        "load_seconds": loaded - started,
        "seconds": finished - loaded,
        "video_frames": schedule.frame_count,
        "pictures": drawn,
        "stages": {**timings.summary()["seconds"], "video": finished - video_started},
    }


def sdv_walk(args, device: torch.device) -> dict:
    from diffusers import DPMSolverMultistepScheduler
    from stable_diffusion_videos import StableDiffusionWalkPipeline

    dtype = torch.float16 if device.type == "cuda" else torch.float32
    started = time.perf_counter()
    pipe = StableDiffusionWalkPipeline.from_pretrained(
        str(args.weights), torch_dtype=dtype, safety_checker=None, feature_extractor=None, requires_safety_checker=False
    ).to(device)
    pipe.scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config, algorithm_type="dpmsolver++")
    pipe.set_progress_bar_config(disable=True)
    loaded = time.perf_counter()
    video = pipe.walk(
        prompts=args.prompts,
        seeds=args.seeds,
        num_interpolation_steps=args.frames_per_prompt,
        output_dir=str(args.out),
        name="walk",
        fps=args.fps,
        num_inference_steps=args.steps,
        guidance_scale=args.guidance,
        height=args.height,
        width=args.width,
        batch_size=args.batch_size,
    )
    frames = len(list(args.out.glob("walk/walk_*/*.png")))
    return {
        "load_seconds": loaded - started,
        "seconds": time.perf_counter() - loaded,
        "video_frames": frames,
        "pictures": frames,
        "video": str(video),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", choices=("musicvid", "stable-diffusion-videos"), required=True)
    parser.add_argument("--weights", type=Path, required=True, help="a saved StableDiffusionPipeline folder")
    parser.add_argument("--out", type=Path, required=True, help="an empty folder for the frames and video")
    parser.add_argument("--prompts", nargs="+", required=True)
    parser.add_argument("--seeds", type=int, nargs="+", required=True)
    parser.add_argument("--frames-per-prompt", type=int, required=True, help="frames of each transition")
    parser.add_argument("--width", type=int, required=True)
    parser.add_argument("--height", type=int, required=True)
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--guidance", type=float, default=7.5)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--fps", type=int, default=10)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = parser.parse_args()
    walk = musicvid_walk if args.tool == "musicvid" else sdv_walk
    result = walk(args, torch.device(args.device))
    print(json.dumps({"tool": args.tool, "torch": torch.__version__, **result}))


if __name__ == "__main__":
    main()
