"""Settings, defined once. Each field states its default, its help and its limits here; a settings
object checks itself when it is made. The command line's options, the batch's CSV columns and the web
page's controls are all made from (or checked by) these classes:

- SongRequest: what to make a storyboard of, and how (everything before the pictures);
- RenderSettings: how to draw and encode the video, resolved from what a person chose by one function,
  `resolve_render_settings`, whichever front door they chose it at;
- ModelChoice: which models a run loads.

Limits bound the settings that multiply the work (frames per second of song, pixels, steps,
candidates) or the memory (pictures denoised at once); one past them is refused before any work,
with the limit in the message. Contracts: docs/cli.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from musicvid.errors import UserError
from musicvid.models.precision import PRECISIONS
from vipe_core.choose import LENSES

SCHEDULERS = ("dpm++", "ddim")
PACINGS = ("linear", "beats")
CAPTIONS = ("none", "line", "karaoke")
ASPECTS = {"16:9": 16 / 9, "9:16": 9 / 16, "1:1": 1.0, "4:5": 4 / 5}  # landscape video, stories, square, feed
RESOLUTIONS = {"720p": 720, "1080p": 1080, "4k": 2160}  # the video's short side
OUTPUT_RATES = (24, 25, 30, 60)
INTERPOLATORS = ("minterpolate", "blend")  # musicvid.delivery.mux
MOVES = ("none", "zoom", "pan")
TRANSITIONS = ("slerp", "video")  # what draws the frames between keyframes (musicvid.pictures.transitions)
# A look sets several options at once; options given beside it win.
# The music video's frames between are blends: it has no camera move, and between morph frames a blend
# is as close to the truth as motion compensation (48.1 dB both, benchmarks/delivery.py) at 25 times the
# speed; with minterpolate, on one core, the look's delivery made 11 frames/s, with blend 43 (docs/frames.md).
LOOKS = {
    "music-video": dict(
        pacing="beats", output_fps=30.0, interpolator="blend", aspect="16:9", resolution="1080p", captions="karaoke"
    ),
}
# --fast's sampling: LCM-LoRA's own recipe, 4 steps without classifier-free guidance (a guidance of 1
# runs the UNet once per step instead of twice); it draws well in 2 to 8 steps.
FAST = dict(steps=4, guidance=1.0)  # what --fast sets; options given beside it win
FAST_MAX_STEPS = 8
DRAWN_FPS = 10.0  # the paper's rate: what SD draws when only --output-fps is given, or near it
MAX_SONG_SECONDS = 60 * 60  # an hour of song is 36,000 frames at 10 fps, and 230 MB of samples
# Style LoRAs of one render: each is read and fused into the weights on loading, and one set of them is one
# pipeline kept in memory (musicvid.models.loading.Drawing); a handful is what people stack.
MAX_LORAS = 8
LORA_WEIGHTS = (-2.0, 2.0)  # beyond these a LoRA's change swamps the model (negative: its opposite)
TRUE, FALSE = ("true", "yes", "1", "on"), ("false", "no", "0", "off")


def setting(
    default: Any,
    help: str,
    *,
    low=None,
    high=None,
    above=None,
    choices=None,
    check=None,
    step=None,
    option: str | None = "",
    short: str | None = None,
    per_song: bool = True,
) -> Any:
    """A settings field. `low`/`high` bound it (inclusive), `above` from below (exclusive); `check`
    refuses a value by a rule of its own; `step` is the grain a control on the page offers (whole
    numbers for whole-number fields; not a limit: the command line takes any value in bounds);
    `option` is its command-line name (default: the field's name with dashes; None: not an option, as
    for the song itself), `short` a one-letter alias; `per_song` says whether a batch CSV row may set it."""
    meta = dict(
        help=help,
        low=low,
        high=high,
        above=above,
        choices=choices,
        check=check,
        step=step,
        option=option,
        short=short,
        per_song=per_song,
    )
    return field(default=default, metadata=meta)


def parse_size(text: str) -> tuple[int, int]:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--size must look like 512x512, got {text!r}") from None
    return width, height


def check_size(size: tuple[int, int]) -> None:
    width, height = size
    if not (0 < width <= 2048 and 0 < height <= 2048) or width % 8 or height % 8:
        raise UserError(f"--size must be positive multiples of 8 up to 2048x2048, got {width}x{height}")


def size_text(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


def size_for_aspect(aspect: str, near: tuple[int, int]) -> tuple[int, int]:
    """Width × height of the shape `aspect` with about as many pixels as `near`, in the steps SD draws
    best: multiples of 64 (of 8 below 512²). 16:9 near 512x512 is 704x384."""
    ratio, area = ASPECTS[aspect], near[0] * near[1]
    unit = 64 if area >= 512 * 512 else 8

    def misfit(size: tuple[int, int]) -> float:  # log-distance from the pixel count, the shape thrice as much
        return abs(math.log(size[0] * size[1] / area)) + 3 * abs(math.log(size[0] / size[1] / ratio))

    heights = range(unit, 4 * math.isqrt(area) + unit, unit)
    return min(((max(unit, round(h * ratio / unit) * unit), h) for h in heights), key=misfit)


def drawn_fps(output_fps: float) -> float:
    """The rate SD draws at for a video of `output_fps` when none is given: the whole fraction of it
    nearest the paper's 10 (12 for 24, 12.5 for 25, 10 for 30 and 60)."""
    return output_fps / max(1, round(output_fps / DRAWN_FPS))


