"""Stand-in checkpoints: tiny random models in a Hugging Face cache, laid out as the real repositories.

The tiny preset builds its models in-process, so it never touches the code a real first run takes:
resolving a hub name in the cache, picking weight files by name and format, reading each repository's
own config keys, finding (or not finding) a tokenizer. These stand-ins copy, for every default model
that lives on the hub, the real repository's file names, formats (pickled .bin beside .safetensors,
fp16 variants), classes and config keys; only the sizes are tiny and the weights random. Files the
app never reads (TensorFlow, Flax, Rust, ONNX and single-file checkpoints) are left out.

Real layouts, looked up on the hub:
- ``fittar/ViPE-M-CTX7``: README.md, config.json, generation_config.json, pytorch_model.bin. No
  tokenizer: its authors always load gpt2-medium's.
- ``openai-community/gpt2-medium`` (``gpt2-medium`` redirects here): config.json (no tokenizer class
  in it), generation_config.json, vocab.json, merges.txt, tokenizer.json, tokenizer_config.json
  holding only ``{"model_max_length": 1024}``, model.safetensors, pytorch_model.bin.
- ``stable-diffusion-v1-5/stable-diffusion-v1-5``: model_index.json naming a safety checker and a
  feature extractor; subfolders scheduler/, tokenizer/, text_encoder/, unet/, vae/, safety_checker/,
  feature_extractor/; weights as .safetensors and .bin, each also as an fp16 variant.
- ``adefossez/HTDemucs`` (what demucs 4.1 loads for ``htdemucs``; its tools/export_hf.py writes it):
  htdemucs.yaml (the bag: ``models: ['955717e8']``), 955717e8.safetensors with the model's class, args
  and kwargs as JSON in the safetensors metadata (fractions as ``{"_type": "fraction", ...}``; 533
  float16 tensors), a 955717e8.json sidecar with the same and the training record, README.md.

- ``2kpr/Real-ESRGAN``: RealESRGAN_x4plus.pth, the file xinntao/Real-ESRGAN publishes on GitHub: a
  pickled dict ``{"params_ema": state}`` of basicsr's RRDBNet (conv_first, body.N.rdbM.convK,
  conv_body, conv_up1, conv_up2, conv_hr, conv_last; 64 features, 23 blocks, growth 32), float32.

- ``latent-consistency/lcm-lora-sdv1-5``: README.md, pytorch_lora_weights.safetensors (135 MB: float16,
  kohya's layout with diffusers' module names, ``lora_unet_<path with underscores>`` and its
  ``.lora_down.weight``, ``.lora_up.weight`` and ``.alpha``, UNet only), image.png (not read).
- ``h94/IP-Adapter`` (what ``--reference`` loads): models/ip-adapter_sd15.safetensors (float16: the image
  projection's ``image_proj.proj`` to 4 tokens and its ``image_proj.norm``, and ``ip_adapter.N.to_k_ip`` and
  ``.to_v_ip`` for each cross-attention N = 1, 3, …, 31), models/ip-adapter_sd15.bin (the same as a pickled
  dict of two dicts), models/image_encoder/ with config.json (CLIPVisionModelWithProjection: ViT-H/14, 1280
  wide, 32 layers, projection 1024, image size 224), model.safetensors and pytorch_model.bin in float32;
  README.md. The other SD 1.5 adapters (plus, face, light) are not read.
- ``khanon/lora-training``: kohya's SD 1.5 LoRAs, one folder each; ``sora/chara-sora-v3.safetensors`` is
  one (float16, kohya's names: ``lora_unet_`` for the UNet's attention blocks and ``lora_te_`` for the text
  encoder's attention and MLP, each with ``.lora_down``, ``.lora_up`` and ``.alpha``; the training
  settings as ``ss_*`` metadata), beside its README.md and preview pictures (not read).
- ``madebyollin/taesd``: README.md, config.json (AutoencoderTiny: 64 channels, 1+3+3+3 encoder and
  3+3+3+1 decoder blocks, latent magnitude 3 and shift 0.5, scaling factor 1), diffusion_pytorch_model
  as .safetensors and .bin; taesd_encoder/decoder.safetensors, the original layout, are not read.
- ``stabilityai/stable-diffusion-xl-base-1.0``: model_index.json (StableDiffusionXLPipeline,
  ``force_zeros_for_empty_prompt: true``, ``add_watermarker: null``, an EulerDiscreteScheduler); text_encoder/
  (CLIPTextModel, ViT-L) and text_encoder_2/ (CLIPTextModelWithProjection, ViT-bigG: gelu, projection 1280),
  each config.json with model.safetensors and model.fp16.safetensors; tokenizer/ and tokenizer_2/ (the
  second pads with "!"); unet/ (``addition_embed_type: text_time``, cross-attention 2048, linear
  projections, 1/2/10 transformer layers) and vae/ (``force_upcast: true``, scaling factor 0.13025), each
  config.json with diffusion_pytorch_model.safetensors and .fp16.safetensors. No pickled .bin. Not read:
  vae_1_0/, vae_decoder/, vae_encoder/ (ONNX), OpenVINO and Flax files, sd_xl_base_1.0.safetensors and the
  offset LoRA (single files), LICENSE.md and the sample pictures.
- ``h94/IP-Adapter``'s ``sdxl_models/``: ip-adapter_sdxl.safetensors and .bin as for SD 1.5, and
  image_encoder/ (CLIPVisionModelWithProjection: ViT-bigG/14, 1664 wide, 48 layers, projection 1280); the
  vit-h and plus adapters beside them are not read.
- ``latent-consistency/lcm-lora-sdxl`` and ``madebyollin/taesdxl``: laid out as their SD 1.5 counterparts.
- ``Lightricks/LTX-Video-0.9.5`` (what ``--transitions video`` loads): model_index.json naming ``LTXPipeline``
  (LTXConditionPipeline loads the same components); scheduler/ (FlowMatchEulerDiscreteScheduler without
  dynamic shifting); text_encoder/ (T5EncoderModel, T5-v1.1-XXL, in four float32 safetensors shards with
  model.safetensors.index.json); tokenizer/ (a slow T5Tokenizer: spiece.model, tokenizer_config.json with
  ``model_max_length: 128`` and 100 extra ids, special_tokens_map.json, added_tokens.json; no tokenizer.json,
  so loading it needs sentencepiece); transformer/ (LTXVideoTransformer3DModel, 28 layers of 32 × 64, in two
  shards with diffusion_pytorch_model.safetensors.index.json); vae/ (AutoencoderKLLTXVideo with 0.9.5's down
  blocks and timestep-conditioned decoder, one diffusion_pytorch_model.safetensors). No fp16 variants, no .bin.
- ``openai/clip-vit-large-patch14`` (the scorer of ``musicvid score``): config.json (CLIPModel as transformers
  4.16 wrote it: ``text_config`` and ``vision_config`` in full beside the ``text_config_dict`` and
  ``vision_config_dict`` that override them; projection 768, text 768 wide in 12 layers, vision 1024 wide in
  24 layers at 224² in patches of 14, ``logit_scale_init_value`` 2.6592); preprocessor_config.json
  (CLIPFeatureExtractor: resize and centre crop to 224, bicubic, CLIP's mean and std); vocab.json, merges.txt,
  tokenizer.json, tokenizer_config.json (``model_max_length`` 77, its ``name_or_path`` still
  ``openai/clip-vit-base-patch32``), special_tokens_map.json; model.safetensors and pytorch_model.bin in
  float32; README.md. tf_model.h5 and flax_model.msgpack are not read. The stand-in's ``text_config_dict``
  also names the tiny vocabulary's size and ids (the real one's are CLIP's defaults: 49,408 tokens, end of
  text 49,407).

The GPT-2 vocabulary is GPT-2's own (50,257 tokens, end-of-text id 50,256), rebuilt from the BPE
ranks that openai-whisper ships (tests/fixtures/gpt2.py); the CLIP tokenizer is the small one the tiny preset uses.

Write a cache by hand to try the app on it::

    python -m tests.standins /tmp/standin-hf
    HF_HOME=/tmp/standin-hf HF_HUB_OFFLINE=1 musicvid storyboard song.mp3 --asr faster-whisper --asr-model DIR
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from pathlib import Path

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.core.assets import TINY_CLIP_TOKENIZER
from musicvid.models.scorer import TINY_CLIP_SCORER
from musicvid.models.tiny import (
    DEMUCS_SOURCES,
    LOCAL_DIFFUSION,
    TINY_LTX,
    TINY_T5_WORDS,
    random_ip_adapter,
    random_lora,
)
from musicvid.settings.presets import (
    IP_ADAPTER,
    IP_ADAPTER_XL,
    LCM_LORA,
    LCM_LORA_XL,
    LTX_VIDEO,
    REAL_ESRGAN,
    SCORER,
    SD15,
    SDXL,
    TAESD,
    TAESD_XL,
    TINY,
    TINY_XL,
)
from tests.fixtures.gpt2 import GPT2_EOS, GPT2_VOCAB, tokenizer_files
from vipe_core.released import DEFAULT_VIPE, DEFAULT_VIPE_TOKENIZER


def write_repo(hub: Path, repo_id: str, files: dict[str, bytes]) -> Path:
    """One repository as huggingface_hub caches it: blobs by hash, a snapshot of links, refs/main."""
    folder = hub / f"models--{repo_id.replace('/', '--')}"
    revision = hashlib.sha1(repo_id.encode()).hexdigest()
    snapshot = folder / "snapshots" / revision
    for name, data in files.items():
        blob = folder / "blobs" / hashlib.sha256(data).hexdigest()
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(data)
        link = snapshot / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path(*[".."] * (len(Path(name).parts) + 1), "blobs", blob.name))
    (folder / "refs").mkdir(parents=True, exist_ok=True)
    (folder / "refs" / "main").write_text(revision)
    return snapshot


def as_json(data: dict) -> bytes:
    return json.dumps(data, indent=2, sort_keys=True).encode() + b"\n"


def pickled(state: dict[str, torch.Tensor]) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def weights(
    state: dict[str, torch.Tensor], stem: str, *, bin_stem: str | None = None, fp16: bool = True, bins: bool = True
) -> dict:
    """A module's weights under the names the SD repository uses: safetensors and (with `bins`) pickle, fp32
    and (with `fp16`) fp16."""
    state = {k: v.contiguous() for k, v in state.items()}
    half = {k: v.half() if v.is_floating_point() else v for k, v in state.items()}
    bin_stem = bin_stem or stem
    files = {f"{stem}.safetensors": safetensors_bytes(state)} | ({f"{bin_stem}.bin": pickled(state)} if bins else {})
    if fp16:
        files[f"{stem}.fp16.safetensors"] = safetensors_bytes(half)
        files |= {f"{bin_stem}.fp16.bin": pickled(half)} if bins else {}
    return files


# --- GPT-2: the tokenizer repository and the ViPE checkpoint ----------------------------------------


def gpt2_config(**overrides) -> dict:
    """gpt2-medium's config.json keys; tiny sizes unless `overrides` say otherwise."""
    return {
        "activation_function": "gelu_new",
        "architectures": ["GPT2LMHeadModel"],
        "attn_pdrop": 0.1,
        "bos_token_id": GPT2_EOS,
        "embd_pdrop": 0.1,
        "eos_token_id": GPT2_EOS,
        "initializer_range": 0.02,
        "layer_norm_epsilon": 1e-05,
        "model_type": "gpt2",
        "n_ctx": 1024,
        "n_embd": 32,
        "n_head": 2,
        "n_layer": 2,
        "n_positions": 1024,
        "n_special": 0,
        "predict_special_tokens": True,
        "resid_pdrop": 0.1,
        "summary_activation": None,
        "summary_first_dropout": 0.1,
        "summary_proj_to_labels": True,
        "summary_type": "cls_index",
        "summary_use_proj": True,
        "task_specific_params": {"text-generation": {"do_sample": True, "max_length": 50}},
        "vocab_size": GPT2_VOCAB,
        **overrides,
    }


