"""Which models a run loads, from a preset and the per-model options (each checked before anything loads
against what it names, musicvid.models.names: a URL, a folder that is not there, a checkpoint of another
family, a ViPE tokenizer that does not fit its model, an --asr-model that is no Whisper of its backend's; nothing here
imports torch, so the command line refuses a bad one at once, but for a ViPE folder or tokenizer, whose checks build
their model on the meta device). The presets themselves are data
(musicvid.settings.presets); the registry that loads them is musicvid.models.registry.registry_of."""

from __future__ import annotations

from dataclasses import fields, replace

from musicvid.core.errors import UserError
from musicvid.models.asr_files import check_asr_model
from musicvid.models.families import check_video_model, diffusion_family, video_family
from musicvid.models.names import check_model, check_vipe_tokenizer
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.presets import ASR_BACKENDS, FAMILIES, PRESETS, TINY, VIDEO_FAMILIES, WHISPER_LARGE, ModelSet


def models_of(choice: ModelChoice) -> ModelSet:
    """The models the options of `choice` name."""
    return choose_models(
        choice.models,
        asr_backend=choice.asr,
        asr=choice.asr_model,
        vipe=choice.vipe,
        vipe_tokenizer=choice.vipe_tokenizer,
        diffusion=choice.diffusion,
        separator=choice.separator,
        upscaler=choice.upscaler,
        fast_lora=choice.fast_lora,
        fast_decoder=choice.fast_decoder,
        ip_adapter=choice.ip_adapter,
        video=choice.video_model,
        scorer=choice.scorer,
    )


def choose_models(
    preset: str = "default",
    *,
    asr_backend: str | None = None,
    asr: str | None = None,
    vipe: str | None = None,
    vipe_tokenizer: str | None = None,
    diffusion: str | None = None,
    separator: str | None = None,
    upscaler: str | None = None,
    fast_lora: str | None = None,
    fast_decoder: str | None = None,
    ip_adapter: str | None = None,
    video: str | None = None,
    scorer: str | None = None,
) -> ModelSet:
    if not isinstance(preset, str) or preset not in PRESETS:  # (a page's API client may send a list)
        raise UserError(f"--models must be one of {', '.join(PRESETS)}, not {preset!r}")
    models = PRESETS[preset]
    if diffusion:
        models = _for_family(models, diffusion)
    if video:
        check_video_model(video)
        models = _for_video_family(models, video)
    if vipe_tokenizer and (vipe or models.vipe) == TINY:
        raise UserError("the tiny ViPE brings its own tokenizer: --vipe-tokenizer needs --vipe NAME_OR_DIR")
    if vipe or vipe_tokenizer:
        check_vipe_tokenizer(vipe or models.vipe, vipe_tokenizer, check_model("vipe", vipe or models.vipe))
    if scorer:
        check_model("scorer", scorer)
    if asr_backend and asr_backend not in ASR_BACKENDS:
        raise UserError(f"--asr must be one of {', '.join(ASR_BACKENDS)}, not {asr_backend!r}")
    if asr_backend == "faster-whisper" and not asr and models.asr == TINY:
        raise UserError("there is no tiny faster-whisper model: pass a CTranslate2 model directory with --asr-model")
    if asr_backend == "faster-whisper" and not asr:
        asr = WHISPER_LARGE
    elif asr:
        check_asr_model(asr_backend or models.asr_backend, asr)
    return replace(
        models,
        asr_backend=asr_backend or models.asr_backend,
        asr=asr or models.asr,
        vipe=vipe or models.vipe,
        # A checkpoint given with --vipe uses its own tokenizer if it ships one (vipe train's do).
        vipe_tokenizer=vipe_tokenizer or (models.vipe_tokenizer if not vipe or vipe == TINY else None),
        diffusion=models.diffusion,
        separator=separator or models.separator,
        upscaler=upscaler or models.upscaler,
        fast_lora=fast_lora or models.fast_lora,
        fast_decoder=fast_decoder or models.fast_decoder,
        ip_adapter=ip_adapter or models.ip_adapter,
        scorer=scorer or models.scorer,
    )


def _for_family(models: ModelSet, diffusion: str) -> ModelSet:
    """`models` drawing with `diffusion`: where the preset has its family's size and models (FAMILIES),
    those of `diffusion`'s family instead (an SDXL model draws 1024² with SDXL's LCM-LoRA, TAESD and
    IP-Adapter); a preset's own choices (the tiny ones) stay."""
    old, new = FAMILIES[diffusion_family(models.diffusion)], FAMILIES[diffusion_family(diffusion)]
    follow = {
        name: getattr(new, name)
        for name in [f.name for f in fields(old)]
        if getattr(models, name) == getattr(old, name)
    }
    return replace(models, diffusion=diffusion, **follow)


def _for_video_family(models: ModelSet, video: str) -> ModelSet:
    """`models` drawing transitions with `video`: where the preset has its video family's steps, those of `video`'s
    family instead (Wan's card draws in 50); a preset's own (the tiny ones') stay."""
    old, new = VIDEO_FAMILIES[video_family(models.video)], VIDEO_FAMILIES[video_family(video)]
    steps = new.steps if models.transition_steps == old.steps else models.transition_steps
    return replace(models, video=video, transition_steps=steps)
