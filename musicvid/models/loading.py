"""How models load: the device they run on, one loader per kind of model, and the registry the stages ask.

A loader takes a model's name: a hub repository or file, a local copy, or one of the names the models
built here answer to (MODEL_KINDS, musicvid.models.tiny). A model that cannot be loaded stops the run with one
sentence naming the ways out (ModelUnavailable).
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import torch

from musicvid.errors import UserError
from musicvid.files import file_sha256
from musicvid.models import tiny
from musicvid.models.precision import Precision, half_whisper
from musicvid.models.presets import (
    AUTO_UPSCALER,
    KNOWN_FAMILIES,
    LANCZOS,
    PIPELINE_FAMILIES,
    REAL_ESRGAN,
    TINY,
    ModelSet,
)
from musicvid.settings import Loras
from vipe_core.errors import VipeError
from vipe_core.inference import ViPE

WHISPER_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # both backends' default fallback
# What diffusers writes and looks for (LCM-LoRA's too), and what it wrote before safetensors
LORA_FILES = ("pytorch_lora_weights.safetensors", "pytorch_lora_weights.bin")
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt")
# Pipelines with other style LoRAs or adapters that batch rendering and the page keep loaded besides the one in
# use: each is a copy of Stable Diffusion in memory (2 GB in float16).
DRAWINGS_KEPT = 1


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


class ModelUnavailable(UserError):
    pass


@dataclass(frozen=True)
class Kind:
    """A kind of model: the option that names a local copy, where downloads are cached, and the names
    of the models built here instead of loaded (random weights of the real classes, no download)."""

    flag: str
    cache: str = "HF_HOME"
    built_here: Mapping[str, Callable[[], Any]] = field(default_factory=dict)


MODEL_KINDS = {
    "asr": Kind(
        "--asr-model",
        "the cache in ~/.cache/whisper (openai-whisper) or HF_HOME (faster-whisper)",
        {TINY: tiny.tiny_whisper},
    ),
    "vipe": Kind("--vipe", built_here={TINY: tiny.tiny_vipe}),
    "diffusion": Kind(
        "--diffusion", built_here={name: partial(tiny.local_diffusion, name) for name in tiny.LOCAL_DIFFUSION}
    ),
    "few-step LoRA": Kind("--fast-lora"),  # the tiny one is made for the UNet it adapts: see _fuse_lora
    "style LoRA": Kind("--lora"),
    "reference adapter": Kind("--ip-adapter"),  # the tiny one is made for the UNet it adapts too
    "tiny decoder": Kind("--fast-decoder", built_here={TINY: tiny.tiny_taesd}),
    "separator": Kind("--separator", built_here={TINY: tiny.tiny_demucs}),
    "upscaler": Kind("--upscaler", built_here={TINY: tiny.tiny_upscaler}),
    "video": Kind("--video-model", built_here={TINY: tiny.tiny_ltx_video}),
}


def _reason(error: BaseException) -> str:
    """An error's first line, short enough for a one-sentence message."""
    return (str(error).strip().splitlines() or [type(error).__name__])[0][:160]


def _unavailable(kind: str, name: str, error: BaseException) -> ModelUnavailable:
    """A model that could not be loaded: a download or cache problem names the ways out."""
    ways_out = MODEL_KINDS[kind]
    return ModelUnavailable(
        f"could not load the {kind} model '{name}' ({_reason(error)}); it downloads on first use, so either let "
        f"this machine reach the model hub once, run with --models tiny, pass a local copy with {ways_out.flag} "
        f"PATH, or point {ways_out.cache} at a cache that holds it"
    )


@contextmanager
def _loading(kind: str, name: str) -> Iterator[None]:
    """Every way a load fails (network, cache, format) ends the same way; a UserError says its own sentence."""
    try:
        yield
    except UserError:
        raise
    except Exception as error:
        raise _unavailable(kind, name, error) from None


