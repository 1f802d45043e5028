"""Each model's size before it is loaded: its architecture built on torch's meta device, where a module has
shapes but no memory, from the configs written here (musicvid.models.published, the tiny presets' sizes in
musicvid.models.tiny and musicvid.models.tiny_flow), from a local folder's configs or from the dims an openai-whisper
checkpoint pickles or a CTranslate2 Whisper's header gives. Nothing is downloaded and no weight is read.

A model is counted once per name and kept, without weights, for the memory plan to run its passes on the meta
device (musicvid.memory.activations). A name none of these describe cannot be sized: `Unsized` says so.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Callable

import torch

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.core.errors import UserError
from musicvid.models import asr_files, published, tiny, tiny_video
from musicvid.models.families import diffusion_family
from musicvid.models.internals import htdemucs, whisper_halves
from musicvid.models.local_names import cached_file
from musicvid.models.readback import GB
from musicvid.models.single_file import is_single_file, single_file_family
from musicvid.models.tiny_flow import TINY_FLOW, flow_classes, flow_modules, qwen3_config, tiny_qwen3_tokenizer
from musicvid.settings.presets import (
    CONFIG_REPOSITORIES,
    DEMUCS,
    FLOW_FAMILIES,
    IP_ADAPTER,
    IP_ADAPTER_XL,
    KLEIN,
    KNOWN_FAMILIES,
    KNOWN_VIDEO_FAMILIES,
    LTX2,
    LTX_VIDEO,
    REAL_ESRGAN,
    REAL_ESRGAN_FAST,
    SCORER,
    SD15,
    SD15_RANDOM,
    SDXL,
    SDXL_RANDOM,
    TAESD,
    TAESD_XL,
    TINY,
    WAN_FLF2V,
    ZIMAGE,
)
from vipe_core.released import DEFAULT_VIPE

# The published diffusion models by the architecture they share with the random ones built here
PUBLISHED_DIFFUSION = {SD15: SD15_RANDOM, SDXL: SDXL_RANDOM}
# The published flow-matching models' transformer and VAE (their text encoder is Qwen3-4B)
PUBLISHED_FLOW = {
    ZIMAGE: {"transformer": published.ZIMAGE_TRANSFORMER, "vae": published.FLUX1_VAE},
    KLEIN: {"transformer": published.KLEIN_TRANSFORMER, "vae": published.FLUX2_VAE},
}
FLOW_PARTS = ("text_encoder", "transformer", "vae")


class Unsized(UserError):
    """A model whose size cannot be known before loading it."""


@dataclass(frozen=True)
class Weights:
    """One model of a stage as it sits in memory: `part` of the model `name`, its parameters and buffers in `dtype`."""

    part: str  # unet, vae, text_encoder, whisper, ...
    name: str  # the model as the run names it
    parameters: int  # parameters and buffers
    largest_layer: int  # the most one layer holds: what sequential offloading has on the device at once
    dtype: torch.dtype

    @property
    def weights_gb(self) -> float:
        return self.parameters * self.dtype.itemsize / GB


def count(module: torch.nn.Module) -> tuple[int, int]:
    """A module's parameters and buffers, and the most of them one layer holds (shared ones counted once)."""
    total = sum(t.numel() for t in (*module.parameters(), *module.buffers()))
    own = [sum(t.numel() for t in (*m.parameters(recurse=False), *m.buffers(recurse=False))) for m in module.modules()]
    return total, max(own)


def weights(kind: str, name: str, dtypes: Callable[[str], torch.dtype]) -> tuple[Weights, ...]:
    """Each part of model `name` of `kind` (a key of BUILDERS), in the dtype `dtypes(part)` gives."""
    return tuple(Weights(part, name, *counts, dtypes(part)) for part, counts in counted(kind, name).items())


@cache
def counted(kind: str, name: str) -> dict[str, tuple[int, int]]:
    """Each part's count, once a model as its parts are built once (a plan asks for them in every stage it tries)."""
    return {part: count(module) for part, module in parts(kind, name).items()}


@cache
def parts(kind: str, name: str) -> dict[str, torch.nn.Module]:
    """Model `name` of `kind` on the meta device, by its parts (a pipeline's components); Unsized where its
    architecture is not known here."""
    with torch.device("meta"):
        built = BUILDERS[kind](name)
    if built is None:
        known = SIZED_WHISPER if kind == "asr" else SIZED
        raise Unsized(f"cannot size the {kind.replace('_', ' ')} model {name!r} without loading it: {known}")
    return built


@cache
def part_in(kind: str, name: str, part: str, dtype: torch.dtype) -> torch.nn.Module:
    """A part of a model on the meta device in `dtype` (a copy: the counted one stays as built)."""
    return copy.deepcopy(parts(kind, name)[part]).to(dtype).eval()