@dataclass(frozen=True)
class Lora:
    """A style LoRA and the weight it is fused with."""

    source: str  # a .safetensors file, a hub repository (its pytorch_lora_weights.safetensors) or hub file
    weight: float = 1.0

    def __str__(self) -> str:
        return self.source if self.weight == 1 else f"{self.source}:{number_text(self.weight)}"


def parse_lora(text: str) -> Lora:
    """FILE_OR_REPO[:WEIGHT]: a last colon followed by a number gives the weight; any other colon is part of
    the name (C:\\loras\\ink.safetensors)."""
    source, colon, weight = text.strip().rpartition(":")
    try:
        return Lora(source.strip(), float(weight)) if colon and source.strip() else Lora(text.strip())
    except ValueError:
        return Lora(text.strip())


class Loras(tuple):
    """Style LoRAs in the order given. As text (a CSV cell, the page's box): one per line, or separated by
    semicolons."""

    @classmethod
    def parse(cls, text: str) -> Loras:
        return cls(parse_lora(part) for part in text.replace(";", "\n").splitlines() if part.strip())

    def __str__(self) -> str:
        return "\n".join(map(str, self))


def check_loras(loras: Loras) -> None:
    if len(loras) > MAX_LORAS:
        raise UserError(f"--lora may be given at most {MAX_LORAS} times, not {len(loras)}")
    low, high = LORA_WEIGHTS
    for lora in loras:
        if not lora.source:
            raise UserError("--lora needs a file or a hub repository before its :WEIGHT")
        if not low <= lora.weight <= high:
            raise UserError(
                f"--lora {lora.source}: its weight must be from {number_text(low)} to {number_text(high)}, "
                f"got {number_text(lora.weight)}"
            )


def parse_bool(text: str) -> bool:
    if text.strip().lower() not in TRUE + FALSE:
        raise argparse.ArgumentTypeError(f"must be yes or no (true/false, 1/0), not {text!r}")
    return text.strip().lower() in TRUE


