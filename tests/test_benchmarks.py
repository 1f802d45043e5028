"""The benchmark scripts still run, in their smallest setting, and write well-formed JSON; the quality benchmark's
parts."""

import hashlib
import json
from dataclasses import replace

import pytest
import torch

from benchmarks import delivery, elaborate, speed
from benchmarks import quality as quality_benchmark
from benchmarks.peaks import MemorySampler
from benchmarks.render import main
from musicvid.models.precision import Precision
from musicvid.models.readback import describe_model
from musicvid.review.score import RANDOM_WEIGHTS
from musicvid.settings.presets import PRESETS, TINY
from musicvid.settings.resolve import resolve_render_settings


@pytest.mark.slow
@pytest.mark.ci  # (the render benchmark's quick run: nine seconds of the suite's 6 minutes)
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


@pytest.mark.ci  # (the speed benchmark's quick run renders three times; its other runs below stay in the suite)
@pytest.mark.slow
def test_speed_benchmark_quick(tmp_path, capsys):
    levers = ["batch-1", "deep-cache-3", "fast", "fast-32"]
    assert speed.main(["--quick", "--levers", *levers, "--groups", "1", "--out", str(tmp_path / "speed.json")]) == 0
    report = json.loads((tmp_path / "speed.json").read_text())
    rows = report["levers"]
    assert list(rows) == ["baseline", *levers, "baseline-again"]  # the baseline first and last
    # what ran, read back from the pipeline's modules: --fast's decoder is TAESD
    assert report["machine"]["device"].startswith("CPU (") and report["baseline_batch"] == 4
    assert {(r["ran"]["diffusion"]["dtype"], r["ran"]["diffusion"]["device"]) for r in rows.values()} == {
        ("float32", "cpu")
    }
    assert rows["fast"]["ran"]["diffusion"]["weights_gb"] != rows["baseline"]["ran"]["diffusion"]["weights_gb"]
    assert all(r["groups_timed"] == 1 and r["frames_per_second"] > 0 and r["ratio"] > 0 for r in rows.values())
    # the same pictures however many are drawn at once, up to rounding; --deep-cache changes them a little, and
    # --fast draws others, compared with --fast's own
    assert rows["batch-1"]["difference"]["max_difference"] <= 2 and rows["batch-1"]["batch_size"] == 1
    assert rows["deep-cache-3"]["changes_pictures"] and rows["deep-cache-3"]["difference"]["psnr_db"] > 20
    assert "difference" not in rows["fast"] and rows["fast-32"]["difference"]["from"] == "fast"
    assert "baselines" in rows["baseline-again"] and "| deep-cache-3 |" in capsys.readouterr().out


@pytest.mark.ci  # (a whole song rendered by the speed benchmark: fourteen seconds of the suite's 6 minutes)
@pytest.mark.slow
def test_speed_benchmark_quick_with_a_whole_song_names_the_models_it_ran(tmp_path, capsys):
    out = tmp_path / "speed.json"
    assert speed.main(["--quick", "--levers", "batch-1", "--groups", "1", "--song", "4", "--out", str(out)]) == 0
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
    assert song["stage_peak_gb"]["denoise"] > 0 and song["video"]["size"] == [64, 64]
    assert song["kernels_compiled_seconds"] > 0  # librosa's, by a storyboard in a process of its own, before the clock
    assert "song end to end, no options (asr openai-whisper:tiny-random in float32" in capsys.readouterr().out