def gpt2_state(config: dict, seed: int) -> dict[str, torch.Tensor]:
    """Random weights with the state-dict keys a GPT2LMHeadModel saves (the head is tied to wte)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    model = GPT2LMHeadModel(GPT2Config(**{k: v for k, v in config.items() if k != "architectures"}))
    return {k: v for k, v in model.state_dict().items() if k != "lm_head.weight"}


def vipe_checkpoint_files(config: dict | None = None, seed: int = 1) -> dict[str, bytes]:
    """fittar/ViPE-M-CTX7: a GPT-2 Medium fine-tune saved by transformers 4.29 as a pickled .bin."""
    config = config or gpt2_config(
        _name_or_path="gpt2-medium", torch_dtype="float32", transformers_version="4.29.2", use_cache=True
    )
    state = gpt2_state(config, seed)
    # A random GPT-2 with its head tied to the input embedding mostly repeats its last input token, and
    # every input ends in end-of-text: shrink that token's embedding so the stand-in talks, as ViPE does.
    state["transformer.wte.weight"][config["eos_token_id"]] *= 0.1
    # transformers 4.29 still saved the attention masks as buffers (the .bin's BoolStorage pickle import).
    for layer in range(config["n_layer"]):
        positions = config["n_positions"]
        state[f"transformer.h.{layer}.attn.bias"] = torch.tril(torch.ones(positions, positions, dtype=torch.bool))[
            None, None
        ]
        state[f"transformer.h.{layer}.attn.masked_bias"] = torch.tensor(-1e4)
    return {
        "README.md": b"---\nlanguage:\n- en\npipeline_tag: text2text-generation\nlicense: mit\n---\n# ViPE-M-CTX7 (stand-in)\n",
        "config.json": as_json(config),
        "generation_config.json": as_json(
            {
                "_from_model_config": True,
                "bos_token_id": GPT2_EOS,
                "eos_token_id": GPT2_EOS,
                "transformers_version": "4.29.2",
            }
        ),
        "pytorch_model.bin": pickled(state),
    }


def gpt2_medium_files(tokenizer: dict[str, bytes]) -> dict[str, bytes]:
    config = gpt2_config()
    return {
        "README.md": b"---\nlanguage: en\nlicense: mit\n---\n# GPT-2 Medium (stand-in)\n",
        "config.json": as_json(config),
        "generation_config.json": as_json(
            {
                "_from_model_config": True,
                "bos_token_id": GPT2_EOS,
                "eos_token_id": GPT2_EOS,
                "transformers_version": "4.27.0.dev0",
            }
        ),
        "model.safetensors": safetensors_bytes(gpt2_state(config, seed=2)),
        **tokenizer,
    }


# --- Stable Diffusion 1.5 and SDXL ------------------------------------------------------------------


def clip_text_config(architecture: str, **keys) -> dict:
    """A CLIP text encoder's config.json as SD's and SDXL's repositories hold them, ids and all: their
    bos/eos ids (0 and 2) never matched their tokenizers (2 tells transformers to pool at the highest id)."""
    vocab = json.loads((TINY_CLIP_TOKENIZER / "vocab.json").read_text(encoding="utf-8"))
    config = {
        "architectures": [architecture],
        "attention_dropout": 0.0,
        "bos_token_id": 0,
        "dropout": 0.0,
        "eos_token_id": 2,
        "hidden_act": "quick_gelu",
        "initializer_factor": 1.0,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-05,
        "max_position_embeddings": 77,
        "model_type": "clip_text_model",
        "pad_token_id": 1,
        "vocab_size": len(vocab),
        **keys,
    }
    return dict(sorted(config.items()))


def clip_text_encoder(config: dict, seed: int):
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    torch.manual_seed(seed)
    model = CLIPTextModelWithProjection if config["architectures"] == ["CLIPTextModelWithProjection"] else CLIPTextModel
    return model(CLIPTextConfig(**{k: v for k, v in config.items() if k != "architectures"}))


def clip_tokenizer_files(folder: str, pad_token: str, **keys) -> dict[str, bytes]:
    """A CLIP tokenizer's four files (the tiny vocabulary) as SD's and SDXL's repositories hold them."""
    token = {"lstrip": False, "normalized": True, "rstrip": False, "single_word": False}
    start, end = {"content": "<|startoftext|>", **token}, {"content": "<|endoftext|>", **token}
    config = {
        "add_prefix_space": False,
        "bos_token": {"__type": "AddedToken", **start},
        "do_lower_case": True,
        "eos_token": {"__type": "AddedToken", **end},
        "errors": "replace",
        "model_max_length": 77,
        "pad_token": pad_token,
        "tokenizer_class": "CLIPTokenizer",
        "unk_token": {"__type": "AddedToken", **end},
        **keys,
    }
    return {
        f"{folder}/vocab.json": (TINY_CLIP_TOKENIZER / "vocab.json").read_bytes(),
        f"{folder}/merges.txt": (TINY_CLIP_TOKENIZER / "merges.txt").read_bytes(),
        f"{folder}/tokenizer_config.json": as_json(dict(sorted(config.items()))),
        f"{folder}/special_tokens_map.json": as_json(
            {"bos_token": start, "eos_token": end, "pad_token": pad_token, "unk_token": end}
        ),
    }