def config_folder(name: str, *files: str) -> Path | None:
    """`name` as a local folder that holds all of `files`, else None."""
    folder = Path(name)
    return folder if folder.is_dir() and all((folder / f).is_file() for f in files) else None


# --- builders, each on the meta device: the parts of one model by its name, None if it is not known -----------


def whisper(name: str) -> dict | None:
    dims = (
        tiny.TINY_WHISPER
        if name == TINY
        else published.whisper_dims(name) or checkpoint_dims(name) or converted_dims(name)
    )
    if dims is None:
        return None
    encoder, decoder = whisper_halves(dims)  # (built apart: the meta device cannot hold a whole Whisper)
    return {"whisper": torch.nn.ModuleDict({"encoder": encoder, "decoder": decoder})}


def checkpoint_dims(name: str) -> dict | None:
    """The dims of the openai-whisper checkpoint file at `name` (musicvid.models.asr_files); None where it is none."""
    path = Path(name).expanduser()
    try:
        return asr_files.checkpoint_dims(path, name) if path.is_file() else None
    except UserError:  # (checked as the models were chosen: said there)
        return None


def converted_dims(name: str) -> dict | None:
    """The dims of the CTranslate2 Whisper at `name`: a folder here, or a hub name whose model.bin is in the cache;
    None where it is neither."""
    found = name if Path(name).expanduser().is_dir() else cached_file(name, "model.bin")
    dims = asr_files.ctranslate2_dims(str(Path(found).parent if found != name else found)) if found else None
    if dims:  # (a cached hub name's folder is not checked as the models are chosen)
        asr_files.check_dims(dims, f"--asr-model {name}", "model.bin's sizes")
    return dims


def vipe(name: str) -> dict | None:
    from transformers import AutoConfig, AutoModelForCausalLM, GPT2Config, GPT2LMHeadModel

    if name == TINY:
        return {"vipe": tiny.tiny_vipe().model}
    if name == DEFAULT_VIPE:
        return {"vipe": GPT2LMHeadModel(GPT2Config(**published.GPT2_MEDIUM))}
    folder = config_folder(name, "config.json")
    return folder and {
        "vipe": AutoModelForCausalLM.from_config(AutoConfig.from_pretrained(folder, trust_remote_code=False))
    }


def diffusion(name: str) -> dict | None:
    from transformers import CLIPTokenizer

    if is_single_file(name):  # a checkpoint file has its family's architecture (musicvid.models.single_file)
        name = CONFIG_REPOSITORIES[single_file_family(name, f"--diffusion {name}")]
    if name in PUBLISHED_DIFFUSION:
        return tiny.diffusion_modules(
            tiny.LOCAL_DIFFUSION[PUBLISHED_DIFFUSION[name]], published.CLIP_TEXT, published.CLIP_TEXT
        )
    if name in PUBLISHED_FLOW:
        return flow_modules(KNOWN_FAMILIES[name], published.QWEN3_4B, **PUBLISHED_FLOW[name])
    if name in TINY_FLOW:  # as tiny_flow builds them: with the tiny tokenizer's vocabulary
        return flow_modules(KNOWN_FAMILIES[name], qwen3_config(tiny_qwen3_tokenizer()), **TINY_FLOW[name])
    if name in tiny.LOCAL_DIFFUSION:  # as tiny.local_diffusion builds them: with the tiny tokenizer's vocabulary
        text = tiny.text_settings(CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER))
        return tiny.diffusion_modules(tiny.LOCAL_DIFFUSION[name], text, text)
    if config_folder(name, "model_index.json") is None:
        return None
    if diffusion_family(name) in FLOW_FAMILIES:
        folder = config_folder(name, *(f"{part}/config.json" for part in FLOW_PARTS))
        return folder and flow_folder(folder)
    folder = config_folder(name, "unet/config.json", "vae/config.json")
    return folder and diffusers_folder(folder)


def flow_folder(folder: Path) -> dict:
    """A Z-Image or FLUX.2 klein folder in diffusers' layout, from its components' configs."""
    from transformers import Qwen3Config

    family = diffusion_family(str(folder))
    transformer, vae = (flow_classes(family)[part].load_config(folder / part) for part in FLOW_PARTS[1:])
    return flow_modules(family, Qwen3Config.from_pretrained(folder / "text_encoder").to_dict(), transformer, vae)