class Settings:
    """What both settings classes share: checking on construction, and their options and columns."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            check_field(f, getattr(self, f.name))
        self.check_together()

    def check_together(self) -> None:
        """Rules between fields (a class adds its own)."""

    @classmethod
    def fields(cls) -> dict[str, dataclasses.Field]:
        return {f.name: f for f in dataclasses.fields(cls)}

    @classmethod
    def options(cls) -> dict[str, dataclasses.Field]:
        """Fields that are command-line options, by option name (`--context-size` -> "context-size")."""
        return {option_name(f): f for f in dataclasses.fields(cls) if f.metadata.get("option") is not None}

    @classmethod
    def add_options(cls, parser: argparse.ArgumentParser, skip: tuple[str, ...] = ()) -> None:
        """One option per field; left out, an option is None, so that given values can be told apart."""
        for name, f in cls.options().items():
            if f.name in skip:
                continue
            kind, help = field_type(cls, f.name), f.metadata["help"]
            if (
                isinstance(f.default, (int, float, str))
                and not isinstance(f.default, bool)
                and f.default != ""
                and "default" not in help
            ):
                help += f" (default: {number_text(f.default)})"
            names = [f"-{f.metadata['short']}"] if f.metadata["short"] else []
            if kind is Loras:  # repeatable: one option per LoRA
                parser.add_argument(
                    f"--{name}",
                    dest=f.name,
                    action="append",
                    type=parse_lora,
                    default=None,
                    metavar="FILE_OR_REPO[:WEIGHT]",
                    help=help,
                )
            elif kind is bool:
                action = argparse.BooleanOptionalAction if f.default else "store_const"
                extra = {} if f.default else {"const": True}
                parser.add_argument(*names, f"--{name}", dest=f.name, action=action, default=None, help=help, **extra)
            else:
                parser.add_argument(
                    *names,
                    f"--{name}",
                    dest=f.name,
                    type=PARSERS.get(kind, kind),
                    default=None,
                    choices=f.metadata["choices"],
                    metavar=None if f.metadata["choices"] else name.upper().replace("-", "_"),
                    help=help,
                )

    @classmethod
    def given(cls, args: argparse.Namespace) -> dict[str, Any]:
        """The values a person gave for this class's fields, by field name."""
        given = {name: getattr(args, name) for name in cls.fields() if getattr(args, name, None) is not None}
        return {name: Loras(value) if isinstance(value, list) else value for name, value in given.items()}

    @classmethod
    def column(cls, column: str) -> dataclasses.Field | None:
        """The field a batch CSV column names, by its option's name or its own."""
        name = column.strip().replace("-", "_")
        name = next((f.name for o, f in cls.options().items() if o.replace("-", "_") == name), name)
        return cls.fields().get(name)

    @classmethod
    def parse(cls, name: str, text: str, base: Path) -> Any:
        """A field's value from text (a CSV cell), checked against the field's limits; relative paths are
        relative to `base`."""
        kind = field_type(cls, name)
        try:
            value = PARSERS.get(kind, kind)(text.strip())
        except (ValueError, argparse.ArgumentTypeError) as error:
            what = {int: "a whole number", float: "a number"}.get(kind)
            raise UserError(
                f"{name.replace('_', '-')} must be {what}, not {text!r}"
                if what
                else f"{name.replace('_', '-')} {error}"
            ) from None
        check_field(cls.fields()[name], value)  # in the sentence a bad option gets
        if kind is Loras:  # a LoRA file beside the CSV, as its other paths; else a hub name as given
            return Loras(Lora(str(base / x.source), x.weight) if (base / x.source).is_file() else x for x in value)
        return base / value if kind is Path and not value.is_absolute() else value


PARSERS = {bool: parse_bool, tuple: parse_size, Path: Path, Loras: Loras.parse}


def option_name(f: dataclasses.Field) -> str:
    return f.metadata.get("option") or f.name.replace("_", "-")


@cache
def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def field_type(cls, name: str) -> type:
    """A field's type, `X | None` read as X and tuple[...] as tuple."""
    hint = _hints(cls)[name]
    kinds = [t for t in typing.get_args(hint) or (hint,) if t is not type(None)]
    kind = kinds[0] if typing.get_origin(hint) is not tuple else hint
    return typing.get_origin(kind) or kind


