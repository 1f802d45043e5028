"""The video model that ``--transitions video`` loads, as its repository holds it:

- ``Lightricks/LTX-Video-0.9.5``: model_index.json naming ``LTXPipeline`` (LTXConditionPipeline loads the
  same components); scheduler/ (FlowMatchEulerDiscreteScheduler without dynamic shifting); text_encoder/
  (T5EncoderModel, T5-v1.1-XXL, in four float32 safetensors shards with model.safetensors.index.json);
  tokenizer/ (a slow T5Tokenizer: spiece.model, tokenizer_config.json with ``model_max_length: 128`` and 100
  extra ids, special_tokens_map.json, added_tokens.json; no tokenizer.json, so loading it needs
  sentencepiece); transformer/ (LTXVideoTransformer3DModel, 28 layers of 32 × 64, in two shards with
  diffusion_pytorch_model.safetensors.index.json); vae/ (AutoencoderKLLTXVideo with 0.9.5's down blocks and
  timestep-conditioned decoder, one diffusion_pytorch_model.safetensors). No fp16 variants, no .bin."""

from __future__ import annotations

import io
import json

import torch
from safetensors.torch import save as safetensors_bytes

from musicvid.models.tiny_video import TINY_LTX, TINY_T5_WORDS
from tests.standins.hub import as_json, sharded

LTX_VERSION = {"_diffusers_version": "0.33.0.dev0"}


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


def ltx_pipeline_configs() -> dict[str, dict]:
    """model_index.json and the scheduler's config."""
    model_index = {
        "_class_name": "LTXPipeline",
        **LTX_VERSION,
        "scheduler": ["diffusers", "FlowMatchEulerDiscreteScheduler"],
        "text_encoder": ["transformers", "T5EncoderModel"],
        "tokenizer": ["transformers", "T5Tokenizer"],
        "transformer": ["diffusers", "LTXVideoTransformer3DModel"],
        "vae": ["diffusers", "AutoencoderKLLTXVideo"],
    }
    scheduler = {
        "_class_name": "FlowMatchEulerDiscreteScheduler",
        **LTX_VERSION,
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
    return {"model_index.json": model_index, "scheduler/scheduler_config.json": scheduler}


def ltx_model_configs() -> dict[str, dict]:
    """The transformer's and the VAE's config.json, by folder, at TINY_LTX's sizes."""
    transformer = {
        "_class_name": "LTXVideoTransformer3DModel",
        **LTX_VERSION,
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
        **LTX_VERSION,
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
    return {"transformer": transformer, "vae": vae}


def t5_encoder_config(vocab_size: int) -> dict:
    """T5-v1.1-XXL's encoder config.json as LTX-Video's text_encoder/ holds it, at TINY_LTX's sizes."""
    return {
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
        "vocab_size": vocab_size,
        **TINY_LTX["text"],
    }


def ltx_video_files() -> dict[str, bytes]:
    """LTX-Video 0.9.5 in diffusers' layout (module docstring), at TINY_LTX's sizes."""
    from diffusers import AutoencoderKLLTXVideo, LTXVideoTransformer3DModel
    from transformers import T5Config, T5EncoderModel

    configs = ltx_model_configs()
    tokenizer = t5_tokenizer_files("tokenizer")
    text_encoder = t5_encoder_config(max(json.loads(tokenizer["tokenizer/added_tokens.json"]).values()) + 1)
    torch.manual_seed(13)
    encoder = T5EncoderModel(T5Config(**text_encoder))
    return {
        "README.md": b"---\ntags:\n- ltx-video\n- image-to-video\n---\n# LTX-Video 0.9.5 (stand-in)\n",
        **{name: as_json(config) for name, config in ltx_pipeline_configs().items()},
        **tokenizer,
        "text_encoder/config.json": as_json(text_encoder),
        **{
            f"text_encoder/{name}": data
            for name, data in sharded(encoder.state_dict(), "model", "model.safetensors.index.json", 4).items()
        },
        "transformer/config.json": as_json(configs["transformer"]),
        **{
            f"transformer/{name}": data
            for name, data in sharded(
                LTXVideoTransformer3DModel.from_config(configs["transformer"]).state_dict(),
                "diffusion_pytorch_model",
                "diffusion_pytorch_model.safetensors.index.json",
                2,
            ).items()
        },
        "vae/config.json": as_json(configs["vae"]),
        "vae/diffusion_pytorch_model.safetensors": safetensors_bytes(
            {k: v.contiguous() for k, v in AutoencoderKLLTXVideo.from_config(configs["vae"]).state_dict().items()}
        ),
    }
