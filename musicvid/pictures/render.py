"""Render: keyframes with Stable Diffusion, the frames between them by slerp with CSA, then the mux.

Every picture is a PNG named by its frame (or scene) with a key in its metadata: a hash of exactly the
inputs it was drawn from. A rerun keeps each picture whose key still matches, so a killed render
continues where it stopped and an edited storyboard re-renders only the frames that depend on the
edit. Pictures are denoised in fixed groups (each keyframe alone, in-between frames by blocks of
frame numbers, across scenes), and a group is denoised whole whenever any of its pictures is missing or
stale: the batch a picture is computed in is then always the same, and so are its bytes. (docs/frames.md)
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Collection, Iterator

import numpy as np
import torch
from PIL import Image, PngImagePlugin

from musicvid.delivery.upscale import cover
from musicvid.errors import Cancelled, RenderError, UserError
from musicvid.files import check_picture
from musicvid.models.loading import file_digest, job_pipeline_of
from musicvid.pictures.schedule import FrameSchedule
from musicvid.pictures.slerp import align, slerp
from musicvid.progress import Progress
from musicvid.settings import RenderSettings
from musicvid.storyboard import Scene, Storyboard
from musicvid.timing import Timings
from musicvid.workdir import Workdir
from vipe_core.files import atomic_path

log = logging.getLogger("musicvid")

KEY_FIELD = "musicvid-key"
WRITE_AHEAD = 2  # groups of pictures that may wait to be written while the next is drawn


def picture_key(*parts) -> str:
    """A hash of exactly the inputs a picture is drawn from (its key)."""
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


def save_picture(
    path: Path, pixels: np.ndarray, key: str, on_saved: Callable[[Path], object] = lambda path: None
) -> None:
    """`pixels` as the PNG `path` with its `key`, written whole or not at all; then `on_saved(path)`."""
    meta = PngImagePlugin.PngInfo()
    meta.add_text(KEY_FIELD, key)
    with atomic_path(path) as tmp:
        Image.fromarray(pixels).save(tmp, format="PNG", pnginfo=meta, compress_level=1)
    on_saved(path)


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


def _file_digest(path: Path, what: str = "pinned picture") -> str:
    check_picture(path, what)  # its header, before it is ever decoded
    return file_digest(path)


def reference_of(scene: Scene, settings: RenderSettings) -> Path | None:
    """The picture whose look a scene takes: its own, else the render's (--reference), else none."""
    own = scene.reference or settings.reference
    return Path(own) if own else None


def uses_reference(storyboard: Storyboard, settings: RenderSettings) -> bool:
    return any(reference_of(scene, settings) for scene in storyboard.scenes)


def pinned_picture(path: Path, settings: RenderSettings) -> np.ndarray:
    """A pinned picture as the scene's keyframe: RGB, scaled to cover the drawn size and centred."""
    try:
        with Image.open(path) as image:
            pixels = np.asarray(image.convert("RGB"))
    except (OSError, SyntaxError, ValueError):
        raise UserError(f"pinned picture {path} is not an image Pillow can read") from None
    return cover(pixels, settings.size)


