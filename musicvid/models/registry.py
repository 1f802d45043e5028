"""The registry the stages ask for models: each loaded when a stage asks, released after it (or kept, for
a batch and the page), in the run's precision, and recorded in the stage's timings as it was used."""

from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager, nullcontext
from typing import Any, Callable, Iterator, Mapping, Protocol

import torch

from musicvid.core.files import weights_identity
from musicvid.models.choose import models_of
from musicvid.models.drawing import DRAWINGS_KEPT, Drawing, load_drawing
from musicvid.models.footprint import RESERVE_GB, UPSCALER_ROLES, role_weights_gb, upscaler_name
from musicvid.models.loading import load_asr, load_separator, load_upscaler, load_video_model, load_vipe, resolve_device
from musicvid.models.precision import Precision
from musicvid.models.readback import GB
from musicvid.models.scorer import load_scorer
from musicvid.models.timing import Timings
from musicvid.settings.model_choice import ModelChoice, check_device_here
from musicvid.settings.presets import LANCZOS, ModelSet

# What each role a stage asks the registry for loads, from the run's model set (a Drawing: load_drawing).
Loader = Callable[[ModelSet, torch.device, Precision], Any]
LOADERS: dict[str, Loader] = {
    "asr": lambda models, device, precision: load_asr(models.asr_backend, models.asr, device, precision),
    "vipe": lambda models, device, precision: load_vipe(models.vipe, models.vipe_tokenizer, device, precision),
    "separator": lambda models, device, precision: load_separator(models.separator, device, precision),
    "upscaler": lambda models, device, precision: load_upscaler(
        models.upscaler, device, models.auto_upscaler, precision
    ),
    "fast_upscaler": lambda models, device, precision: load_upscaler(
        models.upscaler, device, models.fast_upscaler, precision
    ),
    "video": lambda models, device, precision: load_video_model(models.video, device, precision),
    "scorer": lambda models, device, precision: load_scorer(models.scorer, device, precision),
}

# The model set's fields each role's loader reads: a model kept loaded is loaded again where one of them changed on
# disk since (saved over between two songs: pictures are keyed by what the files hold now, not by what was loaded)
ROLE_FIELDS = {
    "asr": ("asr",),
    "vipe": ("vipe", "vipe_tokenizer"),
    "separator": ("separator",),
    "upscaler": ("upscaler",),
    "fast_upscaler": ("upscaler",),
    "video": ("video",),
    "scorer": ("scorer",),
}


# The stage of the memory plan (musicvid.memory) each role is used in; a Drawing's is "pictures"
ROLE_STAGES = {
    "asr": "transcribe",
    "separator": "transcribe",
    "vipe": "elaborate",
    "video": "transitions",
    "upscaler": "upscale",
    "fast_upscaler": "upscale",
}


class StageMemory(Protocol):
    """What the registry reads of a render's memory plan (musicvid.memory.ladder.MemoryPlan, made above this
    package from what it loads): the most a stage holds on the card, and whether its weights wait on the CPU."""

    def holds_gb(self, stage: str) -> float | None: ...

    def offloaded(self, stage: str) -> bool: ...


