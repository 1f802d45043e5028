"""benchmarks/device.py's checks read pass, fail or not measured, never a section left out; its songs and versions say
what ran; quickly, on the CPU. (Its rows and profile: test_benchmark_rows.py.)"""

import json

import pytest
import torch

from benchmarks import device, device_checks
from benchmarks.device_checks import checks
from benchmarks.steady import baselines
from benchmarks.what_ran import versions
from benchmarks.whole_song import gpu_use, upscaler_used
from musicvid.models.timing import Timings


def report(**sections) -> dict:
    return {"dry_run": False, "sections": sections}


def row(rate: float, fast: bool = False, max_difference: int | None = None, psnr: float | None = None) -> dict:
    found = {"frames_per_second": rate, "fast": fast}
    compared = {"pictures_compared": 8, "max_difference": max_difference, "psnr_db": psnr}
    return found | ({"difference": compared} if max_difference is not None else {})


def drawn(first: float, **others: dict) -> dict:
    """sd15's rows: the baseline at `first` frames/s, `others`, and the baseline again at the same rate."""
    again = row(first) | {"baselines": baselines(row(first), row(first))}
    return {"baseline": row(first), **others, "baseline-again": again}


def song(seconds: float = 180.0, wall: float = 150.0, size: list | None = None, **more) -> dict:
    """A song-fast section that finished in `wall` s, its MP4 probed as `size`, 30 fps, `seconds` long."""
    video = {"size": size or [1920, 1080], "fps": 30.0, "seconds": seconds}
    return {"song_seconds": seconds, "wall_seconds": wall, "random_weights_seconds": 20.0, "video": video} | more


def test_the_checks_read_the_goals_and_say_what_was_not_measured():
    rows = {
        "baseline": row(6.0),
        "compile": row(10.5, max_difference=1),
        "deep-cache-3": row(12.0, max_difference=9, psnr=31.0),
        "fast": row(29.0, fast=True),
        "fast-compile-32": {"what": "f", "fast": True, "skipped": "expected to take 300 s"},
        "attention-unet-flash": {"what": "a", "fast": False, "error": "RuntimeError: no kernel"},
        "baseline-again": row(6.1) | {"baselines": baselines(row(6.0), row(6.1))},
    }
    rows["compile-deep-share-2"] = row(11.0, max_difference=12, psnr=29.0)
    stopped = {"wall_seconds": 200.0, "random_weights_seconds": 20.0, "did_not_finish": "stopped after 200 s"}
    scores = {
        name: {"summary": {"lyric": lyric, "prompt": 0.5}} for name, lyric in [("csa", 0.7), ("deep-share-2", 0.6)]
    }
    between = {"pictures": 9, "psnr_db": 33.5, "worst_psnr_db": 30.1, "clip_image": 0.99, "lowest_clip_image": 0.97}
    scores["deep-share-2"]["against_whole"] = {"keyframes": {"pictures": 2, "psnr_db": None}, "between": between}
    songs = {"song-fast": song(), "song-25": stopped}
    lines = checks(report(sd15={"levers": rows}, quality={"variants": scores}, **songs))
    by = {line["check"]: line for line in lines}
    assert (
        by["SD 1.5 512² 25 steps"]["pass"] is True
        and "10.5 frames/s steady by compile" in by["SD 1.5 512² 25 steps"]["line"]
    )
    assert "deep-cache-3 12.0 frames/s, PSNR 31.0 dB" in by["SD 1.5 512² 25 steps"]["line"]  # beside, not counted
    # each beside its own quality score, a compiled row beside its eager variant's
    assert (
        "deep-cache-3 12.0 frames/s, PSNR 31.0 dB, no quality score in this run" in by["SD 1.5 512² 25 steps"]["line"]
    )
    assert (
        "compile-deep-share-2 11.0 frames/s, PSNR 29.0 dB, quality (random weights) lyric 0.600 vs 0.700"
        in (by["SD 1.5 512² 25 steps"]["line"])
    )  # and, as its keyframes are drawn whole, its frames between set beside those drawn whole
    assert (
        "its frames between against drawn whole: PSNR 33.5 dB, CLIP image 0.97 at lowest"
        in by["SD 1.5 512² 25 steps"]["line"]
    )
    assert by["--fast"]["pass"] is False and by["baselines at the start and the end"]["pass"] is True
    # the best of the rows drawn, and which of the check's rows were not
    assert by["--fast"]["line"].endswith("steady by fast (goal 30); not drawn: fast-compile-32 (skipped)")
    assert "; not drawn: attention-unet-flash (failed)" in by["SD 1.5 512² 25 steps"]["line"]
    song_line = by["3-minute song to a 1080p, 30 fps MP4"]
    assert song_line["pass"] is True and "did not finish (stopped after 200 s)" in song_line["line"]
    # a run cut short: what was not measured says so, never left out
    lines = checks(report(sd15={"running": "started, not finished"}, **{"song-fast": {"skipped": "past the budget"}}))
    assert [line["pass"] for line in lines] == [None, None, None, None]
    assert "skipped: past the budget" in lines[2]["line"] and "[NOT MEASURED]" in lines[3]["line"]


