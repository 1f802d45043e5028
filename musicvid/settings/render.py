"""Settings, defined once. Each field states its default, its help and its limits here; a settings
object checks itself when it is made. The command line's options, the batch's CSV columns and the web
page's controls are all made from (or checked by) these classes:

- SongRequest: what to make a storyboard of, and how (everything before the pictures);
- RenderSettings: how to draw and encode the video, resolved from what a person chose by one function,
  musicvid.settings.resolve.resolve_render_settings, whichever front door they chose it at;
- ModelChoice: which models a run loads.

Limits bound the settings that multiply the work (frames per second of song, pixels, steps,
candidates) or the memory (pictures denoised at once); one past them is refused before any work,
with the limit in the message. Contracts: docs/cli.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from musicvid.core.errors import UserError, either, number_text
from musicvid.core.files import MAX_TEXT_CHARS
from musicvid.settings.front_doors import Settings, options_text
from musicvid.settings.geometry import (
    ASPECTS,
    DRAWN_FPS,
    RESOLUTIONS,
    check_size,
    drawn_fps,
    size_for_aspect,
    size_text,
)
from musicvid.settings.looks import FAST, FAST_MAX_STEPS, LOOKS
from musicvid.settings.loras import Loras, check_loras
from musicvid.settings.presets import FAMILIES, PRESETS
from musicvid.settings.schema import setting

SCHEDULERS = ("dpm++", "ddim")
PACINGS = ("linear", "beats")
CAPTIONS = ("none", "line", "karaoke")
OUTPUT_RATES = (24, 25, 30, 60)
INTERPOLATORS = ("minterpolate", "blend")  # musicvid.delivery.mux
MOTION_SEARCH_SIDE = 32  # minterpolate's motion search takes no smaller picture (ffmpeg refuses it)
H264_MAX_SIDE = 16384  # libx264's longest side
MOVES = ("none", "zoom", "pan")
TRANSITIONS = ("slerp", "video")  # what draws the frames between keyframes (musicvid.pictures.transitions)
MAX_CANDIDATES = 8  # keyframes drawn per scene and round: a limit on the work it multiplies
MAX_ROUNDS = 4  # rounds of candidates --reroll-below may draw for one scene
SCORE_RANGE = (0.0, 2.5)  # CLIPScore's (musicvid.pictures.scores)
DEFAULT_BATCH, MAX_BATCH = 4, 64  # without --batch-size off a GPU (on one: musicvid.memory.pictures's)


@dataclass(frozen=True)
class RenderSettings(Settings):
    """How to draw the pictures and encode the video."""

    look: str | None = setting(
        None,
        "a set of options that suits a kind of video; options given beside it win. "
        + "; ".join(f"{look}: {options_text(options)}" for look, options in LOOKS.items()),
        choices=tuple(LOOKS),
        group="video",
        affects=("keyframes", "between", "video"),
    )
    fps: float = setting(
        DRAWN_FPS,
        f"frames per second that Stable Diffusion draws (default {number_text(DRAWN_FPS)}, as in the paper)",
        low=1,
        high=60,
        group="motion",
        affects=("between", "video"),
    )
    output_fps: float | None = setting(
        None,
        "frames per second of the video: the frames between the drawn ones are synthesised (--interpolator); "
        f"a whole multiple of --fps, which then defaults to the multiple nearest {DRAWN_FPS:g} ({drawn_fps(24):g} for 24, {drawn_fps(30):g} for 30)",
        choices=OUTPUT_RATES,
        group="video",
        affects=("between", "video"),
    )
    interpolator: str = setting(
        "minterpolate",
        "what synthesises the frames for --output-fps",
        choices=INTERPOLATORS,
        group="video",
        affects=("video",),
    )
    size: tuple[int, int] = setting(
        PRESETS["default"].size,  # the default models', as a render with them resolves it; so too the steps
        f"WxH, multiples of 8 up to 2048x2048 (default: the models', {size_text(FAMILIES['sd'].size)} for SD 1.5, {size_text(FAMILIES['sdxl'].size)} for SDXL)",
        check=check_size,
        group="pictures",
        affects=("keyframes", "between", "video"),
    )
    aspect: str | None = setting(
        None,
        f"the picture's shape: {either(ASPECTS)}, at about the models' pixel count ({size_text(size_for_aspect('16:9', FAMILIES['sd'].size))} for 16:9 with SD 1.5)",
        choices=tuple(ASPECTS),
        group="pictures",
        affects=("keyframes", "between", "video"),
    )
    resolution: str | None = setting(
        None,
        f"upscale the video to {either(RESOLUTIONS)} (its short side), by --upscaler (default: the drawn size)",
        choices=tuple(RESOLUTIONS),
        group="video",
        affects=("video",),
    )
    steps: int = setting(
        PRESETS["default"].steps,
        "denoising steps, the models'",
        low=1,
        high=150,
        group="pictures",
        affects=("keyframes", "between"),
    )
    guidance: float = setting(
        PRESETS["default"].guidance,
        "classifier-free guidance scale, the models' (Z-Image-Turbo's 0 and klein's 1: none)",
        low=0,
        high=30,
        step=0.5,
        group="pictures",
        affects=("keyframes", "between"),
    )
    scheduler: str = setting(
        "dpm++", "deterministic sampler", choices=SCHEDULERS, group="pictures", affects=("keyframes", "between")
    )
    batch_size: int | None = setting(
        None,
        "frames denoised together (default: on a GPU the most the memory plan fits, up to 16 at 512x512 or as many "
        f"pixels; {DEFAULT_BATCH} elsewhere)",
        low=1,
        high=MAX_BATCH,
        group="speed",
        affects=("speed",),
    )
    keyframe_candidates: int = setting(
        1,
        "keyframes drawn per scene, from as many seeds; the one the scorer ranks first (lyric and prompt) is kept",
        low=1,
        high=MAX_CANDIDATES,
        group="pictures",
        affects=("keyframes", "between"),
    )
    reroll_below: float | None = setting(
        None,
        f"draw more candidates (up to {MAX_ROUNDS} rounds) for each scene whose kept keyframe scores below this "
        f"CLIPScore (the mean of its lyric and prompt scores, {SCORE_RANGE[0]:g} to {SCORE_RANGE[1]:g})",
        low=SCORE_RANGE[0],
        high=SCORE_RANGE[1],
        step=0.05,
        group="pictures",
        affects=("keyframes", "between"),
    )
    pacing: str = setting(
        "linear",
        "how each morph moves: linear (evenly, the paper's) or beats (on the song's beats and onsets)",
        choices=PACINGS,
        group="motion",
        affects=("between",),
    )
    motion: str = setting(
        "none",
        "a slow camera move over each scene that leaves each keyframe as drawn: none, zoom or pan",
        choices=MOVES,
        group="motion",
        affects=("between",),
    )
    pulse: float = setting(
        0.0, "a small zoom on strong beats, 0 (none) to 1", low=0, high=1, step=0.1, group="motion", affects=("video",)
    )
    transitions: str = setting(
        "slerp",
        "what draws the frames between keyframes: slerp (the paper's morph through text and noise) or video (a "
        "video model, --video-model, drawing motion from each keyframe to the next; a morph longer than its "
        "longest clip is slerped)",
        choices=TRANSITIONS,
        group="motion",
        affects=("between",),
    )
    transition_steps: int = setting(
        PRESETS["default"].transition_steps,
        "denoising steps of --transitions video, the video model's",
        low=1,
        high=100,
        group="motion",
        affects=("between",),
    )
    align: bool = setting(
        True,
        "Chunked Similarity Alignment of the text embeddings (--no-align: plain slerp)",
        group="motion",
        affects=("between",),
    )
    align_chunk: int = setting(
        4, "rows per chunk for the alignment", low=1, high=76, group="motion", affects=("between",)
    )
    style: str = setting(
        "",
        "text appended to every prompt, e.g. 'oil painting'",
        longest=MAX_TEXT_CHARS,
        group="pictures",
        affects=("keyframes", "between"),
    )
    negative_prompt: str = setting(
        "",
        "what the pictures should not show",
        longest=MAX_TEXT_CHARS,
        group="pictures",
        affects=("keyframes", "between"),
    )
    reference: Path | None = setting(
        None,
        "a picture whose appearance every keyframe takes (IP-Adapter): a character, a face, a palette; a scene of the "
        "storyboard may name its own",
        group="pictures",
        affects=("keyframes", "between"),
    )
    reference_strength: float = setting(
        0.6,
        "how strongly the reference picture steers the pictures: 0 not at all, 1 most",
        low=0,
        high=1,
        step=0.05,
        group="pictures",
        affects=("keyframes", "between"),
    )
    lora: Loras = setting(
        Loras(),
        "a style LoRA fused into Stable Diffusion: a .safetensors file (kohya's or diffusers' layout), a hub "
        "repository or hub file (org/name/file.safetensors), with :WEIGHT (default 1); repeat it for several",
        check=check_loras,
        group="pictures",
        affects=("keyframes", "between"),
    )
    captions: str = setting(
        "none",
        "lyrics on screen: none, line (the sung line) or karaoke (each word lights up as it is sung)",
        choices=CAPTIONS,
        group="video",
        affects=("video",),
    )
    preview: bool = setting(
        False, "keyframes only, crossfaded: a fast first look", group="motion", affects=("between", "video")
    )
    attention_slicing: bool = setting(False, "less GPU memory, a little slower", group="speed", affects=("speed",))
    vae_slicing: bool = setting(False, "decode frames one at a time (less memory)", group="speed", affects=("speed",))
    low_vram: bool = setting(
        False,
        "for small GPUs (8 GB at 512²): slicing, and each model on the GPU only while it runs",
        group="speed",
        affects=("speed",),
    )
    compile: bool = setting(
        False,
        "torch.compile the UNet and VAE decoder for throughput: minutes to start the first time, seconds once "
        "compiled (kept in the user's cache), then faster frames",
        group="speed",
        affects=("speed",),
    )
    deep_cache: int = setting(  # (DeepCache's own runs reused the deep features for up to 4 steps of 5)
        1,
        "the UNet's deep features reused N−1 steps of N: faster, a little different (1: off)",
        low=1,
        high=5,
        group="speed",
        affects=("keyframes", "between"),
    )
    deep_share: int = setting(
        1,
        "neighbouring frames between keyframes share the UNet's deep features: one in N runs them, those between "
        "blend theirs; faster, a little different (1: off)",
        low=1,
        high=8,
        group="speed",
        affects=("between",),
    )
    fast: bool = setting(
        False,
        f"few-step drawing: SD 1.5 with LCM-LoRA without guidance ({options_text(FAST)}, unless given) and the tiny "
        "TAESD decoder; about 7 times faster on a GPU, softer pictures",
        group="pictures",
        affects=("keyframes", "between"),
    )

    def check_together(self) -> None:
        width, height = self.size
        if self.aspect is not None and abs(math.log(width / height / ASPECTS[self.aspect])) > 0.1:
            raise UserError(f"--size {width}x{height} is not {self.aspect}: give --aspect or --size, not both")
        if self.output_fps is not None and abs(self.output_fps / self.fps - round(self.output_fps / self.fps)) > 1e-6:
            raise UserError(
                f"--output-fps {number_text(self.output_fps)} must be a whole multiple of --fps {number_text(self.fps)}, "
                "so that every keyframe falls on a frame of the video"
            )
        if self.output_fps is not None and self.output_fps < self.fps:
            raise UserError(f"--output-fps {number_text(self.output_fps)} is below --fps {number_text(self.fps)}")
        if self.compile and self.low_vram:
            raise UserError("--compile and --low-vram cannot be combined: offloading moves the compiled models")
        if self.reference and self.attention_slicing:
            raise UserError(
                "--attention-slicing cannot be combined with --reference: the adapter's attention has no sliced kind"
            )
        if self.fast and self.steps > FAST_MAX_STEPS:
            raise UserError(f"--fast draws in 1 to {FAST_MAX_STEPS} steps, not {self.steps}")
        if self.output_fps and self.interpolator == "minterpolate" and min(self.size) < MOTION_SEARCH_SIDE:
            raise UserError(
                f"--interpolator minterpolate needs pictures of {MOTION_SEARCH_SIDE} pixels a side at least, not "
                f"{size_text(self.size)}: give --interpolator blend, or a larger --size"
            )
        if max(self.video_size) > H264_MAX_SIDE:
            raise UserError(
                f"a {size_text(self.size)} picture at --resolution {self.resolution} is {size_text(self.video_size)}, "
                f"over the {H264_MAX_SIDE} pixels a side H.264 takes: give a squarer --size or a lower --resolution"
            )

    @property
    def width(self) -> int:
        return self.size[0]

    @property
    def height(self) -> int:
        return self.size[1]

    @property
    def batch(self) -> int:
        """The pictures denoised together: --batch-size, or the memory plan's
        (musicvid.memory.plan.batched_as_planned), or 4."""
        return self.batch_size or DEFAULT_BATCH

    @property
    def picks_by_score(self) -> bool:
        """Whether the keyframes are picked by their scores (--keyframe-candidates over 1, --reroll-below): then the
        scorer is the drawing's model; else a report's, whose scores only inform."""
        return self.keyframe_candidates > 1 or self.reroll_below is not None

    @property
    def video_fps(self) -> float:
        return self.output_fps or self.fps

    @property
    def video_size(self) -> tuple[int, int]:
        """Width × height of the video: the drawn size, or with --resolution the resolution's short side
        and the long side in the picture's shape (--aspect's exact ratio, else the drawn one), even."""
        if self.resolution is None:
            return self.size
        ratio = ASPECTS[self.aspect] if self.aspect else self.width / self.height
        short = RESOLUTIONS[self.resolution]
        long = 2 * round(short * max(ratio, 1 / ratio) / 2)
        return (long, short) if ratio >= 1 else (short, long)

    def outputs(self, video: Path) -> list[Path]:
        """What a render writes outside its work directory: the `video`, its .srt, its .ass with captions."""
        return [video, video.with_suffix(".srt"), *([video.with_suffix(".ass")] if self.captions != "none" else [])]

    def offloads_asked(self, stage: str = "pictures") -> frozenset[str]:
        """The memory switches a person set for a stage (musicvid.memory.plan's names): --attention-slicing,
        --vae-slicing, and --low-vram's (for the pictures both slicings and model offload; for the transitions
        model offload and VAE tiling)."""
        if stage == "transitions":
            return frozenset({"model-offload", "vae-tiling"} if self.low_vram else ())
        low = {"attention-slicing", "vae-slicing", "model-offload"} if self.low_vram else set()
        chosen = {"attention-slicing"} if self.attention_slicing else set()
        return frozenset(low | chosen | ({"vae-slicing"} if self.vae_slicing else set()))


# What `storyboard --keyframes` takes none of (Checked.between_and_after)
BETWEEN_AND_AFTER = RenderSettings.between_and_after()
