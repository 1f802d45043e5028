"""SDXL and what --fast loads for it, as their repositories hold them:

- ``stabilityai/stable-diffusion-xl-base-1.0``: model_index.json (StableDiffusionXLPipeline,
  ``force_zeros_for_empty_prompt: true``, ``add_watermarker: null``, an EulerDiscreteScheduler); text_encoder/
  (CLIPTextModel, ViT-L) and text_encoder_2/ (CLIPTextModelWithProjection, ViT-bigG: gelu, projection 1280),
  each config.json with model.safetensors and model.fp16.safetensors; tokenizer/ and tokenizer_2/ (the
  second pads with "!"); unet/ (``addition_embed_type: text_time``, cross-attention 2048, linear
  projections, 1/2/10 transformer layers) and vae/ (``force_upcast: true``, scaling factor 0.13025), each
  config.json with diffusion_pytorch_model.safetensors and .fp16.safetensors. No pickled .bin. Not read:
  vae_1_0/, vae_decoder/, vae_encoder/ (ONNX), OpenVINO and Flax files, sd_xl_base_1.0.safetensors and the
  offset LoRA (single files), LICENSE.md and the sample pictures.
- ``latent-consistency/lcm-lora-sdxl`` and ``madebyollin/taesdxl``: laid out as their SD 1.5 counterparts
  (tests/standins/sd.py)."""

from __future__ import annotations

from safetensors.torch import save as safetensors_bytes

from musicvid.models.tiny import LOCAL_DIFFUSION, random_lora
from musicvid.settings.presets import TINY_XL
from tests.standins.clip import clip_text_config, clip_text_encoder, clip_tokenizer_files
from tests.standins.hub import as_json, weights
from tests.standins.sd import tiny_unet

SDXL_VERSION = {"_diffusers_version": "0.19.0.dev0"}


def sdxl_pipeline_configs() -> dict[str, dict]:
    """model_index.json and the scheduler's config."""
    model_index = {
        "_class_name": "StableDiffusionXLPipeline",
        **SDXL_VERSION,
        "force_zeros_for_empty_prompt": True,
        "add_watermarker": None,
        "scheduler": ["diffusers", "EulerDiscreteScheduler"],
        "text_encoder": ["transformers", "CLIPTextModel"],
        "text_encoder_2": ["transformers", "CLIPTextModelWithProjection"],
        "tokenizer": ["transformers", "CLIPTokenizer"],
        "tokenizer_2": ["transformers", "CLIPTokenizer"],
        "unet": ["diffusers", "UNet2DConditionModel"],
        "vae": ["diffusers", "AutoencoderKL"],
    }
    scheduler = {
        "_class_name": "EulerDiscreteScheduler",
        **SDXL_VERSION,
        "beta_end": 0.012,
        "beta_schedule": "scaled_linear",
        "beta_start": 0.00085,
        "clip_sample": False,
        "interpolation_type": "linear",
        "num_train_timesteps": 1000,
        "prediction_type": "epsilon",
        "sample_max_value": 1.0,
        "set_alpha_to_one": False,
        "skip_prk_steps": True,
        "steps_offset": 1,
        "timestep_spacing": "leading",
        "trained_betas": None,
        "use_karras_sigmas": False,
    }
    return {"model_index.json": model_index, "scheduler/scheduler_config.json": scheduler}


def sdxl_unet_config() -> dict:
    """SDXL's UNet config.json, every key diffusers 0.19 wrote, at the tiny-xl preset's sizes."""
    return {
        "_class_name": "UNet2DConditionModel",
        **SDXL_VERSION,
        "act_fn": "silu",
        "addition_embed_type_num_heads": 64,
        "center_input_sample": False,
        "class_embed_type": None,
        "class_embeddings_concat": False,
        "conv_in_kernel": 3,
        "conv_out_kernel": 3,
        "cross_attention_norm": None,
        "downsample_padding": 1,
        "dual_cross_attention": False,
        "encoder_hid_dim": None,
        "encoder_hid_dim_type": None,
        "flip_sin_to_cos": True,
        "freq_shift": 0,
        "in_channels": 4,
        "mid_block_only_cross_attention": None,
        "mid_block_scale_factor": 1,
        "mid_block_type": "UNetMidBlock2DCrossAttn",
        "norm_eps": 1e-05,
        "num_attention_heads": None,
        "num_class_embeds": None,
        "only_cross_attention": False,
        "out_channels": 4,
        "resnet_out_scale_factor": 1.0,
        "resnet_skip_time_act": False,
        "resnet_time_scale_shift": "default",
        "time_cond_proj_dim": None,
        "time_embedding_act_fn": None,
        "time_embedding_dim": None,
        "time_embedding_type": "positional",
        "timestep_post_act": None,
        "upcast_attention": None,
        **LOCAL_DIFFUSION[TINY_XL]["unet"],
        "sample_size": 128,
    }


