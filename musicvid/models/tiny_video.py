"""The video families' tiny pipelines (--transitions video): LTX-Video 0.9.5's, LTX-2's and Wan 2.1 FLF2V's diffusers
classes with random weights, built here from a fixed seed with no download, as musicvid.models.tiny builds the rest.

LTX-2 reads a prompt through Gemma 3 12B (every hidden state, stacked: the connectors take them all), here
TINY_VIDEO's few layers with the tiny tokenizer of assets/tokenizers/tiny-gemma3; it draws sound beside the video,
through an audio VAE and a vocoder, kept here at their least. Wan reads a prompt through UMT5-XXL (here the tiny T5
tokenizer, LTX-Video's) and both keyframes through CLIP ViT-H/14's second-to-last layer, with the
processor of the tiny CLIP tokenizer. Every size is defined here once: the tests' stand-ins of the two repositories
(tests/standins/ltx2.py, wan.py) and the benchmarks' --dry-run (benchmarks/families.py) build these.
"""

from __future__ import annotations

import math

import torch

from musicvid.core.assets import TINY_CLIP_TOKENIZER, TINY_GEMMA3_TOKENIZER
from musicvid.models import published as P
from musicvid.models.tiny import TINY_SEED
from musicvid.settings.presets import TINY_LTX2, TINY_WAN

# --- LTX-Video (--transitions video) ---------------------------------------------------------------

# LTX-Video 0.9.5's classes at the least that runs, keeping what the pipeline's shapes depend on: the VAE
# still compresses 32× in space and 8× in time (so sizes are multiples of 32 and clips 8k + 1 frames), with
# 0.9.5's down blocks, timestep-conditioned decoder and residual upsampling, and the channels halving as
# in the published one (128 … 2048 there). The published transformer is 28 layers of 32 heads × 64, over
# 128 latent channels, reading T5-XXL's 4096-wide text.
TINY_LTX = dict(
    transformer=dict(
        in_channels=8, out_channels=8, num_attention_heads=2, attention_head_dim=8, cross_attention_dim=16,
        num_layers=1, caption_channels=16,
    ),
    vae=dict(
        latent_channels=8, block_out_channels=(4, 8, 16, 32, 64), decoder_block_out_channels=(8, 16, 32),
        down_block_types=("LTXVideo095DownBlock3D",) * 4, layers_per_block=(1,) * 5, decoder_layers_per_block=(1,) * 4,
        spatio_temporal_scaling=(True,) * 4, decoder_spatio_temporal_scaling=(True,) * 3,
        decoder_inject_noise=(False,) * 4, downsample_type=("spatial", "temporal", "spatiotemporal", "spatiotemporal"),
        upsample_residual=(True,) * 3, upsample_factor=(2,) * 3, timestep_conditioning=True,
        spatial_compression_ratio=32, temporal_compression_ratio=8,
    ),
    text=dict(d_model=16, d_kv=8, d_ff=32, num_layers=1, num_heads=2, relative_attention_num_buckets=8),
)  # fmt: skip
# T5's sentencepiece pieces, a handful: whole words for the commonest, letters for the rest
TINY_T5_WORDS = "a the of and in on to red sun sky night city rain light dark love heart sea fire".split()


