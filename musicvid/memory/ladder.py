"""The memory plan's parts (musicvid.memory.plan): a stage's ways of running, each its models by the passes that
run together and what those hold beside their weights, and the first way that fits a budget.

What the card holds while a pass runs depends on where the weights wait between passes: resident, every model of
the stage is on the card through every pass; under model offload (accelerate's, what diffusers' pipelines and
--low-vram use) only the running pass's models are, the others waiting on the CPU; under sequential offload only
the running layer is. So a text encoder that encodes the prompts before the denoiser draws (the flow-matching
families' Qwen3, 8 GB) is on the card beside the denoiser where the stage is resident, and alone where it offloads.
A model `held` by a stage is on the card through every pass whatever the offload: the keyframes' scorer, loaded
beside the pipeline and hooked by none of its offloads; under model offload, a VAE that nothing sends back once it
has decoded (musicvid.memory.pictures).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Iterator

from musicvid.core.errors import UserError
from musicvid.models.footprint import RESERVE_GB
from musicvid.models.readback import GB, dtype_text
from musicvid.models.sizes import Weights

ACTIVATION_MARGIN = 1.2
MODES = (None, "model-offload", "sequential-offload")  # where the weights wait between passes


@dataclass(frozen=True)
class Pass:
    """Models that run together (a UNet and the adapter in it) and what their pass holds beside them (GB)."""

    models: tuple[Weights, ...]
    activations_gb: float = 0.0

    @property
    def parts(self) -> str:
        return "+".join(w.part for w in self.models)


@dataclass(frozen=True)
class Option:
    """One way of running a stage: its batches, its switches (vae-slicing, vae-tiling, attention-slicing,
    model-offload, sequential-offload), its passes and the models on the card through all of them (`held`)."""

    batches: tuple[tuple[str, int | str], ...]
    offloads: tuple[str, ...]
    passes: tuple[Pass, ...]
    one_at_a_time: bool = False  # a stage that loads its models in turn (the separator, then Whisper)
    held: tuple[Weights, ...] = ()

    @property
    def mode(self) -> str | None:
        return next((m for m in reversed(MODES) if m in self.offloads), None)

    @property
    def models(self) -> tuple[Weights, ...]:
        """Every model of the stage, each once: its passes' in their order, then those held."""
        return tuple(dict.fromkeys((*(w for p in self.passes for w in p.models), *self.held)))

    def during(self, running: Pass) -> float:
        """What the card holds while `running` runs: its activations, the held models, and every model of the
        stage (resident), `running`'s own (offloaded, or loaded in turn) or only their largest layer (sequentially)."""
        layer, on_card = 0.0, (*running.models, *self.held)
        if self.mode == "sequential-offload":
            layer, on_card = max(w.largest_layer * w.dtype.itemsize / GB for w in running.models), self.held
        elif self.mode is None and not self.one_at_a_time:
            on_card = self.models
        weights = layer + sum(w.weights_gb for w in dict.fromkeys(on_card))
        return weights + ACTIVATION_MARGIN * running.activations_gb

    def peak_gb(self) -> float:
        """The most the stage holds at once: what the card holds during its largest pass."""
        return max(self.during(p) for p in self.passes)


@dataclass(frozen=True)
class StagePlan:
    stage: str
    models: tuple[Weights, ...]  # resident during the stage (offloaded ones: while they run)
    batches: tuple[tuple[str, int | str], ...]
    offloads: tuple[str, ...]
    peak_gb: float
    # each pass in the order the stage runs them: its models' parts, its activations and what the card then holds
    passes: tuple[tuple[str, float, float], ...] = ()

    def batch(self, name: str) -> int | str | None:
        return dict(self.batches).get(name)

    def grown(self, gb: float) -> StagePlan:
        """The stage with `gb` more beside every pass (what runs beside it grew)."""
        passes = tuple((parts, activations, on_card + gb) for parts, activations, on_card in self.passes)
        return replace(self, peak_gb=self.peak_gb + gb, passes=passes)

    def as_dict(self) -> dict:
        models = [
            {"name": w.name, "part": w.part, "precision": dtype_text(w.dtype), "weights_gb": round(w.weights_gb, 3)}
            for w in self.models
        ]
        passes = [
            {"parts": parts, "activations_gb": round(activations, 3), "peak_gb": round(on_card, 2)}
            for parts, activations, on_card in self.passes
        ]
        return {
            "stage": self.stage,
            "models": models,
            "batches": dict(self.batches),
            "offloads": list(self.offloads),
            "passes": passes,
            "peak_gb": round(self.peak_gb, 2),
        }