class ModelRegistry:
    """Loads each model when a stage asks for it, and counts loads.

    A single render frees each model after its stage (Whisper, ViPE and SD never sit in memory
    together); batch rendering and the web UI keep them loaded (`keep_loaded=True`) and reuse them.
    `loaders` replaces the loader of some roles (a benchmark's models of full size with random weights).
    Each model's name, dtype and device as its stage leaves it are recorded in the stage's Timings.
    Models kept loaded are released, least recently used first, where the next would not fit beside them in the
    budget (`budget_gb`, by default on CUDA the memory free when first asked; no limit elsewhere), the next
    needing what a render's memory plan (`memory` given to `use`, musicvid.memory) says its stage
    holds at most. A registry holds no render's state: the plan is the render's (musicvid.run.Run), not the registry's.
    """

    def __init__(
        self,
        models: ModelSet,
        device: str = "auto",
        keep_loaded: bool = False,
        precision: str = "auto",
        loaders: Mapping[str, Loader] | None = None,
        budget_gb: float | None = None,
    ):
        self.models = models
        self.budget_gb = budget_gb
        self._in_use: Counter[str | Drawing] = Counter()
        self.device = resolve_device(device)
        self.precision = Precision.resolve(precision, self.device)
        self.keep_loaded = keep_loaded
        self.loaders = {**LOADERS, **(loaders or {})}
        self.own = frozenset(loaders or {})  # roles its own loaders load: their names name no file to check
        self.loads: Counter[str | Drawing] = Counter()
        self._loaded: dict[str, Any] = {}
        self._identities: dict[str | Drawing, Any] = {}  # of each loaded model, as its files were when it loaded

    @contextmanager
    def use(
        self, role: str | Drawing, timings: Timings | None = None, memory: StageMemory | None = None
    ) -> Iterator[Any]:
        """The model of `role` (a Drawing: the pipeline that draws so), loaded if it is not (room made for it as the
        render's memory plan (`memory`) says its stage needs), or loaded again where its files changed since (not
        under a job that uses it)."""
        identity = self.identity(role)
        if role in self._loaded and not self._in_use[role] and self._identities.get(role) != identity:
            self.release(role)
        if role not in self._loaded:
            is_drawing = isinstance(role, Drawing)
            if is_drawing:  # the least recently used other pipelines go first
                for kept in [r for r in self._loaded if isinstance(r, Drawing)][: -DRAWINGS_KEPT or None]:
                    self.release(kept)
            self.make_room(role, memory)
            with timings.measure(f"load {self.named(role)[0]}") if timings else nullcontext():
                if is_drawing:  # (one the plan offloads is loaded on the CPU: never whole on the card)
                    offloaded = memory is not None and memory.offloaded("pictures")
                    loaded = load_drawing(self.models, role, self.device, self.precision, offloaded)
                else:
                    loaded = self.loaders[role](self.models, self.device, self.precision)
                self._loaded[role], self._identities[role] = loaded, identity
            self.loads[role] += 1
        self._loaded[role] = self._loaded.pop(role)  # the most recently used last
        if timings is not None:  # (a model held across stages, the upscaler, is reported as loaded)
            timings.record_model(*self.named(role), self._loaded[role])
        self._in_use[role] += 1
        try:
            yield self._loaded[role]
        finally:
            self._in_use[role] -= 1
            if timings is not None:
                timings.record_model(*self.named(role), self._loaded.get(role))
            if not self.keep_loaded:
                self.release(role)

    def identity(self, role: str | Drawing) -> Any:
        """What `role`'s model is, as the caches key it: a Drawing's key; else its files' weights_identity."""
        if isinstance(role, Drawing):
            return role.key(self.models, self.precision)
        names = [getattr(self.models, field, None) for field in ROLE_FIELDS.get(role, ())]
        return [weights_identity(name) if isinstance(name, str) else name for name in names]

    def budget(self) -> float | None:
        """The GPU memory (GB) the models may take: as given, else on CUDA what was free when first asked (before
        any model is loaded, by a render's memory plan); None elsewhere, where nothing is released for room."""
        if self.budget_gb is None and self.device.type == "cuda":
            self.budget_gb = torch.cuda.mem_get_info(self.device)[0] / GB
        return self.budget_gb

    def make_room(self, role: str | Drawing, memory: StageMemory | None = None) -> None:
        """Release the least recently used models not in use until `role` fits beside the others."""
        budget = self.budget()
        if budget is None:
            return
        need = self.need_gb(role, memory)
        for kept in [r for r in self._loaded if not self._in_use[r]]:
            if sum(role_weights_gb(self.models, r, self.precision) for r in self._loaded) + need <= budget - RESERVE_GB:
                return
            self.release(kept)

    def need_gb(self, role: str | Drawing, memory: StageMemory | None = None) -> float:
        """What `role` needs: the most its stage holds by the render's memory plan (`memory`), else its weights."""
        name = "pictures" if isinstance(role, Drawing) else ROLE_STAGES.get(role)
        planned = memory.holds_gb(name) if memory and name else None
        return planned if planned is not None else role_weights_gb(self.models, role, self.precision)

    def named(self, role: str | Drawing) -> tuple[str, str]:
        """The report's name of `role` (a Drawing's: diffusion) and of its model."""
        if isinstance(role, Drawing):
            return "diffusion", self.models.diffusion_model(role.fast)
        if role == "asr":
            return role, f"{self.models.asr_backend}:{self.models.asr}"
        if role in UPSCALER_ROLES.values():  # auto named by the network it took (none on the CPU: Lanczos)
            network = upscaler_name(self.models, role == UPSCALER_ROLES[True])
            return "upscaler", network if network and self._loaded.get(role) is not None else LANCZOS
        return role, getattr(self.models, role)  # each other role's model is the ModelSet's field of its name

    def release(self, role: str | Drawing) -> None:
        self._identities.pop(role, None)
        if self._loaded.pop(role, None) is not None:
            gc.collect()
            if self.device.type == "cuda":
                torch.cuda.empty_cache()


def registry_of(choice: ModelChoice, keep_loaded: bool = False) -> ModelRegistry:
    """The registry that loads `choice`'s models on its device (one this machine has) in its precision (a batch
    and the page keep them loaded)."""
    check_device_here(choice.device)
    return ModelRegistry(models_of(choice), choice.device, keep_loaded, choice.precision)
