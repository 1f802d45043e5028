"""Which models each stage uses, how they load, and the offline `tiny` preset.

This is the one place that names the defaults. `--models default|tiny` picks a preset; the per-model
flags (`--asr`, `--asr-model`, `--vipe`, `--diffusion`, `--separator`) override one model of it. The tiny preset
builds small random models of the very classes the defaults use, from a fixed seed, with no download:
every stage then runs its real code path on a CPU in seconds (the pictures are noise).
"""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

import torch

from musicvid.assets import TINY_CLIP_TOKENIZER, TINY_GPT2_TOKENIZER
from musicvid.errors import UserError
from musicvid.timing import Timings
from vipe_core.errors import VipeError
from vipe_core.inference import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER, ViPE

TINY = "tiny-random"
# Stable Diffusion 1.5's architecture with random weights: what rendering costs, with no download
# (compute does not depend on the weights' values). For benchmarks and memory checks.
SD15_RANDOM = "sd15-random"
ASR_BACKENDS = ("openai-whisper", "faster-whisper")
# Whisper large-v2, on purpose: it is the large model of the paper's time, and large-v3 (what a bare
# "large" means today) loops and hallucinates far more over music and silence (whisper.cpp #1507,
# faster-whisper #777), which is most of a song.
WHISPER_LARGE = "large-v2"
# Demucs' hybrid transformer model, the practitioners' standard for taking the singing from the band.
DEMUCS = "htdemucs"
# Real-ESRGAN x4plus as its authors published it (on GitHub), mirrored as a file on the hub. "auto", every
# preset's upscaler, takes the preset's network (this one, or the tiny random one) on a GPU and Lanczos on
# the CPU, where Real-ESRGAN costs 100 s a 1080p frame on two cores (docs/frames.md).
REAL_ESRGAN = "2kpr/Real-ESRGAN/RealESRGAN_x4plus.pth"
AUTO_UPSCALER, LANCZOS = "auto", "lanczos"
# --fast: SD 1.5 distilled to a few steps by LCM-LoRA (fused into the UNet on loading), and TAESD, a
# decoder of SD's latents with 1/40 of the VAE's weights.
LCM_LORA = "latent-consistency/lcm-lora-sdv1-5"
TAESD = "madebyollin/taesd"
LORA_FILE = "pytorch_lora_weights.safetensors"  # what diffusers writes and looks for, and LCM-LoRA's
TINY_SEED = 0
WHISPER_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # both backends' default fallback


@dataclass(frozen=True)
class ModelSet:
    asr_backend: str
    asr: str
    vipe: str
    vipe_tokenizer: str | None  # None: the checkpoint's own, else GPT-2 Medium's (see ViPE.from_pretrained)
    diffusion: str
    separator: str  # the Demucs model of --separate-vocals
    upscaler: str  # the model of --resolution: a hub file org/name/file.pth, a local file, auto or lanczos
    auto_upscaler: str  # the network auto takes on a GPU (on the CPU: Lanczos)
    fast_lora: str  # the few-step LoRA of --fast (a hub repository or a local file or folder)
    fast_decoder: str  # the tiny decoder of --fast (an AutoencoderTiny repository or folder)
    # Render defaults that suit the models: full-size SD draws 512², the tiny one a thumbnail.
    size: tuple[int, int]
    steps: int

    def describe(self) -> dict[str, str]:
        return {"asr": f"{self.asr_backend}:{self.asr}", "vipe": self.vipe, "diffusion": self.diffusion}

    def drawing(self, fast: bool) -> str:
        """What draws the pictures, as their keys name it: the diffusion model, with --fast its LoRA and decoder."""
        return f"{self.diffusion}+{self.fast_lora}+{self.fast_decoder}" if fast else self.diffusion


