"""Pictures that show the lyric, measured: the scorer (CLIPScore of a keyframe against its prompt and its lyric),
its stand-in loaded by hub name, the scores on the contact sheet, and `musicvid score` on a render (the
quality benchmark's own test: tests/test_benchmarks.py).

Random weights cannot tell a red picture from a blue one, so these check the mechanics: a pair scores the
same wherever it falls in a batch, distinct texts score apart, and the figures are where they belong."""

import json
import logging
import shutil

import numpy as np
import pytest
import torch
from PIL import Image

from musicvid.core.workdir import Workdir
from musicvid.lyrics.transcript import Line, Transcript
from musicvid.models import scorer as scorer_module
from musicvid.models.choose import choose_models
from musicvid.models.kinds import ModelUnavailable
from musicvid.models.registry import ModelRegistry
from musicvid.models.scorer import load_scorer
from musicvid.pictures.schedule import frame_schedule
from musicvid.pictures.scores import SceneScores, clip_score, rank_candidates, score_keyframes
from musicvid.review.chart import PICK_HEIGHT
from musicvid.review.chart import chart as score_chart
from musicvid.review.score import RANDOM_WEIGHTS, summary_text
from musicvid.review.sheet import contact_sheet, sheet_size
from musicvid.settings.presets import PRESETS, SCORER, TINY
from musicvid.storyboard.board import load_storyboard, parse_storyboard
from tests.helpers import run, valid_board

CPU = torch.device("cpu")
TEXTS = ["a red picture", "a blue picture", "rivers made of glass", "the sky is burning"]


def pictures(count: int, size: int = 64) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.integers(0, 256, (size, size, 3), dtype=np.uint8) for _ in range(count)]


@pytest.fixture(scope="module")
def tiny_scorer():
    return load_scorer(TINY, CPU)


def test_clip_score_is_two_and_a_half_times_the_cosine_above_zero():
    assert clip_score(0.3) == pytest.approx(0.75) and clip_score(-0.2) == 0.0 and clip_score(1.0) == 2.5
    assert np.allclose(clip_score(np.array([0.2, -1.0, 0.4])), [0.5, 0.0, 1.0])


def test_a_pair_scores_the_same_in_any_batch_and_order_and_distinct_texts_score_apart(tiny_scorer, monkeypatch):
    images = pictures(4)
    whole = tiny_scorer.score(images, TEXTS)
    assert whole.shape == (4,) and np.all(np.abs(whole) <= 1)
    assert np.allclose(tiny_scorer.score(images[::-1], TEXTS[::-1]), whole[::-1], atol=1e-5)
    assert np.allclose(tiny_scorer.score([images[1]] * 2, [TEXTS[1]] * 2), whole[1], atol=1e-5)
    monkeypatch.setattr(scorer_module, "BATCH", 3)  # batches of 3 and 1
    assert np.allclose(tiny_scorer.score(images, TEXTS), whole, atol=1e-5)
    # the text tower pools where each text ends: one picture against four texts gives four scores
    assert len(set(np.round(tiny_scorer.score([images[0]] * 4, TEXTS), 5))) == 4
    # a picture as a PIL image or as its pixels is the same picture
    assert np.allclose(tiny_scorer.score([Image.fromarray(images[2])], TEXTS[2:3]), whole[2], atol=1e-5)
    with pytest.raises(ValueError, match="in pairs"):
        tiny_scorer.score(images, TEXTS[:2])


def test_a_scene_without_words_gets_no_lyric_score(tiny_scorer):
    scored = score_keyframes(tiny_scorer, pictures(3), TEXTS[:3], ["the sky is burning", None, "  "])
    assert [s.lyric is None for s in scored] == [False, True, True]
    assert all(0 <= s.prompt <= 2.5 for s in scored) and 0 <= scored[0].lyric <= 2.5
    assert score_keyframes(tiny_scorer, [], [], []) == []


