"""Best-of-N keyframes on the page: the candidates and reroll controls reach the settings, the storyboard table
shows each keyframe's score, read-only (an edit never reads it) and sortable, and drawing or rendering fills it
in. Driven through the page's handlers, as its buttons call them, with the tiny models."""

import json
import threading

import pandas as pd
import pytest

from musicvid.storyboard.board import load_storyboard, parse_storyboard
from tests.helpers import make_tone, valid_board
from ui import handlers
from ui.config import UIConfig
from ui.controls import chosen, shown_controls, summary
from ui.jobs import Jobs
from ui.table import COLUMNS, EDITED, SCORE, apply_edits, rows

SESSION = "a-browser"
SCORED = COLUMNS.index(SCORE)
LYRICS = "[00:01.00]the sky is burning\n[00:02.40]rivers made of glass\n[00:04.00]\n"


def test_the_pick_controls_reach_the_settings_and_say_what_they_cost():
    shown = shown_controls("tiny")
    assert (shown["keyframe_candidates"], shown["reroll_below"]) == (1, "")  # one candidate, no rerolls
    values = {"preset": "tiny", **shown}
    settings = chosen({**values, "keyframe_candidates": 3, "reroll_below": "0.6"})  # as the page sends them
    assert (settings.keyframe_candidates, settings.reroll_below) == (3, 0.6)
    assert chosen({**values, "reroll_below": "0.55"}).reroll_below == 0.55  # typed: not one of those offered
    emptied = chosen({**values, "reroll_below": ""})  # none chosen: never reroll
    assert (emptied.keyframe_candidates, emptied.reroll_below) == (1, None)
    assert "best of" not in summary(values)
    assert "Each keyframe the best of 3." in summary({**values, "keyframe_candidates": 3})
    assert "below 0.6: up to 4 rounds" in summary({**values, "reroll_below": "0.6"})
    # refused on the page in the command line's words
    assert summary({**values, "keyframe_candidates": 9}).startswith("Refused: --keyframe-candidates")
    assert summary({**values, "reroll_below": "3"}).startswith("Refused: --reroll-below")


def test_the_page_offers_both_controls_and_a_read_only_number_score_column():
    from ui.app import build_app

    config = build_app(UIConfig(models="tiny")).get_config_file()
    props = [c["props"] for c in config["components"]]
    [candidates] = [p for p in props if p.get("label", "").startswith("Keyframe candidates")]
    [reroll] = [p for p in props if p.get("label", "").startswith("Redraw keyframes scoring below")]
    assert (candidates["minimum"], candidates["maximum"], candidates["value"]) == (1, 8, 1)
    # none chosen shows as none (a number box would show 0), a few offered, any other typed
    assert reroll["value"] == "" and reroll["allow_custom_value"] and len(reroll["choices"]) > 2
    [table] = [p for p in props if p.get("headers") == COLUMNS]
    # the score can be sorted by, as a number, from its header's menu; it cannot be typed over
    assert table["static_columns"] == [SCORED] and table["datatype"][SCORED] == "number"
    assert table["col_count"][1] == "dynamic"  # (the header menus, and their sorting, show for these alone)


def a_pick(**changes) -> dict:
    return dict(from_seed=2, candidates=3, rounds=1, kept=1, lyric=0.4, prompt=0.6, scorer="s", key="k") | changes


def test_the_table_shows_each_picks_score_and_an_edit_never_reads_it():
    board = valid_board()
    board["scenes"][1]["pick"] = a_pick()
    table = rows(parse_storyboard(board))
    assert [row[SCORED] for row in table] == [None, 0.5]  # blank: no pick; else the mean of lyric and prompt
    table[0][SCORED], table[1][SCORED] = 2.4, 0.0  # typed over by a program: not read
    table[1][EDITED.index("visual prompt")] = "a sea of glass"
    edited = apply_edits(board, table)
    assert edited["scenes"][1]["prompt"] == "a sea of glass" and edited["scenes"][1]["pick"] == a_pick()
    assert "pick" not in edited["scenes"][0]
    # as the page sends it (pandas: a blank score is NaN), and as a program made before the score sends it
    assert apply_edits(board, pd.DataFrame(table, columns=COLUMNS)) == edited
    assert apply_edits(board, [row[: len(EDITED)] for row in table]) == edited


def page_values(song, **changed) -> dict:
    values = {"preset": "tiny", **shown_controls("tiny"), "language": "detect", "context_size": None, "seed": None}
    values["reference"] = None
    values |= dict(upload=str(song), title="", artist="", lyrics=LYRICS, lora_upload=None, job="", table=None)
    return values | dict(fps=2, keyframe_candidates=2, scene=None, pin_upload=None) | changed


def scores(table) -> list:
    return [row[SCORED] for row in table]