PRESETS = {
    "default": ModelSet(
        asr_backend="openai-whisper",
        asr=WHISPER_LARGE,
        vipe=DEFAULT_VIPE,
        vipe_tokenizer=DEFAULT_VIPE_TOKENIZER,
        diffusion="stable-diffusion-v1-5/stable-diffusion-v1-5",
        separator=DEMUCS,
        upscaler=AUTO_UPSCALER,
        auto_upscaler=REAL_ESRGAN,
        fast_lora=LCM_LORA,
        fast_decoder=TAESD,
        size=(512, 512),
        steps=25,
    ),
    "tiny": ModelSet(
        asr_backend="openai-whisper",
        asr=TINY,
        vipe=TINY,
        vipe_tokenizer=TINY,
        diffusion=TINY,
        separator=TINY,
        upscaler=AUTO_UPSCALER,
        auto_upscaler=TINY,
        fast_lora=TINY,
        fast_decoder=TINY,
        size=(64, 64),
        steps=4,
    ),
}


def choose_models(
    preset: str = "default",
    *,
    asr_backend: str | None = None,
    asr: str | None = None,
    vipe: str | None = None,
    vipe_tokenizer: str | None = None,
    diffusion: str | None = None,
    separator: str | None = None,
    upscaler: str | None = None,
    fast_lora: str | None = None,
    fast_decoder: str | None = None,
) -> ModelSet:
    if preset not in PRESETS:
        raise UserError(f"--models must be one of {', '.join(PRESETS)}, not {preset!r}")
    models = PRESETS[preset]
    if asr_backend and asr_backend not in ASR_BACKENDS:
        raise UserError(f"--asr must be one of {', '.join(ASR_BACKENDS)}, not {asr_backend!r}")
    if asr_backend == "faster-whisper" and not asr and models.asr == TINY:
        raise UserError("there is no tiny faster-whisper model: pass a CTranslate2 model directory with --asr-model")
    if asr_backend == "faster-whisper" and not asr:
        asr = WHISPER_LARGE
    if vipe_tokenizer and (vipe or models.vipe) == TINY:
        raise UserError("the tiny ViPE brings its own tokenizer: --vipe-tokenizer needs --vipe NAME_OR_DIR")
    return replace(
        models,
        asr_backend=asr_backend or models.asr_backend,
        asr=asr or models.asr,
        vipe=vipe or models.vipe,
        # A checkpoint given with --vipe uses its own tokenizer if it ships one (vipe train's do).
        vipe_tokenizer=vipe_tokenizer or (models.vipe_tokenizer if not vipe or vipe == TINY else None),
        diffusion=diffusion or models.diffusion,
        separator=separator or models.separator,
        upscaler=upscaler or models.upscaler,
        fast_lora=fast_lora or models.fast_lora,
        fast_decoder=fast_decoder or models.fast_decoder,
    )


def resolve_device(device: str = "auto") -> torch.device:
    """auto: CUDA, then Apple's MPS, then the CPU."""
    if device != "auto":
        return torch.device(device)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def default_dtype(device: torch.device) -> torch.dtype:
    return torch.float16 if device.type == "cuda" else torch.float32


def weights_variant(device: torch.device) -> str | None:
    """Which weight files to fetch: on CUDA the half-size fp16 ones, where a repository has them."""
    return "fp16" if default_dtype(device) == torch.float16 else None


class ModelUnavailable(UserError):
    pass


_WAYS_OUT = {
    "asr": ("--asr-model", "the cache in ~/.cache/whisper (openai-whisper) or HF_HOME (faster-whisper)"),
    "vipe": ("--vipe", "HF_HOME"),
    "diffusion": ("--diffusion", "HF_HOME"),
    "separator": ("--separator", "HF_HOME"),
    "upscaler": ("--upscaler", "HF_HOME"),
    "few-step LoRA": ("--fast-lora", "HF_HOME"),
    "tiny decoder": ("--fast-decoder", "HF_HOME"),
}