@pytest.mark.ci  # (the suite's 6 minutes: a second of its area, or a benchmark's quick run)
@pytest.mark.slow
def test_a_dry_run_of_some_rows_writes_them_with_their_checks(tmp_path, capsys):
    out = tmp_path / "gpu.json"
    argv = ["--dry-run", "--only", "sd15", "--rows", "deep-cache-3", "--groups", "2", "--out", str(out)]
    assert device.main(argv) == 0
    written = json.loads(out.read_text())
    section = written["sections"]["sd15"]
    assert list(section["levers"]) == ["baseline", "deep-cache-3", "baseline-again"]
    assert section["machine"]["versions"]["torch"] == torch.__version__ and "clocks_at_start" in section["machine"]
    baseline, cached = section["levers"]["baseline"], section["levers"]["deep-cache-3"]
    assert baseline["groups_timed"] == 2 and baseline["frames_per_second"] > 0 and baseline["batch_size"] == 4
    profile = baseline["profile"]  # one more group, split by kind of work, and its attention backends
    assert profile["seconds"]["convolution"] > 0 and profile["seconds"]["vae"] > 0
    assert profile["timed_by"] == "each operation's own CPU time"
    assert set(profile["attention_backends"]["unet"].values()) == {"flash (CPU)"}
    assert cached["difference"]["from"] == "baseline" and cached["changes_pictures"] is True
    assert cached["difference"]["pictures_compared"] == 12 and cached["difference"]["max_difference"] > 2
    assert "baselines" in section["levers"]["baseline-again"]
    assert [line["check"] for line in written["checks"]][0] == "dry run"
    assert "[NOT MEASURED] 3-minute song" in capsys.readouterr().out


def test_a_void_run_or_one_without_its_second_baseline_measures_no_drawing_goal():
    ahead = {"compile": row(12.0, max_difference=1), "fast": row(35.0, fast=True)}
    rows = drawn(11.0, **ahead)
    rows["baseline-again"] = row(8.0) | {"baselines": baselines(row(11.0), row(8.0))}
    by = {line["check"]: line for line in checks(report(sd15={"levers": rows}))}
    for check in ("SD 1.5 512² 25 steps", "--fast"):
        assert by[check]["pass"] is None and "[NOT MEASURED]" in by[check]["line"]
        assert "void: baselines 27.3% apart" in by[check]["line"]
    assert by["baselines at the start and the end"]["pass"] is False
    rows["baseline-again"] = {"what": "the baseline again", "error": "OutOfMemoryError"}
    lines = checks(report(sd15={"levers": rows}))
    assert [line["pass"] for line in lines[:2]] == [None, None]
    assert "the baseline was not drawn again" in lines[1]["line"]
    assert device_checks.void_flag(rows) == {"void": True, "void_because": "the baseline was not drawn again"}
    assert device_checks.void_flag(drawn(11.0)) == {"void": False}