def sdxl_model_configs() -> dict[str, dict]:
    """The two text encoders', the UNet's and the VAE's config.json, by folder."""
    sizes = LOCAL_DIFFUSION[TINY_XL]
    vae = {
        "_class_name": "AutoencoderKL",
        "_diffusers_version": "0.20.0.dev0",
        "_name_or_path": "../sdxl-vae/",
        "act_fn": "silu",
        "down_block_types": ["DownEncoderBlock2D"] * 4,
        "force_upcast": True,
        "in_channels": 3,
        "latent_channels": 4,
        "out_channels": 3,
        "up_block_types": ["UpDecoderBlock2D"] * 4,
        **sizes["vae"],
        "sample_size": 1024,
    }
    common = dict(torch_dtype="float16", transformers_version="4.32.0.dev0")
    text_encoder = clip_text_config(
        "CLIPTextModel", projection_dim=sizes["text"]["hidden_size"], **common, **sizes["text"]
    )
    text_encoder_2 = clip_text_config(
        "CLIPTextModelWithProjection", **common, **{"hidden_act": "gelu", **sizes["text_2"]}
    )
    return {"text_encoder": text_encoder, "text_encoder_2": text_encoder_2, "unet": sdxl_unet_config(), "vae": vae}


def sdxl_files() -> dict[str, bytes]:
    """SDXL base: two text encoders and tokenizers (the second pads with "!"), a UNet conditioned on the
    pooled text and the picture's size, a VAE that must not run in float16 (force_upcast); safetensors
    only, each also as an fp16 variant."""
    from diffusers import AutoencoderKL, UNet2DConditionModel

    configs = sdxl_model_configs()
    modules = {
        "text_encoder": clip_text_encoder(configs["text_encoder"], seed=11),
        "text_encoder_2": clip_text_encoder(configs["text_encoder_2"], seed=12),
        "unet": UNet2DConditionModel.from_config(configs["unet"]),
        "vae": AutoencoderKL.from_config(configs["vae"]),
    }
    files = {
        "README.md": b"---\nlicense: openrail++\ntags:\n- text-to-image\n- stable-diffusion\n---\n# SD-XL 1.0-base (stand-in)\n",
        **{name: as_json(config) for name, config in sdxl_pipeline_configs().items()},
        **clip_tokenizer_files("tokenizer", "<|endoftext|>"),
        **clip_tokenizer_files("tokenizer_2", "!", clean_up_tokenization_spaces=True),
        **{f"{folder}/config.json": as_json(config) for folder, config in configs.items()},
    }
    for folder, stem in [
        ("text_encoder", "model"),
        ("text_encoder_2", "model"),
        ("unet", "diffusion_pytorch_model"),
        ("vae", "diffusion_pytorch_model"),
    ]:
        files |= {f"{folder}/{k}": v for k, v in weights(modules[folder].state_dict(), stem, bins=False).items()}
    return files


def lcm_lora_xl_files() -> dict[str, bytes]:
    """SDXL's LCM-LoRA, laid out as SD 1.5's (latent-consistency/lcm-lora-sdxl holds the same two files)."""
    state = {k: v.half() for k, v in random_lora(tiny_unet(TINY_XL), rank=4, seed=13).items()}
    return {
        "README.md": b"---\nlicense: openrail++\ntags:\n- lora\n- text-to-image\n---\n# LCM-LoRA SDXL (stand-in)\n",
        "pytorch_lora_weights.safetensors": safetensors_bytes(state),
    }
