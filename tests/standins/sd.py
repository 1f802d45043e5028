"""Stable Diffusion 1.5 and what --fast loads for it, as their repositories hold them:

- ``stable-diffusion-v1-5/stable-diffusion-v1-5``: model_index.json naming a safety checker and a
  feature extractor; subfolders scheduler/, tokenizer/, text_encoder/, unet/, vae/, safety_checker/,
  feature_extractor/; weights as .safetensors and .bin, each also as an fp16 variant.
- ``latent-consistency/lcm-lora-sdv1-5``: README.md, pytorch_lora_weights.safetensors (135 MB: float16,
  kohya's layout with diffusers' module names, ``lora_unet_<path with underscores>`` and its
  ``.lora_down.weight``, ``.lora_up.weight`` and ``.alpha``, UNet only), image.png (not read).
- ``madebyollin/taesd``: README.md, config.json (AutoencoderTiny: 64 channels, 1+3+3+3 encoder and
  3+3+3+1 decoder blocks, latent magnitude 3 and shift 0.5, scaling factor 1), diffusion_pytorch_model
  as .safetensors and .bin; taesd_encoder/decoder.safetensors, the original layout, are not read."""

from __future__ import annotations

import json

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.models.tiny import LOCAL_DIFFUSION, random_lora
from musicvid.settings.presets import TINY
from tests.standins.clip import clip_text_config, clip_text_encoder, clip_tokenizer_files
from tests.standins.hub import as_json, weights

SD15_VERSION = {"_diffusers_version": "0.6.0"}


def sd15_pipeline_configs() -> dict[str, dict]:
    """model_index.json and the configs of the parts that hold no weights: the scheduler, the feature extractor."""
    model_index = {
        "_class_name": "StableDiffusionPipeline",
        **SD15_VERSION,
        "feature_extractor": ["transformers", "CLIPImageProcessor"],
        "safety_checker": ["stable_diffusion", "StableDiffusionSafetyChecker"],
        "scheduler": ["diffusers", "PNDMScheduler"],
        "text_encoder": ["transformers", "CLIPTextModel"],
        "tokenizer": ["transformers", "CLIPTokenizer"],
        "unet": ["diffusers", "UNet2DConditionModel"],
        "vae": ["diffusers", "AutoencoderKL"],
    }
    scheduler = {
        "_class_name": "PNDMScheduler",
        **SD15_VERSION,
        "beta_end": 0.012,
        "beta_schedule": "scaled_linear",
        "beta_start": 0.00085,
        "num_train_timesteps": 1000,
        "set_alpha_to_one": False,
        "skip_prk_steps": True,
        "steps_offset": 1,
        "trained_betas": None,
        "clip_sample": False,
    }
    feature_extractor = {
        "crop_size": {"height": 224, "width": 224},
        "do_center_crop": True,
        "do_convert_rgb": True,
        "do_normalize": True,
        "do_rescale": True,
        "do_resize": True,
        "feature_extractor_type": "CLIPFeatureExtractor",
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_processor_type": "CLIPImageProcessor",
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "resample": 3,
        "rescale_factor": 0.00392156862745098,
        "size": {"shortest_edge": 224},
    }
    return {
        "model_index.json": model_index,
        "scheduler/scheduler_config.json": scheduler,
        "feature_extractor/preprocessor_config.json": feature_extractor,
    }


def sd15_model_configs() -> dict[str, dict]:
    """The text encoder's, the UNet's and the VAE's config.json, by folder, at the tiny preset's sizes."""
    sizes = LOCAL_DIFFUSION[TINY]
    unet = {
        "_class_name": "UNet2DConditionModel",
        **SD15_VERSION,
        "act_fn": "silu",
        "center_input_sample": False,
        "downsample_padding": 1,
        "flip_sin_to_cos": True,
        "freq_shift": 0,
        "in_channels": 4,
        "mid_block_scale_factor": 1,
        "norm_eps": 1e-05,
        "out_channels": 4,
        **sizes["unet"],
        "sample_size": 64,
    }
    vae = {
        "_class_name": "AutoencoderKL",
        **SD15_VERSION,
        "act_fn": "silu",
        "down_block_types": ["DownEncoderBlock2D"] * 4,
        "in_channels": 3,
        "latent_channels": 4,
        "out_channels": 3,
        "up_block_types": ["UpDecoderBlock2D"] * 4,
        **sizes["vae"],
        "sample_size": 512,
    }
    text_encoder = clip_text_config(
        "CLIPTextModel",
        _name_or_path="openai/clip-vit-large-patch14",
        projection_dim=sizes["text"]["hidden_size"],
        torch_dtype="float32",
        transformers_version="4.22.0.dev0",
        **sizes["text"],
    )
    return {"text_encoder": text_encoder, "unet": unet, "vae": vae}