def number_text(value) -> str:
    """A value as messages and the page write it: 30 for 30.0, 12.5 as it is."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def check_field(f: dataclasses.Field, value: Any) -> None:
    """One field against its limits; NaN fails every comparison, so it is refused too."""
    meta, name = f.metadata, f"--{option_name(f)}"
    if not meta or value is None:
        return
    low, high, above, choices = meta["low"], meta["high"], meta["above"], meta["choices"]
    if meta["check"] is not None:
        meta["check"](value)
    if choices is not None and value not in choices:
        raise UserError(f"{name} must be one of {', '.join(map(number_text, choices))}, not {number_text(value)!r}")
    if above is not None and not (value > above and (high is None or value <= high)):
        at_most = f" and at most {number_text(high)}" if high is not None else ""
        raise UserError(f"{name} must be above {number_text(above)}{at_most}, got {number_text(value)}")
    if low is not None and not (low <= value and (high is None or value <= high)):
        bounds = (
            f"from {number_text(low)} to {number_text(high)}" if high is not None else f"{number_text(low)} or more"
        )
        raise UserError(f"{name} must be {bounds}, got {number_text(value)}")


@dataclass(frozen=True)
class SongRequest(Settings):
    """What to make a storyboard of, and how: everything before the pictures."""

    song: Path = setting(
        dataclasses.MISSING,
        "audio file (mp3, wav, flac, m4a, ogg, ... anything ffmpeg reads)",
        option=None,
        per_song=False,
    )
    title: str | None = setting(None, "song title (default: the file's tags, then its name)")
    artist: str | None = setting(None, "artist (default: the file's tags)")
    workdir: Path | None = setting(None, "work directory (default musicvid-work/<song>-<hash>/)", per_song=False)
    storyboard_file: Path | None = setting(
        None, "render this (edited) storyboard.json instead of making one", option="storyboard"
    )
    lyrics_file: Path | None = setting(
        None,
        "the lyrics: timed (.lrc, .srt, transcript .json; skips Whisper) or plain lines (.txt; Whisper times them)",
        option="lyrics",
    )
    context_size: int = setting(
        7, "lyric lines before each line that ViPE reads (ViPE learned up to 7)", low=0, high=16
    )
    seed: int = setting(0, "seed for prompts and pictures", low=0, high=2**31 - 1)
    break_seconds: float = setting(
        4.0, "instrumental gaps at least this long (s) become scenes of their own", above=0, option="break"
    )
    candidates: int = setting(
        1, "ViPE elaborations per scene; the most concrete (or the one --lens favours) is kept", low=1, high=64
    )
    lens: str | None = setting(None, "the reading of each line the choice among --candidates favours", choices=LENSES)
    separate_vocals: bool = setting(
        False, "take the band away (Demucs htdemucs) before Whisper listens: for loud mixes"
    )
    overwrite: bool = setting(
        False,
        "replace files at the outputs' names that musicvid did not write for this song (a hand-made .srt, "
        "another song's video); without it they are refused before any work",
        per_song=False,
    )
    quiet: bool = setting(False, "no progress bars", short="q", per_song=False)
    max_seconds: float = setting(
        MAX_SONG_SECONDS, "longer songs are refused before they are decoded", above=0, option=None, per_song=False
    )

    def check_together(self) -> None:
        if self.lens is not None and self.candidates < 2:
            raise UserError("--lens chooses among several elaborations: add --candidates N (2 or more, e.g. 8)")


@dataclass(frozen=True)
class RenderSettings(Settings):
    """How to draw the pictures and encode the video."""

    # what changes only the frames between keyframes or the video, never a keyframe
    BETWEEN_AND_AFTER: ClassVar[tuple[str, ...]] = (
        "fps", "output_fps", "interpolator", "resolution", "pacing", "motion", "pulse", "align", "align_chunk",
        "captions", "preview", "transitions", "transition_steps",
    )  # fmt: skip

    look: str | None = setting(
        None,
        "a set of options that suits a kind of video; options given beside it win. music-video: on the beat "
        "(--pacing beats), 30 fps, 16:9, 1080p, karaoke lyrics",
        choices=tuple(LOOKS),
    )
    fps: float = setting(
        DRAWN_FPS, "frames per second that Stable Diffusion draws (default 10, as in the paper)", low=1, high=60
    )
    output_fps: float | None = setting(
        None,
        "frames per second of the video: the frames between the drawn ones are synthesised (--interpolator); "
        "a whole multiple of --fps, which then defaults to the multiple nearest 10 (12 for 24, 10 for 30)",
        choices=OUTPUT_RATES,
    )
    interpolator: str = setting("minterpolate", "what synthesises the frames for --output-fps", choices=INTERPOLATORS)
    size: tuple[int, int] = setting(
        (512, 512),
        "WxH, multiples of 8 up to 2048x2048 (default: the models', 512x512 for SD 1.5, 1024x1024 for SDXL)",
        check=check_size,
    )
    aspect: str | None = setting(
        None,
        "the picture's shape: 16:9, 9:16, 1:1 or 4:5, at about the models' pixel count (704x384 for 16:9 with SD 1.5)",
        choices=tuple(ASPECTS),
    )
    resolution: str | None = setting(
        None,
        "upscale the video to 720p, 1080p or 4k (its short side), by --upscaler (default: the drawn size)",
        choices=tuple(RESOLUTIONS),
    )
    steps: int = setting(25, "denoising steps (default: the models', 25 for SD 1.5)", low=1, high=150)
    guidance: float = setting(7.5, "classifier-free guidance scale", low=0, high=30, step=0.5)
    scheduler: str = setting("dpm++", "deterministic sampler", choices=SCHEDULERS)
    batch_size: int = setting(4, "frames denoised together", low=1, high=64)
    pacing: str = setting(
        "linear",
        "how each morph moves: linear (evenly, the paper's) or beats (on the song's beats and onsets)",
        choices=PACINGS,
    )
    motion: str = setting(
        "none",
        "a slow camera move over each scene that leaves each keyframe as drawn: none, zoom or pan",
        choices=MOVES,
    )
    pulse: float = setting(0.0, "a small zoom on strong beats, 0 (none) to 1", low=0, high=1, step=0.1)
    transitions: str = setting(
        "slerp",
        "what draws the frames between keyframes: slerp (the paper's morph through text and noise) or video (a "
        "video model, LTX-Video, drawing motion from each keyframe to the next)",
        choices=TRANSITIONS,
    )
    transition_steps: int = setting(
        40, "denoising steps of --transitions video (default: the video model's, 40 for LTX-Video)", low=1, high=100
    )
    align: bool = setting(True, "Chunked Similarity Alignment of the text embeddings (--no-align: plain slerp)")
    align_chunk: int = setting(4, "rows per chunk for the alignment", low=1, high=76)
    style: str = setting("", "text appended to every prompt, e.g. 'oil painting'")
    negative_prompt: str = setting("", "what the pictures should not show")
    reference: Path | None = setting(
        None,
        "a picture whose look every keyframe takes (IP-Adapter): a character, a face, a palette; a scene of the "
        "storyboard may name its own",
    )
    reference_strength: float = setting(
        0.6, "how strongly the reference picture steers the pictures: 0 not at all, 1 most", low=0, high=1, step=0.05
    )
    lora: Loras = setting(
        Loras(),
        "a style LoRA fused into Stable Diffusion: a .safetensors file (kohya's or diffusers' layout), a hub "
        "repository or hub file (org/name/file.safetensors), with :WEIGHT (default 1); repeat it for several",
        check=check_loras,
    )
    captions: str = setting(
        "none",
        "lyrics on screen: none, line (the sung line) or karaoke (each word lights up as it is sung)",
        choices=CAPTIONS,
    )
    preview: bool = setting(False, "keyframes only, crossfaded: a fast first look")
    attention_slicing: bool = setting(False, "less GPU memory, a little slower")
    vae_slicing: bool = setting(False, "decode frames one at a time (less memory)")
    low_vram: bool = setting(
        False, "for small GPUs (8 GB at 512²): slicing, and each model on the GPU only while it runs"
    )
    compile: bool = setting(
        False, "torch.compile the UNet and VAE decoder: a minute or more to start, then faster frames"
    )
    fast: bool = setting(
        False,
        "few-step drawing: SD 1.5 with LCM-LoRA in 4 steps without guidance (so --steps 4, --guidance 1 "
        "unless given) and the tiny TAESD decoder; about 10 times faster, softer pictures",
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

    @property
    def width(self) -> int:
        return self.size[0]

    @property
    def height(self) -> int:
        return self.size[1]

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

    def picture_inputs(self, drawing: dict) -> dict:
        """What every picture depends on besides its own prompts, seeds, reference pictures and t; `drawing`:
        the models that draw them (musicvid.models.loading.Drawing.key)."""
        keys = ("steps", "guidance", "scheduler", "style", "negative_prompt")
        keys += ("reference_strength",) * ("reference adapter" in drawing)
        values = {k: v for k, v in dataclasses.asdict(self).items() if k in keys}
        return {**drawing, "width": self.width, "height": self.height, **values}


def resolve_render_settings(models, *given: Mapping[str, Any]) -> RenderSettings:
    """The settings of a render from layers, each over the ones before it — the one way the command
    line, a batch's CSV row and the page turn what a person chose into settings:

    1. each field's default;
    2. the models' picture size and steps (`models`: a ModelSet, or anything with a size, steps and
       transition_steps);
    3. the look's options (the look the last layer names), then --fast's steps and guidance;
    4. each layer of `given`, in order: what a person chose (the command line, then a CSV row over it;
       on the page, the controls the person changed from what the page showed).

    A value of None in a layer chooses nothing. Size and aspect both say the picture's shape: a layer's
    aspect without a size makes the size that shape at about the pixel count of the layers under it, and
    a layer's size without an aspect takes the place of an aspect under it. Where no layer gives a drawn
    rate, an output rate's is the whole fraction of it nearest 10. Each value chosen is checked against
    its limits before anything is made from it; the settings made check how they go together."""
    fields = RenderSettings.fields()
    chosen = [{name: value for name, value in layer.items() if value is not None} for layer in given]
    for layer in chosen:
        for name, value in layer.items():
            check_field(fields[name], value)
    top = {name: value for layer in chosen for name, value in layer.items()}  # each field as the top layer has it
    models_look_fast = [
        {"size": tuple(models.size), "steps": models.steps, "transition_steps": models.transition_steps},
        LOOKS.get(top.get("look"), {}),
        FAST if top.get("fast") else {},
    ]
    values: dict[str, Any] = {}
    for layer in [*models_look_fast, *chosen]:
        values.update(layer)
        if "aspect" in layer and "size" not in layer:
            values["size"] = size_for_aspect(layer["aspect"], values["size"])
        elif "size" in layer and "aspect" not in layer:
            values.pop("aspect", None)
    if values.get("output_fps") and "fps" not in top:
        values["fps"] = drawn_fps(values["output_fps"])
    return RenderSettings(**values)


@dataclass(frozen=True)
class ModelChoice(Settings):
    """Which models: one set for every song of a run (a batch, the page load them once)."""

    models: str = setting(
        "default",
        "model preset: default (the paper's, SD 1.5), sdxl, or tiny and tiny-xl (offline, random)",
        per_song=False,
    )
    asr: str | None = setting(
        None, "speech recognition backend", choices=("openai-whisper", "faster-whisper"), per_song=False
    )
    asr_model: str | None = setting(
        None, "Whisper model name or local checkpoint / CTranslate2 directory", per_song=False
    )
    vipe: str | None = setting(
        None, "ViPE model name or directory (e.g. one trained with `vipe train`)", per_song=False
    )
    vipe_tokenizer: str | None = setting(
        None,
        "tokenizer for --vipe (default: the checkpoint's own, else GPT-2 Medium's as for the released ViPE)",
        per_song=False,
    )
    diffusion: str | None = setting(
        None,
        "Stable Diffusion 1.x or SDXL model: a hub repository or directory in diffusers' layout (an SDXL one "
        "brings SDXL's size, --fast models and IP-Adapter)",
        per_song=False,
    )
    separator: str | None = setting(
        None, "Demucs model for --separate-vocals: a name (htdemucs), or a .th/.safetensors file", per_song=False
    )
    upscaler: str | None = setting(
        None,
        "upscaler for --resolution: a hub file (org/name/file.pth), a .pth/.safetensors file, lanczos, or auto "
        "(the default: Real-ESRGAN x4plus on a GPU, Lanczos on the CPU)",
        per_song=False,
    )
    fast_lora: str | None = setting(
        None,
        "few-step LoRA for --fast (default: latent-consistency/lcm-lora-sdv1-5, for SDXL lcm-lora-sdxl)",
        per_song=False,
    )
    fast_decoder: str | None = setting(
        None,
        "tiny decoder for --fast, an AutoencoderTiny (default: madebyollin/taesd, for SDXL taesdxl)",
        per_song=False,
    )
    ip_adapter: str | None = setting(
        None,
        "IP-Adapter for --reference: a hub file or a local file with the image encoder in an image_encoder/ "
        "folder beside it (default: h94/IP-Adapter/models/ip-adapter_sd15.safetensors, for SDXL "
        "sdxl_models/ip-adapter_sdxl.safetensors)",
        per_song=False,
    )
    video_model: str | None = setting(
        None,
        "the video model of --transitions video: an LTX-Video repository or folder in diffusers' layout (default: "
        "Lightricks/LTX-Video-0.9.5)",
        per_song=False,
    )
    device: str = setting("auto", "auto (CUDA, MPS, CPU), cuda, mps or cpu", per_song=False)
    precision: str = setting(
        "auto",
        "the models' dtype: auto (float16 on CUDA, LTX-Video in bfloat16; float32 elsewhere), float32, float16 or "
        "bfloat16; a model that cannot run in it keeps its own (SDXL's VAE float32 in float16, musicvid.models."
        "precision)",
        choices=PRECISIONS,
        per_song=False,
    )

    def check_upscaler_used(self, songs: Iterable[RenderSettings]) -> None:
        """--upscaler is the model of --resolution: naming one where no song of the run has a resolution
        (a render's, or any row's of a batch) would do nothing."""
        if self.upscaler is not None and not any(settings.resolution for settings in songs):
            raise UserError("--upscaler only acts with --resolution (720p, 1080p or 4k): give both, or neither")

    def model_set(self):
        from musicvid.models.presets import choose_models

        return choose_models(
            self.models,
            asr_backend=self.asr,
            asr=self.asr_model,
            vipe=self.vipe,
            vipe_tokenizer=self.vipe_tokenizer,
            diffusion=self.diffusion,
            separator=self.separator,
            upscaler=self.upscaler,
            fast_lora=self.fast_lora,
            fast_decoder=self.fast_decoder,
            ip_adapter=self.ip_adapter,
            video=self.video_model,
        )

    def registry(self, keep_loaded: bool = False):
        from musicvid.models.registry import ModelRegistry

        return ModelRegistry(self.model_set(), self.device, keep_loaded, self.precision)
