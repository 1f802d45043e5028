"""benchmarks/device.py's rows can be compared (steady state, spread, baselines first and last, pictures compared by
picture), its profile splits one group by kind of work and names the attention backend each shape took, and its
checks read pass, fail or not measured, never a section left out; quickly, on the CPU."""

import json

import numpy as np
import pytest
import torch

from benchmarks import device
from benchmarks.device_checks import checks
from benchmarks.profile_split import attention_backends, busy, kind_of, profiled
from benchmarks.steady import baselines, difference, full_groups, steady_rate


def test_a_row_is_full_groups_of_one_shape_timed_by_its_median_with_its_spread():
    assert full_groups(list(range(10)), 4, 2) == [[0, 1, 2, 3], [4, 5, 6, 7]]  # the partial rest is left out
    with pytest.raises(ValueError, match="3 groups of 4 need 12 pictures"):
        full_groups(list(range(10)), 4, 3)
    rate = steady_rate([0.5, 0.4, 1.0], 4)  # 8, 10 and 4 frames/s
    assert rate["frames_per_second"] == 8.0 and rate["groups_timed"] == 3
    assert rate["spread"] == {"slowest": 4.0, "fastest": 10.0, "relative": 0.75}
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
    }
    assert {name: kind_of(name) for name in kernels} == kernels
    assert busy([(0.0, 2.0), (1.0, 2.0), (5.0, 1.0)]) == 4.0  # overlapping kernels count once
    query, key = torch.randn(2, 8, 16, 8), torch.randn(2, 8, 77, 8)
    prof, wall = profiled(lambda: torch.nn.functional.scaled_dot_product_attention(query, key, key), on_gpu=False)
    assert attention_backends(prof) == {"q 2x8x16x8, k 2x8x77x8": "flash (CPU)"} and wall > 0


def report(**sections) -> dict:
    return {"dry_run": False, "sections": sections}


def row(rate: float, fast: bool = False, max_difference: int | None = None, psnr: float | None = None) -> dict:
    found = {"frames_per_second": rate, "fast": fast}
    return found | (
        {"difference": {"max_difference": max_difference, "psnr_db": psnr}} if max_difference is not None else {}
    )


def test_the_checks_read_the_goals_and_say_what_was_not_measured():
    rows = {
        "baseline": row(6.0),
        "compile": row(10.5, max_difference=1),
        "deep-cache-3": row(12.0, max_difference=9, psnr=31.0),
        "fast": row(29.0, fast=True),
        "baseline-again": row(6.1) | {"baselines": baselines(row(6.0), row(6.1))},
    }
    song = {"wall_seconds": 150.0, "random_weights_seconds": 20.0}
    stopped = {"wall_seconds": 200.0, "random_weights_seconds": 20.0, "did_not_finish": "stopped after 200 s"}
    lines = checks(report(sd15={"levers": rows}, **{"song-fast": song, "song-25": stopped}))
    by = {line["check"]: line for line in lines}
    assert (
        by["SD 1.5 512² 25 steps"]["pass"] is True
        and "10.5 frames/s steady by compile" in by["SD 1.5 512² 25 steps"]["line"]
    )
    assert "deep-cache-3 12.0 frames/s, PSNR 31.0 dB" in by["SD 1.5 512² 25 steps"]["line"]  # beside, not counted
    assert by["--fast"]["pass"] is False and by["baselines at the start and the end"]["pass"] is True
    song_line = by["3-minute song to a 1080p, 30 fps MP4"]
    assert song_line["pass"] is True and "did not finish (stopped after 200 s)" in song_line["line"]
    # a run cut short: what was not measured says so, never left out
    lines = checks(report(sd15={"running": "started, not finished"}, **{"song-fast": {"skipped": "past the budget"}}))
    assert [line["pass"] for line in lines] == [None, None, None, None]
    assert "skipped: past the budget" in lines[2]["line"] and "[NOT MEASURED]" in lines[3]["line"]


@pytest.mark.slow
def test_a_dry_run_of_some_rows_writes_them_with_their_checks(tmp_path, capsys):
    out = tmp_path / "gpu.json"
    argv = ["--dry-run", "--only", "sd15", "--rows", "deep-cache-3", "--groups", "1", "--out", str(out)]
    assert device.main(argv) == 0
    written = json.loads(out.read_text())
    section = written["sections"]["sd15"]
    assert list(section["levers"]) == ["baseline", "deep-cache-3", "baseline-again"]
    assert section["machine"]["versions"]["torch"] == torch.__version__ and "clocks_at_start" in section["machine"]
    baseline, cached = section["levers"]["baseline"], section["levers"]["deep-cache-3"]
    assert baseline["groups_timed"] == 1 and baseline["frames_per_second"] > 0 and baseline["batch_size"] == 4
    profile = baseline["profile"]  # one more group, split by kind of work, and its attention backends
    assert profile["seconds"]["convolution"] > 0 and profile["seconds"]["vae"] > 0
    assert set(profile["attention_backends"]["unet"].values()) == {"flash (CPU)"}
    assert cached["difference"]["from"] == "baseline" and cached["changes_pictures"] is True
    assert cached["difference"]["pictures_compared"] == 8 and cached["difference"]["max_difference"] > 2
    assert "baselines" in section["levers"]["baseline-again"]
    assert [line["check"] for line in written["checks"]][0] == "dry run"
    assert "[NOT MEASURED] 3-minute song" in capsys.readouterr().out
