"""Models of the real classes with random weights, built here from a fixed seed, with no download.

The tiny preset's models (musicvid.settings.presets.TINY) are as small as each class goes: every stage runs
its real code path on a CPU in seconds. SD15_RANDOM is Stable Diffusion 1.5's architecture at full size,
for benchmarks: compute does not depend on the weights' values. The tests' stand-ins of the hub's
repositories (tests/standins/) are built from the same sizes.
"""

from __future__ import annotations

from fractions import Fraction

import torch

from musicvid.core.assets import TINY_CLIP_TOKENIZER, TINY_GPT2_TOKENIZER
from musicvid.models.internals import demucs_bag, htdemucs
from musicvid.settings.presets import SD15_RANDOM, SDXL_RANDOM, TINY, TINY_XL
from vipe_core.inference import ViPE

TINY_SEED = 0

# --- Whisper ---------------------------------------------------------------------------------------

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
    from whisper import ModelDimensions, Whisper

    torch.manual_seed(TINY_SEED)
    model = Whisper(ModelDimensions(**dims))
    # Whisper leaves the decoder's positional embedding uninitialized (a checkpoint fills it).
    torch.nn.init.normal_(model.decoder.positional_embedding, std=0.02)
    return model


def tiny_whisper():
    return random_whisper(**TINY_WHISPER)


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


# --- Stable Diffusion ------------------------------------------------------------------------------

# Sizes of the locally built pipelines: the tiny ones, SD 1.5's own (UNet 860M, VAE 84M, CLIP ViT-L/14) and
# SDXL's (UNet 2.6B; CLIP ViT-L/14 and OpenCLIP ViT-bigG/14, whose last hidden states side by side are the
# 2048-wide text the UNet attends to, and whose projected end-of-text state conditions it with the size).
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
LOCAL_DIFFUSION[TINY_XL] = {
    "text": LOCAL_DIFFUSION[TINY]["text"],
    "text_2": dict(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4, projection_dim=48),
    "unet": dict(
        LOCAL_DIFFUSION[TINY]["unet"],
        cross_attention_dim=80,  # the two encoders' widths, the second's larger as bigG's is than ViT-L's
        attention_head_dim=(2, 4),
        transformer_layers_per_block=(1, 2),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=8,
        projection_class_embeddings_input_dim=6 * 8 + 48,  # six sizes' embeddings and the pooled text
    ),
    "vae": dict(LOCAL_DIFFUSION[TINY]["vae"], scaling_factor=0.13025),
}
LOCAL_DIFFUSION[SDXL_RANDOM] = {
    "text": LOCAL_DIFFUSION[SD15_RANDOM]["text"],
    "text_2": dict(
        hidden_size=1280,
        intermediate_size=5120,
        num_hidden_layers=32,
        num_attention_heads=20,
        projection_dim=1280,
        hidden_act="gelu",
    ),
    "unet": dict(
        sample_size=128,
        layers_per_block=2,
        block_out_channels=(320, 640, 1280),
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=2048,
        attention_head_dim=(5, 10, 20),
        transformer_layers_per_block=(1, 2, 10),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=256,
        projection_class_embeddings_input_dim=6 * 256 + 1280,
        norm_num_groups=32,
    ),
    "vae": dict(LOCAL_DIFFUSION[SD15_RANDOM]["vae"], sample_size=1024, scaling_factor=0.13025),
}


def diffusion_modules(sizes: dict, text: dict, text_2: dict) -> dict:
    """The text encoder, UNet, VAE and (SDXL) second text encoder of `sizes` (a LOCAL_DIFFUSION entry), built in
    this order, which the fixed seed's weights depend on; `text`, `text_2`: each encoder's tokenizer settings."""
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    modules = {"text_encoder": CLIPTextModel(CLIPTextConfig(max_position_embeddings=77, **text, **sizes["text"]))}
    modules["unet"] = UNet2DConditionModel(in_channels=4, out_channels=4, **sizes["unet"])
    modules["vae"] = AutoencoderKL(
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        down_block_types=("DownEncoderBlock2D",) * 4,
        up_block_types=("UpDecoderBlock2D",) * 4,
        **sizes["vae"],
    )
    if "text_2" in sizes:
        config = CLIPTextConfig(max_position_embeddings=77, **text_2, **sizes["text_2"])
        modules["text_encoder_2"] = CLIPTextModelWithProjection(config)
    return modules


