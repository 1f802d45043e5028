"""Rows that can be compared with each other: each row is timed in its steady state alone.

- groups of one shape: the in-between frames in the video's order, cut into full groups of the row's batch (a
  render's partial groups, beside keyframes, are the whole song's business: benchmarks/whole_song.py);
- warmed up before the clock: the first groups (compiling, cuDNN's and the allocator's first calls) are drawn
  and not timed;
- timed on the GPU's own timeline by CUDA events at each group's end (perf_counter off CUDA), over at least
  GROUPS groups, the row's rate the median group's, with its spread;
- the baseline run again at the end of a run: where the two differ by more than VOID, the run's rows are void.

A row's pictures are kept by picture (its frame's path), so rows of other batches are compared on the
pictures both drew: the largest and mean difference in 1/255 and the PSNR.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import torch

GROUPS = 10  # timed groups a row
VOID = 0.05  # the most the baselines at a run's start and end may differ by


class Clock:
    """Marks at group boundaries: CUDA events on the GPU's timeline, or perf_counter off CUDA."""

    def __init__(self, on_gpu: bool):
        self.on_gpu, self.marks = on_gpu, []

    def mark(self) -> None:
        if self.on_gpu:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            self.marks.append(event)
        else:
            self.marks.append(time.perf_counter())

    def seconds(self) -> list[float]:
        """The time between each mark and the next."""
        if self.on_gpu:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) / 1000 for a, b in zip(self.marks, self.marks[1:])]
        return [b - a for a, b in zip(self.marks, self.marks[1:])]


def full_groups(pictures: list, batch: int, count: int) -> list[list]:
    """The first `count` groups of exactly `batch` pictures, consecutive in the video's order."""
    if len(pictures) < batch * count:
        raise ValueError(f"{count} groups of {batch} need {batch * count} pictures, not {len(pictures)}")
    return [pictures[g * batch : (g + 1) * batch] for g in range(count)]


def steady_rate(seconds: list[float], batch: int) -> dict:
    """Frames per second of the median group, the spread of the groups' rates, and each group's seconds in the order
    drawn (a drift, slow first groups or a slow one now and then, shows there: on an H200 the baseline's groups
    spread 19% and its two runs 8.5%, and nothing told which)."""
    rates = sorted(batch / s for s in seconds)
    median = statistics.median(rates)
    return {
        "frames_per_second": round(median, 3),
        "spread": {
            "slowest": round(rates[0], 3),
            "fastest": round(rates[-1], 3),
            "relative": round((rates[-1] - rates[0]) / median, 4),
        },
        "groups_timed": len(seconds),
        "group_seconds": round(statistics.median(seconds), 4),
        "each_group_seconds": [round(s, 4) for s in seconds],
    }


def difference(drawn: dict, reference: dict) -> dict:
    """How the pictures both rows drew differ (keyed by picture): largest and mean absolute difference in 1/255,
    PSNR in dB (None where they are equal)."""
    common = [key for key in drawn if key in reference]
    if not common:
        return {"pictures_compared": 0}
    errors = [np.abs(drawn[k].astype(np.int16) - reference[k].astype(np.int16)) for k in common]
    mse = float(np.mean([np.mean(e.astype(np.float64) ** 2) for e in errors]))
    return {
        "pictures_compared": len(common),
        "max_difference": int(max(e.max() for e in errors)),
        "mean_difference": round(float(np.mean([e.mean() for e in errors])), 4),
        "psnr_db": round(10 * math.log10(255**2 / mse), 2) if mse > 0 else None,
    }


def baselines(first: dict, last: dict) -> dict:
    """The baselines at a run's start and end: the run is void where they differ by more than VOID."""
    a, b = first["frames_per_second"], last["frames_per_second"]
    apart = abs(a - b) / max(a, b)
    return {"first": a, "last": b, "apart": round(apart, 4), "void": apart > VOID}
