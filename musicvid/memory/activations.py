"""What a model's pass holds in memory beside its weights, counted by running the pass on the meta device.

The architectures built by musicvid.models.sizes run their passes here on tensors with shapes and no data: every
tensor a pass makes is recorded while it lives (LiveTensors), and the most alive at once is the pass's peak. It
costs no memory and takes a fraction of a second. Two things of a CUDA run are modelled on the way:
- attention: on CUDA, torch's scaled_dot_product_attention runs flash or memory-efficient kernels that never hold
  the attention matrix; on the meta device it would fall back to the matrix, so it is answered with its output
  alone (FusedAttention). Attention that diffusers slices by hand (--attention-slicing) does hold its slices, and
  is counted so;
- what a pass leaves behind for the next step (a decoder's key/value cache) is counted where a pass keeps it.
What this leaves out (the allocator's rounding, cuDNN's and cuBLAS's workspaces) musicvid.memory.plan adds as a margin.

Each estimate is measured for one and for two of what it batches, and grows linearly from there: the passes grow
exactly so (SD 1.5's UNet holds 8.3 kB per latent pixel per byte of its dtype at batches of 1, 2 and 8, from 256² to
1024²; its VAE's decode 768 bytes per pixel). Each measurement is kept for the process.
"""

from __future__ import annotations

import weakref
from functools import cache
from typing import Callable

import torch
from torch.overrides import TorchFunctionMode

from musicvid.models import sizes
from musicvid.models.internals import dispatch_mode_base, no_attention_masks
from musicvid.models.published import KLEIN_TEXT_LAYERS, QWEN3_TEXT_TOKENS
from musicvid.models.readback import GB

# Demucs' htdemucs on one segment (7.8 s of stereo at 44.1 kHz, float32): its pass calls .item(), which the meta
# device cannot answer, so it was measured once on the CPU with LiveTensors, with the published sizes (0.377 GB).
DEMUCS_SEGMENT_GB = 0.38
# ViPE's generate call: at most 16 sequences (vipe_core's batch_size), each a context of up to 16 lines of about
# 12 tokens and its 50 new ones
VIPE_SEQUENCES, VIPE_TOKENS = 16, 256
TEXT_TOKENS = 77  # CLIP's, as Stable Diffusion pads every prompt


class LiveTensors(dispatch_mode_base()):  # torch's TorchDispatchMode
    """The bytes of the tensors an operation makes, while they live; `peak`: the most at once. The storages of
    `kept` modules (their weights) are not counted, even where an operation returns a view of one."""

    def __init__(self, *kept: torch.nn.Module):
        super().__init__()
        # (a storage's Python object lives as long as the storage does: its id names it meanwhile)
        self.kept = {id(t.untyped_storage()) for m in kept for t in (*m.parameters(), *m.buffers())}
        self.live, self.peak, self.seen = 0, 0, set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for tensor in tensors_in(out):
            self._made(tensor.untyped_storage())
        return out

    def _made(self, storage) -> None:
        key = id(storage)
        if key in self.seen or key in self.kept:
            return
        self.seen.add(key)
        self.live += storage.nbytes()
        self.peak = max(self.peak, self.live)
        weakref.finalize(storage, self._freed, key, storage.nbytes())

    def _freed(self, key: int, nbytes: int) -> None:
        self.seen.discard(key)
        self.live -= nbytes


def tensors_in(out) -> list[torch.Tensor]:
    """The tensors an operation returned: one, or a tuple or list of them (or of lists)."""
    if isinstance(out, torch.Tensor):
        return [out]
    return [t for item in out for t in tensors_in(item)] if isinstance(out, (tuple, list)) else []