def plan_pictures(
    storyboard: Storyboard, schedule: FrameSchedule, settings: RenderSettings, drawing: dict, workdir: Workdir
) -> list[list[Picture]]:
    """Every picture of the video in its fixed render group: keyframes first, each alone, then the
    in-between frames by blocks of `--batch-size` frame numbers (frames k with the same k // size),
    across scene boundaries, so that batches stay full however short the scenes are. A block is fixed by
    the frame numbers alone: an edit to one scene changes no other picture's group, and moving a scene's
    start changes only the blocks around it. `drawing`: what draws them, as Drawing.key names it."""
    common = settings.picture_inputs(drawing)
    scenes = storyboard.scenes
    pinned = {s.index: _file_digest(Path(s.picture)) for s in scenes if s.picture}
    references = {s.index: _file_digest(r, "reference picture") for s in scenes if (r := reference_of(s, settings))}

    def scene_inputs(i: int) -> tuple:
        own = [pinned.get(i), references.get(i)]
        return (scenes[i].prompt, scenes[i].seed, *[x for x in own if x is not None])

    keyframes = [
        Picture(workdir.keyframe(s), picture_key(common, scene_inputs(s)), s, None, 0.0) for s in schedule.shown_scenes
    ]
    groups = [[keyframe] for keyframe in keyframes]  # one by one: a new seed or prompt redraws that one alone
    if settings.preview:
        return groups
    morph = {"align": settings.align, "align_chunk": settings.align_chunk if settings.align else None}
    blocks: dict[int, list[Picture]] = {}
    for segment in schedule.segments:
        if segment.target is None:
            continue  # the last scene holds its keyframe
        for k in range(segment.first + 1, segment.end):
            blocks.setdefault(k // settings.batch_size, []).append(
                Picture(
                    workdir.frame(k),
                    picture_key(
                        common,
                        morph,
                        scene_inputs(segment.scene),
                        scene_inputs(segment.target),
                        k - segment.first,
                        segment.length,
                        # paced by the music: t itself (it depends on the audio, not only on the frame's place)
                        *([] if segment.motion is None else [round(segment.t(k), 9)]),
                    ),
                    segment.scene,
                    segment.target,
                    segment.t(k),
                )
            )
    return groups + list(blocks.values())


# --- drawing ---------------------------------------------------------------------------------------


def job_pipeline(pipe, settings: RenderSettings, offloads: Collection[str] | None = None):
    """A pipeline for one render: the loaded models, shared, with a sampler of the job's own. A kept-
    loaded pipeline (batch, web page) is never changed under another job's denoising loop: its
    scheduler keeps state per call. The models' own switches below are set for this job; the callers
    run one job at a time per loaded model set (the page holds a lock). `offloads`: the memory plan's
    switches (musicvid.memory), by default those the settings ask for."""
    from diffusers import DDIMScheduler, DPMSolverMultistepScheduler
    from diffusers.utils.torch_utils import is_compiled_module

    from musicvid.memory import asked_offloads
    from musicvid.pictures.sampler import SharedNoiseLCMScheduler

    offloads = asked_offloads(settings) if offloads is None else offloads

    # The full samplers add no noise per step, so nearby t give nearby pictures. --fast's does, but each
    # picture's noise is given, slerped like its initial latent (musicvid.pictures.sampler).
    if settings.fast:
        scheduler = SharedNoiseLCMScheduler.from_config(pipe.scheduler.config)
    elif settings.scheduler == "ddim":
        scheduler = DDIMScheduler.from_config(pipe.scheduler.config)
    else:
        scheduler = DPMSolverMultistepScheduler.from_config(pipe.scheduler.config, algorithm_type="dpmsolver++")
    # Set both ways: a pipeline kept loaded (batch, web UI) may carry the last job's choice. Attention
    # slicing has no kind for the reference adapter's attention: setting it either way would drop the adapter.
    if has_reference_adapter(pipe):
        if settings.attention_slicing:
            log.warning("musicvid: attention slicing does not go with reference pictures; drawing without it")
    else:
        set_attention_slicing(pipe, "attention-slicing" in offloads)
    if "vae-slicing" in offloads:
        pipe.vae.enable_slicing()
    else:
        pipe.vae.disable_slicing()
    if "vae-tiling" in offloads:
        pipe.vae.enable_tiling()
    else:
        pipe.vae.disable_tiling()
    if pipe.device.type == "cuda":
        offload(pipe, offloads)
    # (with offloading, pipe.device says "cpu": the models run on compute_device(pipe))
    if settings.compile and not is_compiled_module(pipe.unet):
        # Compiled once per loaded pipeline; a pipeline kept loaded stays compiled for later jobs. By inductor
        # unless MUSICVID_COMPILE_BACKEND names another backend (the tests' "eager" checks the graphs quickly).
        backend = os.environ.get("MUSICVID_COMPILE_BACKEND", "inductor")
        pipe.unet = torch.compile(pipe.unet, fullgraph=True, backend=backend)
        pipe.vae.decoder = torch.compile(pipe.vae.decoder, backend=backend)
    kind = type(pipe)
    if has_reference_adapter(pipe):
        pipe.set_ip_adapter_scale(settings.reference_strength)
        kind = _with_reference_per_picture(kind)
    job = job_pipeline_of(pipe, kind, scheduler=scheduler)
    job.set_progress_bar_config(disable=True)  # our own bar counts frames
    return job


