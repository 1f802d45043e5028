"""How models load: the device they run on, and one loader per kind of model (the registry asks them:
musicvid.models.registry).

A loader takes a model's name: a hub repository or file, a local copy, or one of the names the models
built here answer to (musicvid.models.kinds.MODEL_KINDS, musicvid.models.tiny). A model that cannot be loaded stops
the run with one sentence naming the ways out (musicvid.models.kinds.ModelUnavailable).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch

from musicvid.core.errors import UserError
from musicvid.core.files import check_file
from musicvid.models.families import diffusion_family, video_pipeline
from musicvid.models.internals import demucs_model, demucs_package
from musicvid.models.kinds import as_unavailable, first_line, obtain
from musicvid.models.local_names import check_not_missing
from musicvid.models.precision import HALF_VARIANT, Precision, half_whisper
from musicvid.models.single_file import is_single_file, kind_of, load_single_file, read_header, torch_archive
from musicvid.models.weights_files import silenced, weights_variants
from musicvid.settings.presets import (
    AUTO_UPSCALER,
    FLOW_FAMILIES,
    LANCZOS,
    PIPELINE_FAMILIES,
    REAL_ESRGAN,
    TINY,
)
from vipe_core.errors import VipeError
from vipe_core.guards import impossible_number
from vipe_core.inference import ViPE

WHISPER_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
# A beam of 5 at temperature 0, as Whisper's command line decodes (openai-whisper's own default is greedy):
# on Muldjord's four songs tiny.en's storyboards kept 87 segments where greedy decoding kept 63. The command
# line's best of 5 samples at each temperature it falls back to kept no more (83), at 2.3 times the seconds
# of one sample (benchmarks/results/beam-cpu.json; docs/lyrics.md)
WHISPER_BEAMS = 5
WHISPER_SAMPLES = 1


def resolve_device(device: str = "auto") -> torch.device:
    """auto: CUDA, then Apple's MPS, then the CPU."""
    if device != "auto":
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def auto_precision(device: torch.device, precision: Precision | None) -> Precision:
    """`precision`, or when a caller names none, what --precision auto resolves to on `device`."""
    return precision or Precision.resolve("auto", device)


# --- ASR -------------------------------------------------------------------------------------------


@dataclass
class ASRModel:
    backend: str
    name: str
    model: Any
    # what Whisper decodes a clip at, each next temperature where the last failed its checks
    temperatures: tuple[float, ...] = WHISPER_TEMPERATURES
    beams: int = WHISPER_BEAMS  # the beam at temperature 0 (1: greedy)
    samples: int = WHISPER_SAMPLES  # the samples drawn at each temperature above 0, the best kept
    # faster-whisper's model loaded again from the same files, threads and all: what a decode that may sample
    # runs on (musicvid.lyrics.transcribe.decoder_of)
    fresh: Callable[[], Any] | None = None


def faster_whisper_asr(name: str, device: str, compute_type: str) -> ASRModel:
    """faster-whisper's Whisper `name` (a size, a hub repository or a folder) on `device` ("cpu", "cuda"),
    computing in `compute_type`, and how to load it afresh; a hub name is looked up once."""
    import faster_whisper

    here = Path(name).expanduser()  # (as musicvid.models.asr_files checked it)
    folder = str(here) if here.is_dir() else faster_whisper.download_model(name)
    load = partial(faster_whisper.WhisperModel, folder, device=device, compute_type=compute_type)
    return ASRModel("faster-whisper", name, load(), fresh=load)


def load_asr(backend: str, name: str, device: torch.device, precision: Precision | None = None) -> ASRModel:
    precision = auto_precision(device, precision)
    if backend == "faster-whisper":
        with as_unavailable("asr", name):
            return faster_whisper_asr(name, "cuda" if device.type == "cuda" else "cpu", precision.asr_compute_type)

    # openai-whisper cannot run on Apple's MPS (its alignment heads are a sparse tensor)
    runs_on = torch.device("cpu") if device.type == "mps" else device

    def load():
        import whisper

        # on the CPU first: loaded straight onto a GPU, its float32 copy and the checkpoint's would sit there
        # together (9.3 GB for large-v2, whose float16 weights are 3.1 GB)
        here = Path(name).expanduser()  # (as musicvid.models.asr_files checked it)
        return whisper.load_model(str(here) if here.is_file() else name, device="cpu")

    model = obtain("asr", name, load)  # openai-whisper loads float32 weights
    if Precision.resolve(precision.asked, runs_on).asr == torch.float16:
        half_whisper(model)
    model.to(runs_on)
    # A random Whisper fails Whisper's checks at every temperature: falling back, or a beam, would only cost time.
    if name == TINY:
        return ASRModel(backend, name, model, (0.0,), beams=1, samples=1)
    return ASRModel(backend, name, model)


