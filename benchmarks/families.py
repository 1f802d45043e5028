"""The flow-matching families at their published sizes with random weights (the cost of a step does not
depend on the weights' values), each drawn through its own diffusers pipeline: keyframes by Z-Image-Turbo
and FLUX.2 klein 4B, clips between two keyframes by Wan 2.1 FLF2V 14B and LTX-2. The prompts reach each
pipeline already encoded, as random embeddings of its text encoder's shape; the encoders (Qwen3-4B, UMT5-XXL,
Gemma 3 12B) are timed on their own, one prompt each.

`shrink=True` builds the same classes a few layers and channels wide, so that the whole measurement runs on
a CPU in seconds (benchmarks/device.py --dry-run): it checks the code, not the figures.
"""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager, nullcontext
from types import SimpleNamespace
from typing import Callable

import torch
from PIL import Image

from benchmarks.peaks import SpanPeak
from benchmarks.what_ran import models_ran
from musicvid.models import published as P
from musicvid.models.tiny_flow import TINY_FLOW
from musicvid.models.tiny_video import TINY_VIDEO
from musicvid.settings.presets import TINY_KLEIN, TINY_LTX2, TINY_WAN, TINY_ZIMAGE
from musicvid.settings.presets import VIDEO_FAMILIES as CARDS

# Each family's recipe, as its card runs it: steps, guidance, the size it draws at, and its frames
PICTURE_FAMILIES = {
    "zimage": dict(steps=8, guidance=0.0, size=(1024, 1024)),
    "klein": dict(steps=4, guidance=1.0, size=(1024, 1024)),
}
# A 3 s morph as each video model draws it: Wan at 16 fps (4k + 1 frames), LTX-2 at 24 fps (8k + 1);
# classifier-free guidance alone (LTX-2's spatio-temporal and modality guidance off: one more pass each)
VIDEO_FAMILIES = {
    "wan-flf2v": dict(steps=CARDS["wan"].steps, guidance=CARDS["wan"].guidance, size=(832, 480), frames=49),
    "ltx2": dict(steps=CARDS["ltx2"].steps, guidance=CARDS["ltx2"].guidance, size=(768, 512), frames=73),
}
TIMED_STEPS = 3  # of a clip: the first warms up, the others are timed


# The same classes a few channels wide, for --dry-run: the tiny pipelines' (defined once, in musicvid.models.tiny_flow
# and tiny_video)
SMALL = {
    "zimage": TINY_FLOW[TINY_ZIMAGE]["transformer"],
    "zimage-vae": TINY_FLOW[TINY_ZIMAGE]["vae"],
    "klein": TINY_FLOW[TINY_KLEIN]["transformer"],
    "klein-vae": TINY_FLOW[TINY_KLEIN]["vae"],
    "wan": TINY_VIDEO[TINY_WAN]["transformer"],
    "wan-vae": TINY_VIDEO[TINY_WAN]["vae"],
    "clip-vision": TINY_VIDEO[TINY_WAN]["image_encoder"],
    "ltx2": TINY_VIDEO[TINY_LTX2]["transformer"],
    "ltx2-connectors": TINY_VIDEO[TINY_LTX2]["connectors"],
    "ltx2-vae": TINY_VIDEO[TINY_LTX2]["vae"],
    "ltx2-audio-vae": TINY_VIDEO[TINY_LTX2]["audio_vae"],
    "ltx2-vocoder": TINY_VIDEO[TINY_LTX2]["vocoder"],
}


@contextmanager
def built_on(device: torch.device, dtype: torch.dtype):
    """Modules built inside are made on `device` in `dtype` directly (a 19B model never exists in float32)."""
    before = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):
            yield
    finally:
        torch.set_default_dtype(before)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class StepClock:
    """The pipeline's callback: when each step ended (the device waited for)."""

    def __init__(self, device: torch.device):
        self.device, self.ends = device, []

    def __call__(self, pipe, step, timestep, kwargs):
        synchronize(self.device)
        self.ends.append(time.perf_counter())
        return kwargs