def _obtain(kind: str, name: str, load: Callable[[], Any]) -> Any:
    """Model `name` of `kind`: built here where MODEL_KINDS says so, else what `load()` loads."""
    build = MODEL_KINDS[kind].built_here.get(name)
    if build is not None:
        return build()
    with _loading(kind, name):
        return load()


# --- ASR -------------------------------------------------------------------------------------------


@dataclass
class ASRModel:
    backend: str
    name: str
    model: Any
    # what Whisper decodes a clip at, each next temperature where the last failed its checks
    temperatures: tuple[float, ...] = WHISPER_TEMPERATURES


def load_asr(backend: str, name: str, device: torch.device, precision: Precision | None = None) -> ASRModel:
    precision = auto_precision(device, precision)
    if backend == "faster-whisper":
        with _loading("asr", name):
            from faster_whisper import WhisperModel

            on = "cuda" if device.type == "cuda" else "cpu"
            model = WhisperModel(name, device=on, compute_type=precision.asr_compute_type)
        return ASRModel(backend, name, model)

    # openai-whisper cannot run on Apple's MPS (its alignment heads are a sparse tensor)
    runs_on = torch.device("cpu") if device.type == "mps" else device

    def load():
        import whisper

        # on the CPU first: loaded straight onto a GPU, its float32 copy and the checkpoint's would sit there
        # together (9.3 GB for large-v2, whose float16 weights are 3.1 GB)
        return whisper.load_model(name, device="cpu")

    model = _obtain("asr", name, load)  # openai-whisper loads float32 weights
    if Precision.resolve(precision.asked, runs_on).asr == torch.float16:
        half_whisper(model)
    model.to(runs_on)
    # A random Whisper fails Whisper's checks at every temperature: falling back would only cost time.
    return ASRModel(backend, name, model, (0.0,) if name == TINY else WHISPER_TEMPERATURES)


# --- ViPE ------------------------------------------------------------------------------------------


def load_vipe(name: str, tokenizer: str | None, device: torch.device, precision: Precision | None = None) -> ViPE:
    dtype = auto_precision(device, precision).compute

    def load():
        try:
            return ViPE.from_pretrained(name, tokenizer, device=device, dtype=dtype)
        except VipeError as error:  # a tokenizer that does not fit the model
            raise UserError(f"{error} (--vipe-tokenizer NAME_OR_DIR)") from None

    vipe = _obtain("vipe", name, load)
    vipe.model.to(device, dtype)
    return vipe


# --- Stable Diffusion ------------------------------------------------------------------------------


def diffusion_family(name: str) -> str:
    """Which family of FAMILIES the diffusion model `name` is of: known for the models named here, else the
    pipeline class its model_index.json names (a hub repository's is fetched alone, a few hundred bytes)."""
    if name in KNOWN_FAMILIES:
        return KNOWN_FAMILIES[name]
    if Path(name).is_file():  # a checkpoint in the original layout, as model sites share them
        raise UserError(
            f"--diffusion {name} is a single file; musicvid loads diffusers' layout (a hub repository, or a folder "
            "with model_index.json): save one with diffusers' from_single_file(FILE).save_pretrained(FOLDER)"
        )
    with _loading("diffusion", name):
        from diffusers import DiffusionPipeline

        pipeline_class = DiffusionPipeline.load_config(name).get("_class_name")
    if pipeline_class not in PIPELINE_FAMILIES:
        raise UserError(
            f"--diffusion {name} is a {pipeline_class}, not a Stable Diffusion 1.x/2.x or SDXL text-to-image model"
        )
    return PIPELINE_FAMILIES[pipeline_class]