def safety_checker_config():
    """A tiny CLIP for the safety checker, with the tiny vocabulary's size and ids."""
    from transformers import CLIPConfig

    clip_vocab = json.loads((TINY_CLIP_TOKENIZER / "vocab.json").read_text(encoding="utf-8"))
    tiny_clip = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
    return CLIPConfig(
        text_config=dict(
            vocab_size=len(clip_vocab),
            bos_token_id=clip_vocab["<|startoftext|>"],
            eos_token_id=clip_vocab["<|endoftext|>"],
            **tiny_clip,
        ),
        vision_config=dict(image_size=32, patch_size=16, **tiny_clip),
        projection_dim=32,
    )


def sd15_files() -> dict[str, bytes]:
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from diffusers.pipelines.stable_diffusion.safety_checker import StableDiffusionSafetyChecker

    configs = sd15_model_configs()
    safety = safety_checker_config()
    safety_config = {
        "_name_or_path": "CompVis/stable-diffusion-safety-checker",
        "architectures": ["StableDiffusionSafetyChecker"],
        **safety.to_dict(),
    }
    modules = {
        "text_encoder": clip_text_encoder(configs["text_encoder"], seed=3),
        "unet": UNet2DConditionModel.from_config(configs["unet"]),
        "vae": AutoencoderKL.from_config(configs["vae"]),
        "safety_checker": StableDiffusionSafetyChecker(safety),
    }
    files = {
        "README.md": b"---\nlicense: creativeml-openrail-m\ntags:\n- stable-diffusion\n---\n# Stable Diffusion v1-5 (stand-in)\n",
        **{name: as_json(config) for name, config in sd15_pipeline_configs().items()},
        **clip_tokenizer_files(
            "tokenizer",
            "<|endoftext|>",
            name_or_path="openai/clip-vit-large-patch14",
            special_tokens_map_file="./special_tokens_map.json",
        ),
        **{f"{folder}/config.json": as_json(config) for folder, config in configs.items()},
        "safety_checker/config.json": as_json(safety_config),
    }
    for folder in ("text_encoder", "safety_checker"):
        files |= {
            f"{folder}/{k}": v
            for k, v in weights(modules[folder].state_dict(), "model", bin_stem="pytorch_model").items()
        }
    for folder in ("unet", "vae"):
        files |= {
            f"{folder}/{k}": v for k, v in weights(modules[folder].state_dict(), "diffusion_pytorch_model").items()
        }
    unet_state = modules["unet"].state_dict()
    files |= {f"unet/{k}": v for k, v in weights(unet_state, "diffusion_pytorch_model.non_ema", fp16=False).items()}
    return files


def lcm_lora_files() -> dict[str, bytes]:
    """A random LoRA for the SD stand-in's UNet, in LCM-LoRA's file and layout (float16, kohya's names)."""
    state = {k: v.half() for k, v in random_lora(tiny_unet(), rank=4, seed=6).items()}
    return {
        "README.md": b"---\nlicense: openrail++\ntags:\n- lora\n- text-to-image\n---\n# LCM-LoRA SD 1.5 (stand-in)\n",
        "pytorch_lora_weights.safetensors": safetensors_bytes(state),
    }


def tiny_unet(name: str = TINY):
    """The SD (or with TINY_XL, SDXL) stand-in's UNet, for what is made to fit its modules by name (LoRAs,
    the IP-Adapter)."""
    from diffusers import UNet2DConditionModel

    torch.manual_seed(0)
    return UNet2DConditionModel(**LOCAL_DIFFUSION[name]["unet"])


def taesd_files(readme: bytes = b"# TAESD (stand-in)\n") -> dict[str, bytes]:
    """TAESD at its published size (2.4M weights), random, under its diffusers config; TAESDXL (the same
    network and config, trained on SDXL's latents) is laid out the same."""
    from diffusers import AutoencoderTiny

    config = {
        "_class_name": "AutoencoderTiny",
        "_diffusers_version": "0.20.0.dev0",
        "act_fn": "relu",
        "block_out_channels": [64, 64, 64, 64],
        "decoder_block_out_channels": [64, 64, 64, 64],
        "encoder_block_out_channels": [64, 64, 64, 64],
        "force_upcast": False,
        "in_channels": 3,
        "latent_channels": 4,
        "latent_magnitude": 3,
        "latent_shift": 0.5,
        "num_decoder_blocks": [3, 3, 3, 1],
        "num_encoder_blocks": [1, 3, 3, 3],
        "out_channels": 3,
        "scaling_factor": 1.0,
        "upsampling_scaling_factor": 2,
    }
    torch.manual_seed(7)
    state = AutoencoderTiny.from_config(config).state_dict()
    return {
        "README.md": b"---\nlicense: mit\nlibrary_name: diffusers\n---\n" + readme,
        "config.json": as_json(config),
        **weights(state, "diffusion_pytorch_model", fp16=False),
    }