@pytest.mark.slow
def test_drawn_keyframes_fill_the_score_column_and_an_edit_or_a_new_seed_picks_again(tmp_path):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    values = page_values(make_tone(tmp_path / "song.mp3", 6.03))
    table, job, _ = handlers.make_storyboard(jobs, values, SESSION, threading.Event())
    assert len(table) == 3 and scores(table) == [None] * 3  # nothing drawn yet
    values |= dict(job=job, table=table)
    _, shown, _, status, drawn, _ = handlers.keyframes(jobs, values, SESSION, threading.Event())
    work = jobs.root / job / "work"
    board = load_storyboard(work / "storyboard.json")
    assert scores(drawn) == [round(scene.pick.together, 2) for scene in board.scenes] and shown == [0, 1, 2]
    assert all(scene.pick.candidates == 2 for scene in board.scenes) and "sort by it" in status
    # a prompt edited (its score typed over too, which is not read): that scene alone is picked again
    drawn[1][SCORED], drawn[1][EDITED.index("visual prompt")] = 2.5, "a burning sky over the sea"
    _, _, _, status, again, _ = handlers.keyframes(jobs, values | dict(table=drawn), SESSION, threading.Event())
    edited = load_storyboard(work / "storyboard.json")
    assert "(1 drawn)" in status and edited.scenes[1].pick.key != board.scenes[1].pick.key
    assert scores(again)[1] == round(edited.scenes[1].pick.together, 2) != 2.5
    assert [edited.scenes[n].pick for n in (0, 2)] == [board.scenes[n].pick for n in (0, 2)]
    # a new picture: a new seed for scene 2, from which its two candidates are drawn
    handlers.new_picture(jobs, values | dict(table=again, scene=2), SESSION, threading.Event())
    seed = json.loads((jobs.root / job / "storyboard.edited.json").read_text())["scenes"][2]["seed"]
    picked = load_storyboard(work / "storyboard.json").scenes[2].pick
    assert seed != edited.scenes[2].seed and (picked.from_seed, picked.candidates) == (seed, 2)
    # the render's table is the storyboard rendered, with its scores
    video, _, _, _, rendered = handlers.render(jobs, values | dict(table=again), SESSION, threading.Event())
    final = load_storyboard(work / "storyboard.json")
    assert scores(rendered) == [round(scene.pick.together, 2) for scene in final.scenes] and video.endswith(".mp4")


@pytest.mark.slow
def test_draw_keyframes_or_render_pressed_before_any_storyboard_make_it_first(tmp_path):
    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    values = page_values(make_tone(tmp_path / "song.mp3", 4.5), keyframe_candidates=1)
    pictures, shown, _, status, table, job = handlers.keyframes(
        jobs, values, "first", threading.Event()
    )  # no job, no table sent
    board = load_storyboard(jobs.root / job / "work" / "storyboard.json")
    assert "Keyframes ready" in status and len(pictures) == len(shown) == len(table) == len(board.scenes)
    assert [row[EDITED.index("lyric")] for row in table if row[2] == "lyric"] == [
        "the sky is burning",
        "rivers made of glass",
    ]
    video, _, made, status, table = handlers.render(jobs, values, "second", threading.Event())
    assert made != job and status.startswith("Done") and video.endswith(".mp4") and len(table) == len(board.scenes)
    assert jobs.page_storyboards == {"first": job, "second": made}  # each page's storyboard, as Make video leaves it


@pytest.mark.slow
def test_a_new_picture_for_a_pinned_scene_draws_one_in_place_of_the_pin(tmp_path):
    from PIL import Image

    jobs = Jobs(UIConfig(models="tiny", jobs_dir=tmp_path / "jobs"))
    values = page_values(make_tone(tmp_path / "song.mp3", 4.5), keyframe_candidates=1)
    table, job, _ = handlers.make_storyboard(jobs, values, SESSION, threading.Event())
    Image.new("RGB", (64, 64), (200, 30, 30)).save(pin := tmp_path / "red.png")
    values |= dict(job=job, table=table, scene=1)
    handlers.pin_picture(jobs, values | dict(pin_upload=str(pin)), SESSION, threading.Event())
    keyframe = jobs.root / job / "work" / "keyframes" / "0001.png"
    assert Image.open(keyframe).getpixel((10, 10)) == (200, 30, 30)
    _, _, _, status, _, _ = handlers.new_picture(jobs, values, SESSION, threading.Event())
    scene = json.loads((jobs.root / job / "storyboard.edited.json").read_text())["scenes"][1]
    assert "(1 drawn)" in status and "picture" not in scene  # (it said "1 drawn" and showed the pin)
    assert load_storyboard(jobs.root / job / "work" / "storyboard.json").scenes[1].picture is None
    assert Image.open(keyframe).getpixel((10, 10)) != (200, 30, 30)
