"""The benchmark scripts still run, in their smallest setting, and write well-formed JSON; the quality benchmark's
parts."""

import json
from dataclasses import replace

import pytest
import torch

from benchmarks import delivery, elaborate, speed
from benchmarks import quality as quality_benchmark
from benchmarks.render import main
from musicvid.models.precision import Precision
from musicvid.models.readback import describe_model
from musicvid.review.score import RANDOM_WEIGHTS
from musicvid.settings.presets import PRESETS, TINY
from musicvid.settings.render import resolve_render_settings


@pytest.mark.slow
def test_render_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(["--quick", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    run = results["stage_breakdown"][0]
    assert run["models"] == "tiny" and run["pictures_drawn"] > 0 and run["frames_per_second"] > 0
    # what ran, read back from the modules, on which machine
    assert results["machine"]["device"].startswith("CPU (") and run["ran"]["diffusion"]["device"] == "cpu"
    assert {"denoise", "decode", "write frames", "mux"} <= set(run["stages"])
    assert abs(sum(run["share"].values()) - 1.0) < 1e-3
    assert all(v > 0 for v in run["peak_rss_mib"].values())
    assert [r["song_seconds"] for r in results["scaling"]] == [3]
    assert [r["batch_size"] for r in results["batch_sweep"]] == [1, 2]
    assert "Stage breakdown" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.ci
def test_elaborate_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert elaborate.main(["--quick", "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [r["candidates"] for r in rows] == [1, 2] and all(r["scenes"] == 4 for r in rows)
    # the end-of-text embedding is shrunk: every candidate runs to the 50-token limit, the worst case
    # (counted again from the cleaned text, so roughly)
    assert all(r["new_tokens"] >= 0.9 * 50 * 4 * r["candidates"] for r in rows)
    assert "| candidates |" in capsys.readouterr().out


@pytest.mark.slow
def test_speed_benchmark_quick(tmp_path, capsys):
    out = tmp_path / "speed.json"
    assert (
        speed.main(["--quick", "--levers", "blocks-8", "inputs-ahead", "fast-8", "--pictures", "16", "--out", str(out)])
        == 0
    )
    report = json.loads(out.read_text())
    rows = report["levers"]
    assert list(rows) == ["baseline", "blocks-8", "inputs-ahead", "fast-8"]
    # what ran, read back from the pipeline's modules: --fast's decoder is TAESD
    assert report["machine"]["device"].startswith("CPU (")
    assert {(r["ran"]["diffusion"]["dtype"], r["ran"]["diffusion"]["device"]) for r in rows.values()} == {
        ("float32", "cpu")
    }
    assert (
        {r["ran"]["diffusion"]["weights_gb"] for r in rows.values() if r is not rows["fast-8"]}
        == {rows["baseline"]["ran"]["diffusion"]["weights_gb"]}
        != {rows["fast-8"]["ran"]["diffusion"]["weights_gb"]}
    )
    assert all(r["pictures"] == 16 and r["frames_per_second"] > 0 and r["ratio"] > 0 for r in rows.values())
    # the same pictures however they are grouped or prepared, up to rounding; --fast draws others
    assert all(rows[n]["max_difference"] <= 2 for n in ("blocks-8", "inputs-ahead"))
    assert "max_difference" not in rows["fast-8"]
    assert "| fast-8 |" in capsys.readouterr().out


@pytest.mark.slow
def test_speed_benchmark_quick_with_a_whole_song_names_the_models_it_ran(tmp_path, capsys):
    out = tmp_path / "speed.json"
    assert speed.main(["--quick", "--levers", "blocks-8", "--pictures", "4", "--song", "4", "--out", str(out)]) == 0
    song = json.loads(out.read_text())["song"]
    assert (
        song["frames"] == 40 and song["pictures_drawn"] > 0 and {"align", "elaborate", "denoise"} <= set(song["stages"])
    )
    models = song["models"]  # without a GPU: the tiny ones, as each stage left its model
    assert {role: models[role]["name"] for role in ("asr", "vipe")} == {
        "asr": "openai-whisper:tiny-random",
        "vipe": "tiny-random",
    }
    assert all(m["dtype"] == "float32" and m["device"] == "cpu" for m in models.values())
    assert "song end to end (asr openai-whisper:tiny-random in float32" in capsys.readouterr().out


@pytest.mark.slow
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


@pytest.mark.slow
def test_flops_per_picture_counts_25_guided_steps_and_a_decode_for_both_families(monkeypatch, capsys):
    from musicvid.settings.presets import TINY_XL

    monkeypatch.setattr(speed, "FLOP_COUNTS", ((TINY, 64), (TINY_XL, 64)))
    assert speed.main(["--flops"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert list(counted) == ["tiny-random 64x64", "tiny-random-xl 64x64"]
    for row in counted.values():
        assert row["guided_step"] >= 0 and row["picture_25_steps"] > 0
    big = speed.flops_per_picture(TINY, 128)  # four times the pixels: about four times the work
    assert 3 < big["picture_25_steps"] / counted["tiny-random 64x64"]["picture_25_steps"] < 5


@pytest.mark.slow
def test_delivery_benchmark_quick(tmp_path, capsys, monkeypatch):
    # half the drawn size and 360p: what is checked is that each part runs and reports, not 1080p's cost
    # (which was 15 s of the suite); the frames between and the upscale are made as they would be there
    monkeypatch.setattr(delivery, "DRAWN", (352, 192))
    monkeypatch.setattr(delivery, "VIDEO", (640, 360))
    out = tmp_path / "delivery.json"
    delivery.main(["--quick", "--out", str(out)])
    written = json.loads(out.read_text())
    report = written["delivery"]
    assert report["drawn_frames"] == 10 and report["video_frames"] == 30
    # both learned upscalers counted and timed; the compact one is the cheaper per frame
    x4plus, compact = (row for name, row in written["upscaling"].items() if not name.startswith("lanczos"))
    assert written["machine"]["device"].startswith("CPU (")
    assert x4plus["ran"]["upscaler"]["weights_gb"] > 0 and x4plus["ran"]["upscaler"]["dtype"] == "float32"
    assert 0 < compact["tflop_per_frame"] < x4plus["tflop_per_frame"]
    assert x4plus["batch 1"]["seconds_per_frame"] > 0 and compact["batch 1"]["seconds_per_frame"] > 0
    rows = report["look"]
    assert len(rows) == 1 + len(delivery.INTERPOLATORS)  # the way before, and one ffmpeg per interpolator
    # every way delivers the same clip well: the PSNR of an H.264 at CRF 18 against the frames unencoded
    assert all(r["frames_per_second"] > 0 and r["megabytes"] > 0 and r["psnr"] > 40 for r in rows.values())
    assert "Delivering the music-video look" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.ci
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


@pytest.mark.slow
def test_a_transition_is_timed_through_musicvids_own_drawing(tmp_path, capsys):
    from benchmarks import transitions

    out = tmp_path / "timed.json"
    assert transitions.main(["--quick", "--repeats", "1", "--out", str(out)]) == 0
    timed = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == timed
    assert (timed["frames"], timed["steps"], len(timed["all_seconds"])) == (9, 2, 2)  # a warm-up and one timed
    assert timed["seconds_per_transition"] > 0
    assert timed["machine"]["device"].startswith("CPU (") and timed["ran"]["video"]["device"] == "cpu"
    assert timed["seconds_per_second_of_video"] == pytest.approx(timed["seconds_per_transition"] / 0.8, rel=0.05)


def test_the_whole_song_runs_whisper_large_v2_and_vipe_m_through_its_registrys_loaders():
    from accelerate import init_empty_weights

    from benchmarks.whole_song import FULL_SIZE_LOADERS, song_registry

    registry = song_registry(full_size=True)
    assert {role: registry.loaders[role] for role in ("asr", "vipe")} == FULL_SIZE_LOADERS
    assert [registry.named(role)[1] for role in ("asr", "vipe")] == ["openai-whisper:large-v2-random", "vipe-m-random"]
    # built as on a GPU in float16, with no weights: on the meta device (Whisper's parameters alone, by
    # accelerate's init_empty_weights: its sparse buffer has no meta kernel; GPT-2's whole, whose tied
    # embeddings init_empty_weights would untie)
    meta, on_a_gpu = torch.device("meta"), Precision.resolve("float16", torch.device("cuda"))
    with init_empty_weights():
        asr = registry.loaders["asr"](registry.models, meta, on_a_gpu)
    with meta:
        vipe = registry.loaders["vipe"](registry.models, meta, on_a_gpu)

    dims = asr.model.dims  # large-v2's
    assert (dims.n_audio_state, dims.n_text_state, dims.n_audio_layer, dims.n_text_layer) == (1280, 1280, 32, 32)
    assert dims.n_vocab == 51865 and len(asr.model.encoder.blocks) == len(asr.model.decoder.blocks) == 32
    assert sum(p.numel() for p in asr.model.parameters()) == pytest.approx(1.55e9, rel=0.01)
    assert describe_model(asr)["dtype"] == "float16" and describe_model(asr)["device"] == "meta"
    assert asr.model.encoder.ln_post.weight.dtype == torch.float32  # half_whisper's LayerNorms

    config = vipe.model.config  # GPT-2 Medium's, with GPT-2's vocabulary
    assert (config.n_embd, config.n_layer, config.n_head, config.vocab_size) == (1024, 24, 16, 50257)
    assert sum(p.numel() for p in vipe.model.parameters()) == pytest.approx(3.55e8, rel=0.01)
    assert describe_model(vipe)["dtype"] == "float16"


@pytest.mark.slow
def test_the_device_benchmark_dry_run_measures_every_section_and_reads_back_what_ran(tmp_path, capsys):
    from benchmarks import device

    out = tmp_path / "gpu.json"
    assert device.main(["--dry-run", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    sections = report["sections"]
    assert list(sections) == list(device.SECTIONS)
    assert not [name for name, section in sections.items() if "error" in section or "skipped" in section]
    for family in ("zimage", "klein"):
        row = sections["pictures"][family]
        assert row["ran"]["transformer"]["dtype"] == "bfloat16"
        assert row["batch_4"]["seconds_per_keyframe"] > 0
    for family in ("wan-flf2v", "ltx2"):
        row = sections["video"][family]
        assert row["ran"]["transformer"]["dtype"] == "bfloat16"
        assert row["clip_seconds_at_card_steps"] >= row["decode_seconds"]
    assert sections["sd15"]["levers"]["baseline"]["frames_per_second"] > 0
    assert sections["song"]["frames"] > 0


@pytest.mark.slow
@pytest.mark.ci
def test_the_quality_benchmark_compares_csa_slerp_and_4_candidates_as_a_check_of_the_mechanics(tmp_path, capsys):
    out = tmp_path / "quality.json"
    assert quality_benchmark.main(["--quick", "--out", str(out), "--variant", "fewer steps=--steps 2"]) == 0
    result = json.loads(out.read_text())
    variants = result["variants"]
    assert list(variants) == ["csa", "slerp", "4 candidates", "fewer steps"] and result["note"] == RANDOM_WEIGHTS
    assert variants["slerp"]["options"] == ["--no-align"]
    for row in variants.values():
        assert row["summary"]["mean_step"] > 0 and 0 < row["summary"]["largest_step_share"] <= 1
        assert row["summary"]["prompt"] is not None and row["smoothness"]
    # one storyboard: the best of 4 draws four candidates for each keyframe csa draws one for, at four times the
    # TFLOP (the same steps and size); fewer steps cost less per candidate
    one, four = variants["csa"]["picks"], variants["4 candidates"]["picks"]
    assert (one["candidates"], four["candidates"]) == (1, 4)
    assert four["candidates_drawn"] == 4 * one["candidates_drawn"] > 0
    assert four["tflop"] == pytest.approx(4 * one["tflop"], rel=1e-3) and one["tflop_per_candidate"] > 0
    assert 0 < variants["fewer steps"]["picks"]["tflop_per_candidate"] < one["tflop_per_candidate"]
    assert four["seconds"] > 0 and four["pictures_denoised"] == one["pictures_denoised"] + 3 * one["candidates_drawn"]
    printed = capsys.readouterr().out
    assert "| csa |" in printed and "| slerp |" in printed and "mechanics" in printed
    assert "Keyframe picks" in printed and "| 4 candidates | 4 |" in printed


def test_a_candidates_tflop_is_its_steps_of_the_unet_twice_with_guidance_and_a_decode():
    models = PRESETS["tiny"]

    def tflop(**given) -> float:
        return quality_benchmark.tflop_per_candidate(models, resolve_render_settings(models, given))

    unguided, twice_the_steps = tflop(steps=4, guidance=1.0), tflop(steps=8, guidance=1.0)
    step = (twice_the_steps - unguided) / 4
    decode = unguided - 4 * step
    assert step > 0 and decode > 0
    assert tflop(steps=4, guidance=7.5) == pytest.approx(decode + 2 * 4 * step, rel=1e-6)  # the unguided twin


def test_a_variant_is_a_name_and_render_options():
    variant = quality_benchmark.parse_variant("4 candidates=--keyframe-candidates 4")
    assert variant == quality_benchmark.Variant("4 candidates", ("--keyframe-candidates", "4"))
    assert [v.name for v in quality_benchmark.VARIANTS] == ["csa", "slerp", "4 candidates"]
    assert quality_benchmark.random_weights(PRESETS["tiny"])
    assert not quality_benchmark.random_weights(PRESETS["default"])
    assert quality_benchmark.random_weights(replace(PRESETS["default"], scorer=TINY))