def test_only_rows_whose_pictures_were_compared_and_inductor_compiled_count_toward_the_goal():
    never = row(10.5)  # a reference row: compared with nothing
    none = row(10.6) | {"difference": {"from": "baseline", "pictures_compared": 0}}
    eager = row(20.0, max_difference=0) | {"compile_backend": "eager"}  # compiled nothing
    rows = drawn(4.0, reference=never, **{"deep-cache-3": none, "compile": eager})
    first = checks(report(sd15={"levers": rows}))[0]
    assert first["pass"] is False and "4.0 frames/s steady by baseline" in first["line"]
    rows["compile"] = eager | {"compile_backend": "inductor"}
    assert checks(report(sd15={"levers": rows}))[0]["pass"] is True


def test_a_song_is_graded_on_its_own_mp4_and_one_stopped_before_the_goal_is_not_measured():
    def graded(section: dict, dry: bool = False) -> dict:
        return checks({"dry_run": dry, "sections": {"song-fast": section}})[-2]

    assert graded(song())["pass"] is True
    wrong = graded(song(size=[1280, 720]))
    assert wrong["pass"] is False and "its MP4 is [1280, 720] at 30.0 fps" in wrong["line"]
    assert graded(song(seconds=6.0))["pass"] is None  # not a 3-minute song
    silent = graded(song(voice="none: espeak-ng is not installed, so Whisper aligned nothing"))
    assert silent["pass"] is None and "the song had no voice" in silent["line"]  # Whisper's cost left out
    assert graded(song(voice="given: song-180s.mp3"))["pass"] is True
    stopped = song(wall=100.0, did_not_finish="stopped after 100 s (the run's budget)")
    assert graded(stopped)["pass"] is None and "stopped by the budget before the goal" in graded(stopped)["line"]
    assert graded(song(wall=190.0, did_not_finish="stopped after 190 s"))["pass"] is False
    dry = graded(song(wall=400.0), dry=True)  # a dry run's figures measure nothing: neither pass nor fail
    assert dry["pass"] is None and dry["line"].startswith("[DRY] 3-minute song")


def test_the_versions_name_the_compile_backend_and_what_decides_the_kernels(monkeypatch):
    # (torch's list of backends as musicvid reads it, without dynamo's import: half a minute on a loaded machine)
    monkeypatch.setattr(torch.compiler, "list_backends", lambda exclude_tags=None: ["inductor", "eager"])
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "eager")
    monkeypatch.setenv("TORCHINDUCTOR_MAX_AUTOTUNE", "1")
    found = versions()
    assert found["compile_backend"] == "eager" and found["environment"]["TORCHINDUCTOR_MAX_AUTOTUNE"] == "1"
    assert set(found["allow_tf32"]) == {"matmul", "cudnn"}
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "no-such-backend")
    assert "is not a torch.compile backend" in versions()["compile_backend"]


def test_kernels_that_could_not_be_compiled_beforehand_are_said_and_the_song_goes_on(tmp_path):
    from benchmarks.whole_song import compile_kernels

    said = compile_kernels(tmp_path / "gone.mp3")  # (its storyboard refuses lyrics that are not there)
    assert said.startswith("not compiled beforehand: the storyboard exited 2 (musicvid: ") and "gone.lrc" in said


def test_the_song_names_the_upscaler_its_render_read_back():
    learned = {"name": "x4plus-random", "dtype": "float16", "device": "cuda:0", "weights_gb": 0.03}
    assert upscaler_used({"upscaler": learned}) == "x4plus-random"
    lanczos = {"name": "auto", "dtype": None, "device": None, "weights_gb": 0.0}
    assert upscaler_used({"upscaler": lanczos}) == "none: auto loaded no network (Lanczos)"
    assert upscaler_used({}).startswith("none loaded")