def diffusers_folder(folder: Path) -> dict:
    """A Stable Diffusion or SDXL folder in diffusers' layout, from its components' configs."""
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    built = {
        "unet": UNet2DConditionModel.from_config(UNet2DConditionModel.load_config(folder / "unet")),
        "vae": AutoencoderKL.from_config(AutoencoderKL.load_config(folder / "vae")),
    }
    for part, model in (("text_encoder", CLIPTextModel), ("text_encoder_2", CLIPTextModelWithProjection)):
        if (folder / part / "config.json").is_file():
            built[part] = model(CLIPTextConfig.from_pretrained(folder / part))
    return built


def fast_decoder(name: str) -> dict | None:
    from diffusers import AutoencoderTiny

    if name == TINY:
        return {"vae": tiny.tiny_taesd()}
    if name in (TAESD, TAESD_XL):  # the same architecture, AutoencoderTiny's defaults
        return {"vae": AutoencoderTiny()}
    folder = config_folder(name, "config.json")
    return folder and {"vae": AutoencoderTiny.from_config(AutoencoderTiny.load_config(folder))}


def image_encoder(name: str) -> dict | None:
    """IP-Adapter's image encoder (the adapter's own layers are counted with the UNet they go into)."""
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    if name == TINY:
        return {"image_encoder": tiny.tiny_image_encoder()}
    known = {IP_ADAPTER: published.CLIP_VIT_H_14_PROJECTED, IP_ADAPTER_XL: published.CLIP_VIT_BIGG_14_PROJECTED}
    if name in known:
        return {"image_encoder": CLIPVisionModelWithProjection(CLIPVisionConfig(**known[name]))}
    folder = config_folder(str(Path(name).parent / "image_encoder"), "config.json")
    return folder and {"image_encoder": CLIPVisionModelWithProjection(CLIPVisionConfig.from_pretrained(folder))}


def adapter_parameters(unet: torch.nn.Module, image_embed_dim: int) -> int:
    """IP-Adapter's own weights in `unet`: its image projection (to IP_ADAPTER_TOKENS tokens of the UNet's text
    width, and their norm) and a key and value projection of those tokens beside each cross-attention's."""
    width = unet.config.cross_attention_dim
    projection = tiny.IP_ADAPTER_TOKENS * width * (image_embed_dim + 1) + 2 * width
    cross = [m for n, m in unet.named_modules() if n.endswith("attn2")]
    return projection + sum(m.to_k.weight.numel() + m.to_v.weight.numel() for m in cross)


def video(name: str) -> dict | None:
    """The video model's modules: the tiny ones, LTX-2's and Wan's as published, LTX-Video's as published or from a
    folder's configs."""
    from diffusers import AutoencoderKLLTXVideo, LTXVideoTransformer3DModel
    from transformers import T5Config, T5EncoderModel

    if name in tiny_video.VIDEO_MODELS:
        return tiny_video.tiny_video_modules(name)
    published_ones = {LTX2: ltx2_video, WAN_FLF2V: wan_video}
    if name in published_ones:
        return published_ones[name]()
    if KNOWN_VIDEO_FAMILIES.get(name, "ltx-video") != "ltx-video":
        return None
    if name == TINY:
        pipe = tiny_video.tiny_ltx_video()
        return {"transformer": pipe.transformer, "text_encoder": pipe.text_encoder, "vae": pipe.vae}
    if name == LTX_VIDEO:
        transformer, text, vae = published.LTX_TRANSFORMER, T5Config(**published.T5_XXL), published.LTX_VAE
    else:
        folder = config_folder(name, "transformer/config.json", "text_encoder/config.json", "vae/config.json")
        if folder is None:
            return None
        transformer = LTXVideoTransformer3DModel.load_config(folder / "transformer")
        if transformer.get("_class_name") != LTXVideoTransformer3DModel.__name__:
            return None
        text = T5Config.from_pretrained(folder / "text_encoder")
        vae = AutoencoderKLLTXVideo.load_config(folder / "vae")
    return {
        "transformer": LTXVideoTransformer3DModel.from_config(transformer),
        "text_encoder": T5EncoderModel(text),
        "vae": AutoencoderKLLTXVideo.from_config(vae),
    }


def ltx2_video() -> dict:
    """LTX-2 as published: its transformer, Gemma 3 12B (with the image tower it holds), the connectors, the VAE, and
    the audio VAE and vocoder of the sound it draws."""
    from diffusers import AutoencoderKLLTX2Audio, AutoencoderKLLTX2Video, LTX2VideoTransformer3DModel
    from diffusers.pipelines.ltx2 import LTX2TextConnectors, LTX2Vocoder
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    gemma = Gemma3Config(
        text_config=published.GEMMA3_12B_TEXT,
        vision_config=published.GEMMA3_SIGLIP,
        mm_tokens_per_image=published.GEMMA3_IMAGE_TOKENS,
    )
    return {
        "transformer": LTX2VideoTransformer3DModel(**published.LTX2_TRANSFORMER),
        "text_encoder": Gemma3ForConditionalGeneration(gemma),
        "connectors": LTX2TextConnectors(**published.LTX2_CONNECTORS),
        "vae": AutoencoderKLLTX2Video(**published.LTX2_VAE),
        "audio_vae": AutoencoderKLLTX2Audio(**published.LTX2_AUDIO_VAE),
        "vocoder": LTX2Vocoder(**published.LTX2_VOCODER),
    }