def load_diffusion(name: str, device: torch.device, precision: Precision | None = None):
    xl, precision = diffusion_family(name) == "sdxl", auto_precision(device, precision)

    def load():
        from diffusers import StableDiffusionPipeline, StableDiffusionXLPipeline

        # SD's safety checker is not loaded; SDXL's watermark would go on pictures it decodes (ours it does not)
        extra = dict(add_watermarker=False) if xl else dict(safety_checker=None, requires_safety_checker=False)

        def fetch(variant: str | None):
            return (StableDiffusionXLPipeline if xl else StableDiffusionPipeline).from_pretrained(
                name, dtype=precision.compute, variant=variant, **extra
            )

        variant = precision.weights_variant
        try:
            return fetch(variant)
        except (OSError, ValueError):
            if variant is None:
                raise
            return fetch(None)  # a repository without the variant: the full weights, cast on loading

    pipe = _obtain("diffusion", name, load).to(dtype=precision.compute)
    # SDXL's VAE overflows in float16 (its config says force_upcast): it stays in float32, as diffusers'
    # SDXL pipeline casts it for every decode; fp16-fixed VAEs (force_upcast false) and TAESD need not.
    pipe.vae.to(precision.vae(xl and pipe.vae.config.get("force_upcast", False)))
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


def job_pipeline_of(pipe, kind: type | None = None, **components):
    """A pipeline of `kind` (the loaded one's class by default) over the loaded pipeline's modules, with
    `components` in place of some (a job's own sampler): every module shared as it is. diffusers'
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


def weights_file(source: str, kind: str) -> Path:
    """The LoRA file `source` names: a file; a folder or hub repository holding diffusers' file name
    (LORA_FILES, the first there); or a hub file (org/name/folders/file). Downloaded on first use."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    path, parts, flag = Path(source), source.split("/"), MODEL_KINDS[kind].flag
    if path.is_file():
        return path
    if path.is_dir():
        found = [path / name for name in LORA_FILES if (path / name).is_file()]
        if not found:
            raise UserError(f"{flag} {source}: the folder holds no {LORA_FILES[0]}; name the file itself")
        return found[0]
    if len(parts) < 2 or not all(parts) or (path.suffix in WEIGHT_SUFFIXES and len(parts) < 3):
        raise UserError(
            f"{flag} {source} is neither a file nor a hub repository (org/name) or hub file (org/name/file.safetensors)"
        )
    repo, names = "/".join(parts[:2]), ["/".join(parts[2:])] if len(parts) > 2 else LORA_FILES
    with _loading(kind, source):
        for name in names[:-1]:  # a repository may hold the older .bin alone
            try:
                return Path(hf_hub_download(repo, name))
            except (EntryNotFoundError, LocalEntryNotFoundError):
                continue
        return Path(hf_hub_download(repo, names[-1]))


def file_digest(path: Path) -> str:
    """A file's short content hash, read once per version of the file in a process (a LoRA is 10–200 MB)."""
    return file_sha256(path)[:20]


def _fuse_lora(pipe, lora: str) -> None:
    """The few-step LoRA fused into the UNet alone: LCM-LoRA adapts nothing else (and the text
    encoder's loader would say so)."""
    if lora == TINY:  # a random LoRA made for the UNet it adapts, whichever that is
        state, alphas = pipe.lora_state_dict(tiny.random_lora(pipe.unet))
    else:
        file = weights_file(lora, "few-step LoRA")
        state, alphas = pipe.lora_state_dict(str(file.parent), weight_name=file.name)
    pipe.load_lora_into_unet(state, alphas, pipe.unet, _pipeline=pipe)
    pipe.fuse_lora(components=["unet"])
    pipe.unload_lora_weights()  # the fused weights stay; the LoRA's own layers would cost every step


