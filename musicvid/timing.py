"""Where the time goes: seconds per stage of one run, kept in the work directory as timings.json.

Stages may overlap (the delivery runs while the pictures are drawn), so the seconds of all stages can
add up to more than the run's wall time; a stage's seconds leave out the time it spent waiting on another.
"""

from __future__ import annotations

import threading
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
        self._lock = threading.Lock()  # stages are measured from more than one thread

    @contextmanager
    def measure(self, stage: str, device: torch.device | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if device is not None and device.type == "cuda":
                torch.cuda.synchronize(device)  # GPU work is asynchronous: count it where it happens
            end = time.perf_counter()
            with self._lock:
                self.seconds[stage] += end - start
                self.intervals.append((stage, start, end))

    @contextmanager
    def waiting(self, stage: str) -> Iterator[None]:
        """Time inside `stage` spent waiting for another: not counted as the stage's."""
        start = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self.seconds[stage] -= time.perf_counter() - start

    def summary(self) -> dict:
        total = sum(self.seconds.values())
        model = sum(v for k, v in self.seconds.items() if k in MODEL_STAGES or k.startswith("load "))
        return {
            "seconds": {k: round(v, 4) for k, v in self.seconds.items()},
            "total": round(total, 4),
            "model_share": round(model / total, 4) if total else 0.0,
        }
