"""Storyboard planning invariants and the checks on a user's storyboard file."""

import copy
import json
import logging
import subprocess
import sys

import pytest

from musicvid.core.errors import UserError
from musicvid.lyrics.transcript import Line
from musicvid.storyboard.board import load_storyboard, parse_storyboard, scene_seed
from musicvid.storyboard.scenes import scenes_from_lines
from musicvid.storyboard.table import scene_table, warn_of_doubts
from tests.helpers import valid_board
from vipe_core.context import SCENE_KINDS


def check_tiling(scenes, duration):
    assert scenes, "a storyboard always has scenes"
    assert scenes[0].start == 0.0
    assert scenes[-1].end == pytest.approx(duration)
    for before, after in zip(scenes, scenes[1:]):
        assert before.end == after.start
    assert all(s.end > s.start for s in scenes)
    assert [s.index for s in scenes] == list(range(len(scenes)))
    assert all(s.kind in SCENE_KINDS for s in scenes)


TIMELINES = {
    "ordinary": [Line(5, 8, "a"), Line(8.5, 11, "b"), Line(20, 23, "c"), Line(24, 26, "d")],
    "lines at the start": [Line(0, 2, "a"), Line(2, 4, "b")],
    "lead-in under a second": [Line(0.6, 2, "a"), Line(2, 4, "b")],
    "long gaps": [Line(30, 32, "a"), Line(70, 71, "b")],
    "overlapping": [Line(1, 5, "a"), Line(3, 4, "b"), Line(3.5, 9, "c")],
    "zero-length": [Line(2, 2, "a"), Line(2, 2, "b"), Line(6, 6, "c")],
    "same start": [Line(2, 3, "a"), Line(2, 4, "b")],
    "past the end": [Line(5, 200, "a")],
    "no lines": [],
}


@pytest.mark.parametrize("name", TIMELINES)
def test_scenes_tile_the_song(name):
    duration = 90.0
    scenes = scenes_from_lines(TIMELINES[name], duration, break_seconds=4.0)
    check_tiling(scenes, duration)


def test_kinds_of_an_ordinary_song():
    scenes = scenes_from_lines(TIMELINES["ordinary"], 40.0, break_seconds=4.0)
    assert [(s.kind, s.start, s.end, s.text) for s in scenes] == [
        ("intro", 0.0, 5, ""),
        ("lyric", 5, 8.5, "a"),  # a short gap belongs to the line before it
        ("lyric", 8.5, 11, "b"),
        ("break", 11, 20, ""),
        ("lyric", 20, 24, "c"),
        ("lyric", 24, 26, "d"),
        ("outro", 26, 40.0, ""),
    ]


def test_long_instrumental_stretches_are_split():
    scenes = scenes_from_lines(TIMELINES["long gaps"], 90.0, break_seconds=4.0, max_instrumental=20.0)
    kinds = [s.kind for s in scenes]
    assert kinds == ["intro", "intro", "lyric", "break", "break", "lyric", "outro"]
    assert max(s.duration for s in scenes if s.kind != "lyric") <= 20.0
    # a stretch split in four is cut at times as written, not a sum's noise (22.502499999999998)
    split = scenes_from_lines([Line(1.54, 2.54, "a"), Line(82.39, 83.39, "b")], 88.04489795918367)
    assert [s.start for s in split[3:6]] == [22.5025, 42.465, 62.4275] and split[-1].end == 88.04489795918367
    assert scenes_from_lines([], 134.24804000010616)[-1].end == 134.24804000010616  # (the song's end, as it is)


def test_an_instrumental_track_is_a_valid_storyboard():
    scenes = scenes_from_lines([], 50.0)
    check_tiling(scenes, 50.0)
    assert {s.kind for s in scenes} <= {"intro", "break", "outro"}


def test_lines_starting_together_share_a_scene():
    scenes = scenes_from_lines(TIMELINES["same start"], 10.0)
    assert [s.text for s in scenes if s.kind == "lyric"] == ["a / b"]


