"""The benchmark script still runs, in its smallest setting, and writes well-formed JSON."""

import json

import pytest

from benchmarks import delivery, elaborate, speed
from benchmarks.render import main

pytestmark = pytest.mark.slow


def test_render_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["--quick", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    run = results["stage_breakdown"][0]
    assert run["models"] == "tiny" and run["pictures_drawn"] > 0 and run["frames_per_second"] > 0
    assert {"denoise", "decode", "write frames", "mux"} <= set(run["stages"])
    assert abs(sum(run["share"].values()) - 1.0) < 1e-3
    assert all(v > 0 for v in run["peak_rss_mib"].values())
    assert [r["song_seconds"] for r in results["scaling"]] == [3]
    assert [r["batch_size"] for r in results["batch_sweep"]] == [1, 2]
    assert "Stage breakdown" in capsys.readouterr().out


def test_elaborate_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert elaborate.main(["--quick", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["candidates"] for r in rows] == [1, 2] and all(r["scenes"] == 4 for r in rows)
    # the end-of-text embedding is shrunk: every candidate runs to the 50-token limit, the worst case
    # (counted again from the cleaned text, so roughly)
    assert all(r["new_tokens"] >= 0.9 * 50 * 4 * r["candidates"] for r in rows)
    assert "| candidates |" in capsys.readouterr().out


def test_speed_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "speed.json"
    assert (
        speed.main(["--quick", "--levers", "blocks-8", "inputs-ahead", "fast-8", "--pictures", "16", "--out", str(out)])
        == 0
    )
    rows = json.loads(out.read_text())["levers"]
    assert list(rows) == ["baseline", "blocks-8", "inputs-ahead", "fast-8"]
    assert all(r["pictures"] == 16 and r["frames_per_second"] > 0 and r["ratio"] > 0 for r in rows.values())
    # the same pictures however they are grouped or prepared, up to rounding; --fast draws others
    assert all(rows[n]["max_difference"] <= 2 for n in ("blocks-8", "inputs-ahead"))
    assert "max_difference" not in rows["fast-8"]
    assert "| fast-8 |" in capsys.readouterr().out


def test_speed_benchmark_quick_sdxl_with_a_reference(tmp_path, capsys):
    out = tmp_path / "speed.json"
    assert speed.main(["--quick", "--sdxl", "--levers", "reference", "--pictures", "8", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["settings"].startswith("tiny-random-xl, 64x64") and list(report["levers"]) == [
        "baseline",
        "reference",
    ]
    assert (
        report["levers"]["reference"]["frames_per_second"] > 0 and "max_difference" not in report["levers"]["reference"]
    )


def test_flops_per_picture_counts_25_guided_steps_and_a_decode_for_both_families(monkeypatch, capsys):
    from musicvid.models.presets import TINY, TINY_XL

    monkeypatch.setattr(speed, "FLOP_COUNTS", ((TINY, 64), (TINY_XL, 64)))
    assert speed.main(["--flops"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert list(counted) == ["tiny-random 64x64", "tiny-random-xl 64x64"]
    for row in counted.values():
        assert row["guided_step"] >= 0 and row["picture_25_steps"] > 0
    big = speed.flops_per_picture(TINY, 128)  # four times the pixels: about four times the work
    assert 3 < big["picture_25_steps"] / counted["tiny-random 64x64"]["picture_25_steps"] < 5


def test_delivery_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "delivery.json"
    delivery.main(["--quick", "--out", str(out)])
    written = json.loads(out.read_text())
    report = written["delivery"]
    assert report["drawn_frames"] == 10 and report["video_frames"] == 30
    # both learned upscalers counted and timed; the compact one is the cheaper per frame
    x4plus, compact = (row for name, row in written["upscaling"].items() if not name.startswith("lanczos"))
    assert 0 < compact["tflop_per_frame"] < x4plus["tflop_per_frame"]
    assert x4plus["batch 1"]["seconds_per_frame"] > 0 and compact["batch 1"]["seconds_per_frame"] > 0
    rows = report["look"]
    assert len(rows) == 1 + len(delivery.INTERPOLATORS)  # the way before, and one ffmpeg per interpolator
    # every way delivers the same clip well: the PSNR of an H.264 at CRF 18 against the frames unencoded
    assert all(r["frames_per_second"] > 0 and r["megabytes"] > 0 and r["psnr"] > 40 for r in rows.values())
    assert "Delivering the music-video look" in capsys.readouterr().out


def test_transition_flops_count_each_candidates_steps_decode_and_encode(tmp_path, capsys):
    from benchmarks import transitions

    out = tmp_path / "flops.json"
    assert transitions.main(["--flops", "--width", "64", "--height", "64", "--frames", "9", "--out", str(out)]) == 0
    counted = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == counted
    rows = counted["candidates"]
    assert set(rows) == {
        "ltx-video-0.9.5",
        "ltx-video-distilled",
        "wan-2.1-vace-1.3b",
        "wan-2.1-flf2v-14b",
        "slerp-sd15",
    }
    for row in rows.values():
        assert row["tflop_per_step"] > 0 and row["tflop_decode"] > 0 and row["tflop_per_transition"] > 0
        # each value is rounded to 4 significant digits, the step's error then multiplied by the steps
        whole = row["steps"] * row["tflop_per_step"] + row["tflop_decode"] + row["tflop_encode"]
        assert row["tflop_per_transition"] == pytest.approx(whole, rel=2e-3)
        seconds = counted["seconds_of_video"]
        assert row["tflop_per_second_of_video"] == pytest.approx(row["tflop_per_transition"] / seconds, rel=2e-3)
    guided, distilled = rows["ltx-video-0.9.5"], rows["ltx-video-distilled"]
    assert (guided["batch"], distilled["batch"]) == (2, 1)
    assert 1.9 < guided["tflop_per_step"] / distilled["tflop_per_step"] < 2.1  # both passes of guidance: twice
    assert distilled["tflop_per_transition"] < guided["tflop_per_transition"]
    assert rows["wan-2.1-flf2v-14b"]["fits_24gb"] is False


def test_a_transition_is_timed_through_musicvids_own_drawing(tmp_path, capsys):
    from benchmarks import transitions

    out = tmp_path / "timed.json"
    assert transitions.main(["--quick", "--repeats", "1", "--out", str(out)]) == 0
    timed = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == timed
    assert (timed["frames"], timed["steps"], len(timed["all_seconds"])) == (9, 2, 2)  # a warm-up and one timed
    assert timed["seconds_per_transition"] > 0
    assert timed["seconds_per_second_of_video"] == pytest.approx(timed["seconds_per_transition"] / 0.8, rel=0.05)
