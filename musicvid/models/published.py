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
# Real-ESRGAN general x4v3: the Compact network (SRVGGNetCompact) of 64 features and 32 convolutions, PReLU
REAL_ESRGAN_GENERAL_X4V3 = dict(num_feat=64, num_conv=32, upscale=4)

# --- The flow-matching families (diffusers' ZImagePipeline, Flux2KleinPipeline, WanImageToVideoPipeline,
# LTX2ConditionPipeline): each repository's component configs, less their bookkeeping keys ---------------------

# Qwen/Qwen3-4B (Qwen3Config): the text encoder of both Z-Image-Turbo (read at its second-to-last layer) and
# FLUX.2 klein 4B (read at layers 9, 18 and 27, side by side: 3 x 2560 = the transformer's 7680)
QWEN3_4B = dict(
    hidden_size=2560, intermediate_size=9728, num_hidden_layers=36, num_attention_heads=32, num_key_value_heads=8,
    head_dim=128, vocab_size=151936, max_position_embeddings=40960, rope_theta=1000000, rms_norm_eps=1e-06,
    tie_word_embeddings=True,
)  # fmt: skip
QWEN3_TEXT_TOKENS = 512  # what both pipelines pad or cut a prompt to (their max_sequence_length)

# Tongyi-MAI/Z-Image-Turbo: transformer/, vae/ (FLUX.1's 16-channel VAE) and scheduler/ configs
ZIMAGE_TRANSFORMER = dict(
    all_patch_size=(2,), all_f_patch_size=(1,), in_channels=16, dim=3840, n_layers=30, n_refiner_layers=2,
    n_heads=30, n_kv_heads=30, norm_eps=1e-05, qk_norm=True, cap_feat_dim=2560, rope_theta=256.0, t_scale=1000.0,
    axes_dims=(32, 48, 48), axes_lens=(1536, 512, 512),
)  # fmt: skip
FLUX1_VAE = dict(
    block_out_channels=(128, 256, 512, 512), down_block_types=("DownEncoderBlock2D",) * 4,
    up_block_types=("UpDecoderBlock2D",) * 4, in_channels=3, out_channels=3, latent_channels=16, layers_per_block=2,
    norm_num_groups=32, sample_size=1024, scaling_factor=0.3611, shift_factor=0.1159, force_upcast=True,
    use_quant_conv=False, use_post_quant_conv=False, mid_block_add_attention=True,
)  # fmt: skip
ZIMAGE_SCHEDULER = dict(num_train_timesteps=1000, use_dynamic_shifting=False, shift=3.0)

# black-forest-labs/FLUX.2-klein-4B: transformer/ (diffusers' converter, klein-4b) and vae/ (AutoencoderKLFlux2)
KLEIN_TRANSFORMER = dict(
    patch_size=1, in_channels=128, num_layers=5, num_single_layers=20, attention_head_dim=128,
    num_attention_heads=24, joint_attention_dim=7680, timestep_guidance_channels=256, mlp_ratio=3.0,
    axes_dims_rope=(32, 32, 32, 32), rope_theta=2000, eps=1e-06, guidance_embeds=False,
)  # fmt: skip
FLUX2_VAE = dict(
    block_out_channels=(128, 256, 512, 512), down_block_types=("DownEncoderBlock2D",) * 4,
    up_block_types=("UpDecoderBlock2D",) * 4, in_channels=3, out_channels=3, latent_channels=32, layers_per_block=2,
    norm_num_groups=32, sample_size=1024, patch_size=(2, 2), batch_norm_eps=0.0001, batch_norm_momentum=0.1,
    use_quant_conv=True, use_post_quant_conv=True, mid_block_add_attention=True,
)  # fmt: skip
# FLUX.2's scheduler: the pipeline always passes an empirical mu, so dynamic shifting is on
KLEIN_SCHEDULER = dict(
    num_train_timesteps=1000, shift=3.0, use_dynamic_shifting=True, time_shift_type="exponential", base_shift=0.5,
    max_shift=1.15, base_image_seq_len=256, max_image_seq_len=4096,
)  # fmt: skip
KLEIN_TEXT_LAYERS = (9, 18, 27)

# Wan-AI/Wan2.1-FLF2V-14B-720P-diffusers: transformer/ (diffusers' converter, Wan-FLF2V-14B-720P: 514 image
# tokens, two CLIP ViT-H/14 pictures of 257), vae/ (Wan 2.1's, 16 channels; 8x in space, 4x in time) and
# scheduler/ (UniPC on flow sigmas, shift 16)
WAN_FLF2V_14B = dict(
    added_kv_proj_dim=5120, attention_head_dim=128, cross_attn_norm=True, eps=1e-06, ffn_dim=13824, freq_dim=256,
    image_dim=1280, in_channels=36, num_attention_heads=40, num_layers=40, out_channels=16, patch_size=(1, 2, 2),
    pos_embed_seq_len=514, qk_norm="rms_norm_across_heads", rope_max_seq_len=1024, text_dim=4096,
)  # fmt: skip
WAN_VAE = dict(base_dim=96, z_dim=16, dim_mult=[1, 2, 4, 4], num_res_blocks=2, temperal_downsample=[False, True, True])
WAN_FLF2V_SCHEDULER = dict(
    prediction_type="flow_prediction", use_flow_sigmas=True, num_train_timesteps=1000, flow_shift=16.0
)
WAN_TEXT_TOKENS = 512  # UMT5-XXL's prompt, zero-padded
WAN_IMAGE_TOKENS = 257  # a picture's tokens in CLIP ViT-H/14's second-to-last layer

