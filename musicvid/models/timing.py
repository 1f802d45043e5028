"""Where the time goes: seconds per stage of one run, kept in the work directory as timings.json, with
each stage's peak memory and each model as its stage left it (name, dtype, device: models.readback).

Stages may overlap (the delivery runs while the pictures are drawn), so the seconds of all stages can
add up to more than the run's wall time; a stage's seconds leave out the time it spent waiting on another.
A stage's GPU work is waited for on its own thread's stream, never the whole device: the drawing does not
wait for the upscaler's stream. A stage's peak memory is the run's high-water mark when the stage ended (CUDA's
allocated memory on a GPU, the process's resident memory elsewhere), never reset: stages overlap (the delivery
beside the drawing), and a reset for one would hide another's peak. The stage that raised it is where the run's
peak was reached; benchmarks/render.py samples each stage's own.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import torch

from musicvid.models.readback import describe_model

GB = 1e9
STATUS = Path("/proc/self/status")  # Linux: the process's peak resident memory (VmHWM)


def peak_memory_gb(device: torch.device | None) -> float | None:
    """The process's high-water mark: CUDA's allocated bytes on a GPU, else the resident set."""
    if device is not None and device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / GB
    try:
        line = next(x for x in STATUS.read_text().splitlines() if x.startswith("VmHWM:"))
    except (OSError, StopIteration):
        import resource  # (on macOS ru_maxrss is in bytes, on Linux in kB; Linux answers above)

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / GB
    return int(line.split()[1]) * 1024 / GB


# Stages whose time is spent inside the neural networks; everything else is overhead.
MODEL_STAGES = ("transcribe", "elaborate", "encode prompts", "denoise", "decode", "transitions")


class Timings:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.intervals: list[tuple[str, float, float]] = []  # (stage, start, end) on perf_counter's clock
        self.peak_gb: dict[str, float] = {}
        self.models: dict[str, dict[str, Any]] = {}  # role -> what models.readback reads of its model
        self._lock = threading.Lock()  # stages are measured from more than one thread

    @contextmanager
    def measure(self, stage: str, device: torch.device | None = None) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            if device is not None and device.type == "cuda":
                # GPU work is asynchronous: count it where it happens, on this thread's stream alone
                torch.cuda.current_stream(device).synchronize()
            end = time.perf_counter()
            peak = peak_memory_gb(device)
            with self._lock:
                self.seconds[stage] += end - start
                self.intervals.append((stage, start, end))
                if peak is not None:
                    self.peak_gb[stage] = max(self.peak_gb.get(stage, 0.0), round(peak, 3))

    def record_model(self, role: str, name: str, model: Any) -> None:
        """`model` of `role` as its stage leaves it."""
        with self._lock:
            self.models[role] = {"name": name, **describe_model(model)}

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
            "peak_memory_gb": dict(self.peak_gb),
            "models": dict(self.models),
        }