@pytest.mark.ci  # (the suite's 6 minutes: a second of its area, or a benchmark's quick run)
@pytest.mark.slow
def test_speed_benchmark_quick_sdxl_with_a_reference(tmp_path, capsys):
    out = tmp_path / "speed.json"
    assert speed.main(["--quick", "--sdxl", "--levers", "reference", "--groups", "1", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["settings"].startswith("tiny-random-xl, 64x64")
    assert list(report["levers"]) == ["baseline", "reference", "baseline-again"]
    reference = report["levers"]["reference"]
    assert reference["frames_per_second"] > 0 and "difference" not in reference


@pytest.mark.slow
def test_flops_per_picture_counts_25_guided_steps_and_a_decode_for_both_families(monkeypatch, capsys):
    from musicvid.settings.presets import TINY_XL

    monkeypatch.setattr(speed, "FLOP_COUNTS", ((TINY, 64), (TINY_XL, 64)))
    assert speed.main(["--flops"]) == 0
    counted = json.loads(capsys.readouterr().out)
    assert list(counted) == ["tiny-random 64x64", "tiny-random-xl 64x64"]
    for row in counted.values():
        assert row["guided_step"] >= 0 and row["picture_25_steps"] > 0
        assert row["guided_step"] > row["guided_step_deep_share_2"] > row["guided_step_deep_share_3"] > 0  # 9, 6 of 16
    big = speed.flops_per_picture(TINY, 128)  # four times the pixels: about four times the work
    assert 3 < big["picture_25_steps"] / counted["tiny-random 64x64"]["picture_25_steps"] < 5


@pytest.mark.slow
@pytest.mark.ci  # (the delivery benchmark's quick run: eight seconds of the suite's 6 minutes)
def test_delivery_benchmark_quick(tmp_path, capsys, monkeypatch):
    # half the drawn size and 360p: what is checked is that each part runs and reports, not 1080p's cost
    # (which was 15 s of the suite); the frames between and the upscale are made as they would be there
    monkeypatch.setattr(delivery, "DRAWN", (352, 192))
    monkeypatch.setattr(delivery, "VIDEO", (640, 360))
    out = tmp_path / "delivery.json"
    # x4plus's weights as given (here a tiny one's, saved): its PSNR is told too; x4v3's are random, and it is not
    from spandrel.architectures.ESRGAN import ESRGAN

    torch.save(ESRGAN(num_filters=8, num_blocks=1, scale=4).state_dict(), tmp_path / "x4plus.pth")
    delivery.main(["--quick", "--out", str(out), "--weights", f"x4plus={tmp_path / 'x4plus.pth'}"])
    written = json.loads(out.read_text())
    report = written["delivery"]
    assert report["drawn_frames"] == 10 and report["video_frames"] == 30
    # both learned upscalers counted and timed; the compact one is the cheaper per frame
    x4plus, compact = (row for name, row in written["upscaling"].items() if not name.startswith("lanczos"))
    assert written["machine"]["device"].startswith("CPU (")
    assert x4plus["ran"]["upscaler"]["weights_gb"] > 0 and x4plus["ran"]["upscaler"]["dtype"] == "float32"
    assert 0 < compact["tflop_per_frame"] < x4plus["tflop_per_frame"]
    assert x4plus["batch 1"]["seconds_per_frame"] > 0 and compact["batch 1"]["seconds_per_frame"] > 0
    assert isinstance(x4plus["psnr_db"], float) and compact["psnr_db"] == "random weights: no PSNR"
    lanczos = written["upscaling"]["lanczos (Pillow, in Python)"]  # the yardstick: 27.37 dB, 0.153 of the detail
    assert 26 < lanczos["psnr_db"] < 29 and 0.1 < lanczos["detail_share"] < 0.2 and 0 < x4plus["detail_share"]
    assert x4plus["weights_sha256"] == hashlib.sha256((tmp_path / "x4plus.pth").read_bytes()).hexdigest()
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


def test_the_whole_song_runs_whisper_large_v2_and_vipe_m_through_its_registrys_loaders(tmp_path):
    from accelerate import init_empty_weights

    from benchmarks.whole_song import FULL_SIZE_LOADERS, song_registry
    from musicvid.models.drawing import check_drawing_files
    from musicvid.settings.resolve import resolve_render_settings

    registry = song_registry(True, tmp_path)
    decoder = json.loads((tmp_path / "taesd-random" / "config.json").read_text())  # --fast's, at its published size
    assert decoder["_class_name"] == "AutoencoderTiny" and decoder["decoder_block_out_channels"] == [64] * 4
    fast = resolve_render_settings(registry.models, {"fast": True})
    check_drawing_files(registry.models, fast, references=False, loads=False)  # taken as a model's folder
    assert {role: registry.loaders[role] for role in ("asr", "vipe")} == FULL_SIZE_LOADERS
    assert [registry.named(role)[1] for role in ("asr", "vipe")] == ["openai-whisper:large-v2-random", "vipe-m-random"]
    # what auto takes on a GPU: x4plus (16.7M weights), and with --fast the compact x4v3 (1.2M), each named so
    for role, name, size in (("upscaler", "x4plus", 16.7e6), ("fast_upscaler", "x4v3", 1.21e6)):
        with registry.use(role) as upscaler:
            assert registry.named(role) == ("upscaler", f"{name}-random") and upscaler.scale == 4
            assert sum(p.numel() for p in upscaler.model.parameters()) == pytest.approx(size, rel=0.01)
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
@pytest.mark.ci
def test_the_device_benchmark_dry_run_measures_every_section_and_checks_the_goals(tmp_path, capsys):
    from benchmarks import device

    out = tmp_path / "gpu.json"
    assert device.main(["--dry-run", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    sections = report["sections"]
    assert list(sections) == list(device.DEFAULT)
    assert not [name for name, section in sections.items() if {"error", "skipped", "running"} & set(section)]
    rows = sections["sd15"]["levers"]
    assert list(rows) == ["baseline", *device.DEVICE_ROWS, "baseline-again"]
    assert all(row["groups_timed"] == 2 for row in rows.values())
    assert {"fast", "compile"} <= {name for name, row in rows.items() if "profile" in row}
    for name in ("song-fast", "song-25"):  # the headline: the music-video look, 1080p at 30 frames a second
        song = sections[name]
        assert song["options"]["look"] == "music-video" and song["video"]["size"] == [1920, 1080]
        assert song["video"]["fps"] == 30 and "did_not_finish" not in song and song["stages"]["mux"] > 0
    assert sections["song-fast"]["options"]["fast"] is True
    delivery = sections["delivery"]
    assert delivery["png"]["read_seconds"] > 0 and len(delivery["upscaling"]) == 3
    assert set(sections["quality"]["variants"]) == {"csa", *(v.split("=")[0] for v in device.QUALITY_VARIANTS)}
    checks = [line["check"] for line in report["checks"]]
    song = "3-minute song to a 1080p, 30 fps MP4"
    assert checks == ["dry run", "SD 1.5 512² 25 steps", "--fast", song, "baselines at the start and the end"]
    assert "] 3-minute song to a 1080p, 30 fps MP4: --fast" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.ci
def test_a_song_that_would_run_past_the_budget_is_stopped_and_written_as_such(tmp_path):
    from benchmarks.render import synthesize_song
    from benchmarks.whole_song import whole_song

    made = synthesize_song(tmp_path, 30.0)  # a song made beforehand, as benchmarks.kit sings the headline's
    song = whole_song(180.0, False, tmp_path / "render", {"look": "music-video"}, stop_after=3.0, made=made)
    assert song["did_not_finish"].startswith("stopped after 3 s") and "frames" not in song
    assert song["wall_seconds"] > 0 and song["stages"]
    assert song["voice"] == "given: song-30s.mp3" and song["song_seconds"] == pytest.approx(30.0, abs=0.1)


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


def test_a_stage_no_memory_sample_fell_in_holds_what_the_last_sample_before_it_saw():
    sampler = MemorySampler()  # (its thread never started: the samples are made by hand)
    sampler.samples = [(1.0, 100 * 2**30, 0), (2.0, 300 * 2**30, 0), (5.0, 200 * 2**30, 0)]
    assert sampler.span_gb(1.5, 5.5, column=1) == 300.0
    assert sampler.span_gb(2.5, 4.0, column=1) == 300.0  # between two samples: the one before it
    assert sampler.span_gb(0.0, 0.5, column=1) == 0.0  # before any


@pytest.mark.parametrize(
    "argv, said",
    [
        (["--keep", "KEEP"], "is not an empty folder"),
        (["--variant", "csa=--fast"], "the same folder as 'csa'"),
        (["--variant", "deep cache=", "--variant", "deep-cache=--fast"], "the same folder as 'deep cache'"),
        (["--variant", "../elsewhere=--fast"], "no '/'"),
        (["--variant", "storyboard=--fast"], "no '/'"),
    ],
)
def test_the_quality_benchmark_refuses_a_keep_folder_with_files_and_rows_sharing_a_folder(
    argv, said, tmp_path, monkeypatch, capsys
):
    monkeypatch.setattr(quality_benchmark, "compare", lambda *given: pytest.fail("rendered"))
    (tmp_path / "song.wav").write_text("my own recording")
    with pytest.raises(SystemExit) as refused:
        quality_benchmark.main(["--quick", *(str(tmp_path) if a == "KEEP" else a for a in argv)])
    assert refused.value.code == 2 and said in capsys.readouterr().err
    assert (tmp_path / "song.wav").read_text() == "my own recording"


@pytest.mark.parametrize("argv", [["--quick", "--repeats", "0"], ["--flops", "--frames", "10"], ["--width", "100"]])
def test_the_transitions_benchmark_refuses_bad_flags_before_building_a_model(argv, monkeypatch, capsys):
    from benchmarks import transitions

    monkeypatch.setattr(transitions, "timed_transition", lambda *given: pytest.fail("built"))
    monkeypatch.setattr(transitions, "transition_flops", lambda *given: pytest.fail("counted"))
    with pytest.raises(SystemExit) as refused:
        transitions.main(argv)
    assert refused.value.code == 2 and capsys.readouterr().err.count("error:") == 1


def written(folder) -> dict[str, dict]:
    """The results files a benchmark wrote where it writes by default (its module's `__file__` moved to `folder`)."""
    return {path.name: json.loads(path.read_text()) for path in sorted((folder / "results").glob("*.json"))}


def test_a_quick_command_line_run_says_so_and_never_replaces_the_full_runs_file(tmp_path, monkeypatch):
    from benchmarks import command_line

    row = {"command": "--help", "median_s": 0.3, "min_s": 0.3, "exit_code": 0, "said": "", "imported": []}
    monkeypatch.setattr(command_line, "measure", lambda runs, cwd: [row])
    monkeypatch.setattr(command_line, "__file__", str(tmp_path / "command_line.py"))
    assert command_line.main(["--runs", "3"]) == 0 and command_line.main(["--quick"]) == 0
    host = command_line.platform.node() or "host"
    full, quick = written(tmp_path)[f"command-line-{host}.json"], written(tmp_path)[f"command-line-{host}-quick.json"]
    assert (full["quick"], full["runs_per_command"], quick["quick"], quick["runs_per_command"]) == (False, 3, True, 1)


def test_quick_render_and_delivery_runs_say_so_and_never_replace_the_full_runs_file(tmp_path, monkeypatch):
    import benchmarks.render as render

    monkeypatch.setattr(render, "stage_breakdown", lambda *given: {"models": "tiny"})
    monkeypatch.setattr(render, "markdown", lambda results: "")
    monkeypatch.setitem(delivery.SECTIONS, "delivery", (lambda args: {}, lambda report, device: None))
    for module in (render, delivery):
        monkeypatch.setattr(module, "__file__", str(tmp_path / "benchmark.py"))
    assert main(["--quick", "--phases", "tiny"]) == 0
    delivery.main(["--quick", "--only", "delivery"])
    host = render.platform.node() or "host"
    assert list(written(tmp_path)) == [f"delivery-{host}-quick.json", f"render-{host}-quick.json"]
    assert all(report["quick"] for report in written(tmp_path).values())
