"""benchmarks/device.py within its budget on a GPU (benchmarks/budget.py): the headline song first, then no row
started that is expected to end past the budget (a cold compile is minutes), the baseline drawn again whatever was
skipped, and no song started with too little time left to say anything."""

import json
import time

import pytest
import torch

from benchmarks import device
from benchmarks import rows as drawing
from benchmarks.budget import COLD_COMPILE, SONG_ROOM, WARM_COMPILE, RowBudget
from benchmarks.levers import Lever


def rows_measured(monkeypatch, warm_up_seconds: float = 0.5) -> list[str]:
    measured = []

    def measure(base_pipe, board, settings, lever, batch, groups):
        measured.append(lever.name)
        return {"what": lever.what, "fast": False, "frames_per_second": 5.0, "warm_up_seconds": warm_up_seconds}, {}

    monkeypatch.setattr(drawing, "measure", measure)
    return measured


def test_a_row_expected_to_end_past_the_budget_is_skipped_and_the_baseline_is_drawn_again(monkeypatch):
    measured = rows_measured(monkeypatch)
    compiled = Lever("compile", "c", settings={"compile": True}, warm_up=2)
    chosen = [Lever("baseline", "eager"), Lever("batch-1", "one at a time", batch_size=1), compiled]
    found = drawing.run_rows(None, None, None, chosen, 4, budget=RowBudget(time.perf_counter() + 60.0, COLD_COMPILE))
    assert measured == ["baseline", "batch-1", "baseline-again"]  # a cold compile's 240 s do not fit in 60
    assert found["compile"]["skipped"].startswith("expected to take 24") and found["compile"]["fast"] is False
    assert found["baseline-again"]["baselines"]["void"] is False  # the run's rates still read beside each other
    everything = drawing.run_rows(None, None, None, chosen, 4, budget=RowBudget(time.perf_counter() + 60.0, 5.0))
    assert "skipped" not in str(everything) and measured[3:] == ["baseline", "batch-1", "compile", "baseline-again"]
    late = drawing.run_rows(None, None, None, chosen, 4, budget=RowBudget(time.perf_counter() - 1.0, 5.0))
    assert measured[7:] == ["baseline", "baseline-again"] and late["batch-1"]["skipped"]


def test_a_compile_measured_is_the_allowance_of_the_next_compiled_row(monkeypatch):
    measured = rows_measured(monkeypatch, warm_up_seconds=100.0)
    chosen = [Lever("baseline", "eager"), *(Lever(n, n, settings={"compile": True}) for n in ("compile", "autotune"))]
    found = drawing.run_rows(None, None, None, chosen, 4, budget=RowBudget(time.perf_counter() + 90.0, WARM_COMPILE))
    assert (
        measured == ["baseline", "compile", "baseline-again"] and "expected to take 10" in found["autotune"]["skipped"]
    )


def test_a_row_of_one_picture_a_group_is_expected_to_cost_a_quarter_of_a_full_group():
    budget = RowBudget(time.perf_counter() + 1000.0, COLD_COMPILE)
    budget.took(Lever("baseline", "eager", profiled=True), 16, 10, 24.0, {})  # 12 groups of 16: 2 s a group
    assert budget.expected(Lever("batch-1", "one", batch_size=1), 16, 10) == 2.0 * 11 * 0.25
    assert budget.expected(Lever("batch-32", "more", batch_size=32), 16, 10) == 2.0 * 11 * 2
    assert budget.expected(Lever("compile", "c", settings={"compile": True}, warm_up=2), 16, 10) == 24.0 + 240.0


def test_on_a_gpu_the_song_goes_first_and_sd15_has_what_is_left_of_the_budget(tmp_path, monkeypatch):
    given = []
    monkeypatch.setattr("benchmarks.speed.drawing_rows", lambda *a: given.append(a) or {"levers": {}})
    monkeypatch.setattr(device, "versions", dict)
    device.main(["--dry-run", "--only", "sd15", "--out", str(tmp_path / "dry.json")])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    before = time.perf_counter()
    device.main(["--only", "sd15", "--rows", "batch-1", "--budget", "100", "--out", str(tmp_path / "gpu.json")])
    budget = given[1][-1]
    assert given[0][-1] is None and before + 100.0 <= budget.deadline <= time.perf_counter() + 100.0
    assert budget.compile_seconds == COLD_COMPILE  # a bare machine: nothing compiled before
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "fxgraph").write_text("an earlier run's\n")
    args = ["--only", "sd15", "--rows", "batch-1", "--compile-cache", str(tmp_path / "cache")]
    monkeypatch.setattr(device, "inductor_compiles", lambda parser: None)
    device.main([*args, "--out", str(tmp_path / "warm.json")])
    assert given[2][-1].compile_seconds == WARM_COMPILE
    assert device.DEFAULT[0] == "song-fast" and device.DEFAULT.index("sd15") < device.DEFAULT.index("song-25")
    assert device.DEVICE_ROWS[:2] == ("fast", "deep-cache-3") and device.DEVICE_ROWS[-1] == "compile-autotune"


def test_no_song_starts_with_too_little_of_the_budget_left(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    monkeypatch.setattr(device, "versions", dict)
    monkeypatch.setattr(device, "song", lambda args, given: pytest.fail("a song started"))
    budget = SONG_ROOM - 1.0
    device.main(["--only", "song-fast", "--budget", f"{budget:g}", "--out", str(tmp_path / "gpu.json")])
    section = json.loads((tmp_path / "gpu.json").read_text())["sections"]["song-fast"]
    assert section == {"skipped": f"fewer than {SONG_ROOM:g} s left of the budget of {budget:g} s"}
