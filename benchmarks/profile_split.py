"""Where one steady group's time goes, by torch's profiler: the UNet's denoising split into convolutions, matrix
products, attention, and normalisation with the other elementwise work; the VAE's decode; and the GPU's idle time
(the group's wall time outside every kernel). And which SDPA backend each attention shape took, in the UNet and in
the VAE (a backend that cannot take a shape, as flash and cuDNN cannot the VAE's one head of 512, is passed over).

On a GPU the kernels are read from the profiler's Chrome trace (their start and length), which CUPTI records; where
it recorded none of the denoising's (as on the H200, CUDA 13.0, 2026-12-04) or fewer than it launched, the group is
profiled again with each aten operation's own GPU time timed by CUDA events (the profiler's way without CUPTI; no
idle time is told then). On the CPU, each aten operation's own time (no idle time is told there either).
"""

from __future__ import annotations

import itertools
import json
import tempfile
import time
from pathlib import Path
from typing import Callable

import torch
from torch.profiler import ProfilerActivity, profile

# The kernels of each kind, by what their names hold (lower case), tried in this order; the rest are normalisation
# and elementwise work. cuBLAS on Hopper names its matrix products nvjet_*.
KINDS = (
    ("attention", ("flash", "fmha", "attention", "sdpa", "softmax")),
    ("convolution", ("conv", "fprop", "dgrad", "wgrad", "winograd")),
    ("matmul", ("gemm", "matmul", "addmm", "bmm", "aten::mm", "_mm_", "linear", "cutlass", "nvjet")),
    ("copies", ("memcpy", "memset", "aten::copy_", "aten::to", "nchwtonhwc", "nhwctonchw")),
)
OTHER = "norm_and_elementwise"
# inductor's pointwise, persistent-reduction and reduction kernels, named after every operation they fused
# (triton_poi_fused_add_convolution_silu_3 is a convolution's bias and activation, not a convolution)
FUSED = ("triton_poi", "triton_per", "triton_red")
# A trace that holds fewer kernels than this share of the launches it records dropped some (CUPTI, module doc)
RECORDED = 0.9
# The operations SDPA dispatches to, by backend
BACKENDS = {
    "aten::_scaled_dot_product_flash_attention": "flash",
    "aten::_scaled_dot_product_efficient_attention": "efficient",
    "aten::_scaled_dot_product_cudnn_attention": "cudnn",
    "aten::_scaled_dot_product_flash_attention_for_cpu": "flash (CPU)",
    "aten::_scaled_dot_product_attention_math": "math",
    "aten::_scaled_dot_product_fused_attention_overrideable": "overrideable",
}


def kind_of(name: str) -> str:
    lower = name.lower()
    if lower.startswith(FUSED):
        return OTHER
    return next((kind for kind, marks in KINDS if any(mark in lower for mark in marks)), OTHER)


def busy(spans: list[tuple[float, float]]) -> float:
    """The time (same units) covered by at least one of the (start, length) spans."""
    covered, end = 0.0, float("-inf")
    for start, length in sorted(spans):
        covered += max(0.0, start + length - max(start, end))
        end = max(end, start + length)
    return covered


def profiled(run: Callable[[], object], on_gpu: bool, events: bool = False) -> tuple[profile, float]:
    """`run` under the profiler, shapes recorded; its wall seconds (the GPU's work waited for). `events`: on a GPU,
    each operation timed by CUDA events rather than by CUPTI's records of its kernels. Off CUDA by the autograd
    profiler without Kineto: Kineto's first start looks for a GPU, 17 s on a CPU machine."""
    if on_gpu and not events:
        prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True)
    elif on_gpu:
        prof = torch.autograd.profiler.profile(use_kineto=False, use_device="cuda", record_shapes=True)
    else:
        prof = torch.autograd.profiler.profile(use_kineto=False, record_shapes=True)
    with prof:
        started = time.perf_counter()
        run()
        if on_gpu:
            torch.cuda.synchronize()
        wall = time.perf_counter() - started
    return prof, wall


def kernels(prof: profile, on_gpu: bool) -> list[tuple[str, float, float]]:
    """(name, start, length) in µs of each GPU kernel and copy; off the GPU each aten operation's own time. Empty
    where the trace holds fewer kernels than RECORDED of the launches it records: some were dropped, and a split of
    the rest would call their time idle."""
    if not on_gpu:
        return [(row.key, 0.0, row.self_cpu_time_total) for row in prof.key_averages() if row.self_cpu_time_total]
    with tempfile.TemporaryDirectory(prefix="musicvid-trace-") as folder:
        trace = Path(folder) / "trace.json"
        prof.export_chrome_trace(str(trace))
        events = json.loads(trace.read_text())["traceEvents"]
    launched = sum(
        e.get("cat") in ("cuda_runtime", "cuda_driver") and "LaunchKernel" in e.get("name", "") for e in events
    )
    spans = [
        (e["name"], float(e["ts"]), float(e["dur"]))
        for e in events
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "dur" in e
    ]
    ran = sum(e.get("cat") == "kernel" for e in events)
    return spans if ran >= RECORDED * launched else []