def _unavailable(role: str, name: str, error: BaseException) -> ModelUnavailable:
    """A model that could not be loaded: a download or cache problem names the ways out."""
    flag, cache = _WAYS_OUT[role]
    reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
    return ModelUnavailable(
        f"could not load the {role} model '{name}' ({reason}); it downloads on first use, so either let this "
        f"machine reach the model hub once, run with --models tiny, pass a local copy with {flag} PATH, "
        f"or point {cache} at a cache that holds it"
    )


# --- ASR -------------------------------------------------------------------------------------------


@dataclass
class ASRModel:
    backend: str
    name: str
    model: Any
    # what Whisper decodes a clip at, each next temperature where the last failed its checks
    temperatures: tuple[float, ...] = WHISPER_TEMPERATURES


# The tiny preset's Whisper: n_vocab 51864 is the English-only vocabulary, like tiny.en (no language
# detection on noise); the audio context must stay 1500 (30 s windows); all else is as small as it goes.
TINY_WHISPER = dict(
    n_mels=80,
    n_audio_ctx=1500,
    n_audio_state=64,
    n_audio_head=2,
    n_audio_layer=1,
    n_vocab=51864,
    n_text_ctx=64,
    n_text_state=64,
    n_text_head=2,
    n_text_layer=1,
)


def random_whisper(**dims):
    """openai-whisper's model of these dimensions, with random weights from the fixed seed."""
    from whisper.model import ModelDimensions, Whisper

    torch.manual_seed(TINY_SEED)
    model = Whisper(ModelDimensions(**dims))
    # Whisper leaves the decoder's positional embedding uninitialized (a checkpoint fills it).
    torch.nn.init.normal_(model.decoder.positional_embedding, std=0.02)
    return model


def load_asr(backend: str, name: str, device: torch.device) -> ASRModel:
    temperatures = WHISPER_TEMPERATURES
    try:
        if backend == "openai-whisper":
            if name == TINY:
                model = random_whisper(**TINY_WHISPER).to(device)
                temperatures = (0.0,)  # a random Whisper fails every check at every one: falling back only costs
            else:
                import whisper

                # openai-whisper cannot run on Apple's MPS (its alignment heads are a sparse tensor)
                model = whisper.load_model(name, device="cpu" if device.type == "mps" else device)
        else:
            from faster_whisper import WhisperModel

            compute_type = "float16" if device.type == "cuda" else "int8"
            model = WhisperModel(name, device="cuda" if device.type == "cuda" else "cpu", compute_type=compute_type)
    except Exception as error:  # every way a load fails (network, cache, format) ends the same way
        raise _unavailable("asr", name, error) from None
    return ASRModel(backend, name, model, temperatures)


# --- ViPE ------------------------------------------------------------------------------------------


def tiny_gpt2_tokenizer():
    from transformers import GPT2TokenizerFast

    return GPT2TokenizerFast.from_pretrained(TINY_GPT2_TOKENIZER)


def tiny_vipe() -> ViPE:
    from transformers import GPT2Config, GPT2LMHeadModel

    tokenizer = tiny_gpt2_tokenizer()
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=256,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(TINY_SEED)
    return ViPE(GPT2LMHeadModel(config), tokenizer)


def load_vipe(name: str, tokenizer: str | None, device: torch.device) -> ViPE:
    if name == TINY:
        vipe = tiny_vipe()
        vipe.model.to(device)
        return vipe
    try:
        return ViPE.from_pretrained(name, tokenizer, device=device, dtype=default_dtype(device))
    except VipeError as error:  # a tokenizer that does not fit the model
        raise UserError(f"{error} (--vipe-tokenizer NAME_OR_DIR)") from None
    except Exception as error:
        raise _unavailable("vipe", name, error) from None


# --- Stable Diffusion ------------------------------------------------------------------------------


