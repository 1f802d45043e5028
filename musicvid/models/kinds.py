"""A kind of model as a person names it: the option that names a local copy, where downloads are cached, the names
the models built here answer to (random weights of the real classes: musicvid.models.tiny, tiny_flow, tiny_video),
and the one sentence naming the ways out that a load ending in failure becomes (ModelUnavailable)."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from musicvid.core.errors import UserError, out_of_memory
from musicvid.models import tiny, tiny_flow, tiny_video
from musicvid.settings.presets import TINY


class ModelUnavailable(UserError):
    pass


@dataclass(frozen=True)
class Kind:
    """A kind of model: the option that names a local copy, where downloads are cached, and the names
    of the models built here instead of loaded (random weights of the real classes, no download)."""

    flag: str
    cache: str = "HF_HOME"
    built_here: Mapping[str, Callable[[], Any]] = field(default_factory=dict)


MODEL_KINDS = {
    "asr": Kind(
        "--asr-model",
        "the cache in ~/.cache/whisper (openai-whisper) or HF_HOME (faster-whisper)",
        {TINY: tiny.tiny_whisper},
    ),
    "vipe": Kind("--vipe", built_here={TINY: tiny.tiny_vipe}),
    "diffusion": Kind(
        "--diffusion",
        built_here={name: partial(tiny.local_diffusion, name) for name in tiny.LOCAL_DIFFUSION}
        | tiny_flow.FLOW_DIFFUSION,
    ),
    "few-step LoRA": Kind("--fast-lora"),  # the tiny one is made for the UNet it adapts: see _fuse_lora
    "style LoRA": Kind("--lora"),
    "reference adapter": Kind("--ip-adapter"),  # the tiny one is made for the UNet it adapts too
    "tiny decoder": Kind("--fast-decoder", built_here={TINY: tiny.tiny_taesd}),
    "separator": Kind("--separator", built_here={TINY: tiny.tiny_demucs}),
    "upscaler": Kind("--upscaler", built_here={TINY: tiny.tiny_upscaler}),
    "video": Kind("--video-model", built_here={TINY: tiny_video.tiny_ltx_video} | tiny_video.VIDEO_MODELS),
}


FIRST_LINE = 160  # the most characters of a library's error a sentence quotes


def first_line(error: BaseException) -> str:
    """An error's first line, short enough for a one-sentence message; a line that ends in a colon only announces
    the next ("Validation error for field 'n_layer':"), so the next is kept with it."""
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()] or [type(error).__name__]
    said = lines[0]
    for line in lines[1:]:
        if not said.endswith(":"):
            break
        said = f"{said} {line}"
    return said if len(said) <= FIRST_LINE else said[: FIRST_LINE + 1].rsplit(" ", 1)[0] + " …"  # (not mid-word)


def _unavailable(kind: str, name: str, error: BaseException) -> ModelUnavailable:
    """A model that could not be loaded: a download or cache problem names the ways out; a folder here, what is
    wrong with it."""
    ways_out = MODEL_KINDS[kind]
    if Path(name).expanduser().exists():
        return ModelUnavailable(f"could not load the {kind} model from {name}: {first_line(error)}")
    return ModelUnavailable(
        f"could not load the {kind} model '{name}' ({first_line(error)}); it downloads on first use, so either let "
        f"this machine reach the model hub once, run with --models tiny, pass a local copy with {ways_out.flag} "
        f"PATH, or point {ways_out.cache} at a cache that holds it"
    )


@contextmanager
def as_unavailable(kind: str, name: str) -> Iterator[None]:
    """Every way a load fails (network, cache, format) ends the same way; a UserError says its own sentence, and so
    does a load that ran out of memory (out_of_memory)."""
    try:
        yield
    except UserError:
        raise
    except Exception as error:
        raise out_of_memory(error) or _unavailable(kind, name, error) from None


def obtain(kind: str, name: str, load: Callable[[], Any]) -> Any:
    """Model `name` of `kind`: built here where MODEL_KINDS says so, else what `load()` loads."""
    build = MODEL_KINDS[kind].built_here.get(name)
    if build is not None:
        return build()
    with as_unavailable(kind, name):
        return load()
