"""Which family a model named is of, read before anything loads (nothing here imports torch, so the command line
refuses a model of no family at once): known for the models named here, else the pipeline class its model index names
(musicvid.models.names checks it; a hub repository's not in the cache is fetched alone, a few hundred bytes)."""

from __future__ import annotations

from musicvid.core.errors import UserError
from musicvid.models.names import ROLES, check_family, check_model
from musicvid.settings.presets import (
    KNOWN_FAMILIES,
    KNOWN_VIDEO_FAMILIES,
    PIPELINE_FAMILIES,
    VIDEO_FAMILIES,
    VIDEO_FAMILY_NAMES,
    VIDEO_PIPELINES,
)


def diffusion_family(name: str) -> str:
    """Which family of FAMILIES the diffusion model `name` is of: known for the models named here, else the
    pipeline class its model_index.json names (musicvid.models.names; a hub repository's not in the cache is
    fetched alone, a few hundred bytes)."""
    if name in KNOWN_FAMILIES:
        return KNOWN_FAMILIES[name]
    return PIPELINE_FAMILIES[model_index("diffusion", name)["_class_name"]]


def model_index(role: str, name: str) -> dict:
    """The model index of the pipeline `name` for `role`, checked to be of its family (musicvid.models.names):
    read from its folder or the cache, else fetched alone."""
    config = check_model(role, name)
    if config is None:
        from musicvid.models.kinds import as_unavailable  # (torch: only for a model index fetched from the hub)
        from musicvid.models.weights_files import silenced

        with as_unavailable(role, name), silenced(bars=False):
            from diffusers import DiffusionPipeline

            config = check_family(role, dict(DiffusionPipeline.load_config(name)), f"{ROLES[role].flag} {name}")
    return config


def video_family(name: str) -> str:
    """Which family of VIDEO_FAMILIES the video model `name` is of: known for the models named here, else the
    pipeline class its model_index.json names (a hub repository's not in the cache is fetched alone)."""
    if name in KNOWN_VIDEO_FAMILIES:
        return KNOWN_VIDEO_FAMILIES[name]
    return VIDEO_PIPELINES[model_index("video", name)["_class_name"]]


def video_pipeline(name: str) -> type:
    """The diffusers pipeline class the video model `name` is loaded as (its family's, that takes a picture for the
    first and the last frame)."""
    import diffusers

    return getattr(diffusers, VIDEO_FAMILIES[video_family(name)].pipeline)


def check_video_model(name: str) -> None:
    """Refuse, in one sentence and before any work, a --video-model that is of no family of VIDEO_FAMILIES (its
    model_index.json alone is read), or one whose pipeline needs what is not installed: Wan's cleans every prompt
    with ftfy, which diffusers does not install."""
    import importlib.util

    family = video_family(name)
    if family == "wan" and importlib.util.find_spec("ftfy") is None:
        raise UserError(
            f"--video-model {name}: {VIDEO_FAMILY_NAMES[family]} cleans its prompts with ftfy, which is not "
            "installed (pip install ftfy)"
        )