# Lightricks/LTX-2: transformer/ (19B, a video and an audio stream), connectors/, vae/, audio_vae/, vocoder/ and
# scheduler/ configs
LTX2_TRANSFORMER = dict(
    activation_fn="gelu-approximate", attention_bias=True, attention_head_dim=128, attention_out_bias=True,
    audio_attention_head_dim=64, audio_cross_attention_dim=2048, audio_hop_length=160, audio_in_channels=128,
    audio_num_attention_heads=32, audio_out_channels=128, audio_patch_size=1, audio_patch_size_t=1,
    audio_pos_embed_max_pos=20, audio_sampling_rate=16000, audio_scale_factor=4, base_height=2048, base_width=2048,
    caption_channels=3840, causal_offset=1, cross_attention_dim=4096, cross_attn_timestep_scale_multiplier=1000,
    in_channels=128, norm_elementwise_affine=False, norm_eps=1e-06, num_attention_heads=32, num_layers=48,
    out_channels=128, patch_size=1, patch_size_t=1, pos_embed_max_pos=20, qk_norm="rms_norm_across_heads",
    rope_double_precision=True, rope_theta=10000.0, rope_type="split", timestep_scale_multiplier=1000,
    vae_scale_factors=(8, 32, 32),
)  # fmt: skip
LTX2_CONNECTORS = dict(
    audio_connector_attention_head_dim=128, audio_connector_num_attention_heads=30, audio_connector_num_layers=2,
    audio_connector_num_learnable_registers=128, caption_channels=3840, causal_temporal_positioning=False,
    connector_rope_base_seq_len=4096, rope_double_precision=True, rope_theta=10000.0, rope_type="split",
    text_proj_in_factor=49, video_connector_attention_head_dim=128, video_connector_num_attention_heads=30,
    video_connector_num_layers=2, video_connector_num_learnable_registers=128,
)  # fmt: skip
LTX2_VAE = dict(
    block_out_channels=(256, 512, 1024, 2048), decoder_block_out_channels=(256, 512, 1024), decoder_causal=False,
    decoder_inject_noise=(False, False, False, False), decoder_layers_per_block=(5, 5, 5, 5),
    decoder_spatial_padding_mode="reflect", decoder_spatio_temporal_scaling=(True, True, True),
    down_block_types=("LTX2VideoDownBlock3D",) * 4, downsample_type=("spatial", "temporal", "spatiotemporal", "spatiotemporal"),
    encoder_causal=True, encoder_spatial_padding_mode="zeros", in_channels=3, latent_channels=128,
    layers_per_block=(4, 6, 6, 2, 2), out_channels=3, patch_size=4, patch_size_t=1, resnet_norm_eps=1e-06,
    scaling_factor=1.0, spatial_compression_ratio=32, spatio_temporal_scaling=(True, True, True, True),
    temporal_compression_ratio=8, timestep_conditioning=False, upsample_type=("spatiotemporal",) * 3,
    upsample_residual=(True, True, True), upsample_factor=(2, 2, 2),
)  # fmt: skip
LTX2_AUDIO_VAE = dict(
    base_channels=128, causality_axis="height", ch_mult=(1, 2, 4), double_z=True, dropout=0.0, in_channels=2,
    is_causal=True, latent_channels=8, mel_bins=64, mel_hop_length=160, mid_block_add_attention=False,
    norm_type="pixel", num_res_blocks=2, output_channels=2, resolution=256, sample_rate=16000,
)  # fmt: skip
LTX2_VOCODER = dict(
    hidden_channels=1024, in_channels=128, leaky_relu_negative_slope=0.1, out_channels=2, output_sampling_rate=24000,
    resnet_dilations=((1, 3, 5),) * 3, resnet_kernel_sizes=(3, 7, 11), upsample_factors=(6, 5, 2, 2, 2),
    upsample_kernel_sizes=(16, 15, 8, 4, 4),
)  # fmt: skip
LTX2_SCHEDULER = dict(
    base_image_seq_len=1024, base_shift=0.95, max_image_seq_len=4096, max_shift=2.05, num_train_timesteps=1000,
    shift=1.0, shift_terminal=0.1, use_dynamic_shifting=True,
)  # fmt: skip
# Gemma 3 12B's text tower (google/gemma-3-12b-it): LTX-2 stacks its 49 hidden states (embeddings and 48 layers)
GEMMA3_12B_TEXT = dict(
    hidden_size=3840, intermediate_size=15360, num_hidden_layers=48, num_attention_heads=16, num_key_value_heads=8,
    head_dim=256, vocab_size=262208, sliding_window=1024, rope_theta=1000000.0,
)  # fmt: skip
LTX2_TEXT_TOKENS = 1024  # left-padded
# Gemma 3 12B's image tower (google/gemma-3-12b-it: SigLIP so400m at 896 pixels, 256 tokens a picture), which
# LTX-2's text encoder holds and never runs
GEMMA3_SIGLIP = dict(
    hidden_size=1152, intermediate_size=4304, num_hidden_layers=27, num_attention_heads=16, image_size=896,
    patch_size=14, vision_use_head=False,
)  # fmt: skip
GEMMA3_IMAGE_TOKENS = 256
# google/umt5-xxl's encoder (Wan's text encoder): T5-XXL's shapes over umT5's vocabulary
UMT5_XXL = {**T5_XXL, "vocab_size": 256384}
