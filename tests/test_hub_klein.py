"""FLUX.2 klein 4B as a first run meets it: its repository's stand-in (tests/standins/klein.py), loaded by hub name
offline with diffusers' own class in bfloat16, renders its prompts through Qwen3's chat template with thinking off,
reads its text encoder from the two shards (the language-model head tied to the embedding), and draws."""

import json

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from musicvid.settings.presets import KLEIN
from tests.standins.hub import snapshot

pytestmark = pytest.mark.slow

SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]


def test_flux2_klein_loads_by_hub_name_in_bfloat16_and_draws(standin_hub):
    from diffusers import Flux2KleinPipeline

    files = snapshot(standin_hub, KLEIN)
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
        "transformer/diffusion_pytorch_model.safetensors",
        "vae/config.json",
        "vae/diffusion_pytorch_model.safetensors",
    ]
    pipe = Flux2KleinPipeline.from_pretrained(KLEIN, dtype=torch.bfloat16)
    assert pipe.config.is_distilled and type(pipe.text_encoder).__name__ == "Qwen3ForCausalLM"
    modules = {name: module for name, module in pipe.components.items() if isinstance(module, torch.nn.Module)}
    assert sorted(modules) == ["text_encoder", "transformer", "vae"]
    assert all(p.dtype == torch.bfloat16 for module in modules.values() for p in module.parameters())

    message = [{"role": "user", "content": "a red sun over the sea"}]
    text = pipe.tokenizer.apply_chat_template(
        message, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    assert text == "<|im_start|>user\na red sun over the sea<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    tokens = pipe.tokenizer.convert_ids_to_tokens(pipe.tokenizer(text).input_ids)
    assert [t for t in tokens if t.startswith("<")] == [
        "<|im_start|>",
        "<|im_end|>",
        "<|im_start|>",
        "<think>",
        "</think>",
    ]

    index = json.loads((files / "text_encoder" / "model.safetensors.index.json").read_text())
    assert sorted(set(index["weight_map"].values())) == SHARDS
    stored = {name: t for shard in SHARDS for name, t in load_file(files / "text_encoder" / shard).items()}
    loaded = pipe.text_encoder.state_dict()
    assert loaded.keys() - stored.keys() == {"lm_head.weight"}
    assert all(torch.equal(loaded[name], stored[name]) for name in stored)
    assert torch.equal(loaded["lm_head.weight"], stored["model.embed_tokens.weight"])

    pipe.set_progress_bar_config(disable=True)
    # klein's first positional argument is a reference picture: the prompt goes by name
    settings = dict(height=64, width=64, num_inference_steps=2, guidance_scale=1.0, output_type="np")
    picture = pipe(prompt="a red sun over the sea", generator=torch.Generator().manual_seed(0), **settings).images
    assert picture.shape == (1, 64, 64, 3) and np.isfinite(picture).all()