def test_candidates_rank_by_the_mean_of_lyric_and_prompt_then_by_the_lyric():
    candidates = [
        SceneScores(lyric=0.5, prompt=0.9),  # mean 0.7
        SceneScores(lyric=0.8, prompt=0.8),  # mean 0.8: best
        SceneScores(lyric=0.9, prompt=0.5),  # mean 0.7, a better lyric than the first
        SceneScores(lyric=0.1, prompt=0.2),
    ]
    assert rank_candidates(candidates) == [1, 2, 0, 3]
    # without a lyric, the prompt alone
    assert rank_candidates([SceneScores(None, 0.6), SceneScores(None, 0.9)]) == [1, 0]
    assert rank_candidates([]) == []
    for scored in candidates + [SceneScores(None, 0.6)]:
        assert SceneScores.from_dict(json.loads(json.dumps(scored.to_dict()))) == scored


def test_the_tiny_preset_scores_with_the_tiny_scorer_and_scorer_overrides_it():
    assert PRESETS["default"].scorer == SCORER == "openai/clip-vit-large-patch14"
    assert PRESETS["tiny"].scorer == TINY and PRESETS["sdxl"].scorer == SCORER
    assert choose_models("tiny", scorer="yuvalkirstain/PickScore_v1").scorer == "yuvalkirstain/PickScore_v1"


def test_a_scorer_that_cannot_be_loaded_is_one_sentence_naming_scorer():
    with pytest.raises(ModelUnavailable) as refused:
        load_scorer("nobody/no-such-model", CPU)  # offline (conftest), and in no cache
    message = str(refused.value)
    assert "'nobody/no-such-model'" in message and "pass a local copy with --scorer PATH" in message
    assert "\n" not in message


@pytest.mark.slow
def test_the_scorer_stand_in_loads_by_hub_name_offline_through_the_registry(standin_hub):
    snapshot = next((standin_hub / f"models--{SCORER.replace('/', '--')}" / "snapshots").iterdir())
    assert sorted(p.name for p in snapshot.iterdir()) == [
        "README.md",
        "config.json",
        "merges.txt",
        "model.safetensors",
        "preprocessor_config.json",
        "pytorch_model.bin",
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.json",
    ]
    config = json.loads((snapshot / "config.json").read_text())
    assert config["architectures"] == ["CLIPModel"] and {"text_config_dict", "vision_config_dict"} <= set(config)
    registry = ModelRegistry(PRESETS["default"], "cpu")
    with registry.use("scorer") as scorer:
        assert scorer.name == SCORER
        assert (
            scorer.model.config.vision_config.image_size == 224 and scorer.model.config.vision_config.patch_size == 14
        )
        assert scorer.processor.image_processor.crop_size["height"] == 224
        # the config's text_config_dict names the tokenizer's own end of text: each text pools where it ends
        assert scorer.model.config.text_config.eos_token_id == scorer.processor.tokenizer.eos_token_id
        assert len(set(np.round(scorer.score(pictures(1) * 4, TEXTS), 5))) == 4
    assert registry.loads == {"scorer": 1}


def test_a_scorer_folder_without_its_processors_files_is_refused_before_any_work(standin_hub, tmp_path):
    """Its model whole, it would load no processor after the storyboard (and say to download it)."""
    import shutil

    from musicvid.core.errors import UserError
    from musicvid.models.names import check_model

    snapshot = next((standin_hub / f"models--{SCORER.replace('/', '--')}" / "snapshots").iterdir())
    folder = shutil.copytree(snapshot, tmp_path / "clip")
    check_model("scorer", str(folder))
    (folder / "preprocessor_config.json").unlink()
    with pytest.raises(UserError, match=f"^--scorer {folder} holds no preprocessor_config.json"):
        check_model("scorer", str(folder))


def test_the_contact_sheet_prints_each_scored_scenes_scores(tmp_path):
    board = parse_storyboard(valid_board())
    workdir = Workdir(tmp_path)
    for scene, picture in enumerate(pictures(2)):
        workdir.keyframes.mkdir(exist_ok=True)
        Image.fromarray(picture).save(workdir.keyframe(scene))
    plain = contact_sheet(board, workdir, [0, 1])
    scored = contact_sheet(board, workdir, [0, 1], {0: SceneScores(None, 0.61), 1: SceneScores(0.71, 0.83)})
    assert plain.size == sheet_size(2, (64, 64)) and scored.size == sheet_size(2, (64, 64), scored=True)
    assert scored.height > plain.height  # a line for the scores under each cell
    thumbnails = 12 + 256  # the gap above them, and their height
    assert np.array_equal(np.asarray(scored)[:thumbnails], np.asarray(plain)[:thumbnails])
    assert not np.array_equal(np.asarray(scored)[: plain.height], np.asarray(plain))  # the scores' line


