"""Z-Image-Turbo as a first run meets it: its repository's stand-in (tests/standins/zimage.py), loaded by hub name
offline with diffusers' own class in bfloat16, renders its prompts through Qwen3's chat template, reads its text
encoder from the three shards, and draws."""

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from musicvid.settings.presets import ZIMAGE
from tests.standins.hub import snapshot

pytestmark = pytest.mark.slow

SHARDS = [f"model-0000{n}-of-00003.safetensors" for n in (1, 2, 3)]


def test_z_image_turbo_loads_by_hub_name_in_bfloat16_and_draws(standin_hub):
    from diffusers import ZImagePipeline
    from transformers import Qwen2Tokenizer

    files = snapshot(standin_hub, ZIMAGE)
    assert sorted(str(p.relative_to(files)) for p in files.rglob("*") if p.is_file()) == [
        "README.md",
        "model_index.json",
        "scheduler/scheduler_config.json",
        "text_encoder/config.json",
        "text_encoder/generation_config.json",
        *[f"text_encoder/{shard}" for shard in SHARDS],
        "text_encoder/model.safetensors.index.json",
        *[f"tokenizer/{name}" for name in ("merges.txt", "tokenizer.json", "tokenizer_config.json", "vocab.json")],
        "transformer/config.json",
        *[f"transformer/diffusion_pytorch_model-0000{n}-of-00003.safetensors" for n in (1, 2, 3)],
        "transformer/diffusion_pytorch_model.safetensors.index.json",
        "vae/config.json",
        "vae/diffusion_pytorch_model.safetensors",
    ]
    pipe = ZImagePipeline.from_pretrained(ZIMAGE, dtype=torch.bfloat16)
    modules = {name: module for name, module in pipe.components.items() if isinstance(module, torch.nn.Module)}
    assert sorted(modules) == ["text_encoder", "transformer", "vae"]
    assert all(p.dtype == torch.bfloat16 for module in modules.values() for p in module.parameters())

    # the tokenizer by its own class (transformers' AutoTokenizer wants a config.json in tokenizer/ offline)
    assert type(pipe.tokenizer) is Qwen2Tokenizer
    assert len(Qwen2Tokenizer.from_pretrained(ZIMAGE, subfolder="tokenizer")) == len(pipe.tokenizer)
    message = [{"role": "user", "content": "a red sun over the sea"}]
    text = pipe.tokenizer.apply_chat_template(message, tokenize=False, add_generation_prompt=True, enable_thinking=True)
    assert text == "<|im_start|>user\na red sun over the sea<|im_end|>\n<|im_start|>assistant\n"
    tokens = pipe.tokenizer.convert_ids_to_tokens(pipe.tokenizer(text).input_ids)
    assert tokens.count("<|im_start|>") == 2 and tokens.count("<|im_end|>") == 1

    # Qwen3Model from Qwen3ForCausalLM's shards: every weight is the stored one
    index = json.loads((files / "text_encoder" / "model.safetensors.index.json").read_text())
    assert sorted(set(index["weight_map"].values())) == SHARDS
    stored = {name: t for shard in SHARDS for name, t in load_file(files / "text_encoder" / shard).items()}
    loaded = {"model." + name: t for name, t in pipe.text_encoder.state_dict().items()}
    assert loaded.keys() == stored.keys() and all(torch.equal(loaded[name], stored[name]) for name in stored)

    pipe.set_progress_bar_config(disable=True)
    settings = dict(height=64, width=64, num_inference_steps=2, guidance_scale=0.0, output_type="np")
    picture = pipe(prompt="a red sun over the sea", generator=torch.Generator().manual_seed(0), **settings).images
    assert picture.shape == (1, 64, 64, 3) and np.isfinite(picture).all()
