"""The published architectures of the models the presets name, as their configs give them: what the memory plan
(musicvid.models.sizes) builds on torch's meta device to count weights, and the benchmarks to count FLOP.

Only shapes are here, never weights: a model built from them on the meta device costs no memory and no download.
"""

from __future__ import annotations

from fractions import Fraction

# Whisper large-v2's dimensions (its checkpoint's "dims")
WHISPER_LARGE_V2 = dict(
    n_mels=80,
    n_audio_ctx=1500,
    n_audio_state=1280,
    n_audio_head=20,
    n_audio_layer=32,
    n_vocab=51865,
    n_text_ctx=448,
    n_text_state=1280,
    n_text_head=20,
    n_text_layer=32,
)
# The other openai-whisper models (the Whisper paper's table 1; every checkpoint's encoder and decoder are alike):
# large-v3 (what "large" means now) hears 128 mel bands and has one token more, turbo is large-v3 with 4 decoder
# layers; the smaller ones by width, heads and layers, their English-only ones with one token less.
WHISPER_LARGE_V3 = {**WHISPER_LARGE_V2, "n_mels": 128, "n_vocab": 51866}
WHISPER_TURBO = {**WHISPER_LARGE_V3, "n_text_layer": 4}
WHISPER_LARGE = {
    "large-v1": WHISPER_LARGE_V2, "large-v2": WHISPER_LARGE_V2, "large-v3": WHISPER_LARGE_V3, "large": WHISPER_LARGE_V3,
    "large-v3-turbo": WHISPER_TURBO, "turbo": WHISPER_TURBO,
}  # fmt: skip
WHISPER_WIDTHS = {"tiny": (384, 6, 4), "base": (512, 8, 6), "small": (768, 12, 12), "medium": (1024, 16, 24)}


def whisper_dims(name: str) -> dict | None:
    """An openai-whisper model's dimensions by its name (whisper.available_models()); None for another name."""
    if name in WHISPER_LARGE:
        return dict(WHISPER_LARGE[name])
    if name.removesuffix(".en") not in WHISPER_WIDTHS:
        return None
    state, heads, layers = WHISPER_WIDTHS[name.removesuffix(".en")]
    audio = dict(n_audio_state=state, n_audio_head=heads, n_audio_layer=layers)
    text = dict(n_text_state=state, n_text_head=heads, n_text_layer=layers)
    return {**WHISPER_LARGE_V2, **audio, **text, "n_vocab": 51864 if name.endswith(".en") else 51865}


# ViPE-M is GPT-2 Medium fine-tuned (its config: transformers' GPT2Config with these sizes)
GPT2_MEDIUM = dict(n_embd=1024, n_layer=24, n_head=16, vocab_size=50257, n_positions=1024)
# CLIP's text encoder as Stable Diffusion and SDXL tokenize for it: its whole vocabulary (the widths
# are musicvid.models.tiny.LOCAL_DIFFUSION's)
CLIP_TEXT = dict(vocab_size=49408)
# IP-Adapter's image encoders (CLIPVisionModelWithProjection, h94/IP-Adapter's image_encoder/config.json):
# OpenCLIP ViT-H/14 for SD 1.5's adapter, ViT-bigG/14 for SDXL's
CLIP_VIT_H_14_PROJECTED = dict(
    hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_attention_heads=16, patch_size=14,
    image_size=224, projection_dim=1024,
)  # fmt: skip
CLIP_VIT_BIGG_14_PROJECTED = dict(
    hidden_size=1664, intermediate_size=8192, num_hidden_layers=48, num_attention_heads=16, patch_size=14,
    image_size=224, projection_dim=1280,
)  # fmt: skip