def test_scoring_a_folder_that_holds_no_render_is_one_sentence_and_exit_2(capsys, tmp_path):
    code, out, err = run(capsys, "score", tmp_path / "missing", "--models", "tiny")
    assert code == 2 and "does not exist" in err and err.count("\n") == 1 and not out
    code, _, err = run(capsys, "score", tmp_path, "--models", "tiny")
    assert code == 2 and "holds no storyboard.json" in err
    code, _, err = run(capsys, "score", tmp_path, "--fps", "0")
    assert code == 2 and "--fps must be from 1 to 60" in err


@pytest.fixture(scope="module")
def renders(tone_render, tone_render_slerp, tmp_path_factory):
    """One song rendered with the tiny models, with CSA morphs and with plain slerp: copies of conftest's shared
    renders (scoring one writes into it)."""
    folder = tmp_path_factory.mktemp("scores")
    shutil.copytree(tone_render / "w", folder / "csa", symlinks=True)
    shutil.copytree(tone_render_slerp, folder / "slerp", symlinks=True)
    return tone_render / "song.mp3", folder


@pytest.mark.slow
def test_musicvid_score_reports_scores_smoothness_and_onsets_of_a_render(renders, capsys):
    _, folder = renders
    code, out, _ = run(capsys, "score", folder / "csa", "--models", "tiny", "--json")
    assert code == 0
    report = json.loads((folder / "csa" / "score.json").read_text())
    assert json.loads(out) == report and report["note"] == RANDOM_WEIGHTS
    assert (report["fps"], report["fps_from"]) == (10, "timings.json")  # the rate the render recorded
    board = load_storyboard(folder / "csa" / "storyboard.json")
    schedule = frame_schedule([s.start for s in board.scenes], board.duration, 10)
    assert [row["scene"] for row in report["scenes"]] == schedule.shown_scenes
    # each keyframe's pick: one candidate, the scene's own seed, scored by the render (and here again, alike)
    for row in report["scenes"]:
        scene = board.scenes[row["scene"]]
        assert row["pick"] == {
            "seed": scene.seed,
            "from_seed": scene.seed,
            "kept": 0,
            "rounds": 1,
            "drawn": 1,
            "scorer": TINY,
        }
        assert row["prompt"] == pytest.approx(scene.pick.prompt, abs=1e-3)
    assert "picks: 3 keyframes, one candidate each, scored" in summary_text(report)
    # the chart shows the picks in a band of their own
    unpicked = {**report, "scenes": [{k: v for k, v in row.items() if k != "pick"} for row in report["scenes"]]}
    assert score_chart(report, ["x"]).height == score_chart(unpicked, ["x"]).height + PICK_HEIGHT
    for row in report["scenes"]:
        assert 0 <= row["prompt"] <= 2.5
        if board.scenes[row["scene"]].kind == "lyric":
            assert 0 <= row["lyric"] <= 2.5 and row["lyric_text"] == board.scenes[row["scene"]].text
        else:
            assert row["lyric"] is None and row["note"].startswith("no lyric")
    morphs = [(s.scene, s.target) for s in schedule.segments if s.target is not None]
    assert [(m["scene"], m["target"]) for m in report["smoothness"]] == morphs
    assert all(m["mean_step"] > 0 and 1 / m["steps"] <= m["largest_step_share"] <= 1 for m in report["smoothness"])
    beats = report["beat_alignment"]
    assert beats["changes"] == len(morphs) and beats["mean_seconds"] >= 0 and beats["chance_mean_seconds"] > 0
    assert "transcript.json" in report["lyric_timing"]["missing"]  # the lyrics came timed
    with Image.open(folder / "csa" / "score.png") as chart:
        chart.verify()
    # the contact sheet is drawn again with the scores
    with Image.open(folder / "csa" / "contact_sheet.png") as sheet:
        assert sheet.size == sheet_size(len(schedule.shown_scenes), (64, 64), scored=True)


