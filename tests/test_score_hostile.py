"""`musicvid score` on work directories that are not as a render left them: each refusal one sentence and exit 2,
given before any of the folder's files is read (a pipe as timings.json) or before the scorer loads (an edited
storyboard duration, no keyframes, a damaged picture); pictures drawn since at another size counted, not
subtracted; the onsets' distances in bounded memory; and the song found from any folder (its path recorded
absolute)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from musicvid.models import registry as registry_module
from musicvid.review.timing import nearest_distances
from musicvid.storyboard.board import load_storyboard
from tests.helpers import run, work_directory


@pytest.fixture(scope="module")
def rendered(tone_render):
    """A song rendered with the tiny models, the song named relative to the folder it was rendered from (conftest's,
    shared: read it only)."""
    return tone_render / "w"


@pytest.fixture
def copy(rendered, tmp_path):
    """A copy of the render's work directory, to spoil."""
    return Path(shutil.copytree(rendered, tmp_path / "w", symlinks=True))


@pytest.fixture
def scorer_loads(monkeypatch):
    """How many times the scorer is loaded: a refusal meant to come first leaves it at 0."""
    loads = []
    real = registry_module.load_scorer

    def counted(*args, **kwargs):
        loads.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(registry_module, "load_scorer", counted)
    return loads


def refused(capsys, workdir: Path, *options) -> str:
    code, out, err = run(capsys, "score", workdir, *options)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err and not out, err
    return err


def test_a_pipe_as_timings_json_is_refused_by_its_kind_and_never_read(capsys, copy):
    copy.joinpath("timings.json").unlink()
    os.mkfifo(copy / "timings.json")
    finished, blocked = threading.Event(), []

    def unblock():  # a read of the pipe waits for a writer: be one, after a while, so that the test cannot hang
        if not finished.wait(10):
            blocked.append(True)
            with open(copy / "timings.json", "w"):
                pass

    helper = threading.Thread(target=unblock)
    helper.start()
    try:
        err = refused(capsys, copy)  # no --models: the scorer is the one the render recorded
    finally:
        finished.set()
        helper.join()
    assert "timings.json is a special file, where musicvid keeps a file" in err and not blocked


@pytest.mark.parametrize(
    "damage",
    [b"{garbage", b"\xff\xfe{}", b"[10]", b'{"keyframes": null}', b'{"morph_keys": [1, 2]}', b'{"models": "x"}'],
)
def test_a_damaged_timings_json_is_refused_not_read_as_a_render_of_the_default_rate(capsys, copy, scorer_loads, damage):
    (copy / "timings.json").write_bytes(damage)  # (a render writes it whole, through a temporary)
    for options in ([], ["--fps", "2"]):
        err = refused(capsys, copy, *options)
        assert "timings.json is not a render's report (" in err and "render the song again" in err, err
    assert not scorer_loads and not (copy / "score.json").exists()