def fuse_style_loras(pipe, loras: Loras) -> None:
    """Style LoRAs (kohya's layout or diffusers') fused into the UNet and text encoder at their weights,
    once: a fused LoRA costs nothing per step."""
    names = []
    for number, lora in enumerate(loras):
        file = weights_file(lora.source, "style LoRA")
        names.append(f"style-{number}")
        not_for_this = f"--lora {lora.source}: {file.name} is not a LoRA of this Stable Diffusion"
        try:  # the file is there: what fails now is the file itself, not a download
            with warnings.catch_warnings():  # peft's, of a second LoRA in one model: what is meant here
                warnings.filterwarnings("ignore", "Already found a `peft_config`")
                pipe.load_lora_weights(str(file.parent), weight_name=file.name, adapter_name=names[-1])
        except Exception as error:
            raise UserError(f"{not_for_this} ({_reason(error)})") from None
        # diffusers loads a file none of whose layers it knows as nothing, with a warning
        if not any(names[-1] in adapters for adapters in pipe.get_list_adapters().values()):
            raise UserError(f"{not_for_this} (none of its layers is one of this model's)")
    pipe.set_adapters(names, adapter_weights=[lora.weight for lora in loras])
    pipe.fuse_lora(adapter_names=names)
    pipe.unload_lora_weights()


def load_reference_adapter(pipe, name: str) -> None:
    """IP-Adapter into the pipeline's UNet, with its image encoder: `name` a hub file whose folder holds
    image_encoder/ (h94/IP-Adapter's layout), or such a local file; tiny: random, made for the UNet."""
    if name == TINY:
        pipe.register_modules(image_encoder=tiny.tiny_image_encoder().to(pipe.device, pipe.dtype))
        adapter = tiny.random_ip_adapter(pipe.unet, pipe.image_encoder.config.projection_dim)
        pipe.load_ip_adapter(adapter, subfolder="", weight_name="", image_encoder_folder=None)
    else:
        file, parts = Path(name), name.split("/")
        if file.is_file():
            where, subfolder, weights = str(file.parent), "", file.name
        elif len(parts) >= 3 and all(parts):
            where, subfolder, weights = "/".join(parts[:2]), "/".join(parts[2:-1]), parts[-1]
        else:
            raise UserError(f"--ip-adapter {name} is neither a file nor a hub file (org/name/folder/file.safetensors)")
        with _loading("reference adapter", name):
            pipe.load_ip_adapter(where, subfolder=subfolder, weight_name=weights)
    # published in float16: the adapter's layers and encoder take the pipeline's own dtype
    pipe.unet.to(pipe.dtype)
    pipe.image_encoder.to(pipe.device, pipe.dtype)


@dataclass(frozen=True)
class Drawing:
    """What a loaded pipeline draws with besides the diffusion model: --fast's LoRA and decoder, style
    LoRAs fused into its weights, the reference pictures' adapter. A registry keeps one pipeline per
    Drawing, so a job that asks for other LoRAs is given another pipeline and never changes the one
    another job draws with."""

    fast: bool = False
    loras: Loras = Loras()
    reference: bool = False

    def key(self, models: ModelSet) -> dict:
        """What the pictures' keys say of it: the models by name, each LoRA by its file's hash and weight."""
        key: dict[str, Any] = {"diffusion": models.drawing(self.fast)}
        if self.loras:
            key["loras"] = [[file_digest(weights_file(x.source, "style LoRA")), x.weight] for x in self.loras]
        if self.reference:
            key["reference adapter"] = models.ip_adapter
        return key


def load_drawing(models: ModelSet, drawing: Drawing, device: torch.device, precision: Precision | None = None):
    """Stable Diffusion with what `drawing` adds: with --fast the few-step LoRA fused into its UNet and
    the tiny decoder as its VAE (TAESD also encodes, for pinned pictures); style LoRAs; IP-Adapter."""
    from diffusers import AutoencoderTiny

    precision = auto_precision(device, precision)
    pipe = load_diffusion(models.diffusion, device, precision)
    if drawing.fast:
        with _loading("few-step LoRA", models.fast_lora):
            _fuse_lora(pipe, models.fast_lora)
        decoder = models.fast_decoder
        vae = _obtain(
            "tiny decoder", decoder, lambda: AutoencoderTiny.from_pretrained(decoder, dtype=precision.compute)
        )
        pipe.vae = vae.to(device, precision.compute)
    if drawing.loras:
        fuse_style_loras(pipe, drawing.loras)
    if drawing.reference:
        load_reference_adapter(pipe, models.ip_adapter)
    return pipe