def timed(call: Callable, device: torch.device, **kwargs) -> dict:
    """One pipeline call: seconds in all, of each step, and after the last step (the decode)."""
    clock = StepClock(device)
    synchronize(device)
    started = time.perf_counter()
    call(callback_on_step_end=clock, **kwargs)
    synchronize(device)
    ended = time.perf_counter()
    steps = [b - a for a, b in zip([started, *clock.ends], clock.ends)]
    return {"seconds": ended - started, "steps": steps, "decode": ended - clock.ends[-1]}


def measured_peak(device: torch.device) -> SpanPeak | nullcontext:
    """The part's own peak GPU memory, the process's never reset (benchmarks.peaks); nothing off CUDA."""
    if device.type != "cuda":
        return nullcontext(SimpleNamespace(gb=None))
    torch.cuda.empty_cache()
    return SpanPeak()


def billions(*modules: torch.nn.Module) -> float:
    return round(sum(p.numel() for m in modules for p in m.parameters()) / 1e9, 3)


def picture_pipeline(family: str, device: torch.device, dtype: torch.dtype, shrink: bool):
    """Z-Image-Turbo's or FLUX.2 klein's pipeline of random weights, with no text encoder (prompts come encoded)."""
    from diffusers import (
        AutoencoderKL,
        AutoencoderKLFlux2,
        FlowMatchEulerDiscreteScheduler,
        Flux2KleinPipeline,
        Flux2Transformer2DModel,
        ZImagePipeline,
        ZImageTransformer2DModel,
    )

    torch.manual_seed(0)
    with built_on(device, dtype):
        if family == "zimage":
            transformer = ZImageTransformer2DModel(**(SMALL["zimage"] if shrink else P.ZIMAGE_TRANSFORMER))
            vae = AutoencoderKL(**(SMALL["zimage-vae"] if shrink else P.FLUX1_VAE))
            scheduler = FlowMatchEulerDiscreteScheduler(**P.ZIMAGE_SCHEDULER)
            return ZImagePipeline(scheduler, vae, None, None, transformer)
        transformer = Flux2Transformer2DModel(**(SMALL["klein"] if shrink else P.KLEIN_TRANSFORMER))
        vae = AutoencoderKLFlux2(**(SMALL["klein-vae"] if shrink else P.FLUX2_VAE))
        scheduler = FlowMatchEulerDiscreteScheduler(**P.KLEIN_SCHEDULER)
        return Flux2KleinPipeline(scheduler, vae, None, None, transformer, is_distilled=True)


def picture_prompts(pipe, family: str, batch: int, device: torch.device, dtype: torch.dtype) -> dict:
    """Random prompt embeddings of the shape the family's pipeline makes: Z-Image's unpadded (a list, one
    tensor a prompt, of a prompt's length through the chat template), klein's padded to 512."""
    if family == "zimage":
        width = pipe.transformer.config.cap_feat_dim
        return {"prompt_embeds": [torch.randn(48, width, device=device, dtype=dtype) for _ in range(batch)]}
    width = pipe.transformer.config.joint_attention_dim
    return {"prompt_embeds": torch.randn(batch, P.QWEN3_TEXT_TOKENS, width, device=device, dtype=dtype)}


def keyframes(family: str, device: torch.device, dtype: torch.dtype, shrink: bool, batches=(1, 4)) -> dict:
    """Seconds per keyframe at the card's steps, alone and `batches` at a time (--keyframe-candidates)."""
    recipe = PICTURE_FAMILIES[family]
    size = (64, 64) if shrink else recipe["size"]
    with measured_peak(device) as peak:
        row = keyframe_rows(family, device, dtype, shrink, batches, size)
    return {**row, "peak_gpu_gb": peak.gb}


def keyframe_rows(family: str, device: torch.device, dtype: torch.dtype, shrink: bool, batches, size) -> dict:
    recipe = PICTURE_FAMILIES[family]
    pipe = picture_pipeline(family, device, dtype, shrink)
    pipe.set_progress_bar_config(disable=True)
    row = {
        "parameters_billions": billions(pipe.transformer),
        "ran": models_ran(transformer=pipe.transformer, vae=pipe.vae),
    }
    row.update(recipe, size=list(size), dtype=str(dtype).removeprefix("torch."))
    for batch in batches:
        inputs = picture_prompts(pipe, family, batch, device, dtype)
        settings = dict(
            num_inference_steps=recipe["steps"],
            guidance_scale=recipe["guidance"],
            width=size[0],
            height=size[1],
            output_type="np",
            **inputs,
        )
        timed(pipe, device, **settings)  # warms up
        run = timed(pipe, device, **settings)
        row[f"batch_{batch}"] = {
            "seconds": round(run["seconds"], 3),
            "seconds_per_keyframe": round(run["seconds"] / batch, 3),
            "step_seconds": round(statistics.median(run["steps"]), 4),
            "decode_seconds": round(run["decode"], 3),
        }
    del pipe
    return row


