"""Render: keyframes with Stable Diffusion, the frames between them by slerp with CSA, then the mux.

Every picture is a PNG named by its frame (or scene) with a key in its metadata: a hash of exactly the
inputs it was drawn from. A rerun keeps each picture whose key still matches, so a killed render
continues where it stopped and an edited storyboard re-renders only the frames that depend on the
edit. Pictures are denoised in fixed groups (keyframes in scene order, in-between frames within their
scene), and a group is rendered whole whenever any of its pictures is missing or stale: the batch a
picture is computed in is then always the same, and so are its bytes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import threading
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterator

import numpy as np
import torch
from PIL import Image, PngImagePlugin

from musicvid import captions
from musicvid.errors import Cancelled, UserError
from musicvid.files import atomic_path, check_output, remove_all_temporaries, remove_temporaries, write_json, write_text
from musicvid.interpolate import align, slerp
from musicvid.models import ModelRegistry
from musicvid.mux import encode_video
from musicvid.pipeline import SongRequest, get_storyboard
from musicvid.progress import Progress
from musicvid.schedule import FrameSchedule, frame_schedule
from musicvid.storyboard import Storyboard, fallback_note, unsure_note
from musicvid.timing import Timings

log = logging.getLogger("musicvid")

KEY_FIELD = "musicvid-key"
SCHEDULERS = ("dpm++", "ddim")
# Upper limits of the settings that multiply the work (frames per second of song, pixels, steps) or
# the memory (pictures denoised at once); a setting past them is refused before anything is planned.
MAX_FPS = 60
MAX_SIDE = 2048  # SD 1.x draws 512²; 2048² already takes 16 times its memory and time per picture
MAX_STEPS = 150
MAX_GUIDANCE = 30.0
MAX_BATCH_SIZE = 64
WRITE_AHEAD = 2  # groups of pictures that may wait to be written while the next is drawn


@dataclass(frozen=True)
class RenderSettings:
    fps: float = 10.0
    width: int = 512
    height: int = 512
    steps: int = 25
    guidance: float = 7.5
    scheduler: str = "dpm++"
    batch_size: int = 4
    align: bool = True
    align_chunk: int = 4
    style: str = ""
    negative_prompt: str = ""
    captions: bool = False
    preview: bool = False
    attention_slicing: bool = False
    vae_slicing: bool = False
    low_vram: bool = False  # slicing both, and on CUDA each model on the GPU only while it runs
    compile: bool = False  # torch.compile the UNet and the VAE decoder: slow start, faster frames

    def check(self) -> None:
        if not 0 < self.fps <= MAX_FPS:
            raise UserError(f"--fps must be above 0 and at most {MAX_FPS}, got {self.fps:g}")
        if not (0 < self.width <= MAX_SIDE and 0 < self.height <= MAX_SIDE) or self.width % 8 or self.height % 8:
            raise UserError(f"--size must be positive multiples of 8 up to {MAX_SIDE}x{MAX_SIDE}, got {self.width}x{self.height}")
        if not 1 <= self.steps <= MAX_STEPS:
            raise UserError(f"--steps must be from 1 to {MAX_STEPS}, got {self.steps}")
        if not 0 <= self.guidance <= MAX_GUIDANCE:
            raise UserError(f"--guidance must be from 0 to {MAX_GUIDANCE:g}, got {self.guidance:g}")
        if not 1 <= self.batch_size <= MAX_BATCH_SIZE:
            raise UserError(f"--batch-size must be from 1 to {MAX_BATCH_SIZE}, got {self.batch_size}")
        if self.align_chunk < 1 or self.align_chunk > 76:
            raise UserError(f"--align-chunk must be from 1 to 76, got {self.align_chunk}")
        if self.scheduler not in SCHEDULERS:
            raise UserError(f"--scheduler must be one of {', '.join(SCHEDULERS)}, got {self.scheduler!r}")
        if self.compile and self.low_vram:
            raise UserError("--compile and --low-vram cannot be combined: offloading moves the compiled models")

    def picture_inputs(self, diffusion: str) -> dict:
        """What every picture depends on besides its own prompts, seeds and t."""
        keys = ("width", "height", "steps", "guidance", "scheduler", "style", "negative_prompt")
        return {"diffusion": diffusion, **{k: v for k, v in asdict(self).items() if k in keys}}


def _key(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


# --- pictures on disk ------------------------------------------------------------------------------


def stored_key(path: Path, size: tuple[int, int] | None = None) -> str | None:
    """The key a picture on disk was drawn with; None if it is missing, damaged or (given `size`,
    width × height) of another size than the video's."""
    try:
        with Image.open(path) as image:
            return image.text.get(KEY_FIELD) if size is None or image.size == size else None
    except (OSError, SyntaxError, ValueError):
        return None  # missing or damaged: render it again


