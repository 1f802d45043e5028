"""Best of N keyframes (musicvid.pictures.keyframe_candidates): each scene's keyframe drawn from several seeds, the one the
scorer ranks first kept, and the pick recorded in the storyboard so that a resume draws the very same picture."""

import json
import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from musicvid.cli import main
from musicvid.core.errors import UserError
from musicvid.models.drawing import Drawing
from musicvid.models.registry import registry_of
from musicvid.models.timing import Timings
from musicvid.pictures.cache import load_picture
from musicvid.pictures.keyframe_candidates import Choosing, candidate_seed, draw_round, keep, kept_seed
from musicvid.pictures.scores import SceneScores, lyric_of, rank_candidates, score_keyframes
from musicvid.pictures.switches import pipeline_for
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.render import MAX_CANDIDATES
from musicvid.settings.resolve import resolve_render_settings
from musicvid.storyboard.board import load_storyboard, parse_storyboard
from tests.helpers import digest, make_tone, render, storyboard_with_a_pin, valid_board

LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"


def test_the_first_candidate_is_the_scenes_own_seed_and_the_others_differ():
    assert candidate_seed(1234, 0) == 1234
    seeds = [candidate_seed(1234, n) for n in range(MAX_CANDIDATES * 4)]
    assert len(set(seeds)) == len(seeds) and all(0 <= s < 2**31 for s in seeds)
    assert seeds == [candidate_seed(1234, n) for n in range(MAX_CANDIDATES * 4)]  # stable


def a_pick(**changes) -> dict:
    pick = dict(from_seed=7, candidates=3, rounds=1, kept=2, lyric=0.61, prompt=0.72, scorer="s", key="k")
    return pick | changes


def test_a_storyboard_keeps_its_picks_and_names_a_broken_one():
    board = valid_board()
    board["scenes"][0]["pick"] = a_pick(lyric=None)
    parsed = parse_storyboard(json.loads(json.dumps(board)))
    assert kept_seed(parsed.scenes[0].pick) == candidate_seed(7, 2) and parsed.scenes[0].pick.together == 0.72
    assert parse_storyboard(parsed.to_json()).scenes[0].pick == parsed.scenes[0].pick
    # a person's own key in a pick is written back, and goes on to the pick made after it
    board["scenes"][0]["pick"] = a_pick(why="the red one")
    noted = parse_storyboard(json.loads(json.dumps(board))).scenes[0]
    assert noted.to_json()["pick"]["why"] == "the red one"
    choosing = Choosing([0], 9, 1, 1, 0, SceneScores(None, 0.5))
    [kept] = keep(choosing, parse_storyboard(board), SimpleNamespace(key=lambda scene: "k"), "tiny", None)[0].values()
    assert kept.pick.from_seed == 9 and kept.to_json()["pick"]["why"] == "the red one"
    for changes, where in [
        (dict(kept=3), "scenes[0].pick.kept"),  # 3 candidates in one round: 0 to 2
        (dict(candidates=MAX_CANDIDATES + 1), "scenes[0].pick.candidates"),
        (dict(prompt=2.6), "scenes[0].pick.prompt"),
        (dict(lyric="good"), "scenes[0].pick.lyric"),
    ]:
        board["scenes"][0]["pick"] = a_pick(**changes)
        with pytest.raises(UserError, match=re.escape(where)):
            parse_storyboard(board)


