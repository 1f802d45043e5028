"""What a loaded Stable Diffusion draws with besides its own weights: --fast's few-step LoRA and tiny
decoder, style LoRAs fused into its weights, the reference pictures' adapter (IP-Adapter); the `Drawing`
a pipeline is loaded for, and the files those name."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch

from musicvid.core.errors import UserError
from musicvid.core.files import check_file, file_sha256, weights_identity
from musicvid.models import tiny
from musicvid.models.families import diffusion_family, video_family
from musicvid.models.kinds import MODEL_KINDS, as_unavailable, first_line, obtain
from musicvid.models.loading import auto_precision, load_diffusion, pretrained, quietly
from musicvid.models.local_names import WEIGHT_SUFFIXES, cached_file, check_not_missing, refuse_offline
from musicvid.models.lora_files import (
    PEFT_PREFIX,
    adapted_family,
    check_adapter,
    check_image_encoder,
    check_lora,
    encoder_folder,
    image_encoder_of,
    text_width,
)
from musicvid.models.pipeline_files import check_fast_decoder, check_picture_model, check_video_model_files
from musicvid.models.precision import Precision
from musicvid.models.single_file import SUFFIX, read_header
from musicvid.models.weights_files import silenced
from musicvid.settings.geometry import drawn_size, size_text
from musicvid.settings.loras import Loras
from musicvid.settings.presets import (
    FAMILIES,
    FAMILY_NAMES,
    FLOW_FAMILIES,
    IN_CONTEXT_REFERENCES,
    TINY,
    VIDEO_FAMILIES,
    VIDEO_FAMILY_NAMES,
    ModelSet,
)
from musicvid.settings.render import RenderSettings

# What diffusers writes and looks for (LCM-LoRA's too), and what it wrote before safetensors
LORA_FILES = ("pytorch_lora_weights.safetensors", "pytorch_lora_weights.bin")
PEFT_LORA_FILE = "adapter_model.safetensors"  # what peft's save_pretrained writes, its adapter_config.json beside
PEFT_CONFIG = "adapter_config.json"
# Pipelines with other style LoRAs or adapters that batch rendering and the page keep loaded besides the one in
# use: each is a copy of Stable Diffusion in memory (2 GB in float16).
DRAWINGS_KEPT = 1


def weights_file(source: str, kind: str, download: bool = True) -> Path | None:
    """The LoRA file `source` names: a file; a folder or hub repository holding diffusers' file name
    (LORA_FILES, the first there; a folder peft's too); or a hub file (org/name/folders/file). Downloaded on first use; without
    `download`, None for a hub file not in the cache, refused where HF_HUB_OFFLINE keeps the run from the hub."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    path, parts, flag = Path(source), source.split("/"), MODEL_KINDS[kind].flag
    if path.exists() and not path.is_dir():
        check_file(path, kind)  # (a named pipe would hold the read)
        return path
    if path.is_dir():
        found = [path / name for name in (*LORA_FILES, PEFT_LORA_FILE) if (path / name).is_file()]
        if not found:
            raise UserError(
                f"{flag} {source}: the folder holds no {LORA_FILES[0]} (diffusers') or {PEFT_LORA_FILE} (peft's); "
                "name the file itself"
            )
        return found[0]
    check_not_missing(flag, source)
    if len(parts) < 2 or not all(parts) or (path.suffix in WEIGHT_SUFFIXES and len(parts) < 3):
        raise UserError(
            f"{flag} {source} is neither a file nor a hub repository (org/name) or hub file (org/name/file.safetensors)"
        )
    repo, names = "/".join(parts[:2]), ["/".join(parts[2:])] if len(parts) > 2 else LORA_FILES
    if not download:
        found = next((Path(file) for file in (cached_file(repo, name) for name in names) if file), None)
        if found is None:
            refuse_offline(flag, source, repo, names[0])
        return found
    with as_unavailable(kind, source):
        for name in names[:-1]:  # a repository may hold the older .bin alone
            try:
                return Path(hf_hub_download(repo, name))
            except (EntryNotFoundError, LocalEntryNotFoundError):
                continue
        return Path(hf_hub_download(repo, names[-1]))


def file_digest(path: Path) -> str:
    """A file's short content hash, read once per version of the file in a process (a LoRA is 10–200 MB)."""
    return file_sha256(path)[:20]


def lora_digest(path: Path) -> str:
    """A LoRA's short content hash: its file's, and of peft's, the adapter_config.json beside it, which holds its
    scale (unet_lora): another lora_alpha draws other pictures."""
    config = path.parent / PEFT_CONFIG
    return file_digest(path) + (f"+{file_digest(config)}" if path.name == PEFT_LORA_FILE and config.is_file() else "")


def _fuse_lora(pipe, lora: str) -> None:
    """The few-step LoRA fused into the UNet alone: LCM-LoRA adapts nothing else (and the text
    encoder's loader would say so)."""
    if lora == TINY:  # a random LoRA made for the UNet it adapts, whichever that is
        state, alphas = pipe.lora_state_dict(tiny.random_lora(pipe.unet))
        metadata = None
    else:
        state, alphas, metadata = unet_lora(pipe, weights_file(lora, "few-step LoRA"))
    # (diffusers' private _pipeline argument only lifts offloading hooks, and a pipeline just loaded has none)
    pipe.load_lora_into_unet(state, alphas, pipe.unet, metadata=metadata)
    pipe.fuse_lora(components=["unet"])
    pipe.unload_lora_weights()  # the fused weights stay; the LoRA's own layers would cost every step


def unet_lora(pipe, file: Path) -> tuple[dict, dict | None, dict | None]:
    """The LoRA `file` as diffusers' load_lora_into_unet takes it: its tensors, kohya's alphas, its LoraConfig
    (diffusers' metadata). peft's own save_pretrained names the same layers from the UNet it wrapped
    (base_model.model.down_blocks...), diffusers' loader from the pipeline's part (unet.down_blocks...), and keeps
    its scale (lora_alpha over r) in the adapter_config.json beside it: without one, diffusers' default (alpha r)."""
    from peft import LoraConfig

    state, alphas, metadata = pipe.lora_state_dict(str(file.parent), weight_name=file.name, return_lora_metadata=True)
    if not any(key.startswith(PEFT_PREFIX) for key in state):
        return state, alphas, metadata
    part = f"{pipe.unet_name}."
    state = {part + key.removeprefix(PEFT_PREFIX): value for key, value in state.items()}
    if (file.parent / PEFT_CONFIG).is_file():
        config = LoraConfig.from_pretrained(str(file.parent)).to_dict()
        metadata = {part + key: value for key, value in config.items()}
    return state, alphas, metadata


def load_style_lora(pipe, file: Path, name: str) -> None:
    """The style LoRA `file` into the pipeline as adapter `name`: diffusers' loader reads kohya's layout and its
    own, UNet and text encoder (a flow-matching family's transformer); peft's own is of a UNet alone (lora_files'
    check_lora refuses one of a text encoder), loaded as unet_lora reads it."""
    unet_file = hasattr(pipe, "unet") and file.suffix.lower() == SUFFIX
    if unet_file and any(key.startswith(PEFT_PREFIX) for key in read_header(file, file.name)):
        state, alphas, metadata = unet_lora(pipe, file)
        pipe.load_lora_into_unet(state, alphas, pipe.unet, adapter_name=name, metadata=metadata)
    else:
        pipe.load_lora_weights(str(file.parent), weight_name=file.name, adapter_name=name)


def fuse_style_loras(pipe, loras: Loras) -> None:
    """Style LoRAs (kohya's layout, diffusers' or peft's) fused into the UNet and text encoder (a flow-matching family's
    transformer) at their weights, once: a fused LoRA costs nothing per step."""
    names = []
    for number, lora in enumerate(loras):
        file = weights_file(lora.source, "style LoRA")
        names.append(f"style-{number}")
        not_for_this = f"--lora {lora.source}: {file.name} is not a LoRA of this picture model"
        try:  # the file is there: what fails now is the file itself, not a download
            # peft's warning of a second LoRA in one model is what is meant here; diffusers logs a failure's every
            # line (a size mismatch a layer) before it raises, and this says it in one
            with warnings.catch_warnings(), silenced():
                warnings.filterwarnings("ignore", "Already found a `peft_config`")
                load_style_lora(pipe, file, names[-1])
        except Exception as error:
            raise UserError(f"{not_for_this} ({load_failure(error)})") from None
        # diffusers loads a file none of whose layers it knows as nothing, with a warning
        if not any(names[-1] in adapters for adapters in pipe.get_list_adapters().values()):
            raise UserError(f"{not_for_this} (none of its layers is one of this model's)")
    pipe.set_adapters(names, adapter_weights=[lora.weight for lora in loras])
    pipe.fuse_lora(adapter_names=names)
    pipe.unload_lora_weights()


def load_failure(error: Exception) -> str:
    """Why diffusers could not load a LoRA, in words: its KeyError is the bare name of a tensor it looked for."""
    if isinstance(error, KeyError) and error.args:
        return f"it has no tensor {error.args[0]}, which diffusers looks for in a LoRA of its layout"
    return first_line(error)


def adapter_parts(name: str) -> tuple[str, str, str]:
    """Where the IP-Adapter file `name` is, as diffusers' load_ip_adapter takes it: (its folder or hub repository,
    the subfolder, the file's name); its image encoder is the subfolder's image_encoder/."""
    file, parts = Path(name), name.split("/")
    if file.is_file():
        return str(file.parent), "", file.name
    check_not_missing("--ip-adapter", name)
    if len(parts) >= 3 and all(parts):
        return "/".join(parts[:2]), "/".join(parts[2:-1]), parts[-1]
    raise UserError(f"--ip-adapter {name} is neither a file nor a hub file (org/name/folder/file.safetensors)")


def load_reference_adapter(pipe, name: str) -> None:
    """IP-Adapter into the pipeline's UNet, with its image encoder: `name` a hub file whose folder holds
    image_encoder/ (h94/IP-Adapter's layout), or such a local file; tiny: random, made for the UNet."""
    if name == TINY:  # (with its own processor: a named model's crops to its real encoder's 224 pixels)
        from transformers import CLIPImageProcessor

        side = (encoder := tiny.tiny_image_encoder()).config.image_size
        processor = CLIPImageProcessor(size=side, crop_size=side)  # (as diffusers makes one where there is none)
        pipe.register_modules(image_encoder=encoder.to(pipe.device, pipe.dtype), feature_extractor=processor)
        adapter = tiny.random_ip_adapter(pipe.unet, pipe.image_encoder.config.projection_dim)
        pipe.load_ip_adapter(adapter, subfolder="", weight_name="", image_encoder_folder=None)
    else:
        where, subfolder, weights = adapter_parts(name)
        found = name if Path(name).is_file() else cached_file(where, Path(subfolder, weights).as_posix())
        encoder = encoder_folder(Path(found), subfolder, f"--ip-adapter {name}") if found else "image_encoder"
        with as_unavailable("reference adapter", name):
            pipe.load_ip_adapter(where, subfolder=subfolder, weight_name=weights, image_encoder_folder=encoder)
    # published in float16: the adapter's layers and encoder take the pipeline's own dtype
    pipe.unet.to(pipe.dtype)
    pipe.image_encoder.to(pipe.device, pipe.dtype)


def check_reference_adapter(name: str, diffusion: str, family: str) -> None:
    """Refuse, before any work, an IP-Adapter (`name`, as adapter_parts takes it) that is not there, holds no adapter
    (its header names no image_proj or ip_adapter tensors), one of another family than the picture model `diffusion`
    (of `family`: adapted_family) or reading other text than its UNet (check_adapter), or, a file on this machine, has no image encoder beside it
    (image_encoder/config.json), or one whose weights do not fill the encoder its config describes; a hub file not in
    the cache is taken as named (but offline: refuse_offline)."""
    where, subfolder, weights = adapter_parts(name)
    named, local = f"--ip-adapter {name}", Path(name).is_file()
    found = name if local else cached_file(where, Path(subfolder, weights).as_posix())
    if not found:
        refuse_offline("--ip-adapter", name, where, Path(subfolder, weights).as_posix())
        return
    check_adapter(Path(found), named, adapted_family(diffusion, family), text_width(diffusion))
    check_image_encoder(Path(found), named, local)


def adapter_identity(name: str) -> str:
    """An IP-Adapter as the pictures' keys know it: a hub name by its name; a file here by what it and the image
    encoder beside it (image_encoder/, which it is loaded with) hold."""
    if not Path(name).is_file():
        return name
    return f"{weights_identity(name)}+{weights_identity(str(image_encoder_of(Path(name), f'--ip-adapter {name}')))}"


@dataclass(frozen=True)
class Drawing:
    """What a loaded pipeline draws with besides the diffusion model: --fast's LoRA and decoder, style
    LoRAs fused into its weights, the reference pictures' adapter. A registry keeps one pipeline per
    Drawing, so a render that asks for other LoRAs is given another pipeline and never changes the one
    another render draws with."""

    fast: bool = False
    loras: Loras = Loras()
    reference: bool = False

    def key(self, models: ModelSet, precision: Precision) -> dict:
        """What the pictures' keys say of it: the model, with --fast its LoRA and decoder, and the IP-Adapter by name
        (a file or folder by what it holds), each LoRA by its file's hash and weight, the dtype it draws in (but
        float32, in which pictures drawn before kept their keys)."""
        # a file or folder changed in place is another model (hub names stay as they were keyed)
        parts = ("diffusion", "fast_lora", "fast_decoder") if self.fast else ("diffusion",)
        identified = replace(models, **{part: weights_identity(getattr(models, part)) for part in parts})
        key: dict[str, Any] = {"diffusion": identified.diffusion_model(self.fast)}
        dtype = precision.drawing(diffusion_family(models.diffusion))
        if dtype != torch.float32:  # float16 may draw black where float32 does not: a rerun in float32 redraws
            key["dtype"] = str(dtype).removeprefix("torch.")
        if self.loras:
            key["loras"] = [[lora_digest(weights_file(x.source, "style LoRA")), x.weight] for x in self.loras]
        if self.reference and models.ip_adapter:  # (klein reads its references itself: KeyframeKeys keys them)
            key["reference adapter"] = adapter_identity(models.ip_adapter)
        return key


def check_drawing_options(models: ModelSet, settings: RenderSettings) -> None:
    """Refuse, before any work, an option the picture family has nothing for: the flow-matching families have no
    few-step LoRA of --fast (they draw in 4 to 8 steps already), no sliced attention and no UNet whose features
    --deep-cache keeps and --deep-share shares; Z-Image has nothing for --reference (FLUX.2 klein reads the picture
    itself). Their sides come in multiples of 16. And a size the video model cannot draw at (check_video_size)."""
    check_video_size(models, settings)
    family = diffusion_family(models.diffusion)
    if family not in FLOW_FAMILIES:
        return
    asked = {
        "--fast": settings.fast,
        "--reference": settings.reference and family not in IN_CONTEXT_REFERENCES,
        "--attention-slicing": settings.attention_slicing,
        "--deep-cache": settings.deep_cache > 1,  # (a UNet's blocks: musicvid.pictures.deep_cache)
        "--deep-share": settings.deep_share > 1,
    }
    for flag in [flag for flag, on in asked.items() if on][:1]:
        raise UserError(f"{flag} is made for Stable Diffusion and SDXL, not for {FAMILY_NAMES[family]}: leave it out")
    step = FAMILIES[family].size_step
    if settings.width % step or settings.height % step:
        raise UserError(
            f"--size {settings.width}x{settings.height}: {FAMILY_NAMES[family]} draws sides in multiples of {step}"
        )


def check_video_size(models: ModelSet, settings: RenderSettings) -> None:
    """Refuse, before any work, a size the video model of --transitions video cannot draw the frames between keyframes
    at: it draws them at its step of sides (drawn_size), and no side below its family's smallest."""
    if settings.transitions != "video":
        return
    named = video_family(models.video)
    family = VIDEO_FAMILIES[named]
    drawn = drawn_size(settings.size, family.size_step)
    if min(drawn) < family.smallest:
        raise UserError(
            f"--size {size_text(settings.size)}: {VIDEO_FAMILY_NAMES[named]} draws no side of the frames between "
            f"keyframes below {family.smallest} pixels (these would be {size_text(drawn)}): give a larger --size, or "
            "--transitions slerp"
        )


def check_drawing_files(models: ModelSet, settings: RenderSettings, references: bool, loads: bool = True) -> None:
    """Refuse, before any work and in one sentence, a file the picture model draws with that is not there or not what
    its option says: each style LoRA, and with --fast its few-step LoRA, a LoRA of the picture model's family
    (musicvid.models.lora_files.check_lora); --fast's tiny decoder (musicvid.models.names.check_model); the
    IP-Adapter where reference pictures are drawn with one (`references`: one is used). The style LoRAs are fetched
    now, on a first run, not after the storyboard; nothing else is downloaded: a hub name not in the cache is taken
    as named, and its load says what it is, but refused now where HF_HUB_OFFLINE keeps the run from the hub. The tiny
    presets' models are made here, and not checked. First, the picture model's own files, part by part
    (musicvid.models.pipeline_files), and with --transitions video the video model's; where the call `loads` them,
    their hub names too (check_drawing_models_reachable)."""
    family = diffusion_family(models.diffusion)
    check_picture_model(models.diffusion, family)
    if settings.transitions == "video":
        check_video_model_files(models.video)
    adapted, reads = adapted_family(models.diffusion, family), text_width(models.diffusion)
    for lora in settings.lora:
        check_lora(weights_file(lora.source, "style LoRA"), f"--lora {lora.source}", adapted, reads)
    if settings.fast and models.fast_lora != TINY:
        file = weights_file(models.fast_lora, "few-step LoRA", download=False)
        if file is not None:
            check_lora(file, f"--fast-lora {models.fast_lora}", adapted, reads)
    if settings.fast:
        check_fast_decoder(models.fast_decoder, family)
    if references and family not in FLOW_FAMILIES and models.ip_adapter != TINY:
        check_reference_adapter(models.ip_adapter, models.diffusion, family)
    if loads:
        check_drawing_models_reachable(models, settings)


def check_drawing_models_reachable(models: ModelSet, settings: RenderSettings) -> None:
    """Refuse, before any work, the picture model named by a hub name the cache does not hold where HF_HUB_OFFLINE
    keeps the run from the hub, and with --transitions video the video model: a family named here is not fetched
    before its load (diffusion_family), which comes after the storyboard. A run that draws alone: `musicvid plan`
    plans such a model from its published architecture, without its files."""
    drawn = {"diffusion": models.diffusion, "video": models.video if settings.transitions == "video" else None}
    for kind, name in drawn.items():
        if name is not None and name not in MODEL_KINDS[kind].built_here:
            refuse_offline(MODEL_KINDS[kind].flag, name, name, "model_index.json")


def check_scene_references(models: ModelSet) -> None:
    """Refuse, before any work, a storyboard's own reference pictures where the picture model has nothing to draw them
    with (a flow-matching family that reads no picture itself), or with an IP-Adapter not there or no adapter."""
    family = diffusion_family(models.diffusion)
    if family in FLOW_FAMILIES and family not in IN_CONTEXT_REFERENCES:
        raise UserError(f"the storyboard's reference pictures take an IP-Adapter, which {FAMILY_NAMES[family]} has not")
    if family not in FLOW_FAMILIES and models.ip_adapter != TINY:
        check_reference_adapter(models.ip_adapter, models.diffusion, family)


def load_drawing(
    models: ModelSet,
    drawing: Drawing,
    device: torch.device,
    precision: Precision | None = None,
    offloaded: bool = False,
):
    """The picture model (Stable Diffusion, SDXL, Z-Image, FLUX.2 klein) with what `drawing` adds: with --fast the
    few-step LoRA fused into its UNet and the tiny decoder as its VAE (TAESD also encodes, for pinned pictures);
    style LoRAs; IP-Adapter. `offloaded` (the memory plan offloads its pictures): loaded on the CPU, where its
    weights wait, each model moved to `device` while it runs (diffusers' model offload, until the render's
    own switches: musicvid.pictures.switches), so that it never sits whole on a card that holds its models one
    at a time (Z-Image's 20.5 GB on 12)."""
    from diffusers import AutoencoderTiny

    family = diffusion_family(models.diffusion)
    precision = auto_precision(device, precision)
    loaded_on = torch.device("cpu") if offloaded else device
    pipe = load_diffusion(models.diffusion, loaded_on, precision)
    if drawing.fast:
        with as_unavailable("few-step LoRA", models.fast_lora):
            _fuse_lora(pipe, models.fast_lora)
        decoder = models.fast_decoder
        with quietly():
            vae = obtain(
                "tiny decoder", decoder, lambda: pretrained(AutoencoderTiny, decoder, None, dtype=precision.compute)
            )
        pipe.vae = vae.to(loaded_on, precision.compute)
    if drawing.loras:
        fuse_style_loras(pipe, drawing.loras)
    if drawing.reference and family not in IN_CONTEXT_REFERENCES:
        load_reference_adapter(pipe, models.ip_adapter)
    if offloaded:
        pipe.enable_model_cpu_offload(device=device)
    return pipe