@pytest.mark.slow
def test_score_reads_the_scorer_and_the_rate_the_render_used(renders, capsys):
    _, folder = renders
    code, out, err = run(capsys, "score", folder / "csa", "--json")  # no --models tiny: the render's, recorded
    assert code == 0, err
    report = json.loads(out)
    assert (report["scorer"], report["note"], report["fps_from"]) == (TINY, RANDOM_WEIGHTS, "timings.json")
    # a scorer given is the person's choice over the record (offline, and in no cache: it cannot load)
    code, _, err = run(capsys, "score", folder / "csa", "--scorer", "someone/absent-scorer")
    assert code == 2 and "could not load the scorer model 'someone/absent-scorer'" in err


@pytest.mark.slow
def test_a_plain_slerp_render_has_its_own_smoothness_and_lyric_timing_reads_the_transcript(renders, capsys, caplog):
    song, folder = renders
    workdir = Workdir(folder / "slerp")
    sha256 = load_storyboard(workdir.storyboard).audio.sha256
    lines = [Line(1.0, 2.4, "the sky is burning"), Line(2.5, 4.0, "rivers made of glass")]
    Transcript(lines, "en", "lyrics", sha256).save(workdir.transcript)
    code, out, _ = run(capsys, "score", workdir.root, "--models", "tiny")
    assert code == 0 and "smoothness: mean step" in out
    slerp = json.loads(workdir.score_report.read_text())
    assert len(slerp["smoothness"]) == 2 and all("largest_step_share" in m for m in slerp["smoothness"])
    timing = slerp["lyric_timing"]
    assert [(row["scene"], row["offset"]) for row in timing["scenes"]] == [(1, 0.0), (2, pytest.approx(-0.1))]
    assert timing["mean_abs_offset"] == pytest.approx(0.05) and timing["unmatched"] == 0
    # --fps is for renders that did not record their rate: another than the recorded one is refused
    code, _, err = run(capsys, "score", workdir.root, "--models", "tiny", "--fps", "10.0000001")  # (said "not 10")
    assert code == 2 and "drawn at 10 fps (its timings.json says so), not 10.0000001: leave out --fps" in err
    # an older render's timings.json has no rate: --fps gives it, checked against the frame count
    timings = json.loads(workdir.timings.read_text())
    del timings["fps"]
    workdir.timings.write_text(json.dumps(timings))
    code, _, err = run(capsys, "score", workdir.root, "--models", "tiny", "--fps", "5")
    assert code == 2 and "give the --fps it was rendered at" in err
    assert run(capsys, "score", workdir.root, "--models", "tiny", "--fps", "10")[0] == 0
    assert json.loads(workdir.score_report.read_text())["fps_from"] == "--fps"
    with caplog.at_level(logging.WARNING, logger="musicvid"):  # 10, the default, said
        assert run(capsys, "score", workdir.root, "--models", "tiny")[0] == 0
    assert f"{workdir.root} records no rate drawn: it is scored as drawn at 10 fps (--fps" in caplog.text
    assert json.loads(workdir.score_report.read_text())["fps_from"] == "default"


@pytest.mark.slow
def test_keyframes_drawn_for_prompts_the_storyboard_no_longer_holds_are_not_scored(renders, capsys):
    """`storyboard` made again without --keyframes: new prompts, the old pictures. Scored, they were judged by words
    they were not drawn for."""
    _, folder = renders
    shutil.copytree(folder / "csa", folder / "edited", symlinks=True)
    workdir = Workdir(folder / "edited")
    board = json.loads(workdir.storyboard.read_text())
    shown = frame_schedule([s["start"] for s in board["scenes"]], board["audio"]["duration"], 10).shown_scenes
    board["scenes"][shown[0]]["prompt"] = "a lighthouse in a storm, oil painting"
    workdir.storyboard.write_text(json.dumps(board))
    code, out, err = run(capsys, "score", workdir.root, "--json")
    report = json.loads(out)
    assert code == 0 and report["stale_keyframes"] == [shown[0]], err
    assert [row["scene"] for row in report["scenes"]] == shown[1:]
    assert "1 keyframes drawn for other prompts than the storyboard's now: not scored" in summary_text(report)
    for scene in shown:
        board["scenes"][scene]["prompt"] = f"another prompt {scene}"
    workdir.storyboard.write_text(json.dumps(board))
    code, _, err = run(capsys, "score", workdir.root)
    said = f"every keyframe in {workdir.root} was drawn for another prompt than its storyboard.json's now (made again"
    assert code == 2 and said in err and err.count("\n") == 1, err