# The scorers (CLIPModel; openai/clip-vit-large-patch14's config.json, and PickScore's, CLIP ViT-H/14 as
# laion/CLIP-ViT-H-14-laion2B-s32B-b79K's): each tower's widths, and the shared projection
CLIP_VIT_L_14 = dict(
    text_config=dict(hidden_size=768, intermediate_size=3072, num_hidden_layers=12, num_attention_heads=12),
    vision_config=dict(
        hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16, patch_size=14
    ),
    projection_dim=768,
)
CLIP_VIT_H_14 = dict(
    text_config=dict(hidden_size=1024, intermediate_size=4096, num_hidden_layers=24, num_attention_heads=16),
    vision_config=dict(
        hidden_size=1280, intermediate_size=5120, num_hidden_layers=32, num_attention_heads=16, patch_size=14
    ),
    projection_dim=1024,
)

# Lightricks/LTX-Video-0.9.5 transformer/config.json, less its bookkeeping keys (the same 2B architecture
# as 0.9.0, 0.9.1 and the 0.9.6/0.9.8 2B distilled models)
LTX_TRANSFORMER = dict(
    activation_fn="gelu-approximate",
    attention_bias=True,
    attention_head_dim=64,
    attention_out_bias=True,
    caption_channels=4096,
    cross_attention_dim=2048,
    in_channels=128,
    norm_elementwise_affine=False,
    norm_eps=1e-06,
    num_attention_heads=32,
    num_layers=28,
    out_channels=128,
    patch_size=1,
    patch_size_t=1,
    qk_norm="rms_norm_across_heads",
)
# Lightricks/LTX-Video-0.9.5 vae/config.json (diffusers' conversion), less its bookkeeping keys
LTX_VAE = dict(
    block_out_channels=(128, 256, 512, 1024, 2048),
    decoder_block_out_channels=(256, 512, 1024),
    decoder_causal=False,
    decoder_inject_noise=(False, False, False, False),
    decoder_layers_per_block=(5, 5, 5, 5),
    decoder_spatio_temporal_scaling=(True, True, True),
    down_block_types=("LTXVideo095DownBlock3D",) * 4,
    downsample_type=("spatial", "temporal", "spatiotemporal", "spatiotemporal"),
    encoder_causal=True,
    in_channels=3,
    latent_channels=128,
    layers_per_block=(4, 6, 6, 2, 2),
    out_channels=3,
    patch_size=4,
    patch_size_t=1,
    resnet_norm_eps=1e-06,
    scaling_factor=1.0,
    spatial_compression_ratio=32,
    spatio_temporal_scaling=(True, True, True, True),
    temporal_compression_ratio=8,
    timestep_conditioning=True,
    upsample_factor=(2, 2, 2),
    upsample_residual=(True, True, True),
)
# google/t5-v1_1-xxl config.json (Lightricks/LTX-Video-0.9.5 text_encoder/), its architecture's keys
T5_XXL = dict(
    d_ff=10240,
    d_kv=64,
    d_model=4096,
    feed_forward_proj="gated-gelu",
    layer_norm_epsilon=1e-06,
    num_heads=64,
    num_layers=24,
    relative_attention_max_distance=128,
    relative_attention_num_buckets=32,
    tie_word_embeddings=False,
    vocab_size=32128,
)
# What LTXConditionPipeline pads its prompts to (its max_sequence_length; T5's tokenizer's own limit is 128)
LTX_TEXT_TOKENS = 256

# Demucs' htdemucs (adefossez/HTDemucs, signature 955717e8): the kwargs its metadata carries where they differ
# from HTDemucs' defaults in size (42M weights)
HTDEMUCS = dict(
    sources=["drums", "bass", "other", "vocals"], samplerate=44100, segment=Fraction(39, 5), dconv_mode=3,
    bottom_channels=512,
)  # fmt: skip
# Real-ESRGAN x4plus: the RRDB network of 64 filters and 23 blocks (spandrel's ESRGAN, 16.7M weights)
REAL_ESRGAN_X4PLUS = dict(num_filters=64, num_blocks=23, scale=4)