def tiny_t5_tokenizer():
    """T5's tokenizer (a unigram model, as the published one's spiece.model) over TINY_T5_WORDS and letters."""
    from transformers import T5Tokenizer

    pieces = [(f"\u2581{word}", -3.0 - n / 10) for n, word in enumerate(TINY_T5_WORDS)]
    pieces += [("\u2581", -5.0)] + [(letter, -8.0) for letter in "abcdefghijklmnopqrstuvwxyz"]
    return T5Tokenizer(
        vocab=[("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), *pieces], extra_ids=0, model_max_length=128
    )


def tiny_ltx_video():
    """LTXConditionPipeline at the sizes of TINY_LTX."""
    from diffusers import (
        AutoencoderKLLTXVideo,
        FlowMatchEulerDiscreteScheduler,
        LTXConditionPipeline,
        LTXVideoTransformer3DModel,
    )
    from transformers import T5Config, T5EncoderModel

    torch.manual_seed(TINY_SEED)
    tokenizer = tiny_t5_tokenizer()
    pipe = LTXConditionPipeline(
        # 0.9.5's: the pipeline sets its own timesteps, which dynamic shifting would refuse without a shift
        scheduler=FlowMatchEulerDiscreteScheduler(use_dynamic_shifting=False),
        vae=AutoencoderKLLTXVideo(**TINY_LTX["vae"]),
        text_encoder=T5EncoderModel(T5Config(vocab_size=len(tokenizer), **TINY_LTX["text"])),
        tokenizer=tokenizer,
        transformer=LTXVideoTransformer3DModel(**TINY_LTX["transformer"]),
    )
    for module in (pipe.vae, pipe.text_encoder, pipe.transformer):
        module.eval()  # as from_pretrained leaves them: T5's dropout would make every clip another
    return pipe


GEMMA3_VOCAB_MULTIPLE = 64  # the embedding has rows past the tokens, as Gemma 3's 262208 has past its 262145
# LTX-2's audio latents as the pipeline patchifies them: latent_channels × mel_bins / 4 (the audio VAE's mel
# compression) wide, which is also the width of the VAE's latent statistics (base_channels): 8 × 64 / 4 = 128
# published, here 4 × 16 / 4 = 16, the transformer's audio channels
TINY_AUDIO = dict(base_channels=16, latent_channels=4, mel_bins=16)
TINY_AUDIO_WIDTH = TINY_AUDIO["latent_channels"] * TINY_AUDIO["mel_bins"] // 4

# Each family's modules cut to a layer or two a few channels wide. What ties them is kept: LTX-2's connectors read
# every hidden state of Gemma (its layers + 1, each `caption_channels` wide) and hand the transformer heads × width
# of them; the VAE compresses 32× in space and 8× in time. Wan's transformer reads UMT5's width (text_dim) and
# CLIP's (image_dim), its image tokens two pictures of 257 (pos_embed_seq_len, 514) with keys and values as wide
# as its heads (added_kv_proj_dim); its VAE compresses 8× in space and 4× in time.
TINY_VIDEO = {
    TINY_LTX2: {
        "text": dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2,
            head_dim=8, query_pre_attn_scalar=8, sliding_window=P.GEMMA3_12B_TEXT["sliding_window"],
        ),
        # Gemma 3's SigLIP tower (which LTX-2 never runs) at 28 pixels: 2 × 2 patches, one image token each
        "vision": dict(
            hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, image_size=28,
            patch_size=14, vision_use_head=False,
        ),
        "connectors": {
            **P.LTX2_CONNECTORS, "caption_channels": 32, "text_proj_in_factor": 6 + 1,
            "video_connector_attention_head_dim": 16, "video_connector_num_attention_heads": 2,
            "audio_connector_attention_head_dim": 16, "audio_connector_num_attention_heads": 2,
            "video_connector_num_layers": 1, "audio_connector_num_layers": 1,
            "video_connector_num_learnable_registers": 8, "audio_connector_num_learnable_registers": 8,
        },
        "transformer": {
            **P.LTX2_TRANSFORMER, "num_layers": 1, "num_attention_heads": 2, "attention_head_dim": 16,
            "cross_attention_dim": 32, "audio_num_attention_heads": 2, "audio_attention_head_dim": 8,
            "audio_cross_attention_dim": 16, "caption_channels": 32, "audio_in_channels": TINY_AUDIO_WIDTH,
            "audio_out_channels": TINY_AUDIO_WIDTH,
        },
        "vae": {
            **P.LTX2_VAE, "block_out_channels": (8, 16, 32, 32), "decoder_block_out_channels": (8, 16, 32),
            "layers_per_block": (1, 1, 1, 1, 1), "decoder_layers_per_block": (1, 1, 1, 1),
        },
        "audio_vae": {**P.LTX2_AUDIO_VAE, **TINY_AUDIO, "num_res_blocks": 1},
        # the vocoder hears the audio VAE's stereo mel bands side by side
        "vocoder": {
            **P.LTX2_VOCODER, "hidden_channels": 64,
            "in_channels": P.LTX2_AUDIO_VAE["output_channels"] * TINY_AUDIO["mel_bins"],
        },
    },
    TINY_WAN: {
        "text": dict(d_model=32, d_ff=64, num_layers=2, num_heads=4, d_kv=8, relative_attention_num_buckets=8),
        "image_encoder": dict(
            hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, patch_size=14,
            image_size=224, projection_dim=32, hidden_act="gelu",
        ),
        "transformer": {
            **P.WAN_FLF2V_14B, "num_layers": 1, "num_attention_heads": 2, "attention_head_dim": 16, "ffn_dim": 64,
            "text_dim": 32, "image_dim": 32, "added_kv_proj_dim": 2 * 16, "freq_dim": 32,
        },
        "vae": {**P.WAN_VAE, "base_dim": 8},
    },
}  # fmt: skip


def tiny_gemma3_tokenizer():
    from transformers import GemmaTokenizer

    return GemmaTokenizer.from_pretrained(TINY_GEMMA3_TOKENIZER)


def gemma3_config(tokenizer) -> dict:
    """Gemma 3's config (Gemma3ForConditionalGeneration) at TINY_VIDEO's sizes, with the ids of `tokenizer`."""
    sizes = TINY_VIDEO[TINY_LTX2]
    rows = GEMMA3_VOCAB_MULTIPLE * math.ceil(len(tokenizer) / GEMMA3_VOCAB_MULTIPLE)
    ids = tokenizer.convert_tokens_to_ids
    return {
        "text_config": {**sizes["text"], "vocab_size": rows, "rope_scaling": {"factor": 8.0, "rope_type": "linear"}},
        "vision_config": sizes["vision"],
        "boi_token_index": ids("<start_of_image>"),
        "eoi_token_index": ids("<end_of_image>"),
        "image_token_index": ids("<image_soft_token>"),
        "eos_token_id": [ids("<eos>"), ids("<end_of_turn>")],
        "mm_tokens_per_image": 4,  # 256 at 896 pixels in patches of 14 (pooled 4 × 4): here 2 × 2, not pooled
    }


def ltx2_modules(tokenizer) -> dict:
    """LTX-2's modules at TINY_VIDEO's sizes, built in a fixed order from TINY_SEED (Gemma's vocabulary
    `tokenizer`'s)."""
    from diffusers import AutoencoderKLLTX2Audio, AutoencoderKLLTX2Video, LTX2VideoTransformer3DModel
    from diffusers.pipelines.ltx2 import LTX2TextConnectors, LTX2Vocoder
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    sizes = TINY_VIDEO[TINY_LTX2]
    torch.manual_seed(TINY_SEED)
    modules = {
        "text_encoder": Gemma3ForConditionalGeneration(Gemma3Config(**gemma3_config(tokenizer))),
        "connectors": LTX2TextConnectors(**sizes["connectors"]),
        "transformer": LTX2VideoTransformer3DModel(**sizes["transformer"]),
        "vae": AutoencoderKLLTX2Video(**sizes["vae"]),
        "audio_vae": AutoencoderKLLTX2Audio(**sizes["audio_vae"]),
        "vocoder": LTX2Vocoder(**sizes["vocoder"]),
    }
    return {name: module.eval() for name, module in modules.items()}  # (eval: as from_pretrained leaves them)


def tiny_ltx2():
    """LTX2ConditionPipeline at TINY_VIDEO's sizes."""
    from diffusers import FlowMatchEulerDiscreteScheduler, LTX2ConditionPipeline

    tokenizer = tiny_gemma3_tokenizer()
    scheduler = FlowMatchEulerDiscreteScheduler(**P.LTX2_SCHEDULER)
    return LTX2ConditionPipeline(scheduler=scheduler, tokenizer=tokenizer, **ltx2_modules(tokenizer))


def tiny_clip_processor():
    """The processor of Wan's image_processor/ (a CLIPProcessor: CLIP's 224-pixel preprocessing and a tokenizer
    the pipeline never runs)."""
    from transformers import CLIPImageProcessor, CLIPProcessor, CLIPTokenizer

    return CLIPProcessor(CLIPImageProcessor(), CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER))