# --- the video model of --transitions video -------------------------------------------------------

# The pipeline classes an LTX-Video repository's model_index.json may name: one set of components, which
# LTXConditionPipeline loads whichever its repository was saved as (0.9.5's says LTXPipeline).
LTX_PIPELINES = ("LTXPipeline", "LTXImageToVideoPipeline", "LTXConditionPipeline")


def check_video_model(name: str) -> None:
    """Refuse, in one sentence and before any work, a --video-model that is no LTX-Video pipeline (its
    model_index.json alone is read: a hub repository's is fetched alone, a few hundred bytes)."""
    if name in MODEL_KINDS["video"].built_here:
        return
    with _loading("video", name):
        from diffusers import DiffusionPipeline

        pipeline_class = DiffusionPipeline.load_config(name).get("_class_name")
    if pipeline_class not in LTX_PIPELINES:
        raise UserError(
            f"--video-model {name} is a {pipeline_class}; --transitions video draws with LTX-Video "
            f"({', '.join(LTX_PIPELINES)}) in diffusers' layout"
        )


def load_video_model(name: str, device: torch.device, precision: Precision | None = None):
    """LTX-Video as LTXConditionPipeline, which takes a picture for any frame: the keyframes at both ends."""

    def load():  # (a named one's model index was checked when the models were chosen: check_video_model)
        from diffusers import LTXConditionPipeline

        return LTXConditionPipeline.from_pretrained(name, dtype=dtype)

    dtype = auto_precision(device, precision).video
    pipe = _obtain("video", name, load).to(dtype=dtype)
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


# --- Demucs ----------------------------------------------------------------------------------------


def load_separator(name: str, device: torch.device, precision: Precision | None = None):
    """A Demucs bag of models: by name (htdemucs: the hub's adefossez/HTDemucs), or one model's file."""

    def load():
        from demucs.apply import BagOfModels
        from demucs.hf import load_safetensors_model
        from demucs.pretrained import get_model
        from demucs.states import load_model

        file = Path(name)
        if file.suffix in (".safetensors", ".th") and file.is_file():
            return BagOfModels([load_safetensors_model(file) if file.suffix == ".safetensors" else load_model(file)])
        return get_model(name)

    return _obtain("separator", name, load).eval().to(device, auto_precision(device, precision).separator)


# --- upscaler -------------------------------------------------------------------------------------


def load_upscaler(name: str, device: torch.device, auto: str = REAL_ESRGAN, precision: Precision | None = None):
    """A spandrel ImageModelDescriptor, in float16 on a GPU; None for Lanczos alone. `name`: a hub file
    (org/name/file.pth), a local .pth/.safetensors file, tiny, lanczos, or auto (the network `auto` on a
    GPU, Lanczos on the CPU)."""
    if name == AUTO_UPSCALER:
        name = auto if device.type != "cpu" else LANCZOS
    if name == LANCZOS:
        return None
    model = _obtain("upscaler", name, partial(_upscaler_file, name)).eval().to(device)
    return model.to(dtype=auto_precision(device, precision).upscaler(model.supports_half, model.supports_bfloat16))


def _upscaler_file(name: str):
    from huggingface_hub import hf_hub_download
    from spandrel import ModelLoader

    path = Path(name)
    if not path.is_file():
        repo, _, filename = name.rpartition("/")
        if repo.count("/") != 1:
            raise UserError(
                f"--upscaler {name} is neither a file nor a hub file (org/name/file.pth), nor lanczos or auto"
            )
        path = Path(hf_hub_download(repo, filename))
    try:  # a file that is there but holds no upscaler: no download advice, the file is the cause
        return ModelLoader().load_from_file(path)
    except Exception as error:
        raise UserError(f"--upscaler {name}: {path} is not an upscaler spandrel can load ({_reason(error)})") from None