def operations_timed(prof) -> list[tuple[str, float, float]]:
    """(name, start, length) in µs of each operation's own GPU time as CUDA events timed it, laid end to end: the
    events tell no start, and one stream runs the operations one after another, so their union is their sum."""
    timed = [(row.key, float(row.self_device_time_total)) for row in prof.key_averages() if row.self_device_time_total]
    starts = itertools.accumulate((length for _, length in timed), initial=0.0)
    return [(name, start, length) for (name, length), start in zip(timed, starts)]


def attention_backends(prof: profile) -> dict[str, str]:
    """Each attention shape (query and key: batch × heads × tokens × head size) and the backend SDPA took."""
    taken = {}
    for row in prof.key_averages(group_by_input_shape=True):
        if row.key in BACKENDS and len(row.input_shapes) >= 2:
            query, key = ("x".join(map(str, shape)) for shape in row.input_shapes[:2])
            taken[f"q {query}, k {key}"] = BACKENDS[row.key]
    return taken


def split(denoise: Callable[[], object], decode: Callable[[], object], on_gpu: bool) -> dict:
    """One group's denoising (`denoise`) and decoding (`decode`, given what denoise returned), each profiled:
    seconds by kind of work, the VAE's, the GPU's idle seconds, the attention backends taken, and what timed them
    (`timed_by`: on a GPU where CUPTI recorded no kernel of the denoising, the group drawn again, timed by events)."""
    latents = []

    def both(events: bool = False):
        unet, unet_wall = profiled(lambda: latents.append(denoise()), on_gpu, events)
        vae, vae_wall = profiled(lambda: decode(latents[-1]), on_gpu, events)
        return unet, vae, unet_wall + vae_wall

    unet, vae, wall = both()
    spans, timed_by = (kernels(unet, on_gpu), kernels(vae, on_gpu)), "CUPTI's records of the kernels"
    events = on_gpu and not all(spans)  # (module doc)
    if not on_gpu:
        timed_by = "each operation's own CPU time"
    elif events:
        dropped = "CUPTI recorded none or only some of the kernels launched"
        try:
            unet, vae, wall = both(events=True)
            spans = operations_timed(unet), operations_timed(vae)
            timed_by = f"CUDA events, each operation's own GPU time ({dropped})"
        except Exception as error:  # noqa: BLE001 - (the row's rate stands without its split)
            spans, timed_by = ([], []), f"nothing: {dropped}, and CUDA events failed ({type(error).__name__}: {error})"
    result = seconds_by_kind(*spans, wall, on_gpu, torch.version.cuda, idle_told=not events)
    backends = {"unet": attention_backends(unet), "vae": attention_backends(vae)}
    return result | {"timed_by": timed_by, "attention_backends": backends}


def seconds_by_kind(
    unet: list[tuple[str, float, float]],
    vae: list[tuple[str, float, float]],
    wall: float,
    on_gpu: bool,
    cuda: str | None = None,
    idle_told: bool = True,
) -> dict:
    """The split of `wall` seconds from the kernels (name, start, length in µs) of the denoising and of the decode:

        seconds[kind] = sum(length of the denoising's kernels of that kind), seconds["vae"] = sum(the decode's)
        gpu_idle = wall - (time covered by the denoising's kernels + by the decode's)    (on a GPU only)

    `idle_told` False (operations timed by CUDA events): no idle time, since an operation's events also time the GPU
    waiting for its launch; gpu_idle is None, and `idle_not_told` says why.

    Where the profiler recorded no kernel of the denoising (on an H200 on 2026-12-04 it recorded the decode's alone,
    and the idle time read 94% of a group the GPU drew at 30% of its peak) nothing is split: no figure is told
    rather than a wrong one; with the likely cause where torch's CUDA (`cuda`) is of the CUPTI versions that stamp
    kernels as starting at 0, which Kineto drops as outside its window (CUDA 12.6 update 2 to 13.0, fixed in 13.1;
    the H200's torch was built for 13.0)."""
    if on_gpu and not unet:
        why = f"the profiler recorded no kernel of the denoising ({len(vae)} of the decode): no split"
        if cuda and (12, 6) <= tuple(int(part) for part in cuda.split(".")[:2]) < (13, 1):
            why += f"; CUDA {cuda}'s CUPTI can stamp kernels as starting at 0, which the profiler drops (fixed in 13.1)"
        return {"wall_seconds": round(wall, 4), "not_recorded": why}
    seconds = {kind: 0.0 for kind, _ in KINDS} | {OTHER: 0.0}
    for name, _, length in unet:
        seconds[kind_of(name)] += length / 1e6
    seconds["vae"] = sum(length for _, _, length in vae) / 1e6
    if on_gpu and idle_told:
        covered = busy([(s, n) for _, s, n in unet]) + busy([(s, n) for _, s, n in vae])
        seconds["gpu_idle"] = max(0.0, wall - covered / 1e6)
    untold = (
        {}
        if idle_told or not on_gpu
        else {
            "gpu_idle": None,
            "idle_not_told": "CUDA events time an operation "
            "with the GPU's wait for its launch: idle time is spread among them",
        }
    )
    return {
        "wall_seconds": round(wall, 4),
        "seconds": {k: round(v, 4) for k, v in seconds.items()} | untold,
        "share": {k: round(v / wall, 4) for k, v in seconds.items()},
    }
