"""The memory plan: before any work, what each stage of a render holds on the GPU, and how it is made to fit.

For each stage (transcribe, elaborate, pictures: the keyframes and the morphs, transitions, upscale) the plan
counts the weights of its models as published (musicvid.models.sizes, in the run's precision) and what their
passes hold beside them (musicvid.memory.activations, counted on the meta device and grown by ACTIVATION_MARGIN),
and takes the first way of running the stage that fits the budget, in order of what it costs:
1. as asked: every model resident, the pictures (keyframes and morphs) in --batch-size batches, decoded together;
2. the VAE decoding one picture at a time (diffusers' slicing: decoding is per picture, so it costs no speed);
3. fewer pictures denoised together, down to one;
4. the VAE decoding in tiles (a picture larger than its tile: SDXL at 2048², LTX-Video's clips);
5. each model on the GPU only while it runs (accelerate's model offload, what --low-vram asks);
6. each layer on the GPU only while it runs (sequential offload: slow);
and else refuses, in one sentence, before any work. What a person set is a floor: --batch-size is the most
pictures denoised together, --vae-slicing and --attention-slicing stay, --low-vram offloads. Diffusers' attention
slicing is never chosen: under torch's scaled_dot_product_attention (fused kernels, no attention matrix) it holds
more, not less (its slices are matrices). The upscaler (--resolution) is held from the start and runs beside the
drawing: the drawing is planned first, leaving the upscaler its least (one frame at a smaller input), then the
upscaler takes the largest batch, ×4 or from a smaller input, that what the drawing left holds.

A stage's passes and the way it fits are musicvid.memory.ladder's; the pictures stage, Stable Diffusion's or a
flow-matching family's, is musicvid.memory.pictures's; the transitions stage, musicvid.memory.transitions's.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from typing import Collection, Iterator

import torch

from musicvid.memory import activations as act
from musicvid.memory.ladder import MemoryPlan, Option, Pass, fit
from musicvid.memory.pictures import pictures_options
from musicvid.memory.transitions import transitions_options
from musicvid.models.footprint import RESERVE_GB, asr_dtype, upscaler_name
from musicvid.models.precision import Precision
from musicvid.models.registry import ModelRegistry
from musicvid.models.sizes import Unsized, upscaler_scale, weights
from musicvid.settings.front_doors import parse_size
from musicvid.settings.presets import UPSCALE_BATCH, ModelSet
from musicvid.settings.render import RenderSettings
from musicvid.settings.song import SongRequest

log = logging.getLogger("musicvid")

# --- the stages ----------------------------------------------------------------------------------------------


def transcribe_options(models: ModelSet, precision: Precision, separate_vocals: bool) -> Iterator[Option]:
    """The separator (--separate-vocals), then Whisper: loaded in turn, each alone."""
    passes = []
    if separate_vocals:
        separator = weights("separator", models.separator, lambda part: precision.separator)
        passes.append(Pass(separator, act.DEMUCS_SEGMENT_GB))
    dtype = asr_dtype(models, precision)
    asr = tuple(
        replace(w, name=f"{models.asr_backend}:{w.name}") for w in weights("asr", models.asr, lambda part: dtype)
    )
    # faster-whisper: a decode that may sample loads it afresh (lyrics.transcribe.decoder_of)
    if models.asr_backend == "faster-whisper":
        asr += tuple(replace(w, name=f"{w.name} (afresh)") for w in asr)
    passes.append(Pass(asr, act.whisper_gb(models.asr, dtype if dtype.is_floating_point else torch.float16)))
    yield Option((), (), tuple(passes), one_at_a_time=True)


def elaborate_options(models: ModelSet, precision: Precision) -> Iterator[Option]:
    vipe = weights("vipe", models.vipe, lambda part: precision.compute)
    yield Option((("sequences", act.VIPE_SEQUENCES),), (), (Pass(vipe, act.vipe_gb(models.vipe, precision.compute)),))


def smaller_input(settings: RenderSettings, scale: int) -> tuple[int, int] | None:
    """The input whose ×`scale` just covers the video's size, where it is smaller than the drawn size."""
    (width, height), (video_width, video_height) = settings.size, settings.video_size
    shrink = max(video_width / (width * scale), video_height / (height * scale))
    return (math.ceil(width * shrink), math.ceil(height * shrink)) if shrink < 1 else None


def upscale_options(models: ModelSet, settings: RenderSettings, precision: Precision) -> Iterator[Option]:
    """The upscaler's batches of ×4 (its scale) from the drawn frames, then from a smaller input."""
    name = upscaler_name(models, settings.fast)
    network = weights("upscaler", name, lambda part: precision.upscaler(True, True))
    scale = upscaler_scale(name)
    inputs = [(tuple(settings.size), f"x{scale}")]
    if smaller := smaller_input(settings, scale):
        inputs.append((smaller, f"{smaller[0]}x{smaller[1]}"))
    for size, named in inputs:
        for frames in range(UPSCALE_BATCH, 0, -1):
            gb = act.linear(
                lambda n, at=size: act.upscale_gb(name, network[0].dtype, at, settings.video_size, n), frames
            )
            yield Option((("frames", frames), ("input", named)), (), (Pass(network, gb),))


# --- the plan ------------------------------------------------------------------------------------------------


