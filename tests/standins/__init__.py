"""Stand-in checkpoints: tiny random models in a Hugging Face cache, laid out as the real repositories.

The tiny preset builds its models in-process, so it never touches the code a real first run takes:
resolving a hub name in the cache, picking weight files by name and format, reading each repository's
own config keys, finding (or not finding) a tokenizer. These stand-ins copy, for every default model
that lives on the hub, the real repository's file names, formats (pickled .bin beside .safetensors,
fp16 variants), classes and config keys; only the sizes are tiny and the weights random. Files the
app never reads (TensorFlow, Flax, Rust, ONNX and single-file checkpoints) are left out.

One module a model family, each with the real layouts it copies, as looked up on the hub: vipe (ViPE and
gpt2-medium), sd (Stable Diffusion 1.5, its LCM-LoRA and TAESD), sdxl (SDXL base, its LCM-LoRA and TAESDXL),
ip_adapter, loras (kohya's and diffusers' style LoRAs), demucs, faster_whisper (faster-whisper's Whisper large-v2),
upscaler (Real-ESRGAN x4plus and general x4v3), ltx_video, scorer (CLIP ViT-L/14), zimage (Z-Image-Turbo), klein (FLUX.2 klein 4B), ltx2
(LTX-2) and wan (Wan 2.1 FLF2V); clip holds the CLIP text encoders and tokenizers they share, qwen the Qwen3 text
encoder and tokenizer of the last two, hub the cache's layout.

Write a cache by hand to try the app on it::

    python -m tests.standins /tmp/standin-hf
    HF_HOME=/tmp/standin-hf HF_HUB_OFFLINE=1 musicvid storyboard song.mp3 --asr faster-whisper --asr-model DIR
"""

from __future__ import annotations

from pathlib import Path

from musicvid.settings.presets import (
    KLEIN,
    LCM_LORA,
    LCM_LORA_XL,
    LTX2,
    LTX_VIDEO,
    REAL_ESRGAN,
    REAL_ESRGAN_FAST,
    SCORER,
    SD15,
    SDXL,
    TAESD,
    TAESD_XL,
    WAN_FLF2V,
    ZIMAGE,
)
from tests.fixtures.gpt2 import tokenizer_files
from tests.standins.demucs import HTDEMUCS, htdemucs_files
from tests.standins.faster_whisper import FASTER_WHISPER_LARGE, faster_whisper_large_files
from tests.standins.hub import write_repo
from tests.standins.ip_adapter import IP_ADAPTER_REPO, ip_adapter_files
from tests.standins.klein import flux2_klein_files
from tests.standins.loras import KOHYA_LORA, kohya_lora_files
from tests.standins.ltx2 import ltx2_files
from tests.standins.ltx_video import ltx_video_files
from tests.standins.scorer import clip_scorer_files
from tests.standins.sd import lcm_lora_files, sd15_files, taesd_files
from tests.standins.sdxl import lcm_lora_xl_files, sdxl_files
from tests.standins.upscaler import realesrgan_files, realesrgan_general_files
from tests.standins.vipe import gpt2_medium_files, vipe_checkpoint_files
from tests.standins.wan import wan_flf2v_files
from tests.standins.zimage import zimage_turbo_files
from vipe_core.released import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER


def write_hub(home: Path) -> Path:
    """Every stand-in into `home`/hub (HF_HOME=`home`); returns the hub folder."""
    hub = home / "hub"
    write_repo(hub, DEFAULT_VIPE, vipe_checkpoint_files())
    write_repo(hub, DEFAULT_VIPE_TOKENIZER, gpt2_medium_files(tokenizer_files()))
    write_repo(hub, SD15, sd15_files())
    write_repo(hub, HTDEMUCS, htdemucs_files())
    write_repo(hub, FASTER_WHISPER_LARGE, faster_whisper_large_files())
    write_repo(hub, REAL_ESRGAN.rpartition("/")[0], realesrgan_files())
    write_repo(hub, REAL_ESRGAN_FAST.rpartition("/")[0], realesrgan_general_files())
    write_repo(hub, LCM_LORA, lcm_lora_files())
    write_repo(hub, TAESD, taesd_files())
    write_repo(hub, SDXL, sdxl_files())
    write_repo(hub, LCM_LORA_XL, lcm_lora_xl_files())
    write_repo(hub, TAESD_XL, taesd_files(b"# TAESDXL (stand-in)\n"))
    write_repo(hub, IP_ADAPTER_REPO, ip_adapter_files())
    write_repo(hub, "/".join(KOHYA_LORA.split("/")[:2]), kohya_lora_files())
    write_repo(hub, LTX_VIDEO, ltx_video_files())
    write_repo(hub, SCORER, clip_scorer_files())
    write_repo(hub, ZIMAGE, zimage_turbo_files())
    write_repo(hub, KLEIN, flux2_klein_files())
    write_repo(hub, LTX2, ltx2_files())
    write_repo(hub, WAN_FLF2V, wan_flf2v_files())
    return hub