# Sizes of the locally built pipelines: the tiny one, and SD 1.5's own (UNet 860M, VAE 84M, CLIP ViT-L/14).
LOCAL_DIFFUSION = {
    TINY: {
        "text": dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4),
        "unet": dict(
            sample_size=8,
            layers_per_block=1,
            block_out_channels=(32, 64),
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            cross_attention_dim=32,
            attention_head_dim=8,
            norm_num_groups=32,
        ),
        # Four blocks, as in SD's VAE, so that latents are 1/8 of the image size here too.
        "vae": dict(block_out_channels=(16, 32, 32, 32), layers_per_block=1, norm_num_groups=16, sample_size=64),
    },
    SD15_RANDOM: {
        "text": dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12),
        "unet": dict(
            sample_size=64,
            layers_per_block=2,
            block_out_channels=(320, 640, 1280, 1280),
            down_block_types=("CrossAttnDownBlock2D",) * 3 + ("DownBlock2D",),
            up_block_types=("UpBlock2D",) + ("CrossAttnUpBlock2D",) * 3,
            cross_attention_dim=768,
            attention_head_dim=8,
            norm_num_groups=32,
        ),
        "vae": dict(block_out_channels=(128, 256, 512, 512), layers_per_block=2, norm_num_groups=32, sample_size=512),
    },
}


