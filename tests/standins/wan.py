"""Wan 2.1 FLF2V 14B as its repository holds it, at the tiny sizes of musicvid.models.tiny_video (its tiny pipeline's
transformer, VAE and image encoder):

- ``Wan-AI/Wan2.1-FLF2V-14B-720P-diffusers`` (WanImageToVideoPipeline): README.md; model_index.json (diffusers
  0.33.0.dev0, as the converter saves it: the file itself was not found); scheduler/ (UniPC on flow sigmas, flow
  shift 16, the converter's keys); tokenizer/ (umT5's T5TokenizerFast: spiece.model, tokenizer.json,
  tokenizer_config.json and special_tokens_map.json, its 300 extra ids listed as plain strings); text_encoder/
  (UMT5EncoderModel, UMT5-XXL's config keys, float32 in five shards model-0000N-of-00005.safetensors with
  model.safetensors.index.json, as the 720P I2V sibling's); image_encoder/ (CLIPVisionModelWithProjection, laion's
  CLIP ViT-H/14, bfloat16 in one model.safetensors: 1.26 GB for 632M weights); image_processor/ (a whole
  CLIPProcessor, as laion's was saved: preprocessor_config.json and CLIP's tokenizer files, vocab.json 862 kB and
  tokenizer.json 3.64 MB published); transformer/ (WanTransformer3DModel, float32 in fourteen shards
  diffusion_pytorch_model-000NN-of-00014.safetensors with the index: the I2V sibling's 4.93 GB shards of 65.6 GB);
  vae/ (AutoencoderKLWan, float32 in one diffusion_pytorch_model.safetensors: 508 MB for 127M weights). No .bin.

Wan's UMT5 reads the stand-in's own tokenizer (a sentencepiece model with umT5's extra ids): its weights are drawn
for that vocabulary, at the tiny pipeline's width.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models import published as P
from musicvid.models.tiny_video import TINY_VIDEO, tiny_wan
from musicvid.settings.presets import TINY_WAN
from tests.standins.clip import clip_tokenizer_files
from tests.standins.hub import as_json, sharded, stored
from tests.standins.ltx_video import t5_tokenizer_files

WAN_VERSION = {"_diffusers_version": "0.33.0.dev0"}
UMT5_EXTRA_IDS = 300  # google/umt5-xxl's <extra_id_0> … <extra_id_299>
LAION_VIT_H = "laion/CLIP-ViT-H-14-laion2B-s32B-b79K"
TRANSFORMERS_VERSION = "4.51.0.dev0"


def umt5_tokenizer_files() -> dict[str, bytes]:
    """umT5's tokenizer folder: the stand-in's sentencepiece model as LTX-Video's T5 has it, with 300 extra ids,
    its tokenizer.json (T5TokenizerFast's), and no added_tokens.json."""
    from transformers import T5Tokenizer

    files = t5_tokenizer_files("tokenizer", extra_ids=UMT5_EXTRA_IDS)
    files.pop("tokenizer/added_tokens.json")
    config = json.loads(files["tokenizer/tokenizer_config.json"])
    config |= {"model_max_length": 1000000000000000019884624838656, "tokenizer_class": "T5Tokenizer"}
    special = json.loads(files["tokenizer/special_tokens_map.json"])
    special["additional_special_tokens"] = [token["content"] for token in special["additional_special_tokens"]]
    files |= {"tokenizer/tokenizer_config.json": as_json(config), "tokenizer/special_tokens_map.json": as_json(special)}
    with tempfile.TemporaryDirectory() as folder:
        for name, data in files.items():
            Path(folder, Path(name).name).write_bytes(data)
        files["tokenizer/tokenizer.json"] = T5Tokenizer.from_pretrained(folder).backend_tokenizer.to_str().encode()
    return files


def umt5_config(vocab_size: int) -> dict:
    """UMT5-XXL's encoder config.json (google/umt5-xxl's keys) at the tiny width."""
    config = {
        "_name_or_path": "google/umt5-xxl", "architectures": ["UMT5EncoderModel"], "classifier_dropout": 0.0,
        "decoder_start_token_id": 0, "dense_act_fn": "gelu_new", "dropout_rate": 0.1, "eos_token_id": 1,
        "feed_forward_proj": "gated-gelu", "initializer_factor": 1.0, "is_encoder_decoder": True,
        "is_gated_act": True, "layer_norm_epsilon": 1e-06, "model_type": "umt5", "output_past": True,
        "pad_token_id": 0, "relative_attention_max_distance": 128, "scalable_attention": True,
        "tie_word_embeddings": False, "tokenizer_class": "T5Tokenizer", "torch_dtype": "float32",
        "transformers_version": TRANSFORMERS_VERSION, "use_cache": True, "vocab_size": vocab_size,
        **TINY_VIDEO[TINY_WAN]["text"],
    }  # fmt: skip
    return dict(sorted({**config, "num_decoder_layers": config["num_layers"]}.items()))


def image_encoder_config() -> dict:
    config = {
        "_name_or_path": LAION_VIT_H, "architectures": ["CLIPVisionModelWithProjection"], "attention_dropout": 0.0,
        "dropout": 0.0, "initializer_factor": 1.0, "initializer_range": 0.02, "layer_norm_eps": 1e-05,
        "model_type": "clip_vision_model", "num_channels": 3, "torch_dtype": "bfloat16",
        "transformers_version": TRANSFORMERS_VERSION, **TINY_VIDEO[TINY_WAN]["image_encoder"],
    }  # fmt: skip
    return dict(sorted(config.items()))


def image_processor_files() -> dict[str, bytes]:
    """image_processor/: CLIP's preprocessing at 224 pixels and laion's tokenizer (here the tiny CLIP one)."""
    from transformers import CLIPTokenizerFast

    preprocessor = tiny_wan().image_processor.image_processor.to_dict() | {"processor_class": "CLIPProcessor"}
    tokenizer = clip_tokenizer_files("image_processor", "<|endoftext|>", name_or_path=LAION_VIT_H)
    with tempfile.TemporaryDirectory() as folder:
        for name, data in tokenizer.items():
            Path(folder, Path(name).name).write_bytes(data)
        fast = CLIPTokenizerFast.from_pretrained(folder).backend_tokenizer.to_str().encode()
    return {"image_processor/preprocessor_config.json": as_json(preprocessor), "image_processor/tokenizer.json": fast}


def wan_configs() -> dict[str, dict]:
    """model_index.json and the diffusers folders' configs, by file name, at TINY_VIDEO's sizes."""
    sizes = TINY_VIDEO[TINY_WAN]
    model_index = {
        "_class_name": "WanImageToVideoPipeline",
        **WAN_VERSION,
        "image_encoder": ["transformers", "CLIPVisionModelWithProjection"],
        "image_processor": ["transformers", "CLIPProcessor"],
        "scheduler": ["diffusers", "UniPCMultistepScheduler"],
        "text_encoder": ["transformers", "UMT5EncoderModel"],
        "tokenizer": ["transformers", "T5TokenizerFast"],
        "transformer": ["diffusers", "WanTransformer3DModel"],
        "vae": ["diffusers", "AutoencoderKLWan"],
    }
    scheduler = {
        "beta_end": 0.02, "beta_schedule": "linear", "beta_start": 0.0001, "disable_corrector": [],
        "dynamic_thresholding_ratio": 0.995, "final_sigmas_type": "zero", "lower_order_final": True, "predict_x0": True,
        "rescale_betas_zero_snr": False, "sample_max_value": 1.0, "solver_order": 2, "solver_p": None,
        "solver_type": "bh2", "steps_offset": 0, "thresholding": False, "timestep_spacing": "linspace",
        "trained_betas": None, "use_beta_sigmas": False, "use_exponential_sigmas": False, "use_karras_sigmas": False,
        **P.WAN_FLF2V_SCHEDULER,
    }  # fmt: skip
    return {
        "model_index.json": model_index,
        "scheduler/scheduler_config.json": {"_class_name": "UniPCMultistepScheduler", **WAN_VERSION, **scheduler},
        "transformer/config.json": {"_class_name": "WanTransformer3DModel", **WAN_VERSION, **sizes["transformer"]},
        "vae/config.json": {"_class_name": "AutoencoderKLWan", **WAN_VERSION, **sizes["vae"], "attn_scales": []},
    }


def wan_flf2v_files() -> dict[str, bytes]:
    from transformers import UMT5Config, UMT5EncoderModel

    pipe, tokenizer = tiny_wan(), umt5_tokenizer_files()
    vocab_size = len(json.loads(tokenizer["tokenizer/tokenizer.json"])["model"]["vocab"])
    text = umt5_config(vocab_size)
    torch.manual_seed(41)
    encoder = UMT5EncoderModel(
        UMT5Config(**{k: v for k, v in text.items() if k not in ("_name_or_path", "architectures")})
    )
    transformer = stored(pipe.transformer.state_dict(), torch.float32)
    index = "diffusion_pytorch_model.safetensors.index.json"
    return {
        "README.md": b"---\nlicense: apache-2.0\npipeline_tag: image-to-video\nlibrary_name: diffusers\n---\n# Wan2.1 FLF2V 14B 720P (stand-in)\n",
        **{name: as_json(config) for name, config in wan_configs().items()},
        **tokenizer,
        "text_encoder/config.json": as_json(text),
        **{
            f"text_encoder/{name}": data
            for name, data in sharded(
                stored(encoder.state_dict(), torch.float32), "model", "model.safetensors.index.json", 5
            ).items()
        },
        "image_encoder/config.json": as_json(image_encoder_config()),
        "image_encoder/model.safetensors": safetensors_bytes(stored(pipe.image_encoder.state_dict(), torch.bfloat16)),
        **image_processor_files(),
        **clip_tokenizer_files(
            "image_processor", "<|endoftext|>", name_or_path=LAION_VIT_H, processor_class="CLIPProcessor"
        ),
        **{
            f"transformer/{name}": data
            for name, data in sharded(transformer, "diffusion_pytorch_model", index, 14).items()
        },
        "vae/diffusion_pytorch_model.safetensors": safetensors_bytes(stored(pipe.vae.state_dict(), torch.float32)),
    }
