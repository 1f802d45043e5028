"""benchmarks/device.py's rows can be compared (steady state, spread, baselines first and last, pictures compared by
picture), and its profile splits one group by kind of work and names the attention backend each shape took; on the
CPU."""

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from benchmarks.profile_split import (
    attention_backends,
    busy,
    kernels,
    kind_of,
    operations_timed,
    profiled,
    seconds_by_kind,
)
from benchmarks.steady import baselines, difference, full_groups, steady_rate


def test_a_row_is_full_groups_of_one_shape_timed_by_its_median_with_its_spread():
    assert full_groups(list(range(10)), 4, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]  # the partial rest is left out
    with pytest.raises(ValueError, match="3 groups of 4 need 12 pictures"):
        full_groups(list(range(10)), 4, 3)
    rate = steady_rate([0.5, 0.4, 1.0], 4)  # 8, 10 and 4 frames/s
    assert rate["frames_per_second"] == 8.0 and rate["groups_timed"] == 3
    assert rate["spread"] == {"slowest": 4.0, "fastest": 10.0, "relative": 0.75}
    assert rate["each_group_seconds"] == [0.5, 0.4, 1.0]  # in the order drawn
    assert baselines({"frames_per_second": 10.0}, {"frames_per_second": 9.6})["void"] is False
    assert baselines({"frames_per_second": 10.0}, {"frames_per_second": 9.4})["void"] is True


def test_pictures_are_compared_on_those_both_rows_drew():
    base = {f"{k}.png": np.full((4, 4, 3), 100, np.uint8) for k in range(4)}
    row = {k: v + (1 if k == "1.png" else 0) for k, v in list(base.items())[:2]}
    row["9.png"] = base["0.png"]  # drawn by this row alone: not compared
    found = difference(row, base)
    assert found["pictures_compared"] == 2 and found["max_difference"] == 1 and found["mean_difference"] == 0.5
    assert 50 < found["psnr_db"] < 52  # 10·log10(255² / 0.5)
    assert difference(base, base)["psnr_db"] is None  # the same pictures


def test_a_group_is_split_by_kind_of_work_and_each_attention_shape_names_its_backend():
    kernels = {
        "sm90_xmma_fprop_implicit_gemm": "convolution",
        "ampere_fp16_s16816gemm": "matmul",
        "flash_fwd_kernel": "attention",
        "triton_per_fused_native_group_norm_0": "norm_and_elementwise",
        "Memcpy DtoH": "copies",
        "nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NNN": "matmul",  # cuBLAS's on Hopper
        "triton_poi_fused_add_convolution_silu_3": "norm_and_elementwise",  # a convolution's bias, fused by inductor
        "triton_red_fused_addmm_gelu_9": "norm_and_elementwise",
    }
    assert {name: kind_of(name) for name in kernels} == kernels
    assert busy([(0.0, 2.0), (1.0, 2.0), (5.0, 1.0)]) == 4.0  # overlapping kernels count once
    query, key = torch.randn(2, 8, 16, 8), torch.randn(2, 8, 77, 8)
    prof, wall = profiled(lambda: torch.nn.functional.scaled_dot_product_attention(query, key, key), on_gpu=False)
    assert attention_backends(prof) == {"q 2x8x16x8, k 2x8x77x8": "flash (CPU)"} and wall > 0


def test_operations_timed_by_cuda_events_are_laid_end_to_end_for_the_split():
    """Where CUPTI recorded no kernel, each operation's own GPU time (CUDA events) stands in: one stream runs them
    in turn, so their busy time is their sum, and each is split by its aten name; no idle time is told, since an
    operation's events also time the GPU waiting for its launch."""
    rows = [("aten::cudnn_convolution", 300.0), ("aten::_scaled_dot_product_cudnn_attention", 200.0), ("aten::mm", 0)]
    prof = SimpleNamespace(key_averages=lambda: [SimpleNamespace(key=k, self_device_time_total=t) for k, t in rows])
    timed = operations_timed(prof)
    assert timed == [
        ("aten::cudnn_convolution", 0.0, 300.0),
        ("aten::_scaled_dot_product_cudnn_attention", 300.0, 200.0),
    ]
    found = seconds_by_kind(timed, [], 0.001, on_gpu=True, idle_told=False)["seconds"]
    assert found["convolution"] == 0.0003 and found["attention"] == 0.0002 and found["gpu_idle"] is None
    assert "launch" in found["idle_not_told"]


def test_a_trace_that_dropped_kernels_it_launched_is_no_split(tmp_path):
    def traced(kernels: int, launches: int):
        events = [{"cat": "kernel", "name": "flash_fwd_kernel", "ts": k, "dur": 1} for k in range(kernels)]
        events += [{"cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": k, "dur": 1} for k in range(launches)]
        return SimpleNamespace(
            export_chrome_trace=lambda path: Path(path).write_text(json.dumps({"traceEvents": events}))
        )

    assert len(kernels(traced(10, 10), on_gpu=True)) == 10
    assert kernels(traced(5, 10), on_gpu=True) == []  # (the rest's time would have read as idle)


def test_the_gpu_idle_time_is_told_only_where_the_denoising_kernels_were_recorded():
    unet = [("sm90_xmma_fprop_implicit_gemm", 0.0, 300_000.0), ("flash_fwd_kernel", 200_000.0, 300_000.0)]
    vae = [("cudnn_conv_fprop", 900_000.0, 100_000.0)]
    found = seconds_by_kind(unet, vae, 1.0, on_gpu=True)
    assert found["seconds"] == {
        "attention": 0.3,
        "convolution": 0.3,
        "matmul": 0.0,
        "copies": 0.0,
        "norm_and_elementwise": 0.0,
        "vae": 0.1,
        "gpu_idle": 0.4,  # 1 s less the 0.5 s the denoising's overlapping kernels cover and the decode's 0.1 s
    }
    assert found["share"]["gpu_idle"] == 0.4
    missed = seconds_by_kind([], vae, 1.0, on_gpu=True)  # as an H200's profiler gave it: the decode's kernels alone
    assert (
        "seconds" not in missed
        and "share" not in missed
        and "no kernel of the denoising (1 of" in missed["not_recorded"]
        and "CUPTI" not in missed["not_recorded"]
    )
    for cuda, suspect in (("13.0", True), ("12.6", True), ("12.4", False), ("13.1", False), ("13.2", False)):
        told = seconds_by_kind([], vae, 1.0, on_gpu=True, cuda=cuda)["not_recorded"]
        assert ("CUPTI can stamp kernels as starting at 0" in told) == suspect, cuda
    assert seconds_by_kind([("aten::conv2d", 0.0, 5e4)], [], 1.0, on_gpu=False)["seconds"]["convolution"] == 0.05


def test_a_profile_that_fails_is_written_as_its_error_and_the_rows_rate_stands(monkeypatch):
    from benchmarks import rows

    def trace_lost(*args):
        raise json.JSONDecodeError("Expecting value", "", 0)  # (a trace cut short as it was written)

    monkeypatch.setattr(rows, "split", trace_lost)
    monkeypatch.setattr(rows, "padded_size", lambda own, settings: (64, 64))
    assert rows.profile_group(None, None, [], None, on_gpu=True) == {
        "error": "JSONDecodeError: Expecting value: line 1 column 1 (char 0)"
    }