def test_unsure_lines_are_flagged_in_the_storyboard_the_table_and_the_warnings(tmp_path, caplog):
    lines = [
        Line(2, 4, "heard well", confidence=0.9),
        Line(6, 8, "misheard", confidence=0.2),
        Line(6, 9, "too"),
        Line(12, 14, "from a file"),
    ]
    scenes = scenes_from_lines(lines, 20.0)
    assert [(s.text, s.confidence, s.unsure) for s in scenes if s.kind == "lyric"] == [
        ("heard well", 0.9, False),
        ("misheard / too", 0.2, True),
        ("from a file", None, False),
    ]  # a shared scene is as unsure as its least sure line
    board = parse_storyboard({**valid_board(), "audio": {"duration": 20.0}, "scenes": [s.to_json() for s in scenes]})
    (tmp_path / "storyboard.json").write_text(board.text())
    again = load_storyboard(tmp_path / "storyboard.json")
    assert [s.confidence for s in again.scenes] == [s.confidence for s in scenes]
    table = scene_table(again).splitlines()
    assert "?" in table[3] and "?" not in table[2] + table[4]  # row 0 is the header, row 1 the intro
    assert (
        table[-1] == "? 1 of 3 lyric lines may be misheard or sung elsewhere (scenes 2): check their words "
        "and start times against the song"
    )
    # the warnings: the notes that are not empty (no scene fell back), a later stage's after the storyboard's
    with caplog.at_level(logging.WARNING, logger="musicvid"):
        warn_of_doubts(again, "", "a later stage's note")
    assert [record.getMessage() for record in caplog.records] == [table[-1].removeprefix("? "), "a later stage's note"]


def test_a_short_lead_in_belongs_to_the_first_line():
    scenes = scenes_from_lines(TIMELINES["lead-in under a second"], 10.0)
    assert scenes[0].kind == "lyric" and scenes[0].start == 0.0


def test_scene_seeds_are_stable_and_distinct():
    seeds = [scene_seed(0, i) for i in range(100)]
    assert len(set(seeds)) == 100
    assert seeds == [scene_seed(0, i) for i in range(100)]
    assert scene_seed(1, 0) != scene_seed(0, 0)


def test_a_valid_storyboard_round_trips(tmp_path):
    board = parse_storyboard(valid_board())
    path = tmp_path / "storyboard.json"
    path.write_text(board.text())
    assert load_storyboard(path).to_json() == board.to_json() == {**valid_board()}
    assert "a sea" in scene_table(board)
    assert parse_storyboard({**valid_board(), "language": "Polish"}).language == "pl"  # as --language takes it
    assert parse_storyboard({**valid_board(), "language": "  "}).language == "en"  # (blank: the default, as null)


BROKEN = [
    ("overlap", lambda b: b["scenes"][1].update(start=3.5), "scenes[1].start", "overlaps"),
    ("gap", lambda b: b["scenes"][1].update(start=4.5), "scenes[1].start", "gap"),
    ("missing prompt", lambda b: b["scenes"][0].pop("prompt"), "scenes[0].prompt", "missing"),
    ("missing seed", lambda b: b["scenes"][1].pop("seed"), "scenes[1].seed", "missing"),
    ("bad kind", lambda b: b["scenes"][0].update(kind="chorus"), "scenes[0].kind", "must be one of"),
    ("late start", lambda b: b["scenes"][0].update(start=1.0), "scenes[0].start", "must be 0"),
    ("short end", lambda b: b["scenes"][1].update(end=9.0), "audio.duration (10) is not where", "(scenes[1].end: 9)"),
    ("edited length", lambda b: b["audio"].update(duration=60), "audio.duration (60)", "the last scene ends"),
    ("backwards", lambda b: b["scenes"][0].update(end=0.0), "scenes[0].end", "after its start"),
    ("text time", lambda b: b["scenes"][0].update(end="4"), "scenes[0].end", "number"),
    ("negative seed", lambda b: b["scenes"][0].update(seed=-1), "scenes[0].seed", "integer"),
    ("confidence", lambda b: b["scenes"][1].update(confidence=1.5), "scenes[1].confidence", "from 0 to 1"),
    ("no scenes", lambda b: b.update(scenes=[]), "scenes", "non-empty"),
    ("wrong version", lambda b: b.update(version=2), "version", "must be 1"),
    ("no duration", lambda b: b["audio"].pop("duration"), "audio.duration", "missing"),
    ("bad index", lambda b: b["scenes"][1].update(index=5), "scenes[1].index", "must be 1"),
    ("lyric cut", lambda b: b["scenes"][1].update(cut="music"), "scenes[1].cut", "without words"),
    # what made it, bounded as the options that set it are (they were taken, and copied into the work directory)
    ("settings seed", lambda b: b.update(settings={"seed": -5}), "settings.seed", "from 0 to 2147483647, got -5"),
    ("settings context", lambda b: b.update(settings={"context_size": 10**6}), "settings.context_size", "to 16"),
    ("settings candidates", lambda b: b.update(settings={"candidates": 10**9}), "settings.candidates", "to 64"),
    ("settings break", lambda b: b.update(settings={"break_seconds": 0}), "settings.break_seconds", "above 0"),
    # a probe's findings: true or 1.0 taken as 1, a lens no option has, a hash that is none, a note of 200 MB
    ("true version", lambda b: b.update(version=True), "version", "must be 1, got true"),
    ("float index", lambda b: b["scenes"][1].update(index=1.0), "scenes[1].index", "got 1.0"),
    ("settings lens", lambda b: b.update(settings={"lens": "bogus"}), "settings.lens", "one of literal, figurative"),
    ("audio sha256", lambda b: b["audio"].update(sha256="zz"), "audio.sha256", '(64 hex digits), got "zz"'),
    ("huge note", lambda b: b.update(mine="x" * 100_000), "edited.json: mine", "at most 100,000"),
    ("huge scene note", lambda b: b["scenes"][0].update(n=["x"] * 50_000), "scenes[0].n", "got 250,007"),
    ("huge key", lambda b: b.update({"k" * 3_000_000: 1}), "kkkk… (a key of 3,000,000 characters)", "at most"),
    ("many notes", lambda b: b.update({f"n{i}": "x" * 99_000 for i in range(11)}), "the file", "more than 1,000,000"),
    ("huge audio note", lambda b: b["audio"].update(n="x" * 100_000), "audio.n", "at most 100,000"),
    ("settings a list", lambda b: b.update(settings=[]), "settings", "must be an object"),
    ("klingon", lambda b: b.update(language="Klingon"), "edited.json: language", "codes or names (e.g. en, pl"),
    (
        "long song's end",
        lambda b: b["audio"].update(duration=1234.5678) or b["scenes"][1].update(end=1234.57),
        "audio.duration (1234.5678)",
        "(scenes[1].end: 1234.57)",
    ),  # (each told to the tolerance's digits)
]