def test_a_persons_folder_is_refused_as_not_musicvids_before_its_timings_json_is_acted_on(capsys, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    folder.joinpath("timings.json").write_text(json.dumps({"models": {"scorer": {"name": "./gone"}}}))
    err = refused(capsys, folder)
    assert "which musicvid did not make" in err and "scorer" not in err
    assert (
        "score reads only a folder a render worked in (--workdir)" in err and "--overwrite" not in err
    )  # not render's


def test_nearest_distances_are_the_dense_ones_in_bounded_memory():
    rng = np.random.default_rng(1)
    for times_count, onsets_count in ((1, 1), (7, 1), (50, 3), (400, 90), (1000, 1000)):
        times = rng.uniform(-5, 105, times_count)
        onsets = rng.uniform(0, 100, onsets_count)  # in no order: the fast way sorts them
        dense = np.abs(times[:, None] - onsets[None, :]).min(axis=1)
        assert np.array_equal(nearest_distances(times, onsets), dense)
    # an hour's chance baseline: the dense matrix of these would be 576 MB, twice over
    times, onsets = np.arange(0.0, 3600.0, 0.01), rng.uniform(0, 3600, 200)
    tracemalloc.start()
    try:
        nearest = nearest_distances(times, onsets)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert nearest.shape == times.shape and peak < 32 * 2**20


def edit_duration(workdir: Path, seconds: float) -> None:
    board = json.loads(workdir.joinpath("storyboard.json").read_text())
    board["audio"]["duration"] = board["scenes"][-1]["end"] = seconds
    workdir.joinpath("storyboard.json").write_text(json.dumps(board))


def test_a_storyboard_longer_than_any_song_is_refused_before_the_scorer_loads(capsys, copy, scorer_loads):
    edit_duration(copy, 1e7)
    err = refused(capsys, copy, "--models", "tiny")
    assert "is for audio of 10000000.00 s, longer than the 60 minutes a render takes" in err and not scorer_loads


def test_a_storyboard_whose_duration_is_not_its_songs_is_refused_as_render_refuses_it(capsys, copy, scorer_loads):
    edit_duration(copy, 30.0)
    err = refused(capsys, copy, "--models", "tiny")  # the song's length told, not timings.json's frames and --fps
    assert "is for audio of 30.00 s, but" in err and "lasts 6.03 s" in err and not scorer_loads


def test_no_keyframes_drawn_is_refused_before_the_scorer_loads(capsys, rendered, tmp_path, scorer_loads):
    half = work_directory(tmp_path / "half")
    shutil.copy(rendered / "storyboard.json", half)
    err = refused(capsys, half, "--models", "tiny")
    assert "holds no keyframes: render it (or storyboard --keyframes) first" in err and not scorer_loads


@pytest.mark.parametrize("picture", ["keyframes/0001.png", "frames/000005.png"])
def test_a_damaged_picture_is_named_before_the_scorer_loads(capsys, copy, scorer_loads, picture):
    path = copy / picture
    assert path.is_file()
    path.write_bytes(path.read_bytes()[:300])
    err = refused(capsys, copy, "--models", "tiny")
    assert f"{path} is damaged: render {copy} again to redraw it" in err and not scorer_loads


def test_keyframes_redrawn_at_another_size_leave_the_morph_frames_stale_not_subtracted(capsys, copy):
    for keyframe in copy.joinpath("keyframes").glob("*.png"):
        with Image.open(keyframe) as picture:
            picture.convert("RGB").resize((128, 128)).save(keyframe)
    code, _, err = run(capsys, "score", copy, "--models", "tiny", "--json")
    assert code == 0, err
    morphs = json.loads(copy.joinpath("score.json").read_text())["smoothness"]
    assert morphs and all(m["stale_frames"] == m["steps"] - 1 and "mean_step" not in m for m in morphs)


def test_the_song_is_recorded_absolute_and_found_from_another_folder(capsys, rendered, copy, tmp_path, monkeypatch):
    recorded = load_storyboard(copy / "storyboard.json").audio.path
    assert recorded == str(rendered.parent.resolve() / "song.mp3")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, _, err = run(capsys, "score", copy, "--models", "tiny", "--json")
    assert code == 0, err
    beats = json.loads(copy.joinpath("score.json").read_text())["beat_alignment"]
    assert "missing" not in beats and beats["onsets"] > 0


def test_a_persons_file_under_a_score_name_is_refused_and_scores_own_are_replaced(capsys, copy, scorer_loads):
    notes, picture = copy / "score.json", copy / "score.png"
    notes.write_text("my own notes, not json\n")
    err = refused(capsys, copy, "--models", "tiny")
    assert f"{notes} is not a report musicvid score wrote: move it away" in err and not scorer_loads
    notes.unlink()
    Image.new("RGB", (8, 8), "red").save(picture)
    err = refused(capsys, copy, "--models", "tiny")
    assert f"{picture} is not a chart musicvid score drew: move it away" in err and not scorer_loads
    assert notes.exists() is False and picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"  # (left as it was)
    picture.unlink()
    for _ in range(2):  # score's own report and chart are its to replace
        assert run(capsys, "score", copy, "--models", "tiny")[0] == 0
    assert json.loads(notes.read_text())["scorer"]
    Image.open(picture).save(picture)  # a chart drawn before charts were marked, beside a report of score's
    assert run(capsys, "score", copy, "--models", "tiny")[0] == 0


def test_a_work_directory_a_render_holds_before_its_storyboard_is_said_in_use(capsys, tmp_path):
    # a render begun there holds it before it writes storyboard.json: not "render a song into it first"
    holder = "import sys, time\nfrom musicvid.core.workdir import Workdir\nwith Workdir(sys.argv[1]).held():\n"
    holder += "    print('held', flush=True)\n    time.sleep(60)\n"
    held = subprocess.Popen([sys.executable, "-c", holder, str(tmp_path / "w")], stdout=subprocess.PIPE, text=True)
    try:
        assert held.stdout.readline() == "held\n"
        err = refused(capsys, tmp_path / "w", "--models", "tiny")
        assert "is in use by another musicvid run; wait for it to finish" in err
    finally:
        held.kill()
        held.wait()
    err = refused(capsys, tmp_path / "w", "--models", "tiny")
    assert "holds no storyboard.json: render a song into it first" in err