# --- ViPE ------------------------------------------------------------------------------------------


def load_vipe(name: str, tokenizer: str | None, device: torch.device, precision: Precision | None = None) -> ViPE:
    dtype = auto_precision(device, precision).compute

    def load():
        try:
            with quietly():
                vipe = ViPE.from_pretrained(name, tokenizer, device=device, dtype=dtype)
        except VipeError as error:  # a tokenizer that does not fit the model
            raise UserError(f"{error} (--vipe-tokenizer NAME_OR_DIR)") from None
        # (no header shows it, and sampling from NaN fails mid-storyboard in torch's words)
        if bad := next((n for n, p in vipe.model.named_parameters() if not bool(torch.isfinite(p).all())), None):
            raise UserError(
                f"--vipe {name}: its weights hold NaN or infinite values in {str(dtype).removeprefix('torch.')} "
                f"({bad}): a fine-tune that diverged, or a file damaged"
            )
        return vipe

    vipe = obtain("vipe", name, load)
    vipe.model.to(device, dtype)
    return vipe


# --- Stable Diffusion ------------------------------------------------------------------------------


def pipeline_class(family: str) -> tuple[type, dict]:
    """The diffusers pipeline a family of FAMILIES loads as, with what it loads without: SD's safety checker;
    SDXL's watermark, which would go on pictures it decodes (ours it does not)."""
    import diffusers

    kind = getattr(diffusers, next(kind for kind, of in PIPELINE_FAMILIES.items() if of == family))
    extra = {"sd": dict(safety_checker=None, requires_safety_checker=False), "sdxl": dict(add_watermarker=False)}
    return kind, extra.get(family, {})


def pretrained(kind, name: str, variant: str | None, **kwargs):
    """`kind.from_pretrained(name, **kwargs)` with the weights `variant` asked (None: the full weights), else the
    full weights, else each variant a folder holds them in (a hub name: fp16's): a repository without the variant
    asked, its full weights; a folder of fp16 or bf16 weights alone (as save_pretrained(variant=...) and many hub
    copies keep them), those; either cast on loading. None loading, why the full weights did not."""
    folder = Path(name).expanduser()
    held = weights_variants(folder) if folder.is_dir() else [HALF_VARIANT]
    failure = None
    for each in dict.fromkeys([variant, None, *held]):
        try:
            return kind.from_pretrained(name, variant=each, **kwargs)
        except (OSError, ValueError) as error:
            failure = error if each is None else failure
    raise failure


def load_diffusion(name: str, device: torch.device, precision: Precision | None = None):
    """The picture model `name` (Stable Diffusion, SDXL, Z-Image, FLUX.2 klein): a hub name or a folder in
    diffusers' layout, or a checkpoint file with its family's configs (musicvid.models.single_file). Every module
    is loaded in the family's dtype (a flow-matching pipeline loaded without one meets a bfloat16 text encoder with
    a float32 transformer)."""
    family, precision = diffusion_family(name), auto_precision(device, precision)
    xl, single, dtype = family == "sdxl", is_single_file(name), precision.drawing(family)

    def load():

        kind, extra = pipeline_class(family)
        with quietly():
            if single:
                return load_single_file(kind, family, Path(name).expanduser(), dtype, extra, f"--diffusion {name}")
            variant = None if family in FLOW_FAMILIES else precision.weights_variant  # (theirs: bfloat16 whole)
            return pretrained(kind, name, variant, dtype=dtype, **extra)

    pipe = obtain("diffusion", name, load)
    refuse_empty_tensors(pipe, f"--diffusion {name}")
    with as_unavailable("diffusion", name):  # (a card without room for it: said in one sentence too)
        pipe.to(dtype=dtype)
        # SDXL's VAE overflows in float16 (its config says force_upcast): it stays in float32, as diffusers'
        # SDXL pipeline casts it for every decode; fp16-fixed VAEs (force_upcast false) and TAESD need not.
        if family not in FLOW_FAMILIES:  # (theirs stays in bfloat16, which has float32's range)
            pipe.vae.to(precision.vae(xl and pipe.vae.config.get("force_upcast", False)))
        pipe.set_progress_bar_config(disable=True)
        return pipe.to(device)


def quietly():
    """diffusers' and transformers' logs silenced as a pipeline loads (a failed attempt's error line would come
    before the load that follows it; a failure is said in one sentence: musicvid.models.kinds.obtain), and their
    progress bars where the hub's are off (-q, or a log: musicvid.cli)."""
    from huggingface_hub.utils import are_progress_bars_disabled

    return silenced(bars=are_progress_bars_disabled())


