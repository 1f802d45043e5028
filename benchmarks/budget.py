"""What may still start within benchmarks/device.py's budget on a GPU: the device tool gives a call 600 s, unpacking and
imports included, and a started row or section runs on (a song's Whisper reads no stop, sd15 draws its baseline
twice), so nothing starts that is expected to end past the budget by more than that call's slack.

A sd15 row of `g` groups of `b` pictures, after the baseline's `G` groups of `B` that took `T` seconds, is expected
to take

    expected = T / G * g * max(b / B * w, SMALL_GROUP) + (C where the row compiles)

where `w` is the row's work a picture against the baseline's: 1, or FAST_WORK for --fast (4 steps of 25, each one
UNet pass where guidance draws two: a `fast` group took 0.43 s where the baseline's took 2.94 on an H200, and costed
as a baseline's group it was never started).

and starts only where `now + expected + T <= deadline` (T again: the baseline is drawn last whatever was skipped;
a baseline that failed counts as FAILED_BASELINE). C is COLD_COMPILE, or WARM_COMPILE where torch.compile's cache
was given, or the longest compile this run has measured (a compiled row's warm-up) where that is longer: each
compiled row compiles a graph of its own. A section starts only where SECTION_ROOM seconds are left (a song: its
Whisper built and aligning, and enough drawing to say something; sd15: its baseline twice)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from benchmarks.levers import Lever
from musicvid.settings.looks import FAST
from musicvid.settings.presets import PRESETS

SMALL_GROUP = 0.25  # a group of one picture still costs a quarter of a full group's time (launches, not FLOPs)
COLD_COMPILE = 240.0  # seconds: the UNet and VAE compiled cold took 198 s on an H100 (render-h100.json, 2026-11-22)
WARM_COMPILE = 60.0  # with the cache of an earlier run loaded
FAILED_BASELINE = 60.0  # seconds a failed baseline counts as: its time to the error says nothing of a row's
SECTION_ROOM = {"song-fast": 150.0, "song-25": 150.0, "sd15": 120.0, "quality": 60.0}  # seconds left for one to start
FAST_WORK = FAST["steps"] / PRESETS["default"].steps / 2


@dataclass
class RowBudget:
    deadline: float  # time.perf_counter()'s
    compile_seconds: float  # C above
    baseline: tuple[float, int, int] | None = None  # T, G, B once the baseline is drawn

    def expected(self, lever: Lever, batch: int, groups: int) -> float:
        seconds, base_groups, base_batch = self.baseline
        share = max((lever.batch_size or batch) / base_batch * (FAST_WORK if lever.fast else 1.0), SMALL_GROUP)
        drawing = seconds / base_groups * drawn_groups(lever, groups) * share
        return drawing + (self.compile_seconds if lever.settings.get("compile") else 0.0)

    def why_not(self, lever: Lever, batch: int, groups: int) -> str | None:
        """Why `lever` may not start now (None: it may): the baseline is drawn first whatever the time."""
        if self.baseline is None:
            return None
        need, left = self.expected(lever, batch, groups) + self.baseline[0], self.deadline - time.perf_counter()
        if need <= left:
            return None
        return (
            f"expected to take {need:.0f} s with the baseline drawn again, and {max(left, 0):.0f} s of the budget left"
        )

    def took(self, lever: Lever, batch: int, groups: int, seconds: float, row: dict) -> None:
        """A row's measured time: the baseline's sets T, G and B, a compiled row's warm-up C where it is longer."""
        if self.baseline is None:
            took = seconds if "frames_per_second" in row else FAILED_BASELINE
            self.baseline = (took, drawn_groups(lever, groups), lever.batch_size or batch)
        elif lever.settings.get("compile") and "warm_up_seconds" in row:
            self.compile_seconds = max(self.compile_seconds, row["warm_up_seconds"])


def drawn_groups(lever: Lever, groups: int) -> int:
    """The groups a row draws: its warm-up, the timed ones, and its profiled one."""
    return lever.warm_up + groups + int(lever.profiled)