def set_attention_slicing(pipe, sliced: bool) -> None:
    """The UNet's attention sliced or not, its processors replaced only where they are not so already: a
    replacement drops what the loaded models were set up with (fused query, key and value projections:
    benchmarks/speed.py), and one of another kind makes a compiled UNet compile again."""
    from diffusers.models.attention_processor import SlicedAttnAddedKVProcessor, SlicedAttnProcessor

    processors = pipe.unet.attn_processors.values()
    if any(isinstance(p, (SlicedAttnProcessor, SlicedAttnAddedKVProcessor)) for p in processors) == sliced:
        return
    if sliced:
        pipe.enable_attention_slicing()
    else:
        pipe.disable_attention_slicing()


def offload(pipe, offloads: Collection[str]) -> None:
    """A pipeline on CUDA offloaded as `offloads` says: each model (accelerate's model offload) or each layer
    (sequential offload) on the GPU only while it runs, the weights waiting on the CPU."""
    if "sequential-offload" in offloads:
        pipe.enable_sequential_cpu_offload(device=pipe.device)
    elif "model-offload" in offloads:
        pipe.enable_model_cpu_offload(device=pipe.device)


def has_reference_adapter(pipe) -> bool:
    return getattr(pipe.unet, "encoder_hid_proj", None) is not None


@lru_cache
def _with_reference_per_picture(pipeline_class: type) -> type:
    """`pipeline_class` taking one reference-picture embedding per picture of a batch: diffusers' own
    takes one for the whole batch and repeats it, but along a morph between two scenes' references each
    picture has its own. `ip_adapter_image_embeds` is then one tensor, batch × 1 × width, and the
    unconditional embedding of guidance is zeros, as diffusers makes it for a picture."""

    class PerPicture(pipeline_class):
        def prepare_ip_adapter_image_embeds(self, image, embeds, device, per_prompt, guided):
            return [(torch.cat([torch.zeros_like(e), e]) if guided else e).to(device) for e in embeds]

    PerPicture.__name__ = pipeline_class.__name__
    return PerPicture


def compute_device(pipe) -> torch.device:
    """Where the pipeline's models run: their own device, or under --low-vram's offloading (the weights
    wait on the CPU between passes) the one each is moved to for its pass."""
    from diffusers.utils.torch_utils import get_module_execution_device

    return get_module_execution_device(pipe.unet)


def is_xl(pipe) -> bool:
    """An SDXL pipeline: two text encoders, and a UNet conditioned on the pooled text and the picture's size."""
    return pipe.unet.config.addition_embed_type == "text_time"