def test_a_row_after_a_failed_baseline_has_no_ratio_and_the_baselines_error_stays(monkeypatch):
    from benchmarks import rows as drawing
    from benchmarks.levers import Lever

    def measure(base_pipe, board, settings, lever, batch, groups):
        if lever.name == "baseline":
            raise RuntimeError("CUDA out of memory (made up)")
        return {"what": lever.what, "fast": False, "frames_per_second": 5.0}, {}

    monkeypatch.setattr(drawing, "measure", measure)
    chosen = [Lever("baseline", "eager"), Lever("batch-1", "one at a time", batch_size=1)]
    found = drawing.run_rows(None, None, None, chosen, 4)
    assert found["baseline"]["error"] == "RuntimeError: CUDA out of memory (made up)"
    assert found["batch-1"]["frames_per_second"] == 5.0 and found["batch-1"]["ratio"] is None
    assert "the baseline failed" in found["batch-1"]["ratio_missing"] and "baselines" not in found["baseline-again"]


def test_the_gpu_is_idle_only_from_the_models_first_work_to_their_last_and_prepare_is_apart():
    timings = Timings()
    timings.intervals = [
        ("decode audio", 0.0, 2.0),  # prepare: nothing has run on the GPU yet
        ("load asr", 4.0, 10.0),
        ("align", 10.0, 20.0),
        ("decode audio", 21.0, 22.0),  # the render's own prepare, between the models' work: the GPU waits
        ("load vipe", 22.0, 25.0),
        ("elaborate", 25.0, 30.0),
        ("denoise", 31.5, 50.0),
        ("mux", 52.0, 55.0),  # after the models' last work: nothing left for the GPU
    ]
    found = gpu_use(timings, started=0.0, wall=56.0)
    assert found["prepare_seconds"] == 10.0 and found["gpu_idle_seconds"] == 6.5  # 40 s from align to denoise's end
    assert found["gpu_busy_share"] == round(33.5 / 56.0, 4)
    assert found["largest_gaps_seconds"] == [(1.5, "elaborate → denoise"), (1.0, "align → decode audio")]
    timings.intervals = timings.intervals[:2]  # stopped before the models' first work: all of it prepare
    assert gpu_use(timings, started=0.0, wall=12.0) | {"gpu_busy_share": 0.0} == {
        "gpu_busy_share": 0.0,
        "prepare_seconds": 12.0,
        "gpu_idle_seconds": 0.0,
        "largest_gaps_seconds": [],
    }


def fake_run(monkeypatch, sections: dict) -> None:
    """device.main with these sections in place of the real ones, and no library versions read (seconds of
    imports)."""
    monkeypatch.setattr(device, "SECTIONS", sections)
    monkeypatch.setattr(device, "versions", dict)


def out_of_memory_at_the_second_row(args, write):
    write({"levers": {"baseline": {"frames_per_second": 12.3, "fast": False}}})  # as drawing_rows does after a row
    raise RuntimeError("CUDA out of memory at the second row")


def test_a_section_that_fails_keeps_its_rows_beside_its_error_and_the_run_goes_on(tmp_path, monkeypatch, capsys):
    def failed_render(args, write):
        raise SystemExit("musicvid render failed (exit 1)")  # as benchmarks.quality's run does

    fine = {"png": {"read_seconds": 0.1}}
    fake_run(
        monkeypatch, {"sd15": out_of_memory_at_the_second_row, "quality": failed_render, "delivery": lambda *_: fine}
    )
    out = tmp_path / "gpu.json"
    assert device.main(["--dry-run", "--only", "sd15", "quality", "delivery", "--out", str(out)]) == 1
    report = json.loads(out.read_text())
    sd15, quality = report["sections"]["sd15"], report["sections"]["quality"]
    assert sd15["levers"]["baseline"]["frames_per_second"] == 12.3 and "running" not in sd15
    assert sd15["error"] == "RuntimeError: CUDA out of memory at the second row" and sd15["seconds"] >= 0
    assert quality["error"] == "SystemExit: musicvid render failed (exit 1)"
    assert report["sections"]["delivery"] == {"seconds": report["sections"]["delivery"]["seconds"], **fine}
    assert report["checks"] and "sections that failed: sd15, quality" in capsys.readouterr().out
    assert list(tmp_path.iterdir()) == [out]  # written through temporaries, none left