def wan_video() -> dict:
    """Wan 2.1 FLF2V 14B as published: its transformer, UMT5-XXL's encoder, CLIP ViT-H/14 and its VAE."""
    from diffusers import AutoencoderKLWan, WanTransformer3DModel
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection, UMT5Config, UMT5EncoderModel

    return {
        "transformer": WanTransformer3DModel(**published.WAN_FLF2V_14B),
        "text_encoder": UMT5EncoderModel(UMT5Config(**published.UMT5_XXL)),
        "image_encoder": CLIPVisionModelWithProjection(CLIPVisionConfig(**published.CLIP_VIT_H_14_PROJECTED)),
        "vae": AutoencoderKLWan(**published.WAN_VAE),
    }


def separator(name: str) -> dict | None:
    if name == TINY:
        return {"separator": tiny.tiny_htdemucs()}
    return {"separator": htdemucs(**published.HTDEMUCS)} if name == DEMUCS else None


def upscaler(name: str) -> dict | None:
    from spandrel.architectures.Compact import Compact
    from spandrel.architectures.ESRGAN import ESRGAN

    if name == REAL_ESRGAN_FAST:
        return {"upscaler": Compact(**published.REAL_ESRGAN_GENERAL_X4V3)}
    if sizes := {TINY: tiny.TINY_ESRGAN, REAL_ESRGAN: published.REAL_ESRGAN_X4PLUS}.get(name):
        return {"upscaler": ESRGAN(**sizes)}
    loaded = upscaler_file(name)  # (on the meta device, as the plan runs it to measure its activations)
    return loaded and {"upscaler": copy.deepcopy(loaded.model).to("meta")}


def upscaler_scale(name: str) -> int:
    """How many times larger upscaler `name` makes a frame's sides (spandrel's ESRGAN names it scale, Compact
    upscale)."""
    if loaded := upscaler_file(name):
        return loaded.scale
    settings = parts("upscaler", name)["upscaler"].hyperparameters
    return settings["scale"] if "scale" in settings else settings["upscale"]


@cache
def upscaler_file(name: str):
    """The upscaler file `name` (a file here, or a hub file, org/name/file.pth, in the cache; else None) as spandrel
    loads it, on the CPU: spandrel knows an architecture (ESRGAN, Compact, SPAN, ...) by its weights alone, and
    upscalers are small (x4plus: 67 MB), read whole by their check anyway. The presets are sized as published."""
    from musicvid.models.loading import upscaler_model

    repo, _, file = name.rpartition("/")
    found = Path(name) if Path(name).is_file() else (repo.count("/") == 1 and cached_file(repo, file))
    if name in (TINY, REAL_ESRGAN, REAL_ESRGAN_FAST) or not found:
        return None
    with torch.device("cpu"):  # (parts builds on the meta device, which no weights load into)
        return upscaler_model(Path(found), name)


def scorer(name: str) -> dict | None:
    from transformers import CLIPConfig, CLIPModel

    from musicvid.models.scorer import PICKSCORE, tiny_clip_scorer

    if name == TINY:
        return {"scorer": tiny_clip_scorer()[0]}
    known = {SCORER: published.CLIP_VIT_L_14, PICKSCORE: published.CLIP_VIT_H_14}
    if name in known:
        return {"scorer": CLIPModel(CLIPConfig(**known[name]))}
    folder = config_folder(name, "config.json")
    return folder and {"scorer": CLIPModel(CLIPConfig.from_pretrained(folder))}


SIZED = "the plan knows the presets' models, local folders with a config.json and upscaler files"
SIZED_WHISPER = (
    "the plan knows Whisper by its size's name (tiny.en, base, ... large-v3, turbo), its openai-whisper .pt or its "
    "CTranslate2 folder"
)
BUILDERS: dict[str, Callable[[str], dict | None]] = {
    "asr": whisper,
    "vipe": vipe,
    "diffusion": diffusion,
    "fast_decoder": fast_decoder,
    "image_encoder": image_encoder,
    "video": video,
    "separator": separator,
    "upscaler": upscaler,
    "scorer": scorer,
}
