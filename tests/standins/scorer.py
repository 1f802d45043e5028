"""The scorer of ``musicvid score``, as its repository holds it:

- ``openai/clip-vit-large-patch14``: config.json (CLIPModel as transformers 4.16 wrote it: ``text_config``
  and ``vision_config`` in full beside the ``text_config_dict`` and ``vision_config_dict`` that override
  them; projection 768, text 768 wide in 12 layers, vision 1024 wide in 24 layers at 224² in patches of 14,
  ``logit_scale_init_value`` 2.6592); preprocessor_config.json (CLIPFeatureExtractor: resize and centre crop
  to 224, bicubic, CLIP's mean and std); vocab.json, merges.txt, tokenizer.json, tokenizer_config.json
  (``model_max_length`` 77, its ``name_or_path`` still ``openai/clip-vit-base-patch32``),
  special_tokens_map.json; model.safetensors and pytorch_model.bin in float32; README.md. tf_model.h5 and
  flax_model.msgpack are not read. The stand-in's ``text_config_dict`` also names the tiny vocabulary's size
  and ids (the real one's are CLIP's defaults: 49,408 tokens, end of text 49,407)."""

from __future__ import annotations

import json

import torch

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.models.scorer import TINY_CLIP_SCORER
from tests.standins.clip import clip_tokenizer_files
from tests.standins.hub import as_json, weights


def clip_scorer_files() -> dict[str, bytes]:
    """openai/clip-vit-large-patch14 (module docstring) at the tiny scorer's tower sizes."""
    from transformers import AutoTokenizer, CLIPConfig, CLIPModel

    vocab = json.loads((TINY_CLIP_TOKENIZER / "vocab.json").read_text(encoding="utf-8"))
    projection = {"projection_dim": TINY_CLIP_SCORER["projection_dim"]}
    text_sizes = {**TINY_CLIP_SCORER["text"], **projection}
    vision_sizes = {**TINY_CLIP_SCORER["vision"], **projection, "image_size": 224, "patch_size": 14}
    common = {"_name_or_path": "", "architectures": None, "attention_dropout": 0.0, "dropout": 0.0}
    common |= {"hidden_act": "quick_gelu", "initializer_factor": 1.0, "initializer_range": 0.02}
    common |= {"layer_norm_eps": 1e-05, "transformers_version": "4.16.0.dev0"}
    text_config = {**common, "bos_token_id": 0, "eos_token_id": 2, "pad_token_id": 1, "max_position_embeddings": 77}
    text_config |= {"model_type": "clip_text_model", "vocab_size": len(vocab), **text_sizes}
    vision_config = {**common, "model_type": "clip_vision_model", "num_channels": 3, **vision_sizes}
    ids = {"bos_token_id": vocab["<|startoftext|>"], "eos_token_id": vocab["<|endoftext|>"], "pad_token_id": 1}
    config = {
        "_name_or_path": "clip-vit-large-patch14/",
        "architectures": ["CLIPModel"],
        "initializer_factor": 1.0,
        "logit_scale_init_value": 2.6592,
        "model_type": "clip",
        **projection,
        "text_config": dict(sorted(text_config.items())),
        "text_config_dict": {**text_sizes, "vocab_size": len(vocab), **ids},
        "torch_dtype": "float32",
        "transformers_version": None,
        "vision_config": dict(sorted(vision_config.items())),
        "vision_config_dict": {k: v for k, v in vision_sizes.items() if k != "image_size"},
    }
    preprocessor = {
        "crop_size": 224,
        "do_center_crop": True,
        "do_normalize": True,
        "do_resize": True,
        "feature_extractor_type": "CLIPFeatureExtractor",
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
        "resample": 3,
        "size": 224,
    }
    torch.manual_seed(15)
    model = CLIPModel(CLIPConfig(**{k: v for k, v in config.items() if k not in ("_name_or_path", "architectures")}))
    tokenizer = clip_tokenizer_files(
        "tokenizer",
        "<|endoftext|>",
        name_or_path="openai/clip-vit-base-patch32",
        special_tokens_map_file="./special_tokens_map.json",
    )
    return {
        "README.md": b"---\ntags:\n- vision\nwidget:\n- src: cat-dog-music.png\n---\n# CLIP ViT-L/14 (stand-in)\n",
        "config.json": as_json(config),
        "preprocessor_config.json": as_json(preprocessor),
        **{name.removeprefix("tokenizer/"): data for name, data in tokenizer.items()},
        "tokenizer.json": AutoTokenizer.from_pretrained(TINY_CLIP_TOKENIZER).backend_tokenizer.to_str().encode(),
        **weights(model.state_dict(), "model", bin_stem="pytorch_model", fp16=False),
    }