def save_picture(path: Path, pixels: np.ndarray, key: str) -> None:
    meta = PngImagePlugin.PngInfo()
    meta.add_text(KEY_FIELD, key)
    with atomic_path(path) as tmp:
        Image.fromarray(pixels).save(tmp, format="PNG", pnginfo=meta, compress_level=1)


def load_picture(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


# --- what to draw ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Picture:
    """One image to denoise: the morph from scene `scene` towards `target` at `t` (t = 0: keyframe)."""

    path: Path
    key: str
    scene: int
    target: int | None
    t: float


def keyframe_path(workdir: Path, scene: int) -> Path:
    return workdir / "keyframes" / f"{scene:04d}.png"


def frame_path(workdir: Path, frame: int) -> Path:
    return workdir / "frames" / f"{frame:06d}.png"


def _groups(items: list, size: int) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def plan_pictures(
    storyboard: Storyboard, schedule: FrameSchedule, settings: RenderSettings, diffusion: str, workdir: Path
) -> list[list[Picture]]:
    """Every picture of the video in its fixed render group: keyframes first, then in-between frames."""
    common = settings.picture_inputs(diffusion)
    scenes = storyboard.scenes

    def scene_inputs(i: int) -> tuple:
        return scenes[i].prompt, scenes[i].seed

    keyframes = [
        Picture(keyframe_path(workdir, s), _key(common, scene_inputs(s)), s, None, 0.0) for s in schedule.shown_scenes
    ]
    groups = _groups(keyframes, settings.batch_size)
    if settings.preview:
        return groups
    morph = {"align": settings.align, "align_chunk": settings.align_chunk if settings.align else None}
    for segment in schedule.segments:
        if segment.target is None:
            continue  # the last scene holds its keyframe
        frames = [
            Picture(
                frame_path(workdir, k),
                _key(common, morph, scene_inputs(segment.scene), scene_inputs(segment.target), k - segment.first, segment.length),
                segment.scene,
                segment.target,
                segment.t(k),
            )
            for k in range(segment.first + 1, segment.end)
        ]  # fmt: skip
        groups += _groups(frames, settings.batch_size)
    return groups


# --- drawing ---------------------------------------------------------------------------------------


def job_pipeline(pipe, settings: RenderSettings):
    """A pipeline for one render: the loaded models, shared, with a sampler of the job's own. A kept-
    loaded pipeline (batch, web page) is never changed under another job's denoising loop: its
    scheduler keeps state per call. The models' own switches below are set for this job; the callers
    run one job at a time per loaded model set (the page holds a lock)."""
    from diffusers import DDIMScheduler, DPMSolverMultistepScheduler

    # Both samplers are deterministic (no fresh noise per step), so nearby t give nearby pictures.
    if settings.scheduler == "ddim":
        scheduler = DDIMScheduler.from_config(pipe.scheduler.config)
    else:
        scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config, algorithm_type="dpmsolver++")
    # Set both ways: a pipeline kept loaded (batch, web UI) may carry the last job's choice.
    if settings.attention_slicing or settings.low_vram:
        pipe.enable_attention_slicing()
    else:
        pipe.disable_attention_slicing()
    if settings.vae_slicing or settings.low_vram:
        pipe.vae.enable_slicing()
    else:
        pipe.vae.disable_slicing()
    if settings.low_vram and pipe.device.type == "cuda":
        pipe.enable_model_cpu_offload(device=pipe.device)
    # (with offloading, pipe.device says "cpu": the models run on pipe._execution_device)
    if settings.compile and not isinstance(pipe.unet, torch._dynamo.eval_frame.OptimizedModule):
        # Compiled once per loaded pipeline; a pipeline kept loaded stays compiled for later jobs.
        pipe.unet = torch.compile(pipe.unet, fullgraph=True)
        pipe.vae.decoder = torch.compile(pipe.vae.decoder)
    job = type(pipe).from_pipe(pipe, scheduler=scheduler)
    job.set_progress_bar_config(**getattr(pipe, "_progress_bar_config", {}))  # our own bar counts frames
    return job