def text_settings(tokenizer) -> dict:
    """What a CLIP text encoder's config takes from its tokenizer: the vocabulary and the special tokens."""
    ids = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    return dict(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **ids)


def local_diffusion(name: str = TINY):
    """A Stable Diffusion (or, for the XL names, SDXL) pipeline of random weights built here, from a fixed
    seed, with no download."""
    from diffusers import DPMSolverMultistepScheduler, StableDiffusionPipeline, StableDiffusionXLPipeline
    from transformers import CLIPTokenizer

    tokenizer = CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER)
    # SDXL's second tokenizer pads with "!", as the published one does
    tokenizer_2 = CLIPTokenizer.from_pretrained(TINY_CLIP_TOKENIZER, pad_token="!")

    torch.manual_seed(TINY_SEED)
    modules = diffusion_modules(LOCAL_DIFFUSION[name], text_settings(tokenizer), text_settings(tokenizer_2))
    scheduler = DPMSolverMultistepScheduler(
        beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", num_train_timesteps=1000, steps_offset=1
    )
    if "text_encoder_2" in modules:
        return StableDiffusionXLPipeline(
            **modules, tokenizer=tokenizer, tokenizer_2=tokenizer_2, scheduler=scheduler, add_watermarker=False
        )
    return StableDiffusionPipeline(
        **modules,
        tokenizer=tokenizer,
        scheduler=scheduler,
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


# The layers LCM-LoRA adapts (the targets of diffusers' LCM-LoRA distillation script): every attention
# and feed-forward projection, and the convolutions and time projections of the ResNet blocks.
LORA_TARGETS = (
    "to_q", "to_k", "to_v", "to_out.0", "proj_in", "proj_out", "ff.net.0.proj", "ff.net.2",
    "conv1", "conv2", "conv_shortcut", "downsamplers.0.conv", "upsamplers.0.conv", "time_emb_proj",
)  # fmt: skip


def random_lora(
    model, rank: int = 4, seed: int = TINY_SEED, prefix: str = "lora_unet_", targets: tuple[str, ...] = LORA_TARGETS
) -> dict[str, torch.Tensor]:
    """A random LoRA of `model` (a UNet, or with prefix lora_te_ a CLIP text encoder), laid out as kohya's
    scripts and LCM-LoRA publish them: `prefix` and the module's path with underscores, each layer's
    lora_down and lora_up weights and its alpha."""
    generator = torch.Generator().manual_seed(seed)
    state = {}
    for name, module in model.named_modules():
        if not name.endswith(targets) or not isinstance(module, (torch.nn.Linear, torch.nn.Conv2d)):
            continue
        if isinstance(module, torch.nn.Linear):
            down_shape, up_shape = (rank, module.in_features), (module.out_features, rank)
        else:
            down_shape, up_shape = (rank, module.in_channels, *module.kernel_size), (module.out_channels, rank, 1, 1)
        key = prefix + name.replace(".", "_")
        state[f"{key}.lora_down.weight"] = torch.randn(down_shape, generator=generator) / down_shape[1] ** 0.5
        state[f"{key}.lora_up.weight"] = torch.randn(up_shape, generator=generator) * 0.1
        state[f"{key}.alpha"] = torch.tensor(float(rank))
    return state


# --- IP-Adapter ------------------------------------------------------------------------------------

# CLIP's vision tower with a projection, as the IP-Adapter's image encoder (the published one for SD 1.5 is
# ViT-H/14: 1280 wide, 32 layers, projection 1024), cut to the least that runs.
TINY_IMAGE_ENCODER = dict(
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=1,
    num_attention_heads=2,
    image_size=32,
    patch_size=16,
    projection_dim=16,
)
IP_ADAPTER_TOKENS = 4  # the image tokens IP-Adapter (not Plus) projects one image embedding into


def tiny_image_encoder(**sizes):
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    torch.manual_seed(TINY_SEED)
    return CLIPVisionModelWithProjection(CLIPVisionConfig(**{**TINY_IMAGE_ENCODER, **sizes}))


def random_ip_adapter(unet, image_embed_dim: int, seed: int = TINY_SEED) -> dict[str, dict[str, torch.Tensor]]:
    """A random IP-Adapter of `unet`, laid out as the published ones: the image projection (to 4 tokens
    of the UNet's text width, then a layer norm), and for each cross-attention, numbered 1, 3, 5, … in
    the UNet's order, the projections of those tokens to its keys and values."""
    generator = torch.Generator().manual_seed(seed)
    width = unet.config.cross_attention_dim
    image_proj = {
        "proj.weight": torch.randn(IP_ADAPTER_TOKENS * width, image_embed_dim, generator=generator)
        / image_embed_dim**0.5,
        "proj.bias": torch.zeros(IP_ADAPTER_TOKENS * width),
        "norm.weight": torch.ones(width),
        "norm.bias": torch.zeros(width),
    }
    ip_adapter = {}
    cross_attentions = [n.removesuffix(".processor") for n in unet.attn_processors if not n.endswith("attn1.processor")]
    for number, name in zip(range(1, 2 * len(cross_attentions), 2), cross_attentions):
        for projection in ("to_k", "to_v"):
            shape = unet.get_submodule(f"{name}.{projection}").weight.shape
            ip_adapter[f"{number}.{projection}_ip.weight"] = torch.randn(shape, generator=generator) / shape[1] ** 0.5
    return {"image_proj": image_proj, "ip_adapter": ip_adapter}


# TAESD's classes with the least channels and blocks (the published one: 64 channels, 1+3+3+3 blocks).
TINY_TAESD = dict(
    encoder_block_out_channels=(16,) * 4,
    decoder_block_out_channels=(16,) * 4,
    num_encoder_blocks=(1,) * 4,
    num_decoder_blocks=(1,) * 4,
)


def tiny_taesd():
    from diffusers import AutoencoderTiny

    torch.manual_seed(TINY_SEED)
    return AutoencoderTiny(**TINY_TAESD)


# --- Demucs ----------------------------------------------------------------------------------------

# Demucs' htdemucs with every size cut to the least that runs (the published one: 48 channels, 5 transformer
# layers of 8 heads, 42M weights); depth 4 as the real one, which keeps the transformer's sequence short.
TINY_DEMUCS = dict(channels=4, depth=4, t_layers=1, t_heads=1, dconv_comp=1, dconv_depth=1)
DEMUCS_SOURCES = ["drums", "bass", "other", "vocals"]


def tiny_htdemucs():
    return htdemucs(DEMUCS_SOURCES, samplerate=44100, segment=Fraction(39, 5), **TINY_DEMUCS)


def tiny_demucs():
    torch.manual_seed(TINY_SEED)
    return demucs_bag(tiny_htdemucs())


# --- upscaler -------------------------------------------------------------------------------------

# Real-ESRGAN's RRDB network with every size cut to the least spandrel still recognises (the published
# x4plus: 64 filters, 23 blocks, 16.7M weights).
TINY_ESRGAN = dict(num_filters=8, num_blocks=1, scale=4)


def tiny_upscaler():
    from spandrel import ModelLoader
    from spandrel.architectures.ESRGAN import ESRGAN

    torch.manual_seed(TINY_SEED)
    return ModelLoader().load_from_state_dict(ESRGAN(**TINY_ESRGAN).state_dict())