def test_a_run_cut_short_lists_every_planned_section_and_how_far_it_got(tmp_path, monkeypatch):
    def interrupted(args, write):
        write({"wall_seconds": 3.0})
        raise KeyboardInterrupt  # a person's Ctrl-C ends the run, as a kill would

    fake_run(monkeypatch, {"sd15": lambda *_: {"levers": {}}, "song-fast": interrupted, "delivery": lambda *_: {}})
    out = tmp_path / "gpu.json"
    with pytest.raises(KeyboardInterrupt):
        device.main(["--dry-run", "--only", "sd15", "song-fast", "delivery", "--out", str(out)])
    sections = json.loads(out.read_text())["sections"]
    assert list(sections) == ["sd15", "song-fast", "delivery"] and sections["sd15"]["levers"] == {}
    assert sections["song-fast"] == {"running": device.CUT_SHORT, "wall_seconds": 3.0}
    assert list(sections["delivery"]) == ["not started"]


def test_on_a_gpu_a_section_past_the_budget_is_skipped_and_a_failure_exits_1(tmp_path, monkeypatch, capsys):
    def past_the_budget_then_out_of_memory(args, write):
        args.started -= args.budget + 1  # as if the section had taken the whole budget
        out_of_memory_at_the_second_row(args, write)

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    fake_run(monkeypatch, {"sd15": past_the_budget_then_out_of_memory, "song-fast": lambda *_: {"wall_seconds": 1.0}})
    out = tmp_path / "gpu.json"
    argv = ["--only", "sd15", "song-fast", "--rows", "batch-1", "--budget", "200", "--out", str(out)]
    assert device.main(argv) == 1
    sections = json.loads(out.read_text())["sections"]
    assert "error" in sections["sd15"] and sections["song-fast"] == {
        "skipped": "fewer than 150 s left of the budget of 200 s"
    }
    assert "sections that failed: sd15 (exit 1)" in capsys.readouterr().out


def test_on_a_gpu_a_compile_backend_other_than_inductor_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    ran = []

    def drawn(args, write):
        ran.append(args)
        return {"levers": {}}

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # a GPU, as far as the benchmark can tell
    monkeypatch.setattr(device, "machine", lambda on: {"device": "a GPU"})
    monkeypatch.setattr(torch.compiler, "list_backends", lambda exclude_tags=None: ["inductor", "eager"])
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "eager")
    fake_run(monkeypatch, {"sd15": drawn, "song-fast": drawn})
    out = tmp_path / "gpu.json"
    for flags in (["--only", "sd15"], ["--only", "song-fast", "--song-compile"]):
        with pytest.raises(SystemExit) as refused:
            device.main(flags + ["--out", str(out)])
        assert refused.value.code == 2 and not ran and not out.exists()
        assert "MUSICVID_COMPILE_BACKEND=eager: on a GPU only rows compiled by inductor" in capsys.readouterr().err
    # rows that compile nothing, inductor's, and a dry run on the CPU run as before
    assert device.main(["--only", "sd15", "--rows", "batch-1", "--out", str(out)]) == 0 and len(ran) == 1
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "inductor")
    assert device.main(["--only", "sd15", "--out", str(out)]) == 0 and len(ran) == 2
    monkeypatch.setenv("MUSICVID_COMPILE_BACKEND", "eager")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.main(["--dry-run", "--only", "sd15", "--out", str(out)]) == 0 and len(ran) == 3


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--groups", "1"], "--groups 1: a row's spread needs 2 groups timed or more"),
        (["--budget", "100"], "--budget is a GPU run's: a dry run measures nothing"),
        (["--only", "sd15", "sd15"], "--only names a section twice"),
        (["--upscaler-weights", "x4plus"], "--upscaler-weights x4plus: give NAME=FILE, NAME x4plus or x4v3"),
        (["--upscaler-weights", "x4plux={weights}"], "give NAME=FILE, NAME x4plus or x4v3, each once"),
        (["--upscaler-weights", "x4plus={tmp}/missing.pth"], "missing.pth is not a file that can be read"),
        (["--out", "{tmp}"], "is a folder: name a file"),
        (["--out", "{notes}"], "is a file this benchmark did not write, and is left as it is"),
        (["--compile-artifacts", "{tmp}"], "is a folder: name a file"),
        (["--compile-artifacts", "{notes}"], "is not torch's mega-cache, and is left as it is"),
        (["--song", "{weights}"], "a readable audio file with its timed lyrics beside it (.lrc) is needed"),
    ],
)
def test_bad_flags_are_refused_in_one_sentence_before_any_work(tmp_path, monkeypatch, capsys, flags, message):
    notes, weights = tmp_path / "notes.txt", tmp_path / "RealESRGAN_x4plus.pth"
    notes.write_text("a person's notes\n")
    weights.write_bytes(b"weights")
    ran = []
    fake_run(monkeypatch, {"sd15": lambda args, write: ran.append(args)})
    monkeypatch.setattr(torch.compiler, "load_cache_artifacts", lambda data: None)  # torch's answer to other bytes
    argv = ["--dry-run", "--only", "sd15", "--out", str(tmp_path / "gpu.json")]
    with pytest.raises(SystemExit) as refused:
        device.main(argv + [flag.format(tmp=tmp_path, notes=notes, weights=weights) for flag in flags])
    assert refused.value.code == 2 and message in capsys.readouterr().err and not ran
    assert notes.read_text() == "a person's notes\n" and not (tmp_path / "gpu.json").exists()


