"""LTX-2 as its repository holds it, at the tiny sizes of musicvid.models.tiny_video (its tiny pipeline's weights):

- ``Lightricks/LTX-2`` (LTX2Pipeline; LTX2ConditionPipeline loads the same components): README.md; model_index.json
  as published (diffusers 0.37.0.dev0, the connectors and vocoder from the "ltx2" pipeline module);
  scheduler/ (the converter's FlowMatchEulerDiscreteScheduler with dynamic shifting, as a copy of the dev pipeline
  holds it); tokenizer/ (a saved Gemma 3 processor's tokenizer: tokenizer.json, tokenizer_config.json,
  special_tokens_map.json, chat_template.jinja and processor_config.json, the tiny Gemma 3 tokenizer's of
  assets/tokenizers/tiny-gemma3); text_encoder/ (Gemma3ForConditionalGeneration with its SigLIP tower, the config
  keys as Gemma 3 12B's, generation_config.json, bfloat16 in five shards model-0000N-of-00005.safetensors with
  model.safetensors.index.json: 24.4 GB in the converter's 5 GB shards; the head is tied to the embedding, so not
  saved); transformer/ (LTX2VideoTransformer3DModel, the published config's 36 keys, bfloat16 in eight shards
  diffusion_pytorch_model-0000N-of-00008.safetensors with the index: 37.8 GB); connectors/, vae/, audio_vae/ and
  vocoder/ (bfloat16, one diffusion_pytorch_model.safetensors each: 2.9, 2.4 and 0.2 GB). The shard counts follow
  from the sizes and the converter's max_shard_size; the listings themselves were not found. The root's single
  files for LTX-2's own code (ltx-2-19b-dev.safetensors and others) are left out: diffusers does not read them.
"""

from __future__ import annotations

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.core.assets import TINY_GEMMA3_TOKENIZER
from musicvid.models import published as P
from musicvid.models.tiny_video import TINY_VIDEO, gemma3_config, tiny_ltx2
from musicvid.settings.presets import TINY_LTX2
from tests.standins.hub import as_json, sharded, stored

LTX2_VERSION = {"_diffusers_version": "0.37.0.dev0"}
GEMMA3_TOKENIZER_FILES = ("chat_template.jinja", "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json")
# (what a Gemma 3 processor saves beside its tokenizer; 256 image tokens at 896 pixels)
GEMMA3_PROCESSOR = {"image_seq_length": 256, "processor_class": "Gemma3Processor"}
SINGLE_FILES = ("connectors", "vae", "audio_vae", "vocoder")


def ltx2_configs() -> dict[str, dict]:
    """model_index.json and each diffusers folder's config, by file name, at TINY_VIDEO's sizes."""
    sizes = TINY_VIDEO[TINY_LTX2]
    model_index = {
        "_class_name": "LTX2Pipeline",
        **LTX2_VERSION,
        "audio_vae": ["diffusers", "AutoencoderKLLTX2Audio"],
        "connectors": ["ltx2", "LTX2TextConnectors"],
        "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
        "text_encoder": ["transformers", "Gemma3ForConditionalGeneration"],
        "tokenizer": ["transformers", "GemmaTokenizerFast"],
        "transformer": ["diffusers", "LTX2VideoTransformer3DModel"],
        "vae": ["diffusers", "AutoencoderKLLTX2Video"],
        "vocoder": ["ltx2", "LTX2Vocoder"],
    }
    scheduler = {
        **P.LTX2_SCHEDULER, "invert_sigmas": False, "use_beta_sigmas": False, "use_exponential_sigmas": False,
        "use_karras_sigmas": False,
    }  # fmt: skip
    classes = {
        "connectors": "LTX2TextConnectors",
        "transformer": "LTX2VideoTransformer3DModel",
        "vae": "AutoencoderKLLTX2Video",
        "audio_vae": "AutoencoderKLLTX2Audio",
        "vocoder": "LTX2Vocoder",
    }
    configs = {folder: {"_class_name": name, **LTX2_VERSION, **sizes[folder]} for folder, name in classes.items()}
    configs["audio_vae"]["attn_resolutions"] = None
    return {
        "model_index.json": model_index,
        "scheduler/scheduler_config.json": {
            "_class_name": "FlowMatchEulerDiscreteScheduler",
            **LTX2_VERSION,
            **scheduler,
        },
        **{f"{folder}/config.json": config for folder, config in configs.items()},
    }


def gemma3_text_encoder_config(tokenizer) -> dict:
    """text_encoder/config.json: Gemma 3 12B's keys (its text tower's and SigLIP's model types, its rope scaling)
    at the tiny sizes, as transformers 4.x saved it."""
    config = gemma3_config(tokenizer)
    return {
        **config,
        "architectures": ["Gemma3ForConditionalGeneration"],
        "initializer_range": 0.02,
        "model_type": "gemma3",
        "text_config": dict(sorted({**config["text_config"], "model_type": "gemma3_text"}.items())),
        "torch_dtype": "bfloat16",
        "transformers_version": "4.57.0.dev0",
        "vision_config": dict(sorted({**config["vision_config"], "model_type": "siglip_vision_model"}.items())),
    }


def gemma3_text_encoder_files(encoder, tokenizer) -> dict[str, bytes]:
    ids = tokenizer.convert_tokens_to_ids
    generation = {
        "bos_token_id": ids("<bos>"), "cache_implementation": "hybrid", "do_sample": True,
        "eos_token_id": [ids("<eos>"), ids("<end_of_turn>")], "pad_token_id": ids("<pad>"), "top_k": 64,
        "top_p": 0.95, "transformers_version": "4.57.0.dev0",
    }  # fmt: skip
    weights = stored({name: t for name, t in encoder.state_dict().items() if name != "lm_head.weight"}, torch.bfloat16)
    files = {
        "config.json": as_json(gemma3_text_encoder_config(tokenizer)),
        "generation_config.json": as_json(generation),
        **sharded(weights, "model", "model.safetensors.index.json", 5),
    }
    return {f"text_encoder/{name}": data for name, data in files.items()}


def ltx2_files() -> dict[str, bytes]:
    pipe = tiny_ltx2()
    transformer = stored(pipe.transformer.state_dict(), torch.bfloat16)
    index = "diffusion_pytorch_model.safetensors.index.json"
    return {
        "README.md": b"---\nlicense: other\npipeline_tag: image-to-video\nlibrary_name: diffusers\n---\n# LTX-2 (stand-in)\n",
        **{name: as_json(config) for name, config in ltx2_configs().items()},
        **{f"tokenizer/{name}": (TINY_GEMMA3_TOKENIZER / name).read_bytes() for name in GEMMA3_TOKENIZER_FILES},
        "tokenizer/processor_config.json": as_json(GEMMA3_PROCESSOR),
        **gemma3_text_encoder_files(pipe.text_encoder, pipe.tokenizer),
        **{
            f"transformer/{name}": data
            for name, data in sharded(transformer, "diffusion_pytorch_model", index, 8).items()
        },
        **{
            f"{folder}/diffusion_pytorch_model.safetensors": safetensors_bytes(
                stored(getattr(pipe, folder).state_dict(), torch.bfloat16)
            )
            for folder in SINGLE_FILES
        },
    }