def video_pipeline(family: str, device: torch.device, dtype: torch.dtype, shrink: bool):
    """Wan 2.1 FLF2V's or LTX-2's pipeline of random weights, with no text encoder."""
    from diffusers import (
        AutoencoderKLLTX2Audio,
        AutoencoderKLLTX2Video,
        AutoencoderKLWan,
        FlowMatchEulerDiscreteScheduler,
        LTX2ConditionPipeline,
        LTX2VideoTransformer3DModel,
        UniPCMultistepScheduler,
        WanImageToVideoPipeline,
        WanTransformer3DModel,
    )
    from diffusers.pipelines.ltx2 import LTX2TextConnectors, LTX2Vocoder
    from transformers import CLIPImageProcessor, CLIPVisionConfig, CLIPVisionModelWithProjection

    torch.manual_seed(0)
    with built_on(device, dtype):
        if family == "wan-flf2v":
            transformer = WanTransformer3DModel(**(SMALL["wan"] if shrink else P.WAN_FLF2V_14B))
            vae = AutoencoderKLWan(**(SMALL["wan-vae"] if shrink else P.WAN_VAE))
            vision = SMALL["clip-vision"] if shrink else P.CLIP_VIT_H_14_PROJECTED
            encoder = CLIPVisionModelWithProjection(CLIPVisionConfig(**vision))
            scheduler = UniPCMultistepScheduler(**P.WAN_FLF2V_SCHEDULER)
            return WanImageToVideoPipeline(None, None, vae, scheduler, CLIPImageProcessor(), encoder, transformer)
        small = {
            name: SMALL[f"ltx2-{name}"] if shrink else None for name in ("connectors", "vae", "audio-vae", "vocoder")
        }
        return LTX2ConditionPipeline(
            scheduler=FlowMatchEulerDiscreteScheduler(**P.LTX2_SCHEDULER),
            vae=AutoencoderKLLTX2Video(**(small["vae"] or P.LTX2_VAE)),
            audio_vae=AutoencoderKLLTX2Audio(**(small["audio-vae"] or P.LTX2_AUDIO_VAE)),
            text_encoder=None,
            tokenizer=None,
            connectors=LTX2TextConnectors(**(small["connectors"] or P.LTX2_CONNECTORS)),
            transformer=LTX2VideoTransformer3DModel(**(SMALL["ltx2"] if shrink else P.LTX2_TRANSFORMER)),
            vocoder=LTX2Vocoder(**(small["vocoder"] or P.LTX2_VOCODER)),
        )


def clip_inputs(pipe, family: str, ends: tuple, device: torch.device, dtype: torch.dtype) -> dict:
    """The two keyframes and random prompt embeddings of the shape the family's text encoder gives."""
    if family == "wan-flf2v":
        text = torch.randn(1, P.WAN_TEXT_TOKENS, pipe.transformer.config.text_dim, device=device, dtype=dtype)
        return {"image": ends[0], "last_image": ends[1], "prompt_embeds": text, "negative_prompt_embeds": text}
    from diffusers.pipelines.ltx2.pipeline_ltx2_condition import LTX2VideoCondition

    connectors = pipe.connectors.config
    width = connectors.caption_channels * connectors.text_proj_in_factor  # every Gemma layer side by side
    text = torch.randn(1, P.LTX2_TEXT_TOKENS, width, device=device, dtype=dtype)
    mask = torch.ones(1, P.LTX2_TEXT_TOKENS, device=device, dtype=torch.long)
    conditions = [
        LTX2VideoCondition(frames=ends[0], index=0, crf=0),
        LTX2VideoCondition(frames=ends[1], index=-1, crf=0),
    ]
    return dict(
        conditions=conditions,
        prompt_embeds=text,
        prompt_attention_mask=mask,
        negative_prompt_embeds=text,
        negative_prompt_attention_mask=mask,
        stg_scale=0.0,
        modality_scale=1.0,
        audio_stg_scale=0.0,
        audio_modality_scale=1.0,
        frame_rate=24.0,
    )