def local_diffusion(name: str = TINY):
    """A Stable Diffusion pipeline of random weights built here, from a fixed seed, with no download."""
    from diffusers import AutoencoderKL, DPMSolverMultistepScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTokenizer

    sizes = LOCAL_DIFFUSION[name]
    tokenizer = CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER)
    torch.manual_seed(TINY_SEED)
    text_encoder = CLIPTextModel(
        CLIPTextConfig(
            vocab_size=len(tokenizer),
            max_position_embeddings=77,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
            **sizes["text"],
        )
    )
    unet = UNet2DConditionModel(in_channels=4, out_channels=4, **sizes["unet"])
    vae = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        **sizes["vae"],
    )
    scheduler = DPMSolverMultistepScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", num_train_timesteps=1000, steps_offset=1
    )
    return StableDiffusionPipeline(
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


def load_diffusion(name: str, device: torch.device):
    if name in LOCAL_DIFFUSION:
        pipe = local_diffusion(name).to(dtype=default_dtype(device))
    else:
        from diffusers import StableDiffusionPipeline

        def load(variant: str | None):
            return StableDiffusionPipeline.from_pretrained(
                name, dtype=default_dtype(device), variant=variant, safety_checker=None, requires_safety_checker=False
            )

        variant = weights_variant(device)
        try:
            try:
                pipe = load(variant)
            except (OSError, ValueError):
                if variant is None:
                    raise
                pipe = load(None)  # a repository without the variant: the full weights, cast on loading
        except Exception as error:
            raise _unavailable("diffusion", name, error) from None
    pipe.set_progress_bar_config(disable=True)
    return pipe.to(device)


# The layers LCM-LoRA adapts (the targets of diffusers' LCM-LoRA distillation script): every attention
# and feed-forward projection, and the convolutions and time projections of the ResNet blocks.
LORA_TARGETS = (
    "to_q", "to_k", "to_v", "to_out.0", "proj_in", "proj_out", "ff.net.0.proj", "ff.net.2",
    "conv1", "conv2", "conv_shortcut", "downsamplers.0.conv", "upsamplers.0.conv", "time_emb_proj",
)  # fmt: skip
# TAESD's classes with the least channels and blocks (the published one: 64 channels, 1+3+3+3 blocks).
TINY_TAESD = dict(
    encoder_block_out_channels=(16,) * 4,
    decoder_block_out_channels=(16,) * 4,
    num_encoder_blocks=(1,) * 4,
    num_decoder_blocks=(1,) * 4,
)


def random_lora(unet, rank: int = 4, seed: int = TINY_SEED) -> dict[str, torch.Tensor]:
    """A random LoRA of `unet`, laid out as LCM-LoRA is published: kohya's names (lora_unet_ and the
    module's path with underscores), each layer's lora_down and lora_up weights and its alpha."""
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for name, module in unet.named_modules():
        if not name.endswith(LORA_TARGETS) or not isinstance(module, (torch.nn.Linear, torch.nn.Conv2d)):
            continue
        if isinstance(module, torch.nn.Linear):
            down_shape, up_shape = (rank, module.in_features), (module.out_features, rank)
        else:
            down_shape, up_shape = (rank, module.in_channels, *module.kernel_size), (module.out_channels, rank, 1, 1)
        key = "lora_unet_" + name.replace(".", "_")
        state[f"{key}.lora_down.weight"] = torch.randn(down_shape, generator=generator) / down_shape[1] ** 0.5
        state[f"{key}.lora_up.weight"] = torch.randn(up_shape, generator=generator) * 0.1
        state[f"{key}.alpha"] = torch.tensor(float(rank))
    return state


def load_fast_diffusion(name: str, lora: str, decoder: str, device: torch.device):
    """The pipeline of --fast: SD with the few-step LoRA fused into its UNet, and the tiny decoder as its
    VAE (TAESD also encodes, for pinned pictures). A pipeline of its own: the plain one stays as it is."""
    from diffusers import AutoencoderTiny

    pipe = load_diffusion(name, device)
    try:
        if lora == TINY:
            state, alphas = pipe.lora_state_dict(random_lora(pipe.unet))
        else:  # a file, or a repository or folder holding diffusers' file name (offline, it must be named)
            file = Path(lora)
            folder, weights = (file.parent, file.name) if file.is_file() else (lora, LORA_FILE)
            state, alphas = pipe.lora_state_dict(str(folder), weight_name=weights)
        # into the UNet alone: LCM-LoRA adapts nothing else (and the text encoder's loader would say so)
        pipe.load_lora_into_unet(state, alphas, pipe.unet, _pipeline=pipe)
        pipe.fuse_lora(components=["unet"])
        pipe.unload_lora_weights()  # the fused weights stay; the LoRA's own layers would cost every step
    except Exception as error:
        raise _unavailable("few-step LoRA", lora, error) from None
    try:
        if decoder == TINY:
            torch.manual_seed(TINY_SEED)
            vae = AutoencoderTiny(**TINY_TAESD)
        else:
            vae = AutoencoderTiny.from_pretrained(decoder, dtype=default_dtype(device))
    except Exception as error:
        raise _unavailable("tiny decoder", decoder, error) from None
    pipe.vae = vae.to(device, default_dtype(device))
    return pipe


# --- Demucs ----------------------------------------------------------------------------------------

# Demucs' htdemucs with every size cut to the least that runs (the published one: 48 channels, 5 transformer
# layers of 8 heads, 42M weights); depth 4 as the real one, which keeps the transformer's sequence short.
TINY_DEMUCS = dict(channels=4, depth=4, t_layers=1, t_heads=1, dconv_comp=1, dconv_depth=1)
DEMUCS_SOURCES = ["drums", "bass", "other", "vocals"]


def tiny_demucs():
    from fractions import Fraction

    from demucs.apply import BagOfModels
    from demucs.htdemucs import HTDemucs

    torch.manual_seed(TINY_SEED)
    return BagOfModels([HTDemucs(DEMUCS_SOURCES, samplerate=44100, segment=Fraction(39, 5), **TINY_DEMUCS)])


def load_separator(name: str, device: torch.device):
    """A Demucs bag of models: by name (htdemucs: the hub's adefossez/HTDemucs), or one model's file."""
    if name == TINY:
        return tiny_demucs().eval().to(device)
    try:
        from demucs.apply import BagOfModels
        from demucs.hf import load_safetensors_model
        from demucs.pretrained import get_model
        from demucs.states import load_model

        file = Path(name)
        if file.suffix in (".safetensors", ".th") and file.is_file():
            model = load_safetensors_model(file) if file.suffix == ".safetensors" else load_model(file)
            return BagOfModels([model]).eval().to(device)
        return get_model(name).to(device)
    except Exception as error:
        raise _unavailable("separator", name, error) from None


# --- upscaler -------------------------------------------------------------------------------------

# Real-ESRGAN's RRDB network with every size cut to the least spandrel still recognises (the published
# x4plus: 64 filters, 23 blocks, 16.7M weights).
TINY_ESRGAN = dict(num_filters=8, num_blocks=1, scale=4)


def tiny_upscaler():
    from spandrel import ModelLoader
    from spandrel.architectures.ESRGAN import ESRGAN

    torch.manual_seed(TINY_SEED)
    return ModelLoader().load_from_state_dict(ESRGAN(**TINY_ESRGAN).state_dict())


def load_upscaler(name: str, device: torch.device, auto: str = REAL_ESRGAN):
    """A spandrel ImageModelDescriptor, in float16 on a GPU; None for Lanczos alone. `name`: a hub file
    (org/name/file.pth), a local .pth/.safetensors file, tiny, lanczos, or auto (the network `auto` on a
    GPU, Lanczos on the CPU)."""
    if name == AUTO_UPSCALER:
        name = auto if device.type != "cpu" else LANCZOS
    if name == LANCZOS:
        return None
    if name == TINY:
        return tiny_upscaler().eval().to(device)
    from spandrel import ModelLoader

    path = Path(name)
    if not path.is_file():
        repo, _, filename = name.rpartition("/")
        if repo.count("/") != 1:
            raise UserError(
                f"--upscaler {name} is neither a file nor a hub file (org/name/file.pth), nor lanczos or auto"
            )
        try:
            from huggingface_hub import hf_hub_download

            path = Path(hf_hub_download(repo, filename))
        except Exception as error:
            raise _unavailable("upscaler", name, error) from None
    try:  # a file that is there but holds no upscaler: no download advice, the file is the cause
        model = ModelLoader().load_from_file(path).eval().to(device)
    except Exception as error:
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0][:160]
        raise UserError(f"--upscaler {name}: {path} is not an upscaler spandrel can load ({reason})") from None
    return model.half() if default_dtype(device) == torch.float16 and model.supports_half else model


