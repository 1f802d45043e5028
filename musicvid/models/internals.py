"""The one place musicvid uses what a library does not document: its private names (`_x`), the modules and attributes
its documentation does not cover, and its methods patched or overridden, each in a small function naming what it
touches, why no documented call serves, and the version it was checked against (tests/test_internals.py finds any other
use by its pattern; a library upgrade checks this module first). Documented: a library's documentation site or README
and what its package exports (openai-whisper, faster-whisper and Demucs by their READMEs, Demucs' api.md too,
faster-whisper's WhisperModel by the docstrings its README sends its reader to)."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import torch

# A word Whisper timed: the word as its tokenizer spells it, its start and end (s), its probability, its tokens
WordTiming = tuple[str, float, float, float, int]

# --- torch, accelerate, diffusers ------------------------------------------------------------------


def dispatch_mode_base() -> type:
    """torch's `TorchDispatchMode`, the base of a mode that sees every aten operation (musicvid.memory.activations
    counts a pass's tensors with one), in the private `torch.utils._python_dispatch` alone (its notes document it
    there); the public `torch.overrides.TorchFunctionMode` sees Python calls, not tensors. Checked on torch 2.14.1."""
    from torch.utils._python_dispatch import TorchDispatchMode

    return TorchDispatchMode


def has_offload_hooks(module: torch.nn.Module) -> bool:
    """Whether accelerate's hooks (diffusers' model or sequential CPU offloading) are on `module` or in it: marked by
    the private `_hf_hook` alone, which no public call reads (diffusers' own checks read it too); they come off with
    the public `DiffusionPipeline.remove_all_hooks()`. Checked on accelerate 1.15.0 and diffusers 0.42.1."""
    return any(hasattr(part, "_hf_hook") for part in module.modules())


def is_compiled(module: torch.nn.Module) -> bool:
    """Whether `module` is what torch.compile made of one (--compile, or a pipeline kept loaded): its wrapper lives in
    the private `torch._dynamo`, diffusers' check of it in the undocumented `diffusers.utils.torch_utils`. Checked on
    torch 2.14.1 and diffusers 0.42.1."""
    from diffusers.utils.torch_utils import is_compiled_module

    return is_compiled_module(module)


def reads_hidden_states(pipe) -> bool:
    """Whether the IP-Adapter in `pipe`'s UNet reads its image encoder's hidden states (Plus's resampler, full face's
    MLP), not the projected embedding, as diffusers' pipelines ask its undocumented `encoder_hid_proj` (0.42.1)."""
    from diffusers.models.embeddings import ImageProjection

    return not isinstance(uncompiled(pipe.unet).encoder_hid_proj.image_projection_layers[0], ImageProjection)


def uncompiled(module: torch.nn.Module) -> torch.nn.Module:
    """The module torch.compile wrapped into `module` (else `module`), for a shape it was not traced at: the private
    `_orig_mod`, read by diffusers' undocumented `unwrap_module`. Checked on torch 2.14.1 and diffusers 0.42.1."""
    from diffusers.utils.torch_utils import unwrap_module

    return unwrap_module(module)


def execution_device(module: torch.nn.Module) -> torch.device:
    """The device `module`'s inputs go to for its pass: its own, or offloaded (weights on the CPU or meta device) its
    hook's, read by diffusers' undocumented `get_module_execution_device` (the public `DiffusionPipeline.device` says
    "cpu" while offloaded). Checked on accelerate 1.15.0 and diffusers 0.42.1."""
    from diffusers.utils.torch_utils import get_module_execution_device

    return get_module_execution_device(module)


def deep_unet_blocks(unet: torch.nn.Module) -> list[tuple[torch.nn.Module, int | str]]:
    """The blocks of a diffusers UNet2DConditionModel below its outermost level, as (parent, index or name) where a
    module may be put in their place (musicvid.pictures.deep_cache): the down blocks after the first, the middle
    block, the up blocks before the last, each called once a pass in that order, read for `has_cross_attention` (an
    up block's `resnets` too); diffusers documents neither those attributes nor that order. Checked on 0.42.1."""
    blocks: list[tuple[torch.nn.Module, int | str]] = [(unet.down_blocks, i) for i in range(1, len(unet.down_blocks))]
    blocks.append((unet, "mid_block"))
    return blocks + [(unet.up_blocks, i) for i in range(len(unet.up_blocks) - 1)]


def no_attention_masks(config) -> dict[str, None]:
    """What a transformers decoder (Qwen3) takes as `attention_mask` to build no mask of its own: a dict of its layer
    kinds' masks (`config.layer_types`), none, so that each attention is torch's causal one; given none, or a padding
    mask, it inspects it for a value, which a pass on the meta device cannot give (musicvid.memory.activations). The
    dict is what `generate` passes; transformers documents no way of giving it. Checked on transformers 5.24.0."""
    return dict.fromkeys(config.layer_types)


@lru_cache
def per_picture_reference(pipeline_class: type) -> type:
    """`pipeline_class` taking one reference-picture embedding per picture of a batch (diffusers' takes one for the
    batch; along a morph between two scenes' references each picture has its own): `ip_adapter_image_embeds` one tensor,
    2·batch × 1 × embedding, guidance's "no picture" then each picture's, as `prepare_ip_adapter_image_embeds`
    (overridden here, undocumented) takes them; without guidance, the second half. Checked on diffusers 0.42.1."""

    class PerPicture(pipeline_class):
        def prepare_ip_adapter_image_embeds(self, image, embeds, device, per_prompt, guided):
            return [(e if guided else e.chunk(2)[1]).to(device) for e in embeds]

    PerPicture.__name__ = pipeline_class.__name__
    return PerPicture


def flow_sigmas(pipe, klein: bool, steps: int, image_tokens: int, device: torch.device) -> torch.Tensor:
    """The noise levels a Z-Image or FLUX.2 klein pipeline's call steps through, 1 down to 0 (steps + 1), as it sets
    its sampler: Z-Image's `get_default_z_image_sigmas` shifted by `calculate_shift`'s mu, klein's `np.linspace` by
    `compute_empirical_mu`'s, on the image's `image_tokens` (2 × 2 patches); the call hands none out, and those
    helpers are undocumented module functions of diffusers' pipelines. Checked against diffusers 0.42.1."""
    from diffusers.pipelines.flux2.pipeline_flux2_klein import compute_empirical_mu
    from diffusers.pipelines.z_image.pipeline_z_image import calculate_shift, get_default_z_image_sigmas

    config = pipe.scheduler.config
    if klein:
        sigmas, mu = np.linspace(1.0, 1 / steps, steps), compute_empirical_mu(image_tokens, steps)
    else:
        shift = [config.get(k, d) for k, d in (("base_image_seq_len", 256), ("max_image_seq_len", 4096))]
        shift += [config.get(k, d) for k, d in (("base_shift", 0.5), ("max_shift", 1.15))]
        sigmas, mu = get_default_z_image_sigmas(steps), calculate_shift(image_tokens, *shift)
    sampler = type(pipe.scheduler).from_config(config)  # (the pipeline's own keeps its state)
    sampler.set_timesteps(sigmas=sigmas, mu=mu, device=device)
    return sampler.sigmas


def flux2_tokens(pipe, latents: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """FLUX.2's latents (batch × channels × h × w, its 2 × 2 patches) as the tokens its transformer reads, and each
    token's position: the pipeline's undocumented static `_pack_latents`, `_prepare_latent_ids` (diffusers 0.42.1)."""
    return pipe._pack_latents(latents), pipe._prepare_latent_ids(latents).to(latents.device)


def flux2_text_positions(pipe, text: torch.Tensor) -> torch.Tensor:
    """The positions FLUX.2's transformer reads a prompt's rows at (batch × rows × width): `_prepare_text_ids`."""
    return pipe._prepare_text_ids(text).to(text.device)


def flux2_untokens(pipe, tokens: torch.Tensor, positions: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """flux2_tokens undone: `_unpack_latents_with_ids`."""
    return pipe._unpack_latents_with_ids(tokens, positions, height, width)


def flux2_patches(pipe, latents: torch.Tensor) -> torch.Tensor:
    """FLUX.2's VAE latents in the 2 × 2 patches its transformer draws in: `_patchify_latents`."""
    return pipe._patchify_latents(latents)


# --- openai-whisper --------------------------------------------------------------------------------


def whisper_languages() -> dict[str, str]:
    """Whisper's languages by code and lowercased name, to their code: what its command line's --language takes,
    `whisper.tokenizer`'s undocumented LANGUAGES and TO_LANGUAGE_CODE. Checked on openai-whisper 20250625."""
    from whisper.tokenizer import LANGUAGES, TO_LANGUAGE_CODE

    return {**{code: code for code in LANGUAGES}, **TO_LANGUAGE_CODE}


def whisper_download(name: str) -> Path:
    """Where openai-whisper's load_model keeps the size `name` downloaded (its default root), the file its undocumented
    `_MODELS` URL names ("turbo": large-v3-turbo.pt). Checked on openai-whisper 20250625."""
    from whisper import _MODELS

    return Path(os.getenv("XDG_CACHE_HOME", Path.home() / ".cache")) / "whisper" / _MODELS[name].rsplit("/", 1)[1]


def whisper_tokenizer(model, language: str) -> tuple[Any, int]:
    """openai-whisper's tokenizer for `model`, transcribing `language`, and how many text tokens one alignment takes:
    the context less find_alignment's prompt (start sequence, no-timestamps, end-of-text). `whisper.tokenizer`,
    `is_multilingual` and `num_languages` are not in its README's API (transcribe makes its own tokenizer): 20250625."""
    from whisper.tokenizer import get_tokenizer

    multilingual, languages = model.is_multilingual, model.num_languages
    tokenizer = get_tokenizer(multilingual, num_languages=languages, language=language, task="transcribe")
    return tokenizer, model.dims.n_text_ctx - len(tokenizer.sot_sequence) - 2


def text_tokens(tokenizer, text: str) -> list[int]:
    """`text`'s tokens as either backend's tokenizer (whisper_tokenizer's, faster_whisper_tokenizer's) encodes a line
    sung after another: `encode`, documented by neither. Checked on openai-whisper 20250625 and faster-whisper 1.2.1."""
    return tokenizer.encode(" " + text.strip())


def whisper_encoded(model, window: np.ndarray) -> tuple[torch.Tensor, int]:
    """`window` (16 kHz, at most 30 s) encoded once for every text timed in it, and how many of its frames hold audio:
    its log-Mel frames (cut at `whisper.audio`'s N_FRAMES, by its HOP_LENGTH) through the model's `embed_audio`,
    undocumented (transcribe encodes what it recognizes itself). Checked against 20250625."""
    import whisper
    from whisper.audio import HOP_LENGTH, N_FRAMES

    mel = whisper.log_mel_spectrogram(whisper.pad_or_trim(window), model.dims.n_mels)[:, :N_FRAMES]
    with torch.no_grad():
        features = model.embed_audio(mel.to(model.device, next(model.parameters()).dtype).unsqueeze(0))
    return features, min(N_FRAMES, len(window) // HOP_LENGTH)


class _Encoded:
    """What `whisper.timing.find_alignment` reads of a model, its audio encoded already: the decoder, its heads and
    dimensions, and a call that runs the decoder on the kept features (the mel it is given is not read)."""

    def __init__(self, model, features: torch.Tensor):
        self.dims, self.device, self.decoder = model.dims, model.device, model.decoder
        self.alignment_heads, self.features = model.alignment_heads, features

    def __call__(self, mel: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        return self.decoder(tokens, self.features)


def whisper_word_timings(model, tokenizer, tokens: list[int], encoded: tuple[torch.Tensor, int]) -> list[WordTiming]:
    """Each word of `tokens` timed in an encoded window (whisper_encoded) by cross-attention and dynamic time warping,
    with the decoder's probability for it: `whisper.timing.find_alignment`, undocumented (transcribe's word_timestamps
    time what it recognized, never a given text), given the features through `_Encoded`. It unhooks the cross-attention
    only if all went well; the model is shared (the page, a batch), so the hooks come off whatever happens
    (hooks_removed). Checked against openai-whisper 20250625."""
    from whisper.timing import find_alignment

    features, frames = encoded
    with hooks_removed(model):
        timings = find_alignment(_Encoded(model, features), tokenizer, tokens, features[0], frames)
    return [(t.word, t.start, t.end, t.probability, len(t.tokens)) for t in timings]


@contextmanager
def hooks_removed(model: torch.nn.Module) -> Iterator[None]:
    """The forward hooks added to `model`'s modules within, removed after, whatever happens. torch keeps them in its
    private `_forward_hooks` alone, so each module's `register_forward_hook` is patched for the call (on the instance,
    deleted after) to keep the handles; a handle's remove() ignores a hook gone already. Checked on torch 2.14.1."""
    handles = []

    def keeping(register):
        def register_and_keep(*args, **kwargs):
            handles.append(register(*args, **kwargs))
            return handles[-1]

        return register_and_keep

    modules = list(model.modules())
    for module in modules:
        module.register_forward_hook = keeping(module.register_forward_hook)
    try:
        yield
    finally:
        for module in modules:
            del module.register_forward_hook
        for handle in handles:
            handle.remove()


def set_alignment_heads(model, name: str) -> None:
    """The cross-attention heads that time words, as openai-whisper sets them on a model it loads by `name` (from a file
    it keeps every head of the decoder's last half). Its table of them is private (`whisper._ALIGNMENT_HEADS`) and
    `Whisper.set_alignment_heads` undocumented. Checked against openai-whisper 20250625."""
    import whisper

    model.set_alignment_heads(whisper._ALIGNMENT_HEADS[name])


def whisper_halves(dims: dict[str, int]) -> tuple[torch.nn.Module, torch.nn.Module]:
    """openai-whisper's encoder and decoder of these dimensions (ModelDimensions' fields), built apart: whisper.model's
    AudioEncoder and TextDecoder, undocumented. A Whisper built whole makes its alignment heads a sparse tensor, which
    the meta device cannot hold. Checked against openai-whisper 20250625."""
    from whisper.model import AudioEncoder, TextDecoder

    encoder = AudioEncoder(*(dims[f"n_{k}"] for k in ("mels", "audio_ctx", "audio_state", "audio_head", "audio_layer")))
    decoder = TextDecoder(*(dims[f"n_{k}"] for k in ("vocab", "text_ctx", "text_state", "text_head", "text_layer")))
    return encoder, decoder


def gpt2_vocabulary() -> tuple[dict[str, int], list[tuple[str, str]]]:
    """GPT-2's byte-level BPE vocabulary and merges, from the ranks openai-whisper ships for its GPT-2 tokenizer, by
    transformers' converter of tiktoken ranks. The file's place in whisper's package (assets/gpt2.tiktoken) and
    `transformers.convert_slow_tokenizer.TikTokenConverter` are both undocumented; the documented ways fetch the
    vocabulary from the network (tiktoken's, the hub's gpt2). Checked on openai-whisper 20250625, transformers 5.24."""
    import whisper
    from transformers.convert_slow_tokenizer import TikTokenConverter

    ranks = str(Path(whisper.__file__).parent / "assets" / "gpt2.tiktoken")
    return TikTokenConverter(ranks).extract_vocab_merges_from_model(ranks)


# --- faster-whisper --------------------------------------------------------------------------------


def ctranslate2_whisper(model) -> Any | None:
    """The CTranslate2 Whisper a faster-whisper WhisperModel runs (None for any other model), whose is_multilingual,
    compute_type and device CTranslate2 documents, in faster-whisper's undocumented `model`. Checked on 1.2.1, 4.8.5."""
    faster_whisper = sys.modules.get("faster_whisper")  # (not imported: no model of it exists)
    return model.model if faster_whisper and isinstance(model, faster_whisper.WhisperModel) else None


def faster_whisper_tokenizer(model, language: str) -> tuple[Any, int]:
    """As whisper_tokenizer, by faster-whisper, which documents WhisperModel's transcribe and detect_language, not
    its Tokenizer (faster_whisper.tokenizer), `hf_tokenizer` or `max_length` (the decoder's context). Checked
    against faster-whisper 1.2.1."""
    from faster_whisper.tokenizer import Tokenizer

    multilingual = ctranslate2_whisper(model).is_multilingual
    tokenizer = Tokenizer(model.hf_tokenizer, multilingual, task="transcribe", language=language)
    return tokenizer, model.max_length - len(tokenizer.sot_sequence) - 2


def faster_whisper_encoded(model, window: np.ndarray) -> tuple[Any, int]:
    """As whisper_encoded, by faster-whisper: its feature extractor's frames, padded or trimmed to 30 s (pad_or_trim)
    and encoded (WhisperModel.encode), none documented. Checked against faster-whisper 1.2.1."""
    from faster_whisper.audio import pad_or_trim

    extractor = model.feature_extractor
    frames = min(len(window) // extractor.hop_length, extractor.nb_max_frames)
    return model.encode(pad_or_trim(extractor(window)[:, :frames])), frames


def faster_whisper_word_timings(model, tokenizer, tokens: list[int], encoded: tuple[Any, int]) -> list[WordTiming]:
    """As whisper_word_timings, by faster-whisper: WhisperModel.find_alignment (CTranslate2's align, undocumented)
    on an encoded window (faster_whisper_encoded). Checked against faster-whisper 1.2.1."""
    features, frames = encoded
    [timings] = model.find_alignment(tokenizer, [tokens], features, frames)
    return [(t["word"], t["start"], t["end"], t["probability"], len(t["tokens"])) for t in timings]


def speech_timestamps(samples: np.ndarray, options: dict, rate: int) -> list[tuple[int, int]]:
    """Where Silero (the voice activity model faster-whisper bundles) hears a voice in `samples`: (start, end) sample
    indices. faster-whisper documents Silero as transcribe's vad_filter alone (its options VadOptions' fields); the
    stretches come from its undocumented `faster_whisper.vad.get_speech_timestamps`. Checked against 1.2.1."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    found = get_speech_timestamps(samples, VadOptions(**options), sampling_rate=rate)
    return [(stretch["start"], stretch["end"]) for stretch in found]


# --- Demucs ----------------------------------------------------------------------------------------
# Demucs documents demucs.separate.main (its command line) and demucs.api.Separator, which loads a model by name itself:
# neither takes the model musicvid keeps loaded (shared, in its precision and device, measured before it loads:
# musicvid.models.registry) or a model's file by path. Each function here is so, checked against demucs 4.1.0.


def demucs_model(name: str) -> torch.nn.Module:
    """A Demucs bag of models: by name (demucs.pretrained.get_model; htdemucs: the hub's adefossez/HTDemucs),
    or one model's file (.safetensors: demucs.hf; .th: demucs.states) in a bag of its own (demucs_bag)."""
    from demucs.hf import load_safetensors_model
    from demucs.pretrained import get_model
    from demucs.states import load_model

    file = Path(name).expanduser()  # (as --separator's check read it: a .th or a .safetensors)
    if not file.is_file():
        return get_model(name)
    return demucs_bag(load_model(demucs_package(file)) if file.suffix == ".th" else load_safetensors_model(file))


def demucs_package(file: Path) -> dict:
    """A .th file (torch.save of demucs.states.serialize_model's class, arguments and weights) read by torch's
    weights-only unpickler, building Demucs' model classes alone: demucs.states would run any code the file holds."""
    from demucs import demucs, hdemucs, htdemucs

    with torch.serialization.safe_globals([demucs.Demucs, hdemucs.HDemucs, htdemucs.HTDemucs, Fraction]):
        return torch.load(file, "cpu", weights_only=True)


def htdemucs(*args, **sizes) -> torch.nn.Module:
    """Demucs' hybrid transformer (demucs.htdemucs.HTDemucs) of these sizes: measured on the meta device; tiny's."""
    from demucs.htdemucs import HTDemucs

    return HTDemucs(*args, **sizes)


def demucs_bag(*models: torch.nn.Module) -> torch.nn.Module:
    """Models as one Demucs bag of models (demucs.apply.BagOfModels), as demucs_model loads them."""
    from demucs.apply import BagOfModels

    return BagOfModels(list(models))


def demucs_format(model: torch.nn.Module) -> tuple[int, int]:
    """The sample rate and channels a Demucs model hears (its `samplerate` and `audio_channels`)."""
    return model.samplerate, model.audio_channels


def demucs_stem(model: torch.nn.Module, mix: torch.Tensor, stem: str, overlap: float, progress: bool) -> torch.Tensor:
    """One stem (by its name among the model's `sources`) of `mix` (channels × samples), as demucs.apply.apply_model
    separates it on the model's device: in segments, each overlapping the next by `overlap` of one, never shifted
    (its default shifts the song by a random offset, and a rerun must hear the same)."""
    from demucs.apply import apply_model

    device = next(model.parameters()).device
    stems = apply_model(model, mix[None], device=device, shifts=0, split=True, overlap=overlap, progress=progress)
    return stems[0, model.sources.index(stem)]


# --- Gradio ----------------------------------------------------------------------------------------


def gradio_upload_folder() -> Path:
    """The folder Gradio keeps a page's uploads in. Its guide on file access names the variable that moves it
    (GRADIO_TEMP_DIR), not where it is otherwise; `gradio.utils.get_upload_folder`, which Gradio asks, is undocumented.
    Checked against gradio 6.31.0."""
    from gradio.utils import get_upload_folder

    return Path(get_upload_folder()).resolve()