class FusedAttention(TorchFunctionMode):
    """scaled_dot_product_attention as CUDA's fused kernels hold it: its output alone."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not torch.nn.functional.scaled_dot_product_attention:
            return func(*args, **kwargs)
        query, value = (args[0], args[2]) if len(args) > 2 else (kwargs["query"], kwargs["value"])
        return query.new_empty(*query.shape[:-1], value.shape[-1])


class UncheckedGroupNorm(TorchFunctionMode):
    """group_norm without its check for more than one value a group: a batch of one at a 1 × 1 latent (a tiny
    model's 16 × 16 picture) has one, which the check refuses as statistics, yet its memory is what is counted
    here, and `linear` measures a batch of one that a guided render never runs."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not torch.nn.functional.group_norm:
            return func(*args, **kwargs)
        named = dict(zip(("input", "num_groups", "weight", "bias", "eps"), args), **kwargs)
        return torch.group_norm(
            named["input"], named["num_groups"], named.get("weight"), named.get("bias"), named.get("eps", 1e-5)
        )


def peak_gb(run: Callable[[], object], *modules: torch.nn.Module) -> float:
    """The most memory (GB) the tensors `run()` makes hold at once, run on the meta device beside `modules`."""
    counted = LiveTensors(*modules)
    with torch.device("meta"), torch.no_grad(), FusedAttention(), UncheckedGroupNorm(), counted:
        run()
    return counted.peak / GB


def tiling(vae: torch.nn.Module, tiled: bool) -> None:
    if tiled:
        vae.enable_tiling()
    else:
        vae.disable_tiling()


def linear(measure: Callable[[int], float], count: int) -> float:
    """`measure` at `count`, from its measurements at 1 and 2."""
    one = measure(1)
    return one + (count - 1) * (measure(2) - one)


# --- the passes ----------------------------------------------------------------------------------------------


@cache
def unet_pass_gb(name: str, dtype: torch.dtype, size: tuple[int, int], batch: int, sliced: bool) -> float:
    """One call of diffusion model `name`'s UNet on `batch` latents of a picture of `size` (guidance's twins
    included in `batch`), with diffusers' sliced attention where `sliced`."""
    unet = sizes.part_in("diffusion", name, "unet", dtype)
    unet.set_attention_slice("auto" if sliced else None)
    width, height = size
    xl = unet.config.addition_embed_type == "text_time"  # SDXL: conditioned on the pooled text and six sizes
    pooled = unet.config.projection_class_embeddings_input_dim - 6 * unet.config.addition_time_embed_dim if xl else 0

    def run():
        latents = torch.empty(batch, unet.config.in_channels, height // 8, width // 8, dtype=dtype)
        text = torch.empty(batch, TEXT_TOKENS, unet.config.cross_attention_dim, dtype=dtype)
        extra = {"text_embeds": torch.empty(batch, pooled, dtype=dtype), "time_ids": torch.empty(batch, 6, dtype=dtype)}
        unet(latents, torch.full((batch,), 500), encoder_hidden_states=text, added_cond_kwargs=extra if xl else None)

    return peak_gb(run, unet)


def transformer_call(name: str, dtype: torch.dtype, size: tuple[int, int], batch: int, references: int = 0):
    """Flow-matching model `name`'s transformer on the meta device, and one call of it (to run under a meta device
    context) on `batch` latents of a picture of `size` (guidance's twins included in `batch`), each beside a prompt
    of QWEN3_TEXT_TOKENS rows, the most either pipeline passes (Z-Image's prompt is as long as its tokens, klein's
    always that long). Both read (H/16)·(W/16) image tokens: Z-Image from its 16 × H/8 × W/8 latent in 2 × 2
    patches, klein from its latent patchified already, and as many again for each of its `references` pictures
    (each covered to the drawn size)."""
    from diffusers import ZImageTransformer2DModel

    transformer = sizes.part_in("diffusion", name, "transformer", dtype)
    config, (width, height) = transformer.config, size
    tokens = height // 16 * (width // 16) * (1 + references)

    def zimage():
        latents = [torch.empty(config.in_channels, 1, height // 8, width // 8, dtype=dtype) for _ in range(batch)]
        text = [torch.empty(QWEN3_TEXT_TOKENS, config.cap_feat_dim, dtype=dtype) for _ in range(batch)]
        transformer(latents, torch.full((batch,), 0.5), text, return_dict=False)

    def klein():
        transformer(
            hidden_states=torch.empty(batch, tokens, config.in_channels, dtype=dtype),
            encoder_hidden_states=torch.empty(batch, QWEN3_TEXT_TOKENS, config.joint_attention_dim, dtype=dtype),
            timestep=torch.full((batch,), 0.5),
            img_ids=torch.zeros(batch, tokens, 4, dtype=torch.long),
            txt_ids=torch.zeros(batch, QWEN3_TEXT_TOKENS, 4, dtype=torch.long),
            return_dict=False,
        )

    return transformer, zimage if isinstance(transformer, ZImageTransformer2DModel) else klein


@cache
def transformer_pass_gb(name: str, dtype: torch.dtype, size: tuple[int, int], batch: int, references: int = 0) -> float:
    """What one transformer_call holds (GB)."""
    transformer, run = transformer_call(name, dtype, size, batch, references)
    return peak_gb(run, transformer)


@cache
def prompts_pass_gb(name: str, dtype: torch.dtype, prompts: int) -> float:
    """Flow-matching model `name`'s text encoder (Qwen3) on `prompts` prompts, each padded to QWEN3_TEXT_TOKENS, as
    its pipeline calls it: every hidden state kept; Z-Image's Qwen3Model with its key/value cache (Qwen3's default),
    the second-to-last state read; klein's Qwen3ForCausalLM without a cache but with its logits over the whole
    vocabulary, three states read side by side. The prompts' padding mask (a quarter of a MB a prompt) is left out:
    the meta device cannot say which tokens are padding."""
    from transformers import Qwen3ForCausalLM

    encoder = sizes.part_in("diffusion", name, "text_encoder", dtype)
    klein = isinstance(encoder, Qwen3ForCausalLM)
    ids = torch.zeros(prompts, QWEN3_TEXT_TOKENS, dtype=torch.long)

    def run():
        masks = no_attention_masks(encoder.config)
        cache = {"use_cache": False} if klein else {}
        states = encoder(input_ids=ids, attention_mask=masks, output_hidden_states=True, **cache).hidden_states
        if klein:  # side by side: a copy of the three (stacked, then laid out row by row)
            torch.stack([states[k] for k in KLEIN_TEXT_LAYERS], dim=1).transpose(1, 2).reshape(prompts, -1)
        else:  # each prompt's rows without its padding: a copy of at most all of them
            states[-2].clone()

    return peak_gb(run, encoder)


@cache
def decode_gb(kind: str, name: str, dtype: torch.dtype, size: tuple[int, int], batch: int, tiled: bool) -> float:
    """A decode of `batch` pictures of `size` by the VAE of model `name` of `kind` (diffusion, or fast_decoder:
    TAESD), in tiles where `tiled`."""
    vae = sizes.part_in(kind, name, "vae", dtype)
    tiling(vae, tiled)
    channels = vae.config.latent_channels
    width, height = size
    return peak_gb(lambda: vae.decode(torch.empty(batch, channels, height // 8, width // 8, dtype=dtype)), vae)


@cache
def whisper_gb(name: str, dtype: torch.dtype) -> float:
    """Whisper on a 30 s window: the larger of the encoder's pass and the decoder's over the most tokens it decodes
    a window (n_text_ctx // 2, its sample_len), and what lives through the window's decoding: the key/value cache
    of every layer (self- and cross-attention) and, for word times, the cross-attention weights of every layer,
    which openai-whisper keeps in float32 (whisper.timing.find_alignment)."""
    model = sizes.part_in("asr", name, "whisper", dtype)
    encoder, decoder = model["encoder"], model["decoder"]
    mels, frames = encoder.conv1.in_channels, 2 * encoder.positional_embedding.shape[0]
    audio, (text_ctx, width) = frames // 2, decoder.positional_embedding.shape
    layers, heads, tokens = len(decoder.blocks), decoder.blocks[0].attn.n_head, text_ctx // 2
    encode = peak_gb(lambda: encoder(torch.empty(1, mels, frames, dtype=dtype)), model)
    decode = peak_gb(
        lambda: decoder(torch.zeros(1, tokens, dtype=torch.long), torch.empty(1, audio, width, dtype=dtype)), model
    )
    cache_bytes = 2 * layers * width * (audio + text_ctx) * dtype.itemsize
    alignment_bytes = layers * heads * tokens * audio * 4
    return max(encode, decode) + (cache_bytes + alignment_bytes) / GB


@cache
def vipe_gb(name: str, dtype: torch.dtype) -> float:
    """ViPE's pass over its longest batch, whose key/value cache and logits live through the generation."""
    model = sizes.part_in("vipe", name, "vipe", dtype)
    tokens = min(VIPE_TOKENS, model.config.n_positions)
    return peak_gb(
        lambda: model(input_ids=torch.zeros(VIPE_SEQUENCES, tokens, dtype=torch.long), use_cache=True), model
    )


@cache
def upscale_gb(name: str, dtype: torch.dtype, size: tuple[int, int], video: tuple[int, int], batch: int) -> float:
    """The upscaler's pass on `batch` frames of `size`, and its output scaled to cover the `video` size in float32
    (musicvid.delivery.upscale), the two float32 copies counted from their shapes."""
    model = sizes.part_in("upscaler", name, "upscaler", dtype)
    width, height = size
    network = peak_gb(lambda: model(torch.empty(batch, 3, height, width, dtype=dtype)), model)
    scale = sizes.upscaler_scale(name)
    copies = batch * 3 * 4 * (width * height * scale**2 + video[0] * video[1])
    return network + copies / GB