@pytest.mark.parametrize(
    "option, message",
    [
        (["--keyframe-candidates", str(MAX_CANDIDATES + 1)], "--keyframe-candidates"),
        (["--keyframe-candidates", "0"], "--keyframe-candidates"),
        (["--reroll-below", "2.6"], "--reroll-below"),
    ],
)
def test_the_work_multiplying_pick_settings_are_refused_before_any_work(tmp_path, capsys, option, message):
    song = tmp_path / "missing.mp3"  # never read: the settings are refused first
    assert main(["render", str(song), "--models", "tiny", *option]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def candidates_of(workdir: Path, storyboard, index: int, settings) -> tuple[np.ndarray, list]:
    """Scene `index`'s candidates drawn again, apart from the render, and their scores."""
    registry = registry_of(ModelChoice(models="tiny"))
    scene, pick = storyboard.scenes[index], storyboard.scenes[index].pick
    with registry.use(Drawing(settings.fast)) as pipe, registry.use("scorer") as scorer:
        choosing = Choosing([index], pick.from_seed, pick.candidates)
        pictures = draw_round(pipeline_for(pipe, settings), storyboard, choosing, 0, settings, Timings(), None)
        n = len(pictures)
        return pictures, score_keyframes(scorer, list(pictures), [scene.prompt] * n, [lyric_of(scene)] * n)


@pytest.mark.slow
@pytest.mark.ci  # (a second render of the picks: the motif's stays)
def test_best_of_three_keeps_the_candidate_ranked_first_and_a_resume_draws_it_again(tmp_path):
    song = make_tone(tmp_path / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    work = tmp_path / "work"
    assert render(song, work, "--fps", "2", "--keyframe-candidates", "3", "-o", tmp_path / "a.mp4") == 0
    storyboard = load_storyboard(work / "storyboard.json")
    timings = json.loads((work / "timings.json").read_text())
    assert timings["keyframe_candidates_drawn"] == 3 * len(storyboard.scenes) and timings["fps"] == 2
    settings = resolve_render_settings(registry_of(ModelChoice(models="tiny")).models, {"fps": 2.0})
    for scene in storyboard.scenes:
        pick = scene.pick
        assert (pick.candidates, pick.rounds) == (3, 1) and scene.seed == candidate_seed(pick.from_seed, pick.kept)
        pictures, scores = candidates_of(work, storyboard, scene.index, settings)
        assert pick.kept == rank_candidates(scores)[0]
        assert pick.prompt == pytest.approx(scores[pick.kept].prompt, abs=1e-4)
        np.testing.assert_array_equal(load_picture(work / "keyframes" / f"{scene.index:04d}.png"), pictures[pick.kept])
    kept = {path.name: digest(path) for path in (work / "keyframes").glob("*.png")}
    video = digest(tmp_path / "a.mp4")

    # a run killed before it saved its picks (the storyboard as it was made) picks the same again; one whose
    # keyframes are gone draws each among its candidates again: the same pictures, byte for byte
    unpicked = tmp_path / "unpicked"
    shutil.copytree(work, unpicked)
    board = json.loads((unpicked / "storyboard.json").read_text())
    for raw in board["scenes"]:
        raw["seed"] = raw["pick"]["from_seed"]
        del raw["pick"]
    (unpicked / "storyboard.json").write_text(json.dumps(board))
    for path in (unpicked / "keyframes").glob("*.png"):
        path.unlink()
    assert render(song, unpicked, "--fps", "2", "--keyframe-candidates", "3", "-o", tmp_path / "b.mp4") == 0
    assert load_storyboard(unpicked / "storyboard.json").to_json()["scenes"] == storyboard.to_json()["scenes"]
    for path in (work / "keyframes").glob("*.png"):
        path.unlink()
    assert render(song, work, "--fps", "2", "-o", tmp_path / "c.mp4") == 0  # the picks hold without the option
    for folder in (work, unpicked):
        assert {path.name: digest(path) for path in (folder / "keyframes").glob("*.png")} == kept
    assert digest(tmp_path / "b.mp4") == digest(tmp_path / "c.mp4") == video


@pytest.mark.slow
def test_a_motif_shares_one_pick_a_pinned_picture_is_scored_not_replaced_and_a_reroll_only_improves(tmp_path):
    song = make_tone(tmp_path / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    work = tmp_path / "work"
    board = storyboard_with_a_pin(song, work, 0)
    for raw in board["scenes"][1:]:  # a chorus line and its return: one motif, one prompt, one seed
        raw |= {"motif": "chorus-1", "prompt": "a river of glass", "seed": 99}
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(board))
    given = digest(edited)
    options = ["--fps", "2", "--keyframe-candidates", "2", "--storyboard", edited]
    assert render(song, work, *options, "-o", tmp_path / "a.mp4") == 0
    assert json.loads((work / "timings.json").read_text())["keyframe_candidates_drawn"] == 2  # one keyframe
    scenes = load_storyboard(work / "storyboard.json").scenes
    pinned, chorus, again = scenes
    assert (pinned.seed, pinned.pick.candidates, pinned.pick.kept, pinned.pick.lyric) == (
        board["scenes"][0]["seed"],
        1,
        0,
        None,
    )
    assert chorus.pick == again.pick and chorus.seed == again.seed == candidate_seed(99, chorus.pick.kept)
    assert chorus.pick.candidates == 2 and digest(edited) == given  # the input is never rewritten

    assert render(song, work, "--fps", "2", "--reroll-below", "2.5", "-o", tmp_path / "b.mp4") == 0
    rerolled = load_storyboard(work / "storyboard.json").scenes
    assert rerolled[0].pick == pinned.pick  # a pinned picture is what it is
    assert rerolled[1].pick == rerolled[2].pick and rerolled[1].pick.rounds == 4  # (no score reaches 2.5)
    assert rerolled[1].pick.together >= chorus.pick.together and rerolled[1].pick.from_seed == 99
    assert json.loads((work / "timings.json").read_text())["keyframe_candidates_drawn"] == 2 * 3
