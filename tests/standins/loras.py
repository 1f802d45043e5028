"""Style LoRAs as people get them:

- ``khanon/lora-training``: kohya's SD 1.5 LoRAs, one folder each; ``sora/chara-sora-v3.safetensors`` is
  one (float16, kohya's names: ``lora_unet_`` for the UNet's attention blocks and ``lora_te_`` for the text
  encoder's attention and MLP, each with ``.lora_down``, ``.lora_up`` and ``.alpha``; the training
  settings as ``ss_*`` metadata), beside its README.md and preview pictures (not read).
- a LoRA that diffusers' training scripts save (peft's layers, written by save_lora_weights), into a folder."""

from __future__ import annotations

from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models.tiny import LOCAL_DIFFUSION, random_lora
from musicvid.settings.presets import TINY
from tests.standins.sd import tiny_unet

KOHYA_LORA = "khanon/lora-training/sora/chara-sora-v3.safetensors"
# What kohya's networks.lora adapts in SD 1.x: the UNet's transformer blocks, the text encoder's attention and MLP.
KOHYA_UNET_TARGETS = ("proj_in", "proj_out", "to_q", "to_k", "to_v", "to_out.0", "ff.net.0.proj", "ff.net.2")
KOHYA_TEXT_TARGETS = ("q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2")


def tiny_text_encoder():
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    ids = dict(bos_token_id=0, eos_token_id=1, pad_token_id=1)  # module names are all a LoRA needs
    return CLIPTextModel(
        CLIPTextConfig(vocab_size=100, max_position_embeddings=77, **ids, **LOCAL_DIFFUSION[TINY]["text"])
    )


def kohya_lora(seed: int = 9) -> bytes:
    """A kohya LoRA of the SD stand-in, UNet and text encoder, as sd-scripts saves one (float16, ss_ metadata)."""
    state = random_lora(tiny_unet(), seed=seed, targets=KOHYA_UNET_TARGETS)
    # (as kohya names a transformers 4 CLIPTextModel's layers, under text_model: diffusers reads either)
    state |= random_lora(tiny_text_encoder(), seed=seed, prefix="lora_te_text_model_", targets=KOHYA_TEXT_TARGETS)
    metadata = {
        "ss_network_module": "networks.lora",
        "ss_network_dim": "4",
        "ss_network_alpha": "4.0",
        "ss_base_model_version": "sd_v1",
        "ss_v2": "False",
    }
    return safetensors_bytes({k: v.half() for k, v in state.items()}, metadata)


def kohya_lora_files() -> dict[str, bytes]:
    folder = KOHYA_LORA.split("/")[2]
    return {
        "README.md": b"# LoRA training (stand-in)\n",
        f"{folder}/README.md": b"# Sora (stand-in)\n",
        "/".join(KOHYA_LORA.split("/")[2:]): kohya_lora(),
    }


def diffusers_lora(folder: Path, seed: int = 10, safe: bool = True) -> Path:
    """A LoRA of the SD stand-in's UNet as diffusers' training scripts save one (peft's layers, written by
    save_lora_weights), into `folder`; returns the file."""
    from diffusers import StableDiffusionPipeline
    from diffusers.utils import convert_state_dict_to_diffusers
    from peft import LoraConfig
    from peft.utils import get_peft_model_state_dict

    unet = tiny_unet()
    unet.add_adapter(LoraConfig(r=4, lora_alpha=4, target_modules=["to_q", "to_k", "to_v", "to_out.0"]))
    generator = torch.Generator().manual_seed(seed)  # trained, not as initialised (lora_B starts at zero)
    state = {k: torch.randn(v.shape, generator=generator) * 0.1 for k, v in get_peft_model_state_dict(unet).items()}
    StableDiffusionPipeline.save_lora_weights(
        folder, unet_lora_layers=convert_state_dict_to_diffusers(state), safe_serialization=safe
    )
    return next(folder.glob("pytorch_lora_weights.*"))