def test_results_go_to_a_new_name_or_replace_an_earlier_results_file_whole(tmp_path, monkeypatch):
    fake_run(monkeypatch, {"sd15": lambda *_: {"levers": {}}})
    out = tmp_path / "gpu.json"
    out.write_text(json.dumps({"machine": {}, "dry_run": True, "sections": {"sdxl": {}}}))
    assert device.main(["--dry-run", "--only", "sd15", "--out", str(out)]) == 0
    assert list(json.loads(out.read_text())["sections"]) == ["sd15"] and list(tmp_path.iterdir()) == [out]
    monkeypatch.setattr(device, "HERE", tmp_path)  # an earlier run's file of the day is kept: the time is added
    (tmp_path / "results").mkdir()
    first = device.results_file("NVIDIA H200")
    first.write_text("{}")
    second = device.results_file("NVIDIA H200")
    assert first.name.startswith("gpu-nvidia-h200-20") and second.stem.startswith(f"{first.stem}-")
    assert not second.exists()
    dry = [device.parse(["--dry-run"]).out for _ in range(2)]  # a fresh file of this run's own
    for path in dry:
        path.unlink()
    assert dry[0] != dry[1] and dry[0].name.startswith("musicvid-gpu-dry-run-")


def test_compile_artifacts_are_saved_or_why_not_written_beside_the_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.compiler, "save_cache_artifacts", lambda: (b"mega-cache", None))
    saved, taken = tmp_path / "saved.bin", tmp_path / "taken.bin"

    def rows_while_a_folder_takes_the_name(args, write):
        taken.mkdir()
        return {"levers": {}}

    fake_run(monkeypatch, {"sd15": lambda *_: {"levers": {}}})
    assert (
        device.main(
            ["--dry-run", "--only", "sd15", "--out", str(tmp_path / "a.json"), "--compile-artifacts", str(saved)]
        )
        == 0
    )
    assert saved.read_bytes() == b"mega-cache"
    fake_run(monkeypatch, {"sd15": rows_while_a_folder_takes_the_name})
    argv = ["--dry-run", "--only", "sd15", "--out", str(tmp_path / "b.json"), "--compile-artifacts", str(taken)]
    assert device.main(argv) == 0
    sd15 = json.loads((tmp_path / "b.json").read_text())["sections"]["sd15"]
    assert sd15["compile_artifacts_error"].startswith("IsADirectoryError") and sd15["levers"] == {}
