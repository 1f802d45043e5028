"""benchmarks/device.py within its budget on a GPU: sd15's rows have half of it, so that the headline songs have the
rest (a cold compile is minutes a row), and the baseline is drawn again whatever was skipped."""

import time

import torch

from benchmarks import device
from benchmarks import rows as drawing
from benchmarks.levers import Lever


def test_a_row_that_would_start_past_its_share_is_skipped_and_the_baseline_is_drawn_again(monkeypatch):
    measured = []

    def measure(base_pipe, board, settings, lever, batch, groups):
        measured.append(lever.name)
        return {"what": lever.what, "fast": False, "frames_per_second": 5.0}, {}

    monkeypatch.setattr(drawing, "measure", measure)
    chosen = [Lever("baseline", "eager"), Lever("batch-1", "one at a time", batch_size=1), Lever("compile", "c")]
    found = drawing.run_rows(None, None, None, chosen, 4, until=time.perf_counter() - 1.0)
    assert measured == ["baseline", "baseline-again"]
    assert found["compile"] == {"what": "c", "skipped": "it would start past the rows' share of the budget"}
    assert found["baseline-again"]["baselines"]["void"] is False  # the run's rates still read beside each other
    everything = drawing.run_rows(None, None, None, chosen, 4, until=time.perf_counter() + 60.0)
    assert "skipped" not in str(everything) and measured[2:] == ["baseline", "batch-1", "compile", "baseline-again"]


def test_on_a_gpu_sd15_has_half_the_budget_and_a_dry_run_has_no_deadline(tmp_path, monkeypatch):
    given = []
    monkeypatch.setattr("benchmarks.speed.drawing_rows", lambda *a: given.append(a) or {"levers": {}})
    monkeypatch.setattr(device, "versions", dict)
    device.main(["--dry-run", "--only", "sd15", "--out", str(tmp_path / "dry.json")])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    before = time.perf_counter()
    device.main(["--only", "sd15", "--rows", "batch-1", "--budget", "100", "--out", str(tmp_path / "gpu.json")])
    assert given[0][-1] is None and before + 50.0 <= given[1][-1] <= time.perf_counter() + 50.0
    # eager rows first, compiled ones after them (a cold compile is minutes), autotune's last
    assert device.DEVICE_ROWS.index("fast") < device.DEVICE_ROWS.index("compile") and device.DEVICE_ROWS[-1] == (
        "compile-autotune"
    )