def wan_modules(tokenizer) -> dict:
    """Wan 2.1 FLF2V's modules at TINY_VIDEO's sizes, built in a fixed order from TINY_SEED (UMT5's vocabulary
    `tokenizer`'s)."""
    from diffusers import AutoencoderKLWan, WanTransformer3DModel
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection, UMT5Config, UMT5EncoderModel

    sizes = TINY_VIDEO[TINY_WAN]
    torch.manual_seed(TINY_SEED)
    modules = {
        "text_encoder": UMT5EncoderModel(UMT5Config(vocab_size=len(tokenizer), **sizes["text"])),
        "image_encoder": CLIPVisionModelWithProjection(CLIPVisionConfig(**sizes["image_encoder"])),
        "transformer": WanTransformer3DModel(**sizes["transformer"]),
        "vae": AutoencoderKLWan(**sizes["vae"]),
    }
    return {name: module.eval() for name, module in modules.items()}


def tiny_wan():
    """WanImageToVideoPipeline (first and last frame) at TINY_VIDEO's sizes."""
    from diffusers import UniPCMultistepScheduler, WanImageToVideoPipeline

    tokenizer, scheduler = tiny_t5_tokenizer(), UniPCMultistepScheduler(**P.WAN_FLF2V_SCHEDULER)
    return WanImageToVideoPipeline(
        tokenizer=tokenizer, scheduler=scheduler, image_processor=tiny_clip_processor(), **wan_modules(tokenizer)
    )


def tiny_video_modules(name: str) -> dict:
    """The modules of the tiny video model `name` (a key of VIDEO_MODELS), without its pipeline: what the memory plan
    counts."""
    if name == TINY_LTX2:
        return ltx2_modules(tiny_gemma3_tokenizer())
    return wan_modules(tiny_t5_tokenizer())


VIDEO_MODELS = {TINY_LTX2: tiny_ltx2, TINY_WAN: tiny_wan}
