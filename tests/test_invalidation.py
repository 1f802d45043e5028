"""Every setting says what it affects (the storyboard, the keyframes, the frames between, the video, only the
speed, or nothing made), the lists the code keeps are made from that, and a rerun with one setting changed
redraws exactly what it affects."""

import dataclasses
import json
import shutil

import pytest

from musicvid.pictures.grouping import common_inputs
from musicvid.settings.model_choice import ModelChoice
from musicvid.settings.render import BETWEEN_AND_AFTER, RenderSettings
from musicvid.settings.schema import AFFECTS, setting
from musicvid.settings.song import SongRequest
from tests.helpers import render


@pytest.mark.parametrize("settings", [SongRequest, RenderSettings, ModelChoice])
def test_every_field_says_what_it_affects(settings):
    for field in dataclasses.fields(settings):
        affects = field.metadata["affects"]
        assert affects and set(affects) <= set(AFFECTS), field.name


def test_a_setting_that_says_nothing_of_what_it_affects_is_refused():
    with pytest.raises(ValueError, match="must say what it affects"):
        setting(1, "a new knob")
    with pytest.raises(ValueError, match="must say what it affects"):
        setting(1, "a new knob", affects=("colour",))


def test_the_kept_lists_are_made_from_the_declarations():
    assert "captions" in BETWEEN_AND_AFTER and "align" in BETWEEN_AND_AFTER
    assert not set(BETWEEN_AND_AFTER) & set(RenderSettings.affecting("keyframes", "speed"))
    keyed = common_inputs(RenderSettings(), {"diffusion": "d"})
    assert {"steps", "guidance", "scheduler", "style", "negative_prompt"} <= set(keyed)
    assert not set(keyed) & set(RenderSettings.affecting("speed"))


def pictures_drawn(workdir) -> int:
    return json.loads((workdir / "timings.json").read_text())["pictures_drawn"]


@pytest.mark.slow
def test_a_rerun_redraws_exactly_what_the_changed_setting_affects(tmp_path, tone_render):
    song, workdir = tone_render / "song.mp3", tone_render / "w"  # the first render: conftest's, shared (copied only)
    every = pictures_drawn(workdir)
    keyframes = len(list((workdir / "keyframes").glob("*.png")))
    assert every > keyframes > 0
    # each rerun from a copy of the first's work directory, one setting changed (one of each kind: the declarations
    # of every setting are checked above, test_every_field_says_what_it_affects)
    redrawn = {}
    for name, options in {
        "captions": ("--captions", "line"),
        "resolution": ("--resolution", "720p"),
        "alignment": ("--no-align",),
        "steps": ("--steps", "3"),
        "style": ("--style", "ink"),
    }.items():
        copy = shutil.copytree(workdir, tmp_path / name)
        assert render(song, copy, *options, "-o", tmp_path / f"{name}.mp4") == 0, name
        redrawn[name] = pictures_drawn(copy)
    assert redrawn == {
        "captions": 0,
        "resolution": 0,
        "alignment": every - keyframes,  # the frames between alone
        "steps": every,
        "style": every,
    }