def clip(family: str, device: torch.device, dtype: torch.dtype, shrink: bool) -> dict:
    """One transition clip between two keyframes: each denoising step and the decode timed, at TIMED_STEPS
    steps; the clip at the card's steps is those figures extrapolated (steps x step + the rest)."""
    recipe = VIDEO_FAMILIES[family]
    width, height = (64, 64) if shrink else recipe["size"]
    frames = 9 if shrink else recipe["frames"]
    with measured_peak(device) as peak:
        row = clip_row(family, device, dtype, shrink, width, height, frames)
    return {**row, "peak_gpu_gb": peak.gb}


def clip_row(family: str, device: torch.device, dtype: torch.dtype, shrink: bool, width, height, frames) -> dict:
    recipe = VIDEO_FAMILIES[family]
    pipe = video_pipeline(family, device, dtype, shrink)
    pipe.set_progress_bar_config(disable=True)
    ends = tuple(Image.new("RGB", (width, height), colour) for colour in ((200, 40, 90), (30, 160, 220)))
    inputs = clip_inputs(pipe, family, ends, device, dtype)
    run = timed(
        pipe,
        device,
        num_inference_steps=TIMED_STEPS,
        guidance_scale=recipe["guidance"],
        width=width,
        height=height,
        num_frames=frames,
        output_type="np",
        **inputs,
    )
    step = statistics.median(run["steps"][1:])
    # the first step also pays for what comes before it (the keyframes' encodes, warming up)
    before = run["steps"][0] - step
    return {
        "parameters_billions": billions(pipe.transformer),
        "ran": models_ran(transformer=pipe.transformer, vae=pipe.vae),
        **recipe,
        "size": [width, height],
        "frames": frames,
        "dtype": str(dtype).removeprefix("torch."),
        "timed_steps": TIMED_STEPS,
        "first_step_seconds": round(run["steps"][0], 3),
        "step_seconds": round(step, 3),
        "decode_seconds": round(run["decode"], 3),
        "clip_seconds_at_card_steps": round(before + recipe["steps"] * step + run["decode"], 1),
    }


def text_encoders(device: torch.device, dtype: torch.dtype, shrink: bool) -> dict:
    """Seconds and memory of one prompt through each family's text encoder, at the length its pipeline pads to."""
    from transformers import Gemma3TextConfig, Gemma3TextModel, Qwen3Config, Qwen3Model, UMT5Config, UMT5EncoderModel

    small = dict(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
    )
    encoders = {
        "qwen3-4b": (Qwen3Model, Qwen3Config, P.QWEN3_4B, P.QWEN3_TEXT_TOKENS),
        "umt5-xxl": (UMT5EncoderModel, UMT5Config, P.UMT5_XXL, P.WAN_TEXT_TOKENS),
        "gemma3-12b": (Gemma3TextModel, Gemma3TextConfig, P.GEMMA3_12B_TEXT, P.LTX2_TEXT_TOKENS),
    }
    rows = {}
    for name, (model_class, config_class, config, tokens) in encoders.items():
        if shrink:
            config = (
                {**config, **small}
                if model_class is not UMT5EncoderModel
                else {**config, "d_model": 32, "d_ff": 64, "num_layers": 2, "num_heads": 4, "d_kv": 8}
            )
        with measured_peak(device) as peak:
            torch.manual_seed(0)
            with built_on(device, dtype):
                model = model_class(config_class(**config)).eval()
            ids = torch.randint(0, 1000, (1, tokens), device=device)
            with torch.inference_mode():
                model(input_ids=ids, output_hidden_states=True)  # warms up
                synchronize(device)
                started = time.perf_counter()
                model(input_ids=ids, output_hidden_states=True)
                synchronize(device)
        rows[name] = {
            "parameters_billions": billions(model),
            "tokens": tokens,
            "seconds": round(time.perf_counter() - started, 4),
            "peak_gpu_gb": peak.gb,
        }
        del model
    return rows
