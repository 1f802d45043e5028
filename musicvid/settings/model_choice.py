"""Which models a run loads, as a person chose them: one set for every song of a run (a batch and the page load
them once). musicvid.models.choose turns a choice into the models and the registry that loads them."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from musicvid.core.errors import UserError, either, number_text
from musicvid.settings.front_doors import Settings
from musicvid.settings.geometry import RESOLUTIONS
from musicvid.settings.presets import (
    ASR_BACKENDS,
    AUTO_UPSCALER,
    FAMILIES,
    LANCZOS,
    LTX2,
    PRECISIONS,
    PRESETS,
    WAN_FLF2V,
)
from musicvid.settings.render import RenderSettings
from musicvid.settings.schema import setting

DEVICE_KINDS = ("cpu", "cuda", "mps")  # the kinds of torch device musicvid runs on
DEFAULT_GPU_GB = 24.0  # the card `musicvid plan` plans for where there is no CUDA device and no --gpu-memory

# The help names the default preset's models and those made for SDXL from the presets, not from a copy of them.
DEFAULT, SD, SDXL = PRESETS["default"], FAMILIES["sd"], FAMILIES["sdxl"]


def devices_here() -> list[str]:
    """The --device values this machine runs models on."""
    import torch  # here, not above: --help and the settings' import stay without torch

    cuda = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []
    mps = ["mps"] if torch.backends.mps.is_available() else []
    return ["auto", "cpu", *(["cuda"] if cuda else []), *cuda[1:], *mps]


def check_device(device: str) -> None:
    """--device: auto, or a device torch reads of a kind musicvid runs on (CPU, CUDA, MPS). Whether this machine
    has it is check_device_here's: a Ray cluster's head may lack the GPUs its workers have."""
    if device == "auto":
        return
    import torch

    try:
        kind = torch.device(device).type
    except RuntimeError:
        kind = None
    if kind not in DEVICE_KINDS:
        raise UserError(f"--device {device} is not a device musicvid runs on: auto, cpu, cuda, cuda:N or mps")


def check_device_here(device: str) -> None:
    """--device names a device this machine has: refused before the first model's load rather than by torch at it,
    after the transcript."""
    if device == "auto":
        return
    import torch

    on = torch.device(device)
    if on.type == "cpu":
        return
    if on.type == "cuda" and torch.cuda.is_available() and (on.index or 0) < torch.cuda.device_count():
        return
    if on.type == "mps" and torch.backends.mps.is_available():
        return
    raise UserError(f"--device {device} is not a device here; this machine has {', '.join(devices_here())}")


@dataclass(frozen=True)
class ModelChoice(Settings):
    """Which models: one set for every song of a run (a batch, the page load them once)."""

    models: str = setting(
        "default",
        f"model preset, one of {', '.join(PRESETS)}: default is the paper's ({DEFAULT.diffusion}), sdxl draws with "
        f"{PRESETS['sdxl'].diffusion}, zimage with {PRESETS['zimage'].diffusion}, klein with "
        f"{PRESETS['klein'].diffusion}; the tiny ones are small random models that run offline",
        per_song=False,
        group="models",
        affects=("storyboard", "keyframes", "between", "video"),
    )
    asr: str | None = setting(
        None,
        "speech recognition backend",
        choices=ASR_BACKENDS,
        per_song=False,
        group="models",
        affects=("storyboard",),
    )
    asr_model: str | None = setting(
        None,
        "Whisper model name or local checkpoint / CTranslate2 directory",
        per_song=False,
        group="models",
        affects=("storyboard",),
    )
    vipe: str | None = setting(
        None,
        "ViPE model name or directory (e.g. one trained with `vipe train`)",
        per_song=False,
        group="models",
        affects=("storyboard",),
    )
    vipe_tokenizer: str | None = setting(
        None,
        "tokenizer for --vipe (default: the checkpoint's own, else GPT-2 Medium's as for the released ViPE)",
        per_song=False,
        group="models",
        affects=("storyboard",),
    )
    diffusion: str | None = setting(
        None,
        "picture model (Stable Diffusion 1.x, SDXL, Z-Image or FLUX.2 klein): a hub repository or directory in "
        "diffusers' layout, or an SD 1.x, SDXL, Z-Image or klein checkpoint file (.safetensors) with its family's "
        "configs; another family's model brings its size, steps and guidance, and for SDXL its --fast models and IP-Adapter",
        per_song=False,
        group="models",
        affects=("keyframes", "between"),
    )
    separator: str | None = setting(
        None,
        f"Demucs model for --separate-vocals: a name ({DEFAULT.separator}), or a .th/.safetensors file",
        per_song=False,
        group="models",
        affects=("storyboard",),
    )
    upscaler: str | None = setting(
        None,
        f"upscaler for --resolution: a hub file (org/name/file.pth), a .pth/.safetensors file, {LANCZOS}, or "
        f"{AUTO_UPSCALER} (the default: {DEFAULT.auto_upscaler} on a GPU, with --fast {DEFAULT.fast_upscaler}; "
        "Lanczos on the CPU)",
        per_song=False,
        group="models",
        affects=("video",),
    )
    fast_lora: str | None = setting(
        None,
        f"few-step LoRA for --fast (default: {SD.fast_lora}, for SDXL {SDXL.fast_lora})",
        per_song=False,
        group="models",
        affects=("keyframes", "between"),
    )
    fast_decoder: str | None = setting(
        None,
        f"tiny decoder for --fast, an AutoencoderTiny (default: {SD.fast_decoder}, for SDXL {SDXL.fast_decoder})",
        per_song=False,
        group="models",
        affects=("keyframes", "between"),
    )
    ip_adapter: str | None = setting(
        None,
        "IP-Adapter for --reference: a hub file or a local file with the image encoder in an image_encoder/ "
        f"folder beside it (default: {SD.ip_adapter}, for SDXL {SDXL.ip_adapter})",
        per_song=False,
        group="models",
        affects=("keyframes", "between"),
    )
    video_model: str | None = setting(
        None,
        "the video model of --transitions video, drawing from a keyframe to the next: an LTX-Video, LTX-2 or Wan 2.1 "
        f"FLF2V repository or folder in diffusers' layout, which brings its steps (default: {DEFAULT.video}; "
        f"{LTX2} and {WAN_FLF2V} are the others')",
        per_song=False,
        group="models",
        affects=("between",),
    )
    scorer: str | None = setting(
        None,
        "the model that scores how well each keyframe shows its lyric and prompt: a CLIP-family model (CLIPModel), "
        f"a hub repository or folder (default: {DEFAULT.scorer}; PickScore's works too)",
        per_song=False,
        group="models",
        affects=("nothing",),
    )
    device: str = setting(
        "auto",
        "auto (CUDA, MPS, CPU), cuda, mps or cpu",
        check=check_device,
        per_song=False,
        group="speed",
        affects=("speed",),
    )
    precision: str = setting(
        "auto",
        "the models' dtype: auto (float16 on CUDA, LTX-Video in bfloat16; float32 elsewhere), float32, float16 or "
        "bfloat16; a model that cannot run in it keeps its own (SDXL's VAE float32 in float16, musicvid.models."
        "precision)",
        choices=PRECISIONS,
        per_song=False,
        group="speed",
        # ViPE's and the ASR model's dtype are recorded with the storyboard and the transcript
        # (musicvid.storyboard.make), the pictures' in their keys (Drawing.key)
        affects=("storyboard", "keyframes", "between"),
    )

    def check_together(self) -> None:
        """A model option given empty ("" or spaces) names no model: refused, not read as left out (choose_models
        would take the preset's, and `score --scorer ""` another scorer than the render's)."""
        for name in MODEL_OPTIONS:
            value = getattr(self, name)
            if isinstance(value, str) and not value.strip():
                raise UserError(f"--{name.replace('_', '-')} is empty: give a model's name or folder, or leave it out")

    def check_used(self, songs: Iterable[RenderSettings], separating: bool) -> None:
        """A model option names the model of another option: naming one where no song of the run (a render's, or
        any row's of a batch) has that option would do nothing, and a person who meant the other would not know.
        `separating`: whether a song of the run takes the band away (--separate-vocals)."""
        songs = list(songs)
        for option, acts, needs in (
            ("separator", lambda song: separating, "--separate-vocals"),
            ("upscaler", lambda song: song.resolution, f"--resolution ({either(RESOLUTIONS)})"),
            ("video_model", lambda song: song.transitions == "video", "--transitions video"),
            ("fast_lora", lambda song: song.fast, "--fast"),
            ("fast_decoder", lambda song: song.fast, "--fast"),
        ):
            if getattr(self, option) is not None and not any(acts(song) for song in songs):
                raise UserError(f"--{option.replace('_', '-')} only acts with {needs}: give both, or neither")


# The options that name a model by any name (--models and --asr take one of their choices: refused by those).
MODEL_OPTIONS = tuple(
    f.name
    for f in ModelChoice.fields().values()
    if f.metadata["group"] == "models" and f.metadata["choices"] is None and f.name != "models"
)


def check_gpu_memory(gpu_memory: float | None) -> None:
    """`musicvid plan --gpu-memory GB`: a number of GB above 0, where given."""
    if gpu_memory is not None and not (math.isfinite(gpu_memory) and gpu_memory > 0):  # (NaN fails both)
        raise UserError(f"--gpu-memory must be a number of GB above 0, got {number_text(gpu_memory)}")