class SceneInputs:
    """Each scene's prompt embedding (encoded once) and initial noise, and each morph's aligned target."""

    def __init__(self, pipe, storyboard: Storyboard, scenes: list[int], settings: RenderSettings):
        self.pipe = pipe
        self.settings = settings
        prompts = [_with_style(storyboard.scenes[i].prompt, settings.style) for i in scenes]
        with torch.inference_mode():
            embeds, _ = pipe.encode_prompt(prompts, pipe._execution_device, 1, False)
            self.negative, _ = pipe.encode_prompt([settings.negative_prompt], pipe._execution_device, 1, False)
        self.text = {i: e.float().cpu() for i, e in zip(scenes, embeds)}
        factor = pipe.vae_scale_factor
        shape = (pipe.unet.config.in_channels, settings.height // factor, settings.width // factor)
        # Noise comes from a CPU generator, so a seed gives the same picture on every device.
        self.noise = {
            i: torch.randn(shape, generator=torch.Generator("cpu").manual_seed(storyboard.scenes[i].seed))
            for i in scenes
        }
        self._aligned: dict[tuple[int, int], torch.Tensor] = {}

    def target_text(self, scene: int, target: int) -> torch.Tensor:
        if not self.settings.align:
            return self.text[target]
        if (scene, target) not in self._aligned:
            self._aligned[scene, target] = align(self.text[scene], self.text[target], self.settings.align_chunk)
        return self._aligned[scene, target]

    def conditioning(self, picture: Picture) -> tuple[torch.Tensor, torch.Tensor]:
        """(text embedding, initial latent) of one picture."""
        if picture.target is None:
            return self.text[picture.scene], self.noise[picture.scene]
        t = picture.t
        text = slerp(self.text[picture.scene], self.target_text(picture.scene, picture.target), t)
        noise = slerp(self.noise[picture.scene], self.noise[picture.target], t)
        return text, noise


def _with_style(prompt: str, style: str) -> str:
    return f"{prompt}, {style}" if style.strip() else prompt


def stop_between_steps(stop: threading.Event | None):
    """A step callback that ends the denoising loop within one step of `stop` being set."""

    def check(pipe, step: int, timestep, tensors: dict) -> dict:
        if stop is not None and stop.is_set():
            raise Cancelled("the render was cancelled")
        return tensors

    return check


@torch.inference_mode()
def draw(
    pipe,
    inputs: SceneInputs,
    group: list[Picture],
    settings: RenderSettings,
    timings: Timings,
    stop: threading.Event | None = None,
) -> np.ndarray:
    """The group's pictures as uint8 RGB: one batched pipeline call (guidance batched with it) to
    denoise the latents, then one VAE decode."""
    texts, noises = zip(*(inputs.conditioning(p) for p in group))
    dtype = pipe.unet.dtype
    with timings.measure("denoise", pipe._execution_device):
        latents = pipe(
            prompt_embeds=torch.stack(texts).to(pipe._execution_device, dtype),
            negative_prompt_embeds=inputs.negative.to(pipe._execution_device, dtype).expand(len(group), -1, -1),
            latents=torch.stack(noises).to(pipe._execution_device, dtype),
            num_inference_steps=settings.steps,
            guidance_scale=settings.guidance,
            height=settings.height,
            width=settings.width,
            output_type="latent",
            callback_on_step_end=stop_between_steps(stop),
        ).images
    with timings.measure("decode", pipe._execution_device):
        pixels = pipe.vae.decode(latents / pipe.vae.config.scaling_factor).sample
        pixels = ((pixels.float() / 2 + 0.5).clamp(0, 1) * 255).round().to(torch.uint8)
        return pixels.permute(0, 2, 3, 1).cpu().numpy()


def remove_leftovers(workdir: Path, output: Path) -> None:
    """Temporary files of a run that was killed mid-write (see files.atomic_path)."""
    for folder in (workdir, workdir / "keyframes", workdir / "frames"):
        remove_all_temporaries(folder)
    for path in (output, output.with_suffix(".srt")):
        remove_temporaries(path)


def stale_groups(groups: list[list[Picture]], settings: RenderSettings) -> list[list[Picture]]:
    size = (settings.width, settings.height)
    return [g for g in groups if any(stored_key(p.path, size) != p.key for p in g)]


def render_pictures(
    pipe,
    storyboard: Storyboard,
    todo: list[list[Picture]],
    settings: RenderSettings,
    timings: Timings,
    quiet: bool,
    stop: threading.Event | None = None,
) -> int:
    """Draw the given groups; returns how many pictures were drawn.

    PNGs are encoded in threads while the next group is denoised (Pillow releases the GIL while it
    encodes): on a GPU, writing in line cost a seventh of the drawing time. At most WRITE_AHEAD groups
    wait to be written, so memory stays bounded; "write frames" counts only the time spent waiting.
    Setting `stop` ends the render within one denoising step (what is written stays, for a resume)."""
    needed = sorted({s for group in todo for p in group for s in (p.scene, p.target) if s is not None})
    with timings.measure("encode prompts", pipe._execution_device):
        inputs = SceneInputs(pipe, storyboard, needed, settings)
    drawn = 0
    waiting: deque[list[Future]] = deque()

    def finish_writes(keep: int) -> None:
        with timings.measure("write frames"):
            while len(waiting) > keep:
                for write in waiting.popleft():
                    write.result()  # a failed write raises here

    with ThreadPoolExecutor(max_workers=2) as writer, Progress("render", total=sum(len(g) for g in todo), unit="frame", quiet=quiet) as progress:  # fmt: skip
        for group in todo:
            pictures = draw(pipe, inputs, group, settings, timings, stop)
            waiting.append([writer.submit(save_picture, p.path, pixels, p.key) for p, pixels in zip(group, pictures)])
            finish_writes(keep=WRITE_AHEAD)
            drawn += len(group)
            progress.advance(len(group))
        finish_writes(keep=0)
    return drawn


# --- the video -------------------------------------------------------------------------------------


def video_frames(
    storyboard: Storyboard, schedule: FrameSchedule, workdir: Path, settings: RenderSettings
) -> Iterator[np.ndarray]:
    """Frame 0 … N−1 in order: keyframes where t = 0, rendered morphs between them (or, in preview,
    a crossfade of the two keyframes), lyrics burned in when asked."""

    @lru_cache(maxsize=2)  # scenes come in order: only the current keyframe and the next are needed
    def keyframe(scene: int) -> np.ndarray:
        return load_picture(keyframe_path(workdir, scene))

    for segment in schedule.segments:
        caption = storyboard.scenes[segment.scene].text if storyboard.scenes[segment.scene].kind == "lyric" else ""
        for k in range(segment.first, segment.end):
            t = segment.t(k)
            if t == 0:
                frame = keyframe(segment.scene)
            elif settings.preview:
                start = keyframe(segment.scene).astype(np.float32)
                end = keyframe(segment.target).astype(np.float32)
                frame = ((1 - t) * start + t * end).round().astype(np.uint8)
            else:
                frame = load_picture(frame_path(workdir, k))
            yield captions.burn(frame, caption) if settings.captions else frame


def default_output(song: Path, preview: bool) -> Path:
    """`<song>.mp4` (or `<song>.preview.mp4`) beside the song."""
    return song.with_name(f"{song.stem}.preview.mp4" if preview else f"{song.stem}.mp4")


def render_song(
    request: SongRequest,
    settings: RenderSettings,
    registry: ModelRegistry,
    output: Path | None = None,
    timings: Timings | None = None,
    stop: threading.Event | None = None,
) -> Path:
    """The whole pipeline: storyboard (made or reused), pictures, then the MP4 and its .srt (beside the
    song unless `output` names the video). Settings and the output are checked before any work.

    Seconds per stage go to `timings` and to timings.json in the work directory."""
    settings.check()
    request.check()
    output = output if output is not None else default_output(request.song, settings.preview)
    check_output(output)
    timings = timings if timings is not None else Timings()
    started = time.perf_counter()
    storyboard, workdir, audio = get_storyboard(request, registry, timings=timings)
    schedule = frame_schedule([s.start for s in storyboard.scenes], storyboard.duration, settings.fps)
    groups = plan_pictures(storyboard, schedule, settings, registry.models.diffusion, workdir)
    remove_leftovers(workdir, output)
    todo = stale_groups(groups, settings)
    drawn = 0
    if todo:
        with registry.use("diffusion", timings) as loaded:
            pipe = job_pipeline(loaded, settings)
            drawn = render_pictures(pipe, storyboard, todo, settings, timings, request.quiet, stop)

    video = workdir / ("preview.mp4" if settings.preview else "video.mp4")
    with timings.measure("mux"):
        encode_video(
            video_frames(storyboard, schedule, workdir, settings),
            width=settings.width, height=settings.height, fps=settings.fps, audio=Path(audio.info.path), output=video,
        )  # fmt: skip
    subtitles = captions.srt(storyboard)
    write_text(workdir / "lyrics.srt", subtitles)
    if output.resolve() != video.resolve():
        with atomic_path(output) as tmp:
            shutil.copyfile(video, tmp)
    write_text(output.with_suffix(".srt"), subtitles)
    write_json(
        workdir / "timings.json",
        {**timings.summary(), "frames": schedule.frame_count, "pictures_drawn": drawn,
         "wall_seconds": round(time.perf_counter() - started, 4)},
    )  # fmt: skip
    for note in (unsure_note(storyboard), fallback_note(storyboard)):
        if note:
            log.warning(note)
    return output