def plan_memory(
    models: ModelSet,
    settings: RenderSettings,
    precision: Precision,
    budget_gb: float,
    budget: str,
    *,
    separate_vocals: bool = False,
    transcribe: bool = True,
    elaborate: bool = True,
    scored: bool = True,
    keyframes_only: bool = False,
    references: bool = False,
) -> MemoryPlan:
    """The plan of a render of `settings` with `models` in `precision`, within `budget_gb` of GPU memory (`budget`:
    where it comes from, in words); `transcribe`, `elaborate`: whether the run has those stages (a timed lyrics
    file, a storyboard skip them), `scored`: whether it loads the scorer (musicvid.models.scorer.check_scorer),
    `keyframes_only`: whether it draws the keyframes and nothing between them (musicvid.pipeline.make_keyframes),
    `references`: whether a scene of its storyboard names its own reference picture. Refuses, in one sentence, a
    stage that cannot fit."""
    usable, words = budget_gb - RESERVE_GB, f"{budget_gb:g} GB ({budget})"
    upscaling = settings.resolution is not None and upscaler_name(models, settings.fast) is not None
    # the upscaler is held from the start, and runs beside the drawing: at first at its least
    least = list(upscale_options(models, settings, precision))[-1] if upscaling else None
    held = Pass(least.passes[0].models) if least else Pass(())
    beside = least.passes[0] if least else Pass(())
    stages = []
    if transcribe:
        stages.append(fit("transcribe", transcribe_options(models, precision, separate_vocals), usable, held, words))
    if elaborate:
        stages.append(fit("elaborate", elaborate_options(models, precision), usable, held, words))
    drawn = pictures_options(models, settings, precision, scored, keyframes_only, references)
    drawing_stages = [fit("pictures", drawn, usable, beside, words)]
    if settings.transitions == "video" and not (settings.preview or keyframes_only):
        drawing_stages.append(
            fit("transitions", transitions_options(models, settings, precision), usable, beside, words)
        )
    if least:
        left = usable - max(s.peak_gb for s in drawing_stages) + least.peak_gb()
        upscale = fit("upscale", upscale_options(models, settings, precision), left, Pass(()), words)
        grown = upscale.peak_gb - least.peak_gb()
        drawing_stages = [s.grown(grown) for s in drawing_stages] + [upscale]
    return MemoryPlan(budget_gb, budget, tuple(stages + drawing_stages))


def batched_as_planned(settings: RenderSettings, plan: MemoryPlan | None) -> RenderSettings:
    """`settings` with the plan's batch of pictures (a render draws its keyframes and morphs in groups of that size);
    without one, the batch given, else the default (RenderSettings.batch)."""
    pictures = plan.stage("pictures") if plan else None
    batch = pictures and pictures.batch("keyframes")
    return replace(settings, batch_size=batch or settings.batch)


def planned_upscaling(plan: MemoryPlan | None) -> dict:
    """The plan's batch and input for musicvid.delivery.upscale.Upscaler; nothing without an upscale stage."""
    stage = plan.stage("upscale") if plan else None
    if stage is None:
        return {}
    named = stage.batch("input")
    return {"batch": stage.batch("frames"), "input_size": None if named.startswith("x") else parse_size(named)}


def stage_offloads(plan: MemoryPlan | None, settings: RenderSettings) -> dict[str, Collection[str]]:
    """Each drawing stage's memory switches (musicvid.pictures.switches): the plan's, else (no plan, or no such
    stage in it) those the settings ask for."""
    planned = {stage: plan.offloads(stage) if plan else None for stage in ("pictures", "transitions")}
    return {stage: settings.offloads_asked(stage) if s is None else s for stage, s in planned.items()}


def stages_before_pictures(request: SongRequest, timed_lyrics: bool, unwritten: bool = False) -> dict[str, bool]:
    """Which of the stages before the pictures a request runs, as plan_memory takes them: a storyboard given skips
    transcribing, and elaborating unless a prompt of it is empty (`unwritten`: Storyboard.unwritten, as its check
    read it), `timed_lyrics` (timed lyrics Whisper does not listen to: musicvid.prepare.timed_alone) Whisper; the vocals
    separated first where asked, for Whisper alone."""
    transcribe = not request.storyboard_file and not timed_lyrics
    return {
        "separate_vocals": request.separate_vocals and transcribe,
        "transcribe": transcribe,
        "elaborate": not request.storyboard_file or unwritten,
    }


def plan_on_device(
    registry: ModelRegistry,
    request: SongRequest,
    settings: RenderSettings,
    scored: bool,
    timed_lyrics: bool,
    keyframes_only: bool = False,
    references: bool = False,
    unwritten: bool = False,
) -> MemoryPlan | None:
    """The plan a render follows on `registry`'s device, within what the registry may take there (the run keeps it:
    musicvid.run.Run.memory; `scored`: whether it loads the scorer, musicvid.models.scorer.check_scorer; `references`:
    whether a scene of its storyboard names its own reference picture, musicvid.prepare.Checked; `unwritten`: whether
    a prompt of the storyboard given is empty, stages_before_pictures); None on the
    CPU or MPS (where memory is the machine's and nothing is planned) and where a model cannot be sized (the render
    then runs as its settings say)."""
    budget = registry.budget() if registry.device.type == "cuda" else None
    if budget is None:
        return None
    where = f"free on {torch.cuda.get_device_name(registry.device)}"
    stages = dict(
        stages_before_pictures(request, timed_lyrics, unwritten),
        scored=scored,
        keyframes_only=keyframes_only,
        references=references,
    )
    try:
        return plan_memory(registry.models, settings, registry.precision, budget, where, **stages)
    except Unsized as unsized:
        log.info("no memory plan, rendering as the settings say: %s", unsized)
        return None
