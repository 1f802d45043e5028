"""Where the time goes: seconds per stage of one run, kept in the work directory as timings.json."""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Iterator

import torch

# Stages whose time is spent inside the neural networks; everything else is overhead.
MODEL_STAGES = ("transcribe", "elaborate", "encode prompts", "denoise", "decode", "transitions")


class Timings:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.intervals: list[tuple[str, float, float]] = []  # (stage, start, end) on perf_counter's clock

    @contextmanager
    def measure(self, stage: str, device: torch.device | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if device is not None and device.type == "cuda":
                torch.cuda.synchronize(device)  # GPU work is asynchronous: count it where it happens
            end = time.perf_counter()
            self.seconds[stage] += end - start
            self.intervals.append((stage, start, end))

    def summary(self) -> dict:
        total = sum(self.seconds.values())
        model = sum(v for k, v in self.seconds.items() if k in MODEL_STAGES or k.startswith("load "))
        return {
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
            "total": round(total, 4),
            "model_share": round(model / total, 4) if total else 0.0,
        }