# --- the registry ----------------------------------------------------------------------------------


class ModelRegistry:
    """Loads each model when a stage asks for it, and counts loads.

    A single render frees each model after its stage (Whisper, ViPE and SD never sit in memory
    together); batch rendering and the web UI keep them loaded (`keep_loaded=True`) and reuse them.
    """

    def __init__(self, models: ModelSet, device: str = "auto", keep_loaded: bool = False):
        self.models = models
        self.device = resolve_device(device)
        self.keep_loaded = keep_loaded
        self.loads: Counter[str] = Counter()
        self._loaded: dict[str, Any] = {}

    def _load(self, role: str):
        m = self.models
        if role == "asr":
            return load_asr(m.asr_backend, m.asr, self.device)
        if role == "vipe":
            return load_vipe(m.vipe, m.vipe_tokenizer, self.device)
        if role == "diffusion":
            return load_diffusion(m.diffusion, self.device)
        if role == "fast diffusion":
            return load_fast_diffusion(m.diffusion, m.fast_lora, m.fast_decoder, self.device)
        if role == "separator":
            return load_separator(m.separator, self.device)
        if role == "upscaler":
            return load_upscaler(m.upscaler, self.device, m.auto_upscaler)
        raise ValueError(role)

    @contextmanager
    def use(self, role: str, timings: Timings | None = None) -> Iterator[Any]:
        if role not in self._loaded:
            with timings.measure(f"load {role}") if timings else nullcontext():
                self._loaded[role] = self._load(role)
            self.loads[role] += 1
        try:
            yield self._loaded[role]
        finally:
            if not self.keep_loaded:
                self.release(role)

    def release(self, role: str) -> None:
        if self._loaded.pop(role, None) is not None:
            gc.collect()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()