def encode_text(pipe, prompts: list[str], device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Each prompt's text embedding (77 × width: with SDXL both encoders' side by side, 77 × 2048) and with
    SDXL its pooled embedding, in float32 on the CPU."""
    if not is_xl(pipe):
        embeds, _ = pipe.encode_prompt(prompts, device, 1, False)
        return embeds.float().cpu(), None
    embeds, _, pooled, _ = pipe.encode_prompt(
        prompts, device=device, num_images_per_prompt=1, do_classifier_free_guidance=False
    )
    return embeds.float().cpu(), pooled.float().cpu()


@dataclass(frozen=True)
class Conditioning:
    """What one picture is denoised from."""

    text: torch.Tensor  # the text embedding, 77 × width
    pooled: torch.Tensor | None  # with SDXL: the pooled text embedding
    noise: torch.Tensor  # the initial latent
    step_noise: torch.Tensor | None  # with --fast: the noise added after each step but the last
    image: torch.Tensor | None  # with a reference adapter: the reference picture's embedding (zeros: none)


class SceneInputs:
    """Each scene's prompt embedding (encoded once) and noise, and each morph's aligned target."""

    def __init__(self, pipe, storyboard: Storyboard, scenes: list[int], settings: RenderSettings):
        self.pipe = pipe
        self.settings = settings
        prompts = [_with_style(storyboard.scenes[i].prompt, settings.style) for i in scenes]
        device = compute_device(pipe)
        with torch.inference_mode():
            embeds, pooled = encode_text(pipe, prompts, device)
            self.negative, self.negative_pooled = encode_text(pipe, [settings.negative_prompt], device)
        if pooled is not None and not settings.negative_prompt.strip() and pipe.config.force_zeros_for_empty_prompt:
            # what SDXL's pipeline makes of no negative prompt (and what SDXL was trained to read so)
            self.negative, self.negative_pooled = (
                torch.zeros_like(self.negative),
                torch.zeros_like(self.negative_pooled),
            )
        self.text = dict(zip(scenes, embeds))
        self.pooled = {} if pooled is None else dict(zip(scenes, pooled))
        factor = pipe.vae_scale_factor
        shape = (pipe.unet.config.in_channels, settings.height // factor, settings.width // factor)
        # Noise comes from a CPU generator, so a seed gives the same picture on every device. With --fast
        # the same generator then gives the noise of each step (the initial latent stays the same).
        self.noise, self.step_noise = {}, {}
        for i in scenes:
            generator = torch.Generator("cpu").manual_seed(storyboard.scenes[i].seed)
            self.noise[i] = torch.randn(shape, generator=generator)
            if settings.fast:
                self.step_noise[i] = torch.randn((settings.steps - 1, *shape), generator=generator)
        # A pinned scene's keyframe is its picture; its noise is the picture's latent (VAE encoder),
        # run back up the sampler's steps by DDIM inversion under its prompt, so that its morphs start
        # from what denoises to (about) the picture and are computed as any other scene's.
        self.pinned = {
            i: pinned_picture(Path(storyboard.scenes[i].picture), settings)
            for i in scenes
            if storyboard.scenes[i].picture
        }
        # With the reference adapter loaded, each scene's reference picture by its CLIP image embedding
        # (encoded once per picture); a scene without one has zeros, the adapter's "no picture".
        self.image: dict[int, torch.Tensor] = {}
        if has_reference_adapter(pipe):
            references = {i: reference_of(storyboard.scenes[i], settings) for i in scenes}
            embedded = {path: embed_picture(pipe, path) for path in set(references.values()) if path}
            nothing = torch.zeros(pipe.image_encoder.config.projection_dim)
            self.image = {i: embedded[path] if path else nothing for i, path in references.items()}
        for i, picture in self.pinned.items():
            self.noise[i] = invert(pipe, picture, self.condition(i), settings.steps)
        self._aligned: dict[tuple[int, int], torch.Tensor] = {}

    def target_text(self, scene: int, target: int) -> torch.Tensor:
        if not self.settings.align:
            return self.text[target]
        if (scene, target) not in self._aligned:
            self._aligned[scene, target] = align(self.text[scene], self.text[target], self.settings.align_chunk)
        return self._aligned[scene, target]

    def condition(self, scene: int) -> Conditioning:
        """A scene's keyframe's conditioning."""
        return Conditioning(
            self.text[scene],
            self.pooled.get(scene),
            self.noise[scene],
            self.step_noise.get(scene),
            self.image.get(scene),
        )

    def conditioning(self, picture: Picture) -> Conditioning:
        scene, target, t = picture.scene, picture.target, picture.t
        if target is None:
            return self.condition(scene)
        step_noise = None
        if self.step_noise:  # each step's noise slerped on its own, as the initial latent
            step_noise = torch.empty_like(self.step_noise[scene])  # (none at all in one step)
            for step, (a, b) in enumerate(zip(self.step_noise[scene], self.step_noise[target])):
                step_noise[step] = slerp(a, b, t)
        return Conditioning(
            slerp(self.text[scene], self.target_text(scene, target), t),
            slerp(self.pooled[scene], self.pooled[target], t) if self.pooled else None,  # one vector: no CSA
            slerp(self.noise[scene], self.noise[target], t),
            step_noise,
            slerp(self.image[scene], self.image[target], t) if self.image else None,
        )


@torch.inference_mode()
def embed_picture(pipe, path: Path) -> torch.Tensor:
    """A reference picture's CLIP image embedding, by the adapter's image encoder (the picture as the
    encoder's processor scales and crops it)."""
    try:
        with Image.open(path) as image:
            pixels = image.convert("RGB")
    except (OSError, SyntaxError, ValueError):
        raise UserError(f"reference picture {path} is not an image Pillow can read") from None
    embeds, _ = pipe.encode_image(pixels, compute_device(pipe), 1)
    return embeds[0].float().cpu()


@torch.inference_mode()
def invert(pipe, picture: np.ndarray, condition: Conditioning, steps: int) -> torch.Tensor:
    """The initial noise that DDIM's steps, under the keyframe's `condition` (its text, and with SDXL its
    pooled text and size, with the adapter its reference picture's embedding) and without guidance,
    denoise to about `picture`: its VAE latent taken back up the noise schedule (diffusers'
    DDIMInverseScheduler)."""
    from diffusers import DDIMInverseScheduler
    from diffusers.utils.torch_utils import unwrap_module

    device, dtype = compute_device(pipe), pipe.unet.dtype
    pixels = torch.from_numpy(np.array(picture)).permute(2, 0, 1)[None].to(device, pipe.vae.dtype) / 127.5 - 1
    encoded = pipe.vae.encode(pixels)  # SD's VAE gives a distribution, TAESD (--fast) the latent itself
    latent = (encoded.latent_dist.mean if hasattr(encoded, "latent_dist") else encoded.latents) * (
        pipe.vae.config.scaling_factor
    )
    latent = latent.to(dtype)
    inverse = DDIMInverseScheduler.from_config(pipe.scheduler.config)
    inverse.set_timesteps(steps, device=device)
    extra = {}
    if condition.image is not None:
        extra["image_embeds"] = [condition.image[None, None].to(device, dtype)]
    if condition.pooled is not None:  # SDXL: drawn at its own size, uncropped, as the pipeline conditions it
        height, width = picture.shape[:2]
        extra["text_embeds"] = condition.pooled[None].to(device, dtype)
        extra["time_ids"] = torch.tensor([[height, width, 0, 0, height, width]], device=device, dtype=dtype)
    text = condition.text[None].to(device, dtype)
    # Eager, not compiled: the compiled UNet is traced at the drawing's padded batch (batch_inputs), and
    # one picture at a time would compile it again.
    unet = unwrap_module(pipe.unet)
    for timestep in inverse.timesteps:
        noise = unet(latent, timestep, encoder_hidden_states=text, added_cond_kwargs=extra or None).sample
        latent = inverse.step(noise, timestep, latent).prev_sample
    return latent[0].float().cpu()


def _with_style(prompt: str, style: str) -> str:
    return f"{prompt}, {style}" if style.strip() else prompt


def stop_between_steps(stop: threading.Event | None):
    """A step callback that ends the denoising loop within one step of `stop` being set."""

    def check(pipe, step: int, timestep, tensors: dict) -> dict:
        if stop is not None and stop.is_set():
            raise Cancelled("the render was cancelled")
        return tensors

    return check


@dataclass(frozen=True)
class Batch:
    """One group's inputs to the pipeline, on its device, in its dtype."""

    text: torch.Tensor
    negative: torch.Tensor
    pooled: torch.Tensor | None  # with SDXL: the pooled text embeddings, and the negative's
    negative_pooled: torch.Tensor | None
    noise: torch.Tensor
    step_noise: torch.Tensor | None  # steps − 1 × batch × latent (--fast)
    image: torch.Tensor | None  # batch × 1 × width: each picture's reference embedding (with the adapter)


def batch_inputs(pipe, inputs: SceneInputs, group: list[Picture], size: int | None = None, pin: bool = False) -> Batch:
    """The group's conditioning, stacked and moved to the pipeline's device (from pinned memory, without
    waiting for the copy, where `pin`). With `size`, a shorter group is padded to it by repeating its
    last picture: a compiled UNet then sees one shape and is compiled once. Each picture of a batch is
    computed apart from the others, so the padding changes the group's pictures by rounding at most (a
    batch of another shape may be blocked otherwise), and a group is always padded the same way."""
    given = [inputs.conditioning(p) for p in group]
    given += given[-1:] * ((size or 0) - len(given))
    device, dtype = compute_device(pipe), pipe.unet.dtype

    def move(tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.to(dtype)
        return tensor.pin_memory().to(device, non_blocking=True) if pin else tensor.to(device)

    step_noise = [c.step_noise for c in given]
    xl = given[0].pooled is not None
    return Batch(
        text=move(torch.stack([c.text for c in given])),
        negative=move(inputs.negative).expand(len(given), -1, -1),
        pooled=move(torch.stack([c.pooled for c in given])) if xl else None,
        negative_pooled=move(inputs.negative_pooled).expand(len(given), -1) if xl else None,
        noise=move(torch.stack([c.noise for c in given])),
        step_noise=None if step_noise[0] is None else move(torch.stack(step_noise, dim=1)),
        image=None if given[0].image is None else move(torch.stack([c.image[None] for c in given])),
    )


def padded_size(pipe, settings: RenderSettings) -> int | None:
    """The batch size every group is padded to where the UNet is compiled (by this job's --compile, or by an
    earlier job's on a pipeline kept loaded), so that it sees one shape; None where it is not."""
    from diffusers.utils.torch_utils import is_compiled_module

    return settings.batch_size if is_compiled_module(pipe.unet) else None


def denoise(pipe, batch: Batch, settings: RenderSettings, stop: threading.Event | None = None) -> torch.Tensor:
    """One batched pipeline call (guidance batched with it): the latents of the batch's pictures."""
    from musicvid.pictures.sampler import StepNoise

    pooled = {}
    if batch.pooled is not None:
        pooled = {"pooled_prompt_embeds": batch.pooled, "negative_pooled_prompt_embeds": batch.negative_pooled}
    return pipe(
        prompt_embeds=batch.text,
        negative_prompt_embeds=batch.negative,
        **pooled,  # SDXL's: the pipeline makes the size conditioning from height and width
        latents=batch.noise,
        # --fast: the noise of each step, for the job's own sampler (job_pipeline) to add
        generator=None if batch.step_noise is None else StepNoise(batch.step_noise),
        ip_adapter_image_embeds=None if batch.image is None else [batch.image],  # (see job_pipeline)
        num_inference_steps=settings.steps,
        guidance_scale=settings.guidance,
        height=settings.height,
        width=settings.width,
        output_type="latent",
        callback_on_step_end=stop_between_steps(stop),
    ).images


def decode(pipe, latents: torch.Tensor) -> torch.Tensor:
    """Latents to uint8 RGB pictures (batch × height × width × 3), on the pipeline's device."""
    pixels = pipe.vae.decode(latents.to(pipe.vae.dtype) / pipe.vae.config.scaling_factor).sample
    return ((pixels.float() / 2 + 0.5).clamp(0, 1) * 255).round().to(torch.uint8).permute(0, 2, 3, 1)


@torch.inference_mode()
def draw(
    pipe,
    inputs: SceneInputs,
    group: list[Picture],
    settings: RenderSettings,
    timings: Timings,
    stop: threading.Event | None = None,
) -> np.ndarray:
    """The group's pictures as uint8 RGB: denoised together, then decoded together."""
    device = compute_device(pipe)
    with timings.measure("denoise", device):
        latents = denoise(pipe, batch_inputs(pipe, inputs, group, padded_size(pipe, settings)), settings, stop)
    with timings.measure("decode", device):
        return decode(pipe, latents)[: len(group)].cpu().numpy()


def stale_pictures(groups: list[list[Picture]], settings: RenderSettings) -> set[Path]:
    """The paths of the pictures that are missing, or drawn from other inputs or at another size."""
    size = (settings.width, settings.height)
    return {p.path for group in groups for p in group if stored_key(p.path, size) != p.key}


class PendingPictures:
    """The pictures a render has still to write, for a reader of them in another thread (the delivery,
    while the drawing goes on): `wait` for one, `saved` when one is written, `close` when the drawing
    ends, after which waiting for one never written is an error rather than forever."""

    def __init__(self, paths: set[Path]):
        self._pending, self._closed = set(paths), False
        self._changed = threading.Condition()

    def saved(self, path: Path) -> None:
        with self._changed:
            self._pending.discard(path)
            self._changed.notify_all()

    def close(self) -> None:
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def wait(self, path: Path) -> None:
        with self._changed:
            while path in self._pending:
                if self._closed:
                    raise RenderError(f"the drawing ended before {path.name} was drawn")
                self._changed.wait()


def render_pictures(
    pipe,
    storyboard: Storyboard,
    groups: list[list[Picture]],
    stale: set[Path],
    settings: RenderSettings,
    timings: Timings,
    quiet: bool,
    stop: threading.Event | None = None,
    on_saved: Callable[[Path], object] = lambda path: None,
) -> int:
    """Draw the groups that hold a `stale` picture (stale_pictures); returns how many pictures were
    drawn anew. A group is denoised whole, but only its stale pictures are written: the others (an
    edit's neighbours in a block across scenes) come out of the same batch as before and are kept.

    PNGs are encoded in threads while the next group is denoised (Pillow releases the GIL while it
    encodes): on a GPU, writing in line cost a seventh of the drawing time. At most WRITE_AHEAD groups
    wait to be written, so memory stays bounded; "write frames" counts only the time spent waiting.
    `on_saved` hears of each picture once it is on disk. Setting `stop` ends the render within one
    denoising step (what is written stays, for a resume)."""
    todo = [group for group in groups if any(p.path in stale for p in group)]
    needed = sorted({s for group in todo for p in group for s in (p.scene, p.target) if s is not None})
    with timings.measure("encode prompts", compute_device(pipe)):
        inputs = SceneInputs(pipe, storyboard, needed, settings)
    drawn = 0
    waiting: deque[list[Future]] = deque()

    def finish_writes(keep: int) -> None:
        with timings.measure("write frames"):
            while len(waiting) > keep:
                for write in waiting.popleft():
                    write.result()  # a failed write raises here

    with (
        ThreadPoolExecutor(max_workers=2) as writer,
        Progress("render", total=sum(len(g) for g in todo), unit="frame", quiet=quiet) as progress,
    ):
        for group in todo:
            first = group[0]
            if first.target is None and first.scene in inputs.pinned:  # keyframes go alone (plan_pictures)
                pictures = [inputs.pinned[first.scene]]
            else:
                pictures = draw(pipe, inputs, group, settings, timings, stop)
            new = [(p, pixels) for p, pixels in zip(group, pictures) if p.path in stale]
            waiting.append([writer.submit(save_picture, p.path, pixels, p.key, on_saved) for p, pixels in new])
            finish_writes(keep=WRITE_AHEAD)
            drawn += len(new)
            progress.advance(len(group))
        finish_writes(keep=0)
    return drawn


# --- the video -------------------------------------------------------------------------------------


def video_frames(
    storyboard: Storyboard,
    schedule: FrameSchedule,
    workdir: Workdir,
    settings: RenderSettings,
    ready: Callable[[Path], object] = lambda path: None,
) -> Iterator[np.ndarray]:
    """Frame 0 … N−1 in order, as drawn: keyframes where t = 0, rendered morphs between them (or, in
    preview, a crossfade of the two keyframes). Each picture is read once `ready(path)` returns (a
    PendingPictures' wait, while they are being drawn)."""

    def picture(path: Path) -> np.ndarray:
        ready(path)
        return load_picture(path)

    @lru_cache(maxsize=2)  # scenes come in order: only the current keyframe and the next are needed
    def keyframe(scene: int) -> np.ndarray:
        return picture(workdir.keyframe(scene))

    for segment in schedule.segments:
        for k in range(segment.first, segment.end):
            t = segment.t(k)
            if t == 0:
                yield keyframe(segment.scene)
            elif settings.preview:
                start = keyframe(segment.scene).astype(np.float32)
                end = keyframe(segment.target).astype(np.float32)
                yield ((1 - t) * start + t * end).round().astype(np.uint8)
            else:
                yield picture(workdir.frame(k))
