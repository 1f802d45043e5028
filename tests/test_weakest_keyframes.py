"""`musicvid storyboard --keyframes` ends with the keyframes that show their scenes least, by their picks'
scores, and what to do about them: a threshold for --reroll-below that redraws each of them, or an edit."""

import dataclasses
import re

import pytest

from musicvid.settings.render import MAX_ROUNDS
from musicvid.storyboard.board import Scene, SongAudio, Storyboard, load_storyboard
from musicvid.storyboard.picks import KeyframePick
from musicvid.storyboard.table import weakest_keyframes
from tests.helpers import make_tone, run

LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"
HEADER = "weakest keyframes (CLIPScore 0–2.5: the mean of the lyric and prompt scores):"


def scene(index: int, together: float, key: str | None = None, **fields) -> Scene:
    pick = KeyframePick(index, 2, 1, 1, together, together, "s", key or f"k{index}")
    made = Scene(index, "lyric", float(index), index + 1.0, f"line {index}", f"prompt {index}", index, pick=pick)
    return dataclasses.replace(made, **fields)


def test_the_few_lowest_keyframes_are_listed_once_each_and_a_pinned_picture_never():
    scenes = [scene(n, together) for n, together in enumerate([0.9, 0.3, 0.5, 0.2, 0.8, 0.7, 0.6, 0.4])]
    scenes[6] = scene(6, 0.3, key="k1")  # a return of scene 1's motif: the same keyframe
    scenes[3] = scene(3, 0.2, picture="mine.png")  # pinned: the person's own
    scenes[0] = scene(0, 0.1, kind="intro", text="", mood="calm")  # a passage: no lyric score
    scenes[0] = dataclasses.replace(scenes[0], pick=dataclasses.replace(scenes[0].pick, lyric=None))
    board = Storyboard(audio=SongAudio(8.0), scenes=scenes)
    lines = weakest_keyframes(board, list(range(8)))
    assert lines == [
        HEADER,
        "  scene 0 (0.10: prompt 0.10; best of 2): intro (calm)",
        '  scenes 1, 6 (0.30: lyric 0.30, prompt 0.30; best of 2): "line 1"',
        '  scene 7 (0.40: lyric 0.40, prompt 0.40; best of 2): "line 7"',
        '  scene 2 (0.50: lyric 0.50, prompt 0.50; best of 2): "line 2"',
        '  scene 5 (0.70: lyric 0.70, prompt 0.70; best of 2): "line 5"',
        "  to redraw them: run again with --reroll-below 0.75 (more candidates for each keyframe below it) or "
        "--keyframe-candidates N, or edit their prompt or seed in storyboard.json",
    ]
    assert weakest_keyframes(board, [4])[1].startswith("  scene 4 (0.80")  # the shown scenes alone
    assert weakest_keyframes(board, [3]) == []  # nothing picked but a pinned picture: nothing to say


def test_a_keyframe_that_had_every_round_is_no_reason_for_a_threshold():
    spent = [scene(n, together) for n, together in enumerate([0.2, 0.6, 0.4])]
    spent = [dataclasses.replace(s, pick=dataclasses.replace(s.pick, rounds=MAX_ROUNDS)) for s in spent]
    board = Storyboard(audio=SongAudio(4.0), scenes=spent)
    assert weakest_keyframes(board, [0, 1, 2])[-1] == (
        f"  to redraw them: run again with --keyframe-candidates N (each had all {MAX_ROUNDS} rounds --reroll-below "
        "draws), or edit their prompt or seed in storyboard.json"
    )
    board = dataclasses.replace(board, scenes=[spent[0], scene(1, 0.3), spent[2]])  # one with rounds left: the
    assert weakest_keyframes(board, [0, 1, 2])[-1] == (  # threshold is above it alone
        "  to redraw them: run again with --reroll-below 0.35 (more candidates for each keyframe below it; 2 had all "
        f"{MAX_ROUNDS} rounds it draws) or --keyframe-candidates N, or edit their prompt or seed in storyboard.json"
    )


@pytest.mark.slow
def test_storyboard_keyframes_ends_with_the_weakest_and_its_threshold_redraws_them(tmp_path, capsys):
    song = make_tone(tmp_path / "song.mp3", 6.03)
    song.with_suffix(".lrc").write_text(LYRICS)
    work = tmp_path / "work"
    options = ["--models", "tiny", "--lyrics", song.with_suffix(".lrc"), "--workdir", work, "-q", "--keyframes"]
    code, out, _ = run(capsys, "storyboard", song, *options, "--keyframe-candidates", "2")
    assert code == 0
    lines = out.splitlines()
    at = lines.index(HEADER)
    assert lines[at - 2].startswith("contact sheet: ")  # after the lines before it, and a blank one
    board = load_storyboard(work / "storyboard.json")
    weakest = sorted(board.scenes, key=lambda s: s.pick.together)  # three scenes: all of them
    assert len(lines) == at + 1 + len(weakest) + 1
    for line, shown in zip(lines[at + 1 :], weakest):
        pick = shown.pick
        scores = (
            f"prompt {pick.prompt:.2f}" if pick.lyric is None else f"lyric {pick.lyric:.2f}, prompt {pick.prompt:.2f}"
        )
        assert line.startswith(f"  scene {shown.index} ({pick.together:.2f}: {scores}; best of 2): ")
    advice = lines[-1]
    assert "edit their prompt or seed in storyboard.json" in advice
    threshold = float(re.search(r"--reroll-below (\d\.\d\d) ", advice).group(1))
    assert all(s.pick.together < threshold for s in board.scenes)
    # run with it: each listed keyframe gets more rounds of candidates
    code, _, _ = run(capsys, "storyboard", song, *options, "--keyframe-candidates", "2", "--reroll-below", threshold)
    assert code == 0 and all(s.pick.rounds > 1 for s in load_storyboard(work / "storyboard.json").scenes)