@dataclass(frozen=True)
class MemoryPlan:
    budget_gb: float
    budget: str  # where the budget comes from, in words
    stages: tuple[StagePlan, ...]

    def stage(self, name: str) -> StagePlan | None:
        return next((s for s in self.stages if s.stage == name), None)

    def holds_gb(self, name: str) -> float | None:
        """The most stage `name` holds on the card; None where the plan has no such stage."""
        stage = self.stage(name)
        return stage.peak_gb if stage else None

    def offloads(self, name: str) -> tuple[str, ...] | None:
        """The switches of stage `name`; None where the plan has no such stage."""
        stage = self.stage(name)
        return stage.offloads if stage else None

    def offloaded(self, name: str) -> bool:
        """Whether stage `name` keeps its models' weights on the CPU between passes (model or sequential offload):
        they are then loaded there and never sit on the card all at once."""
        return bool(set(self.offloads(name) or ()) & set(MODES[1:]))

    def as_dict(self) -> dict:
        return {
            "budget_gb": self.budget_gb,
            "budget": self.budget,
            "reserve_gb": RESERVE_GB,
            "peak_gb": round(max((s.peak_gb for s in self.stages), default=0.0), 2),
            "stages": [s.as_dict() for s in self.stages],
        }

    def table(self) -> str:
        """The plan for people: a line per stage, under it each model with its precision and weights, and what
        the card holds during each pass."""
        lines = [f"for {self.budget_gb:g} GB ({self.budget}), {RESERVE_GB:g} GB of it kept for CUDA itself"]
        batches = [", ".join(f"{k} {v}" for k, v in s.batches) or "-" for s in self.stages]
        wide = max([36, *(len(b) + 2 for b in batches)])  # (a column never runs into the next)
        lines.append(f"  {'stage':<12}{'peak GB':>8}  {'batches':<{wide}}offloads")
        for s, batch in zip(self.stages, batches):
            lines.append(f"  {s.stage:<12}{s.peak_gb:>8.1f}  {batch:<{wide}}{', '.join(s.offloads) or '-'}")
            lines += [f"      {w.name} {w.part} ({dtype_text(w.dtype)}, {w.weights_gb:.2f} GB)" for w in s.models]
            if len(s.passes) > 1:
                lines.append(
                    "      GB on the card while each runs: " + ", ".join(f"{p} {gb:.1f}" for p, _, gb in s.passes)
                )
        return "\n".join(lines)


def modes_from(floor: frozenset[str]) -> list[str | None]:
    """The offload modes from the one a person asked for (none, or --low-vram's) to the most frugal."""
    asked = max((MODES.index(m) for m in MODES[1:] if m in floor), default=0)
    return list(MODES[asked:])


def switches(floor: frozenset[str], *more: str | None) -> tuple[str, ...]:
    return tuple(sorted(floor | {m for m in more if m}))


def fit(stage: str, options: Iterator[Option], usable_gb: float, beside: Pass, budget: str) -> StagePlan:
    """The first option whose peak, with what runs `beside` it, fits `usable_gb`; else a refusal."""
    extra = sum(w.weights_gb for w in beside.models) + ACTIVATION_MARGIN * beside.activations_gb
    for option in options:
        peak = option.peak_gb() + extra
        if peak <= usable_gb:
            passes = tuple((p.parts, p.activations_gb, option.during(p) + extra) for p in option.passes)
            return StagePlan(stage, option.models + beside.models, option.batches, option.offloads, peak, passes)
    how = f" even with {', '.join(option.offloads)}" if option.offloads else ""
    named = ", ".join(dict.fromkeys(f"{w.name} in {dtype_text(w.dtype)}" for w in option.models))
    # rounded up and down to hundredths: a need never reads as 0 GB, nor what is left as less than none
    needs = math.ceil(round(peak * 100, 6)) / 100  # (round first: 1.23 * 100 is 123.00000000000001)
    left = math.floor(round(max(usable_gb, 0.0) * 100, 6)) / 100
    raise UserError(
        f"the {stage} stage ({named}) needs {needs:.2f} GB of GPU memory{how}, more than the {budget} budget holds "
        f"({f'{left:.2f} GB' if left > 0 else 'nothing'} once {RESERVE_GB:g} GB is kept for CUDA itself)"
    )