def refuse_empty_tensors(pipe, named: str) -> None:
    """Refuse a pipeline a tensor of which its weights did not hold: diffusers leaves it on the meta device, without
    a value (a checkpoint file missing layers), and only moving it fails."""
    for part, module in pipe.components.items():
        if isinstance(module, torch.nn.Module):
            empty = next((key for key, tensor in module.state_dict().items() if tensor.is_meta), None)
            if empty is not None:
                raise UserError(f"{named} holds no weights for its {part}'s {empty}: it is missing layers")


def pipeline_over(pipe, kind: type | None = None, **components):
    """A pipeline of `kind` (the loaded one's class by default) over the loaded pipeline's modules, with
    `components` in place of some (a render's own sampler): every module shared as it is. diffusers'
    `from_pipe` would cast every module, the shared ones too, to one dtype (float32 unless told): a
    half-precision pipeline drawn in float32, a float32 VAE kept beside a float16 UNet cast down."""
    import inspect

    kind = kind or type(pipe)
    given = {**pipe.components, **components}
    names = [name for name in inspect.signature(kind.__init__).parameters if name != "self"]
    return kind(
        **{
            name: given[name] if name in given else pipe.config[name]
            for name in names
            if name in given or name in pipe.config
        }
    )


# --- the video model of --transitions video -------------------------------------------------------


def load_video_model(name: str, device: torch.device, precision: Precision | None = None):
    """The video model `name` as its family's pipeline that takes a picture for the first and the last frame:
    LTX-Video's LTXConditionPipeline, LTX-2's LTX2ConditionPipeline, Wan's WanImageToVideoPipeline. Every module is
    loaded in the video models' dtype (LTX-2 loaded without one meets a bfloat16 Gemma with float32 connectors)."""

    def load():  # (a named one's model index was checked when the models were chosen: check_video_model)
        with quietly():
            return pretrained(video_pipeline(name), name, None, dtype=dtype)

    dtype = auto_precision(device, precision).video
    pipe = obtain("video", name, load)
    with as_unavailable("video", name):
        pipe.to(dtype=dtype)
        pipe.set_progress_bar_config(disable=True)
        return pipe.to(device)


# --- Demucs ----------------------------------------------------------------------------------------


def load_separator(name: str, device: torch.device, precision: Precision | None = None):
    """A Demucs bag of models: by name (htdemucs: the hub's adefossez/HTDemucs), or one model's file."""
    model = obtain("separator", name, partial(demucs_model, name))
    return model.eval().to(device, auto_precision(device, precision).separator)


SEPARATOR_SUFFIXES = (".th", ".safetensors")  # a Demucs model's file, as demucs.states and demucs.hf read it


def check_separator(name: str) -> None:
    """Refuse, before any work, a --separator path that is not there, a folder, or a file of no Demucs model's suffix
    (or, a safetensors file, whose header says it holds another kind; a .th file, no torch.save's): its load comes first, after the song is
    decoded, and would advise a download, or say `'klass'`. A name is Demucs' (htdemucs), fetched as it loads."""
    path = Path(name).expanduser()
    check_not_missing("--separator", name)
    if path.is_dir():
        raise UserError(f"--separator {name} is a folder: give a Demucs model's name (htdemucs) or its .th file")
    if not path.exists():
        return
    check_file(path, "separator")
    if path.suffix not in SEPARATOR_SUFFIXES:
        raise UserError(f"--separator {name} is no Demucs model's file: it reads {' or '.join(SEPARATOR_SUFFIXES)}")
    if path.suffix == ".safetensors" and (held := kind_of(read_header(path, f"--separator {name}"))):
        raise UserError(f"--separator {name} is not a Demucs model: it holds {held}")
    if path.suffix == ".th":  # (torch.save's: a clone's Git LFS pointer, a page saved in its place, refused)
        torch_archive(path, f"--separator {name}")
        try:  # (read whole now: what a pickle holds is known only by reading it, never by running it)
            package = demucs_package(path)
        except Exception:  # (torch's error is a page of advice on weights_only)
            raise UserError(
                f"--separator {name} holds more than a Demucs model's class, settings and weights, which alone musicvid "
                "reads of a .th: a pickle can run code as it loads (save the model as .safetensors)"
            ) from None
        check_demucs_fits(package, f"--separator {name}")