@pytest.mark.parametrize("name,breaks,field,reason", BROKEN, ids=[b[0] for b in BROKEN])
def test_a_broken_storyboard_is_refused_naming_the_field(name, breaks, field, reason):
    board = copy.deepcopy(valid_board())
    breaks(board)
    with pytest.raises(UserError) as error:
        parse_storyboard(board, "edited.json")
    message = str(error.value)
    assert field in message and reason in message and "\n" not in message


def test_a_storyboard_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "storyboard.json"
    path.write_text("{not json")
    with pytest.raises(UserError, match="not valid JSON"):
        load_storyboard(path)
    # a key given twice (an edit typed above the old line): one of the two would be ignored
    text = json.dumps(valid_board()).replace('"prompt":', '"prompt": "mine", "prompt":', 1)
    path.write_text(text)
    with pytest.raises(UserError, match=f"^storyboard {path} gives the key 'prompt' twice in one object"):
        load_storyboard(path)


def test_a_scene_no_frame_shows_is_named():
    """A scene an edit shortened to less than a frame (its start rounds to the next scene's frame) is in no frame:
    the render says which, and what to do."""
    from musicvid.pictures.schedule import frame_schedule
    from musicvid.storyboard.table import unshown_note

    scenes = [{**valid_board()["scenes"][0], "index": n, "start": start} for n, start in enumerate((0.0, 1e-9, 2.0))]
    for scene, end in zip(scenes, (1e-9, 2.0, 4.0)):
        scene["end"] = end
    board = parse_storyboard({**valid_board(), "audio": {"duration": 4.0}, "scenes": scenes})
    shown = frame_schedule([s.start for s in board.scenes], board.duration, 2.0).shown_scenes
    assert unshown_note(board, shown, 2.0) == (
        "1 of 3 scenes last less than a frame at 2 fps, so no frame shows them (scenes 0): lengthen them in the "
        "storyboard, or give a higher --fps"
    )
    assert unshown_note(board, list(range(3)), 2.0) == ""


def test_an_english_storyboard_is_read_without_importing_torch():  # (the score and the batch report read them)
    read = "import json, sys; from musicvid.storyboard.board import parse_storyboard; "
    read += "parse_storyboard(json.loads(sys.argv[1])); print('torch' in sys.modules)"
    for language in ("en", "English"):
        board = json.dumps({**valid_board(), "language": language})
        done = subprocess.run([sys.executable, "-c", read, board], capture_output=True, text=True, check=True)
        assert done.stdout.strip() == "False", done.stderr
