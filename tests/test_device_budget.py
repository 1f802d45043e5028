"""benchmarks/device.py within its budget on a GPU (benchmarks/budget.py): the headline song first, then no row
started that is expected to end past the budget (a cold compile is minutes), the baseline drawn again whatever was
skipped, and no song started with too little time left to say anything."""

import json
import time

import torch

from benchmarks import device
from benchmarks import rows as drawing
from benchmarks.budget import COLD_COMPILE, FAILED_BASELINE, FAST_WORK, SECTION_ROOM, WARM_COMPILE, RowBudget
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


def test_a_longer_compile_measured_is_the_allowance_of_the_next_compiled_row_and_a_shorter_one_is_not(monkeypatch):
    measured = rows_measured(monkeypatch, warm_up_seconds=100.0)
    chosen = [Lever("baseline", "eager"), *(Lever(n, n, settings={"compile": True}) for n in ("compile", "autotune"))]
    found = drawing.run_rows(None, None, None, chosen, 4, budget=RowBudget(time.perf_counter() + 90.0, WARM_COMPILE))
    assert (
        measured == ["baseline", "compile", "baseline-again"] and "expected to take 10" in found["autotune"]["skipped"]
    )
    budget = RowBudget(time.perf_counter() + 1000.0, COLD_COMPILE)
    budget.took(Lever("baseline", "eager"), 16, 10, 20.0, {"frames_per_second": 8.8})
    budget.took(chosen[1], 16, 10, 140.0, {"frames_per_second": 9.0, "warm_up_seconds": 100.0})
    assert budget.compile_seconds == COLD_COMPILE  # autotune's graph is its own: one compile says little of it


def test_a_row_starts_only_where_the_baseline_drawn_again_fits_after_it_and_a_failed_baseline_counts_a_minute():
    eager = Lever("batch-1", "one", batch_size=1)
    budget = RowBudget(time.perf_counter() + 25.0, COLD_COMPILE)
    budget.took(Lever("baseline", "eager"), 16, 10, 20.0, {"frames_per_second": 8.8})  # 11 groups: 20 s
    assert budget.expected(eager, 16, 10) == 20.0 / 11 * 11 * 0.25  # 5 s: it fits, but not with 20 s after it
    # --fast's group is 4 steps of one UNet pass where the baseline's is 25 of two: costed as the baseline's, it was
    # never started; its floor is a small group's
    assert budget.expected(Lever("fast", "f", fast=True), 16, 10) == budget.expected(eager, 16, 10)
    assert FAST_WORK == 4 / 25 / 2
    assert budget.why_not(eager, 16, 10).startswith("expected to take 25 s with the baseline drawn again")
    budget = RowBudget(time.perf_counter() + 45.0, COLD_COMPILE)
    budget.took(Lever("baseline", "eager"), 16, 10, 20.0, {"frames_per_second": 8.8})
    assert budget.why_not(eager, 16, 10) is None
    failed = RowBudget(time.perf_counter() + 70.0, COLD_COMPILE)  # its 0.01 s to an error says nothing of a row's
    failed.took(Lever("baseline", "eager"), 16, 10, 0.01, {"error": "RuntimeError: CUDA out of memory"})
    assert failed.baseline[0] == FAILED_BASELINE and failed.why_not(eager, 16, 10) is not None


def test_on_a_gpu_the_song_goes_first_and_sd15_has_what_is_left_of_the_budget(tmp_path, monkeypatch):
    given = []
    monkeypatch.setattr("benchmarks.speed.drawing_rows", lambda *a: given.append(a) or {"levers": {}})
    monkeypatch.setattr(device, "versions", dict)
    device.main(["--dry-run", "--only", "sd15", "--out", str(tmp_path / "dry.json")])
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    before = time.perf_counter()
    device.main(["--only", "sd15", "--rows", "batch-1", "--budget", "200", "--out", str(tmp_path / "gpu.json")])
    budget = given[1][-1]
    assert given[0][-1] is None and before + 200.0 <= budget.deadline <= time.perf_counter() + 200.0
    assert budget.compile_seconds == COLD_COMPILE  # a bare machine: nothing compiled before
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "fxgraph").write_text("an earlier run's\n")
    args = ["--only", "sd15", "--rows", "batch-1", "--compile-cache", str(tmp_path / "cache")]
    monkeypatch.setattr(device, "inductor_compiles", lambda parser: None)
    device.main([*args, "--out", str(tmp_path / "warm.json")])
    assert given[2][-1].compile_seconds == WARM_COMPILE
    assert device.DEFAULT[0] == "song-fast" and device.DEFAULT.index("sd15") < device.DEFAULT.index("song-25")
    assert device.DEVICE_ROWS[:2] == ("fast", "deep-cache-3") and device.DEVICE_ROWS[-1] == "compile-autotune"


def gpu_run(monkeypatch, sections: dict) -> list[str]:
    """device.main on a pretended GPU, each section of `sections` replaced; the names of those that ran."""
    ran = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    monkeypatch.setattr(device, "versions", dict)
    for name, section in sections.items():
        monkeypatch.setitem(device.SECTIONS, name, lambda args, write, n=name, f=section: ran.append(n) or f(args))
    return ran


def test_a_section_starts_only_where_its_room_is_left_of_the_budget(tmp_path, monkeypatch):
    def spent(seconds: float):
        def section(args) -> dict:
            args.started -= seconds  # as if the section had taken that long
            return {}

        return section

    ran = gpu_run(monkeypatch, {"song-fast": spent(0.0), "delivery": spent(300.0), "sd15": spent(0.0)})
    run = ["--only", "song-fast", "delivery", "sd15", "--budget", "400", "--rows", "batch-1"]
    device.main([*run, "--out", str(tmp_path / "gpu.json")])
    sections = json.loads((tmp_path / "gpu.json").read_text())["sections"]
    assert ran == ["song-fast", "delivery"]  # 100 s left: a song's 150 had been, sd15's 120 are not
    assert sections["sd15"] == {"skipped": f"fewer than {SECTION_ROOM['sd15']:g} s left of the budget of 400 s"}
    ran = gpu_run(monkeypatch, {"song-fast": spent(401.0), "delivery": spent(0.0)})  # a song past the budget
    device.main([*run[:3], "--budget", "400", "--out", str(tmp_path / "again.json")])
    sections = json.loads((tmp_path / "again.json").read_text())["sections"]
    assert ran == ["song-fast"] and sections["delivery"] == {"skipped": "past the budget of 400 s"}
    ran.clear()
    budget = SECTION_ROOM["song-fast"] - 1.0
    device.main(["--only", "song-fast", "--budget", f"{budget:g}", "--out", str(tmp_path / "short.json")])
    section = json.loads((tmp_path / "short.json").read_text())["sections"]["song-fast"]
    assert ran == [] and section == {"skipped": f"fewer than 150 s left of the budget of {budget:g} s"}