def sd15_files() -> dict[str, bytes]:
    from diffusers import AutoencoderKL, UNet2DConditionModel
    from diffusers.pipelines.stable_diffusion.safety_checker import StableDiffusionSafetyChecker
    from transformers import CLIPConfig

    sizes = LOCAL_DIFFUSION[TINY]
    version = {"_diffusers_version": "0.6.0"}
    model_index = {
        "_class_name": "StableDiffusionPipeline",
        **version,
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
        **version,
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
    unet = {
        "_class_name": "UNet2DConditionModel",
        **version,
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
        **version,
        "act_fn": "silu",
        "down_block_types": ["DownEncoderBlock2D"] * 4,
        "in_channels": 3,
        "latent_channels": 4,
        "out_channels": 3,
        "up_block_types": ["UpDecoderBlock2D"] * 4,
        **sizes["vae"],
        "sample_size": 512,
    }
    clip_vocab = json.loads((TINY_CLIP_TOKENIZER / "vocab.json").read_text(encoding="utf-8"))
    text_encoder = clip_text_config(
        "CLIPTextModel",
        _name_or_path="openai/clip-vit-large-patch14",
        projection_dim=sizes["text"]["hidden_size"],
        torch_dtype="float32",
        transformers_version="4.22.0.dev0",
        **sizes["text"],
    )
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
    tiny_clip = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2)
    safety = CLIPConfig(
        text_config=dict(
            vocab_size=len(clip_vocab),
            bos_token_id=clip_vocab["<|startoftext|>"],
            eos_token_id=clip_vocab["<|endoftext|>"],
            **tiny_clip,
        ),
        vision_config=dict(image_size=32, patch_size=16, **tiny_clip),
        projection_dim=32,
    )
    safety_config = {
        "_name_or_path": "CompVis/stable-diffusion-safety-checker",
        "architectures": ["StableDiffusionSafetyChecker"],
        **safety.to_dict(),
    }

    modules = {
        "text_encoder": clip_text_encoder(text_encoder, seed=3),
        "unet": UNet2DConditionModel.from_config(unet),
        "vae": AutoencoderKL.from_config(vae),
        "safety_checker": StableDiffusionSafetyChecker(safety),
    }
    files = {
        "README.md": b"---\nlicense: creativeml-openrail-m\ntags:\n- stable-diffusion\n---\n# Stable Diffusion v1-5 (stand-in)\n",
        "model_index.json": as_json(model_index),
        "scheduler/scheduler_config.json": as_json(scheduler),
        "feature_extractor/preprocessor_config.json": as_json(feature_extractor),
        **clip_tokenizer_files(
            "tokenizer",
            "<|endoftext|>",
            name_or_path="openai/clip-vit-large-patch14",
            special_tokens_map_file="./special_tokens_map.json",
        ),
        "text_encoder/config.json": as_json(text_encoder),
        "unet/config.json": as_json(unet),
        "vae/config.json": as_json(vae),
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


def sdxl_files() -> dict[str, bytes]:
    """SDXL base: two text encoders and tokenizers (the second pads with "!"), a UNet conditioned on the
    pooled text and the picture's size, a VAE that must not run in float16 (force_upcast); safetensors
    only, each also as an fp16 variant."""
    from diffusers import AutoencoderKL, UNet2DConditionModel

    sizes = LOCAL_DIFFUSION[TINY_XL]
    version = {"_diffusers_version": "0.19.0.dev0"}
    model_index = {
        "_class_name": "StableDiffusionXLPipeline",
        **version,
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
        **version,
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
    unet = {
        "_class_name": "UNet2DConditionModel",
        **version,
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
        **sizes["unet"],
        "sample_size": 128,
    }
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
    modules = {
        "text_encoder": clip_text_encoder(text_encoder, seed=11),
        "text_encoder_2": clip_text_encoder(text_encoder_2, seed=12),
        "unet": UNet2DConditionModel.from_config(unet),
        "vae": AutoencoderKL.from_config(vae),
    }
    files = {
        "README.md": b"---\nlicense: openrail++\ntags:\n- text-to-image\n- stable-diffusion\n---\n# SD-XL 1.0-base (stand-in)\n",
        "model_index.json": as_json(model_index),
        "scheduler/scheduler_config.json": as_json(scheduler),
        **clip_tokenizer_files("tokenizer", "<|endoftext|>"),
        **clip_tokenizer_files("tokenizer_2", "!", clean_up_tokenization_spaces=True),
        "text_encoder/config.json": as_json(text_encoder),
        "text_encoder_2/config.json": as_json(text_encoder_2),
        "unet/config.json": as_json(unet),
        "vae/config.json": as_json(vae),
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


def tiny_text_encoder():
    from transformers import CLIPTextConfig, CLIPTextModel

    torch.manual_seed(0)
    ids = dict(bos_token_id=0, eos_token_id=1, pad_token_id=1)  # module names are all a LoRA needs
    return CLIPTextModel(
        CLIPTextConfig(vocab_size=100, max_position_embeddings=77, **ids, **LOCAL_DIFFUSION[TINY]["text"])
    )


# --- IP-Adapter -----------------------------------------------------------------------------------

IP_ADAPTER_REPO = IP_ADAPTER.split("/models/")[0]
IMAGE_ENCODER_SIZES = dict(
    hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2, projection_dim=16
)  # (SDXL's: projection 24)


def ip_adapter_folder(adapter: str, unet_name: str, projection_dim: int, seed: int) -> dict[str, bytes]:
    """One of h94/IP-Adapter's adapters (the hub file `adapter`) for the stand-in UNet `unet_name`: the
    adapter as safetensors and .bin, and the image encoder in the image_encoder/ folder beside it."""
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    encoder_config = {
        "_name_or_path": "./image_encoder",
        "architectures": ["CLIPVisionModelWithProjection"],
        "attention_dropout": 0.0,
        "dropout": 0.0,
        "hidden_act": "gelu",
        "image_size": 224,
        "initializer_factor": 1.0,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-05,
        "model_type": "clip_vision_model",
        "num_channels": 3,
        "patch_size": 14,
        "torch_dtype": "float16",
        "transformers_version": "4.28.0.dev0",
        **IMAGE_ENCODER_SIZES,
        "projection_dim": projection_dim,
    }
    torch.manual_seed(seed)
    encoder = CLIPVisionModelWithProjection(
        CLIPVisionConfig(**{k: v for k, v in encoder_config.items() if k != "architectures"})
    )
    adapter_weights = random_ip_adapter(tiny_unet(unet_name), projection_dim, seed=seed)
    half = {part: {k: v.half() for k, v in weights.items()} for part, weights in adapter_weights.items()}
    flat = {f"{part}.{k}": v for part, weights in half.items() for k, v in weights.items()}
    folder, _, file = adapter.removeprefix(IP_ADAPTER_REPO + "/").rpartition("/")
    return {
        f"{folder}/{file}": safetensors_bytes(flat),
        f"{folder}/{Path(file).stem}.bin": pickled(half),
        f"{folder}/image_encoder/config.json": as_json(encoder_config),
        **{
            f"{folder}/image_encoder/{k}": v
            for k, v in weights(encoder.state_dict(), "model", bin_stem="pytorch_model", fp16=False).items()
        },
    }


def ip_adapter_files() -> dict[str, bytes]:
    """The SD 1.5 adapter (models/, its encoder ViT-H/14) and SDXL's (sdxl_models/, its encoder ViT-bigG/14)."""
    return {
        "README.md": b"---\nlicense: apache-2.0\nlanguage:\n- en\nlibrary_name: diffusers\n---\n# IP-Adapter (stand-in)\n",
        **ip_adapter_folder(IP_ADAPTER, TINY, IMAGE_ENCODER_SIZES["projection_dim"], seed=8),
        **ip_adapter_folder(IP_ADAPTER_XL, TINY_XL, 24, seed=14),
    }


# --- style LoRAs ----------------------------------------------------------------------------------

KOHYA_LORA = "khanon/lora-training/sora/chara-sora-v3.safetensors"
# What kohya's networks.lora adapts in SD 1.x: the UNet's transformer blocks, the text encoder's attention and MLP.
KOHYA_UNET_TARGETS = ("proj_in", "proj_out", "to_q", "to_k", "to_v", "to_out.0", "ff.net.0.proj", "ff.net.2")
KOHYA_TEXT_TARGETS = ("q_proj", "k_proj", "v_proj", "out_proj", "fc1", "fc2")


def kohya_lora(seed: int = 9) -> bytes:
    """A kohya LoRA of the SD stand-in, UNet and text encoder, as sd-scripts saves one (float16, ss_ metadata)."""
    state = random_lora(tiny_unet(), seed=seed, targets=KOHYA_UNET_TARGETS)
    state |= random_lora(tiny_text_encoder(), seed=seed, prefix="lora_te_", targets=KOHYA_TEXT_TARGETS)
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


# --- Demucs ----------------------------------------------------------------------------------------

HTDEMUCS = "adefossez/HTDemucs"
HTDEMUCS_SIGNATURE = "955717e8"


# The kwargs the published 955717e8 carries in its metadata (args: []); the stand-in cuts only sizes, which
# keeps the published state dict's 533 keys (42M weights there, 335k here).
HTDEMUCS_KWARGS = {
    "sources": DEMUCS_SOURCES,
    "audio_channels": 2,
    "samplerate": 44100,
    "segment": {"_type": "fraction", "numerator": 39, "denominator": 5},
    "channels": 48,
    "channels_time": None,
    "growth": 2,
    "nfft": 4096,
    "wiener_iters": 0,
    "end_iters": 0,
    "wiener_residual": False,
    "cac": True,
    "depth": 4,
    "rewrite": True,
    "multi_freqs": [],
    "multi_freqs_depth": 3,
    "freq_emb": 0.2,
    "emb_scale": 10,
    "emb_smooth": True,
    "kernel_size": 8,
    "stride": 4,
    "time_stride": 2,
    "context": 1,
    "context_enc": 0,
    "norm_starts": 4,
    "norm_groups": 4,
    "dconv_mode": 3,
    "dconv_depth": 2,
    "dconv_comp": 8,
    "dconv_init": 0.001,
    "bottom_channels": 512,
    "t_layers": 5,
    "t_hidden_scale": 4.0,
    "t_heads": 8,
    "t_dropout": 0.02,
    "t_layer_scale": True,
    "t_gelu": True,
    "t_emb": "sin",
    "t_max_positions": 10000,
    "t_max_period": 10000.0,
    "t_weight_pos_embed": 1.0,
    "t_sparse_self_attn": False,
    "t_sparse_cross_attn": False,
    "t_cross_first": False,
    "rescale": 0.1,
}
HTDEMUCS_TINY_SIZES = {"channels": 8, "bottom_channels": 16, "t_heads": 2, "dconv_comp": 4, "t_hidden_scale": 2.0}


def htdemucs_files() -> dict[str, bytes]:
    from demucs.hf import _decode_json  # the loader's own reading of the fraction
    from demucs.htdemucs import HTDemucs

    kwargs = {**HTDEMUCS_KWARGS, **HTDEMUCS_TINY_SIZES}
    torch.manual_seed(3)
    model = HTDemucs(**_decode_json(kwargs))
    metadata = {"klass": "demucs.htdemucs.HTDemucs", "args": "[]", "kwargs": json.dumps(kwargs)}
    sig = HTDEMUCS_SIGNATURE
    state = {k: v.half().contiguous() for k, v in model.state_dict().items()}  # published in float16
    return {
        "htdemucs.yaml": f"models: ['{sig}']\n".encode(),
        f"{sig}.safetensors": safetensors_bytes(state, metadata),
        f"{sig}.json": as_json({**metadata, "training_args": {}, "metrics": {}}),
        "README.md": b"---\nlicense: mit\ntags:\n- demucs\n---\n# htdemucs (stand-in)\n",
    }


def realesrgan_files(features: int = 8, blocks: int = 1, growth: int = 32) -> dict[str, bytes]:
    """basicsr's RRDBNet ×4 under its own names, cut to `blocks` blocks of `features` features (spandrel
    reads both from the weights; the growth of 32 it assumes)."""
    generator = torch.Generator().manual_seed(4)
    state = {}

    def conv(name: str, into: int, out: int) -> None:
        state[f"{name}.weight"] = torch.randn(out, into, 3, 3, generator=generator) * 0.05
        state[f"{name}.bias"] = torch.zeros(out)

    conv("conv_first", 3, features)
    for block in range(blocks):
        for dense in (1, 2, 3):
            for k in range(1, 6):
                conv(f"body.{block}.rdb{dense}.conv{k}", features + (k - 1) * growth, growth if k < 5 else features)
    for name in ("conv_body", "conv_up1", "conv_up2", "conv_hr"):
        conv(name, features, features)
    conv("conv_last", features, 3)
    return {REAL_ESRGAN.rpartition("/")[2]: pickled({"params_ema": state})}


# --- LTX-Video --------------------------------------------------------------------------------------


def sharded(state: dict[str, torch.Tensor], stem: str, index: str, shards: int) -> dict[str, bytes]:
    """Weights in `shards` safetensors files named as transformers and diffusers shard them
    (`stem`-00001-of-0000N.safetensors), with the index of which file holds each tensor."""
    names = sorted(state)
    files, weight_map = {}, {}
    for number in range(shards):
        shard = f"{stem}-{number + 1:05d}-of-{shards:05d}.safetensors"
        part = {name: state[name].contiguous() for name in names[number::shards]}
        files[shard] = safetensors_bytes(part)
        weight_map |= dict.fromkeys(part, shard)
    total = sum(tensor.numel() * tensor.element_size() for tensor in state.values())
    return files | {index: as_json({"metadata": {"total_size": total}, "weight_map": weight_map})}


def t5_tokenizer_files(folder: str, extra_ids: int = 100) -> dict[str, bytes]:
    """A slow T5Tokenizer's files as LTX-Video's repository holds them: a sentencepiece unigram model (trained
    here on TINY_T5_WORDS' sentences) and the 100 extra ids numbered down from the end of the vocabulary."""
    import sentencepiece

    model = io.BytesIO()
    sentences = [" ".join(TINY_T5_WORDS[n:] + TINY_T5_WORDS[:n]) for n in range(len(TINY_T5_WORDS))]
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences),
        model_writer=model,
        vocab_size=48,
        model_type="unigram",
        pad_id=0,
        eos_id=1,
        unk_id=2,
        bos_id=-1,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    size = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue()).get_piece_size()
    extras = [f"<extra_id_{n}>" for n in range(extra_ids)]
    token = dict(lstrip=False, normalized=False, rstrip=False, single_word=False, special=True)
    specials = {"pad_token": "<pad>", "eos_token": "</s>", "unk_token": "<unk>"}
    decoder = {str(i): {"content": t, **token} for i, t in enumerate(specials.values())}
    decoder |= {str(size + extra_ids - 1 - n): {"content": t, **token} for n, t in enumerate(extras)}
    config = {
        "added_tokens_decoder": decoder,
        "additional_special_tokens": extras,
        "clean_up_tokenization_spaces": True,
        "extra_ids": extra_ids,
        "legacy": True,
        "model_max_length": 128,
        "sp_model_kwargs": {},
        "tokenizer_class": "T5Tokenizer",
        **specials,
    }
    plain = {k: v for k, v in token.items() if k != "special"}
    special_map = {"additional_special_tokens": [{"content": t, **plain} for t in extras]}
    special_map |= {name: {"content": t, **plain} for name, t in specials.items()}
    return {
        f"{folder}/spiece.model": model.getvalue(),
        f"{folder}/tokenizer_config.json": as_json(config),
        f"{folder}/special_tokens_map.json": as_json(special_map),
        f"{folder}/added_tokens.json": as_json({t: size + extra_ids - 1 - n for n, t in enumerate(extras)}),
    }


def ltx_video_files() -> dict[str, bytes]:
    """LTX-Video 0.9.5 in diffusers' layout (module docstring), at TINY_LTX's sizes."""
    from diffusers import AutoencoderKLLTXVideo, LTXVideoTransformer3DModel
    from transformers import T5Config, T5EncoderModel

    version = {"_diffusers_version": "0.33.0.dev0"}
    model_index = {
        "_class_name": "LTXPipeline",
        **version,
        "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
        "text_encoder": ["transformers", "T5EncoderModel"],
        "tokenizer": ["transformers", "T5Tokenizer"],
        "transformer": ["diffusers", "LTXVideoTransformer3DModel"],
        "vae": ["diffusers", "AutoencoderKLLTXVideo"],
    }
    scheduler = {
        "_class_name": "FlowMatchEulerDiscreteScheduler",
        **version,
        "base_image_seq_len": 1024,
        "base_shift": 0.95,
        "invert_sigmas": False,
        "max_image_seq_len": 4096,
        "max_shift": 2.05,
        "num_train_timesteps": 1000,
        "shift": 1.0,
        "shift_terminal": 0.1,
        "stochastic_sampling": False,
        "use_beta_sigmas": False,
        "use_dynamic_shifting": False,
        "use_exponential_sigmas": False,
        "use_karras_sigmas": False,
    }
    transformer = {
        "_class_name": "LTXVideoTransformer3DModel",
        **version,
        "activation_fn": "gelu-approximate",
        "attention_bias": True,
        "attention_out_bias": True,
        "norm_elementwise_affine": False,
        "norm_eps": 1e-06,
        "patch_size": 1,
        "patch_size_t": 1,
        "qk_norm": "rms_norm_across_heads",
        **TINY_LTX["transformer"],
    }
    vae = {
        "_class_name": "AutoencoderKLLTXVideo",
        **version,
        "decoder_causal": False,
        "encoder_causal": True,
        "in_channels": 3,
        "out_channels": 3,
        "patch_size": 4,
        "patch_size_t": 1,
        "resnet_norm_eps": 1e-06,
        "scaling_factor": 1.0,
        **TINY_LTX["vae"],
    }
    tokenizer = t5_tokenizer_files("tokenizer")
    text_encoder = {
        "_name_or_path": "google/t5-v1_1-xxl",
        "architectures": ["T5EncoderModel"],
        "classifier_dropout": 0.0,
        "decoder_start_token_id": 0,
        "dense_act_fn": "gelu_new",
        "dropout_rate": 0.1,
        "eos_token_id": 1,
        "feed_forward_proj": "gated-gelu",
        "initializer_factor": 1.0,
        "is_encoder_decoder": True,
        "is_gated_act": True,
        "layer_norm_epsilon": 1e-06,
        "model_type": "t5",
        "num_decoder_layers": 1,
        "output_past": True,
        "pad_token_id": 0,
        "relative_attention_max_distance": 128,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "transformers_version": "4.48.0",
        "use_cache": True,
        "vocab_size": max(json.loads(tokenizer["tokenizer/added_tokens.json"]).values()) + 1,
        **TINY_LTX["text"],
    }
    torch.manual_seed(13)
    encoder = T5EncoderModel(T5Config(**text_encoder))
    return {
        "README.md": b"---\ntags:\n- ltx-video\n- image-to-video\n---\n# LTX-Video 0.9.5 (stand-in)\n",
        "model_index.json": as_json(model_index),
        "scheduler/scheduler_config.json": as_json(scheduler),
        **tokenizer,
        "text_encoder/config.json": as_json(text_encoder),
        **{
            f"text_encoder/{name}": data
            for name, data in sharded(encoder.state_dict(), "model", "model.safetensors.index.json", 4).items()
        },
        "transformer/config.json": as_json(transformer),
        **{
            f"transformer/{name}": data
            for name, data in sharded(
                LTXVideoTransformer3DModel.from_config(transformer).state_dict(),
                "diffusion_pytorch_model",
                "diffusion_pytorch_model.safetensors.index.json",
                2,
            ).items()
        },
        "vae/config.json": as_json(vae),
        "vae/diffusion_pytorch_model.safetensors": safetensors_bytes(
            {k: v.contiguous() for k, v in AutoencoderKLLTXVideo.from_config(vae).state_dict().items()}
        ),
    }


# --- the scorer of musicvid score ------------------------------------------------------------------


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


def write_hub(home: Path) -> Path:
    """Every stand-in into `home`/hub (HF_HOME=`home`); returns the hub folder."""
    hub = home / "hub"
    write_repo(hub, DEFAULT_VIPE, vipe_checkpoint_files())
    write_repo(hub, DEFAULT_VIPE_TOKENIZER, gpt2_medium_files(tokenizer_files()))
    write_repo(hub, SD15, sd15_files())
    write_repo(hub, HTDEMUCS, htdemucs_files())
    write_repo(hub, REAL_ESRGAN.rpartition("/")[0], realesrgan_files())
    write_repo(hub, LCM_LORA, lcm_lora_files())
    write_repo(hub, TAESD, taesd_files())
    write_repo(hub, SDXL, sdxl_files())
    write_repo(hub, LCM_LORA_XL, lcm_lora_xl_files())
    write_repo(hub, TAESD_XL, taesd_files(b"# TAESDXL (stand-in)\n"))
    write_repo(hub, IP_ADAPTER_REPO, ip_adapter_files())
    write_repo(hub, "/".join(KOHYA_LORA.split("/")[:2]), kohya_lora_files())
    write_repo(hub, LTX_VIDEO, ltx_video_files())
    write_repo(hub, SCORER, clip_scorer_files())
    return hub


if __name__ == "__main__":
    print(write_hub(Path(sys.argv[1]).resolve()))