def check_demucs_fits(package: dict, named: str) -> None:
    """Refuse a Demucs package (demucs_package) whose settings describe a model its weights do not fill: built on
    the meta device (channels 10**6, built for real, was said as this machine's memory running out)."""
    klass, args, kwargs, state = (package.get(key) for key in ("klass", "args", "kwargs", "state"))
    if not (isinstance(klass, type) and isinstance(args, (list, tuple)) and isinstance(kwargs, dict)):
        raise UserError(f"{named} holds no Demucs model's class and settings (klass, args, kwargs)")
    if (bad := impossible_number(kwargs)) is not None:
        raise UserError(f"{named}: its settings' {bad[0]} is {bad[1]}, not a number a model can have")
    try:
        with torch.device("meta"):
            described = klass(*args, **kwargs).state_dict()
    except Exception as error:  # (a setting the class cannot take, in its own words)
        raise UserError(f"{named}: its settings describe no {klass.__name__} ({first_line(error)})") from None
    held = {key: list(tensor.shape) for key, tensor in (state or {}).items() if isinstance(tensor, torch.Tensor)}
    for key, tensor in described.items():
        if held.get(key) != list(tensor.shape):
            has, needs = (" x ".join(map(str, shape)) for shape in (held.get(key, ["none"]), tensor.shape))
            raise UserError(
                f"{named}: its settings describe a {klass.__name__} whose {key} is {needs}, where its weights hold {has}"
            )


# --- upscaler -------------------------------------------------------------------------------------


def load_upscaler(name: str, device: torch.device, auto: str = REAL_ESRGAN, precision: Precision | None = None):
    """A spandrel ImageModelDescriptor, in float16 on a GPU; None for Lanczos alone. `name`: a hub file
    (org/name/file.pth), a local .pth/.safetensors file, tiny, lanczos, or auto (the network `auto` on a
    GPU, Lanczos on the CPU)."""
    if name == AUTO_UPSCALER:
        name = auto if device.type != "cpu" else LANCZOS
    if name == LANCZOS:
        return None
    model = obtain("upscaler", name, partial(_upscaler_file, name)).eval().to(device)
    return model.to(dtype=auto_precision(device, precision).upscaler(model.supports_half, model.supports_bfloat16))


def check_upscaler(name: str) -> None:
    """Refuse, before any work, an --upscaler that is neither a file nor a hub file (org/name/file.pth) nor one of
    musicvid's names: its load comes after the drawing. A file here is loaded now (upscaler_model); a hub file is
    fetched as it loads."""
    if name in (AUTO_UPSCALER, LANCZOS, TINY):
        return
    path = Path(name)
    if path.exists() and not path.is_dir():
        upscaler_model(path, name)
        return
    check_not_missing("--upscaler", name)
    if name.rpartition("/")[0].count("/") != 1:
        named = f"; the name is {name.casefold()}" if name.casefold() in (AUTO_UPSCALER, LANCZOS) else ""
        raise UserError(
            f"--upscaler {name} is neither a file nor a hub file (org/name/file.pth), nor lanczos or auto{named}"
        )


def upscaler_model(path: Path, name: str):
    """The upscaler `path` holds (--upscaler `name`), as spandrel loads it; refused in one sentence where it holds
    none, or weights of NaN or infinite values, which no header shows (every frame came out black, exit 0)."""
    from spandrel import ModelLoader

    check_file(path, "upscaler")  # (a named pipe would hold the read)
    if path.suffix.lower() in (".pth", ".pt"):
        torch_archive(path, f"--upscaler {name}")
    try:  # a file that is there but holds no upscaler: no download advice, the file is the cause
        model = ModelLoader().load_from_file(path)
    except Exception as error:
        raise UserError(
            f"--upscaler {name}: {path} is not an upscaler spandrel can load ({first_line(error)})"
        ) from None
    if bad := next((key for key, t in model.model.state_dict().items() if not bool(torch.isfinite(t).all())), None):
        raise UserError(f"--upscaler {name}: its weights hold NaN or infinite values ({bad}): a damaged file")
    if (model.input_channels, model.output_channels) != (3, 3):  # (a grayscale one failed after the frames)
        raise UserError(
            f"--upscaler {name} makes {model.output_channels}-channel pictures of {model.input_channels}-channel ones, "
            "and frames are RGB: give an upscaler of 3 channels"
        )
    return model


def _upscaler_file(name: str):
    from huggingface_hub import hf_hub_download

    path = Path(name)
    if not path.exists() or path.is_dir():
        check_upscaler(name)  # (a hub file's name, or none)
        repo, _, filename = name.rpartition("/")
        path = Path(hf_hub_download(repo, filename))
    return upscaler_model(path, name)
