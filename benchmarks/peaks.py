"""Peak memory, never reset: a benchmark's rows and a render's stages run one after another (and the delivery
beside the drawing) in one process, and a reset for one part would hide another's peak and the run's. The run's
peak is the process's high-water mark (CUDA's allocated bytes; the resident set elsewhere); a part's own is
sampled every INTERVAL on a thread, and where the part raised the high-water mark, that exact mark."""

from __future__ import annotations

import threading
import time

import psutil
import torch

from musicvid.models.timing import Timings, peak_memory_gb

# A sample reads torch's allocator statistics and the process's resident set, about 65 µs of Python holding the GIL:
# every 5 ms, 1.3% of a launch-bound row's time (every 1 ms, 5 to 7%, slowed such rows and spread their groups)
INTERVAL = 0.005


def gpu_allocated() -> int:
    return torch.cuda.memory_allocated() if torch.cuda.is_available() else 0


def high_water() -> int:
    return torch.cuda.max_memory_allocated() if torch.cuda.is_available() else 0


class MemorySampler:
    """Resident and GPU memory sampled every `interval` seconds while it is entered; each span's own peak."""

    def __init__(self, interval: float = INTERVAL):
        self.interval = interval
        self.samples: list[tuple[float, int, int]] = []  # (perf_counter, resident bytes, CUDA allocated bytes)
        self.marks: list[tuple[float, int]] = []  # (perf_counter, the high-water mark then)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        process = psutil.Process()
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), process.memory_info().rss, gpu_allocated()))
            time.sleep(self.interval)

    def __enter__(self):
        self.marks.append((time.perf_counter(), high_water()))
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.marks.append((time.perf_counter(), high_water()))

    def span_gb(self, start: float, end: float, column: int = 2) -> float:
        """The most held between `start` and `end` (perf_counter): sampled (column 1 resident, 2 on the GPU). A span
        no sample fell in (shorter than the sampling thread's gap, which grows on a busy machine) held at least
        what the last sample before its end saw."""
        inside = [sample[column] for sample in self.samples if start <= sample[0] <= end]
        before = [sample[column] for sample in self.samples if sample[0] < start]
        return round(max(inside or before[-1:], default=0) / 2**30, 3)

    def stage_peaks(self, timings: Timings, column: int = 2) -> dict[str, float]:
        """Each stage's own peak (GB), sampled over every interval it ran."""
        peaks: dict[str, float] = {}
        for stage, start, end in timings.intervals:
            peaks[stage] = max(peaks.get(stage, 0.0), self.span_gb(start, end, column))
        return peaks


class SpanPeak:
    """One part's own peak GPU memory (GB), the process's never reset: sampled while entered, or the new
    high-water mark where the part raised it (then exact)."""

    def __init__(self):
        self.gb = 0.0
        self.raised_run_peak = False

    def __enter__(self):
        self._before = high_water()
        self._sampler = MemorySampler().__enter__()
        return self

    def __exit__(self, *exc):
        self._sampler.__exit__(*exc)
        after = high_water()
        sampled = self._sampler.span_gb(0.0, float("inf"))
        self.raised_run_peak = after > self._before
        self.gb = round(max(sampled, after / 2**30 if self.raised_run_peak else 0.0), 3)


def run_peak_gb(device: torch.device) -> float | None:
    """The process's peak since it started (never reset), in GB of 2**30."""
    peak = peak_memory_gb(device)
    return None if peak is None else round(peak * 1e9 / 2**30, 3)
